/**
 * Samples a raw clip between keys the way the runtime decoder samples a compressed one
 * (clamped time on the clip's own timeline, slerp on the shortest path for rotations, lerp
 * otherwise, held values for STEP tracks), so the two poses compared at time t were
 * interpolated alike and only the compression differs.
 */
import { POSE_STRIDE, type RawClip } from 'bonepress';
import { slerpWeights } from 'bonepress/runtime';

const weights = new Float64Array(8);

/** A fraction of a sample this close to a whole sample is that sample (as in the decoder). */
const SNAP = 1e-6;

/** Keys around `time` and the blend between them, with clamping at the clip's ends. */
export function locateKeys(
  time: number,
  sampleRate: number,
  sampleCount: number,
): { k0: number; k1: number; alpha: number } {
  if (sampleCount <= 1) return { k0: 0, k1: 0, alpha: 0 };
  const pos = time > 0 ? time * sampleRate : 0;
  if (pos >= sampleCount - 1) return { k0: sampleCount - 1, k1: sampleCount - 1, alpha: 0 };
  let k0 = Math.floor(pos);
  let alpha = pos - k0;
  if (alpha < SNAP) alpha = 0;
  else if (alpha > 1 - SNAP) {
    k0 += 1;
    alpha = 0;
  }
  return { k0, k1: alpha === 0 ? k0 : k0 + 1, alpha };
}

/** Writes the pose of `clip` at `time` seconds into `out` ({@link POSE_STRIDE} floats per bone). */
export function sampleRawClip(clip: RawClip, time: number, out: Float32Array): Float32Array {
  const n = clip.sampleCount;
  const { k0, k1, alpha: blend } = locateKeys(time - (clip.startTime ?? 0), clip.sampleRate, n);
  const r = clip.rotations,
    t = clip.translations,
    s = clip.scales;
  const boneCount = clip.skeleton.parents.length;
  for (let b = 0; b < boneCount; b++) {
    const i0 = b * n + k0,
      i1 = b * n + k1,
      o = b * POSE_STRIDE;
    const held = clip.stepMask?.[b * 3] === 1;
    const ax = r[i0 * 4],
      ay = r[i0 * 4 + 1],
      az = r[i0 * 4 + 2],
      aw = r[i0 * 4 + 3];
    const bx = r[i1 * 4],
      by = r[i1 * 4 + 1],
      bz = r[i1 * 4 + 2],
      bw = r[i1 * 4 + 3];
    weights[6] = held ? 0 : blend;
    slerpWeights(weights, ax * bx + ay * by + az * bz + aw * bw);
    const wa = weights[6],
      wb = weights[7];
    const x = ax * wa + bx * wb,
      y = ay * wa + by * wb,
      z = az * wa + bz * wb,
      w = aw * wa + bw * wb;
    const len = Math.hypot(x, y, z, w);
    if (len > 0) {
      out[o] = x / len;
      out[o + 1] = y / len;
      out[o + 2] = z / len;
      out[o + 3] = w / len;
    } else {
      out[o] = 0;
      out[o + 1] = 0;
      out[o + 2] = 0;
      out[o + 3] = 1;
    }
    const at = clip.stepMask?.[b * 3 + 1] === 1 ? 0 : blend,
      as = clip.stepMask?.[b * 3 + 2] === 1 ? 0 : blend;
    for (let c = 0; c < 3; c++) {
      out[o + 4 + c] = t[i0 * 3 + c] + (t[i1 * 3 + c] - t[i0 * 3 + c]) * at;
      out[o + 7 + c] = s[i0 * 3 + c] + (s[i1 * 3 + c] - s[i0 * 3 + c]) * as;
    }
  }
  return out;
}
