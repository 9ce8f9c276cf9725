/**
 * `bonepress`: the compressor and readers, browser-safe (no node:*; file access lives in
 * `bonepress/node`). The runtime decoder is re-exported; a web app that only plays clips
 * imports `bonepress/runtime` alone.
 */
export { compress } from './compress/index.js';
export type { CompressResult, CompressStats, ExperimentalOptions } from './compress/index.js';
export { COMPRESS_DEFAULTS, OptionsError, resolveOptions } from './compress/options.js';
export type { CompressOptions, LengthInput, ResolvedOptions } from './compress/options.js';
export { decompressClip, verifyCompressed } from './compress/verify.js';
export { measureClipError, MetricError } from './compress/error-metric.js';
export type { ErrorReport } from './compress/error-metric.js';

export { readClips, readBvh, readGltf, readAclSjson, readPoseDump, ParseError, PARSE_ERROR, PoseDumpError, SUPPORTED_EXTENSIONS } from './readers/index.js';
export type { ParseErrorCode, ReadOptions } from './readers/index.js';
export { readGltfWithWarnings } from './readers/gltf.js';

export { createRawClip, validateRawClip, rawSizeBytes, clipDuration, readSamplePose, writeSamplePose } from './clip/raw-clip.js';
export type { RawClip } from './clip/raw-clip.js';
export { createSkeleton, resolveShellDistances, boneIndexOf, ClipError, DEFAULT_SHELL } from './clip/skeleton.js';
export type { Skeleton } from './clip/skeleton.js';
export { parseLength, convertLength, formatLength, UnitError, LENGTH_UNITS } from './clip/units.js';
export type { Length, LengthUnit } from './clip/units.js';
export { writePoseDump, clipToPoseDump } from './clip/pose-dump.js';
export type { PoseDump } from './clip/pose-dump.js';

export {
  CompressedClip, FormatError, FORMAT_ERROR, FORMAT_VERSION, POSE_STRIDE, createPose, localToObject, boneMatrix,
} from './runtime/index.js';
export type { FormatErrorCode, Looping, OpenOptions, Rounding, SampleOptions, SectionSizes, TrackClass } from './runtime/index.js';
export { TRANSPORT_VERSION, decodeTransport, isTransport, openClip } from './runtime/index.js';
export { encodeTransport } from './compress/transport.js';
