/**
 * What a pose is made of, shared by the clip model (src/clip/) and the runtime
 * (src/runtime/), which may not import each other: a leaf that imports nothing.
 */

/** Floats per bone in a pose: rotation quaternion xyzw, translation xyz, scale xyz. */
export const POSE_STRIDE = 10;

/** Bones per clip at most: the `.bpk` file's u16 counts and i16 parent indices. */
export const MAX_BONES = 32767;
