import type { LengthUnit } from '../clip/units.js';
import { MAX_BONES, MAX_BONE_SAMPLES } from '../runtime/format.js';
import { ParseError, PARSE_ERROR } from './errors.js';

/** Options shared by the readers. */
export interface ReadOptions {
  /** Length unit of the source's translations; default per format (BVH: cm, glTF: m, SJSON: as declared or m). */
  unit?: LengthUnit;
  /** Resample keyframed sources (glTF) to this many samples per second; default: detected from the key times. */
  sampleRate?: number;
  /**
   * Called with each warning, in order. Readers that can skip data report what they skipped
   * here, one line each, instead of dropping it silently; the glTF reader does (channels on
   * nodes outside the skeleton, morph-weight and KHR_animation_pointer channels, keys moved
   * onto the sample grid, renamed bones). Readers that skip nothing never call it.
   */
  onWarning?: (message: string) => void;
  /**
   * Most samples (frames) one clip may have; a longer clip is refused with code `LIMIT`
   * before its tracks are allocated. Default {@link READ_LIMITS}.maxSamples.
   */
  maxSamples?: number;
  /**
   * Most bytes one clip's tracks may take once read, counted as the raw size (40 bytes per
   * bone per sample, as the summary table counts it); a larger clip is refused with code
   * `LIMIT` before its tracks are allocated. Default {@link READ_LIMITS}.maxBytes.
   */
  maxBytes?: number;
}

/**
 * Default caps on what one clip may ask a reader to allocate. Every reader checks them
 * against the counts a file declares (bones, frames, keys × rate) before it builds anything
 * sized by them, so a small file cannot ask for gigabytes.
 */
export const READ_LIMITS = {
  /** Bones per clip: the `.bpk` format's limit (i16 parent indices), MAX_BONES in runtime/format.ts. */
  maxBones: MAX_BONES,
  /** Samples per clip: 2^24, over six days at 30 Hz. */
  maxSamples: 2 ** 24,
  /** Raw bytes per clip (40 per bone sample): 512 MiB, e.g. 100 bones × 134,000 samples. */
  maxBytes: 512 * 2 ** 20,
  /**
   * Bone samples (bones × samples) per clip, whatever `maxSamples` and `maxBytes` allow:
   * the most a `.bpk` clip holds, MAX_BONE_SAMPLES in runtime/format.ts (2^26).
   */
  maxBoneSamples: MAX_BONE_SAMPLES,
} as const;

/** Raw bytes per bone sample (10 float32), as `rawSizeBytes` in clip/raw-clip.ts counts them. */
const BYTES_PER_BONE_SAMPLE = 40;

/**
 * Throws a `LIMIT` {@link ParseError} at `file:line` (`line` 0: no line) when a source
 * declares more than {@link READ_LIMITS}.maxBones bones. Readers call it while they count
 * bones, before building per-bone structures.
 */
export function checkBoneCount(file: string, line: number, boneCount: number, column = 0): void {
  // Written as "within the limit" and negated, so a NaN count fails too.
  if (!(boneCount <= READ_LIMITS.maxBones)) {
    throw new ParseError(
      PARSE_ERROR.LIMIT,
      `more than ${READ_LIMITS.maxBones} bones (a .bpk clip holds at most ${READ_LIMITS.maxBones})`,
      file,
      line,
      column,
    );
  }
}

/**
 * Throws a `LIMIT` {@link ParseError} at `file:line` when a clip of `boneCount` bones and
 * `sampleCount` samples is over `options.maxSamples` or `options.maxBytes` (defaults
 * {@link READ_LIMITS}). `what` starts the message (e.g. `Frames: 90000`). NaN counts fail.
 */
export function checkClipSize(
  file: string,
  line: number,
  what: string,
  boneCount: number,
  sampleCount: number,
  options: ReadOptions,
  column = 0,
): void {
  const maxSamples = options.maxSamples ?? READ_LIMITS.maxSamples;
  const maxBytes = options.maxBytes ?? READ_LIMITS.maxBytes;
  // Written as "within the limit" and negated, so NaN counts fail too.
  if (!(sampleCount <= maxSamples)) {
    throw new ParseError(
      PARSE_ERROR.LIMIT,
      `${what}: ${sampleCount} samples is over the limit of ${maxSamples} (maxSamples)`,
      file,
      line,
      column,
    );
  }
  const bytes = BYTES_PER_BONE_SAMPLE * boneCount * sampleCount;
  if (!(bytes <= maxBytes)) {
    throw new ParseError(
      PARSE_ERROR.LIMIT,
      `${what}: ${boneCount} bones × ${sampleCount} samples need ${formatBytes(bytes)} of tracks, over the limit of ${formatBytes(maxBytes)} (maxBytes)`,
      file,
      line,
      column,
    );
  }
}

/**
 * The problem when a clip of `boneCount` bones and `sampleCount` samples is over
 * {@link READ_LIMITS}.maxBoneSamples (NaN counts are over it too), else undefined. Every
 * reader checks it where it learns the counts, before anything sized by them is built, and
 * raises it as a `LIMIT` {@link ParseError} at that place.
 */
export function boneSamplesProblem(boneCount: number, sampleCount: number): string | undefined {
  // Written as "within the limit" and negated, so NaN counts fail too.
  if (boneCount * sampleCount <= READ_LIMITS.maxBoneSamples) return undefined;
  return `${boneCount} bones × ${sampleCount} samples is over the reader's limit of ${READ_LIMITS.maxBoneSamples} bone samples`;
}

/** `1.5 GiB`, `300 MiB`, `512 bytes`. */
export function formatBytes(bytes: number): string {
  if (bytes >= 2 ** 30) return `${+(bytes / 2 ** 30).toFixed(1)} GiB`;
  if (bytes >= 2 ** 20) return `${+(bytes / 2 ** 20).toFixed(1)} MiB`;
  if (bytes >= 2 ** 10) return `${+(bytes / 2 ** 10).toFixed(1)} KiB`;
  return `${bytes} bytes`;
}
