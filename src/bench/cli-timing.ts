/**
 * `bonepress compress` timed as a user runs it: the built command line as a whole process
 * (Node's start, module loading, the worker pool's start, reading, compressing, writing and
 * the exit), with one job and with the pool's jobs, the two alternating round by round so
 * that a change in the machine's load falls on both alike; and, as what the machine gives
 * that many jobs sharing nothing, as many one-job processes at once on shares of the files.
 */
import { existsSync, statSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { runCliMeasured } from './cli-process.js';
import { median } from './decode-timing.js';

/** The built command line next to this module (dist/cli/main.js); absent when running from the sources. */
export const BUILT_CLI = fileURLToPath(new URL('../cli/main.js', import.meta.url));

/** One way of running `compress`, over the rounds. */
export interface ProcessFigure {
  jobs: number;
  /** Median wall seconds, from spawning the process to its exit. */
  seconds: number;
  /** Median CPU seconds of the process, all its threads. */
  cpuSeconds: number;
  /** Wall seconds of each round, in order. */
  rounds: number[];
  /** Clips the process compressed (its `--json` report's total), the same every round. */
  clips: number;
}

/** `compress --jobs 1` beside `compress --jobs <n>`, each the whole process. */
export interface CliTiming {
  one: ProcessFigure;
  /** Null when the pool run was not asked for (jobs 1). */
  pool: ProcessFigure | null;
  /** one.seconds / pool.seconds (null without a pool run). */
  speedup: number | null;
  /**
   * `jobs` separate `compress --jobs 1` processes started at once, each on a share of the
   * files (wall time to the last exit, CPU time of them all): the most that many jobs get on
   * this machine with nothing shared, no pool and no second compile of anything. Null
   * without a pool run or without the files.
   */
  split: ProcessFigure | null;
  /** one.seconds / split.seconds (null without a split run). */
  splitSpeedup: number | null;
}

/** What {@link timeCompressCli} runs. */
export interface CliTimingRun {
  /** The command line's main module. */
  cli: string;
  /** The corpus arguments as a user gives them (files and folders). */
  corpus: readonly string[];
  /** `compress` options besides the inputs, `-o`, `--jobs` and `--json` (e.g. `--error 0.01cm`). */
  args: readonly string[];
  /** Jobs of the pool run; 1 runs only the one-job process. */
  jobs: number;
  /**
   * The input files `corpus` names, for the split run (none, fewer than `jobs`, or two of one
   * base name: no split run).
   */
  files?: readonly string[];
  rounds: number;
  /** Called with the processes done and to run: once before the first (0 done), then after each. */
  onRun?: (done: number, total: number) => void;
}

/**
 * Times `compress` over `run.corpus` as whole processes: each round runs `--jobs 1`, then
 * `--jobs <run.jobs>` (when above 1), each into a fresh output folder, with `--json` (its
 * report shows the batch ran; a user's table costs about the same). Exit statuses 0–2 with
 * a report are results (a clip above its threshold, a bad input: the batch went on);
 * anything else rejects, and so does a run that compressed another number of clips than
 * the first.
 */
export async function timeCompressCli(run: CliTimingRun): Promise<CliTiming> {
  const work = await mkdtemp(join(tmpdir(), 'bonepress-cli-timing-'));
  // Files as arguments are written by their base names: shares only of files whose names differ.
  const files = run.files ?? [];
  const distinct = new Set(files.map((file) => basename(file))).size === files.length;
  const shares = run.jobs > 1 && distinct && files.length >= run.jobs ? sharesOf(files, run.jobs) : null;
  // The one-job process, the pool, then the split processes (where asked for).
  const ways = run.jobs > 1 ? (shares ? 3 : 2) : 1;
  const wall = Array.from({ length: ways }, (): number[] => []);
  const cpu = Array.from({ length: ways }, (): number[] => []);
  let clips: number | undefined;
  const count = (done: { clips: number }, what: string): void => {
    clips ??= done.clips;
    if (done.clips !== clips) throw new Error(`${what} compressed ${done.clips} clips, an earlier run ${clips}`);
  };
  run.onRun?.(0, run.rounds * ways);
  try {
    for (let round = 0; round < run.rounds; round++) {
      for (let k = 0; k < ways; k++) {
        const out = join(work, `out-${round}-${k}`);
        if (k < 2) {
          const jobs = k === 0 ? 1 : run.jobs;
          const done = await runProcess(run.cli, [...run.corpus, '-o', out, '--jobs', String(jobs), ...run.args]);
          count(done, `compress --jobs ${jobs}`);
          wall[k].push(done.seconds);
          cpu[k].push(done.cpuSeconds);
        } else {
          const started = performance.now();
          const parts = await Promise.all(
            shares!.map((share, i) =>
              runProcess(run.cli, [...share, '-o', join(out, String(i)), '--jobs', '1', ...run.args]),
            ),
          );
          count({ clips: parts.reduce((sum, part) => sum + part.clips, 0) }, `${run.jobs} processes on shares`);
          wall[k].push((performance.now() - started) / 1000);
          cpu[k].push(parts.reduce((sum, part) => sum + part.cpuSeconds, 0));
        }
        await rm(out, { recursive: true, force: true });
        run.onRun?.(round * ways + k + 1, run.rounds * ways);
      }
    }
  } finally {
    await rm(work, { recursive: true, force: true });
  }
  const figure = (k: number): ProcessFigure => ({
    jobs: k === 0 ? 1 : run.jobs,
    seconds: median(wall[k]),
    cpuSeconds: median(cpu[k]),
    rounds: wall[k],
    clips: clips ?? 0,
  });
  const one = figure(0);
  const pool = ways > 1 ? figure(1) : null;
  const split = ways > 2 ? figure(2) : null;
  return {
    one,
    pool,
    speedup: pool ? one.seconds / pool.seconds : null,
    split,
    splitSpeedup: split ? one.seconds / split.seconds : null,
  };
}

/**
 * `files` in `count` shares of about the same bytes: the largest first, each to the share
 * with the fewest bytes so far (the earliest of equals).
 */
export function sharesOf(files: readonly string[], count: number): string[][] {
  const sized = files.map((file) => ({ file, bytes: statSync(file).size }));
  sized.sort((a, b) => b.bytes - a.bytes || (a.file < b.file ? -1 : 1));
  const shares = Array.from({ length: count }, () => ({ files: [] as string[], bytes: 0 }));
  for (const { file, bytes } of sized) {
    let least = shares[0];
    for (const share of shares) if (share.bytes < least.bytes) least = share;
    least.files.push(file);
    least.bytes += bytes;
  }
  return shares.map((share) => share.files);
}

/** True when the built command line exists (the bench runs from dist/). */
export function hasBuiltCli(cli: string = BUILT_CLI): boolean {
  return existsSync(cli);
}

/** Runs `<cli> compress <args> --json` measured; resolves with its wall and CPU seconds and clip count. */
async function runProcess(
  cli: string,
  args: readonly string[],
): Promise<{ seconds: number; cpuSeconds: number; clips: number }> {
  const { seconds, cpuSeconds, code, stdout } = await runCliMeasured(
    cli,
    ['compress', ...args, '--json'],
    (status) => status <= 2,
  );
  const clips = clipsOfReport(stdout);
  if (clips === undefined) throw new Error(`compress ended with status ${code} and no --json report`);
  return { seconds, cpuSeconds, clips };
}

/** The clip count of a `compress --json` report; undefined when `text` is not one. */
function clipsOfReport(text: string): number | undefined {
  try {
    const clips = (JSON.parse(text) as { total?: { clips?: unknown } }).total?.clips;
    return typeof clips === 'number' ? clips : undefined;
  } catch {
    return undefined;
  }
}
