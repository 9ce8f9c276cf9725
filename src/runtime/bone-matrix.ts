/**
 * The one gl-matrix bridge of the runtime. It lives apart from pose.ts because pose.ts is
 * in the compressor's module graph too: a compression worker never hands out a gl-matrix
 * `mat4`, and loading gl-matrix (all of its modules under Node) was a tenth of a worker's start.
 */
import { mat4 } from 'gl-matrix';

/** A copy of bone `boneIndex`'s object-space matrix as a gl-matrix `mat4` (allocates; for tools). */
export function boneMatrix(matrices: Float32Array, boneIndex: number): mat4 {
  return mat4.clone(matrices.subarray(boneIndex * 16, boneIndex * 16 + 16) as unknown as mat4);
}
