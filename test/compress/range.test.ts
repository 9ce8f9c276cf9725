import { describe, expect, it } from 'vitest';

import {
  extractClipRanges,
  extractSegmentRanges,
  storedComponent,
  type AnimatedTrack,
  type ClipRanges,
  type SegmentRanges,
} from '../../src/compress/range.js';
import { segmentClip, type SegmentLayout } from '../../src/compress/segment.js';
import {
  quantizeToScale,
  rotationRangeExtent,
  rotationRangeMin,
  segmentConstant,
  segmentOffset,
  segmentStep,
} from '../../src/runtime/bits.js';
import { TRACK_KIND } from '../../src/runtime/format.js';
import { mulberry32 } from '../utils/synthetic.js';

/** A vector track (translation) over `values` (xyz per sample). */
function vectorTrack(values: Float32Array, j: number, segments: number): AnimatedTrack {
  return {
    track: j * 3 + TRACK_KIND.TRANSLATION,
    bone: j,
    kind: TRACK_KIND.TRANSLATION,
    width: 3,
    values,
    ref: Float64Array.of(0, 0, 0, 1),
    refCodes: new Int16Array(3),
    drop: new Uint8Array(segments).fill(3),
  };
}

/** A rotation-delta track (xyzw per sample) with a dropped component per segment. */
function rotationTrack(values: Float32Array, j: number, drop: Uint8Array): AnimatedTrack {
  return {
    track: j * 3,
    bone: j,
    kind: TRACK_KIND.ROTATION,
    width: 4,
    values,
    ref: Float64Array.of(0, 0, 0, 1),
    refCodes: new Int16Array(3),
    drop,
  };
}

/** Generators of one component's samples, by name. */
type Gen = (random: () => number, s: number, n: number) => number;
/**
 * Each generator feeds the translation tracks; those whose values stay in [−1, 1] (`true`)
 * also feed a rotation-delta track, whose clip range is stored as u16 codes of [−1, 1].
 */
const GENERATORS: Record<string, [Gen, boolean]> = {
  'uniform in [-1, 1]': [(r) => r() * 2 - 1, true],
  'smooth sine': [(_r, s) => Math.sin(s * 0.37) * 3.5 + 1, false],
  'smooth sine in [-1, 1]': [(_r, s) => Math.sin(s * 0.37) * 0.999, true],
  constant: [() => 4.25, false],
  'constant in [-1, 1]': [() => -0.3, true],
  'constant zero': [() => 0, true],
  'exactly -1 and 1': [(r) => (r() < 0.5 ? -1 : 1), true],
  'near 1': [(r) => 1 - r() * 1e-6, true],
  'negative only': [(r) => -1000 - r() * 50, false],
  'huge magnitude': [(r) => (r() * 2 - 1) * 1e30, false],
  'huge offset, small spread': [(r) => 1e6 + r() * 1e-1, false],
  'tiny magnitude': [(r) => (r() * 2 - 1) * 1e-30, true],
  subnormal: [(r) => r() * 1e-40, true],
  'on 1/255 boundaries of [0, 1]': [(r) => Math.floor(r() * 256) / 255, true],
  'on 1/255 boundaries of [-3.7, 5.1]': [
    (r, s) => (s === 0 ? -3.7 : s === 1 ? 5.1 : -3.7 + (Math.floor(r() * 256) / 255) * 8.8),
    false,
  ],
  'on 1/32767 codes of [-1, 1]': [(r) => Math.floor(r() * 65535) / 32767 - 1, true],
  'two values': [(r) => (r() < 0.5 ? -0.3 : 0.7), true],
  'one spike': [(_r, s) => (s === 21 ? 9 : 1), false],
};

interface Case {
  name: string;
  tracks: AnimatedTrack[];
  layout: SegmentLayout;
}

/** Builds a case: 3 vector tracks and (for unit-range data) 1 rotation-delta track, each component from `gen`. */
function makeCase(name: string, gen: Gen, unitRange: boolean, n: number, seed: number): Case {
  const random = mulberry32(seed);
  const layout = segmentClip(n);
  const tracks: AnimatedTrack[] = [];
  for (let j = 0; j < 3; j++) {
    const values = new Float32Array(n * 3);
    for (let s = 0; s < n; s++) for (let c = 0; c < 3; c++) values[s * 3 + c] = gen(random, s, n);
    tracks.push(vectorTrack(values, j, layout.count));
  }
  if (unitRange) {
    const values = new Float32Array(n * 4);
    for (let s = 0; s < n; s++) for (let c = 0; c < 4; c++) values[s * 4 + c] = gen(random, s, n);
    const drop = new Uint8Array(layout.count);
    for (let seg = 0; seg < layout.count; seg++) drop[seg] = Math.floor(random() * 4);
    tracks.push(rotationTrack(values, 3, drop));
  }
  return { name, tracks, layout };
}

const SAMPLE_COUNTS = [1, 2, 16, 23, 24, 57];
const CASES: Case[] = [];
let seed = 1;
for (const [name, [gen, unitRange]] of Object.entries(GENERATORS)) {
  for (const n of SAMPLE_COUNTS) CASES.push(makeCase(`${name}, ${n} samples`, gen, unitRange, n, seed++));
}

/** Calls `visit` for each stored component value of every track, segment and slot. */
function forEachStored(
  c: Case,
  visit: (j: number, seg: number, slot: number, component: number, values: number[]) => void,
): void {
  c.tracks.forEach((t, j) => {
    for (let seg = 0; seg < c.layout.count; seg++) {
      for (let slot = 0; slot < 3; slot++) {
        const component = t.width === 4 ? storedComponent(slot, t.drop[seg]) : slot;
        const values: number[] = [];
        for (let s = c.layout.starts[seg]; s < c.layout.starts[seg] + c.layout.sizes[seg]; s++)
          values.push(t.values[s * t.width + component]);
        visit(j, seg, slot, component, values);
      }
    }
  });
}

function rangeOf(ranges: ClipRanges, j: number, component: number): [number, number] {
  return [ranges.values[ranges.offsets[j] + 2 * component], ranges.values[ranges.offsets[j] + 2 * component + 1]];
}

/**
 * Largest error of rounding `x` to float32 (to nearest): half a float32 ulp, which is at
 * most |x| · 2^-24 for normal values and 2^-150 among subnormals.
 */
function f32Rounding(x: number): number {
  return Math.max(Math.abs(x) * 2 ** -24, 2 ** -150);
}

function slotBytes(
  seg: SegmentRanges,
  c: Case,
  segment: number,
  j: number,
  slot: number,
): { minByte: number; extByte: number; q16: number } {
  const at = (segment * c.tracks.length + j) * 3 + slot;
  return { minByte: seg.minMax[at * 2], extByte: seg.minMax[at * 2 + 1], q16: seg.constant[at] };
}

describe('storedComponent', () => {
  it('leaves out the dropped component and keeps x, y, z, w order', () => {
    expect([0, 1, 2].map((slot) => storedComponent(slot, 0))).toEqual([1, 2, 3]);
    expect([0, 1, 2].map((slot) => storedComponent(slot, 1))).toEqual([0, 2, 3]);
    expect([0, 1, 2].map((slot) => storedComponent(slot, 2))).toEqual([0, 1, 3]);
    expect([0, 1, 2].map((slot) => storedComponent(slot, 3))).toEqual([0, 1, 2]);
  });
});

describe('extractClipRanges', { timeout: 30_000 }, () => {
  it.each(CASES.map((c) => [c.name, c] as const))('%s: the clip range covers every stored sample', (_name, c) => {
    const ranges = extractClipRanges(c.tracks, c.layout);
    let offset = 0;
    c.tracks.forEach((t, j) => {
      expect(ranges.offsets[j]).toBe(offset);
      offset += t.kind === TRACK_KIND.ROTATION ? 8 : 6;
    });
    expect(ranges.values.length).toBe(offset);
    const seen = new Set<string>();
    forEachStored(c, (j, _seg, _slot, component, values) => {
      const [min, ext] = rangeOf(ranges, j, component);
      seen.add(`${j}:${component}`);
      expect(ext).toBeGreaterThanOrEqual(0);
      const at = ranges.offsets[j] + 2 * component;
      if (c.tracks[j].kind === TRACK_KIND.ROTATION) {
        // Stored as u16 codes; `values` holds exactly what the decoder rebuilds from them.
        expect(min).toBe(rotationRangeMin(ranges.codes[at]));
        expect(ext).toBe(rotationRangeExtent(ranges.codes[at + 1]));
      } else {
        // Stored as float32.
        expect(Math.fround(min)).toBe(min);
        expect(Math.fround(ext)).toBe(ext);
      }
      for (const v of values) {
        expect(min).toBeLessThanOrEqual(v);
        expect(min + ext).toBeGreaterThanOrEqual(v);
      }
    });
    // The range is tight: a float32 minimum is the smallest stored sample; a u16 one is within a code of it.
    for (const key of seen) {
      const [j, component] = key.split(':').map(Number);
      let lo = Infinity,
        hi = -Infinity;
      forEachStored(c, (jj, _seg, _slot, cc, values) => {
        if (jj === j && cc === component) {
          lo = Math.min(lo, ...values);
          hi = Math.max(hi, ...values);
        }
      });
      const [min, ext] = rangeOf(ranges, j, component);
      if (c.tracks[j].kind === TRACK_KIND.ROTATION) {
        expect(lo - min).toBeLessThan(1 / 32767);
        expect(min + ext - hi).toBeLessThan(2 / 32767);
      } else {
        expect(min).toBe(lo);
      }
    }
  });

  it('gives a rotation component that is dropped in every segment the range (0, 0)', () => {
    const layout = segmentClip(40);
    const values = new Float32Array(40 * 4).map((_, i) => (i % 4) / 4 - 0.5);
    const ranges = extractClipRanges([rotationTrack(values, 0, new Uint8Array(layout.count).fill(1))], layout);
    // Never stored: the range of the value 0, codes (32767, 0).
    expect(rangeOf(ranges, 0, 1)).toEqual([0, 0]);
    expect(Array.from(ranges.codes.subarray(2, 4))).toEqual([32767, 0]);
    // A constant component on an exact code gets a zero extent; off a code, one code of extent.
    expect(rangeOf(ranges, 0, 2)).toEqual([0, 0]);
    const [min, ext] = rangeOf(ranges, 0, 0);
    expect(min).toBeLessThanOrEqual(-0.5);
    expect(min + ext).toBeGreaterThanOrEqual(-0.5);
    expect(ext).toBeLessThanOrEqual(1 / 32767);
  });

  it('rounds the extent up so min + extent reaches a maximum that float32 subtraction would miss', () => {
    // max - min is not a float32; rounded to nearest it would fall short of max.
    const values = Float32Array.of(-1e-8, 0, 0, 1, 0, 0, 0.3, 0, 0);
    const layout = segmentClip(3);
    const ranges = extractClipRanges([vectorTrack(values, 0, layout.count)], layout);
    const [min, ext] = rangeOf(ranges, 0, 0);
    expect(min + ext).toBeGreaterThanOrEqual(1);
    expect(Math.fround(ext)).toBe(ext);
  });
});

describe('extractSegmentRanges', { timeout: 30_000 }, () => {
  it.each(CASES.map((c) => [c.name, c] as const))('%s: the 8-bit segment range never excludes a sample', (_name, c) => {
    const clipRanges = extractClipRanges(c.tracks, c.layout);
    const seg = extractSegmentRanges(c.tracks, clipRanges, c.layout);
    expect(seg.minMax.length).toBe(c.layout.count * c.tracks.length * 6);
    expect(seg.constant.length).toBe(c.layout.count * c.tracks.length * 3);
    forEachStored(c, (j, segment, slot, component, values) => {
      const [clipMin, clipExt] = rangeOf(clipRanges, j, component);
      const { minByte, extByte, q16 } = slotBytes(seg, c, segment, j, slot);
      const lo = Math.min(...values),
        hi = Math.max(...values);
      if (clipExt === 0) {
        expect([minByte, extByte, q16]).toEqual([0, 0, 0]);
        for (const v of values) expect(segmentOffset(clipMin, clipExt, minByte)).toBe(v);
        return;
      }
      const offset = segmentOffset(clipMin, clipExt, minByte);
      // The decoder's offset is a float32 (by definition), and the min byte is rounded down
      // so that this float32 is ≤ every sample…
      expect(Math.fround(offset)).toBe(offset);
      for (const v of values) expect(offset).toBeLessThanOrEqual(v);
      // …and as high as it can go: the next byte's offset, before its float32 rounding, is above the lowest sample.
      if (minByte < 255) expect(clipMin + ((minByte + 1) / 255) * clipExt).toBeGreaterThan(lo);
      // Extent rounded up (when the byte is not saturated), and as small as it can be.
      const top = offset + (extByte / 255) * clipExt;
      if (extByte < 255) for (const v of values) expect(top).toBeGreaterThanOrEqual(v);
      if (extByte > 0) expect(offset + ((extByte - 1) / 255) * clipExt).toBeLessThan(hi);
      // The decoder's arithmetic: every sample quantises within half a step at every rate,
      // plus what the float32 step loses over the range: q_max · (its rounding). The offset's
      // rounding adds nothing: the bytes were chosen around the rounded offset.
      for (const bits of [1, 3, 8, 16, 24]) {
        const step = segmentStep(clipExt, extByte, bits);
        expect(Math.fround(step)).toBe(step);
        const stepRounding = (2 ** bits - 1) * f32Rounding(step);
        const slack = 8 * Number.EPSILON * Math.max(Math.abs(offset), Math.abs(hi), Math.abs(lo));
        for (const v of values) {
          const q = quantizeToScale(v, offset, step, bits);
          expect(Math.abs(offset + q * step - v)).toBeLessThanOrEqual(step / 2 + stepRounding + slack);
        }
      }
      // Rate 0 stores the segment's midpoint on 16 bits of the clip range, rounded to float32.
      const constant = segmentConstant(clipMin, clipExt, q16);
      expect(Math.fround(constant)).toBe(constant);
      expect(Math.abs(constant - (lo + hi) / 2)).toBeLessThanOrEqual(
        clipExt / 65535 / 2 +
          f32Rounding(constant) +
          8 * Number.EPSILON * Math.max(Math.abs(lo), Math.abs(hi), Math.abs(clipMin)),
      );
    });
  });

  it('uses the clip range of the component each segment actually stores', () => {
    // Component x spans [-1, 1] but is dropped in segment 1; z spans [10, 20].
    const n = 32;
    const layout = segmentClip(n);
    const values = new Float32Array(n * 4);
    for (let s = 0; s < n; s++) {
      values[s * 4] = s < 16 ? -1 + s / 16 : 0.9; // x: 0.9 only where dropped
      values[s * 4 + 1] = 0.5;
      values[s * 4 + 2] = -0.5 + s / (n - 1);
      values[s * 4 + 3] = 0.25;
    }
    const track = rotationTrack(values, 0, Uint8Array.of(3, 0));
    const clipRanges = extractClipRanges([track], layout);
    const [xMin, xExt] = rangeOf(clipRanges, 0, 0);
    expect(xMin).toBe(-1);
    expect(xMin + xExt).toBeGreaterThanOrEqual(values[15 * 4]);
    expect(xMin + xExt).toBeLessThan(0.9);
    const seg = extractSegmentRanges([track], clipRanges, layout);
    const c: Case = { name: 'drop', tracks: [track], layout };
    // Segment 1 drops x: its slots hold y, z, w.
    const z = slotBytes(seg, c, 1, 0, 1);
    const [zMin, zExt] = rangeOf(clipRanges, 0, 2);
    expect(segmentOffset(zMin, zExt, z.minByte)).toBeLessThanOrEqual(values[16 * 4 + 2]);
    expect(segmentOffset(zMin, zExt, z.minByte) + (z.extByte / 255) * zExt).toBeGreaterThanOrEqual(values[31 * 4 + 2]);
    // Segment 0 keeps x in slot 0 and covers its whole clip range.
    expect(slotBytes(seg, c, 0, 0, 0)).toMatchObject({ minByte: 0, extByte: 255 });
  });
});
