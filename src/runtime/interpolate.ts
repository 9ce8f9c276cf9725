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
