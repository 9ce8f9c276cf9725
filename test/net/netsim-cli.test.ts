import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { Command } from 'commander';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';

import { readPoseDump } from '../../src/readers/pose-dump.js';
import { exitCodeOf } from '../../src/cli/exit-codes.js';
import {
  parseDurationArg,
  registerNetsimCommand,
  runNetsim,
  type NetsimCliOptions,
} from '../../src/cli/commands/netsim.js';

const FIXTURE = join(fileURLToPath(new URL('../../', import.meta.url)), 'fixtures', 'dataset-1_bow_normal_001.bvh');
const temp = mkdtempSync(join(tmpdir(), 'bonepress-netsim-'));
afterAll(() => rmSync(temp, { recursive: true, force: true }));
afterEach(() => vi.restoreAllMocks());

const DEFAULTS: NetsimCliOptions = { loss: 0.05, rtt: 100, jitter: 0, error: '0.1cm', shell: '3cm', seed: 1 };

/** Runs the command in-process and returns its exit code and stdout. */
async function run(file: string, options: Partial<NetsimCliOptions>): Promise<{ code: number; stdout: string }> {
  let stdout = '';
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    stdout += String(chunk);
    return true;
  });
  const code = await runNetsim(file, { ...DEFAULTS, ...options });
  vi.restoreAllMocks();
  return { code, stdout };
}

describe('bonepress netsim', () => {
  it('prints the modes and passes a fixture at 60 Hz, 5 % loss, 100 ms', async () => {
    const { code, stdout } = await run(FIXTURE, { hz: 60 });
    expect(code).toBe(0);
    for (const mode of ['raw', 'absolute', 'delta', 'entropy'])
      expect(stdout).toMatch(new RegExp(`^${mode}\\s+\\d`, 'm'));
    expect(stdout).toMatch(/result\s+PASS/);
  });

  it('--json prints one object; --dump writes one pose per decoded tick', async () => {
    const dump = join(temp, 'received.json');
    const { code, stdout } = await run(FIXTURE, { hz: 60, json: true, dump, loss: 0 });
    expect(code).toBe(0);
    const result = JSON.parse(stdout) as {
      ticks: number;
      received: number;
      dumpedPoses: number;
      pass: boolean;
      maxError: number;
    };
    expect(result.pass).toBe(true);
    expect(result.dumpedPoses).toBe(result.ticks);
    const clip = readPoseDump(readFileSync(dump, 'utf8'), dump);
    expect(clip.sampleCount).toBe(result.ticks);
    expect(clip.sampleRate).toBe(60);
  });

  it('exits 1 when the threshold is missed, 2 for a missing file', async () => {
    // Bits are derived for --error, so only a threshold below what 24-bit codes and float32 poses reach can fail.
    const { code, stdout } = await run(FIXTURE, { error: '1e-9cm' });
    expect(code).toBe(1);
    expect(stdout).toMatch(/result\s+FAIL/);
    const missing = await runNetsim(join(temp, 'nope.bvh'), DEFAULTS).then(
      () => 0,
      (e: unknown) => exitCodeOf(e),
    );
    expect(missing).toBe(2);
  });

  it('rejects bad option values as usage errors', async () => {
    const program = new Command().exitOverride().configureOutput({ writeErr: () => {}, writeOut: () => {} });
    registerNetsimCommand(program);
    for (const args of [
      ['--loss', '1'],
      ['--loss', 'x'],
      ['--rtt', 'fast'],
      ['--hz', '0'],
      ['--seed', '1.5'],
      ['--error', '3 parsecs'],
    ]) {
      await expect(program.parseAsync(['node', 'bonepress', 'netsim', FIXTURE, ...args])).rejects.toMatchObject({
        exitCode: 1,
      });
    }
    expect(parseDurationArg('100ms')).toBe(100);
    expect(parseDurationArg('0.25s')).toBe(250);
    expect(parseDurationArg('40')).toBe(40);
  });
});
