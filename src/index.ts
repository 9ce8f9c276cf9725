/**
 * `bonepress`: the compressor and readers, browser-safe (no node:*; file access lives in
 * `bonepress/node`). The runtime decoder is re-exported; a web app that only plays clips
 * imports `bonepress/runtime` alone.
 */
export { compress } from './compress/index.js';
export type { CompressResult, CompressStats, ExperimentalOptions } from './compress/index.js';
export { COMPRESS_DEFAULTS, EFFORTS, OptionsError, resolveOptions } from './compress/options.js';
export type {
  AdditiveOptions,
  ClipPose,
  CompressOptions,
  Effort,
  LengthInput,
  ResolvedOptions,
} from './compress/options.js';
export { decompressClip, verifyCompressed } from './compress/verify.js';
export { ERROR_METRICS, isErrorMetric, measureClipError, MetricError } from './metric/error-metric.js';
export type { ErrorMetric, ErrorReport } from './metric/error-metric.js';

export {
  readClips,
  readBvh,
  readGltf,
  readAclSjson,
  readPoseDump,
  ParseError,
  PARSE_ERROR,
  PoseDumpError,
  SUPPORTED_EXTENSIONS,
} from './readers/index.js';
export type { ParseErrorCode, ReadOptions } from './readers/index.js';
export type { GltfReadOptions, GltfReadResult } from './readers/gltf.js';

/**
 * {@link readGltf} that also returns the reader's warnings instead of calling
 * `options.onWarning`. The glTF reader (and glTF-Transform under it) loads on first use,
 * so importing `bonepress` stays light for BVH and SJSON users.
 */
export async function readGltfWithWarnings(
  ...args: Parameters<typeof import('./readers/gltf.js').readGltfWithWarnings>
): ReturnType<typeof import('./readers/gltf.js').readGltfWithWarnings> {
  return (await import('./readers/gltf.js')).readGltfWithWarnings(...args);
}

export {
  createRawClip,
  validateRawClip,
  rawSizeBytes,
  clipDuration,
  readSamplePose,
  writeSamplePose,
} from './clip/raw-clip.js';
export type { RawClip } from './clip/raw-clip.js';
export { createSkeleton, resolveShellDistances, boneIndexOf, ClipError, DEFAULT_SHELL } from './clip/skeleton.js';
export type { Skeleton } from './clip/skeleton.js';
export { parseLength, convertLength, formatLength, isLengthUnit, UnitError, LENGTH_UNITS } from './clip/units.js';
export type { Length, LengthUnit } from './clip/units.js';
export { writePoseDump, clipToPoseDump } from './readers/pose-dump.js';
export type { PoseDump } from './readers/pose-dump.js';

export {
  BonepressError,
  CompressedClip,
  FormatError,
  FORMAT_ERROR,
  FORMAT_VERSION,
  POSE_STRIDE,
  createPose,
  localToObject,
  boneMatrix,
  applyAdditivePose,
  animatedTrack,
  isStepTrack,
  keyTime,
  sampleBetween,
  sampleBone,
  sampledSpan,
  sampleKey,
  sectionSizes,
  segmentBitRates,
  trackClassOf,
} from './runtime/index.js';
export type {
  AdditiveInfo,
  FormatErrorCode,
  Looping,
  OpenOptions,
  Rounding,
  SampleOptions,
  SectionSizes,
  TrackClass,
} from './runtime/index.js';
export { TRANSPORT_VERSION, decodeTransport, isTransport, openClip } from './runtime/index.js';
export { encodeTransport } from './compress/transport.js';

export {
  anonymousBoneName,
  checkSameShape,
  clipInUnit,
  compareClips,
  compareCompressed,
  shapeOfClip,
  shapeOfCompressed,
} from './inspect/compare.js';
export type { ClipShape, Comparison } from './inspect/compare.js';
export { RAW_BITS, TRACK_KIND_NAMES, describeCompressedClip } from './inspect/describe.js';
export type { ClassCounts, ClipDescription } from './inspect/describe.js';
export { poseDumpChunks } from './inspect/pose-dump-stream.js';
export { BIT_RATE_LADDERS } from './compress/bitrate.js';
export type { BitRateLadder } from './compress/bitrate.js';
export type { RotationReference } from './compress/preprocess.js';
export { READ_LIMITS } from './readers/options.js';
