import type { RawClip } from '../clip/raw-clip.js';
import type { ReadOptions } from './options.js';
import { ParseError, PARSE_ERROR } from './errors.js';

/**
 * Reads every animation of a glTF 2.0 (`.gltf` JSON or `.glb`) file as one clip each.
 * Throws {@link ParseError} naming the file and the problem.
 */
export async function readGltf(bytes: Uint8Array, file: string, options: ReadOptions = {}): Promise<RawClip[]> {
  void bytes; void options;
  throw new ParseError(file, 0, 'glTF reading is not available yet', PARSE_ERROR.UNSUPPORTED);
}
