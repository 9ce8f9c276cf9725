/**
 * Quantisation of one animated track inside one segment at one bit rate, and the exact
 * values the decoder will rebuild from it (same helpers, same order of operations).
 */
import { ANIMATED_COMPONENTS, RAW_BITS, SEGMENT_SIZE, TRACK_KIND } from '../runtime/format.js';
import { MAX_QUANT, segmentConstant, segmentOffset, segmentStep, trackComponentBits } from '../runtime/bits.js';
import { emitRotation } from '../runtime/interpolate.js';
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
  componentBitsOf(track, at, rate, clipRanges, ranges, outBits);
  for (let slot = 0; slot < ANIMATED_COMPONENTS; slot++) {
    const c = storedComponent(slot, drop);
    const bits = outBits[slot];
    const r = clipRanges.offsets[at.j] + 2 * c;
    const rs = ((at.segment * at.trackCount + at.j) * 3 + slot) * 2;
    const offset = segmentOffset(clipRanges.values[r], clipRanges.values[r + 1], ranges.minMax[rs]);
    const step = segmentStep(clipRanges.values[r + 1], ranges.minMax[rs + 1], bits);
    // Any code is valid (the decoder only rebuilds offset + q · step), so the nearest one
    // may be found with a reciprocal instead of a division per value.
    const inv = step > 0 ? 1 / step : 0;
    const max = MAX_QUANT[bits];
    const values = track.values,
      width = track.width;
    for (let k = 0; k < at.size; k++) {
      const q = Math.round((values[(at.start + k) * width + c] - offset) * inv);
      outCodes[k * 3 + slot] = q <= 0 ? 0 : q > max ? max : q;
    }
  }
}

const segOffsets = new Float64Array(3);
const compBits = new Uint8Array(3);
const segSteps = new Float64Array(3);
/** One key for emitRotation: its three stored components, and room for the rebuilt fourth. */
const stored = new Float64Array(4);
/** The stored components of a segment's keys, three per key (grown for a longer segment). */
let keyScratch = new Float64Array(3 * 2 * SEGMENT_SIZE);

/**
 * Writes what the decoder rebuilds for a track's keys in a segment stored at `bits`, at
 * `out[o + k * stride ...]`: a rotation (xyzw) or a vector (xyz). `codes` is scratch.
 */
export function reconstructTrackSegment(
  track: AnimatedTrack,
  at: TrackSlot,
  bits: number,
  clipRanges: ClipRanges,
  ranges: SegmentRanges,
  codes: Uint32Array,
  out: Float32Array,
  o: number,
  stride: number,
): void {
  const drop = track.drop[at.segment];
  const width = track.width;
  const values = track.values;
  const rangeBase = clipRanges.offsets[at.j];
  const slotBase = (at.segment * at.trackCount + at.j) * 3;
  const offsets = segOffsets;
  const steps = segSteps;
  if (bits > 0 && bits !== RAW_BITS) {
    quantizeTrackSegment(track, at, bits, clipRanges, ranges, codes, compBits);
    for (let slot = 0; slot < 3; slot++) {
      const r = rangeBase + 2 * storedComponent(slot, drop);
      offsets[slot] = segmentOffset(
        clipRanges.values[r],
        clipRanges.values[r + 1],
        ranges.minMax[(slotBase + slot) * 2],
      );
      steps[slot] = segmentStep(clipRanges.values[r + 1], ranges.minMax[(slotBase + slot) * 2 + 1], compBits[slot]);
    }
  }
  const o0 = offsets[0],
    o1 = offsets[1],
    o2 = offsets[2],
    s0 = steps[0],
    s1 = steps[1],
    s2 = steps[2];
  const c0 = storedComponent(0, drop),
    c1 = storedComponent(1, drop),
    c2 = storedComponent(2, drop);
  let v0 = 0,
    v1 = 0,
    v2 = 0;
  if (bits === 0) {
    v0 = segmentConstant(
      clipRanges.values[rangeBase + 2 * c0],
      clipRanges.values[rangeBase + 2 * c0 + 1],
      ranges.constant[slotBase],
    );
    v1 = segmentConstant(
      clipRanges.values[rangeBase + 2 * c1],
      clipRanges.values[rangeBase + 2 * c1 + 1],
      ranges.constant[slotBase + 1],
    );
    v2 = segmentConstant(
      clipRanges.values[rangeBase + 2 * c2],
      clipRanges.values[rangeBase + 2 * c2 + 1],
      ranges.constant[slotBase + 2],
    );
  }
  const rotation = track.kind === TRACK_KIND.ROTATION;
  const size = at.size;
  if (keyScratch.length < size * 3) keyScratch = new Float64Array(size * 3);
  const keyValues = keyScratch;
  if (bits === RAW_BITS) {
    for (let k = 0; k < size; k++) {
      const i = (at.start + k) * width;
      keyValues[k * 3] = values[i + c0];
      keyValues[k * 3 + 1] = values[i + c1];
      keyValues[k * 3 + 2] = values[i + c2];
    }
  } else if (bits > 0) {
    for (let k = 0; k < size; k++) {
      keyValues[k * 3] = o0 + codes[k * 3] * s0;
      keyValues[k * 3 + 1] = o1 + codes[k * 3 + 1] * s1;
      keyValues[k * 3 + 2] = o2 + codes[k * 3 + 2] * s2;
    }
  } else {
    for (let k = 0; k < size; k++) {
      keyValues[k * 3] = v0;
      keyValues[k * 3 + 1] = v1;
      keyValues[k * 3 + 2] = v2;
    }
  }
  if (rotation) emitRotations(keyValues, size, drop, track.ref, out, o, stride);
  else {
    for (let k = 0; k < size; k++) {
      const dst = o + k * stride;
      out[dst] = keyValues[k * 3];
      out[dst + 1] = keyValues[k * 3 + 1];
      out[dst + 2] = keyValues[k * 3 + 2];
    }
  }
}

/**
 * {@link emitRotation} of `count` keys whose stored components are `keyValues[k * 3 ..]`,
 * to `out[o + k * stride]`. A function of its own so that the engine inlines the rebuild
 * (a call that is not inlined boxes every number it passes).
 */
function emitRotations(
  keyValues: Float64Array,
  count: number,
  drop: number,
  ref: Float64Array,
  out: Float32Array,
  o: number,
  stride: number,
): void {
  const v = stored;
  for (let k = 0; k < count; k++) {
    v[0] = keyValues[k * 3];
    v[1] = keyValues[k * 3 + 1];
    v[2] = keyValues[k * 3 + 2];
    emitRotation(v, drop, ref, 0, out, o + k * stride);
  }
}
