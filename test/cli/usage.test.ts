import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { COMPRESS_DEFAULTS } from '../../src/compress/options.js';
import { ROOT, fixture, linesOf, makeTempDir, runCli } from './run-cli.js';

const temp = makeTempDir();
afterAll(() => temp.remove());

describe('bonepress usage', () => {
  it('prints the package version', () => {
    const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
    const run = runCli(['--version']);
    expect(run.code).toBe(0);
    expect(run.stdout.trim()).toBe(version);
  });

  it('lists every command in --help', () => {
    const run = runCli(['--help']);
    expect(run.code).toBe(0);
    for (const command of ['compress', 'verify', 'info', 'sample', 'decompress']) expect(run.stdout).toContain(command);
  });

  it('shows the library defaults in compress --help', () => {
    const run = runCli(['compress', '--help']);
    expect(run.code).toBe(0);
    const help = run.stdout.replace(/\s+/g, ' '); // commander wraps long lines
    expect(help).toContain(`(default: "${COMPRESS_DEFAULTS.error}")`);
    expect(help).toContain(`(default: "${COMPRESS_DEFAULTS.shell}")`);
  });

  it('exits 2 on an unknown option or command', () => {
    const option = runCli(['verify', 'a.bvh', 'b.bvh', '--no-such-option']);
    expect(option.code).toBe(2);
    expect(linesOf(option.stderr)[0]).toMatch(/^bonepress: unknown option/);
    expect(runCli(['no-such-command']).code).toBe(2);
  });

  it('exits 2 on a missing required option', () => {
    expect(runCli(['compress', fixture('dataset-1_dash_normal_001.bvh')]).code).toBe(2);
    expect(runCli(['sample', 'x.bpk']).code).toBe(2);
  });

  it('rejects a file that is not a .bpk in info, sample and decompress with one line (exit 2)', () => {
    const notBpk = join(temp.dir, 'not-a-clip.bpk');
    writeFileSync(notBpk, 'this is not a bonepress clip, just some text that is long enough for a header. '.repeat(4));
    for (const args of [
      ['info', notBpk],
      ['sample', notBpk, '--time', '0'],
      ['decompress', notBpk, '-o', join(temp.dir, 'x.json')],
    ]) {
      const run = runCli(args);
      expect(run.code).toBe(2);
      const lines = linesOf(run.stderr);
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(new RegExp(`^bonepress: ${notBpk.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: .*magic`));
    }
  });

  it('rejects a missing .bpk with one line (exit 2)', () => {
    const missing = join(temp.dir, 'missing.bpk');
    const run = runCli(['info', missing, '--json']);
    expect(run.code).toBe(2);
    expect(linesOf(run.stderr)).toEqual([`bonepress: ${missing}: no such file or directory`]);
    expect(run.stdout).toBe('');
  });

  it('rejects a bad --shard or --jobs value (exit 2)', () => {
    const input = fixture('dataset-1_dash_normal_001.bvh');
    for (const bad of [
      ['--shard', '3/2'],
      ['--shard', '0/2'],
      ['--shard', 'x'],
      ['--jobs', '0'],
      ['--jobs', '1.5'],
    ]) {
      const run = runCli(['compress', input, '-o', join(temp.dir, 'out'), ...bad]);
      expect(run.code).toBe(2);
      expect(linesOf(run.stderr)[0]).toMatch(/^bonepress: /);
    }
  });
});
