/**
 * Stage 1: rotations normalised and put on the w ≥ 0 hemisphere (q and −q are the same
 * rotation), so w can be dropped and rebuilt by the decoder.
 */
import type { RawClip } from '../clip/raw-clip.js';
import { decodeReference } from '../runtime/bits.js';
import { ROTATION_CODE_SCALE } from '../runtime/format.js';

/** Normalised rotations with w ≥ 0, same layout as `clip.rotations`. A zero quaternion becomes identity. */
export function preprocessRotations(clip: RawClip): Float32Array {
  const src = clip.rotations;
  const out = new Float32Array(src.length);
  for (let i = 0; i < src.length; i += 4) {
    let x = src[i],
      y = src[i + 1],
      z = src[i + 2],
      w = src[i + 3];
    const len = Math.sqrt(x * x + y * y + z * z + w * w);
    if (len === 0) {
      out[i + 3] = 1;
      continue;
    }
    const k = (w < 0 ? -1 : 1) / len;
    x *= k;
    y *= k;
    z *= k;
    w *= k;
    out[i] = x;
    out[i + 1] = y;
    out[i + 2] = z;
    out[i + 3] = w;
  }
  return out;
}

/** How the reference of an animated rotation track is chosen. */
export type RotationReference = 'mean' | 'identity';

/**
 * Reference of bone `b`'s rotation track, as the file stores it (i16 x, y, z codes, w ≥ 0
 * rebuilt): identity (plain drop-W), or the normalised mean with signs aligned to the
 * first sample. Deltas from the mean stay far from w = 0, where rebuilding w loses
 * precision. The decoded reference is written to `out`; the codes to `outCodes`.
 */
export function rotationReference(
  rotations: Float32Array,
  b: number,
  n: number,
  mode: RotationReference,
  out: Float64Array,
  outCodes: Int16Array,
): void {
  outCodes.fill(0);
  decodeReference(0, 0, 0, out, 0);
  if (mode === 'identity') return;
  const base = b * n * 4;
  const fx = rotations[base],
    fy = rotations[base + 1],
    fz = rotations[base + 2],
    fw = rotations[base + 3];
  let x = 0,
    y = 0,
    z = 0,
    w = 0;
  for (let s = 0; s < n; s++) {
    const i = base + s * 4;
    const sign = rotations[i] * fx + rotations[i + 1] * fy + rotations[i + 2] * fz + rotations[i + 3] * fw < 0 ? -1 : 1;
    x += sign * rotations[i];
    y += sign * rotations[i + 1];
    z += sign * rotations[i + 2];
    w += sign * rotations[i + 3];
  }
  const len = Math.hypot(x, y, z, w);
  if (!(len > 0)) return;
  const k = ((w < 0 ? -1 : 1) * ROTATION_CODE_SCALE) / len;
  outCodes[0] = Math.round(x * k);
  outCodes[1] = Math.round(y * k);
  outCodes[2] = Math.round(z * k);
  decodeReference(outCodes[0], outCodes[1], outCodes[2], out, 0);
}

/**
 * Writes conj(ref) · q / |ref| for every sample of bone `b`, normalised with w ≥ 0, into
 * `out[s * 4 + c]` (xyzw).
 */
export function rotationDeltas(
  rotations: Float32Array,
  b: number,
  n: number,
  ref: Float64Array,
  out: Float32Array,
): void {
  const rx = -ref[0],
    ry = -ref[1],
    rz = -ref[2],
    rw = ref[3];
  for (let s = 0; s < n; s++) {
    const i = (b * n + s) * 4;
    const qx = rotations[i],
      qy = rotations[i + 1],
      qz = rotations[i + 2],
      qw = rotations[i + 3];
    const x = rw * qx + rx * qw + ry * qz - rz * qy;
    const y = rw * qy - rx * qz + ry * qw + rz * qx;
    const z = rw * qz + rx * qy - ry * qx + rz * qw;
    const w = rw * qw - rx * qx - ry * qy - rz * qz;
    const k = (w < 0 ? -1 : 1) / Math.sqrt(x * x + y * y + z * z + w * w);
    out[s * 4] = x * k;
    out[s * 4 + 1] = y * k;
    out[s * 4 + 2] = z * k;
    out[s * 4 + 3] = w * k;
  }
}

/** Below this, |w| is too small to rebuild w well; another component is dropped instead. */
export const MIN_DROPPED_MAGNITUDE = 0.5;

/**
 * Chooses the component each segment drops (w unless its smallest |w| in the segment is
 * under {@link MIN_DROPPED_MAGNITUDE}; then the component whose smallest magnitude is
 * largest) and signs the segment's samples so that component is ≥ 0. `deltas` (xyzw per
 * sample) is updated in place.
 */
export function chooseDroppedComponents(
  deltas: Float32Array,
  starts: Int32Array,
  sizes: Int32Array,
  outDrop: Uint8Array,
): void {
  for (let seg = 0; seg < starts.length; seg++) {
    const start = starts[seg],
      end = start + sizes[seg];
    let drop = 3;
    let best = -1,
      bestComp = 3;
    for (let c = 3; c >= 0; c--) {
      let m = Infinity;
      for (let s = start; s < end; s++) m = Math.min(m, Math.abs(deltas[s * 4 + c]));
      if (c === 3 && m >= MIN_DROPPED_MAGNITUDE) {
        best = m;
        bestComp = 3;
        break;
      }
      if (m > best) {
        best = m;
        bestComp = c;
      }
    }
    drop = bestComp;
    outDrop[seg] = drop;
    for (let s = start; s < end; s++) {
      if (deltas[s * 4 + drop] < 0) for (let c = 0; c < 4; c++) deltas[s * 4 + c] = -deltas[s * 4 + c];
    }
  }
}
