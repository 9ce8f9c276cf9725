/**
 * Stages 3 and 5: range reduction. Per animated track and component, the clip range
 * (float32 min and extent) and, per segment, a sub-range quantised on 8 bits (min rounded
 * down, extent rounded up so the quantised range still covers every sample), or, for a
 * component that a segment stores as constant (rate 0), a 16-bit fraction of the clip range.
 */
import type { RawClip } from '../clip/raw-clip.js';
import { ANIMATED_COMPONENTS, TRACKS_PER_BONE, TRACK_KIND } from '../runtime/format.js';
import { segmentConstant, segmentOffset } from '../runtime/bits.js';
import type { SegmentLayout } from './segment.js';
import { rotationDeltas, rotationReference, type RotationReference } from './preprocess.js';

/**
 * The values of one animated track: `values[s * 3 + c]`; for rotations, x, y, z of the
 * delta from `ref` (w ≥ 0 implied).
 */
export interface AnimatedTrack {
  readonly track: number;
  readonly bone: number;
  readonly kind: number;
  readonly values: Float32Array;
  /** Rotation reference xyzw (float32 values); identity for other kinds. */
  readonly ref: Float64Array;
}

/** Copies the quantised components of each animated track into its own array. */
export function gatherAnimatedTracks(clip: RawClip, rotations: Float32Array, animated: Int32Array, reference: RotationReference): AnimatedTrack[] {
  const n = clip.sampleCount;
  const out: AnimatedTrack[] = [];
  for (const track of animated) {
    const bone = (track / TRACKS_PER_BONE) | 0;
    const kind = track % TRACKS_PER_BONE;
    const values = new Float32Array(n * ANIMATED_COMPONENTS);
    const ref = Float64Array.of(0, 0, 0, 1);
    if (kind === TRACK_KIND.ROTATION) {
      rotationReference(rotations, bone, n, reference, ref);
      rotationDeltas(rotations, bone, n, ref, values);
      out.push({ track, bone, kind, values, ref });
      continue;
    }
    const src = kind === TRACK_KIND.TRANSLATION ? clip.translations : clip.scales;
    values.set(src.subarray(bone * n * 3, (bone + 1) * n * 3));
    out.push({ track, bone, kind, values, ref });
  }
  return out;
}

/** Smallest float32 above `v`. */
function nextFloat32Up(v: number): number {
  const f = new Float32Array([v]);
  const u = new Uint32Array(f.buffer);
  if (v === 0) return 1.401298464324817e-45;
  u[0] += v > 0 ? 1 : -1;
  return f[0];
}

/**
 * Clip ranges: `out[j * 6 + c * 2]` = min, `[+1]` = extent, float32 values such that
 * min + extent ≥ max in the decoder's arithmetic.
 */
export function extractClipRanges(tracks: readonly AnimatedTrack[], sampleCount: number): Float32Array {
  const out = new Float32Array(tracks.length * 6);
  tracks.forEach((t, j) => {
    for (let c = 0; c < ANIMATED_COMPONENTS; c++) {
      let min = Infinity, max = -Infinity;
      for (let s = 0; s < sampleCount; s++) {
        const v = t.values[s * 3 + c];
        if (v < min) min = v;
        if (v > max) max = v;
      }
      let ext = Math.fround(max - min);
      while (min + ext < max) ext = nextFloat32Up(ext);
      out[j * 6 + c * 2] = min;
      out[j * 6 + c * 2 + 1] = ext;
    }
  });
  return out;
}

/** Per segment, per animated track, per component: the 8-bit range and the 16-bit constant. */
export interface SegmentRanges {
  /** `minMax[((s * trackCount + j) * 3 + c) * 2]` = min byte, `[+1]` = extent byte. */
  readonly minMax: Uint8Array;
  /** `constant[(s * trackCount + j) * 3 + c]` = value at rate 0, in 1/65535 of the clip range. */
  readonly constant: Uint16Array;
}

/** Quantises each segment's range inside the clip range (stage 5). */
export function extractSegmentRanges(tracks: readonly AnimatedTrack[], clipRanges: Float32Array, layout: SegmentLayout): SegmentRanges {
  const trackCount = tracks.length;
  const minMax = new Uint8Array(layout.count * trackCount * 6);
  const constant = new Uint16Array(layout.count * trackCount * 3);
  for (let s = 0; s < layout.count; s++) {
    const start = layout.starts[s], end = start + layout.sizes[s];
    for (let j = 0; j < trackCount; j++) {
      const values = tracks[j].values;
      for (let c = 0; c < ANIMATED_COMPONENTS; c++) {
        const clipMin = clipRanges[j * 6 + c * 2], clipExt = clipRanges[j * 6 + c * 2 + 1];
        let lo = Infinity, hi = -Infinity;
        for (let k = start; k < end; k++) {
          const v = values[k * 3 + c];
          if (v < lo) lo = v;
          if (v > hi) hi = v;
        }
        const slot = (s * trackCount + j) * 3 + c;
        let minByte = 0, extByte = 0;
        if (clipExt > 0) {
          minByte = Math.min(255, Math.max(0, Math.floor(((lo - clipMin) / clipExt) * 255)));
          while (minByte > 0 && segmentOffset(clipMin, clipExt, minByte) > lo) minByte--;
          const offset = segmentOffset(clipMin, clipExt, minByte);
          extByte = Math.min(255, Math.max(0, Math.ceil(((hi - offset) / clipExt) * 255)));
          while (extByte < 255 && offset + (extByte / 255) * clipExt < hi) extByte++;
          const q = Math.round((((lo + hi) / 2 - clipMin) / clipExt) * 65535);
          constant[slot] = Math.min(65535, Math.max(0, q));
        }
        minMax[slot * 2] = minByte;
        minMax[slot * 2 + 1] = extByte;
      }
    }
  }
  return { minMax, constant };
}

/** Value the decoder produces for a rate-0 component (exported for tests). */
export function constantComponentValue(clipMin: number, clipExt: number, q16: number): number {
  return segmentConstant(clipMin, clipExt, q16);
}
