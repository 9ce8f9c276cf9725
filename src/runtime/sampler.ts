/**
 * Per-instance sampling state over a shared {@link CompressedClip}: the key cursor, the
 * dequantisation cache of the segments last touched and the decode scratch. One sampler
 * per character (or mixer action); the clip stays immutable and shared.
 */
import { RAW_BITS, SEGMENT_SIZE, TRACKS_PER_BONE, TRACK_KIND } from './format.js';
import { FORMAT_ERROR, FormatError } from './errors.js';
import { floatFromBits, readBits } from './bits.js';
import { blendRotations, emitRotation } from './interpolate.js';
import { POSE_STRIDE } from './pose.js';
import type { CompressedClip } from './compressed-clip.js';
import { TABLE, type ClipTables } from './decode-tables.js';

/** How a time between two samples is resolved. */
export type Rounding = 'none' | 'floor' | 'ceil' | 'nearest';
/**
 * What happens outside the clip:
 * - `'clamp'`: hold the first pose before {@link CompressedClip.startTime} and the last after the last sample;
 * - `'repeat'`: time repeats with period {@link CompressedClip.duration}, as three.js's `LoopRepeat` does;
 * - `'wrap'`: the samples repeat with period sampleCount / sampleRate from the start time,
 *   interpolating from the last sample back to the first (for cyclic motion capture).
 */
export type Looping = 'clamp' | 'repeat' | 'wrap';

/** Options of {@link ClipSampler.sample}. */
export interface SampleOptions {
  /** Default `'none'`: interpolate between the two nearest samples. */
  rounding?: Rounding;
  /** Default `'clamp'`. */
  looping?: Looping;
}

/** Options of {@link CompressedClip.createSampler}. */
export interface SamplerOptions {
  /**
   * Accepted for compatibility and ignored: every segment's dequantisation constants are
   * now computed once when the clip is opened and shared by all its samplers, so a sampler
   * caches nothing. Must be `'all'` or `'two'` when given.
   */
  segmentCache?: 'all' | 'two';
}

/** A fraction of a sample this close to a whole sample is that sample. */
const SNAP = 1e-6;
const RECORD = TABLE.RECORD;

/**
 * Samples one {@link CompressedClip}; allocates nothing per call. Its own state is a few
 * numbers and a 64-byte scratch: the clip's shared tables hold everything else.
 */
export class ClipSampler {
  /** The clip this sampler reads. */
  readonly clip: CompressedClip;
  private readonly t: ClipTables;
  private readonly vals = new Float64Array(8); // decode() scratch: key 0 components, key 1 components, alpha and the slerp weights
  // Scratch of locate(): no allocation per sample.
  private k0 = 0;
  private k1 = 0;
  private alpha = 0;

  /** Prefer {@link CompressedClip.createSampler}. */
  constructor(clip: CompressedClip, options: SamplerOptions = {}) {
    const cache = options.segmentCache ?? 'all';
    if (cache !== 'all' && cache !== 'two') throw new FormatError(FORMAT_ERROR.BAD_ARGUMENT, `segmentCache must be 'all' or 'two', got ${String(cache)}`);
    this.clip = clip;
    this.t = clip.tables;
  }

  /** Bytes this sampler holds beyond the clip (its scratch), for memory reports. */
  get byteLength(): number {
    return this.vals.byteLength;
  }

  /**
   * Samples every bone at `time` seconds (on the source's timeline, see
   * {@link CompressedClip.startTime}) into `outPose`, {@link POSE_STRIDE} floats per bone
   * (rotation xyzw, translation xyz, scale xyz). Allocates nothing. A NaN time counts as 0.
   * Throws only when `outPose` is too short.
   */
  sample(time: number, outPose: Float32Array, options?: SampleOptions): Float32Array {
    this.sampleInto(time, outPose, 0, options);
    return outPose;
  }

  /**
   * {@link sample} into `out` starting at float `offset` (bone b at offset + b ×
   * {@link POSE_STRIDE}): many characters' poses can share one buffer. Returns the offset
   * just past the pose. Throws only when `out` is too short.
   */
  sampleInto(time: number, out: Float32Array, offset: number, options?: SampleOptions): number {
    const tb = this.t;
    const end = offset + tb.poseFloats;
    if (!(offset >= 0) || out.length < end) throw new FormatError(FORMAT_ERROR.BAD_ARGUMENT, `out holds ${out.length} floats, needs ${tb.poseFloats} from ${offset}`);
    this.locate(time, options);
    out.set(tb.basePose, offset);
    this.decode(out, -offset, -1);
    return end;
  }

  /** Writes sample `keyIndex` (clamped to 0..sampleCount − 1) exactly, without interpolation. */
  sampleKey(keyIndex: number, outPose: Float32Array): Float32Array {
    const base = this.t.basePose;
    if (outPose.length < base.length) throw new FormatError(FORMAT_ERROR.BAD_ARGUMENT, `outPose holds ${outPose.length} floats, needs ${base.length}`);
    const k = keyIndex > 0 ? Math.min(this.clip.sampleCount - 1, Math.floor(keyIndex)) : 0;
    this.k0 = k; this.k1 = k; this.alpha = 0;
    outPose.set(base);
    this.decode(outPose, 0, -1);
    return outPose;
  }

  /**
   * Decodes the pose a fraction `alpha` (0..1) of the way from sample `keyIndex` to the next
   * one, exactly as {@link sample} does at that time (the compressor measures between
   * samples with this). `keyIndex` is clamped to 0..sampleCount − 2.
   */
  sampleBetween(keyIndex: number, alpha: number, outPose: Float32Array): Float32Array {
    const base = this.t.basePose;
    if (outPose.length < base.length) throw new FormatError(FORMAT_ERROR.BAD_ARGUMENT, `outPose holds ${outPose.length} floats, needs ${base.length}`);
    const n = this.clip.sampleCount;
    const k = keyIndex > 0 ? Math.min(n - 2, Math.floor(keyIndex)) : 0;
    if (n < 2 || !(alpha > 0)) { this.k0 = this.k1 = Math.max(0, k); this.alpha = 0; }
    else if (alpha >= 1) { this.k0 = this.k1 = k + 1; this.alpha = 0; }
    else { this.k0 = k; this.k1 = k + 1; this.alpha = alpha; }
    outPose.set(base);
    this.decode(outPose, 0, -1);
    return outPose;
  }

  /**
   * Samples one bone at `time` into `out[0..9]` (the same 10-float layout as a pose).
   * Throws only on a bad bone index or a short `out`.
   */
  sampleBone(time: number, boneIndex: number, out: Float32Array, options?: SampleOptions): Float32Array {
    if (!(boneIndex >= 0 && boneIndex < this.clip.boneCount) || (boneIndex | 0) !== boneIndex) {
      throw new FormatError(FORMAT_ERROR.BAD_ARGUMENT, `bone index ${boneIndex} (clip has ${this.clip.boneCount} bones)`);
    }
    if (out.length < POSE_STRIDE) throw new FormatError(FORMAT_ERROR.BAD_ARGUMENT, `out holds ${out.length} floats, needs ${POSE_STRIDE}`);
    this.locate(time, options);
    const base = boneIndex * POSE_STRIDE;
    const pose = this.t.basePose;
    for (let i = 0; i < POSE_STRIDE; i++) out[i] = pose[base + i];
    this.decode(out, base, boneIndex);
    return out;
  }

  /** Resolves time to keys k0, k1 and a blend alpha (0 means k0 alone). */
  private locate(time: number, options: SampleOptions | undefined): void {
    const clip = this.clip;
    const n = clip.sampleCount;
    const rate = clip.sampleRate;
    const looping = options?.looping;
    let t = time === time ? time : 0;
    let k0: number, k1: number, alpha: number;
    if (n === 1) {
      this.k0 = 0; this.k1 = 0; this.alpha = 0;
      return;
    }
    if (looping === 'repeat') {
      const period = clip.duration;
      t = period > 0 ? t % period : 0;
      if (t < 0) t += period;
      if (t !== t) t = 0; // ±Infinity
    }
    if (looping === 'wrap') {
      let pos = ((t - clip.startTime) * rate) % n;
      if (pos < 0) pos += n;
      if (pos !== pos) pos = 0; // ±Infinity
      k0 = Math.floor(pos);
      if (k0 >= n) k0 = n - 1;
      alpha = pos - k0;
      k1 = k0 + 1 === n ? 0 : k0 + 1;
    } else {
      const pos = (t - clip.startTime) * rate;
      if (!(pos > 0)) { k0 = 0; k1 = 0; alpha = 0; }
      else if (pos >= n - 1) { k0 = n - 1; k1 = n - 1; alpha = 0; }
      else {
        k0 = Math.floor(pos);
        alpha = pos - k0;
        k1 = k0 + 1;
      }
    }
    if (alpha < SNAP) alpha = 0;
    else if (alpha > 1 - SNAP) { k0 = k1; alpha = 0; }
    switch (options?.rounding) {
      case 'floor': alpha = 0; break;
      case 'ceil': if (alpha > 0) { k0 = k1; alpha = 0; } break;
      case 'nearest': if (alpha >= 0.5) k0 = k1; alpha = 0; break;
      default: break;
    }
    if (alpha === 0) k1 = k0;
    this.k0 = k0; this.k1 = k1; this.alpha = alpha;
  }

  /**
   * Decodes the animated tracks at (k0, k1, alpha) into `out`: a track of pose offset o
   * lands at out[o − base]. `onlyBone` ≥ 0 limits the work to that bone. Reads the clip's
   * records of the keys' segments in order (ClipTables) and the packed keys.
   */
  private decode(out: Float32Array, base: number, onlyBone: number): void {
    const tb = this.t;
    const count = this.clip.animatedTrackCount;
    if (count === 0) return;
    const segCount = this.clip.segmentCount;
    const k0 = this.k0, k1 = this.k1, alpha = this.alpha;
    const single = k0 === k1;
    let s0 = (k0 / SEGMENT_SIZE) | 0; if (s0 >= segCount) s0 = segCount - 1;
    let s1 = (k1 / SEGMENT_SIZE) | 0; if (s1 >= segCount) s1 = segCount - 1;
    const i32 = tb.i32, f32 = tb.f32, f64 = tb.f64, words = tb.words;
    const h0 = tb.segAt + s0 * tb.segStride, h1 = tb.segAt + s1 * tb.segStride;
    let bit0 = i32[h0] + (k0 - s0 * SEGMENT_SIZE) * i32[h0 + 1];
    let bit1 = i32[h1] + (k1 - s1 * SEGMENT_SIZE) * i32[h1 + 1];
    let ref = tb.refsAt;
    let first = 0, last = count;
    if (onlyBone >= 0) {
      // Skip to the bone's first animated track, summing the bits of the tracks before it
      // (a track's components need not share its rate) and counting their references.
      first = count; last = count;
      for (let kind = 0; kind < TRACKS_PER_BONE; kind++) {
        const a = tb.animTrackOfTrack[onlyBone * TRACKS_PER_BONE + kind];
        if (a >= 0) { if (first === count) first = a; last = a + 1; }
      }
      for (let j = 0; j < first; j++) {
        const m0 = i32[h0 + RECORD * (1 + j) + 1], m1 = i32[h1 + RECORD * (1 + j) + 1];
        bit0 += (m0 & 0xff) + ((m0 >>> 8) & 0xff) + ((m0 >>> 16) & 0xff);
        bit1 += (m1 & 0xff) + ((m1 >>> 8) & 0xff) + ((m1 >>> 16) & 0xff);
        if (((i32[h0 + RECORD * (1 + j)] >>> TABLE.KIND_SHIFT) & 3) === TRACK_KIND.ROTATION) ref += 4;
      }
    }
    const v = this.vals;
    for (let j = first, r0 = h0 + RECORD * (1 + first), r1 = h1 + RECORD * (1 + first); j < last; j++, r0 += RECORD, r1 += RECORD) {
      // Components go through a scratch array so no double crosses a call boundary (boxing).
      const meta = i32[r0], bits0 = i32[r0 + 1];
      const a0 = bits0 & 0xff, a1 = (bits0 >>> 8) & 0xff, a2 = (bits0 >>> 16) & 0xff;
      if ((meta & TABLE.CONSTANT) !== 0) {
        v[0] = f32[r0 + 2]; v[1] = f32[r0 + 4]; v[2] = f32[r0 + 6];
      } else if ((meta & TABLE.RAW) === 0) {
        v[0] = f32[r0 + 2] + readBits(words, bit0, a0) * f32[r0 + 3];
        v[1] = f32[r0 + 4] + readBits(words, bit0 + a0, a1) * f32[r0 + 5];
        v[2] = f32[r0 + 6] + readBits(words, bit0 + a0 + a1, a2) * f32[r0 + 7];
      } else {
        v[0] = floatFromBits(readBits(words, bit0, RAW_BITS));
        v[1] = floatFromBits(readBits(words, bit0 + RAW_BITS, RAW_BITS));
        v[2] = floatFromBits(readBits(words, bit0 + 2 * RAW_BITS, RAW_BITS));
      }
      bit0 += a0 + a1 + a2;
      const o = (meta & TABLE.POSE_MASK) - base;
      const rotation = ((meta >>> TABLE.KIND_SHIFT) & 3) === TRACK_KIND.ROTATION;
      const meta1 = i32[r1], bits1 = i32[r1 + 1];
      const e0 = bits1 & 0xff, e1 = (bits1 >>> 8) & 0xff, e2 = (bits1 >>> 16) & 0xff;
      if (single || (meta & TABLE.STEP) !== 0) {
        // A STEP track holds key 0 until the next sample; key 1's bits are skipped.
        bit1 += e0 + e1 + e2;
        if (rotation) { emitRotation(v, bits0 >>> 24, f64, ref, out, o); ref += 4; }
        else { out[o] = v[0]; out[o + 1] = v[1]; out[o + 2] = v[2]; }
        continue;
      }
      if ((meta1 & TABLE.CONSTANT) !== 0) {
        v[3] = f32[r1 + 2]; v[4] = f32[r1 + 4]; v[5] = f32[r1 + 6];
      } else if ((meta1 & TABLE.RAW) === 0) {
        v[3] = f32[r1 + 2] + readBits(words, bit1, e0) * f32[r1 + 3];
        v[4] = f32[r1 + 4] + readBits(words, bit1 + e0, e1) * f32[r1 + 5];
        v[5] = f32[r1 + 6] + readBits(words, bit1 + e0 + e1, e2) * f32[r1 + 7];
      } else {
        v[3] = floatFromBits(readBits(words, bit1, RAW_BITS));
        v[4] = floatFromBits(readBits(words, bit1 + RAW_BITS, RAW_BITS));
        v[5] = floatFromBits(readBits(words, bit1 + 2 * RAW_BITS, RAW_BITS));
      }
      bit1 += e0 + e1 + e2;
      if (rotation) {
        v[6] = alpha;
        blendRotations(v, bits0 >>> 24, bits1 >>> 24, f64, ref, out, o);
        ref += 4;
      } else {
        out[o] = v[0] + (v[3] - v[0]) * alpha;
        out[o + 1] = v[1] + (v[4] - v[1]) * alpha;
        out[o + 2] = v[2] + (v[5] - v[2]) * alpha;
      }
    }
  }
}
