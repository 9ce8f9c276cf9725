/**
 * Additive clips: the deltas the compressor stores, and the applied poses it measures. A
 * delta is taken against a reference pose (three.js's `makeClipAdditive` convention) and
 * played over a base pose (three.js's additive blending, runtime/pose.ts
 * `applyAdditiveBone`); the error that counts is base ∘ decoded delta against
 * base ∘ source delta, so every measure here composes with the base, in local space, before
 * the object-space metric.
 */
import { clipEndTime, clipStartTime, sampleTime, type RawClip } from '../clip/raw-clip.js';
import { POSE_STRIDE } from '../clip/skeleton.js';
import type { AdditiveInfo } from '../runtime/clip-reader.js';
import type { CompressedClip } from '../runtime/compressed-clip.js';
import { keyPosition } from '../runtime/key-times.js';
import { applyAdditiveBone } from '../runtime/pose.js';
import { sampleBetween, sampleKey } from '../runtime/sampler.js';
import { measureSampleErrors, poseToObject, type ErrorMetric, type ErrorReport } from '../metric/error-metric.js';
import { measureBetweenErrors, referenceBetween, type BetweenReport } from './between.js';
import { OptionsError, type AdditiveOptions, type ClipPose } from './options.js';

/** An additive compression set up on one clip: what to compress, and what to measure it against. */
export interface AdditiveSetup {
  /** The additive record. */
  readonly info: AdditiveInfo;
  /** The deltas, sample for sample of the clip to compress (no keys: the reference is {@link appliedBetween}). */
  readonly delta: RawClip;
  /** Base ∘ source delta at every sample: the reference of the error at the samples. */
  readonly applied: RawClip;
  /** The base's local pose at every sample, sample-major (`(s · bones + b) · POSE_STRIDE`). */
  readonly basePoses: Float64Array;
  /** Writes the base's local pose a fraction `alpha` of the way from sample `k` to `k + 1`. */
  baseBetween(k: number, alpha: number, out: Float64Array): void;
  /** Writes base ∘ source delta there: the reference of the error between samples. */
  appliedBetween(k: number, alpha: number, out: Float64Array): void;
}

/**
 * Sets up an additive compression of `grid` (the clip to compress: `source` itself or
 * `source` on a finer grid) from `options`. Throws {@link OptionsError} for a frame
 * `source` does not have or a reference or base of another skeleton.
 */
export function prepareAdditive(source: RawClip, grid: RawClip, options: AdditiveOptions): AdditiveSetup {
  const boneCount = grid.skeleton.parents.length;
  const stride = boneCount * POSE_STRIDE;
  const reference = new Float64Array(stride);
  let info: AdditiveInfo;
  const ref = options.reference ?? 0;
  if (typeof ref === 'number') {
    if (!Number.isInteger(ref) || ref < 0 || ref >= source.sampleCount)
      throw new OptionsError(
        `additive reference frame ${ref}: clip "${source.name}" has frames 0..${source.sampleCount - 1}`,
      );
    poseAtTime(source, sampleTime(source, ref), reference);
    info = { mode: 'local', reference: { kind: 'frame', frame: ref, time: sampleTime(source, ref) } };
  } else {
    checkSkeleton(source, ref.clip, 'additive reference');
    const time = poseTime(ref, 'additive reference');
    poseAtTime(ref.clip, time, reference);
    info = { mode: 'local', reference: { kind: 'pose', time } };
  }
  const inverse = inverseReference(reference);

  // The base at a playback time of the clip: a fixed pose, or a clip looping beside it.
  const base = options.base;
  let baseAt: (time: number, out: Float64Array) => void;
  if (base === undefined) {
    baseAt = (_time, out) => out.set(reference);
  } else if ('skeleton' in base) {
    checkSkeleton(source, base, 'additive base');
    const period = clipEndTime(base);
    baseAt = (time, out) => poseAtTime(base, period > 0 ? time % period : 0, out);
  } else {
    checkSkeleton(source, base.clip, 'additive base');
    const pose = new Float64Array(stride);
    poseAtTime(base.clip, poseTime(base, 'additive base'), pose);
    baseAt = (_time, out) => out.set(pose);
  }

  const n = grid.sampleCount;
  const delta: RawClip = {
    ...grid,
    keyframes: undefined,
    rotations: new Float32Array(grid.rotations.length),
    translations: new Float32Array(grid.translations.length),
    scales: new Float32Array(grid.scales.length),
  };
  const applied: RawClip = {
    ...delta,
    rotations: new Float32Array(grid.rotations.length),
    translations: new Float32Array(grid.translations.length),
    scales: new Float32Array(grid.scales.length),
  };
  const basePoses = new Float64Array(n * stride);
  const pose = new Float64Array(stride);
  const out = new Float64Array(stride);
  for (let s = 0; s < n; s++) {
    referenceBetween(grid, s, 0, pose);
    toDelta(inverse, pose);
    writeSample(delta, s, pose);
    const basePose = basePoses.subarray(s * stride, (s + 1) * stride);
    baseAt(sampleTime(grid, s), basePose);
    for (let o = 0; o < stride; o += POSE_STRIDE) applyAdditiveBone(basePose, o, pose, o, out, o);
    writeSample(applied, s, out);
  }
  const at = (k: number, alpha: number) => sampleTime(grid, k + alpha);
  const sourcePose = new Float64Array(stride);
  const basePose = new Float64Array(stride);
  return {
    info,
    delta,
    applied,
    basePoses,
    baseBetween: (k, alpha, result) => baseAt(at(k, alpha), result),
    appliedBetween: (k, alpha, result) => {
      referenceBetween(grid, k, alpha, sourcePose);
      toDelta(inverse, sourcePose);
      baseAt(at(k, alpha), basePose);
      for (let o = 0; o < stride; o += POSE_STRIDE) applyAdditiveBone(basePose, o, sourcePose, o, result, o);
    },
  };
}

/**
 * The additive options that measure `compressed` (an additive clip) as it was compressed:
 * its reference frame from its record, or `given.reference` for a pose of another clip
 * (the record keeps only its time), over `given.base`, each clip passed through `convert`
 * (e.g. into the compressed clip's unit). Throws {@link OptionsError} when the reference
 * pose is needed and not given.
 */
export function additiveOptionsFor(
  compressed: CompressedClip,
  given: AdditiveOptions | undefined,
  convert: (clip: RawClip) => RawClip = (clip) => clip,
): AdditiveOptions {
  const record = compressed.additive?.reference;
  const pose = (p: ClipPose) => ({ ...p, clip: convert(p.clip) });
  let reference: AdditiveOptions['reference'];
  if (record?.kind === 'frame') reference = record.frame;
  else if (given?.reference !== undefined && typeof given.reference !== 'number') reference = pose(given.reference);
  else
    throw new OptionsError(
      `clip "${compressed.name ?? ''}" is additive against a pose of another clip (at ${record?.time} s): name that clip as its base (--additive-base <file>[#animation]@<time>)`,
    );
  const base = given?.base;
  return {
    reference,
    ...(base === undefined ? {} : { base: 'skeleton' in base ? convert(base) : pose(base) }),
  };
}

/**
 * The error of an additive clip at its samples: base ∘ decoded delta (the runtime decoder's
 * keys) against {@link AdditiveSetup.applied}.
 */
export function measureAdditiveSamples(
  setup: AdditiveSetup,
  compressed: CompressedClip,
  shellDistances: Float32Array,
  metric: ErrorMetric,
): ErrorReport {
  const parents = setup.applied.skeleton.parents;
  const stride = parents.length * POSE_STRIDE;
  const sampler = compressed.createSampler();
  const decoded = new Float32Array(stride);
  const pose = new Float64Array(stride);
  return measureSampleErrors(
    setup.applied,
    undefined,
    shellDistances,
    (s, out) => {
      sampleKey(sampler, s, decoded);
      for (let o = 0; o < stride; o += POSE_STRIDE)
        applyAdditiveBone(setup.basePoses, s * stride + o, decoded, o, pose, o);
      poseToObject(pose, parents, out);
    },
    metric,
  );
}

/**
 * The error of an additive clip between samples: base ∘ the runtime's interpolated delta
 * against base ∘ source delta; `enough`: the figure it need not be resolved below
 * (compress/between.ts `measureBetweenErrors`).
 */
export function measureAdditiveBetween(
  setup: AdditiveSetup,
  compressed: CompressedClip,
  shellDistances: Float32Array,
  metric: ErrorMetric,
  enough = 0,
): BetweenReport {
  const sampler = compressed.createSampler();
  const stride = compressed.boneCount * POSE_STRIDE;
  const decoded = new Float32Array(stride);
  const base = new Float64Array(stride);
  return measureBetweenErrors(
    setup.applied,
    shellDistances,
    (k, alpha, out) => {
      sampleBetween(sampler, k, alpha, decoded);
      setup.baseBetween(k, alpha, base);
      for (let o = 0; o < stride; o += POSE_STRIDE) applyAdditiveBone(base, o, decoded, o, out, o);
    },
    { metric, reference: setup.appliedBetween, enough },
  );
}

/** `pose` (a source pose) becomes its delta against the reference whose {@link inverseReference} is `inverse`. */
function toDelta(inverse: Float64Array, pose: Float64Array): void {
  for (let o = 0; o < pose.length; o += POSE_STRIDE) applyAdditiveBone(inverse, o, pose, o, pose, o);
}

/**
 * The pose that {@link toDelta} applies: conj(ref) for rotations (ref normalised, as
 * three.js does), −ref for translations, 2 − ref for scales (applied as inverse + s − 1,
 * that is s − ref + 1: the stored scale delta).
 */
function inverseReference(reference: Float64Array): Float64Array {
  const inverse = new Float64Array(reference.length);
  for (let o = 0; o < reference.length; o += POSE_STRIDE) {
    const len = Math.hypot(reference[o], reference[o + 1], reference[o + 2], reference[o + 3]) || 1;
    for (let i = 0; i < 3; i++) inverse[o + i] = -reference[o + i] / len;
    inverse[o + 3] = reference[o + 3] / len;
    for (let i = 4; i < 7; i++) inverse[o + i] = -reference[o + i];
    for (let i = 7; i < 10; i++) inverse[o + i] = 2 - reference[o + i];
  }
  return inverse;
}

/** Writes a float64 pose as sample `s` of `clip` (float32). */
function writeSample(clip: RawClip, s: number, pose: Float64Array): void {
  const n = clip.sampleCount;
  for (let b = 0, o = 0; o < pose.length; b++, o += POSE_STRIDE) {
    const i = b * n + s;
    for (let c = 0; c < 4; c++) clip.rotations[i * 4 + c] = pose[o + c];
    for (let c = 0; c < 3; c++) clip.translations[i * 3 + c] = pose[o + 4 + c];
    for (let c = 0; c < 3; c++) clip.scales[i * 3 + c] = pose[o + 7 + c];
  }
}

/** The local pose of `clip` at `time` on its timeline, held at its first and last samples, with the source's own interpolation. */
function poseAtTime(clip: RawClip, time: number, out: Float64Array): void {
  const n = clip.sampleCount;
  const position = keyPosition(clip.sampleTimes, clipStartTime(clip), clip.sampleRate, n, time, false);
  const at = Math.min(n - 1, Math.max(0, position));
  const k = Math.max(0, Math.min(n - 2, Math.floor(at)));
  referenceBetween(clip, k, n > 1 ? at - k : 0, out);
}

/** The time of a {@link ClipPose}, checked. */
function poseTime(pose: ClipPose, what: string): number {
  const time = pose.time ?? clipStartTime(pose.clip);
  if (!(Number.isFinite(time) && time >= 0))
    throw new OptionsError(`${what}: time ${time} s (need a finite time ≥ 0 on clip "${pose.clip.name}")`);
  return time;
}

/** `other` must have `clip`'s bones (the same count, parents and names) and unit. */
function checkSkeleton(clip: RawClip, other: RawClip, what: string): void {
  const a = clip.skeleton,
    b = other.skeleton;
  if (other.unit !== clip.unit)
    throw new OptionsError(
      `${what} "${other.name}" is in ${other.unit}, clip "${clip.name}" in ${clip.unit}: read both in one unit`,
    );
  if (a.parents.length !== b.parents.length)
    throw new OptionsError(
      `${what} "${other.name}" has ${b.parents.length} bones; clip "${clip.name}" has ${a.parents.length} (not the same skeleton)`,
    );
  for (let i = 0; i < a.parents.length; i++) {
    if (a.parents[i] !== b.parents[i] || a.boneNames[i] !== b.boneNames[i])
      throw new OptionsError(
        `${what} "${other.name}": bone ${i} is "${b.boneNames[i]}" (parent ${b.parents[i]}), in clip "${clip.name}" "${a.boneNames[i]}" (parent ${a.parents[i]}): not the same skeleton`,
      );
  }
}
