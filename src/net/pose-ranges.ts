/**
 * Pose ranges: the value range of every track over the poses a snapshot stream will send,
 * measured from a clip or merged over several. A schema's bit counts are derived from them
 * (see schema.ts).
 */
import type { RawClip } from '../clip/raw-clip.js';
import { NET_ERROR, NetError } from './bit-stream.js';

/**
 * Value ranges of every track over the poses a stream will send, per bone: quaternion
 * components (normalised, w ≥ 0), translation and scale components. Built by
 * {@link measurePoseRanges}; {@link mergePoseRanges} covers several clips.
 */
export interface PoseRanges {
  readonly boneCount: number;
  /** 4 per bone. */
  readonly rotationMin: Float32Array;
  readonly rotationMax: Float32Array;
  /** 3 per bone, in the clip's unit. */
  readonly translationMin: Float32Array;
  readonly translationMax: Float32Array;
  /** 3 per bone. */
  readonly scaleMin: Float32Array;
  readonly scaleMax: Float32Array;
}

/** The ranges of every track of `clip` (allocates the result). */
export function measurePoseRanges(clip: RawClip): PoseRanges {
  const boneCount = clip.skeleton.boneNames.length;
  const n = clip.sampleCount;
  const r = emptyRanges(boneCount);
  const rot = clip.rotations,
    tr = clip.translations,
    sc = clip.scales;
  for (let b = 0; b < boneCount; b++) {
    for (let s = 0; s < n; s++) {
      const i = b * n + s;
      const x = rot[i * 4],
        y = rot[i * 4 + 1],
        z = rot[i * 4 + 2],
        w = rot[i * 4 + 3];
      const len = Math.sqrt(x * x + y * y + z * z + w * w);
      const k = (w < 0 ? -1 : 1) / (len > 0 ? len : 1);
      widen(r.rotationMin, r.rotationMax, b * 4, x * k);
      widen(r.rotationMin, r.rotationMax, b * 4 + 1, y * k);
      widen(r.rotationMin, r.rotationMax, b * 4 + 2, z * k);
      widen(r.rotationMin, r.rotationMax, b * 4 + 3, w * k);
      for (let c = 0; c < 3; c++) {
        widen(r.translationMin, r.translationMax, b * 3 + c, tr[i * 3 + c]);
        widen(r.scaleMin, r.scaleMax, b * 3 + c, sc[i * 3 + c]);
      }
    }
  }
  return r;
}

/** Ranges covering both `a` and `b` (same bone count; throws {@link NetError} otherwise). */
export function mergePoseRanges(a: PoseRanges, b: PoseRanges): PoseRanges {
  if (a.boneCount !== b.boneCount)
    throw new NetError(NET_ERROR.BAD_ARGUMENT, `cannot merge ranges of ${a.boneCount} and ${b.boneCount} bones`);
  const m = emptyRanges(a.boneCount);
  const pairs: [Float32Array, Float32Array, Float32Array, Float32Array, Float32Array, Float32Array][] = [
    [m.rotationMin, m.rotationMax, a.rotationMin, a.rotationMax, b.rotationMin, b.rotationMax],
    [m.translationMin, m.translationMax, a.translationMin, a.translationMax, b.translationMin, b.translationMax],
    [m.scaleMin, m.scaleMax, a.scaleMin, a.scaleMax, b.scaleMin, b.scaleMax],
  ];
  for (const [lo, hi, alo, ahi, blo, bhi] of pairs) {
    for (let i = 0; i < lo.length; i++) {
      lo[i] = Math.min(alo[i], blo[i]);
      hi[i] = Math.max(ahi[i], bhi[i]);
    }
  }
  return m;
}

function emptyRanges(boneCount: number): PoseRanges {
  return {
    boneCount,
    rotationMin: new Float32Array(boneCount * 4).fill(Infinity),
    rotationMax: new Float32Array(boneCount * 4).fill(-Infinity),
    translationMin: new Float32Array(boneCount * 3).fill(Infinity),
    translationMax: new Float32Array(boneCount * 3).fill(-Infinity),
    scaleMin: new Float32Array(boneCount * 3).fill(Infinity),
    scaleMax: new Float32Array(boneCount * 3).fill(-Infinity),
  };
}

function widen(lo: Float32Array, hi: Float32Array, i: number, v: number): void {
  if (v < lo[i]) lo[i] = v;
  if (v > hi[i]) hi[i] = v;
}
