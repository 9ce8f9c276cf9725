/**
 * Pose layout and object-space helpers. A pose is {@link POSE_STRIDE} floats per bone:
 * rotation quaternion xyzw, translation xyz, scale xyz — local to the parent bone.
 */
import { mat4, quat, vec3 } from 'gl-matrix';

import { POSE_STRIDE } from '../shared/pose-layout.js';

/** Floats per bone in a pose (src/shared/pose-layout.ts). */
export { POSE_STRIDE };

const q = quat.create();
const t = vec3.create();
const s = vec3.create();
const local = mat4.create();

/** Allocates a pose for `boneCount` bones (the caller reuses it across samples). */
export function createPose(boneCount: number): Float32Array {
  return new Float32Array(boneCount * POSE_STRIDE);
}

/**
 * Converts a local pose into object-space matrices (column-major 4×4, 16 floats per bone,
 * gl-matrix layout): `outMatrices[b] = outMatrices[parent] · T · R · S`. `parents` must list
 * parents before children (as every bonepress clip does). Allocates nothing; returns
 * `outMatrices`.
 */
export function localToObject(pose: Float32Array, parents: ArrayLike<number>, outMatrices: Float32Array): Float32Array {
  const boneCount = parents.length;
  for (let b = 0; b < boneCount; b++) {
    const o = b * POSE_STRIDE;
    quat.set(q, pose[o], pose[o + 1], pose[o + 2], pose[o + 3]);
    vec3.set(t, pose[o + 4], pose[o + 5], pose[o + 6]);
    vec3.set(s, pose[o + 7], pose[o + 8], pose[o + 9]);
    mat4.fromRotationTranslationScale(local, q, t, s);
    const m = b * 16;
    const parent = parents[b];
    if (parent < 0) {
      for (let i = 0; i < 16; i++) outMatrices[m + i] = local[i];
      continue;
    }
    const p = parent * 16;
    // outMatrices[m] = parent · local, written out so no subarray view is allocated.
    for (let col = 0; col < 4; col++) {
      const l0 = local[col * 4], l1 = local[col * 4 + 1], l2 = local[col * 4 + 2], l3 = local[col * 4 + 3];
      for (let row = 0; row < 4; row++) {
        outMatrices[m + col * 4 + row] =
          outMatrices[p + row] * l0 + outMatrices[p + 4 + row] * l1 + outMatrices[p + 8 + row] * l2 + outMatrices[p + 12 + row] * l3;
      }
    }
  }
  return outMatrices;
}

/** A copy of bone `boneIndex`'s object-space matrix as a gl-matrix `mat4` (allocates; for tools). */
export function boneMatrix(matrices: Float32Array, boneIndex: number): mat4 {
  return mat4.clone(matrices.subarray(boneIndex * 16, boneIndex * 16 + 16) as unknown as mat4);
}
