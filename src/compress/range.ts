/**
 * Stages 3 and 5: range reduction. Per animated track and component, the clip range
 * (float32 min and extent) and, per segment, a sub-range quantised on 8 bits (min rounded
 * down, extent rounded up so the quantised range still covers every sample), or, for a
 * component that a segment stores as constant (rate 0), a 16-bit fraction of the clip range.
 */
import type { RawClip } from '../clip/raw-clip.js';
import {
  ANIMATED_COMPONENTS,
  RANGE_COMPONENTS,
  ROTATION_CODE_SCALE,
  TRACKS_PER_BONE,
  TRACK_KIND,
} from '../runtime/format.js';
import { rotationRangeExtent, rotationRangeMin, segmentOffset } from '../runtime/bits.js';
import type { SegmentLayout } from './segment.js';
import { chooseDroppedComponents, rotationDeltas, rotationReference, type RotationReference } from './preprocess.js';

/**
 * One animated track's values, `values[s * width + c]`: xyzw of the delta from `ref` for
 * rotations (signed per segment so the dropped component is ≥ 0), xyz otherwise.
 */
export interface AnimatedTrack {
  readonly track: number;
  readonly bone: number;
  readonly kind: number;
  /** 4 for rotations, 3 for translations and scales. */
  readonly width: number;
  readonly values: Float32Array;
  /** Rotation reference xyzw as the decoder rebuilds it; identity for other kinds. */
  readonly ref: Float64Array;
  /** The reference's i16 x, y, z codes (rotations). */
  readonly refCodes: Int16Array;
  /** Component each segment drops (rotations); 3 for vectors, whose stored components are x, y, z. */
  readonly drop: Uint8Array;
}

/** Component stored in `slot` (0..2) when `drop` is left out. */
export function storedComponent(slot: number, drop: number): number {
  // Branch-free: a branch first taken late (the first segment dropping x, y or z) would
  // deoptimise every hot function this is inlined into.
  return slot + ((drop - slot - 1) >>> 31);
}

/** Copies each animated track into its own array, rotations as deltas from their reference. */
export function gatherAnimatedTracks(
  clip: RawClip,
  rotations: Float32Array,
  animated: Int32Array,
  reference: RotationReference,
  layout: SegmentLayout,
): AnimatedTrack[] {
  const n = clip.sampleCount;
  const out: AnimatedTrack[] = [];
  for (const track of animated) {
    const bone = (track / TRACKS_PER_BONE) | 0;
    const kind = track % TRACKS_PER_BONE;
    const ref = Float64Array.of(0, 0, 0, 1);
    const refCodes = new Int16Array(3);
    const drop = new Uint8Array(layout.count).fill(3);
    if (kind === TRACK_KIND.ROTATION) {
      const values = new Float32Array(n * 4);
      rotationReference(rotations, bone, n, reference, ref, refCodes);
      rotationDeltas(rotations, bone, n, ref, values);
      chooseDroppedComponents(values, layout.starts, layout.sizes, drop);
      out.push({ track, bone, kind, width: 4, values, ref, refCodes, drop });
    } else {
      const src = kind === TRACK_KIND.TRANSLATION ? clip.translations : clip.scales;
      out.push({
        track,
        bone,
        kind,
        width: 3,
        values: src.slice(bone * n * 3, (bone + 1) * n * 3),
        ref,
        refCodes,
        drop,
      });
    }
  }
  return out;
}

/** Clip ranges of every animated track, in file order. */
export interface ClipRanges {
  /** Per track, per component: min and extent as the decoder reads them, with min + extent ≥ max. */
  readonly values: Float64Array;
  /** First value of each track in `values`. */
  readonly offsets: Int32Array;
  /** u16 min and extent codes of rotation components (`values` holds them decoded), same indexing. */
  readonly codes: Uint16Array;
}

/** Smallest float32 above `v` (v ≥ 0). */
function nextFloat32Up(v: number): number {
  if (v === 0) return 1.401298464324817e-45;
  const f = new Float32Array([v]);
  new Uint32Array(f.buffer)[0] += 1;
  return f[0];
}

/** Per track and component, the range over the samples where the component is stored (stage 3). */
export function extractClipRanges(tracks: readonly AnimatedTrack[], layout: SegmentLayout): ClipRanges {
  const offsets = new Int32Array(tracks.length);
  let total = 0;
  for (let j = 0; j < tracks.length; j++) {
    offsets[j] = total;
    total += 2 * RANGE_COMPONENTS[tracks[j].kind];
  }
  const ranges: ClipRanges = { values: new Float64Array(total), offsets, codes: new Uint16Array(total) };
  for (let j = 0; j < tracks.length; j++) extractTrackClipRange(tracks[j], layout, ranges, offsets[j]);
  return ranges;
}

/** {@link extractClipRanges} of one track, written from `ranges.values[first]` (and `codes`). */
function extractTrackClipRange(t: AnimatedTrack, layout: SegmentLayout, ranges: ClipRanges, first: number): void {
  const { values, codes } = ranges;
  for (let c = 0; c < t.width; c++) {
    let min = Infinity,
      max = -Infinity;
    for (let seg = 0; seg < layout.count; seg++) {
      if (t.drop[seg] === c) continue;
      const end = layout.starts[seg] + layout.sizes[seg];
      for (let s = layout.starts[seg]; s < end; s++) {
        const v = t.values[s * t.width + c];
        if (v < min) min = v;
        if (v > max) max = v;
      }
    }
    if (min > max) {
      min = 0;
      max = 0;
    } // never stored
    const at = first + 2 * c;
    if (t.kind === TRACK_KIND.ROTATION) {
      // u16 codes: min rounded down, extent rounded up, so the range still covers every value.
      let minCode = Math.max(0, Math.min(65535, Math.floor((min + 1) * ROTATION_CODE_SCALE)));
      while (minCode > 0 && rotationRangeMin(minCode) > min) minCode--;
      let extCode = Math.max(0, Math.min(65535, Math.ceil((max - rotationRangeMin(minCode)) * ROTATION_CODE_SCALE)));
      while (extCode < 65535 && rotationRangeMin(minCode) + rotationRangeExtent(extCode) < max) extCode++;
      codes[at] = minCode;
      codes[at + 1] = extCode;
      values[at] = rotationRangeMin(minCode);
      values[at + 1] = rotationRangeExtent(extCode);
      continue;
    }
    let ext = Math.fround(max - min);
    while (min + ext < max) ext = nextFloat32Up(ext);
    values[at] = min;
    values[at + 1] = ext;
  }
}

/** Per segment, per animated track, per stored component: the 8-bit range and the 16-bit constant. */
export interface SegmentRanges {
  /** `minMax[((s * trackCount + j) * 3 + slot) * 2]` = min byte, `[+1]` = extent byte. */
  readonly minMax: Uint8Array;
  /** `constant[(s * trackCount + j) * 3 + slot]` = value at rate 0, in 1/65535 of the clip range. */
  readonly constant: Uint16Array;
}

/** Quantises each segment's range inside the clip range (stage 5). */
export function extractSegmentRanges(
  tracks: readonly AnimatedTrack[],
  clipRanges: ClipRanges,
  layout: SegmentLayout,
): SegmentRanges {
  const trackCount = tracks.length;
  const ranges: SegmentRanges = {
    minMax: new Uint8Array(layout.count * trackCount * 6),
    constant: new Uint16Array(layout.count * trackCount * 3),
  };
  // One call per segment and track: the engine compiles that small function alone rather
  // than this whole loop mid-run and again whole.
  for (let seg = 0; seg < layout.count; seg++)
    for (let j = 0; j < trackCount; j++)
      extractTrackSegmentRange(tracks[j], j, trackCount, seg, layout, clipRanges, ranges);
  return ranges;
}

/** {@link extractSegmentRanges} of track `j` (`t`) in segment `seg`. */
function extractTrackSegmentRange(
  t: AnimatedTrack,
  j: number,
  trackCount: number,
  seg: number,
  layout: SegmentLayout,
  clipRanges: ClipRanges,
  ranges: SegmentRanges,
): void {
  const { minMax, constant } = ranges;
  const start = layout.starts[seg],
    end = start + layout.sizes[seg];
  for (let slot = 0; slot < ANIMATED_COMPONENTS; slot++) {
    const c = storedComponent(slot, t.drop[seg]);
    const clipMin = clipRanges.values[clipRanges.offsets[j] + 2 * c];
    const clipExt = clipRanges.values[clipRanges.offsets[j] + 2 * c + 1];
    let lo = Infinity,
      hi = -Infinity;
    for (let s = start; s < end; s++) {
      const v = t.values[s * t.width + c];
      if (v < lo) lo = v;
      if (v > hi) hi = v;
    }
    const at = (seg * trackCount + j) * 3 + slot;
    let minByte = 0,
      extByte = 0;
    if (clipExt > 0) {
      minByte = Math.min(255, Math.max(0, Math.floor(((lo - clipMin) / clipExt) * 255)));
      while (minByte > 0 && segmentOffset(clipMin, clipExt, minByte) > lo) minByte--;
      const offset = segmentOffset(clipMin, clipExt, minByte);
      extByte = Math.min(255, Math.max(0, Math.ceil(((hi - offset) / clipExt) * 255)));
      while (extByte < 255 && offset + (extByte / 255) * clipExt < hi) extByte++;
      // The division above can round up past a byte that already covers hi.
      while (extByte > 0 && offset + ((extByte - 1) / 255) * clipExt >= hi) extByte--;
      constant[at] = Math.min(65535, Math.max(0, Math.round((((lo + hi) / 2 - clipMin) / clipExt) * 65535)));
    }
    minMax[at * 2] = minByte;
    minMax[at * 2 + 1] = extByte;
  }
}
