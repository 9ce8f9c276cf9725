/**
 * The library bench (docs/library.md): a synthetic library (the corpus's BVH
 * clips replicated with small deterministic perturbations up to `count` clips, generated
 * into a temp folder and removed afterwards) built with `compress --manifest` as a child
 * process, four ways: a first run with one job and with two, a second run with nothing
 * changed, and a run after touching 1 % of the clips. It reports wall time, raw MB/s and
 * the child's peak RSS for each, plus a fresh run over only the touched clips (what their
 * compression costs on its own).
 */
import { copyFile, cp, mkdir, mkdtemp, readFile, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { mulberry32 } from '../clip/random.js';
import { runCliMeasured } from './cli-process.js';

/** Options of {@link runLibraryBench}. */
export interface LibraryBenchOptions {
  /** Folder of source clips (`.bvh`); each is replicated in turn. */
  readonly corpus: string;
  /** Clips in the synthetic library. Default 10,000. */
  readonly count?: number;
  /** Share of clips touched before the third run. Default 0.01. */
  readonly touchFraction?: number;
  /**
   * Job counts of the first runs, each into its own folder; the later runs use the last.
   * Default [1, 2]. On a loaded machine, `[2]` halves the bench, and the speedup of 2 jobs
   * over 1 can be measured on a smaller library.
   */
  readonly firstRunJobs?: readonly number[];
  /** Seed of the perturbations. Default 1. */
  readonly seed?: number;
  /** Parent of the temp folder. Default `os.tmpdir()`. */
  readonly tempRoot?: string;
  /** Keep the temp folder (library, outputs, manifests) instead of removing it. */
  readonly keep?: boolean;
  /** Told what is going on (generation, each run). */
  readonly log?: (line: string) => void;
}

/** One CLI run of the bench. */
export interface LibraryBenchRun {
  readonly name: string;
  readonly jobs: number;
  /** Wall time of the child process, start-up included, seconds. */
  readonly seconds: number;
  /** Raw bytes of the clips this run had to consider / seconds, MB/s (1 MB = 10^6 bytes). */
  readonly rawMBps: number;
  /** The child's peak resident set, MB (10^6 bytes). */
  readonly peakRssMB: number;
  /** The child's CPU time, user + system, all threads, seconds: less sensitive to the machine's load than wall time. */
  readonly cpuSeconds: number;
  /** What the run said it did (compress --json). */
  readonly compressed: number;
  readonly cached: number;
  readonly outputsWritten: number;
  /** 1-minute load average before and after the run. */
  readonly loadBefore: number;
  readonly loadAfter: number;
}

/** The bench's figures and its pass/fail against the targets of docs/library.md. */
export interface LibraryBenchResult {
  readonly clips: number;
  readonly inputBytes: number;
  readonly rawBytes: number;
  readonly touched: number;
  readonly runs: readonly LibraryBenchRun[];
  /** rawMBps(--jobs 2) / rawMBps(--jobs 1) of the first runs (target ≥ 1.7); null unless both ran. */
  readonly jobsSpeedup: number | null;
  /** Unchanged second run / first run (with the last of `firstRunJobs`); target < 0.05. */
  readonly unchangedShare: number;
  /** Touched run / first run (--jobs 2). */
  readonly touchedShare: number;
  /** The touched clips' share of the first run, pro rata of their raw bytes. */
  readonly touchedProRataShare: number;
  /** A fresh run over the touched clips alone / first run (--jobs 2). */
  readonly touchedFreshShare: number;
  /** Largest peak RSS of any run, MB; target < 500. */
  readonly peakRssMB: number;
}

/** The build this module belongs to (dist/), and the package root above it. */
const DIST = fileURLToPath(new URL('../', import.meta.url));
const PACKAGE_ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** Preloaded into the child: prints its peak RSS (KB) and CPU time (user, system; µs), all threads, when it exits. */
/**
 * `bvh` with two smooth bumps of up to ±0.05 (degrees, or the file's length unit) on
 * random channels, each over up to 30 frames (a raised cosine), as a re-export with a
 * slightly edited key would make: the clip stays valid and close to its source, but
 * compresses to other bytes. The root's position is left alone. Deterministic in `seed`.
 */
export function perturbBvh(bvh: string, seed: number): string {
  const random = mulberry32(seed);
  const motion = bvh.indexOf('Frame Time:');
  if (motion < 0) return bvh;
  const bodyStart = bvh.indexOf('\n', motion) + 1;
  const lines = bvh.slice(bodyStart).split('\n');
  let frames = lines.length;
  while (frames > 0 && lines[frames - 1].trim() === '') frames--;
  const channels = frames > 0 ? lines[0].trim().split(/\s+/).length : 0;
  if (channels <= 3) return bvh;
  for (let bump = 0; bump < 2; bump++) {
    const channel = 3 + Math.floor(random() * (channels - 3));
    const span = Math.min(frames, 30);
    const first = Math.floor(random() * (frames - span + 1));
    const amplitude = (random() - 0.5) * 0.1;
    for (let f = 0; f < span; f++) {
      const values = lines[first + f].trim().split(/\s+/);
      const shape = (1 - Math.cos((2 * Math.PI * (f + 1)) / (span + 1))) / 2;
      values[channel] = (Number(values[channel]) + amplitude * shape).toFixed(6);
      lines[first + f] = values.join(' ');
    }
  }
  return bvh.slice(0, bodyStart) + lines.join('\n');
}

/**
 * Generates the library, runs the four builds and the fresh run over the touched clips,
 * and returns the figures. Needs the build (`npm run build`): it runs dist/cli/main.js.
 * The temp folder holds about `count` × the corpus's mean file size (about 2.2 GB for
 * 10,000 clips of the benchmark corpus) plus two output folders and caches.
 */
export async function runLibraryBench(options: LibraryBenchOptions): Promise<LibraryBenchResult> {
  const count = options.count ?? 10_000;
  const touchFraction = options.touchFraction ?? 0.01;
  const seed = options.seed ?? 1;
  const log = options.log ?? (() => undefined);
  const sources = (await readdir(options.corpus)).filter((name) => name.toLowerCase().endsWith('.bvh')).sort();
  if (sources.length === 0) throw new Error(`${options.corpus}: no .bvh clips`);
  const root = await mkdtemp(join(options.tempRoot ?? tmpdir(), 'bonepress-library-bench-'));
  try {
    // A private copy of the build: a rebuild in the working tree during an hour-long bench
    // must not change (or, half-written, break) the CLI between runs.
    const cli = join(root, 'bonepress', 'dist', 'cli', 'main.js');
    await cp(DIST, join(root, 'bonepress', 'dist'), { recursive: true });
    await copyFile(join(PACKAGE_ROOT, 'package.json'), join(root, 'bonepress', 'package.json'));
    await symlink(join(PACKAGE_ROOT, 'node_modules'), join(root, 'bonepress', 'node_modules'), 'dir');
    log(`generating ${count} clips from ${sources.length} in ${root}`);
    await mkdir(join(root, 'lib'));
    const texts = await Promise.all(sources.map((name) => readFile(join(options.corpus, name), 'utf8')));
    const files: string[] = [];
    let inputBytes = 0;
    const width = String(count - 1).length;
    for (let i = 0; i < count; i++) {
      // The first copy of each source is the source itself; the others are perturbed.
      const source = texts[i % texts.length];
      const text = i < texts.length ? source : perturbBvh(source, seed * 1_000_003 + i);
      const file = join('lib', `c${String(i).padStart(width, '0')}.bvh`);
      await writeFile(join(root, file), text);
      inputBytes += Buffer.byteLength(text);
      files.push(file);
    }

    const runs: LibraryBenchRun[] = [];
    const build = async (
      name: string,
      out: string,
      jobs: number,
      inputs: readonly string[] = files,
    ): Promise<LibraryBenchRun & { rawBytes: number }> => {
      log(`${name} (--jobs ${jobs}) …`);
      const loadBefore = loadavg()[0];
      // 1: a clip is above its threshold; the build itself completed.
      const { seconds, peakRssMB, cpuSeconds, stdout } = await runCliMeasured(
        cli,
        ['compress', ...inputs, '-o', out, '--manifest', join(out, 'manifest.json'), '--jobs', String(jobs), '--json'],
        (code) => code <= 1,
        root,
      );
      const report = JSON.parse(stdout) as {
        compressed: number;
        cached: number;
        outputsWritten: number;
        manifest: { total: { rawBytes: number } };
      };
      const run = {
        name,
        jobs,
        seconds,
        peakRssMB,
        cpuSeconds,
        rawMBps: report.manifest.total.rawBytes / 1e6 / seconds,
        compressed: report.compressed,
        cached: report.cached,
        outputsWritten: report.outputsWritten,
        loadBefore,
        loadAfter: loadavg()[0],
      };
      log(
        `  ${seconds.toFixed(2)} s (CPU ${cpuSeconds.toFixed(2)} s), ${run.rawMBps.toFixed(2)} raw MB/s, peak RSS ${peakRssMB.toFixed(0)} MB, load ${loadBefore.toFixed(1)} → ${run.loadAfter.toFixed(1)}`,
      );
      runs.push(run);
      return { ...run, rawBytes: report.manifest.total.rawBytes };
    };

    const firsts = [];
    for (const jobs of options.firstRunJobs ?? [1, 2]) firsts.push(await build('first run', `out-${jobs}`, jobs));
    const two = firsts[firsts.length - 1];
    const out = `out-${two.jobs}`;
    const unchanged = await build('unchanged second run', out, two.jobs);
    // Every n-th clip, from a seeded start: spread over the library like real edits.
    const step = Math.max(1, Math.round(1 / touchFraction));
    const start = Math.floor(mulberry32(seed)() * step);
    let touchedFiles = files.filter((_, i) => i % step === start);
    if (touchedFiles.length === 0) touchedFiles = [files[start % files.length]]; // a library smaller than 1 / touchFraction
    for (const [k, file] of touchedFiles.entries()) {
      const path = join(root, file);
      await writeFile(path, perturbBvh(await readFile(path, 'utf8'), seed * 7_919 + k + 1));
    }
    log(`touched ${touchedFiles.length} clips`);
    const touched = await build(`after touching ${touchedFiles.length} clips`, out, two.jobs);
    const fresh = await build(
      `the ${touchedFiles.length} touched clips alone, fresh`,
      'out-fresh',
      two.jobs,
      touchedFiles,
    );
    const one = firsts.find((r) => r.jobs === 1);
    const pair = firsts.find((r) => r.jobs === 2);

    return {
      clips: count,
      inputBytes,
      rawBytes: two.rawBytes,
      touched: touchedFiles.length,
      runs,
      jobsSpeedup: one && pair ? pair.rawMBps / one.rawMBps : null,
      unchangedShare: unchanged.seconds / two.seconds,
      touchedShare: touched.seconds / two.seconds,
      touchedProRataShare: fresh.rawBytes / two.rawBytes,
      touchedFreshShare: fresh.seconds / two.seconds,
      peakRssMB: Math.max(...runs.map((r) => r.peakRssMB)),
    };
  } finally {
    if (options.keep) log(`kept ${root}`);
    else await rm(root, { recursive: true, force: true });
  }
}

/** The figures as a text table, with each target and whether it is met. */
export function renderLibraryBench(result: LibraryBenchResult): string {
  const lines = [
    `synthetic library: ${result.clips} clips, ${(result.inputBytes / 1e6).toFixed(0)} MB of BVH, ${(result.rawBytes / 1e6).toFixed(0)} raw MB`,
    '',
    'run                                        jobs  seconds  CPU s  raw MB/s  compressed  cached  written  peak RSS MB  load (1 min)',
  ];
  for (const r of result.runs) {
    lines.push(
      `${r.name.padEnd(42)} ${String(r.jobs).padStart(4)} ${r.seconds.toFixed(2).padStart(8)} ${r.cpuSeconds.toFixed(1).padStart(6)} ${r.rawMBps.toFixed(2).padStart(9)} ${String(r.compressed).padStart(11)} ${String(r.cached).padStart(7)} ${String(r.outputsWritten).padStart(8)} ${r.peakRssMB.toFixed(0).padStart(12)}  ${r.loadBefore.toFixed(1)} → ${r.loadAfter.toFixed(1)}`,
    );
  }
  const pct = (x: number): string => `${(100 * x).toFixed(2)} %`;
  const mark = (ok: boolean): string => (ok ? 'met' : 'NOT met');
  const touchedBudget = 0.05 + result.touchedProRataShare;
  lines.push(
    '',
    result.jobsSpeedup === null
      ? '--jobs 2 / --jobs 1 raw MB/s (first runs): not measured in this run'
      : `--jobs 2 / --jobs 1 raw MB/s (first runs): ${result.jobsSpeedup.toFixed(2)}x   target >= 1.7x: ${mark(result.jobsSpeedup >= 1.7)}`,
    `unchanged second run / first run:           ${pct(result.unchangedShare)}   target < 5 %: ${mark(result.unchangedShare < 0.05)}`,
    `after touching ${result.touched} clips / first run:        ${pct(result.touchedShare)}   target < 5 % + their share (${pct(result.touchedProRataShare)} pro rata of raw bytes) = ${pct(touchedBudget)}: ${mark(result.touchedShare < touchedBudget)}`,
    `  (the touched clips alone, fresh run with start-up: ${pct(result.touchedFreshShare)} of the first run)`,
    `largest peak RSS:                           ${result.peakRssMB.toFixed(0)} MB   target < 500 MB: ${mark(result.peakRssMB < 500)}`,
  );
  return `${lines.join('\n')}\n`;
}
