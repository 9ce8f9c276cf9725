/**
 * The engine behind `bonepress bench`: compresses a corpus and reports size and
 * error per clip and in total, compression throughput on one worker and on the pool,
 * decoder speed next to three.js and a raw-copy floor, and whether the bytes are
 * deterministic. Stages: list the corpus → compress in-process (timed) → compress on the
 * pool (timed) → `bonepress compress` as whole processes (timed, cli-timing.ts) → effort
 * levels and big skeletons → check determinism → measure the error distribution → time
 * the decoders.
 */
import { mkdir, mkdtemp, readFile, readdir, rm, stat } from 'node:fs/promises';
import { arch, availableParallelism, cpus, loadavg, platform, tmpdir } from 'node:os';
import { basename, join, relative, sep } from 'node:path';

import type { RawClip } from '../clip/raw-clip.js';
import type { BitRateLadder } from '../compress/bitrate.js';
import { WEIGHT_BONE } from '../inspect/describe.js';
import { AFFINE_STRIDE, boneErrorFunction, clipToObject, type ErrorMetric } from '../metric/error-metric.js';
import { compress, type CompressStats, type ExperimentalOptions } from '../compress/index.js';
import { COMPRESS_DEFAULTS, resolveOptions, type CompressOptions } from '../compress/options.js';
import type { RotationReference } from '../compress/preprocess.js';
import { decompressClip } from '../compress/verify.js';
import { OUTPUT_CLASH, toFailure, type FileFailure } from '../node/failure.js';
import { readClipFiles, writeFileAtomic } from '../node/files.js';
import { MAX_PENDING_WRITES, compressFiles, encodeBatch } from '../node/pool.js';
import type { CompressFilesOptions, FileResult } from '../node/worker.js';
import { CompressedClip } from '../runtime/compressed-clip.js';
import { BENCH_ERROR, BenchError } from './errors.js';
import { measureGltfAssets, type BenchGltfAsset } from './gltf-assets.js';
import { BUILT_CLI, hasBuiltCli, timeCompressCli, type CliTiming } from './cli-timing.js';
import { measureEfforts, measureScaling, type AclMeasurement, type BenchSpeed } from './speed.js';
import {
  loadThree,
  measureClipDecode,
  measureColdCorpus,
  median,
  type ClipDecodeTimings,
  type ColdDecodeReport,
  type DecodeTiming,
  type ThreeModule,
} from './decode-timing.js';

/** Options of {@link runBench}. */
export interface BenchOptions {
  /** Files and folders (searched recursively for {@link CORPUS_EXTENSIONS}). */
  corpus: readonly string[];
  /** Jobs of the pool throughput run; 1 skips it. Default `os.availableParallelism()`. */
  jobs?: number;
  /** Error threshold with a unit. Default {@link COMPRESS_DEFAULTS}.error. */
  error?: string;
  /** Shell distance with a unit. Default {@link COMPRESS_DEFAULTS}.shell. */
  shell?: string;
  /** What the threshold bounds. Default {@link COMPRESS_DEFAULTS}.metric. */
  metric?: ErrorMetric;
  /** Bit-rate ladder (experimental); default: compress()'s. */
  ladder?: BitRateLadder;
  /** Rotation reference (experimental); default: compress()'s. */
  rotationReference?: RotationReference;
  /** Time the decoders. Default true. */
  decode?: boolean;
  /**
   * With `decode`, also time whole-pose decode with ACL's cold-cache method beside the warm
   * figure (decode-timing.ts, measureColdCorpus): minutes per clip. Default false.
   */
  decodeCold?: boolean;
  /**
   * Check pool determinism even when `jobs` is 1, by compressing the first two files on a
   * two-job pool. Needs the built worker (dist/node/worker.js). Default true.
   */
  poolCheck?: boolean;
  /**
   * Time compress() at every effort level on the corpus (sizes and seconds of each), and
   * on the generated big skeletons (speed.ts); and, when the bench runs from the build
   * without experimental options, `bonepress compress` on the corpus as whole processes
   * with one job and with `jobs` (cli-timing.ts). Default true.
   */
  speed?: boolean;
  /** Native ACL's measurement of the same corpus, printed beside ours (speed.ts `readAclMeasurement`). */
  acl?: AclMeasurement;
  /** Seed of the random sampling times. Default 1. */
  seed?: number;
  /** Least wall time of one timing measurement, ms. Default 20. */
  measureMs?: number;
  /** Timed measurements per figure (the fastest is kept). Default 3. */
  repeats?: number;
  /** Called as the bench advances, for progress display. */
  onProgress?: (progress: BenchProgress) => void;
}

/** Defaults of {@link BenchOptions}. */
export const BENCH_DEFAULTS = {
  error: COMPRESS_DEFAULTS.error,
  shell: COMPRESS_DEFAULTS.shell,
  metric: COMPRESS_DEFAULTS.metric,
  decode: true,
  speed: true,
  poolCheck: true,
  seed: 1,
  measureMs: 20,
  repeats: 3,
  /** Sequential playback step rate, Hz. */
  playbackHz: 60,
  /** Random sampling times per clip. */
  randomTimes: 4096,
  /** Bins of the error histograms between 0 and the threshold (one more holds errors above it). */
  errorBins: 20,
} as const;

/** File name endings a corpus folder is searched for (`.json` pose dumps only when named). */
export const CORPUS_EXTENSIONS = ['.bvh', '.gltf', '.glb', '.sjson'] as const;

/** Stages of a bench run, in order. */
export const BENCH_STAGE = {
  COMPRESS: 'compress',
  POOL: 'pool',
  PROCESS: 'process',
  SPEED: 'speed',
  ERRORS: 'errors',
  DECODE: 'decode',
} as const;
/** A {@link BENCH_STAGE}. */
export type BenchStage = (typeof BENCH_STAGE)[keyof typeof BENCH_STAGE];

/** Progress of a bench run. `done` = 0 announces a stage. */
export interface BenchProgress {
  readonly stage: BenchStage;
  readonly done: number;
  readonly total: number;
  /** The item just finished. */
  readonly label?: string;
}

export { BENCH_ERROR, BenchError, type BenchErrorCode } from './errors.js';

/** Settings a bench ran with, recorded in results and baselines. */
export interface BenchSettings {
  error: string;
  shell: string;
  /** What `error` bounds (absent in results made before the option existed: `vertices`). */
  metric: ErrorMetric;
  /** `'default'` when compress()'s default ladder was used. */
  ladder: BitRateLadder | 'default';
  rotationReference: RotationReference | 'default';
  jobs: number;
  decode: boolean;
  seed: number;
  measureMs: number;
  repeats: number;
  playbackHz: number;
  randomTimes: number;
}

/** One clip of the corpus: its compression figures and, with `decode`, its timings. */
export interface BenchClip {
  /**
   * Stable name: the file's path relative to the corpus folder it was found in (`/`
   * separated), or its base name when it was named directly; `#<clip name>` is added for
   * files with several clips. Baselines are keyed by it.
   */
  id: string;
  /** Path as found. */
  file: string;
  name: string;
  boneCount: number;
  sampleCount: number;
  /** 40 · bones · samples. */
  rawBytes: number;
  compressedBytes: number;
  /** Bytes of the optional names section inside compressedBytes. */
  namesBytes: number;
  ratio: number;
  /** In `unit`, measured with the run's metric. */
  maxError: number;
  /** Largest whole-shell error at the samples and between them, whatever the metric (0 in results made before it). */
  shellMaxError: number;
  p99Error: number;
  threshold: number;
  unit: string;
  withinThreshold: boolean;
  worstBone: string;
  worstSample: number;
  /** compress() wall time for this clip (seconds, error measurement included). */
  compressSeconds: number;
  /** (segment, animated track) pairs per bit rate; key = bits, 32 = raw float. */
  bitRateHistogram: Record<number, number>;
  decode?: ClipDecodeTimings;
  /** Bones that are morph-target weight tracks (`<node>.weights[<t>]`), when there are any. */
  weightTracks?: number;
}

/** Totals over the clips that compressed. */
export interface BenchTotals {
  files: number;
  clips: number;
  /** Files that could not be read or compressed. */
  failures: number;
  samples: number;
  rawBytes: number;
  compressedBytes: number;
  /** compressedBytes without the names sections (what a runtime that has its skeleton ships). */
  compressedBytesWithoutNames: number;
  /** rawBytes / compressedBytes. */
  ratio: number;
  ratioWithoutNames: number;
  /** Largest clip max error, in `unit`; null when clips differ in unit. */
  maxError: number | null;
  /** Largest clip whole-shell error, in `unit`; null when clips differ in unit. */
  shellMaxError: number | null;
  unit: string | null;
  /** Largest max error / threshold over clips (≤ 1 when every clip holds its threshold). */
  worstErrorShare: number;
  /** Clips whose max error is ≤ their threshold. */
  withinThreshold: number;
  /** withinThreshold / clips. */
  withinThresholdShare: number;
}

/** Compression throughput of one run: raw bytes over wall seconds, reading and parsing included. */
export interface Throughput {
  jobs: number;
  seconds: number;
  rawBytes: number;
  /** Raw megabytes (10^6 bytes) per second. */
  rawMBps: number;
  /**
   * CPU seconds the process used meanwhile (all threads), from `process.cpuUsage()`. On a
   * busy machine wall time grows and CPU time much less, so rawBytes / cpuSeconds tells
   * the compressor's speed apart from the machine's load.
   */
  cpuSeconds: number;
}

/** Compression throughput figures. */
export interface BenchThroughput {
  /** In-process, one clip after another, after a warm-up compression. */
  singleWorker: Throughput;
  /** On the worker pool with `--jobs`; null when jobs is 1. */
  pool: (Throughput & { /** pool rawMBps / singleWorker rawMBps. */ speedup: number }) | null;
  /**
   * `bonepress compress` on the corpus as a user runs it, whole processes with one job and
   * with `--jobs` ({@link BenchOptions.speed}); null when not run (no build, experimental
   * options, `speed` off); absent in results made before.
   */
  wholeProcess?: CliTiming | null;
}

/** Whether compressing the same clip again, or on the pool, gives the same bytes. */
export interface BenchDeterminism {
  ok: boolean;
  /** The first clip compressed twice in-process gave identical bytes (null: nothing compressed). */
  repeatIdentical: boolean | null;
  /** Clips compared between the in-process run and the pool. */
  poolCompared: number;
  /** Jobs of the pool the comparison ran on (0: no pool comparison). */
  poolJobs: number;
  /** Ids of clips whose pool bytes differ (or that failed only on the pool). */
  mismatches: string[];
}

/** Counts of errors by share of the threshold: `counts[i]` covers [i, i+1) / bins · threshold. */
export interface ErrorHistogram {
  /** Bin width as a share of the threshold (1 / bins). */
  binWidth: number;
  counts: number[];
  /** Errors above the threshold. */
  over: number;
  total: number;
}

/** Decoder figures over the corpus: medians of per-clip µs per pose. */
export interface BenchDecode {
  clips: number;
  bonepress: DecodeTiming;
  rawCopy: DecodeTiming;
  three: DecodeTiming | null;
  /** Why three.js figures are missing. */
  threeUnavailable?: string;
  /** three µs / bonepress µs, from the medians (above 1: bonepress is faster). */
  speedupVsThree: { sequential: number; random: number } | null;
  /** The same from the CPU-time medians, steadier on a busy machine. */
  speedupVsThreeCpu: { sequential: number; random: number } | null;
  /** Median bytes of the three.js clip's typed arrays. */
  threeClipBytes: number | null;
  /** ACL's cold-cache method, with {@link BenchOptions.decodeCold}. */
  cold?: ColdDecodeReport;
}

/** Everything a bench run measured. */
export interface BenchResult {
  /** Result layout version; bump when fields change meaning. */
  version: 1;
  startedAt: string;
  /** Wall time of the whole run. */
  seconds: number;
  corpus: string[];
  settings: BenchSettings;
  environment: {
    node: string;
    platform: string;
    arch: string;
    cpuModel: string;
    cpus: number;
    three: string | null;
    /** 1-minute load average at the start and the end (0 where the platform has none): timings above ~cpus are disturbed. */
    loadAverage: { start: number; end: number };
  };
  clips: BenchClip[];
  failures: FileFailure[];
  totals: BenchTotals;
  throughput: BenchThroughput;
  determinism: BenchDeterminism;
  /** Every bone × sample error of every clip (virtual vertices, after decoding). */
  errorHistogram: ErrorHistogram;
  /** Max error of each clip. */
  clipErrorHistogram: ErrorHistogram;
  /** Bit rates over every clip, (segment, animated track) pairs per bits. */
  bitRateHistogram: Record<number, number>;
  decode: BenchDecode | null;
  /** Effort levels, big skeletons and ACL's figure ({@link BenchOptions.speed}, {@link BenchOptions.acl}); absent in results made before. */
  speed?: BenchSpeed;
  /** Per glTF asset of the corpus: animation and file bytes of the source and of the asset compressed whole (gltf-assets.ts). */
  gltfAssets?: BenchGltfAsset[];
  /** glTF assets that could not be compressed whole. */
  gltfAssetFailures?: FileFailure[];
}

/** A corpus file and its stable id. */
export interface CorpusFile {
  readonly path: string;
  readonly id: string;
}

/**
 * Expands `corpus` into files: a file is taken as it is (id: its base name); a folder is
 * searched recursively for {@link CORPUS_EXTENSIONS}, skipping hidden entries (ids: paths
 * relative to the folder). Files come in argument order, each folder's sorted by id; a file
 * reached twice is listed once, and an id taken twice falls back to the path. Throws
 * {@link BenchError} `BAD_CORPUS` for a path that cannot be read.
 */
export async function listCorpus(corpus: readonly string[]): Promise<CorpusFile[]> {
  const files: CorpusFile[] = [];
  const seenPaths = new Set<string>();
  const seenIds = new Set<string>();
  const add = (path: string, id: string): void => {
    if (seenPaths.has(path)) return;
    seenPaths.add(path);
    const unique = seenIds.has(id) ? path.split(sep).join('/') : id;
    seenIds.add(unique);
    files.push({ path, id: unique });
  };
  for (const entry of corpus) {
    let info;
    try {
      info = await stat(entry);
    } catch (error) {
      throw new BenchError(BENCH_ERROR.BAD_CORPUS, `${entry}: ${toFailure(entry, error).message}`);
    }
    if (!info.isDirectory()) {
      add(entry, basename(entry));
      continue;
    }
    const found = await walk(entry);
    const withIds = found.map((path) => ({ path, id: relative(entry, path).split(sep).join('/') }));
    withIds.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    for (const { path, id } of withIds) add(path, id);
  }
  return files;
}

/** Clip files under `folder`, recursively, hidden entries skipped. */
async function walk(folder: string): Promise<string[]> {
  let entries;
  try {
    entries = await readdir(folder, { withFileTypes: true });
  } catch (error) {
    throw new BenchError(BENCH_ERROR.BAD_CORPUS, `${folder}: ${toFailure(folder, error).message}`);
  }
  const out: string[] = [];
  for (const entry of entries) {
    if (entry.name.startsWith('.')) continue;
    const path = join(folder, entry.name);
    if (entry.isDirectory()) out.push(...(await walk(path)));
    else if (entry.isFile() && CORPUS_EXTENSIONS.some((ext) => entry.name.toLowerCase().endsWith(ext))) out.push(path);
  }
  return out;
}

/** A compressed clip kept for the later stages. */
interface CompressedEntry {
  readonly id: string;
  readonly fileIndex: number;
  readonly clipIndex: number;
  readonly clip: RawClip;
  readonly bytes: Uint8Array;
  readonly stats: CompressStats;
}

/**
 * Runs the bench over `options.corpus` and returns every figure (see {@link BenchResult}).
 * Files that fail to read or compress are listed in `failures` and the rest go on.
 * Compressed files go to a temp folder that is removed before it returns. Throws
 * {@link BenchError} for a corpus path that cannot be read or a corpus with no readable
 * clip, and `OptionsError` for a bad threshold or shell.
 */
export async function runBench(options: BenchOptions): Promise<BenchResult> {
  const startedAt = new Date();
  const started = performance.now();
  const loadAtStart = loadavg()[0];
  const corpus = [...options.corpus];
  const settings: BenchSettings = {
    error: options.error ?? BENCH_DEFAULTS.error,
    shell: options.shell ?? BENCH_DEFAULTS.shell,
    metric: options.metric ?? BENCH_DEFAULTS.metric,
    ladder: options.ladder ?? 'default',
    rotationReference: options.rotationReference ?? 'default',
    jobs: Math.max(1, Math.floor(options.jobs ?? availableParallelism())),
    decode: options.decode ?? BENCH_DEFAULTS.decode,
    seed: options.seed ?? BENCH_DEFAULTS.seed,
    measureMs: options.measureMs ?? BENCH_DEFAULTS.measureMs,
    repeats: Math.max(1, Math.floor(options.repeats ?? BENCH_DEFAULTS.repeats)),
    playbackHz: BENCH_DEFAULTS.playbackHz,
    randomTimes: BENCH_DEFAULTS.randomTimes,
  };
  const compressOptions: CompressOptions & ExperimentalOptions = {
    error: settings.error,
    shell: settings.shell,
    metric: settings.metric,
  };
  if (options.ladder) compressOptions.ladder = options.ladder;
  if (options.rotationReference) compressOptions.rotationReference = options.rotationReference;
  const onProgress = options.onProgress ?? (() => {});

  const files = await listCorpus(corpus);
  if (files.length === 0) {
    throw new BenchError(
      BENCH_ERROR.EMPTY_CORPUS,
      `no clip files (${CORPUS_EXTENSIONS.join(', ')}) in ${corpus.join(', ')}`,
    );
  }
  const workDir = await mkdtemp(join(tmpdir(), 'bonepress-bench-'));
  try {
    const single = await compressInProcess(files, compressOptions, join(workDir, 'single'), onProgress);
    if (single.entries.length === 0) {
      const first = single.failures[0];
      throw new BenchError(
        BENCH_ERROR.EMPTY_CORPUS,
        `no clip of the corpus could be compressed${first ? ` (${first.file}: ${first.message})` : ''}`,
      );
    }
    const poolFiles =
      settings.jobs > 1
        ? files
        : (options.poolCheck ?? BENCH_DEFAULTS.poolCheck)
          ? readableFiles(files, single.entries).slice(0, 2)
          : [];
    const poolJobs = settings.jobs > 1 ? settings.jobs : 2;
    let pool: PoolRun | null = null;
    if (poolFiles.length >= 2)
      pool = await compressOnPool(poolFiles, files, compressOptions, poolJobs, join(workDir, 'pool'), onProgress);

    let wholeProcess: CliTiming | null = null;
    const runSpeed = options.speed ?? BENCH_DEFAULTS.speed;
    // The command line takes the standard options only; its own timing needs the build.
    if (runSpeed && !options.ladder && !options.rotationReference && hasBuiltCli()) {
      wholeProcess = await timeCompressCli({
        cli: BUILT_CLI,
        corpus,
        args: ['--error', settings.error, '--shell', settings.shell, '--metric', settings.metric],
        jobs: settings.jobs,
        files: files.map((file) => file.path),
        rounds: settings.repeats,
        onRun: (done, total) => onProgress({ stage: BENCH_STAGE.PROCESS, done, total }),
      });
    }

    let speed: BenchSpeed | undefined;
    if (runSpeed) {
      const clips = single.entries.map((entry) => entry.clip);
      const total = clips.length + 2;
      let done = 0;
      const step = (clip: RawClip): void =>
        onProgress({ stage: BENCH_STAGE.SPEED, done: ++done, total, label: clip.name });
      onProgress({ stage: BENCH_STAGE.SPEED, done: 0, total });
      const efforts = measureEfforts(clips, compressOptions, step);
      const scaling = measureScaling(compressOptions, step);
      speed = { efforts, scaling, acl: options.acl ?? null };
    } else if (options.acl) {
      speed = { efforts: null, scaling: null, acl: options.acl };
    }

    const clips = single.entries.map((entry) => clipFigures(files[entry.fileIndex].path, entry));
    const determinism = await checkDeterminism(single, pool);
    const histograms = measureErrorHistograms(single.entries, compressOptions, onProgress);
    const bitRateHistogram: Record<number, number> = {};
    for (const clip of clips) {
      for (const [bits, count] of Object.entries(clip.bitRateHistogram))
        bitRateHistogram[Number(bits)] = (bitRateHistogram[Number(bits)] ?? 0) + count;
    }

    let decode: BenchDecode | null = null;
    let threeVersion: string | null = null;
    if (settings.decode) {
      const loaded = await loadThree();
      const three = 'three' in loaded ? loaded.three : undefined;
      threeVersion = three ? three.REVISION : null;
      decode = timeDecoders(single.entries, clips, settings, three, onProgress);
      if (!three && 'error' in loaded) decode.threeUnavailable = loaded.error;
      if (options.decodeCold) decode.cold = measureColdCorpus(single.entries, (bytes) => CompressedClip.open(bytes));
    }

    const gltf = await measureGltfAssets(
      files,
      { error: settings.error, shell: settings.shell, metric: settings.metric },
      workDir,
    );

    const singleThroughput: Throughput = {
      jobs: 1,
      seconds: single.seconds,
      rawBytes: single.rawBytes,
      rawMBps: single.rawBytes / 1e6 / single.seconds,
      cpuSeconds: single.cpuSeconds,
    };
    const poolThroughput =
      pool && settings.jobs > 1
        ? {
            jobs: pool.jobs,
            seconds: pool.seconds,
            cpuSeconds: pool.cpuSeconds,
            rawBytes: pool.rawBytes,
            rawMBps: pool.rawBytes / 1e6 / pool.seconds,
            speedup: pool.rawBytes / 1e6 / pool.seconds / singleThroughput.rawMBps,
          }
        : null;
    const cpu = cpus()[0];
    return {
      version: 1,
      startedAt: startedAt.toISOString(),
      seconds: (performance.now() - started) / 1000,
      corpus,
      settings,
      environment: {
        node: process.version,
        platform: platform(),
        arch: arch(),
        cpuModel: cpu?.model ?? 'unknown',
        cpus: availableParallelism(),
        three: threeVersion,
        loadAverage: { start: loadAtStart, end: loadavg()[0] },
      },
      clips,
      failures: single.failures,
      totals: totalsOf(clips, files.length, single.failures.length),
      throughput: { singleWorker: singleThroughput, pool: poolThroughput, wholeProcess },
      determinism,
      errorHistogram: histograms.samples,
      clipErrorHistogram: histograms.clips,
      bitRateHistogram,
      decode,
      ...(speed ? { speed } : {}),
      ...(gltf.assets.length > 0 ? { gltfAssets: gltf.assets } : {}),
      ...(gltf.failures.length > 0 ? { gltfAssetFailures: gltf.failures } : {}),
    };
  } finally {
    await rm(workDir, { recursive: true, force: true });
  }
}

/**
 * Totals over `clips` (see {@link BenchTotals}); `files` and `failures` are passed through.
 * Ratios of an empty set are NaN.
 */
export function totalsOf(clips: readonly BenchClip[], files: number, failures: number): BenchTotals {
  let rawBytes = 0,
    compressedBytes = 0,
    namesBytes = 0,
    samples = 0,
    within = 0,
    worstShare = 0,
    maxError = 0,
    shellMaxError = 0;
  const units = new Set<string>();
  for (const clip of clips) {
    rawBytes += clip.rawBytes;
    compressedBytes += clip.compressedBytes;
    namesBytes += clip.namesBytes;
    samples += clip.sampleCount;
    if (clip.withinThreshold) within++;
    worstShare = Math.max(worstShare, clip.maxError / clip.threshold);
    maxError = Math.max(maxError, clip.maxError);
    shellMaxError = Math.max(shellMaxError, clip.shellMaxError ?? 0);
    units.add(clip.unit);
  }
  const withoutNames = compressedBytes - namesBytes;
  return {
    files,
    clips: clips.length,
    failures,
    samples,
    rawBytes,
    compressedBytes,
    compressedBytesWithoutNames: withoutNames,
    ratio: rawBytes / compressedBytes,
    ratioWithoutNames: rawBytes / withoutNames,
    maxError: units.size === 1 ? maxError : null,
    shellMaxError: units.size === 1 ? shellMaxError : null,
    unit: units.size === 1 ? [...units][0] : null,
    worstErrorShare: worstShare,
    withinThreshold: within,
    withinThresholdShare: clips.length > 0 ? within / clips.length : Number.NaN,
  };
}

/** The per-clip figures of a compressed entry. */
function clipFigures(file: string, entry: CompressedEntry): BenchClip {
  const s = entry.stats;
  const weightTracks = entry.clip.skeleton.boneNames.filter((name) => WEIGHT_BONE.test(name)).length;
  return {
    id: entry.id,
    file,
    name: s.name,
    boneCount: s.boneCount,
    sampleCount: s.sampleCount,
    rawBytes: s.rawBytes,
    compressedBytes: s.compressedBytes,
    namesBytes: s.namesBytes,
    ratio: s.ratio,
    maxError: s.maxError,
    shellMaxError: s.shellMaxError,
    p99Error: s.p99Error,
    threshold: s.threshold,
    unit: s.unit,
    withinThreshold: s.maxError <= s.threshold,
    worstBone: s.worstBone,
    worstSample: s.worstSample,
    compressSeconds: s.seconds,
    bitRateHistogram: { ...s.bitRateHistogram },
    ...(weightTracks > 0 ? { weightTracks } : {}),
  };
}

/** Ids of a file's clips: the file id alone for one clip, `id#name` for several (repeats numbered). */
function clipIds(fileId: string, names: readonly string[]): string[] {
  if (names.length === 1) return [fileId];
  const seen = new Map<string, number>();
  return names.map((name) => {
    const count = (seen.get(name) ?? 0) + 1;
    seen.set(name, count);
    return `${fileId}#${name}${count > 1 ? `~${count}` : ''}`;
  });
}

/** The in-process compression run. */
interface InProcessRun {
  entries: CompressedEntry[];
  failures: FileFailure[];
  /** Wall seconds of the timed loop (warm-up excluded). */
  seconds: number;
  cpuSeconds: number;
  rawBytes: number;
  /** Bytes of the warm-up compression of the first clip. */
  warmUpBytes: Uint8Array | null;
}

/**
 * Compresses every file in this thread, one after another, on the batch engine that
 * `compressFiles` runs with one job (pool.ts `encodeBatch`: read + parse + compress, each
 * file written atomically while the next compresses), after compressing the first clip
 * once untimed. Outputs are named by corpus position, so two files with one base name
 * both count. The clips are read again, untimed, for the later stages.
 */
async function compressInProcess(
  files: readonly CorpusFile[],
  options: CompressOptions & ExperimentalOptions,
  outDir: string,
  onProgress: (progress: BenchProgress) => void,
): Promise<InProcessRun> {
  await mkdir(outDir, { recursive: true });
  let warmUpBytes: Uint8Array | null = null;
  for (const file of files) {
    try {
      const clips = await readClipFiles(file.path);
      if (clips.length === 0) continue;
      warmUpBytes = compress(clips[0], options).bytes;
      break;
    } catch {
      // A file that fails is reported by the timed loop.
    }
  }

  const failures: FileFailure[] = [];
  const encodedBytes = new Map<number, { bytes: Uint8Array; stats: CompressStats }[]>();
  let done = 0;
  onProgress({ stage: BENCH_STAGE.COMPRESS, done: 0, total: files.length });
  const tasks = files.map((file, index) => ({ index, task: { file: file.path, outDir, options } }));
  const started = performance.now();
  const cpuStarted = process.cpuUsage();
  await encodeBatch(tasks, { jobs: 1, maxPendingSettles: MAX_PENDING_WRITES }, async (index, encoded) => {
    try {
      if (!encoded.ok) {
        failures.push(encoded.failure);
        return;
      }
      for (const clip of encoded.clips)
        await writeFileAtomic(join(outDir, `${index}-${basename(clip.output)}`), clip.bytes);
      encodedBytes.set(
        index,
        encoded.clips.map(({ bytes, stats }) => ({ bytes, stats })),
      );
    } catch (error) {
      failures.push(toFailure(files[index].path, error));
    } finally {
      onProgress({ stage: BENCH_STAGE.COMPRESS, done: ++done, total: files.length, label: files[index].id });
    }
  });
  const seconds = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpuStarted);

  const entries: CompressedEntry[] = [];
  let rawBytes = 0;
  for (const [fileIndex, file] of files.entries()) {
    const results = encodedBytes.get(fileIndex);
    if (results === undefined) continue;
    const clips = await readClipFiles(file.path);
    const ids = clipIds(
      file.id,
      clips.map((clip) => clip.name),
    );
    results.forEach(({ bytes, stats }, i) => {
      entries.push({ id: ids[i], fileIndex, clipIndex: i, clip: clips[i], bytes, stats });
      rawBytes += stats.rawBytes;
    });
  }
  return { entries, failures, seconds, cpuSeconds: (cpu.user + cpu.system) / 1e6, rawBytes, warmUpBytes };
}

/** The files that compressed in-process, in corpus order. */
function readableFiles(files: readonly CorpusFile[], entries: readonly CompressedEntry[]): CorpusFile[] {
  const indices = [...new Set(entries.map((entry) => entry.fileIndex))];
  return indices.map((i) => files[i]);
}

/** The pool compression run. */
interface PoolRun {
  jobs: number;
  seconds: number;
  cpuSeconds: number;
  rawBytes: number;
  /** Results by corpus file index. */
  results: Map<number, FileResult>;
}

/** Compresses `poolFiles` on the worker pool with `jobs` jobs, timing the whole batch (pool start-up included). */
async function compressOnPool(
  poolFiles: readonly CorpusFile[],
  files: readonly CorpusFile[],
  options: CompressOptions & ExperimentalOptions,
  jobs: number,
  outDir: string,
  onProgress: (progress: BenchProgress) => void,
): Promise<PoolRun> {
  // The worker passes every option but `read` on to compress(), the experimental ones included.
  const poolOptions: CompressFilesOptions = { ...options };
  onProgress({ stage: BENCH_STAGE.POOL, done: 0, total: poolFiles.length });
  const started = performance.now();
  const cpuStarted = process.cpuUsage();
  const results = await compressFiles(
    poolFiles.map((file) => file.path),
    poolOptions,
    {
      outDir,
      jobs,
      onProgress: ({ done, total, result }) =>
        onProgress({ stage: BENCH_STAGE.POOL, done, total, label: basename(result.file) }),
    },
  );
  const seconds = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpuStarted);
  const byPath = new Map(files.map((file, index) => [file.path, index]));
  const map = new Map<number, FileResult>();
  let rawBytes = 0;
  results.forEach((result, i) => {
    map.set(byPath.get(poolFiles[i].path) ?? -1, result);
    if (result.ok) for (const clip of result.clips) rawBytes += clip.stats.rawBytes;
  });
  return {
    jobs: Math.min(jobs, poolFiles.length),
    seconds,
    cpuSeconds: (cpu.user + cpu.system) / 1e6,
    rawBytes,
    results: map,
  };
}

/** Compares the warm-up and timed bytes of the first clip, and every pool output with its in-process bytes. */
async function checkDeterminism(single: InProcessRun, pool: PoolRun | null): Promise<BenchDeterminism> {
  const first = single.entries[0];
  const repeatIdentical = first && single.warmUpBytes ? sameBytes(first.bytes, single.warmUpBytes) : null;
  const mismatches: string[] = [];
  let poolCompared = 0;
  if (pool) {
    for (const entry of single.entries) {
      const result = pool.results.get(entry.fileIndex);
      // Two corpus files with one base name write one pool output: not comparable, not a mismatch.
      if (!result || (!result.ok && result.failure.code === OUTPUT_CLASH)) continue;
      poolCompared++;
      const output = result.ok ? result.clips[entry.clipIndex]?.output : undefined;
      if (output === undefined) {
        mismatches.push(entry.id);
        continue;
      }
      const data = await readFile(output);
      if (!sameBytes(entry.bytes, new Uint8Array(data.buffer, data.byteOffset, data.byteLength)))
        mismatches.push(entry.id);
    }
  }
  return {
    ok: repeatIdentical !== false && mismatches.length === 0,
    repeatIdentical,
    poolCompared,
    poolJobs: pool ? pool.jobs : 0,
    mismatches,
  };
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** An empty {@link ErrorHistogram} of `bins` bins. */
export function createErrorHistogram(bins: number = BENCH_DEFAULTS.errorBins): ErrorHistogram {
  return { binWidth: 1 / bins, counts: new Array<number>(bins).fill(0), over: 0, total: 0 };
}

/** Adds an error of `share` × threshold to `histogram`. */
export function addToErrorHistogram(histogram: ErrorHistogram, share: number): void {
  histogram.total++;
  if (share > 1) {
    histogram.over++;
    return;
  }
  const bins = histogram.counts.length;
  histogram.counts[Math.min(bins - 1, Math.floor(share * bins))]++;
}

/**
 * Decodes every compressed clip at its samples and bins each bone × sample error (virtual
 * vertices, the compressor's shell distances) by its share of the threshold, and each
 * clip's max error likewise.
 */
function measureErrorHistograms(
  entries: readonly CompressedEntry[],
  options: CompressOptions,
  onProgress: (progress: BenchProgress) => void,
): { samples: ErrorHistogram; clips: ErrorHistogram } {
  const samples = createErrorHistogram();
  const clips = createErrorHistogram();
  onProgress({ stage: BENCH_STAGE.ERRORS, done: 0, total: entries.length });
  entries.forEach((entry, i) => {
    const { threshold, shellDistances, metric } = resolveOptions(entry.clip, options);
    const boneError = boneErrorFunction(metric);
    const decoded = decompressClip(CompressedClip.open(entry.bytes));
    const a = clipToObject(entry.clip);
    const b = clipToObject(decoded);
    const boneCount = entry.clip.skeleton.parents.length;
    for (let s = 0; s < entry.clip.sampleCount; s++) {
      for (let bone = 0; bone < boneCount; bone++) {
        const o = (s * boneCount + bone) * AFFINE_STRIDE;
        addToErrorHistogram(samples, boneError(a, o, b, o, shellDistances[bone]) / threshold);
      }
    }
    addToErrorHistogram(clips, entry.stats.maxError / threshold);
    onProgress({ stage: BENCH_STAGE.ERRORS, done: i + 1, total: entries.length, label: entry.id });
  });
  return { samples, clips };
}

/** Times every clip with at least 2 samples and writes its timings into `clips`; returns the medians. */
function timeDecoders(
  entries: readonly CompressedEntry[],
  clips: BenchClip[],
  settings: BenchSettings,
  three: ThreeModule | undefined,
  onProgress: (progress: BenchProgress) => void,
): BenchDecode {
  const timed: ClipDecodeTimings[] = [];
  onProgress({ stage: BENCH_STAGE.DECODE, done: 0, total: entries.length });
  entries.forEach((entry, i) => {
    if (entry.clip.sampleCount >= 2) {
      const timings = measureClipDecode(entry.clip, entry.bytes, settings, three);
      clips[i].decode = timings;
      timed.push(timings);
    }
    onProgress({ stage: BENCH_STAGE.DECODE, done: i + 1, total: entries.length, label: entry.id });
  });
  const medianOf = (pick: (t: ClipDecodeTimings) => DecodeTiming | undefined): DecodeTiming => {
    const present = timed.map(pick).filter((t): t is DecodeTiming => t !== undefined);
    return {
      sequentialUs: median(present.map((t) => t.sequentialUs)),
      randomUs: median(present.map((t) => t.randomUs)),
      sequentialCpuUs: median(present.map((t) => t.sequentialCpuUs)),
      randomCpuUs: median(present.map((t) => t.randomCpuUs)),
    };
  };
  const bonepress = medianOf((t) => t.bonepress);
  const withThree = three !== undefined && timed.length > 0;
  const threeTiming = withThree ? medianOf((t) => t.three) : null;
  return {
    clips: timed.length,
    bonepress,
    rawCopy: medianOf((t) => t.rawCopy),
    three: threeTiming,
    speedupVsThree: threeTiming
      ? {
          sequential: threeTiming.sequentialUs / bonepress.sequentialUs,
          random: threeTiming.randomUs / bonepress.randomUs,
        }
      : null,
    speedupVsThreeCpu: threeTiming
      ? {
          sequential: threeTiming.sequentialCpuUs / bonepress.sequentialCpuUs,
          random: threeTiming.randomCpuUs / bonepress.randomCpuUs,
        }
      : null,
    threeClipBytes: withThree ? median(timed.map((t) => t.threeClipBytes ?? 0)) : null,
  };
}
