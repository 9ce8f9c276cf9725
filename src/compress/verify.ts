/**
 * Decoding a `.bpk` back into a clip with the runtime decoder, and measuring it: the
 * error a user will see, not the compressor's estimate.
 */
import { createRawClip, writeSamplePose, type RawClip } from '../clip/raw-clip.js';
import { createSkeleton, POSE_STRIDE, setIdentity } from '../clip/skeleton.js';
import type { CompressedClip } from '../runtime/compressed-clip.js';
import { sampleBetween, sampleKey } from '../runtime/sampler.js';
import {
  AFFINE_STRIDE,
  clipToObject,
  MetricError,
  measureSampleErrors,
  poseToObject,
  type ErrorMetric,
  type ErrorReport,
  type SampleErrors,
} from '../metric/error-metric.js';
import { PLAYER_SLERPS } from '../clip/keyframes.js';
import { measureBetweenErrors, type BetweenOptions, type BetweenReport } from './between.js';
import { clipSampleObjects, clipSampleSpecs, measureKernel, placeClipSamples, plainBuffers } from './measure-kernel.js';

/**
 * Every original sample of `compressed`, decoded exactly at the sample (no interpolation),
 * as a clip. Bones are named from the file, or `bone_<i>` when names were stripped; the
 * default pose is identity (the file does not need it to decode).
 */
export function decompressClip(compressed: CompressedClip, name?: string): RawClip {
  const boneCount = compressed.boneCount;
  const names = compressed.boneNames ?? Array.from({ length: boneCount }, (_, b) => `bone_${b}`);
  const defaultPose = new Float32Array(boneCount * POSE_STRIDE);
  for (let b = 0; b < boneCount; b++) setIdentity(defaultPose, b);
  const skeleton = createSkeleton(names, compressed.parents, defaultPose, compressed.unit);
  const clip = createRawClip(
    name ?? compressed.name ?? 'clip',
    skeleton,
    compressed.sampleRate,
    compressed.sampleCount,
    compressed.unit,
  );
  const sampler = compressed.createSampler();
  const pose = new Float32Array(boneCount * POSE_STRIDE);
  for (let s = 0; s < compressed.sampleCount; s++) {
    sampleKey(sampler, s, pose);
    writeSamplePose(clip, s, pose);
  }
  return clip;
}

/**
 * Decodes `compressed` sample by sample with the runtime decoder and measures it against
 * `reference` (`metric`, default `vertices`, at `shellDistances`; `referenceObject`: the
 * reference's object transforms when known). The decoded clip is never built whole.
 * Throws `MetricError` when the bone or sample counts or the hierarchy differ.
 */
export function verifyCompressed(
  reference: RawClip,
  compressed: CompressedClip,
  shellDistances: Float32Array = reference.skeleton.shellDistances,
  referenceObject?: Float64Array,
  metric: ErrorMetric = 'vertices',
): ErrorReport {
  return verifySamples(reference, compressed, shellDistances, referenceObject, metric);
}

/** {@link verifyCompressed}, keeping every bone's errors at every sample in `sampleErrors` when given. */
function verifySamples(
  reference: RawClip,
  compressed: CompressedClip,
  shellDistances: Float32Array,
  referenceObject: Float64Array | undefined,
  metric: ErrorMetric,
  sampleErrors?: SampleErrors,
): ErrorReport {
  const parents = reference.skeleton.parents;
  if (compressed.boneCount !== parents.length)
    throw new MetricError(`bone counts differ: ${parents.length} vs ${compressed.boneCount}`);
  for (let b = 0; b < parents.length; b++) {
    if (compressed.parents[b] !== parents[b])
      throw new MetricError(`hierarchies differ at bone ${b} (${reference.skeleton.boneNames[b]})`);
  }
  if (compressed.sampleCount !== reference.sampleCount)
    throw new MetricError(`sample counts differ: ${reference.sampleCount} vs ${compressed.sampleCount}`);
  if (shellDistances.length !== parents.length)
    throw new MetricError(`${shellDistances.length} shell distances for ${parents.length} bones`);
  const sampler = compressed.createSampler();
  const boneCount = parents.length;
  const pose = new Float32Array(boneCount * POSE_STRIDE);
  const stride = boneCount * AFFINE_STRIDE;
  // Composed from float64 as the checks between samples compose theirs, in the measure kernel
  // where it runs (the same float64s).
  const specs = { pose64: ['f64', pose.length], object: ['f64', stride], parents: ['i32', boneCount] } as const;
  const kernel = measureKernel('between', specs);
  const { pose64, object, parents: kernelParents } = kernel?.buffers ?? plainBuffers(specs);
  kernelParents.set(parents);
  return measureSampleErrors(
    reference,
    referenceObject,
    shellDistances,
    (s, out) => {
      sampleKey(sampler, s, pose);
      pose64.set(pose);
      if (kernel) {
        kernel.exports.poseToObject(pose64.byteOffset, object.byteOffset, kernelParents.byteOffset, 0, boneCount);
        out.set(object);
      } else poseToObject(pose64, parents, out);
    },
    metric,
    sampleErrors,
  );
}

/**
 * The error of `compressed` between samples with `metric`, decoded by the runtime's own
 * interpolation, against what the players make of the source's keys when it has any.
 * `known`: what is known of the samples already, and the figure the error need not be
 * resolved below ({@link BetweenOptions}).
 */
export function measureCompressedBetween(
  reference: RawClip,
  compressed: CompressedClip,
  shellDistances: Float32Array,
  metric: ErrorMetric = 'vertices',
  known: Pick<BetweenOptions, 'sampleErrors' | 'enough'> = {},
): BetweenReport {
  const sampler = compressed.createSampler();
  const pose = new Float32Array(compressed.boneCount * POSE_STRIDE);
  return measureBetweenErrors(
    reference,
    shellDistances,
    (k, alpha, out) => {
      sampleBetween(sampler, k, alpha, pose);
      out.set(pose);
    },
    { ...known, metric, reference: PLAYER_SLERPS },
  );
}

/**
 * Most numbers kept of a clip's own object transforms at every sample
 * ({@link sharedSampleObjects}): 1 MiB, all but one corpus clip. Larger arrays are read back
 * from memory rather than cache: on the 300-bone rig (3.3 MiB) sharing them took longer than
 * working each sample out again.
 */
const SHARED_SAMPLES_LIMIT = 2 ** 17;

/**
 * `clipToObject(clip)` when it holds at most {@link SHARED_SAMPLES_LIMIT} numbers, for the
 * stages that measure against the clip's samples to share; otherwise undefined (each works
 * them out as it goes). Worked out in the measure kernel (measure-kernel.wat
 * `sampleObjects`, the same float64s) where it runs.
 */
export function sharedSampleObjects(clip: RawClip): Float64Array | undefined {
  const size = sampleObjectsSize(clip);
  if (size > SHARED_SAMPLES_LIMIT) return undefined;
  const boneCount = clip.skeleton.parents.length,
    values = boneCount * clip.sampleCount;
  const kernel = measureKernel('between', {
    ...clipSampleSpecs(values),
    parents: ['i32', boneCount],
    out: ['f64', size, 'copied'],
  });
  if (!kernel) return clipToObject(clip);
  const { parents, out } = kernel.buffers;
  placeClipSamples(kernel.buffers, clip);
  parents.set(clip.skeleton.parents);
  clipSampleObjects(kernel.exports, kernel.buffers, clip, 0, clip.sampleCount, parents.byteOffset, out);
  // The kernel's memory is the next user's: the transforms are kept in their own array.
  return out.slice();
}

/** Numbers of a clip's object transforms at every sample. */
function sampleObjectsSize(clip: RawClip): number {
  return clip.sampleCount * clip.skeleton.parents.length * AFFINE_STRIDE;
}

/**
 * {@link verifyCompressed} and {@link measureCompressedBetween} of one clip, each sample
 * decoded and measured once for both: the checks between samples take the samples' errors
 * the verification measured for the ends of their intervals. A clip with keys has its samples
 * measured against the players' evaluations there instead, which these are not.
 * `referenceObject`: the reference's object transforms when known ({@link sharedSampleObjects});
 * `enough`: the figure between samples need not be resolved below ({@link BetweenOptions}).
 */
export function measureCompressed(
  reference: RawClip,
  compressed: CompressedClip,
  shellDistances: Float32Array,
  metric: ErrorMetric,
  referenceObject?: Float64Array,
  enough = 0,
): { report: ErrorReport; between: BetweenReport } {
  const values = reference.sampleCount * reference.skeleton.parents.length;
  const sampleErrors =
    reference.keyframes === undefined
      ? { errors: new Float64Array(values), shells: new Float64Array(values) }
      : undefined;
  const report = verifySamples(reference, compressed, shellDistances, referenceObject, metric, sampleErrors);
  return {
    report,
    between: measureCompressedBetween(reference, compressed, shellDistances, metric, { sampleErrors, enough }),
  };
}
