/**
 * `bonepress/runtime`: the browser-safe decoder. Imports nothing from the compressor and
 * nothing Node-only.
 */
export { CompressedClip } from './compressed-clip.js';
export type { Looping, OpenOptions, Rounding, SampleOptions, SectionSizes, TrackClass } from './compressed-clip.js';
export { FormatError, FORMAT_ERROR } from './errors.js';
export type { FormatErrorCode } from './errors.js';
export { POSE_STRIDE, createPose, localToObject, boneMatrix } from './pose.js';
export { VERSION as FORMAT_VERSION } from './format.js';
