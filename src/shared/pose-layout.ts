/**
 * What a pose is made of, shared by the clip model (src/clip/) and the runtime
 * (src/runtime/), which may not import each other: a leaf that imports nothing.
 */

/** Floats per bone in a pose: rotation quaternion xyzw, translation xyz, scale xyz. */
export const POSE_STRIDE = 10;

/**
 * Float `i` of a pose whose every bone holds the identity transform: unit quaternion, zero
 * translation, unit scale. Its pattern repeats every bone (every two bones are 20 floats,
 * five four-float vectors).
 */
export function identityFloat(i: number): number {
  const f = i % POSE_STRIDE;
  return f === 3 || f >= 7 ? 1 : 0;
}

/** Bones per clip at most: the `.bpk` file's u16 counts and i16 parent indices. */
export const MAX_BONES = 32767;
