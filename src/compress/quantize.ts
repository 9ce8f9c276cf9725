/**
 * Quantisation of one animated track inside one segment at one bit rate, and the exact
 * values the decoder will rebuild from it (same helpers, same order of operations).
 */
import { RAW_BITS, TRACK_KIND } from '../runtime/format.js';
import { quantizeToScale, segmentConstant, segmentOffset, segmentStep } from '../runtime/bits.js';
import { writeRelativeRotation } from '../runtime/interpolate.js';
import type { AnimatedTrack, SegmentRanges } from './range.js';

/**
 * Writes the integer codes of track `j` (component-interleaved, key-major:
 * `outCodes[k * 3 + c]`) for keys [start, start + size) at `bits` (1..24).
 */
export function quantizeTrackSegment(
  track: AnimatedTrack, j: number, trackCount: number, segment: number, start: number, size: number,
  bits: number, clipRanges: Float32Array, ranges: SegmentRanges, outCodes: Uint32Array,
): void {
  for (let c = 0; c < 3; c++) {
    const clipMin = clipRanges[j * 6 + c * 2], clipExt = clipRanges[j * 6 + c * 2 + 1];
    const slot = ((segment * trackCount + j) * 3 + c) * 2;
    const offset = segmentOffset(clipMin, clipExt, ranges.minMax[slot]);
    const step = segmentStep(clipExt, ranges.minMax[slot + 1], bits);
    for (let k = 0; k < size; k++) outCodes[k * 3 + c] = quantizeToScale(track.values[(start + k) * 3 + c], offset, step, bits);
  }
}

/**
 * Writes what the decoder rebuilds for track `j` at keys [start, start + size) when the
 * segment stores it at `bits`: into `out[o + k * stride ...]` as a rotation (xyzw) or a
 * vector (xyz). `codes` is scratch for {@link quantizeTrackSegment}.
 */
export function reconstructTrackSegment(
  track: AnimatedTrack, j: number, trackCount: number, segment: number, start: number, size: number,
  bits: number, clipRanges: Float32Array, ranges: SegmentRanges, codes: Uint32Array,
  out: Float32Array, o: number, stride: number,
): void {
  const values = track.values;
  const rotation = track.kind === TRACK_KIND.ROTATION ? track.ref : null;
  if (bits === RAW_BITS) {
    for (let k = 0; k < size; k++) {
      const x = values[(start + k) * 3], y = values[(start + k) * 3 + 1], z = values[(start + k) * 3 + 2];
      writeValue(rotation, x, y, z, out, o + k * stride);
    }
    return;
  }
  if (bits === 0) {
    const base = (segment * trackCount + j) * 3;
    const x = segmentConstant(clipRanges[j * 6], clipRanges[j * 6 + 1], ranges.constant[base]);
    const y = segmentConstant(clipRanges[j * 6 + 2], clipRanges[j * 6 + 3], ranges.constant[base + 1]);
    const z = segmentConstant(clipRanges[j * 6 + 4], clipRanges[j * 6 + 5], ranges.constant[base + 2]);
    for (let k = 0; k < size; k++) writeValue(rotation, x, y, z, out, o + k * stride);
    return;
  }
  quantizeTrackSegment(track, j, trackCount, segment, start, size, bits, clipRanges, ranges, codes);
  const slot = (segment * trackCount + j) * 3 * 2;
  const mm = ranges.minMax;
  const ox = segmentOffset(clipRanges[j * 6], clipRanges[j * 6 + 1], mm[slot]);
  const oy = segmentOffset(clipRanges[j * 6 + 2], clipRanges[j * 6 + 3], mm[slot + 2]);
  const oz = segmentOffset(clipRanges[j * 6 + 4], clipRanges[j * 6 + 5], mm[slot + 4]);
  const sx = segmentStep(clipRanges[j * 6 + 1], mm[slot + 1], bits);
  const sy = segmentStep(clipRanges[j * 6 + 3], mm[slot + 3], bits);
  const sz = segmentStep(clipRanges[j * 6 + 5], mm[slot + 5], bits);
  for (let k = 0; k < size; k++) {
    writeValue(rotation, ox + codes[k * 3] * sx, oy + codes[k * 3 + 1] * sy, oz + codes[k * 3 + 2] * sz, out, o + k * stride);
  }
}

function writeValue(ref: Float64Array | null, x: number, y: number, z: number, out: Float32Array, o: number): void {
  if (ref) writeRelativeRotation(ref[0], ref[1], ref[2], ref[3], x, y, z, out, o);
  else { out[o] = x; out[o + 1] = y; out[o + 2] = z; }
}
