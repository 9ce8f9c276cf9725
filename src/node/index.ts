/**
 * `bonepress/node`: file access and batch compression for Node. The only entry point that
 * touches `node:*` or piscina; the core (`bonepress`) and the decoder (`bonepress/runtime`)
 * stay browser-safe. What only the CLI needs is in internal.ts, which the package does not
 * export.
 */
export { compressFiles, shardInputs } from './pool.js';
export type { BatchProgress, CompressFilesRun } from './pool.js';
export { compressFile } from './worker.js';
export type {
  ClipOutput,
  CompressFileTask,
  CompressFilesOptions,
  FileFailed,
  FileResult,
  FileSuccess,
} from './worker.js';
export {
  OUTPUT_EXTENSION,
  READ_FILE_DEFAULTS,
  TRANSPORT_OUTPUT_EXTENSION,
  inputBaseName,
  isGltfPath,
  readClipFiles,
  readInputFile,
  writeFileAtomic,
} from './files.js';
export type { ReadFileOptions } from './files.js';
export { compressGltfFile, readCompressedGltfFile, readGltfSourceFile } from './gltf-files.js';
export type {
  CompressGltfFileOptions,
  CompressGltfFileResult,
  GltfCompressedClip,
  GltfOutputFormat,
} from './gltf-files.js';
export { INTERNAL_ERROR, OUTPUT_CLASH, OUTPUT_LINK, OutputError } from './failure.js';
export type { FileFailure } from './failure.js';
export { compressLibrary } from './library.js';
export type { LibraryProgress, LibraryResult, LibraryRun } from './library.js';
export { CacheEntryError } from './cache.js';
export {
  MANIFEST_ERROR,
  MANIFEST_VERSION,
  ManifestError,
  mergeManifests,
  parseManifest,
  readManifest,
  renderManifest,
  writeManifest,
} from './manifest.js';
export type {
  Manifest,
  ManifestFailure,
  ManifestInput,
  ManifestOutput,
  ManifestPart,
  ManifestShard,
  ManifestTotal,
} from './manifest.js';
export { CLIP_FILE_EXTENSIONS, expandInputTree, expandInputs, isClipFileName } from './inputs.js';
export type { InputFile } from './inputs.js';
export type { OutputTarget } from './outputs.js';
