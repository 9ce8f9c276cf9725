/**
 * `bonepress compress` timed as a user runs it: the built command line as a whole process
 * (Node's start, module loading, the worker pool's start, reading, compressing, writing and
 * the exit), with one job and with the pool's jobs, the two alternating round by round so
 * that a change in the machine's load falls on both alike.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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
  rounds: number;
  /** Called after each process. */
  onRun?: () => void;
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
  const jobsList = run.jobs > 1 ? [1, run.jobs] : [1];
  const wall = jobsList.map((): number[] => []);
  const cpu = jobsList.map((): number[] => []);
  let clips: number | undefined;
  try {
    for (let round = 0; round < run.rounds; round++) {
      for (const [k, jobs] of jobsList.entries()) {
        const out = join(work, `out-${round}-${jobs}`);
        const done = await runProcess(run.cli, [...run.corpus, '-o', out, '--jobs', String(jobs), ...run.args]);
        clips ??= done.clips;
        if (done.clips !== clips)
          throw new Error(`compress --jobs ${jobs} compressed ${done.clips} clips, an earlier run ${clips}`);
        wall[k].push(done.seconds);
        cpu[k].push(done.cpuSeconds);
        await rm(out, { recursive: true, force: true });
        run.onRun?.();
      }
    }
  } finally {
    await rm(work, { recursive: true, force: true });
  }
  const figure = (k: number): ProcessFigure => ({
    jobs: jobsList[k],
    seconds: median(wall[k]),
    cpuSeconds: median(cpu[k]),
    rounds: wall[k],
    clips: clips ?? 0,
  });
  const one = figure(0);
  const pool = jobsList.length > 1 ? figure(1) : null;
  return { one, pool, speedup: pool ? one.seconds / pool.seconds : null };
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
