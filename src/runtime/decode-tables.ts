/**
 * The decode tables a {@link CompressedClip} derives at open time: one buffer laid out in
 * the order a pose decode reads it, shared by every {@link ClipSampler} of the clip.
 */
import { ANIMATED_COMPONENTS, DROP_SHIFT, RATE_MASK, RAW_BITS, SEGMENT_RANGE_BYTES, TRACK_KIND } from './format.js';
import { segmentConstant, segmentOffset, segmentStep } from './bits.js';
import type { CompressedClip } from './compressed-clip.js';
import type { ClipSampler } from './sampler.js';

/**
 * The decode tables derived at open time, read by {@link ClipSampler}. Immutable after
 * {@link CompressedClip.open}. Internal: the layout may change without notice.
 *
 * Everything a pose decode reads besides the packed keys sits in one buffer, in the order
 * the decode reads it (see {@link TABLE}): the base pose, the rotation references, then per
 * segment a header record and one 32-byte record per animated track holding the track's
 * pose offset, kind and step flag, its components' bits and dropped component, and the
 * dequantisation offset and step of each stored component. A pose therefore reads three
 * sequential streams (base pose and references, one segment's records, the packed keys)
 * and prepares nothing per segment, so a clip that no cache holds costs few misses.
 * @internal
 */
export interface ClipTables {
  readonly bytes: Uint8Array;
  readonly words: Uint32Array;
  /** Float32 view of the decode buffer. */
  readonly f32: Float32Array;
  /** Int32 view of the same buffer. */
  readonly i32: Int32Array;
  /** Float64 view of the same buffer. */
  readonly f64: Float64Array;
  /** Floats of the base pose, at f32[0..poseFloats): identity for default tracks, stored values for constant ones. */
  readonly poseFloats: number;
  /** f64 index of the first rotation reference (xyzw per animated rotation, in track order). */
  readonly refsAt: number;
  /** i32 index of segment 0's header record. */
  readonly segAt: number;
  /** i32 words per segment: a header record and one record per animated track. */
  readonly segStride: number;
  /** The base pose as its own view (for tools; the sampler reads f32). */
  readonly basePose: Float32Array;
  /** Pose float offset of each animated track. */
  readonly animBoneOffset: Int32Array;
  readonly animKind: Uint8Array;
  /** 1 for an animated track held between samples (STEP). */
  readonly animStep: Uint8Array;
  /** Track → animated index, or -1. */
  readonly animTrackOfTrack: Int32Array;
  /** Byte offset of each segment's rate bytes. */
  readonly segRates: Uint32Array;
}

/**
 * The decode buffer's records, in 32-bit words. A track record is
 * [meta, bits, offset0, step0, offset1, step1, offset2, step2]: `meta` holds the pose
 * offset (low {@link TABLE.POSE_BITS} bits), the kind, the STEP flag, whether the track is
 * constant in the segment and whether a component is a raw float; `bits` holds the bits
 * of the three stored components (a byte each) and the dropped component (top byte).
 * A segment header record is [bit offset of key 0, bits per key, 0 × 6].
 * @internal
 */
export const TABLE = {
  RECORD: 8,
  POSE_BITS: 20,
  POSE_MASK: 0xfffff,
  KIND_SHIFT: 20,
  STEP: 1 << 22,
  CONSTANT: 1 << 23,
  RAW: 1 << 24,
} as const;

/**
 * Lays out the decode buffer (see {@link ClipTables}) from the validated sections: each
 * segment's dequantisation offsets and steps are computed here once, with the arithmetic
 * of bits.ts, so sampling prepares nothing.
 */
export function buildTables(
  bytes: Uint8Array, words: Uint32Array, basePose: Float32Array, animKind: Uint8Array, animBoneOffset: Int32Array, animStep: Uint8Array,
  animTrackOfTrack: Int32Array, clipRanges: Float64Array, animRange: Int32Array, refs: Float64Array,
  segRates: Uint32Array, segRanges: Uint32Array, segBits: Int32Array, segKeyBits: Uint32Array, compBits: Uint8Array,
): ClipTables {
  const animated = animKind.length;
  const segments = segRates.length;
  let rotations = 0;
  for (let j = 0; j < animated; j++) if (animKind[j] === TRACK_KIND.ROTATION) rotations++;
  const poseFloats = basePose.length;
  // Float64 references need an 8-byte aligned start; records start on a 32-byte boundary.
  const refsAt = Math.ceil(poseFloats / 2);
  const segAt = Math.ceil((2 * (refsAt + 4 * rotations)) / TABLE.RECORD) * TABLE.RECORD;
  const segStride = TABLE.RECORD * (1 + animated);
  const buffer = new ArrayBuffer(4 * (segAt + segments * segStride));
  const f32 = new Float32Array(buffer), i32 = new Int32Array(buffer), f64 = new Float64Array(buffer);
  f32.set(basePose);
  for (let j = 0, r = refsAt; j < animated; j++) {
    if (animKind[j] !== TRACK_KIND.ROTATION) continue;
    for (let c = 0; c < 4; c++) f64[r + c] = refs[4 * j + c];
    r += 4;
  }
  for (let s = 0; s < segments; s++) {
    const head = segAt + s * segStride;
    i32[head] = segBits[s];
    i32[head + 1] = segKeyBits[s];
    const rates = segRates[s], rng = segRanges[s];
    for (let j = 0; j < animated; j++) {
      const at = head + TABLE.RECORD * (1 + j);
      const kind = animKind[j];
      const rb = bytes[rates + j];
      const rate = rb & RATE_MASK;
      const drop = kind === TRACK_KIND.ROTATION ? rb >>> DROP_SHIFT : 3;
      const cb = (s * animated + j) * ANIMATED_COMPONENTS;
      let meta = animBoneOffset[j] | (kind << TABLE.KIND_SHIFT) | (animStep[j] ? TABLE.STEP : 0);
      if (rate === 0) meta |= TABLE.CONSTANT;
      if (rate === RAW_BITS) meta |= TABLE.RAW;
      i32[at] = meta;
      i32[at + 1] = compBits[cb] | (compBits[cb + 1] << 8) | (compBits[cb + 2] << 16) | ((kind === TRACK_KIND.ROTATION ? drop : 0) << 24);
      if (rate === RAW_BITS) continue;
      const ro = animRange[j];
      const rangeAt = rng + j * SEGMENT_RANGE_BYTES;
      for (let c = 0; c < ANIMATED_COMPONENTS; c++) {
        // Stored slot c holds component c, or c + 1 at and after the dropped one.
        const r = ro + 2 * (c < drop ? c : c + 1);
        if (rate === 0) {
          // Constant in the segment: 0 bits, value = offset.
          f32[at + 2 + 2 * c] = segmentConstant(clipRanges[r], clipRanges[r + 1], bytes[rangeAt + 2 * c] | (bytes[rangeAt + 2 * c + 1] << 8));
        } else {
          f32[at + 2 + 2 * c] = segmentOffset(clipRanges[r], clipRanges[r + 1], bytes[rangeAt + 2 * c]);
          f32[at + 3 + 2 * c] = segmentStep(clipRanges[r + 1], bytes[rangeAt + 2 * c + 1], compBits[cb + c]);
        }
      }
    }
  }
  return {
    bytes, words, f32, i32, f64, poseFloats, refsAt, segAt, segStride,
    basePose: f32.subarray(0, poseFloats), animBoneOffset, animKind, animStep, animTrackOfTrack, segRates,
  };
}

