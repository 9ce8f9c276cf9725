/**
 * Compression settings: what users set, the defaults (shared with the CLI help so the two
 * never drift apart), and their resolution into clip units.
 */
import { BonepressError } from '../shared/errors.js';
import type { RawClip } from '../clip/raw-clip.js';
import { resolveShellDistances } from '../clip/skeleton.js';
import { UnitError, convertLength, parseLength, type Length } from '../clip/units.js';
import { ERROR_METRICS, isErrorMetric, type ErrorMetric } from '../metric/error-metric.js';

/** A length as an object or a string such as `"0.01cm"`. */
export type LengthInput = Length | string;

/** Options of `compress()`. */
export interface CompressOptions {
  /** Largest allowed error, measured with `metric`. Default {@link COMPRESS_DEFAULTS}.error (0.01 cm). */
  error?: LengthInput;
  /**
   * What the error bounds, at the samples and between them: `vertices` (default), the three
   * virtual vertices at the shell distance on each bone's axes; `shell`, every point of the
   * sphere of that radius around each bone (a little larger files).
   */
  metric?: ErrorMetric;
  /** Virtual-vertex distance for every bone. Default 3 cm. */
  shell?: LengthInput;
  /** Per-bone shell distance by bone name, e.g. `{ Root: '1m' }`. */
  shellBones?: Readonly<Record<string, LengthInput>>;
  /** Leave out the names section (bone and clip names). Default false. */
  stripNames?: boolean;
  /** Write a CRC-32 of the file. Default true. */
  checksum?: boolean;
  /**
   * How hard the bit-rate search works (every level holds the same error bound): `fast`
   * searches fewer steps for slightly larger files, `default` is the balance, `best` runs two
   * finer searches per segment from default's result and keeps the smallest. Default `default`.
   */
  effort?: Effort;
  /**
   * Store an additive clip: deltas against a reference pose, played over a base pose (see
   * {@link AdditiveOptions}). Default: absolute poses.
   */
  additive?: AdditiveOptions;
}

/** A pose of a clip: `clip` at `time` seconds on its timeline (default its start time; held outside its keys). */
export interface ClipPose {
  /** A clip of the same skeleton. */
  readonly clip: RawClip;
  /** Seconds on `clip`'s timeline. Default: its start time. */
  readonly time?: number;
}

/**
 * An additive clip (`CompressOptions.additive`): the compressor stores each pose as a delta
 * against `reference` (three.js's `makeClipAdditive` convention: rotation conj(ref) · q,
 * translation t − ref, scale s − ref, the scale stored plus one) and bounds the error of the
 * delta applied to `base` (rotation base · delta, translation and scale base + delta) against
 * the source's own delta applied to it, at any playback time.
 */
export interface AdditiveOptions {
  /**
   * What the deltas are taken against: a frame (sample index) of the clip itself (default 0,
   * as three.js's `makeClipAdditive`), or a pose of another clip of the same skeleton.
   */
  readonly reference?: number | ClipPose;
  /**
   * What the error is measured over: a pose of a clip of the same skeleton, or a whole clip
   * played alongside (both from time 0, the base looping over its duration, as two mixer
   * actions started together). Default: the reference pose, so that reference ∘ delta
   * stays within the threshold of the source itself.
   */
  readonly base?: ClipPose | RawClip;
}

/** Search effort levels of {@link CompressOptions.effort}, fastest first. */
export const EFFORTS = ['fast', 'default', 'best'] as const;
/** One of {@link EFFORTS}. */
export type Effort = (typeof EFFORTS)[number];

/** True when `s` names an {@link Effort}. */
export function isEffort(s: unknown): s is Effort {
  return typeof s === 'string' && (EFFORTS as readonly string[]).includes(s);
}

/** Defaults of {@link CompressOptions}. */
export const COMPRESS_DEFAULTS = {
  error: '0.01cm',
  shell: '3cm',
  metric: 'vertices',
  stripNames: false,
  checksum: true,
  effort: 'default',
} as const;

/**
 * The bit-rate search aims at threshold × (1 − THRESHOLD_MARGIN). The compressor measures
 * against the source as read (float32 values), so an independent float64 measurement
 * against the source file's own numbers (src/bench/float64-check.ts) also sees the float32
 * rounding of the inputs: up to 1.00068 × the threshold on bandai-ds1 without the margin.
 * The smallest margin that keeps every clip of that corpus within 0.01 cm in float64 is
 * measured in docs/design.md, with its ratio cost.
 */
export const THRESHOLD_MARGIN = 0.001;

/** Bad compression options (an unknown bone, a malformed length). */
export class OptionsError extends BonepressError {
  override readonly name = 'OptionsError';
  declare readonly code: 'BAD_OPTION';
  constructor(message: string) {
    super('BAD_OPTION', message);
  }
}

/** Options resolved against one clip: numbers in the clip's unit. */
export interface ResolvedOptions {
  /** Error threshold in clip units. */
  threshold: number;
  /** Shell distance per bone in clip units. */
  shellDistances: Float32Array;
  metric: ErrorMetric;
  stripNames: boolean;
  checksum: boolean;
  effort: Effort;
}

function toLength(input: LengthInput, what: string): Length {
  if (typeof input !== 'string') return input;
  try {
    return parseLength(input);
  } catch (e) {
    throw new OptionsError(`${what}: ${(e as Error).message}`);
  }
}

/** Resolves `options` for `clip`. Throws {@link OptionsError}. */
export function resolveOptions(clip: RawClip, options: CompressOptions = {}): ResolvedOptions {
  const error = toLength(options.error ?? COMPRESS_DEFAULTS.error, 'error');
  const shell = toLength(options.shell ?? COMPRESS_DEFAULTS.shell, 'shell');
  const overrides: Record<string, Length> = {};
  for (const [name, len] of Object.entries(options.shellBones ?? {}))
    overrides[name] = toLength(len, `shell of bone ${name}`);
  let shellDistances: Float32Array;
  try {
    shellDistances =
      options.shell === undefined && options.shellBones === undefined
        ? clip.skeleton.shellDistances
        : resolveShellDistances(clip.skeleton, clip.unit, shell, overrides);
  } catch (e) {
    if (e instanceof UnitError) throw new OptionsError(e.message);
    throw new OptionsError((e as Error).message);
  }
  const metric = options.metric ?? COMPRESS_DEFAULTS.metric;
  if (!isErrorMetric(metric))
    throw new OptionsError(`metric: expected ${ERROR_METRICS.join(' or ')}, got ${JSON.stringify(metric)}`);
  const effort = options.effort ?? COMPRESS_DEFAULTS.effort;
  if (!isEffort(effort))
    throw new OptionsError(`effort: expected ${EFFORTS.join(', ')}, got ${JSON.stringify(effort)}`);
  const threshold = convertLength(error, clip.unit);
  if (!(threshold > 0)) throw new OptionsError(`error threshold must be > 0, got ${threshold}`);
  return {
    threshold,
    shellDistances,
    metric,
    stripNames: options.stripNames ?? COMPRESS_DEFAULTS.stripNames,
    checksum: options.checksum ?? COMPRESS_DEFAULTS.checksum,
    effort,
  };
}
