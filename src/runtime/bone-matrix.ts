/**
 * The runtime's one gl-matrix bridge, apart from pose.ts because pose.ts is in the
 * compressor's module graph too: a compression worker never hands out a `mat4`, and Node
 * loads all of gl-matrix's CommonJS modules for it (50 ms, about a tenth of a worker's start).
 */
import { mat4 } from 'gl-matrix';

/** A copy of bone `boneIndex`'s object-space matrix as a gl-matrix `mat4` (allocates; for tools). */
export function boneMatrix(matrices: Float32Array, boneIndex: number): mat4 {
  return mat4.clone(matrices.subarray(boneIndex * 16, boneIndex * 16 + 16) as unknown as mat4);
}
