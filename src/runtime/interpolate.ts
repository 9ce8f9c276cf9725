/**
 * Per-component reconstruction and interpolation on flat arrays, no allocation. The
 * compressor reconstructs keys with these same functions, so its measured error is the
 * decoder's.
 */

/** w of a unit quaternion from x, y, z with w ≥ 0 (0 when rounding pushed x² + y² + z² past 1). */
export function rebuildW(x: number, y: number, z: number): number {
  const t = 1 - x * x - y * y - z * z;
  return t > 0 ? Math.sqrt(t) : 0;
}

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
 * Rebuilds a unit quaternion from its three stored components `a, b, c` (in x, y, z, w
 * order without the dropped one) and the dropped component `drop` (0..3), taken ≥ 0.
 * Writes x, y, z, w at `out[o..o+3]`.
 */
export function rebuildDropped(a: number, b: number, c: number, drop: number, out: Float64Array, o: number): void {
  const t = 1 - a * a - b * b - c * c;
  const d = t > 0 ? Math.sqrt(t) : 0;
  switch (drop) {
    case 0: out[o] = d; out[o + 1] = a; out[o + 2] = b; out[o + 3] = c; break;
    case 1: out[o] = a; out[o + 1] = d; out[o + 2] = b; out[o + 3] = c; break;
    case 2: out[o] = a; out[o + 1] = b; out[o + 2] = d; out[o + 3] = c; break;
    default: out[o] = a; out[o + 1] = b; out[o + 2] = c; out[o + 3] = d; break;
  }
}

/** Writes normalise(ref · q) at `out[o..o+3]`; `q` is `src[so..so+3]` (a delta from the track's reference). */
export function writeRelativeRotation(refs: Float64Array, ro: number, src: Float64Array, so: number, out: Float32Array, o: number): void {
  const rx = refs[ro], ry = refs[ro + 1], rz = refs[ro + 2], rw = refs[ro + 3];
  const x = src[so], y = src[so + 1], z = src[so + 2], w = src[so + 3];
  writeRotation(
    rw * x + rx * w + ry * z - rz * y,
    rw * y - rx * z + ry * w + rz * x,
    rw * z + rx * y - ry * x + rz * w,
    rw * w - rx * x - ry * y - rz * z,
    out, o,
  );
}

/**
 * nlerp between ref · a and ref · b at `alpha` (a = `src[ao..]`, b = `src[bo..]`), written
 * at `out[o..o+3]`. Left multiplication by ref is linear and keeps dot products' signs, so
 * the deltas are blended first and multiplied once.
 */
export function nlerpRelativeRotation(refs: Float64Array, ro: number, src: Float64Array, ao: number, bo: number, alpha: number, out: Float32Array, o: number): void {
  const ax = src[ao], ay = src[ao + 1], az = src[ao + 2], aw = src[ao + 3];
  const bx = src[bo], by = src[bo + 1], bz = src[bo + 2], bw = src[bo + 3];
  const wa = 1 - alpha;
  const wb = ax * bx + ay * by + az * bz + aw * bw < 0 ? -alpha : alpha;
  const x = ax * wa + bx * wb, y = ay * wa + by * wb, z = az * wa + bz * wb, w = aw * wa + bw * wb;
  const rx = refs[ro], ry = refs[ro + 1], rz = refs[ro + 2], rw = refs[ro + 3];
  writeRotation(
    rw * x + rx * w + ry * z - rz * y,
    rw * y - rx * z + ry * w + rz * x,
    rw * z + rx * y - ry * x + rz * w,
    rw * w - rx * x - ry * y - rz * z,
    out, o,
  );
}
