/**
 * compress(): a clip in, `.bpk` bytes and stats out. Reads as the list of pipeline stages;
 * each stage lives in its own module.
 */
import { rawSizeBytes, validateRawClip, type RawClip } from '../clip/raw-clip.js';
import { POSE_STRIDE } from '../runtime/pose.js';
import { TRACKS_PER_BONE, TRACK_KIND } from '../runtime/format.js';
import { writeRotation } from '../runtime/interpolate.js';
import { CompressedClip } from '../runtime/compressed-clip.js';
import { sectionSizes } from '../runtime/clip-inspection.js';
import { preprocessRotations, type RotationReference } from './preprocess.js';
import { TRACK_CLASS, classifyTracks, type TrackClasses } from './classify.js';
import { extractClipRanges, extractSegmentRanges, gatherAnimatedTracks } from './range.js';
import { segmentClip } from './segment.js';
import { BIT_RATE_LADDERS, searchBitRates, type BitRateLadder, type SearchStrategy } from './bitrate.js';
import type { ErrorMetric, ErrorReport } from '../metric/error-metric.js';
import { writeClip } from './write.js';
import { measureCompressed, sharedSampleObjects } from './verify.js';
import { THRESHOLD_MARGIN, resolveOptions, type CompressOptions } from './options.js';
import { chooseSampleGrid, roundingTerm, samplesFloor, type BetweenReport } from './between.js';
import { PLAYER_SLERPS } from '../clip/keyframes.js';
import { measureAdditiveBetween, measureAdditiveSamples, prepareAdditive } from './additive.js';
import type { AdditiveInfo } from '../runtime/clip-reader.js';

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
  /** What `threshold` bounds and the errors below measure, but {@link shellMaxError}. */
  metric: ErrorMetric;
  /** Largest error at any playback time: the larger of {@link sampleMaxError} and {@link betweenMaxError}. */
  maxError: number;
  /**
   * Largest whole-shell error (every point of each bone's shell sphere, `shell` metric) at
   * any playback time, at the samples and between them, whatever {@link metric}. With the
   * `vertices` metric, between samples a bound from the checks {@link betweenMaxError} took,
   * which may stand a little above the largest error (`bonepress verify` resolves it).
   */
  shellMaxError: number;
  /** Largest error at the stored samples. */
  sampleMaxError: number;
  /**
   * Bound on the error at any time between samples, against what the source means there: its
   * own interpolation of its keys, or slerp/lerp between its samples (docs/format.md, "The
   * error at any time"). Checked until it is known within the threshold: below it, the bound
   * may stand above the largest error, never above {@link sampleMaxError} where it does by more
   * than a little (`bonepress verify` resolves it fully).
   */
  betweenMaxError: number;
  /**
   * How many times finer than the source's key rate the clip was sampled so that its
   * interpolation follows the source between keys (1: the source's own grid).
   */
  upsampling: number;
  /** Samples per second of the compressed clip. */
  sampleRate: number;
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
  /**
   * Set for an additive clip (the `additive` option): its record. The errors are then those
   * of the delta applied to the base.
   */
  additive?: AdditiveInfo;
}

/** What compress() returns. */
export interface CompressResult {
  bytes: Uint8Array;
  stats: CompressStats;
  /** The error of the written bytes at the samples, decoded by the runtime decoder. */
  report: ErrorReport;
  /** The error of the written bytes between samples, decoded by the runtime decoder. */
  between: BetweenReport;
}

/** Share of the threshold the sample grid alone may spend between samples (the rest is left to quantisation). */
const GRID_BUDGET = 0.5;
/** Searches at most this many times, each with a tighter target, when the error between samples is over the threshold. */
const MAX_SEARCHES = 8;

/** Knobs for experiments and the bench; not part of the stable options. */
export interface ExperimentalOptions {
  /** Default 'acl20'. */
  ladder?: BitRateLadder;
  /** Default 'mean'. */
  rotationReference?: RotationReference;
  /** Pass 2 strategy; default: the effort's. */
  search?: SearchStrategy;
}

/**
 * Compresses `clip` so that no virtual vertex (with `metric: 'shell'`, no point of the
 * shell sphere) moves more than `options.error`, at the samples and between them, measured
 * by decoding the written bytes with the runtime decoder (`report`, `between`). Throws `OptionsError`
 * on bad options and `ClipError` on an invalid clip.
 */
export function compress(clip: RawClip, options: CompressOptions & ExperimentalOptions = {}): CompressResult {
  const started = performance.now();
  validateRawClip(clip);
  const settings = resolveOptions(clip, options);

  const grid = chooseSampleGrid(clip, GRID_BUDGET * settings.threshold, settings.shellDistances, settings.metric);
  // An additive clip stores deltas and is measured applied to its base (additive.ts).
  const additive = options.additive ? prepareAdditive(clip, grid.clip, options.additive) : undefined;
  const source = additive ? additive.delta : grid.clip;
  const measured = additive ? additive.applied : source;
  const rotations = preprocessRotations(source);
  const classes = classifyTracks(source, rotations, settings.threshold, settings.shellDistances, measured);
  const layout = segmentClip(source.sampleCount);
  const tracks = gatherAnimatedTracks(source, rotations, classes.animated, options.rotationReference ?? 'mean', layout);
  const clipRanges = extractClipRanges(tracks, layout);
  const ranges = extractSegmentRanges(tracks, clipRanges, layout);
  const basePose = basePoseOf(source, classes);

  // The search holds the threshold at the samples; between samples the error can come out
  // a little larger (the source's slerp against the decoder's nlerp of quantised keys), so
  // the search runs again with a tighter target until the error at any time is within.
  // At the samples the error is measured against the players' evaluation of the source's
  // keys, which the samples themselves miss by a floor (keys stored off unit length): the
  // search aims that much lower, so one search usually suffices.
  // Between the checks the decoder's float32 rounding moves the error by up to the rounding
  // term, which the checks do not see: the search and the figure checked leave room for it.
  const floor = additive ? 0 : samplesFloor(source, settings.shellDistances, settings.metric, PLAYER_SLERPS);
  const measuredObject = sharedSampleObjects(measured);
  const rounding = roundingTerm(measured, settings.shellDistances, measuredObject);
  const budget = Math.max(0, settings.threshold - rounding);
  let target = settings.threshold * (1 - THRESHOLD_MARGIN) - floor - rounding; // float64 headroom (options.ts)
  let searchTrials = 0;
  let bytes: Uint8Array,
    search: ReturnType<typeof searchBitRates>,
    compressed: CompressedClip,
    report: ErrorReport,
    between: BetweenReport;
  for (let attempt = 1; ; attempt++) {
    search = searchBitRates({
      clip: measured,
      additiveBase: additive?.basePoses,
      tracks,
      clipRanges,
      ranges,
      layout,
      basePose,
      threshold: target,
      shellDistances: settings.shellDistances,
      metric: settings.metric,
      ladder: BIT_RATE_LADDERS[options.ladder ?? 'acl20'],
      strategy: options.search,
      effort: settings.effort,
      clipObject: measuredObject,
    });
    searchTrials += search.trials;
    bytes = writeClip({
      clip: source,
      classes,
      tracks,
      clipRanges,
      ranges,
      layout,
      rates: search.rates,
      includeNames: !settings.stripNames,
      checksum: settings.checksum,
      additive: additive?.info,
    });
    // Verification reads every key in order: two cached segments are enough.
    compressed = CompressedClip.open(bytes);
    if (additive) {
      report = measureAdditiveSamples(additive, compressed, settings.shellDistances, settings.metric);
      between = measureAdditiveBetween(additive, compressed, settings.shellDistances, settings.metric, budget);
    } else {
      ({ report, between } = measureCompressed(
        source,
        compressed,
        settings.shellDistances,
        settings.metric,
        measuredObject,
        budget,
      ));
    }
    // A target at or below 0 already kept every track at its finest: no search can do better.
    if (between.maxError <= budget || attempt === MAX_SEARCHES || between.maxError <= grid.gridError || target <= 0)
      break;
    // Aim below the budget by the overshoot, at least 5 % lower each time.
    target *= Math.min(0.95, budget / between.maxError);
  }
  // The raw size counts the source's own grid, not a finer one chosen for fidelity.
  const rawBytes = rawSizeBytes(clip.skeleton.parents.length, clip.sampleCount);
  return {
    bytes,
    report,
    between,
    stats: {
      name: clip.name,
      boneCount: clip.skeleton.parents.length,
      sampleCount: clip.sampleCount,
      rawBytes,
      compressedBytes: bytes.length,
      ratio: rawBytes / bytes.length,
      namesBytes: sectionSizes(compressed).names,
      threshold: settings.threshold,
      unit: clip.unit,
      metric: settings.metric,
      maxError: Math.max(report.maxError, between.maxError),
      shellMaxError: Math.max(report.shellMaxError, between.shellMaxError),
      sampleMaxError: report.maxError,
      betweenMaxError: between.maxError,
      upsampling: grid.factor,
      sampleRate: source.sampleRate,
      p99Error: report.p99Error,
      meanError: report.meanError,
      worstBone: report.worstBoneName,
      worstSample: report.worstSample,
      tracks: { ...classes.counts },
      bitRateHistogram: rateHistogram(search.rates),
      searchTrials,
      seconds: (performance.now() - started) / 1000,
      ...(additive ? { additive: additive.info } : {}),
    },
  };
}

/** How many (segment, track) pairs use each bit rate. */
function rateHistogram(rates: Uint8Array): Record<number, number> {
  const histogram: Record<number, number> = {};
  for (let i = 0; i < rates.length; i++) histogram[rates[i]] = (histogram[rates[i]] ?? 0) + 1;
  return histogram;
}

/** The local pose of default and constant tracks as the decoder rebuilds it (animated slots: identity). */
function basePoseOf(clip: RawClip, classes: TrackClasses): Float32Array {
  const boneCount = clip.skeleton.parents.length;
  const pose = new Float32Array(boneCount * POSE_STRIDE);
  for (let b = 0; b < boneCount; b++) {
    const o = b * POSE_STRIDE;
    pose[o + 3] = 1;
    pose[o + 7] = 1;
    pose[o + 8] = 1;
    pose[o + 9] = 1;
    for (let kind = 0; kind < TRACKS_PER_BONE; kind++) {
      const t = b * TRACKS_PER_BONE + kind;
      if (classes.classes[t] !== TRACK_CLASS.CONSTANT) continue;
      const v = classes.constants;
      if (kind === TRACK_KIND.ROTATION) {
        writeRotation(
          Math.fround(v[t * 4]),
          Math.fround(v[t * 4 + 1]),
          Math.fround(v[t * 4 + 2]),
          Math.fround(v[t * 4 + 3]),
          pose,
          o,
        );
      } else {
        const at = o + (kind === TRACK_KIND.TRANSLATION ? 4 : 7);
        pose[at] = v[t * 4];
        pose[at + 1] = v[t * 4 + 1];
        pose[at + 2] = v[t * 4 + 2];
      }
    }
  }
  return pose;
}
