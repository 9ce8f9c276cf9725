/**
 * Per-component reconstruction and interpolation on flat arrays, no allocation. The
 * compressor reconstructs keys with these same functions, so its measured error is the
 * decoder's.
 */
import { writeIdentity, writeRotation } from './quaternion.js';

export { writeRotation };

/**
 * Normalised lerp on the shortest path from a to b at `alpha` (0..1), written at
 * `out[o..o+3]`.
 */
export function nlerpRotation(
  ax: number,
  ay: number,
  az: number,
  aw: number,
  bx: number,
  by: number,
  bz: number,
  bw: number,
  alpha: number,
  out: Float32Array,
  o: number,
): void {
  const dot = ax * bx + ay * by + az * bz + aw * bw;
  const wb = dot < 0 ? -alpha : alpha;
  const wa = 1 - alpha;
  writeRotation(ax * wa + bx * wb, ay * wa + by * wb, az * wa + bz * wb, aw * wa + bw * wb, out, o);
}

/** Linear interpolation a → b at `alpha`. */
export function lerp(a: number, b: number, alpha: number): number {
  return a + (b - a) * alpha;
}

/** Floats of a rotation's slot in the keys {@link decodeRotations} reads: key 0's three stored components at 0, key 1's at 4. */
export const ROTATION_SLOT = 8;
/** Int32 words of a rotation's entry in the list {@link decodeRotations} reads: drop0, drop1 (-1: key 0 alone), reference index, pose offset. */
export const ROTATION_ENTRY = 4;

/**
 * Decodes `count` stored rotations into `out`, the only place in TypeScript this arithmetic
 * is written: rotation i's keys are slot i of `keys` ({@link ROTATION_SLOT} floats: the three stored
 * components of key 0's delta, x, y, z, w without its dropped component, then key 1's at 4)
 * and its entry i of `list` ({@link ROTATION_ENTRY} words: key 0's dropped component, key
 * 1's or -1 for key 0 alone, the index of its reference in `refs`, its offset in `out`).
 * Each key's components are rounded to float32 and its dropped component rebuilt ≥ 0 as
 * √(1 − a² − b² − c²), in place in `keys`; two keys' deltas are slerped at `alpha` on the
 * shortest path with the weights of {@link slerpWeights} (left multiplication by the
 * reference is an isometry, so slerping the deltas and then multiplying is slerp of the
 * rotations); then normalise(ref · delta) goes to out, identity where the squared length is
 * not > 0. Every operation is float32 (docs/format.md), in a fixed order (each product's
 * terms left to right; the squared length left to right, then 1 / √, then each product),
 * so four rotations fit one SIMD vector of the WebAssembly kernel, which performs the same
 * operations. A product of two float32 numbers is exact in float64, so the last products
 * need no rounding of their own before the float32 store.
 *
 * The TypeScript decoder (sampler.ts) calls this once per pose over all its rotations, and
 * the compressor through {@link emitRotation} and {@link blendRotations}, so the error the
 * compressor measures is the decoder's; the compressor's search rebuilds its trial keys with
 * the same operations in its own kernel (compress/measure-kernel.wat `rebuild`), which its
 * tests hold to this to the bit. One call per pose keeps every operation inside one
 * loop: a call per rotation measured up to 1.5 × the decode time, the engine inlining none.
 */
export function decodeRotations(
  keys: Float64Array,
  list: Int32Array,
  count: number,
  alpha: number,
  refs: Float64Array,
  out: Float32Array,
): void {
  const f = Math.fround;
  const al = f(alpha),
    beta = f(1 - al);
  for (let i = 0, k = 0, e = 0; i < count; i++, k += ROTATION_SLOT, e += ROTATION_ENTRY) {
    const blend = list[e + 1] >= 0;
    for (let at = k, n = 0; n < (blend ? 2 : 1); n++, at += 4) {
      const drop = list[e + n];
      const a = f(keys[at]),
        b = f(keys[at + 1]),
        c = f(keys[at + 2]);
      const t = f(f(f(1 - f(a * a)) - f(b * b)) - f(c * c));
      const d = t > 0 ? f(Math.sqrt(t)) : 0;
      keys[at] = drop === 0 ? d : a;
      keys[at + 1] = drop === 0 ? a : drop === 1 ? d : b;
      keys[at + 2] = drop <= 1 ? b : drop === 2 ? d : c;
      keys[at + 3] = drop === 3 ? d : c;
    }
    let x = keys[k],
      y = keys[k + 1],
      z = keys[k + 2],
      w = keys[k + 3];
    if (blend) {
      const x1 = keys[k + 4],
        y1 = keys[k + 5],
        z1 = keys[k + 6],
        w1 = keys[k + 7];
      const dot = f(f(f(f(x * x1) + f(y * y1)) + f(z * z1)) + f(w * w1));
      const sign = dot < 0 ? -1 : 1;
      const u = f(1 - dot * sign);
      const wa = slerpWeight(beta, u),
        wb = slerpWeight(al, u) * sign;
      x = f(f(x * wa) + f(x1 * wb));
      y = f(f(y * wa) + f(y1 * wb));
      z = f(f(z * wa) + f(z1 * wb));
      w = f(f(w * wa) + f(w1 * wb));
    }
    const ro = list[e + 2],
      o = list[e + 3];
    const rx = refs[ro],
      ry = refs[ro + 1],
      rz = refs[ro + 2],
      rw = refs[ro + 3];
    const px = f(f(f(f(rw * x) + f(rx * w)) + f(ry * z)) - f(rz * y));
    const py = f(f(f(f(rw * y) - f(rx * z)) + f(ry * w)) + f(rz * x));
    const pz = f(f(f(f(rw * z) + f(rx * y)) - f(ry * x)) + f(rz * w));
    const pw = f(f(f(f(rw * w) - f(rx * x)) - f(ry * y)) - f(rz * z));
    const len2 = f(f(f(f(px * px) + f(py * py)) + f(pz * pz)) + f(pw * pw));
    if (len2 > 0) {
      const inv = f(1 / f(Math.sqrt(len2)));
      out[o] = px * inv;
      out[o + 1] = py * inv;
      out[o + 2] = pz * inv;
      out[o + 3] = pw * inv;
    } else writeIdentity(out, o);
  }
}

/** {@link emitRotation}'s and {@link blendRotations}'s one-entry list. */
const ONE = new Int32Array(ROTATION_ENTRY);

/**
 * Writes one stored rotation key ({@link decodeRotations}): `v[0..2]` are the three stored
 * components of the delta (x, y, z, w without `drop`, overwritten by the rebuilt key in
 * `v[0..3]`); normalise(ref · delta) goes to `out[o..o+3]` (ref = `refs[ro..ro+3]`). The
 * compressor rebuilds keys with it.
 */
export function emitRotation(
  v: Float64Array,
  drop: number,
  refs: Float64Array,
  ro: number,
  out: Float32Array,
  o: number,
): void {
  ONE[0] = drop;
  ONE[1] = -1;
  ONE[2] = ro;
  ONE[3] = o;
  decodeRotations(v, ONE, 1, 0, refs, out);
}

/**
 * Blends two stored rotation keys at alpha = `v[8]` ({@link decodeRotations}): key 0 is
 * `v[0..2]` without `drop0`, key 1 is `v[4..6]` without `drop1` (`v[0..7]` are overwritten
 * by the rebuilt keys); normalise(ref · slerp) goes to `out[o..o+3]`.
 */
export function blendRotations(
  v: Float64Array,
  drop0: number,
  drop1: number,
  refs: Float64Array,
  ro: number,
  out: Float32Array,
  o: number,
): void {
  ONE[0] = drop0;
  ONE[1] = drop1;
  ONE[2] = ro;
  ONE[3] = o;
  decodeRotations(v, ONE, 1, v[8], refs, out);
}

/**
 * Below this 1 − |cos θ| (θ ≲ 0.5 rad of quaternion angle between two keys) slerp weights
 * come from series; above it from Math.acos and Math.sin. A power of two, so that float32
 * and float64 comparisons with it agree.
 */
const SERIES_LIMIT = 0.125;

/** The series' coefficients as float32 numbers (see {@link slerpWeights}). */
const SLERP_SERIES = {
  THETA: [Math.fround(1 / 3), Math.fround(4 / 45), Math.fround(1 / 35)],
  SINE: [Math.fround(-1 / 6), Math.fround(1 / 120), Math.fround(-1 / 5040), Math.fround(1 / 362880)],
} as const;
const T3 = SLERP_SERIES.THETA[0],
  T45 = SLERP_SERIES.THETA[1],
  T35 = SLERP_SERIES.THETA[2];
const S1 = SLERP_SERIES.SINE[0],
  S2 = SLERP_SERIES.SINE[1],
  S3 = SLERP_SERIES.SINE[2],
  S4 = SLERP_SERIES.SINE[3];

/**
 * One slerp weight, sin(xθ)/θ up to the factor both weights share, in float32 arithmetic
 * for a float32 `x` (1 − alpha or alpha) and u = 1 − |cos θ| (float32). Below
 * {@link SERIES_LIMIT}, θ² comes from a series in u and the sine from its Taylor series,
 * both well inside float32 precision there, so no transcendental function runs on the
 * common path; above it, sin(xθ) from Math.acos and Math.sin.
 */
function slerpWeight(x: number, u: number): number {
  return slerpWeightAt(x, u, slerpAngle(u));
}

/**
 * What {@link slerpWeight} works out of u alone (float32): θ² below {@link SERIES_LIMIT},
 * else θ. Both weights of a slerp share it, and so do all fractions of one interval.
 */
export function slerpAngle(u: number): number {
  const f = Math.fround;
  // acos(1 − u)² = 2u + u²/3 + 4u³/45 + u⁴/35 + …
  if (u < SERIES_LIMIT) return f(u * f(2 + f(u * f(T3 + f(u * f(T45 + f(u * T35)))))));
  return f(Math.acos(u > 1 ? 0 : f(1 - u)));
}

/** {@link slerpWeight} of `x` from u and its {@link slerpAngle}: the same float32 result. */
export function slerpWeightAt(x: number, u: number, angle: number): number {
  const f = Math.fround;
  if (u < SERIES_LIMIT) {
    // sin(xθ)/θ = x (1 − s/6 + s²/120 − s³/5040 + s⁴/362880) with s = (xθ)², in Horner form
    // with constant coefficients: multiplications only (a division costs several).
    const s = f(f(x * x) * angle);
    return f(x * f(1 + f(s * f(S1 + f(s * f(S2 + f(s * f(S3 + f(s * S4)))))))));
  }
  return f(Math.sin(f(x * angle)));
}

/**
 * Slerp weights, up to a common factor, in float32 arithmetic: for unit quaternions a and
 * b with `dot` = a · b and alpha = `v[6]` (both rounded to float32 here), writes wa to
 * `v[6]` and wb to `v[7]` so that normalise(wa·a + wb·b) is slerp(a, b, alpha) on the
 * shortest path (wb carries the sign of `dot`). The weights are sin((1 − alpha)θ)/θ and
 * sin(alpha·θ)/θ ({@link slerpWeight}).
 */
export function slerpWeights(v: Float64Array, dot: number): void {
  const f = Math.fround;
  const alpha = f(v[6]);
  const d = f(dot);
  const sign = d < 0 ? -1 : 1;
  const u = f(1 - d * sign);
  v[6] = slerpWeight(f(1 - alpha), u);
  v[7] = slerpWeight(alpha, u) * sign;
}
