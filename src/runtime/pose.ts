/**
 * Pose layout and object-space helpers. A pose is {@link POSE_STRIDE} floats per bone:
 * rotation quaternion xyzw, translation xyz, scale xyz — local to the parent bone.
 */
import { POSE_STRIDE, identityFloat } from '../shared/pose-layout.js';

/** Floats per bone in a pose, and each float of the identity pose (src/shared/pose-layout.ts). */
export { POSE_STRIDE, identityFloat };

/** {@link localToObject}'s float64 matrices, grown to the largest skeleton seen. */
let world = new Float64Array(0);

/** Allocates a pose for `boneCount` bones (the caller reuses it across samples). */
export function createPose(boneCount: number): Float32Array {
  return new Float32Array(boneCount * POSE_STRIDE);
}

/**
 * Converts a local pose into object-space matrices (column-major 4×4, 16 floats per bone,
 * gl-matrix layout): `outMatrices[b] = outMatrices[parent] · T · R · S`, computed in float64
 * down the hierarchy as crowd.ts's object-space output is (the same floats).
 * `parents` must list parents before children (as every bonepress clip does). Allocates
 * nothing once it has seen the skeleton; returns `outMatrices`.
 */
export function localToObject(pose: Float32Array, parents: ArrayLike<number>, outMatrices: Float32Array): Float32Array {
  const bones = parents.length;
  if (world.length < 12 * bones) world = new Float64Array(12 * bones);
  objectSpace(pose, parents, bones, world, outMatrices, 0, false);
  return outMatrices;
}

/**
 * The object-space walk: `M[b] = M[parent] · T · R · S` of the first `bones` bones of a
 * local pose (parents precede children), in float64 down the hierarchy. `world` (12
 * doubles per bone: the 3×3 linear part column by column, then the translation) keeps the
 * matrices unrounded; each bone is written to `out` at `at`, as a column-major 4×4 or
 * (`rows`) as three rows of four. The kernel's world pass (kernel.wat) performs the same
 * operations in the same order. Allocates nothing.
 * @internal
 */
export function objectSpace(
  pose: Float32Array,
  parents: ArrayLike<number>,
  bones: number,
  world: Float64Array,
  out: Float32Array,
  at: number,
  rows: boolean,
): void {
  for (let b = 0; b < bones; b++) {
    const o = b * POSE_STRIDE;
    const x = pose[o],
      y = pose[o + 1],
      z = pose[o + 2],
      w = pose[o + 3];
    const sx = pose[o + 7],
      sy = pose[o + 8],
      sz = pose[o + 9];
    const x2 = x + x,
      y2 = y + y,
      z2 = z + z;
    const xx = x * x2,
      xy = x * y2,
      xz = x * z2,
      yy = y * y2,
      yz = y * z2,
      zz = z * z2,
      wx = w * x2,
      wy = w * y2,
      wz = w * z2;
    // Local R · S, column by column, and T.
    let m0 = (1 - (yy + zz)) * sx,
      m1 = (xy + wz) * sx,
      m2 = (xz - wy) * sx;
    let m3 = (xy - wz) * sy,
      m4 = (1 - (xx + zz)) * sy,
      m5 = (yz + wx) * sy;
    let m6 = (xz + wy) * sz,
      m7 = (yz - wx) * sz,
      m8 = (1 - (xx + yy)) * sz;
    let tx = pose[o + 4],
      ty = pose[o + 5],
      tz = pose[o + 6];
    const p = parents[b];
    if (p >= 0) {
      const q = p * 12;
      const p0 = world[q],
        p1 = world[q + 1],
        p2 = world[q + 2],
        p3 = world[q + 3],
        p4 = world[q + 4],
        p5 = world[q + 5];
      const p6 = world[q + 6],
        p7 = world[q + 7],
        p8 = world[q + 8];
      const n0 = p0 * m0 + p3 * m1 + p6 * m2,
        n1 = p1 * m0 + p4 * m1 + p7 * m2,
        n2 = p2 * m0 + p5 * m1 + p8 * m2;
      const n3 = p0 * m3 + p3 * m4 + p6 * m5,
        n4 = p1 * m3 + p4 * m4 + p7 * m5,
        n5 = p2 * m3 + p5 * m4 + p8 * m5;
      const n6 = p0 * m6 + p3 * m7 + p6 * m8,
        n7 = p1 * m6 + p4 * m7 + p7 * m8,
        n8 = p2 * m6 + p5 * m7 + p8 * m8;
      const ux = p0 * tx + p3 * ty + p6 * tz + world[q + 9];
      const uy = p1 * tx + p4 * ty + p7 * tz + world[q + 10];
      const uz = p2 * tx + p5 * ty + p8 * tz + world[q + 11];
      m0 = n0;
      m1 = n1;
      m2 = n2;
      m3 = n3;
      m4 = n4;
      m5 = n5;
      m6 = n6;
      m7 = n7;
      m8 = n8;
      tx = ux;
      ty = uy;
      tz = uz;
    }
    const q = b * 12;
    world[q] = m0;
    world[q + 1] = m1;
    world[q + 2] = m2;
    world[q + 3] = m3;
    world[q + 4] = m4;
    world[q + 5] = m5;
    world[q + 6] = m6;
    world[q + 7] = m7;
    world[q + 8] = m8;
    world[q + 9] = tx;
    world[q + 10] = ty;
    world[q + 11] = tz;
    if (rows) {
      const r = at + b * 12;
      out[r] = m0;
      out[r + 1] = m3;
      out[r + 2] = m6;
      out[r + 3] = tx;
      out[r + 4] = m1;
      out[r + 5] = m4;
      out[r + 6] = m7;
      out[r + 7] = ty;
      out[r + 8] = m2;
      out[r + 9] = m5;
      out[r + 10] = m8;
      out[r + 11] = tz;
    } else {
      const r = at + b * 16;
      out[r] = m0;
      out[r + 1] = m1;
      out[r + 2] = m2;
      out[r + 3] = 0;
      out[r + 4] = m3;
      out[r + 5] = m4;
      out[r + 6] = m5;
      out[r + 7] = 0;
      out[r + 8] = m6;
      out[r + 9] = m7;
      out[r + 10] = m8;
      out[r + 11] = 0;
      out[r + 12] = tx;
      out[r + 13] = ty;
      out[r + 14] = tz;
      out[r + 15] = 1;
    }
  }
}

/**
 * Writes one bone of `base ∘ additive` at `out[o]` from `base[bo]` and `additive[ao]` (the
 * pose layout's ten numbers each, float32 or float64; `out` may be either input): an additive clip's delta applied to a
 * base pose the way three.js blends an additive action at weight 1 — rotation
 * base · delta (normalised), translation base + delta, scale base + delta − 1 (format.ts,
 * ADDITIVE_MODE.LOCAL).
 */
export function applyAdditiveBone(
  base: Float32Array | Float64Array,
  bo: number,
  additive: Float32Array | Float64Array,
  ao: number,
  out: Float32Array | Float64Array,
  o: number,
): void {
  const bx = base[bo],
    by = base[bo + 1],
    bz = base[bo + 2],
    bw = base[bo + 3];
  const ax = additive[ao],
    ay = additive[ao + 1],
    az = additive[ao + 2],
    aw = additive[ao + 3];
  let x = bw * ax + bx * aw + by * az - bz * ay,
    y = bw * ay - bx * az + by * aw + bz * ax,
    z = bw * az + bx * ay - by * ax + bz * aw,
    w = bw * aw - bx * ax - by * ay - bz * az;
  const len = Math.sqrt(x * x + y * y + z * z + w * w);
  const inv = len > 0 ? 1 / len : 0;
  x *= inv;
  y *= inv;
  z *= inv;
  w *= inv;
  out[o] = x;
  out[o + 1] = y;
  out[o + 2] = z;
  out[o + 3] = w;
  for (let i = 4; i < 7; i++) out[o + i] = base[bo + i] + additive[ao + i];
  for (let i = 7; i < 10; i++) out[o + i] = base[bo + i] + additive[ao + i] - 1;
}

/**
 * Applies a pose decoded from an additive clip (`CompressedClip.additive` set) to a base
 * pose of the same skeleton: `out = base ∘ additive`, bone by bone (see
 * {@link applyAdditiveBone}). `out` may be `base` or `additive`. Allocates nothing; returns `out`.
 */
export function applyAdditivePose<T extends Float32Array | Float64Array>(
  base: Float32Array | Float64Array,
  additive: Float32Array | Float64Array,
  out: T,
): T {
  const bones = Math.min(base.length, additive.length, out.length) / POSE_STRIDE;
  for (let o = 0; o < bones * POSE_STRIDE; o += POSE_STRIDE) applyAdditiveBone(base, o, additive, o, out, o);
  return out;
}
