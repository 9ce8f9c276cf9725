/**
 * `bonepress/runtime`: the browser-safe decoder. Imports nothing from the compressor and
 * nothing Node-only.
 */
export { CompressedClip } from './compressed-clip.js';
export type { OpenOptions } from './compressed-clip.js';
export {
  animatedTrack,
  isStepTrack,
  keyTime,
  sampledSpan,
  sectionSizes,
  segmentBitRates,
  trackClassOf,
} from './clip-inspection.js';
export type { SectionSizes, TrackClass } from './clip-inspection.js';
export type { AdditiveInfo } from './clip-reader.js';
export { ClipSampler, sampleBetween, sampleBone, sampleKey } from './sampler.js';
export { CrowdSampler, CROWD_FLOATS_PER_BONE } from './crowd.js';
export type { CrowdOptions, CrowdOutput } from './crowd.js';
export type { Looping, Rounding, SampleOptions } from './sampler.js';
export { BonepressError, FormatError, FORMAT_ERROR } from './errors.js';
export type { FormatErrorCode } from './errors.js';
export { POSE_STRIDE, applyAdditivePose, createPose, localToObject } from './pose.js';
export { boneMatrix } from './bone-matrix.js';
export { VERSION as FORMAT_VERSION } from './format.js';
export { TRANSPORT_VERSION, decodeTransport, isTransport, openClip } from './transport.js';
export { slerpWeights } from './interpolate.js';
