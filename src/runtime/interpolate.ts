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
    out[o] = 0; out[o + 1] = 0; out[o + 2] = 0; out[o + 3] = 1;
  }
}

/**
 * Normalised lerp on the shortest path from a to b at `alpha` (0..1), written at
 * `out[o..o+3]`.
 */
export function nlerpRotation(
  ax: number, ay: number, az: number, aw: number,
  bx: number, by: number, bz: number, bw: number,
  alpha: number, out: Float32Array, o: number,
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
 * Writes one stored rotation key: `v[0..2]` are the three stored components of the delta
 * (x, y, z, w without `drop`), the dropped one is rebuilt ≥ 0, and normalise(ref · delta)
 * goes to `out[o..o+3]` (ref = `refs[ro..ro+3]`). The compressor rebuilds keys with this
 * same function, so the error it measures is the decoder's. Numbers travel in arrays so a
 * call that is not inlined boxes nothing.
 */
export function emitRotation(v: Float64Array, drop: number, refs: Float64Array, ro: number, out: Float32Array, o: number): void {
  const a = v[0], b = v[1], c = v[2];
  const t = 1 - a * a - b * b - c * c;
  const d = t > 0 ? Math.sqrt(t) : 0;
  const x = drop === 0 ? d : a;
  const y = drop === 0 ? a : drop === 1 ? d : b;
  const z = drop <= 1 ? b : drop === 2 ? d : c;
  const w = drop === 3 ? d : c;
  const rx = refs[ro], ry = refs[ro + 1], rz = refs[ro + 2], rw = refs[ro + 3];
  const px = rw * x + rx * w + ry * z - rz * y;
  const py = rw * y - rx * z + ry * w + rz * x;
  const pz = rw * z + rx * y - ry * x + rz * w;
  const pw = rw * w - rx * x - ry * y - rz * z;
  writeRotation(px, py, pz, pw, out, o);
}

/** Below this 1 − |cos θ| (θ ≲ 0.49 rad of quaternion angle between two keys) slerp weights come from series; above it from Math.acos and Math.sin. */
export const SERIES_LIMIT = 0.12;

/**
 * Slerp weights, up to a common factor: for unit quaternions a and b with `dot` = a · b and
 * alpha = `v[6]`, writes wa to `v[6]` and wb to `v[7]` so that normalise(wa·a + wb·b) is
 * slerp(a, b, alpha) on the shortest path (wb carries the sign of `dot`). The weights are
 * sin((1 − alpha)θ)/θ and sin(alpha·θ)/θ; for the small angles between neighbouring keys
 * θ² comes from a series in 1 − cos θ and the sines from their Taylor series, both exact
 * to about 1e-8 there, so no transcendental function runs on the common path.
 */
export function slerpWeights(v: Float64Array, dot: number): void {
  const alpha = v[6];
  const sign = dot < 0 ? -1 : 1;
  const u = 1 - dot * sign;
  const beta = 1 - alpha;
  let wa: number, wb: number;
  if (u < SERIES_LIMIT) {
    // acos(1 − u)² = 2u + u²/3 + 4u³/45 + u⁴/35 + …
    const theta2 = u * (2 + u * (1 / 3 + u * (4 / 45 + u * (1 / 35))));
    const a2 = alpha * alpha * theta2, b2 = beta * beta * theta2;
    // sin(xθ)/θ = x (1 − s/6 + s²/120 − s³/5040 + s⁴/362880) with s = (xθ)², in Horner form
    // with constant coefficients: multiplications only (a division costs several).
    wb = alpha * (1 + a2 * (-1 / 6 + a2 * (1 / 120 + a2 * (-1 / 5040 + a2 * (1 / 362880)))));
    wa = beta * (1 + b2 * (-1 / 6 + b2 * (1 / 120 + b2 * (-1 / 5040 + b2 * (1 / 362880)))));
  } else {
    const theta = Math.acos(u > 1 ? 0 : 1 - u);
    wa = Math.sin(beta * theta);
    wb = Math.sin(alpha * theta);
  }
  v[6] = wa;
  v[7] = wb * sign;
}

/**
 * Blends two stored rotation keys at alpha = `v[6]` (`v[6..7]` are overwritten): key 0 is
 * `v[0..2]` without `drop0`, key 1 is `v[3..5]` without `drop1`. The deltas are slerped on
 * the shortest path with {@link slerpWeights} (left multiplication by ref is an isometry,
 * so slerping the deltas and then multiplying is slerp of the rotations), multiplied by ref
 * once and normalised into `out[o..o+3]`. The rebuild of each key repeats emitRotation's on
 * purpose: sharing it through a scratch array measured 6 % slower per pose.
 */
export function blendRotations(v: Float64Array, drop0: number, drop1: number, refs: Float64Array, ro: number, out: Float32Array, o: number): void {
  const a0 = v[0], b0 = v[1], c0 = v[2];
  const t0 = 1 - a0 * a0 - b0 * b0 - c0 * c0;
  const d0 = t0 > 0 ? Math.sqrt(t0) : 0;
  const x0 = drop0 === 0 ? d0 : a0;
  const y0 = drop0 === 0 ? a0 : drop0 === 1 ? d0 : b0;
  const z0 = drop0 <= 1 ? b0 : drop0 === 2 ? d0 : c0;
  const w0 = drop0 === 3 ? d0 : c0;
  const a1 = v[3], b1 = v[4], c1 = v[5];
  const t1 = 1 - a1 * a1 - b1 * b1 - c1 * c1;
  const d1 = t1 > 0 ? Math.sqrt(t1) : 0;
  const x1 = drop1 === 0 ? d1 : a1;
  const y1 = drop1 === 0 ? a1 : drop1 === 1 ? d1 : b1;
  const z1 = drop1 <= 1 ? b1 : drop1 === 2 ? d1 : c1;
  const w1 = drop1 === 3 ? d1 : c1;
  slerpWeights(v, x0 * x1 + y0 * y1 + z0 * z1 + w0 * w1);
  const wa = v[6], wb = v[7];
  const x = x0 * wa + x1 * wb, y = y0 * wa + y1 * wb, z = z0 * wa + z1 * wb, w = w0 * wa + w1 * wb;
  const rx = refs[ro], ry = refs[ro + 1], rz = refs[ro + 2], rw = refs[ro + 3];
  const px = rw * x + rx * w + ry * z - rz * y;
  const py = rw * y - rx * z + ry * w + rz * x;
  const pz = rw * z + rx * y - ry * x + rz * w;
  const pw = rw * w - rx * x - ry * y - rz * z;
  writeRotation(px, py, pz, pw, out, o);
}
