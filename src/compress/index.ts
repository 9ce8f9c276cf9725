/**
 * compress(): a clip in, `.bpk` bytes and stats out. Reads as the list of pipeline stages.
 */
import type { RawClip } from '../clip/raw-clip.js';
import type { ErrorReport } from './error-metric.js';
import type { CompressOptions } from './options.js';

/** Per-clip figures of one compression. Sizes in bytes, errors in `unit`. */
export interface CompressStats {
  name: string;
  boneCount: number;
  sampleCount: number;
  /** 40 · bones · samples, the raw size ACL uses for ratios. */
  rawBytes: number;
  compressedBytes: number;
  /** rawBytes / compressedBytes. */
  ratio: number;
  /** Bytes of the optional names section (0 with stripNames). */
  namesBytes: number;
  /** Error threshold in `unit`. */
  threshold: number;
  unit: string;
  maxError: number;
  p99Error: number;
  meanError: number;
  worstBone: string;
  worstSample: number;
  /** Track counts per class. */
  tracks: { default: number; constant: number; animated: number };
  /** How many (segment, animated track) pairs use each bit rate; key = bits (32 = raw). */
  bitRateHistogram: Record<number, number>;
  /** Wall time of compress() in seconds, measurement included. */
  seconds: number;
}

/** What compress() returns. */
export interface CompressResult {
  bytes: Uint8Array;
  stats: CompressStats;
  /** The error of the written bytes, decoded by the runtime decoder. */
  report: ErrorReport;
}

/**
 * Compresses `clip` so that no virtual vertex moves more than `options.error`, measured by
 * decoding the written bytes with the runtime decoder. Throws `OptionsError` on bad
 * options and `ClipError` on an invalid clip.
 */
export function compress(clip: RawClip, options: CompressOptions = {}): CompressResult {
  void clip; void options;
  throw new Error('compress: being written');
}
