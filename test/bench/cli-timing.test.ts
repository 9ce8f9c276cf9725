import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { hasBuiltCli, timeCompressCli } from '../../src/bench/cli-timing.js';
import { CLI, FIXTURES } from '../cli/run-cli.js';

const DASH = path.join(FIXTURES, 'dataset-1_dash_normal_001.bvh');
const RUN = path.join(FIXTURES, 'dataset-1_run_active_001.bvh');

describe('timeCompressCli (the built command line as whole processes)', () => {
  let scratch = '';
  beforeAll(async () => {
    scratch = await mkdtemp(path.join(tmpdir(), 'bonepress-cli-timing-test-'));
  });
  afterAll(async () => {
    await rm(scratch, { recursive: true, force: true });
  });

  it('times --jobs 1 and --jobs 2 round by round, each process compressing the whole corpus', {
    timeout: 120_000,
  }, async () => {
    expect(hasBuiltCli(CLI)).toBe(true);
    let runs = 0;
    const timing = await timeCompressCli({
      cli: CLI,
      corpus: [DASH, RUN],
      args: ['--error', '0.01cm'],
      jobs: 2,
      rounds: 2,
      onRun: () => runs++,
    });
    expect(runs).toBe(4);
    expect(timing.one.jobs).toBe(1);
    expect(timing.pool?.jobs).toBe(2);
    for (const figure of [timing.one, timing.pool!]) {
      expect(figure.clips).toBe(2);
      expect(figure.rounds).toHaveLength(2);
      expect(figure.seconds).toBeGreaterThan(0);
      expect(figure.cpuSeconds).toBeGreaterThan(0);
    }
    expect(timing.speedup).toBe(timing.one.seconds / timing.pool!.seconds);
  });

  it('goes past a bad input as the command does, and runs only --jobs 1 for one job', { timeout: 60_000 }, async () => {
    const bad = path.join(scratch, 'bad.bvh');
    await writeFile(bad, 'HIERARCHY\nROOT r\n{\n');
    const timing = await timeCompressCli({ cli: CLI, corpus: [DASH, bad], args: [], jobs: 1, rounds: 1 });
    expect(timing.one.clips).toBe(1);
    expect(timing.pool).toBeNull();
    expect(timing.speedup).toBeNull();
  });

  it('rejects a process that is not a compress run (no report)', async () => {
    await expect(
      timeCompressCli({ cli: path.join(scratch, 'no-such-cli.js'), corpus: [DASH], args: [], jobs: 1, rounds: 1 }),
    ).rejects.toThrow(/compress ended with status/);
  });

  it('tells whether the build is there', () => {
    expect(hasBuiltCli(path.join(scratch, 'missing.js'))).toBe(false);
  });
});
