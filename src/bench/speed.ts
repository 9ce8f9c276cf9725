/**
 * The bench's compression-speed figures beyond throughput: the size and time of each
 * effort level on the corpus, seconds per million bone-samples on generated big skeletons
 * beside the corpus's, and a native ACL measurement read from a file (never run here).
 */
import { readFile } from 'node:fs/promises';

import type { RawClip } from '../clip/raw-clip.js';
import { compress } from '../compress/index.js';
import { EFFORTS, type CompressOptions, type Effort } from '../compress/options.js';
import { bodyFaceFingersClip, chainClip } from './big-rigs.js';
import { median } from './decode-timing.js';
import { BENCH_ERROR, BenchError } from './errors.js';

/** Samples of each generated big-skeleton clip (4 s at 30 Hz, eight segments). */
export const BIG_RIG_SAMPLES = 120;
/**
 * Compressions of each big skeleton; its figure is their median. One short clip against the
 * corpus's 174 moves with the machine's noise: after the corpus, the 300-bone rig's first five
 * took 0.22, 0.25, 0.17, 0.22 and 0.16 CPU-s (pinned), and with three the bench's rig figure
 * ran from 1.5 × to 2.5 × the corpus's from run to run.
 */
export const SCALING_RUNS = 5;

/** One effort level over the corpus: compress() alone, the clips already read. */
export interface EffortFigure {
  effort: Effort;
  compressedBytes: number;
  ratio: number;
  /** Σ wall seconds of compress() over the clips. */
  seconds: number;
  /** Σ CPU seconds of this thread meanwhile. */
  cpuSeconds: number;
  /** Clips whose max error (at any time) is within their threshold. */
  withinThreshold: number;
  clips: number;
  /** Wall seconds per million bone-samples (bones × samples of the source). */
  secondsPerMillion: number;
  /** CPU seconds per million bone-samples. */
  cpuSecondsPerMillion: number;
}

/** One generated skeleton compressed at the default effort. */
export interface ScalingFigure {
  name: string;
  boneCount: number;
  sampleCount: number;
  /** Median wall seconds of {@link SCALING_RUNS} compressions. */
  seconds: number;
  /** Median CPU seconds of those compressions. */
  cpuSeconds: number;
  secondsPerMillion: number;
  cpuSecondsPerMillion: number;
  ratio: number;
  /** Largest error at any time, in the clip's unit (cm). */
  maxError: number;
  withinThreshold: boolean;
}

/** Native ACL's compression of the same corpus, measured outside the bench (`bench --acl <file>`). */
export interface AclMeasurement {
  /** What was measured, e.g. `ACL 2.1.0 acl_compressor`. */
  label: string;
  clips: number;
  /** Σ of ACL's own timer around its compression. */
  compressSeconds: number;
  /** Wall time of the tool's whole per-clip process loop (parse, compress, measure). */
  processSeconds: number;
  /** The corpus's raw bytes as ACL counts them (40 per bone per sample). */
  rawBytes: number;
  /** CPU seconds of the whole loop's processes, when measured: steadier than wall time on a busy machine. */
  processCpuSeconds?: number;
}

/** Speed figures of a bench run. */
export interface BenchSpeed {
  /** Each effort level, fastest first; null when not run. */
  efforts: EffortFigure[] | null;
  /** The big skeletons; null when not run. */
  scaling: ScalingFigure[] | null;
  acl: AclMeasurement | null;
}

/**
 * Compresses every clip at each effort level, the levels alternating clip by clip so that a
 * change in the machine's load falls on all of them alike; `onClip` is called after each clip.
 */
export function measureEfforts(
  clips: readonly RawClip[],
  options: CompressOptions,
  onClip: (clip: RawClip) => void = () => {},
): EffortFigure[] {
  const figures = EFFORTS.map(
    (effort): EffortFigure => ({
      effort,
      compressedBytes: 0,
      ratio: 0,
      seconds: 0,
      cpuSeconds: 0,
      withinThreshold: 0,
      clips: 0,
      secondsPerMillion: 0,
      cpuSecondsPerMillion: 0,
    }),
  );
  let rawBytes = 0,
    boneSamples = 0;
  for (const clip of clips) {
    boneSamples += clip.skeleton.parents.length * clip.sampleCount;
    for (const figure of figures) {
      const { result, seconds, cpuSeconds } = timed(() => compress(clip, { ...options, effort: figure.effort }));
      figure.compressedBytes += result.bytes.length;
      figure.seconds += seconds;
      figure.cpuSeconds += cpuSeconds;
      figure.clips++;
      if (result.stats.maxError <= result.stats.threshold) figure.withinThreshold++;
      if (figure === figures[0]) rawBytes += result.stats.rawBytes;
    }
    onClip(clip);
  }
  for (const figure of figures) {
    figure.ratio = rawBytes / figure.compressedBytes;
    figure.secondsPerMillion = figure.seconds / (boneSamples / 1e6);
    figure.cpuSecondsPerMillion = figure.cpuSeconds / (boneSamples / 1e6);
  }
  return figures;
}

/**
 * Compresses the generated 1,000-joint chain and 300-bone body-face-fingers rig at the
 * default effort; `onClip` is called after each.
 */
export function measureScaling(options: CompressOptions, onClip: (clip: RawClip) => void = () => {}): ScalingFigure[] {
  return [chainClip(1000, BIG_RIG_SAMPLES), bodyFaceFingersClip(BIG_RIG_SAMPLES)].map((clip) => {
    // One clip against the corpus's 174: its first compression also pays for the optimiser
    // adapting to a new shape (the 300-bone rig's first took 1.5–3 × the next), so the median.
    const runs = Array.from({ length: SCALING_RUNS }, () => timed(() => compress(clip, options)));
    const { result } = runs[0];
    const seconds = median(runs.map((r) => r.seconds));
    const cpuSeconds = median(runs.map((r) => r.cpuSeconds));
    const boneCount = clip.skeleton.parents.length;
    onClip(clip);
    return {
      name: clip.name,
      boneCount,
      sampleCount: clip.sampleCount,
      seconds,
      cpuSeconds,
      secondsPerMillion: seconds / ((boneCount * clip.sampleCount) / 1e6),
      cpuSecondsPerMillion: cpuSeconds / ((boneCount * clip.sampleCount) / 1e6),
      ratio: result.stats.ratio,
      maxError: result.stats.maxError,
      withinThreshold: result.stats.maxError <= result.stats.threshold,
    };
  });
}

function timed<T>(run: () => T): { result: T; seconds: number; cpuSeconds: number } {
  const cpu = process.cpuUsage();
  const started = performance.now();
  const result = run();
  const used = process.cpuUsage(cpu);
  return { result, seconds: (performance.now() - started) / 1000, cpuSeconds: (used.user + used.system) / 1e6 };
}

/**
 * Reads an {@link AclMeasurement} from a JSON file. Throws {@link BenchError} `BAD_ACL`
 * naming the file and the field when it is not one.
 */
export async function readAclMeasurement(path: string): Promise<AclMeasurement> {
  let data: unknown;
  try {
    data = JSON.parse(await readFile(path, 'utf8'));
  } catch (error) {
    throw new BenchError(BENCH_ERROR.BAD_ACL, `${path}: ${(error as Error).message}`);
  }
  const record = (data ?? {}) as Record<string, unknown>;
  if (typeof data !== 'object' || data === null || Array.isArray(data))
    throw new BenchError(BENCH_ERROR.BAD_ACL, `${path}: expected a JSON object`);
  if (typeof record.label !== 'string' || record.label === '')
    throw new BenchError(BENCH_ERROR.BAD_ACL, `${path}: "label" must be a non-empty string`);
  const positive = (field: string, optional = false): number | undefined => {
    const value = record[field];
    if (optional && value === undefined) return undefined;
    if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0)
      throw new BenchError(BENCH_ERROR.BAD_ACL, `${path}: "${field}" must be a number > 0`);
    return value;
  };
  const measurement: AclMeasurement = {
    label: record.label,
    clips: positive('clips')!,
    compressSeconds: positive('compressSeconds')!,
    processSeconds: positive('processSeconds')!,
    rawBytes: positive('rawBytes')!,
  };
  const cpu = positive('processCpuSeconds', true);
  if (cpu !== undefined) measurement.processCpuSeconds = cpu;
  return measurement;
}
