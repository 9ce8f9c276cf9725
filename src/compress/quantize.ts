/**
 * Quantisation of one animated track inside one segment at one bit rate, and the exact
 * values the decoder will rebuild from it (same helpers, same order of operations).
 */
import { ANIMATED_COMPONENTS, RAW_BITS, SEGMENT_SIZE, TRACK_KIND } from '../runtime/format.js';
import { MAX_QUANT, segmentConstant, segmentOffset, segmentStep, trackComponentBits } from '../runtime/bits.js';
import { ROTATION_ENTRY, ROTATION_SLOT, decodeRotations } from '../runtime/interpolate.js';
import { storedComponent, type AnimatedTrack, type ClipRanges, type SegmentRanges } from './range.js';

/** Where a track sits among a segment's tracks (mutable so hot loops reuse one). */
export interface TrackSlot {
  j: number;
  trackCount: number;
  segment: number;
  start: number;
  size: number;
}

/**
 * Bits of each stored component of a track at `rate` (1..24) in its segment, as the
 * decoder derives them, written at `outBits[0..2]`.
 */
export function componentBitsOf(
  track: AnimatedTrack,
  at: TrackSlot,
  rate: number,
  clipRanges: ClipRanges,
  ranges: SegmentRanges,
  outBits: Uint8Array,
): void {
  const drop = track.kind === TRACK_KIND.ROTATION ? track.drop[at.segment] : 3;
  trackComponentBits(
    ranges.minMax,
    (at.segment * at.trackCount + at.j) * 6,
    rate,
    drop,
    clipRanges.values,
    clipRanges.offsets[at.j],
    outBits,
    0,
  );
}

/**
 * Math.round(x) for x ≥ 0 (for x < 0, a number ≤ 0: a code clamps both to 0), as
 * ⌊x + 0.5⌋ less one where x + 0.5 rounded up to that integer (x just below 0.5, or an odd
 * x in [2^52, 2^53)). Engines compile Math.round as ⌈x⌉ less one when the fraction is below
 * one half, a branch quantised values take at random; this one is almost never taken.
 */
export function roundHalfUp(x: number): number {
  const r = Math.floor(x + 0.5);
  return r - 0.5 > x ? r - 1 : r;
}

/** The code nearest `value` for a component dequantised as `offset` + code · step (`inv` = 1 / step), clamped to 0..`max`. */
function codeOf(value: number, offset: number, inv: number, max: number): number {
  const q = roundHalfUp((value - offset) * inv);
  return q <= 0 ? 0 : q > max ? max : q;
}

/** Numbers {@link dequantization} writes per stored component: offset, step, 1 / step (0 for a zero step), largest code. */
export const DEQUANTIZATION_STRIDE = 4;

/**
 * How each stored component of a track in its segment at `rate` (1..24) is dequantised, as
 * the decoder derives it: offset, step, 1 / step and the largest code at
 * `out[o + slot * DEQUANTIZATION_STRIDE ..]`, and each component's bits at `outBits[0..2]`.
 */
export function dequantization(
  track: AnimatedTrack,
  at: TrackSlot,
  rate: number,
  clipRanges: ClipRanges,
  ranges: SegmentRanges,
  out: Float64Array,
  o: number,
  outBits: Uint8Array,
): void {
  const drop = track.drop[at.segment];
  componentBitsOf(track, at, rate, clipRanges, ranges, outBits);
  for (let slot = 0; slot < ANIMATED_COMPONENTS; slot++) {
    const c = storedComponent(slot, drop);
    const bits = outBits[slot];
    const r = clipRanges.offsets[at.j] + 2 * c;
    const rs = ((at.segment * at.trackCount + at.j) * 3 + slot) * 2;
    const step = segmentStep(clipRanges.values[r + 1], ranges.minMax[rs + 1], bits);
    const p = o + slot * DEQUANTIZATION_STRIDE;
    out[p] = segmentOffset(clipRanges.values[r], clipRanges.values[r + 1], ranges.minMax[rs]);
    out[p + 1] = step;
    // Any code is valid (the decoder only rebuilds offset + q · step), so the nearest one
    // may be found with a reciprocal instead of a division per value.
    out[p + 2] = step > 0 ? 1 / step : 0;
    out[p + 3] = MAX_QUANT[bits];
  }
}

/** {@link dequantization} of the call being served, when its caller passes none. */
const scratchDequantization = new Float64Array(ANIMATED_COMPONENTS * DEQUANTIZATION_STRIDE);

/**
 * Writes the integer codes of track `at.j` for its segment at `rate` (1..24):
 * `outCodes[k * 3 + storedSlot]`, and each component's bits at `outBits[0..2]`.
 */
export function quantizeTrackSegment(
  track: AnimatedTrack,
  at: TrackSlot,
  rate: number,
  clipRanges: ClipRanges,
  ranges: SegmentRanges,
  outCodes: Uint32Array,
  outBits: Uint8Array,
): void {
  const drop = track.drop[at.segment];
  const d = scratchDequantization;
  dequantization(track, at, rate, clipRanges, ranges, d, 0, outBits);
  const values = track.values,
    width = track.width;
  for (let slot = 0; slot < ANIMATED_COMPONENTS; slot++) {
    const c = storedComponent(slot, drop);
    const p = slot * DEQUANTIZATION_STRIDE;
    const offset = d[p],
      inv = d[p + 2],
      max = d[p + 3];
    for (let k = 0; k < at.size; k++)
      outCodes[k * 3 + slot] = codeOf(values[(at.start + k) * width + c], offset, inv, max);
  }
}

/** The value of stored component `slot` of a track that its segment stores as constant (rate 0), as the decoder rebuilds it. */
export function constantComponent(
  track: AnimatedTrack,
  at: TrackSlot,
  slot: number,
  clipRanges: ClipRanges,
  ranges: SegmentRanges,
): number {
  const r = clipRanges.offsets[at.j] + 2 * storedComponent(slot, track.drop[at.segment]);
  return segmentConstant(
    clipRanges.values[r],
    clipRanges.values[r + 1],
    ranges.constant[(at.segment * at.trackCount + at.j) * 3 + slot],
  );
}

const compBits = new Uint8Array(3);
/**
 * Keys for decodeRotations, {@link ROTATION_SLOT} floats each (the three stored components,
 * room for the rebuilt fourth), and their list entries (grown for a longer segment).
 */
let keyScratch = new Float64Array(ROTATION_SLOT * 2 * SEGMENT_SIZE);
let listScratch = new Int32Array(ROTATION_ENTRY * 2 * SEGMENT_SIZE);

/**
 * Writes what the decoder rebuilds for a track's keys in a segment stored at `bits`, at
 * `out[o + k * stride ...]`: a rotation (xyzw) or a vector (xyz). The codes are those of
 * {@link quantizeTrackSegment}, rebuilt as offset + code · step on the fly. A caller that
 * rebuilds the same track at the same rate again may pass its {@link dequantization} in
 * `known[ko ..]`.
 */
export function reconstructTrackSegment(
  track: AnimatedTrack,
  at: TrackSlot,
  bits: number,
  clipRanges: ClipRanges,
  ranges: SegmentRanges,
  out: Float32Array,
  o: number,
  stride: number,
  known?: Float64Array,
  ko = 0,
): void {
  const drop = track.drop[at.segment];
  const width = track.width;
  const values = track.values;
  const size = at.size;
  if (keyScratch.length < size * ROTATION_SLOT) {
    keyScratch = new Float64Array(size * ROTATION_SLOT);
    listScratch = new Int32Array(size * ROTATION_ENTRY);
  }
  const keys = keyScratch;
  let d: Float64Array = scratchDequantization,
    dp = 0;
  if (known !== undefined) {
    d = known;
    dp = ko;
  } else if (bits > 0 && bits !== RAW_BITS) dequantization(track, at, bits, clipRanges, ranges, d, 0, compBits);
  for (let slot = 0; slot < ANIMATED_COMPONENTS; slot++) {
    const from = at.start * width + storedComponent(slot, drop);
    if (bits === RAW_BITS) {
      for (let k = 0; k < size; k++) keys[k * ROTATION_SLOT + slot] = values[from + k * width];
    } else if (bits === 0) {
      const v = constantComponent(track, at, slot, clipRanges, ranges);
      for (let k = 0; k < size; k++) keys[k * ROTATION_SLOT + slot] = v;
    } else {
      // quantizeTrackSegment's codes, each rebuilt as the decoder does.
      const p = dp + slot * DEQUANTIZATION_STRIDE;
      const offset = d[p],
        step = d[p + 1],
        inv = d[p + 2],
        max = d[p + 3];
      for (let k = 0; k < size; k++)
        keys[k * ROTATION_SLOT + slot] = offset + codeOf(values[from + k * width], offset, inv, max) * step;
    }
  }
  if (track.kind === TRACK_KIND.ROTATION) {
    // One decodeRotations call for the whole segment: the decoder's arithmetic, key by key.
    const list = listScratch;
    for (let k = 0; k < size; k++) {
      const e = k * ROTATION_ENTRY;
      list[e] = drop;
      list[e + 1] = -1;
      list[e + 2] = 0;
      list[e + 3] = o + k * stride;
    }
    decodeRotations(keys, list, size, 0, track.ref, out);
  } else {
    for (let k = 0; k < size; k++) {
      const dst = o + k * stride;
      out[dst] = keys[k * ROTATION_SLOT];
      out[dst + 1] = keys[k * ROTATION_SLOT + 1];
      out[dst + 2] = keys[k * ROTATION_SLOT + 2];
    }
  }
}
