/**
 * Per-instance sampling state over a shared {@link CompressedClip}: the key cursor, the
 * dequantisation cache of the segments last touched and the decode scratch. One sampler
 * per character (or mixer action); the clip stays immutable and shared.
 */
import { ANIMATED_COMPONENTS, DROP_SHIFT, RATE_MASK, RAW_BITS, SEGMENT_RANGE_BYTES, SEGMENT_SIZE, TRACKS_PER_BONE, TRACK_KIND } from './format.js';
import { FORMAT_ERROR, FormatError } from './errors.js';
import { floatFromBits, readBits, segmentConstant, segmentOffset, segmentStep } from './bits.js';
import { blendRotations, emitRotation } from './interpolate.js';
import { POSE_STRIDE } from './pose.js';
import type { ClipTables, CompressedClip } from './compressed-clip.js';

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
   * Dequantisation constants (an offset and a step per stored component) cached per
   * segment: `'all'` (default) keeps every segment's once it has been sampled, 8 bytes per
   * animated component per segment (roughly 0.4 × the file size when every segment is
   * touched), so random access costs little more than playback; `'two'` keeps the last
   * two segments only (48 bytes per animated track): as fast for forward playback, slower
   * at random times.
   */
  segmentCache?: 'all' | 'two';
}

/** A fraction of a sample this close to a whole sample is that sample. */
const SNAP = 1e-6;

/** Samples one {@link CompressedClip}; allocates nothing per call. */
export class ClipSampler {
  /** The clip this sampler reads. */
  readonly clip: CompressedClip;
  private readonly t: ClipTables;
  private readonly vals = new Float64Array(8); // decode() scratch: key 0 components, key 1 components, alpha and the slerp weights
  private readonly segOffset: Float32Array;
  private readonly segStep: Float32Array;
  private readonly cachedSegment: Int32Array; // segment held by each cache slot, -1 none
  private readonly cacheAll: boolean;
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
    this.cacheAll = cache === 'all';
    const tableSegments = this.t.segRates.length;
    const slots = this.cacheAll ? tableSegments : Math.min(2, tableSegments);
    const animated = clip.animatedTrackCount;
    this.cachedSegment = new Int32Array(slots).fill(-1);
    this.segOffset = new Float32Array(slots * animated * ANIMATED_COMPONENTS);
    this.segStep = new Float32Array(slots * animated * ANIMATED_COMPONENTS);
  }

  /** Bytes this sampler holds beyond the clip (its caches and scratch), for memory reports. */
  get byteLength(): number {
    return this.segOffset.byteLength + this.segStep.byteLength + this.cachedSegment.byteLength + this.vals.byteLength;
  }

  /**
   * Samples every bone at `time` seconds (on the source's timeline, see
   * {@link CompressedClip.startTime}) into `outPose`, {@link POSE_STRIDE} floats per bone
   * (rotation xyzw, translation xyz, scale xyz). Allocates nothing. A NaN time counts as 0.
   * Throws only when `outPose` is too short.
   */
  sample(time: number, outPose: Float32Array, options?: SampleOptions): Float32Array {
    const base = this.t.basePose;
    if (outPose.length < base.length) throw new FormatError(FORMAT_ERROR.BAD_ARGUMENT, `outPose holds ${outPose.length} floats, needs ${base.length}`);
    this.locate(time, options);
    outPose.set(base);
    this.decode(outPose, 0, -1);
    return outPose;
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
   * Decodes the animated tracks at (k0, k1, alpha) into `out`, whose bone 0 starts at
   * `-base`… i.e. a track of pose offset o lands at out[o − base]. `onlyBone` ≥ 0 limits
   * the work to that bone.
   */
  private decode(out: Float32Array, base: number, onlyBone: number): void {
    const tb = this.t;
    const segCount = this.clip.segmentCount;
    const k0 = this.k0, k1 = this.k1, alpha = this.alpha;
    const single = k0 === k1;
    let s0 = (k0 / SEGMENT_SIZE) | 0; if (s0 >= segCount) s0 = segCount - 1;
    let s1 = (k1 / SEGMENT_SIZE) | 0; if (s1 >= segCount) s1 = segCount - 1;
    const count = this.clip.animatedTrackCount;
    if (count === 0) return;
    const bytes = tb.bytes, words = tb.words, refs = tb.refs, steps01 = tb.animStep;
    const rates0 = tb.segRates[s0], rates1 = tb.segRates[s1];
    let bit0 = tb.segBits[s0] + (k0 - s0 * SEGMENT_SIZE) * tb.segKeyBits[s0];
    let bit1 = tb.segBits[s1] + (k1 - s1 * SEGMENT_SIZE) * tb.segKeyBits[s1];
    const cbits = tb.compBits;
    const cb0 = s0 * count * ANIMATED_COMPONENTS, cb1 = s1 * count * ANIMATED_COMPONENTS;
    let first = 0, last = count;
    if (onlyBone >= 0) {
      // Skip to the bone's first animated track, summing the bits of the tracks before it
      // (per component: a track's components need not share its rate).
      first = count; last = count;
      for (let kind = 0; kind < TRACKS_PER_BONE; kind++) {
        const a = tb.animTrackOfTrack[onlyBone * TRACKS_PER_BONE + kind];
        if (a >= 0) { if (first === count) first = a; last = a + 1; }
      }
      for (let i = 0; i < ANIMATED_COMPONENTS * first; i++) {
        bit0 += cbits[cb0 + i];
        bit1 += cbits[cb1 + i];
      }
    }
    // With two slots, the keys' segments never share one (wrapping pairs the last with the first).
    const slot0 = this.prepareSegment(s0, this.cacheAll ? s0 : s0 & 1);
    const slot1 = s1 === s0 ? slot0 : this.prepareSegment(s1, this.cacheAll ? s1 : (s0 & 1) ^ 1);
    const offs = this.segOffset, stepSize = this.segStep;
    const v = this.vals, boneOffset = tb.animBoneOffset, kinds = tb.animKind;
    for (let j = first; j < last; j++) {
      // Components go through a scratch array so no double crosses a call boundary (boxing).
      const i0 = slot0 + 3 * j;
      const a0 = cbits[cb0 + 3 * j], a1 = cbits[cb0 + 3 * j + 1], a2 = cbits[cb0 + 3 * j + 2];
      v[0] = a0 === RAW_BITS ? floatFromBits(readBits(words, bit0, RAW_BITS)) : offs[i0] + readBits(words, bit0, a0) * stepSize[i0];
      bit0 += a0;
      v[1] = a1 === RAW_BITS ? floatFromBits(readBits(words, bit0, RAW_BITS)) : offs[i0 + 1] + readBits(words, bit0, a1) * stepSize[i0 + 1];
      bit0 += a1;
      v[2] = a2 === RAW_BITS ? floatFromBits(readBits(words, bit0, RAW_BITS)) : offs[i0 + 2] + readBits(words, bit0, a2) * stepSize[i0 + 2];
      bit0 += a2;
      const o = boneOffset[j] - base;
      const rotation = kinds[j] === TRACK_KIND.ROTATION;
      const e0 = cbits[cb1 + 3 * j], e1 = cbits[cb1 + 3 * j + 1], e2 = cbits[cb1 + 3 * j + 2];
      if (single || steps01[j] === 1) {
        // A STEP track holds key 0 until the next sample; key 1's bits are skipped.
        bit1 += e0 + e1 + e2;
        if (rotation) emitRotation(v, bytes[rates0 + j] >>> DROP_SHIFT, refs, 4 * j, out, o);
        else { out[o] = v[0]; out[o + 1] = v[1]; out[o + 2] = v[2]; }
        continue;
      }
      const i1 = slot1 + 3 * j;
      v[3] = e0 === RAW_BITS ? floatFromBits(readBits(words, bit1, RAW_BITS)) : offs[i1] + readBits(words, bit1, e0) * stepSize[i1];
      bit1 += e0;
      v[4] = e1 === RAW_BITS ? floatFromBits(readBits(words, bit1, RAW_BITS)) : offs[i1 + 1] + readBits(words, bit1, e1) * stepSize[i1 + 1];
      bit1 += e1;
      v[5] = e2 === RAW_BITS ? floatFromBits(readBits(words, bit1, RAW_BITS)) : offs[i1 + 2] + readBits(words, bit1, e2) * stepSize[i1 + 2];
      bit1 += e2;
      if (rotation) {
        v[6] = alpha;
        blendRotations(v, bytes[rates0 + j] >>> DROP_SHIFT, bytes[rates1 + j] >>> DROP_SHIFT, refs, 4 * j, out, o);
      } else {
        out[o] = v[0] + (v[3] - v[0]) * alpha;
        out[o + 1] = v[1] + (v[4] - v[1]) * alpha;
        out[o + 2] = v[2] + (v[5] - v[2]) * alpha;
      }
    }
  }

  /**
   * Fills the dequantisation cache (offset and step of every stored component) for
   * segment `s` in `slot`, unless it is there already; returns the slot's base index.
   * Offsets and steps are float32 by definition of the format (bits.ts), so the cache
   * holds them exactly.
   */
  private prepareSegment(s: number, slot: number): number {
    const count = this.clip.animatedTrackCount;
    const base = slot * count * ANIMATED_COMPONENTS;
    if (this.cachedSegment[slot] === s) return base;
    this.cachedSegment[slot] = s;
    const tb = this.t;
    const bytes = tb.bytes, ranges = tb.clipRanges, cbits = tb.compBits;
    const kinds = tb.animKind, rangeAt = tb.animRange;
    const rates = tb.segRates[s], rng = tb.segRanges[s];
    const offs = this.segOffset, steps = this.segStep;
    const cbBase = s * count * ANIMATED_COMPONENTS;
    for (let j = 0; j < count; j++) {
      const rb = bytes[rates + j];
      const rate = rb & RATE_MASK;
      const drop = kinds[j] === TRACK_KIND.ROTATION ? rb >>> DROP_SHIFT : 3;
      const ro = rangeAt[j];
      const at = rng + j * SEGMENT_RANGE_BYTES;
      const i = base + 3 * j;
      if (rate === 0) {
        // Constant in the segment: its components have 0 bits, so value = offset.
        for (let c = 0; c < ANIMATED_COMPONENTS; c++) {
          const r = ro + 2 * (c < drop ? c : c + 1);
          offs[i + c] = segmentConstant(ranges[r], ranges[r + 1], bytes[at + 2 * c] | (bytes[at + 2 * c + 1] << 8));
          steps[i + c] = 0;
        }
        continue;
      }
      // Stored slot c holds component c, or c + 1 at and after the dropped one.
      const r0 = ro + (drop === 0 ? 2 : 0), r1 = ro + (drop <= 1 ? 4 : 2), r2 = ro + (drop <= 2 ? 6 : 4);
      const cb = cbBase + 3 * j;
      offs[i] = segmentOffset(ranges[r0], ranges[r0 + 1], bytes[at]);
      steps[i] = segmentStep(ranges[r0 + 1], bytes[at + 1], cbits[cb]);
      offs[i + 1] = segmentOffset(ranges[r1], ranges[r1 + 1], bytes[at + 2]);
      steps[i + 1] = segmentStep(ranges[r1 + 1], bytes[at + 3], cbits[cb + 1]);
      offs[i + 2] = segmentOffset(ranges[r2], ranges[r2 + 1], bytes[at + 4]);
      steps[i + 2] = segmentStep(ranges[r2 + 1], bytes[at + 5], cbits[cb + 2]);
    }
    return base;
  }
}
