/**
 * Comparing a clip with its raw source, as `bonepress verify` does: the shapes first (bones
 * by position, names where both sides have them, hierarchy, sample count and rate), then the
 * object-space error with the compressor's own metric and options. A compressed clip is
 * decoded sample by sample, only once its shape matches.
 */
import type { RawClip } from '../clip/raw-clip.js';
import { convertLength, type LengthUnit } from '../clip/units.js';
import { MetricError, measureClipError, type ErrorReport } from '../metric/error-metric.js';
import { resolveOptions, type CompressOptions } from '../compress/options.js';
import { resampleFromKeys, sampleFromKeysAt } from '../compress/between.js';
import { measureCompressedBetween, verifyCompressed } from '../compress/verify.js';
import {
  additiveOptionsFor,
  measureAdditiveBetween,
  measureAdditiveSamples,
  prepareAdditive,
} from '../compress/additive.js';
import type { CompressedClip } from '../runtime/index.js';

/**
 * Name of bone `boneIndex` in a clip whose names were stripped (`--strip-names`), as
 * `decompressClip` names it. Such a name matches any name in {@link checkSameShape}.
 */
export function anonymousBoneName(boneIndex: number): string {
  return `bone_${boneIndex}`;
}

/** What {@link checkSameShape} compares: bones, hierarchy and sampling. */
export interface ClipShape {
  readonly boneNames: readonly string[];
  readonly parents: ArrayLike<number>;
  readonly sampleCount: number;
  /** Hz. */
  readonly sampleRate: number;
}

/** The shape of a raw clip. */
export function shapeOfClip(clip: RawClip): ClipShape {
  return {
    boneNames: clip.skeleton.boneNames,
    parents: clip.skeleton.parents,
    sampleCount: clip.sampleCount,
    sampleRate: clip.sampleRate,
  };
}

/** The shape of a compressed clip, read from its header and tables (nothing is decoded). */
export function shapeOfCompressed(clip: CompressedClip): ClipShape {
  const names = clip.boneNames ?? Array.from({ length: clip.boneCount }, (_, b) => anonymousBoneName(b));
  return { boneNames: names, parents: clip.parents, sampleCount: clip.sampleCount, sampleRate: clip.sampleRate };
}

/** Relative difference under which two sample rates are the same rate. */
const RATE_TOLERANCE = 1e-6;

/**
 * Throws {@link MetricError} naming the first difference that makes `other` impossible to
 * measure against `raw`: bone count, a bone name (bones are matched by position; a
 * `bone_<i>` name on either side matches any name), a parent, the sample count or the
 * sample rate. `rawLabel` names the raw clip in messages (its file).
 */
export function checkSameShape(raw: ClipShape, other: ClipShape, rawLabel: string): void {
  const rawNames = raw.boneNames,
    otherNames = other.boneNames;
  if (rawNames.length !== otherNames.length) {
    throw new MetricError(`${otherNames.length} bones, but ${rawLabel} has ${rawNames.length}`);
  }
  for (let b = 0; b < rawNames.length; b++) {
    const a = rawNames[b],
      o = otherNames[b];
    if (a !== o && a !== anonymousBoneName(b) && o !== anonymousBoneName(b)) {
      throw new MetricError(`bone ${b} is "${o}" here but "${a}" in ${rawLabel} (bones are matched by position)`);
    }
  }
  for (let b = 0; b < rawNames.length; b++) {
    if (raw.parents[b] !== other.parents[b]) {
      throw new MetricError(
        `bone ${b} (${otherNames[b]}) has parent ${other.parents[b]} here but ${raw.parents[b]} in ${rawLabel}`,
      );
    }
  }
  if (other.sampleCount !== raw.sampleCount) {
    throw new MetricError(
      `${other.sampleCount} samples at ${other.sampleRate} Hz, but ${rawLabel} has ${raw.sampleCount} at ${raw.sampleRate} Hz`,
    );
  }
  if (Math.abs(other.sampleRate - raw.sampleRate) > RATE_TOLERANCE * raw.sampleRate) {
    throw new MetricError(`sample rate ${other.sampleRate} Hz, but ${rawLabel} has ${raw.sampleRate} Hz`);
  }
}

/** The outcome of a comparison. Errors and the threshold are in `unit`, the raw clip's. */
export interface Comparison extends ErrorReport {
  /**
   * For a compressed clip: the largest error at the samples and between them (at ¼, ½ and
   * ¾ of every interval, against the source's own interpolation); `maxError` is the larger.
   */
  readonly sampleMaxError?: number;
  readonly betweenMaxError?: number;
  readonly threshold: number;
  /** maxError ≤ threshold. */
  readonly pass: boolean;
  /** For an additive compressed clip: measured applied to its base (`options.additive.base`, else the reference pose). */
  readonly additive?: boolean;
}

/** `clip` with translations converted into `unit` (the same clip when already in it). */
export function clipInUnit(clip: RawClip, unit: LengthUnit): RawClip {
  if (clip.unit === unit) return clip;
  const k = convertLength({ value: 1, unit: clip.unit }, unit);
  return { ...clip, unit, translations: clip.translations.map((v) => v * k) };
}

/**
 * Measures `other` against `raw` with the compressor's metric: `options.error`,
 * `options.shell`, `options.shellBones` and `options.metric` as `compress` takes them
 * (defaults `COMPRESS_DEFAULTS`; the whole-shell error is reported whatever the metric);
 * translations of `other` are converted into the raw clip's unit.
 * Throws {@link MetricError} when the shapes differ ({@link checkSameShape}) and
 * `OptionsError` for bad options (an unknown bone in `shellBones`).
 */
export function compareClips(
  raw: RawClip,
  other: RawClip,
  options: CompressOptions = {},
  rawLabel = raw.name,
): Comparison {
  checkSameShape(shapeOfClip(raw), shapeOfClip(other), rawLabel);
  const { threshold, shellDistances, metric } = resolveOptions(raw, options);
  const report = measureClipError(raw, clipInUnit(other, raw.unit), shellDistances, undefined, metric);
  return { ...report, threshold, pass: report.maxError <= threshold };
}

/**
 * Measures the compressed clip `other` against `raw` like {@link compareClips}: the shapes
 * are compared first, from the header alone, and only then is `other` decoded, sample by
 * sample (it never exists whole). A clip stored in another unit is measured in its own unit
 * and reported in the raw clip's.
 */
export function compareCompressed(
  raw: RawClip,
  other: CompressedClip,
  options: CompressOptions = {},
  rawLabel = raw.name,
): Comparison {
  const source = raw;
  // A keyframed source is compared on the compressed clip's grid, sampled from its keys as
  // the compressor sampled it (the compressor may have chosen a finer grid).
  const factor = Math.round(other.sampleRate / raw.sampleRate);
  if (raw.keyframes && other.keyTimes) raw = sampleFromKeysAt(raw, other.keyTimes);
  else if (
    raw.keyframes &&
    factor >= 1 &&
    Math.abs(factor * raw.sampleRate - other.sampleRate) <= 1e-9 * other.sampleRate
  )
    raw = resampleFromKeys(raw, factor);
  checkSameShape(shapeOfClip(raw), shapeOfCompressed(other), rawLabel);
  const { threshold, shellDistances, metric } = resolveOptions(raw, options);
  const unit = other.unit as LengthUnit;
  const inUnit = clipInUnit(raw, unit);
  const toOther = convertLength({ value: 1, unit: raw.unit }, unit);
  const shells = unit === raw.unit ? shellDistances : shellDistances.map((d) => d * toOther);
  // An additive clip is measured applied to its base, as the compressor measured it.
  const additive = other.additive
    ? prepareAdditive(
        clipInUnit(source, unit),
        inUnit,
        additiveOptionsFor(other, options.additive, (clip) => clipInUnit(clip, unit)),
      )
    : undefined;
  const samples = additive
    ? measureAdditiveSamples(additive, other, shells, metric)
    : verifyCompressed(inUnit, other, shells, undefined, metric);
  const between = additive
    ? measureAdditiveBetween(additive, other, shells, metric)
    : measureCompressedBetween(inUnit, other, shells, metric);
  const back = unit === raw.unit ? 1 : 1 / toOther;
  const sampleMaxError = samples.maxError * back,
    betweenMaxError = between.maxError * back;
  const report: ErrorReport = {
    ...samples,
    unit: raw.unit,
    maxError: Math.max(sampleMaxError, betweenMaxError),
    shellMaxError: Math.max(samples.shellMaxError, between.shellMaxError) * back,
    p99Error: samples.p99Error * back,
    meanError: samples.meanError * back,
    boneMaxError: samples.boneMaxError.map((e) => e * back),
  };
  return {
    ...report,
    sampleMaxError,
    betweenMaxError,
    threshold,
    pass: report.maxError <= threshold,
    ...(additive ? { additive: true } : {}),
  };
}
