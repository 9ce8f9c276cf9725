/**
 * compress(): a clip in, `.bpk` bytes and stats out. Reads as the list of pipeline stages
 * (DESIGN §3); each stage lives in its own module.
 */
import { rawSizeBytes, validateRawClip, type RawClip } from '../clip/raw-clip.js';
import { POSE_STRIDE } from '../runtime/pose.js';
import { TRACKS_PER_BONE, TRACK_KIND } from '../runtime/format.js';
import { writeRotation } from '../runtime/interpolate.js';
import { CompressedClip } from '../runtime/compressed-clip.js';
import { preprocessRotations, type RotationReference } from './preprocess.js';
import { TRACK_CLASS, classifyTracks, type TrackClasses } from './classify.js';
import { extractClipRanges, extractSegmentRanges, gatherAnimatedTracks } from './range.js';
import { segmentClip } from './segment.js';
import { BIT_RATE_LADDERS, searchBitRates, type BitRateLadder, type SearchStrategy } from './bitrate.js';
import type { ErrorReport } from './error-metric.js';
import { writeClip } from './write.js';
import { verifyCompressed } from './verify.js';
import { resolveOptions, type CompressOptions } from './options.js';

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
  /** Error trials the bit-rate search ran. */
  searchTrials: number;
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

/** Knobs for experiments and the bench; not part of the stable options. */
export interface ExperimentalOptions {
  /** Default 'acl20'. */
  ladder?: BitRateLadder;
  /** Default 'mean'. */
  rotationReference?: RotationReference;
  /** Default 'round-robin'. */
  search?: SearchStrategy;
}

/**
 * Compresses `clip` so that no virtual vertex moves more than `options.error`, measured by
 * decoding the written bytes with the runtime decoder (`report`). Throws `OptionsError`
 * on bad options and `ClipError` on an invalid clip.
 */
export function compress(clip: RawClip, options: CompressOptions & ExperimentalOptions = {}): CompressResult {
  const started = performance.now();
  validateRawClip(clip);
  const settings = resolveOptions(clip, options);

  const rotations = preprocessRotations(clip);
  const classes = classifyTracks(clip, rotations, settings.threshold, settings.shellDistances);
  const layout = segmentClip(clip.sampleCount);
  const tracks = gatherAnimatedTracks(clip, rotations, classes.animated, options.rotationReference ?? 'mean', layout);
  const clipRanges = extractClipRanges(tracks, layout);
  const ranges = extractSegmentRanges(tracks, clipRanges, layout);
  const search = searchBitRates({
    clip, tracks, clipRanges, ranges, layout,
    basePose: basePoseOf(clip, classes),
    threshold: settings.threshold,
    shellDistances: settings.shellDistances,
    ladder: BIT_RATE_LADDERS[options.ladder ?? 'acl20'],
    strategy: options.search ?? 'round-robin',
  });
  const bytes = writeClip({
    clip, classes, tracks, clipRanges, ranges, layout,
    rates: search.rates,
    includeNames: !settings.stripNames,
    checksum: settings.checksum,
  });

  // Verification reads every key in order: two cached segments are enough.
  const compressed = CompressedClip.open(bytes, { segmentCache: 'two' });
  const report = verifyCompressed(clip, compressed, settings.shellDistances);
  const histogram: Record<number, number> = {};
  for (const bits of search.rates) histogram[bits] = (histogram[bits] ?? 0) + 1;
  const rawBytes = rawSizeBytes(clip.skeleton.parents.length, clip.sampleCount);
  return {
    bytes,
    report,
    stats: {
      name: clip.name,
      boneCount: clip.skeleton.parents.length,
      sampleCount: clip.sampleCount,
      rawBytes,
      compressedBytes: bytes.length,
      ratio: rawBytes / bytes.length,
      namesBytes: compressed.sectionSizes().names,
      threshold: settings.threshold,
      unit: clip.unit,
      maxError: report.maxError,
      p99Error: report.p99Error,
      meanError: report.meanError,
      worstBone: report.worstBoneName,
      worstSample: report.worstSample,
      tracks: { ...classes.counts },
      bitRateHistogram: histogram,
      searchTrials: search.trials,
      seconds: (performance.now() - started) / 1000,
    },
  };
}

/** The local pose of default and constant tracks as the decoder rebuilds it (animated slots: identity). */
function basePoseOf(clip: RawClip, classes: TrackClasses): Float32Array {
  const boneCount = clip.skeleton.parents.length;
  const pose = new Float32Array(boneCount * POSE_STRIDE);
  for (let b = 0; b < boneCount; b++) {
    const o = b * POSE_STRIDE;
    pose[o + 3] = 1; pose[o + 7] = 1; pose[o + 8] = 1; pose[o + 9] = 1;
    for (let kind = 0; kind < TRACKS_PER_BONE; kind++) {
      const t = b * TRACKS_PER_BONE + kind;
      if (classes.classes[t] !== TRACK_CLASS.CONSTANT) continue;
      const v = classes.constants;
      if (kind === TRACK_KIND.ROTATION) {
        writeRotation(Math.fround(v[t * 4]), Math.fround(v[t * 4 + 1]), Math.fround(v[t * 4 + 2]), Math.fround(v[t * 4 + 3]), pose, o);
      } else {
        const at = o + (kind === TRACK_KIND.TRANSLATION ? 4 : 7);
        pose[at] = v[t * 4]; pose[at + 1] = v[t * 4 + 1]; pose[at + 2] = v[t * 4 + 2];
      }
    }
  }
  return pose;
}
