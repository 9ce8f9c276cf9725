/**
 * The CLI reads both forms of a clip: `info`, `sample`, `decompress` and `verify` take a
 * transport file (`.bpt`, docs/transport.md) as they take the `.bpk` it decodes to.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { compress } from '../../src/compress/index.js';
import { encodeTransport } from '../../src/compress/transport.js';
import { readBvh } from '../../src/readers/bvh.js';
import { fixture, makeTempDir, ROOT, runCli } from './run-cli.js';

const temp = makeTempDir('bonepress-transport-');
afterAll(() => temp.remove());

describe('transport files on the command line', () => {
  it('info, sample, decompress and verify give the same results for a .bpt as for its .bpk', () => {
    const source = fixture('dataset-1_run_active_001.bvh');
    const bytes = compress(readBvh(readFileSync(join(ROOT, source), 'utf8'), source)).bytes;
    const bpk = join(temp.dir, 'run.bpk'), bpt = join(temp.dir, 'run.bpt');
    writeFileSync(bpk, bytes);
    writeFileSync(bpt, encodeTransport(bytes));
    const strip = (text: string) => text.replaceAll(bpk, 'FILE').replaceAll(bpt, 'FILE');
    for (const args of [['info', '--json'], ['sample', '--time', '0.7'], ['verify', source]]) {
      const run = (file: string) => runCli(args[0] === 'verify' ? ['verify', source, file, '--json'] : [args[0], file, ...args.slice(1)]);
      const a = run(bpk), b = run(bpt);
      expect(b.code, b.stderr).toBe(0);
      expect(a.code, a.stderr).toBe(0);
      if (args[0] === 'info') {
        // The file size differs (the transport form is smaller); every decoded field agrees.
        const ja = JSON.parse(a.stdout) as Record<string, unknown>, jb = JSON.parse(b.stdout) as Record<string, unknown>;
        expect(jb.boneCount).toBe(ja.boneCount);
        expect(jb.sampleCount).toBe(ja.sampleCount);
        expect(JSON.stringify(jb.bitRateHistogram)).toBe(JSON.stringify(ja.bitRateHistogram));
      } else {
        expect(strip(b.stdout)).toBe(strip(a.stdout));
      }
    }
    const outA = join(temp.dir, 'a.json'), outB = join(temp.dir, 'b.json');
    expect(runCli(['decompress', bpk, '-o', outA]).code).toBe(0);
    expect(runCli(['decompress', bpt, '-o', outB]).code).toBe(0);
    expect(readFileSync(outB, 'utf8')).toBe(readFileSync(outA, 'utf8'));
  });
});
