import { copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { hasBuiltCli, sharesOf, timeCompressCli } from '../../src/bench/cli-timing.js';
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
      files: [DASH, RUN],
      rounds: 2,
      onRun: (done) => {
        if (done > 0) runs++;
      },
    });
    expect(runs).toBe(6);
    expect(timing.one.jobs).toBe(1);
    expect(timing.pool?.jobs).toBe(2);
    expect(timing.split?.jobs).toBe(2);
    for (const figure of [timing.one, timing.pool!, timing.split!]) {
      expect(figure.clips).toBe(2);
      expect(figure.rounds).toHaveLength(2);
      expect(figure.seconds).toBeGreaterThan(0);
      expect(figure.cpuSeconds).toBeGreaterThan(0);
    }
    expect(timing.speedup).toBe(timing.one.seconds / timing.pool!.seconds);
    expect(timing.splitSpeedup).toBe(timing.one.seconds / timing.split!.seconds);
    // Without the files, or with two of one name, no split run.
    const same = path.join(scratch, 'copy');
    await mkdir(same);
    await copyFile(DASH, path.join(same, path.basename(DASH)));
    for (const files of [undefined, [DASH, path.join(same, path.basename(DASH))]]) {
      const plain = await timeCompressCli({ cli: CLI, corpus: [DASH], args: [], jobs: 2, files, rounds: 1 });
      expect(plain.split).toBeNull();
      expect(plain.splitSpeedup).toBeNull();
    }
  });

  it('splits files into shares of about the same bytes, the largest first', async () => {
    const sizes = [50, 10, 40, 30, 20];
    const files = await Promise.all(
      sizes.map(async (size, i) => {
        const file = path.join(scratch, `share-${i}.bvh`);
        await writeFile(file, 'x'.repeat(size));
        return file;
      }),
    );
    const shares = sharesOf(files, 2);
    const bytes = shares.map((share) => share.reduce((sum, f) => sum + sizes[files.indexOf(f)], 0));
    expect(shares.flat().sort()).toEqual([...files].sort());
    // 50 → A, 40 → B, 30 → B, 20 → A, 10 → A: 80 and 70.
    expect(bytes).toEqual([80, 70]);
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
