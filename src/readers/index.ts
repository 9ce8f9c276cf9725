/**
 * Reader entry point: picks the reader for a file from its magic bytes and name. Pure (the
 * caller supplies the bytes), so it runs in browsers and workers as well as in Node.
 */
import { PoseDumpError, readPoseDump } from './pose-dump.js';
import type { RawClip } from '../clip/raw-clip.js';
import { readAclSjson } from './acl-sjson.js';
import { readBvhBytes } from './bvh.js';
import { ParseError, PARSE_ERROR } from './errors.js';
import type { GltfReadOptions } from './gltf.js';
import type { ReadOptions } from './options.js';

export { readBvh, BVH_DEFAULT_UNIT, BVH_MAX_CHANNELS_PER_JOINT, BVH_RATE_SNAP_TOLERANCE } from './bvh.js';
export { readAclSjson } from './acl-sjson.js';
export { ParseError, PARSE_ERROR, type ParseErrorCode } from './errors.js';
export type { ReadOptions } from './options.js';
export { readPoseDump, PoseDumpError } from './pose-dump.js';

/** File name endings {@link readClips} understands, longest first where one ends another. */
export const SUPPORTED_EXTENSIONS = ['.bvh', '.gltf', '.glb', '.acl.sjson', '.sjson', '.json'] as const;

// "glTF" as little-endian bytes: the GLB header magic.
const GLB_MAGIC = [0x67, 0x6c, 0x54, 0x46];

const utf8 = new TextDecoder('utf-8');

/**
 * Reads every animation of a glTF 2.0 file (`.gltf` JSON or `.glb`, told apart by the GLB
 * magic) as one clip each; warnings go to `options.onWarning` when given. Throws
 * {@link ParseError} naming the file and the problem. The reader (with
 * @gltf-transform/core) loads on first use: BVH and SJSON inputs never need it, and it took
 * a third of every worker's and CLI command's start-up.
 */
export async function readGltf(bytes: Uint8Array, file: string, options: GltfReadOptions = {}): Promise<RawClip[]> {
  const gltf = await import('./gltf.js');
  return gltf.readGltf(bytes, file, options);
}

function isGlb(bytes: Uint8Array): boolean {
  return bytes.length >= 4 && GLB_MAGIC.every((b, i) => bytes[i] === b);
}

/**
 * Reads the clips in one file.
 *
 * Bytes starting with the GLB magic `glTF` are read as GLB whatever the name; otherwise the
 * name decides (case-insensitive): `.bvh` → {@link readBvh}, `.gltf`/`.glb` →
 * {@link readGltf} (one clip per animation), `.acl.sjson`/`.sjson` → {@link readAclSjson},
 * `.json` → a pose dump (docs/pose-dump.md). Text formats are decoded as UTF-8 (a BOM is
 * dropped). `options` go to the reader (unit, resampling rate).
 *
 * Returns fresh clips the caller owns. Throws {@link ParseError}: code `UNSUPPORTED` for any
 * other name, listing {@link SUPPORTED_EXTENSIONS}; a malformed pose dump is reported as a
 * `BAD_VALUE` ParseError whose `cause` is the original error.
 */
export async function readClips(file: string, bytes: Uint8Array, options: ReadOptions = {}): Promise<RawClip[]> {
  if (isGlb(bytes)) return readGltf(bytes, file, options);
  const name = file.toLowerCase();
  if (name.endsWith('.bvh')) return [readBvhBytes(bytes, file, options)];
  if (name.endsWith('.gltf') || name.endsWith('.glb')) return readGltf(bytes, file, options);
  if (name.endsWith('.sjson')) return [readAclSjson(utf8.decode(bytes), file, options)];
  if (name.endsWith('.json')) {
    try {
      return [readPoseDump(utf8.decode(bytes), file, undefined, options.unit)];
    } catch (e) {
      // One error family for every reader, so callers (CLI, worker pool) map codes in one place.
      if (e instanceof PoseDumpError) {
        const error = new ParseError(PARSE_ERROR.BAD_VALUE, e.problem, file);
        error.cause = e;
        throw error;
      }
      throw e;
    }
  }
  throw new ParseError(
    PARSE_ERROR.UNSUPPORTED,
    `unsupported file type (expected a name ending in ${SUPPORTED_EXTENSIONS.join(', ')}, or GLB bytes)`,
    file,
  );
}
