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
import { decodeTransport } from '../../src/runtime/transport.js';
import { fixture, makeTempDir, ROOT, runCli } from './run-cli.js';

const temp = makeTempDir('bonepress-transport-');
afterAll(() => temp.remove());

describe('transport files on the command line', () => {
  it('info, sample, decompress and verify give the same results for a .bpt as for its .bpk', () => {
    const source = fixture('dataset-1_run_active_001.bvh');
    const bytes = compress(readBvh(readFileSync(join(ROOT, source), 'utf8'), source)).bytes;
    const bpk = join(temp.dir, 'run.bpk'),
      bpt = join(temp.dir, 'run.bpt');
    writeFileSync(bpk, bytes);
    writeFileSync(bpt, encodeTransport(bytes));
    const strip = (text: string) => text.replaceAll(bpk, 'FILE').replaceAll(bpt, 'FILE');
    for (const args of [
      ['info', '--json'],
      ['sample', '--time', '0.7'],
      ['verify', source],
    ]) {
      const run = (file: string) =>
        runCli(args[0] === 'verify' ? ['verify', source, file, '--json'] : [args[0], file, ...args.slice(1)]);
      const a = run(bpk),
        b = run(bpt);
      expect(b.code, b.stderr).toBe(0);
      expect(a.code, a.stderr).toBe(0);
      if (args[0] === 'info') {
        // The file size differs (the transport form is smaller); every decoded field agrees.
        const ja = JSON.parse(a.stdout) as Record<string, unknown>,
          jb = JSON.parse(b.stdout) as Record<string, unknown>;
        expect(jb.boneCount).toBe(ja.boneCount);
        expect(jb.sampleCount).toBe(ja.sampleCount);
        expect(JSON.stringify(jb.bitRateHistogram)).toBe(JSON.stringify(ja.bitRateHistogram));
      } else {
        expect(strip(b.stdout)).toBe(strip(a.stdout));
      }
    }
    const outA = join(temp.dir, 'a.json'),
      outB = join(temp.dir, 'b.json');
    expect(runCli(['decompress', bpk, '-o', outA]).code).toBe(0);
    expect(runCli(['decompress', bpt, '-o', outB]).code).toBe(0);
    expect(readFileSync(outB, 'utf8')).toBe(readFileSync(outA, 'utf8'));
  });
});

describe('compress --transport', () => {
  it('writes .bpt files that decode to the exact .bpk bytes, and reports their size', () => {
    const sources = [fixture('dataset-1_run_active_001.bvh'), fixture('dataset-1_bow_normal_001.bvh')];
    const bpkDir = join(temp.dir, 'bpk'),
      bptDir = join(temp.dir, 'bpt');
    const plain = runCli(['compress', ...sources, '-o', bpkDir, '--jobs', '1', '--json']);
    const wire = runCli(['compress', ...sources, '-o', bptDir, '--jobs', '2', '--transport', '--json']);
    expect(plain.code, plain.stderr).toBe(0);
    expect(wire.code, wire.stderr).toBe(0);
    const plainReport = JSON.parse(plain.stdout) as {
      clips: { output: string; compressedBytes: number; maxError: number }[];
    };
    const wireReport = JSON.parse(wire.stdout) as {
      clips: { output: string; compressedBytes: number; rawBytes: number; ratio: number; maxError: number }[];
    };
    for (const [i, clip] of wireReport.clips.entries()) {
      expect(clip.output.endsWith('.bpt')).toBe(true);
      const bpt = new Uint8Array(readFileSync(clip.output));
      expect(clip.compressedBytes).toBe(bpt.length);
      expect(clip.ratio).toBeCloseTo(clip.rawBytes / bpt.length, 9);
      const bpk = new Uint8Array(readFileSync(plainReport.clips[i].output));
      expect(bpt.length).toBeLessThan(bpk.length);
      expect(Buffer.from(decodeTransport(bpt)).equals(Buffer.from(bpk))).toBe(true);
      expect(clip.maxError).toBe(plainReport.clips[i].maxError);
    }
  });

  it('takes -o clip.bpt and --format bpt for the same bytes, and refuses --transport with glTF or bpk output', () => {
    const source = fixture('dataset-1_run_active_001.bvh');
    const byName = join(temp.dir, 'named.bpt'),
      byFormat = join(temp.dir, 'format');
    expect(runCli(['compress', source, '-o', byName]).code).toBe(0);
    expect(runCli(['compress', source, '-o', byFormat, '--format', 'bpt']).code).toBe(0);
    expect(readFileSync(join(byFormat, 'dataset-1_run_active_001.bpt')).equals(readFileSync(byName))).toBe(true);
    for (const args of [
      ['-o', join(temp.dir, 'x.glb')],
      ['-o', temp.dir, '--format', 'bpk'],
    ]) {
      const run = runCli(['compress', source, '--transport', ...args]);
      expect(run.code).toBe(2);
      expect(run.stderr).toMatch(/--transport/);
    }
  });

  it('keys library outputs by the form: --transport after a .bpk build compresses again and writes .bpt', () => {
    const source = fixture('dataset-1_bow_normal_001.bvh');
    const out = join(temp.dir, 'lib'),
      manifest = join(out, 'manifest.json');
    expect(runCli(['compress', source, '-o', out, '--manifest', manifest]).code).toBe(0);
    const second = runCli(['compress', source, '-o', out, '--manifest', manifest, '--transport', '--json']);
    expect(second.code, second.stderr).toBe(0);
    const entry = (
      JSON.parse(readFileSync(manifest, 'utf8')) as { inputs: { outputs: { path: string; bytes: number }[] }[] }
    ).inputs[0];
    expect(entry.outputs[0].path.endsWith('.bpt')).toBe(true);
    expect(readFileSync(entry.outputs[0].path).length).toBe(entry.outputs[0].bytes);
  });
});
