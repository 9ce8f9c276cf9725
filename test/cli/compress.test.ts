import { copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, afterEach, describe, expect, it } from 'vitest';

import {
  ROOT,
  WAIT_MS,
  blockingFifo,
  fixture,
  killStartedClis,
  linesOf,
  makeTempDir,
  runCli,
  startCli,
} from './run-cli.js';

const DASH = fixture('dataset-1_dash_normal_001.bvh');
const RUN = fixture('dataset-1_run_active_001.bvh');
const BYEBYE = fixture('dataset-1_byebye_angry_001.bvh');
const temp = makeTempDir();
afterAll(() => temp.remove());
// No CLI started by a test outlives it, whatever the test did.
afterEach(killStartedClis, 20_000);

let outCount = 0;
/** A fresh output folder path (not created). */
function outDir(): string {
  return join(temp.dir, `out-${++outCount}`);
}

interface CompressJson {
  clips: {
    file: string;
    output: string;
    name: string;
    boneCount: number;
    sampleCount: number;
    rawBytes: number;
    compressedBytes: number;
    ratio: number;
    maxError: number;
    threshold: number;
    unit: string;
    withinThreshold: boolean;
  }[];
  failures: { file: string; code: string; message: string }[];
  total: {
    files: number;
    clips: number;
    failures: number;
    rawBytes: number;
    compressedBytes: number;
    ratio: number;
    overThreshold: number;
  };
}

/** Per-test limit: generous for a loaded CI machine; each CLI run has its own, shorter one (run-cli.ts). */
const LONG = { timeout: 120_000 };

describe('bonepress compress', () => {
  it('compresses fixtures and prints the table with a TOTAL row (exit 0)', LONG, () => {
    const out = outDir();
    const run = runCli(['compress', DASH, RUN, '-o', out, '--jobs', '2']);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(readdirSync(out).sort()).toEqual(['dataset-1_dash_normal_001.bpk', 'dataset-1_run_active_001.bpk']);
    const lines = linesOf(run.stdout);
    expect(lines[0]).toMatch(/^clip\s+bones\s+samples\s+raw bytes\s+compressed\s+ratio\s+max error\s+time$/);
    expect(lines.some((l) => l.startsWith('dataset-1_dash_normal_001 '))).toBe(true);
    expect(lines[lines.length - 1]).toMatch(/^TOTAL \(2 clips\)/);
  });

  it('prints clips, failures and total with --json', LONG, () => {
    const out = outDir();
    const run = runCli(['compress', DASH, RUN, '-o', out, '--json', '--jobs', '1']);
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout) as CompressJson;
    expect(report.failures).toEqual([]);
    expect(report.clips.map((c) => c.file)).toEqual([DASH, RUN]);
    for (const clip of report.clips) {
      expect(clip.boneCount).toBe(22);
      expect(clip.rawBytes).toBe(40 * clip.boneCount * clip.sampleCount);
      expect(clip.compressedBytes).toBe(readFileSync(clip.output).byteLength);
      expect(clip.withinThreshold).toBe(true);
      expect(clip.maxError).toBeLessThanOrEqual(clip.threshold);
    }
    expect(report.total.clips).toBe(2);
    expect(report.total.rawBytes).toBe(report.clips[0].rawBytes + report.clips[1].rawBytes);
    expect(report.total.compressedBytes).toBe(report.clips[0].compressedBytes + report.clips[1].compressedBytes);
    expect(report.total.ratio).toBeCloseTo(report.total.rawBytes / report.total.compressedBytes, 9);
  });

  it('reports bad inputs, finishes the others and exits 2', LONG, () => {
    const out = outDir();
    const bad = join(temp.dir, 'broken.bvh');
    writeFileSync(bad, readFileSync(join(ROOT, DASH), 'utf8').split('\n').slice(0, 30).join('\n'));
    const missing = join(temp.dir, 'missing.bvh');
    const run = runCli(['compress', DASH, bad, missing, RUN, '-o', out, '--json', '--jobs', '2']);
    expect(run.code).toBe(2);
    const report = JSON.parse(run.stdout) as CompressJson;
    expect(report.clips.map((c) => c.file)).toEqual([DASH, RUN]);
    expect(report.failures.map((f) => f.file)).toEqual([bad, missing]);
    expect(report.failures[1].code).toBe('ENOENT');
    for (const f of report.failures) expect(typeof f.message).toBe('string');
    expect(linesOf(run.stderr)).toEqual([
      `bonepress: ${bad}: ${report.failures[0].message}`,
      `bonepress: ${missing}: no such file or directory`,
    ]);
    expect(readdirSync(out).sort()).toEqual(['dataset-1_dash_normal_001.bpk', 'dataset-1_run_active_001.bpk']);
  });

  it('rejects an unknown --shell-bone for each input (exit 2)', LONG, () => {
    const run = runCli(['compress', DASH, '-o', outDir(), '--shell-bone', 'NoSuchBone=1m', '--json']);
    expect(run.code).toBe(2);
    const report = JSON.parse(run.stdout) as CompressJson;
    expect(report.failures).toHaveLength(1);
    expect(report.failures[0].message).toContain('NoSuchBone');
  });

  it('splits inputs over --shard i/n so every input is compressed once', LONG, () => {
    const out = outDir();
    const inputs = [RUN, BYEBYE, DASH];
    const written: string[] = [];
    for (const shard of ['1/2', '2/2']) {
      const run = runCli(['compress', ...inputs, '-o', out, '--shard', shard, '--json', '--jobs', '1']);
      expect(run.code).toBe(0);
      written.push(...(JSON.parse(run.stdout) as CompressJson).clips.map((c) => c.file));
    }
    expect(written.sort()).toEqual([...inputs].sort());
    expect(readdirSync(out)).toHaveLength(3);
  });

  it('compresses a folder of one clip alike whatever workers started before the folder was read', LONG, () => {
    // A folder counts as many inputs before it is read (src/cli/argv.ts): with --jobs 2 two
    // workers start first, then the batch of one file asks for one and gets a pool of its own.
    const folder = join(temp.dir, 'one-clip');
    mkdirSync(folder);
    copyFileSync(join(ROOT, DASH), join(folder, 'dash.bvh'));
    const outputs = ['1', '2'].map((jobs) => {
      const out = outDir();
      const run = runCli(['compress', folder, '-o', out, '--json', '--jobs', jobs]);
      expect(run.code).toBe(0);
      expect((JSON.parse(run.stdout) as CompressJson).total.clips).toBe(1);
      return readFileSync(join(out, 'dash.bpk'));
    });
    expect(outputs[1].equals(outputs[0])).toBe(true);
  });

  it('writes a .bpk that info, sample, decompress and verify read', LONG, () => {
    const out = outDir();
    expect(runCli(['compress', DASH, '-o', out]).code).toBe(0);
    const bpk = join(out, 'dataset-1_dash_normal_001.bpk');

    const info = runCli(['info', bpk, '--json']);
    expect(info.code).toBe(0);
    const parsed = JSON.parse(info.stdout) as {
      boneCount: number;
      sampleCount: number;
      unit: string;
      hasNames: boolean;
      byteLength: number;
      sections: { total: number };
      trackClasses: { total: { default: number; constant: number; animated: number } };
      bones: { name: string }[];
      bitRateHistogram: Record<string, number>;
    };
    expect(parsed).toMatchObject({ boneCount: 22, sampleCount: 20, unit: 'cm', hasNames: true });
    expect(parsed.sections.total).toBe(parsed.byteLength);
    const classes = parsed.trackClasses.total;
    expect(classes.default + classes.constant + classes.animated).toBe(22 * 3);
    expect(parsed.bones).toHaveLength(22);
    expect(runCli(['info', bpk]).stdout).toContain('bit rate');

    const sample = runCli(['sample', bpk, '--time', '0.25', '--bone', parsed.bones[1].name, '--json']);
    expect(sample.code).toBe(0);
    const pose = JSON.parse(sample.stdout) as {
      bones: { name: string; rotation: number[]; translation: number[]; scale: number[] }[];
    };
    expect(pose.bones).toHaveLength(1);
    expect(pose.bones[0].rotation).toHaveLength(4);
    expect(pose.bones[0].translation).toHaveLength(3);
    expect(runCli(['sample', bpk, '--time', '0.25', '--rounding', 'nearest', '--loop', 'wrap']).code).toBe(0);
    expect(runCli(['sample', bpk, '--time', '0', '--bone', 'NoSuchBone']).code).toBe(2);
    expect(runCli(['sample', bpk, '--time', '0', '--rounding', 'sideways']).code).toBe(2);

    const dump = join(out, 'dash.json');
    expect(runCli(['decompress', bpk, '-o', dump]).code).toBe(0);
    const dumped = JSON.parse(readFileSync(dump, 'utf8')) as {
      bones: string[];
      numSamples: number;
      rotations: number[];
    };
    expect(dumped.numSamples).toBe(20);
    expect(dumped.rotations).toHaveLength(20 * 22 * 4);

    expect(runCli(['verify', DASH, bpk]).code).toBe(0);
    expect(runCli(['verify', DASH, dump]).code).toBe(0);

    // `-o -` writes the same dump to stdout and nothing else there.
    const piped = runCli(['decompress', bpk, '-o', '-']);
    expect(piped.code).toBe(0);
    expect(JSON.parse(piped.stdout)).toEqual(dumped);
  });

  it('names bones bone_<i> when names are stripped, and verify still matches them by position', LONG, () => {
    const out = outDir();
    expect(runCli(['compress', DASH, '-o', out, '--strip-names', '--no-checksum']).code).toBe(0);
    const bpk = join(out, 'dataset-1_dash_normal_001.bpk');
    const info = JSON.parse(runCli(['info', bpk, '--json']).stdout) as {
      hasNames: boolean;
      hasChecksum: boolean;
      name: string | null;
    };
    expect(info).toMatchObject({ hasNames: false, hasChecksum: false, name: null });
    expect(runCli(['sample', bpk, '--time', '0', '--bone', 'bone_3']).code).toBe(0);
    const dump = join(out, 'dash.json');
    expect(runCli(['decompress', bpk, '-o', dump]).code).toBe(0);
    expect((JSON.parse(readFileSync(dump, 'utf8')) as { bones: string[] }).bones[3]).toBe('bone_3');
    expect(runCli(['verify', DASH, bpk]).code).toBe(0);
    expect(runCli(['verify', DASH, dump]).code).toBe(0);
  });

  it('stops on SIGINT with exit 130, keeping only complete .bpk files', { timeout: 60_000 }, async () => {
    const out = outDir();
    const dash = join(out, 'dataset-1_dash_normal_001.bpk');
    // Reading this FIFO blocks until release(), so the batch is still running when the signal comes.
    const fifo = blockingFifo(join(temp.dir, 'blocked.bvh'));
    try {
      const cli = startCli(['compress', DASH, fifo.path, '-o', out, '--jobs', '2', '--allow-special-files']);
      const wrote = await cli.waitUntil(() => existsSync(dash), `${dash} to be written`, WAIT_MS);
      expect(wrote, `the CLI exited without writing ${dash} (the blocked input cannot finish): ${cli.describe()}`).toBe(
        true,
      );
      cli.kill('SIGINT');
      await cli.waitUntil(() => cli.stderr.includes('interrupted'), 'the "interrupted" message after SIGINT', WAIT_MS);
      // Release the blocked read: the stopped worker, and with it the process, can then finish exiting.
      fifo.release();
      const exit = await cli.waitForExit(WAIT_MS);
      expect(exit.timedOut, `no exit within ${WAIT_MS} ms of the release: ${cli.describe()}`).toBe(false);
      expect(exit.code, cli.describe()).toBe(130);
      expect(
        linesOf(cli.stderr).some((l) => /^bonepress: interrupted/.test(l)),
        cli.stderr,
      ).toBe(true);
      expect(readdirSync(out)).toEqual(['dataset-1_dash_normal_001.bpk']);
    } finally {
      fifo.release();
    }
  });
});
