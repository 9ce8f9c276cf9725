/**
 * Per-component reconstruction and interpolation on flat arrays, no allocation. The
 * compressor reconstructs keys with these same functions, so its measured error is the
 * decoder's.
 */

/** Normalises (x, y, z, w) and writes it at `out[o..o+3]`; a zero quaternion becomes identity. */
export function writeRotation(x: number, y: number, z: number, w: number, out: Float32Array, o: number): void {
  const len2 = x * x + y * y + z * z + w * w;
  if (len2 > 0) {
    const inv = 1 / Math.sqrt(len2);
    out[o] = x * inv;
    out[o + 1] = y * inv;
    out[o + 2] = z * inv;
    out[o + 3] = w * inv;
  } else {
    out[o] = 0;
    out[o + 1] = 0;
    out[o + 2] = 0;
    out[o + 3] = 1;
  }
}

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

/**
 * normalise(ref · q) for the float32 quaternions ref = `refs[ro..ro+3]` and q = (x, y, z,
 * w), in float32 arithmetic (each product's terms left to right; the squared length left to
 * right, then 1 / √, then each product), written at `out[o..o+3]`; identity when the
 * squared length is not > 0. A product of two float32 numbers is exact in float64, so the
 * last products need no rounding of their own before the float32 store. The emit and the
 * blend below end here; sampler.ts's decode loop writes the same operations inline.
 */
function writeRefProduct(
  refs: Float64Array,
  ro: number,
  x: number,
  y: number,
  z: number,
  w: number,
  out: Float32Array,
  o: number,
): void {
  const f = Math.fround;
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
  } else {
    out[o] = 0;
    out[o + 1] = 0;
    out[o + 2] = 0;
    out[o + 3] = 1;
  }
}

/**
 * Writes one stored rotation key: `v[0..2]` are the three stored components of the delta
 * (x, y, z, w without `drop`), rounded to float32 here; the dropped one is rebuilt ≥ 0, and
 * normalise(ref · delta) goes to `out[o..o+3]` (ref = `refs[ro..ro+3]`, float32 numbers).
 * Every operation is float32 (docs/format.md), so four rotations fit one SIMD vector of the
 * WebAssembly kernel. The compressor rebuilds keys with this same function, so the error
 * it measures is the decoder's. Numbers travel in arrays so a call that is not inlined
 * boxes nothing.
 */
export function emitRotation(
  v: Float64Array,
  drop: number,
  refs: Float64Array,
  ro: number,
  out: Float32Array,
  o: number,
): void {
  const f = Math.fround;
  const a = f(v[0]),
    b = f(v[1]),
    c = f(v[2]);
  const t = f(f(f(1 - f(a * a)) - f(b * b)) - f(c * c));
  const d = t > 0 ? f(Math.sqrt(t)) : 0;
  const x = drop === 0 ? d : a;
  const y = drop === 0 ? a : drop === 1 ? d : b;
  const z = drop <= 1 ? b : drop === 2 ? d : c;
  const w = drop === 3 ? d : c;
  writeRefProduct(refs, ro, x, y, z, w, out, o);
}

/**
 * Below this 1 − |cos θ| (θ ≲ 0.5 rad of quaternion angle between two keys) slerp weights
 * come from series; above it from Math.acos and Math.sin. A power of two, so that float32
 * and float64 comparisons with it agree.
 */
export const SERIES_LIMIT = 0.125;

/** The series' coefficients as float32 numbers (see {@link slerpWeights}). */
export const SLERP_SERIES = {
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
 * Slerp weights, up to a common factor, in float32 arithmetic: for unit quaternions a and
 * b with `dot` = a · b and alpha = `v[6]` (both rounded to float32 here), writes wa to
 * `v[6]` and wb to `v[7]` so that normalise(wa·a + wb·b) is slerp(a, b, alpha) on the
 * shortest path (wb carries the sign of `dot`). The weights are sin((1 − alpha)θ)/θ and
 * sin(alpha·θ)/θ; for the small angles between neighbouring keys θ² comes from a series in
 * 1 − cos θ and the sines from their Taylor series, both well inside float32 precision
 * there, so no transcendental function runs on the common path.
 */
export function slerpWeights(v: Float64Array, dot: number): void {
  const f = Math.fround;
  const alpha = f(v[6]);
  const d = f(dot);
  const sign = d < 0 ? -1 : 1;
  const u = f(1 - d * sign);
  const beta = f(1 - alpha);
  let wa: number, wb: number;
  if (u < SERIES_LIMIT) {
    // acos(1 − u)² = 2u + u²/3 + 4u³/45 + u⁴/35 + …
    const theta2 = f(u * f(2 + f(u * f(T3 + f(u * f(T45 + f(u * T35)))))));
    const a2 = f(f(alpha * alpha) * theta2),
      b2 = f(f(beta * beta) * theta2);
    // sin(xθ)/θ = x (1 − s/6 + s²/120 − s³/5040 + s⁴/362880) with s = (xθ)², in Horner form
    // with constant coefficients: multiplications only (a division costs several).
    wb = f(alpha * f(1 + f(a2 * f(S1 + f(a2 * f(S2 + f(a2 * f(S3 + f(a2 * S4)))))))));
    wa = f(beta * f(1 + f(b2 * f(S1 + f(b2 * f(S2 + f(b2 * f(S3 + f(b2 * S4)))))))));
  } else {
    const theta = f(Math.acos(u > 1 ? 0 : f(1 - u)));
    wa = f(Math.sin(f(beta * theta)));
    wb = f(Math.sin(f(alpha * theta)));
  }
  v[6] = wa;
  v[7] = wb * sign;
}

/**
 * Blends two stored rotation keys at alpha = `v[6]` (`v[6..7]` are overwritten): key 0 is
 * `v[0..2]` without `drop0`, key 1 is `v[3..5]` without `drop1`, each rounded to float32.
 * The deltas are slerped on the shortest path with {@link slerpWeights} (left
 * multiplication by ref is an isometry, so slerping the deltas and then multiplying is
 * slerp of the rotations), multiplied by ref once and normalised into `out[o..o+3]`, all in
 * float32 as {@link emitRotation}. The rebuild of each key repeats emitRotation's on
 * purpose: sharing it through a scratch array measured 6 % slower per pose.
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
  const f = Math.fround;
  const a0 = f(v[0]),
    b0 = f(v[1]),
    c0 = f(v[2]);
  const t0 = f(f(f(1 - f(a0 * a0)) - f(b0 * b0)) - f(c0 * c0));
  const d0 = t0 > 0 ? f(Math.sqrt(t0)) : 0;
  const x0 = drop0 === 0 ? d0 : a0;
  const y0 = drop0 === 0 ? a0 : drop0 === 1 ? d0 : b0;
  const z0 = drop0 <= 1 ? b0 : drop0 === 2 ? d0 : c0;
  const w0 = drop0 === 3 ? d0 : c0;
  const a1 = f(v[3]),
    b1 = f(v[4]),
    c1 = f(v[5]);
  const t1 = f(f(f(1 - f(a1 * a1)) - f(b1 * b1)) - f(c1 * c1));
  const d1 = t1 > 0 ? f(Math.sqrt(t1)) : 0;
  const x1 = drop1 === 0 ? d1 : a1;
  const y1 = drop1 === 0 ? a1 : drop1 === 1 ? d1 : b1;
  const z1 = drop1 <= 1 ? b1 : drop1 === 2 ? d1 : c1;
  const w1 = drop1 === 3 ? d1 : c1;
  slerpWeights(v, f(f(f(f(x0 * x1) + f(y0 * y1)) + f(z0 * z1)) + f(w0 * w1)));
  const wa = v[6],
    wb = v[7];
  writeRefProduct(
    refs,
    ro,
    f(f(x0 * wa) + f(x1 * wb)),
    f(f(y0 * wa) + f(y1 * wb)),
    f(f(z0 * wa) + f(z1 * wb)),
    f(f(w0 * wa) + f(w1 * wb)),
    out,
    o,
  );
}
