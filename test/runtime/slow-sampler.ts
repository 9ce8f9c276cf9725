/**
 * The decoder's arithmetic the slow way, for tests: every key is read from the file's own
 * sections with readBits, dequantised with bits.ts's segmentOffset / segmentStep /
 * segmentConstant and rebuilt with interpolate.ts's emitRotation / blendRotations — the
 * functions the compressor measures with. The fast sampler (src/runtime/sampler.ts) calls
 * them over its open-time tables, and the kernel (kernel.wat) performs the same operations
 * lane by lane; both must give these bits.
 */
import {
  decodeReference,
  floatFromBits,
  readBits,
  rotationRangeExtent,
  rotationRangeMin,
  segmentConstant,
  segmentOffset,
  segmentStep,
  trackComponentBits,
} from '../../src/runtime/bits.js';
import type { CompressedClip } from '../../src/runtime/compressed-clip.js';
import { animatedTrack } from '../../src/runtime/clip-inspection.js';
import {
  DROP_SHIFT,
  HEADER,
  RATE_MASK,
  RAW_BITS,
  SEGMENT_RANGE_BYTES,
  SEGMENT_SIZE,
  TRACK_KIND,
  align4,
  segmentSampleCount,
} from '../../src/runtime/format.js';
import { blendRotations, emitRotation } from '../../src/runtime/interpolate.js';
import { POSE_STRIDE } from '../../src/runtime/pose.js';
import { isStepTrack } from '../../src/runtime/clip-inspection.js';

interface SlowSegment {
  rates: Uint8Array;
  /** Offset and step of each (track, stored component). */
  offsets: Float64Array;
  steps: Float64Array;
  bits: Uint8Array;
  dataBit: number;
  keyBits: number;
}

/** Decodes `clip` (opened from `bytes`) at keys (k0, k1) and `alpha` into a new pose. */
export class SlowSampler {
  private readonly words: Uint32Array;
  private readonly kinds: number[] = [];
  private readonly poseOffsets: number[] = [];
  private readonly steps: boolean[] = [];
  private readonly refs: Float64Array;
  private readonly segments: SlowSegment[] = [];

  constructor(
    private readonly clip: CompressedClip,
    bytes: Uint8Array,
  ) {
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.words = new Uint32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength >>> 2);
    const animated = clip.animatedTrackCount;
    for (let j = 0; j < animated; j++) {
      const { bone, kind } = animatedTrack(clip, j);
      this.kinds.push(kind);
      this.poseOffsets.push(bone * POSE_STRIDE + [0, 4, 7][kind]);
      this.steps.push(isStepTrack(clip, bone, kind));
    }
    // Clip ranges: (min, extent) per range component; rotations have four.
    const ranges: number[][] = [];
    let at = view.getUint32(HEADER.CLIP_RANGES_OFFSET, true);
    for (let j = 0; j < animated; j++) {
      const r: number[] = [];
      if (this.kinds[j] === TRACK_KIND.ROTATION) {
        for (let c = 0; c < 4; c++, at += 4)
          r.push(rotationRangeMin(view.getUint16(at, true)), rotationRangeExtent(view.getUint16(at + 2, true)));
      } else {
        for (let c = 0; c < 3; c++, at += 8) r.push(view.getFloat32(at, true), view.getFloat32(at + 4, true));
      }
      ranges.push(r);
    }
    this.refs = new Float64Array(4 * animated);
    at = view.getUint32(HEADER.ROTATION_REFS_OFFSET, true);
    for (let j = 0; j < animated; j++) {
      if (this.kinds[j] !== TRACK_KIND.ROTATION) continue;
      decodeReference(
        view.getInt16(at, true),
        view.getInt16(at + 2, true),
        view.getInt16(at + 4, true),
        this.refs,
        4 * j,
      );
      at += 6;
    }
    const flat = new Float64Array(8);
    at = view.getUint32(HEADER.SEGMENTS_OFFSET, true);
    for (let s = 0; s < (animated > 0 ? clip.segmentCount : 0); s++) {
      const rates = bytes.slice(at, at + animated);
      const rangeAt = at + animated;
      const seg: SlowSegment = {
        rates,
        offsets: new Float64Array(3 * animated),
        steps: new Float64Array(3 * animated),
        bits: new Uint8Array(3 * animated),
        dataBit: 0,
        keyBits: 0,
      };
      for (let j = 0; j < animated; j++) {
        const rate = rates[j] & RATE_MASK;
        const drop = this.kinds[j] === TRACK_KIND.ROTATION ? rates[j] >>> DROP_SHIFT : 3;
        const rr = ranges[j];
        flat.fill(0);
        flat.set(rr);
        const ra = rangeAt + j * SEGMENT_RANGE_BYTES;
        if (rate === 0 || rate === RAW_BITS) seg.bits.fill(rate, 3 * j, 3 * j + 3);
        else trackComponentBits(bytes, ra, rate, drop, flat, 0, seg.bits, 3 * j);
        for (let c = 0; c < 3; c++) {
          const r = 2 * (c < drop ? c : c + 1);
          if (rate === 0) {
            seg.offsets[3 * j + c] = segmentConstant(
              flat[r],
              flat[r + 1],
              bytes[ra + 2 * c] | (bytes[ra + 2 * c + 1] << 8),
            );
          } else if (rate !== RAW_BITS) {
            seg.offsets[3 * j + c] = segmentOffset(flat[r], flat[r + 1], bytes[ra + 2 * c]);
            seg.steps[3 * j + c] = segmentStep(flat[r + 1], bytes[ra + 2 * c + 1], seg.bits[3 * j + c]);
          }
        }
        seg.keyBits += seg.bits[3 * j] + seg.bits[3 * j + 1] + seg.bits[3 * j + 2];
      }
      const dataStart = align4(rangeAt + animated * SEGMENT_RANGE_BYTES);
      seg.dataBit = dataStart * 8;
      const keys = segmentSampleCount(s, clip.segmentCount, clip.sampleCount);
      at = dataStart + 4 * Math.ceil((keys * seg.keyBits) / 32);
      this.segments.push(seg);
    }
  }

  /** The pose a fraction `alpha` from key k0 to key k1 (k1 = k0 or alpha = 0: key k0 exactly). */
  decode(k0: number, k1: number, alpha: number): Float32Array {
    const out = this.clip.tables.basePose.slice();
    if (this.segments.length === 0) return out;
    const v = new Float64Array(9);
    const key = (k: number, j: number, into: number): void => {
      const s = Math.min((k / SEGMENT_SIZE) | 0, this.clip.segmentCount - 1);
      const seg = this.segments[s];
      let bit = seg.dataBit + (k - s * SEGMENT_SIZE) * seg.keyBits;
      for (let i = 0; i < 3 * j; i++) bit += seg.bits[i];
      for (let c = 0; c < 3; c++) {
        const b = seg.bits[3 * j + c];
        v[into + c] =
          b === RAW_BITS
            ? floatFromBits(readBits(this.words, bit, RAW_BITS))
            : seg.offsets[3 * j + c] + readBits(this.words, bit, b) * seg.steps[3 * j + c];
        bit += b;
      }
    };
    const dropOf = (k: number, j: number) =>
      this.segments[Math.min((k / SEGMENT_SIZE) | 0, this.clip.segmentCount - 1)].rates[j] >>> DROP_SHIFT;
    for (let j = 0; j < this.kinds.length; j++) {
      const o = this.poseOffsets[j];
      key(k0, j, 0);
      if (k0 === k1 || alpha === 0 || this.steps[j]) {
        if (this.kinds[j] === TRACK_KIND.ROTATION) emitRotation(v, dropOf(k0, j), this.refs, 4 * j, out, o);
        else for (let c = 0; c < 3; c++) out[o + c] = v[c];
        continue;
      }
      key(k1, j, 4);
      if (this.kinds[j] === TRACK_KIND.ROTATION) {
        v[8] = alpha;
        blendRotations(v, dropOf(k0, j), dropOf(k1, j), this.refs, 4 * j, out, o);
      } else {
        for (let c = 0; c < 3; c++) out[o + c] = v[c] + (v[4 + c] - v[c]) * alpha;
      }
    }
    return out;
  }
}
