/**
 * Writing a quaternion into a pose: its own leaf module, so the clip reader (which
 * normalises constant rotations) does not bring interpolate.ts's rotation decode with it
 * into a page where only the WebAssembly kernel decodes.
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
  } else writeIdentity(out, o);
}

/** Writes the identity quaternion at `out[o..o+3]`. */
export function writeIdentity(out: Float32Array, o: number): void {
  out[o] = 0;
  out[o + 1] = 0;
  out[o + 2] = 0;
  out[o + 3] = 1;
}
