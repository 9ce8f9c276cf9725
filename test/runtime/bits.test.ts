import { describe, expect, it } from 'vitest';

import {
  BitWriter,
  MAX_QUANT,
  bitsFromFloat,
  componentBits,
  decodeReference,
  floatFromBits,
  isRawRate,
  quantizeToScale,
  readBits,
  rotationRangeExtent,
  rotationRangeMin,
  segmentConstant,
  segmentExtent,
  segmentOffset,
  segmentStep,
  trackComponentBits,
} from '../../src/runtime/bits.js';
import { MAX_QUANTIZED_BITS, RAW_BITS } from '../../src/runtime/format.js';
import { mulberry32 } from '../utils/synthetic.js';

/** A uniformly random unsigned integer of `bits` bits (0..32). */
function randomBits(random: () => number, bits: number): number {
  if (bits === 0) return 0;
  const hi = Math.floor(random() * 0x10000),
    lo = Math.floor(random() * 0x10000);
  const v = ((hi << 16) | lo) >>> 0;
  return bits === 32 ? v : v & (2 ** bits - 1);
}

/** The largest unsigned integer of `bits` bits. */
function allOnes(bits: number): number {
  return 2 ** bits - 1;
}

describe('BitWriter and readBits', { timeout: 30_000 }, () => {
  it('round-trip every width 0..32 at every bit offset 0..31, leaving the neighbours intact', () => {
    const random = mulberry32(0xb175);
    for (let offset = 0; offset < 32; offset++) {
      for (let width = 0; width <= 32; width++) {
        const values = [0, allOnes(width)];
        for (let i = 0; i < 6; i++) values.push(randomBits(random, width));
        for (const value of values) {
          // Ones before and after the value catch any bleed into the neighbours.
          const writer = new BitWriter(1);
          writer.write(allOnes(offset), offset);
          writer.write(value, width);
          writer.write(0x5a5a5a5a >>> 0, 32);
          writer.write(1, 1);
          expect(writer.length).toBe(offset + width + 33);
          const words = writer.finish();
          expect(words.length).toBe(Math.ceil((offset + width + 33) / 32));
          expect(readBits(words, 0, offset)).toBe(allOnes(offset));
          expect(readBits(words, offset, width)).toBe(value);
          expect(readBits(words, offset + width, 32)).toBe(0x5a5a5a5a);
          expect(readBits(words, offset + width + 32, 1)).toBe(1);
        }
      }
    }
  });

  it('reads an unsigned result for every width at every offset, also past a zero-filled gap', () => {
    for (let offset = 0; offset < 32; offset++) {
      for (let width = 1; width <= 32; width++) {
        const writer = new BitWriter();
        writer.write(0, offset);
        writer.write(allOnes(width), width);
        const words = writer.finish();
        const v = readBits(words, offset, width);
        expect(v).toBe(allOnes(width));
        expect(v).toBeGreaterThanOrEqual(0);
        if (offset > 0) expect(readBits(words, 0, offset)).toBe(0);
      }
    }
  });

  it('writes only the low bits of a wider value', () => {
    const writer = new BitWriter();
    writer.write(0xffffffff, 5);
    writer.write(0, 7);
    writer.write(0x1234_5678, 12);
    const words = writer.finish();
    expect(readBits(words, 0, 5)).toBe(31);
    expect(readBits(words, 5, 7)).toBe(0);
    expect(readBits(words, 12, 12)).toBe(0x678);
    expect(words.length).toBe(1);
    expect(words[0] >>> 24).toBe(0);
  });

  it('round-trips a long seeded stream of mixed widths and grows past its initial size', () => {
    const random = mulberry32(77);
    const widths: number[] = [];
    const values: number[] = [];
    const writer = new BitWriter(1);
    for (let i = 0; i < 5000; i++) {
      const width = Math.floor(random() * 33);
      const value = random() < 0.1 ? allOnes(width) : randomBits(random, width);
      widths.push(width);
      values.push(value);
      writer.write(value, width);
    }
    const words = writer.finish();
    let bit = 0;
    for (let i = 0; i < widths.length; i++) {
      expect(readBits(words, bit, widths[i])).toBe(values[i]);
      bit += widths[i];
    }
    expect(writer.length).toBe(bit);
  });

  it('packs LSB-first in a byte stream: finishBytes matches the words on a little-endian host', () => {
    const writer = new BitWriter();
    writer.write(1, 1); // bit 0 of byte 0
    writer.write(0, 6);
    writer.write(1, 1); // bit 7 of byte 0
    writer.write(0xab, 8); // byte 1
    writer.write(0x3, 3); // low bits of byte 2
    const bytes = writer.finishBytes();
    expect(Array.from(bytes)).toEqual([0x81, 0xab, 0x03]);
    const words = writer.finish();
    expect(words[0]).toBe(0x03ab81);
  });

  it('align pads with zero bits to the requested multiple', () => {
    const writer = new BitWriter();
    writer.write(0x7, 3);
    writer.align(8);
    expect(writer.length).toBe(8);
    writer.align(8);
    expect(writer.length).toBe(8);
    writer.write(1, 1);
    writer.align(32);
    expect(writer.length).toBe(32);
    const words = writer.finish();
    expect(words[0]).toBe(0x107);
  });

  it('reading 0 bits gives 0 anywhere', () => {
    const words = Uint32Array.of(0xffffffff, 0xffffffff);
    for (let offset = 0; offset < 64; offset++) expect(readBits(words, offset, 0)).toBe(0);
  });
});

/** Seeded (clipMin, clipExtent, minByte, extentByte) cases, with a few fixed adversarial ones. */
function rangeCases(seed: number): Array<[number, number, number, number]> {
  const random = mulberry32(seed);
  const cases: Array<[number, number, number, number]> = [
    [0, 1, 0, 255],
    [-1, 2, 0, 255],
    [Math.fround(-123.456), Math.fround(789.5), 17, 200],
    [Math.fround(1e-20), Math.fround(3e-20), 255, 255],
    [Math.fround(-5e6), Math.fround(1e7), 128, 1],
  ];
  for (let i = 0; i < 12; i++) {
    const magnitude = 10 ** Math.floor(random() * 12 - 6);
    cases.push([
      Math.fround((random() * 2 - 1) * magnitude),
      Math.fround(random() * 2 * magnitude),
      Math.floor(random() * 256),
      1 + Math.floor(random() * 255),
    ]);
  }
  return cases;
}

/** Tolerance of a few float64 ulps around `values`. */
function ulps(...values: number[]): number {
  return 4 * Number.EPSILON * Math.max(...values.map(Math.abs));
}

/**
 * Largest error of rounding `x` to float32 (to nearest): half a float32 ulp, which is at
 * most |x| · 2^-24 for normal values and 2^-150 among subnormals.
 */
function f32Rounding(x: number): number {
  return Math.max(Math.abs(x) * 2 ** -24, 2 ** -150);
}

/** Is `x` exactly a float32 value. */
function isFloat32(x: number): boolean {
  return Math.fround(x) === x;
}

describe('quantisation at every bit rate 1..24', { timeout: 30_000 }, () => {
  it('MAX_QUANT holds 2^bits − 1 for every rate', () => {
    for (let bits = 0; bits <= 32; bits++) expect(MAX_QUANT[bits]).toBe(2 ** bits - 1);
  });

  it('dequantised codes re-quantise to themselves; inputs land within half a step', () => {
    const random = mulberry32(1234);
    for (const [clipMin, clipExtent, minByte, extentByte] of rangeCases(99)) {
      const offset = segmentOffset(clipMin, clipExtent, minByte);
      for (let bits = 1; bits <= MAX_QUANTIZED_BITS; bits++) {
        const step = segmentStep(clipExtent, extentByte, bits);
        const max = 2 ** bits - 1;
        const codes = [0, 1, max - 1, max, max >>> 1, (max >>> 1) + 1];
        for (let i = 0; i < 40; i++) codes.push(Math.floor(random() * (max + 1)));
        for (const q of codes) {
          if (q < 0 || q > max) continue;
          const value = offset + q * step;
          expect(quantizeToScale(value, offset, step, bits)).toBe(q);
        }
        // Arbitrary inputs inside the segment range.
        const top = offset + max * step;
        for (let i = 0; i < 40; i++) {
          const v = offset + random() * (top - offset);
          const q = quantizeToScale(v, offset, step, bits);
          expect(Number.isInteger(q) && q >= 0 && q <= max).toBe(true);
          expect(Math.abs(offset + q * step - v)).toBeLessThanOrEqual(step / 2 + ulps(v, offset, top));
        }
      }
    }
  });

  it('offsets and steps are the float32 rounding of the float64 formulas', () => {
    for (const [clipMin, clipExtent, minByte, extentByte] of rangeCases(5)) {
      const offset = segmentOffset(clipMin, clipExtent, minByte);
      expect(offset).toBe(Math.fround(clipMin + (minByte / 255) * clipExtent));
      expect(isFloat32(offset)).toBe(true);
      for (let bits = 0; bits <= MAX_QUANTIZED_BITS; bits++) {
        const step = segmentStep(clipExtent, extentByte, bits);
        expect(step).toBe(Math.fround((extentByte / 255) * clipExtent * (bits === 0 ? 0 : 1 / (2 ** bits - 1))));
        expect(isFloat32(step)).toBe(true);
      }
    }
    // Not float64 values any more: 1/3 and 1/255 are not float32.
    expect(segmentOffset(0, 1, 85)).toBe(Math.fround(1 / 3));
    expect(segmentOffset(0, 1, 85)).not.toBe(1 / 3);
    expect(segmentStep(1, 1, 8)).toBe(Math.fround((1 / 255) * (1 / 255)));
  });

  it('the end codes 0 and 2^bits − 1 map to the ends of the segment range within the float32 rounding of offset and step', () => {
    for (const [clipMin, clipExtent, minByte, extentByte] of rangeCases(7)) {
      const offset = segmentOffset(clipMin, clipExtent, minByte);
      // The range ends by the float64 formulas, before the offset and the step are rounded.
      const start = clipMin + (minByte / 255) * clipExtent;
      const end = start + (extentByte / 255) * clipExtent;
      expect(Math.abs(offset - start)).toBeLessThanOrEqual(f32Rounding(start));
      for (let bits = 1; bits <= MAX_QUANTIZED_BITS; bits++) {
        const step = segmentStep(clipExtent, extentByte, bits);
        const max = 2 ** bits - 1;
        expect(offset + 0 * step).toBe(offset);
        // Code max: max steps of a step rounded by at most |step| · 2^-24 each, from an offset rounded by |offset| · 2^-24.
        const top = offset + max * step;
        const slack = f32Rounding(offset) + max * f32Rounding(step);
        expect(Math.abs(top - end)).toBeLessThanOrEqual(slack + ulps(end, offset));
        // The ends quantise to the end codes, unless the rounding moved the top code half a
        // step or more: then to the code nearest the end, no further than the rounding.
        expect(quantizeToScale(offset, offset, step, bits)).toBe(0);
        const q = quantizeToScale(end, offset, step, bits);
        if (slack + ulps(end, offset) < step / 2) expect(q).toBe(max);
        expect((max - q) * step).toBeLessThanOrEqual(slack + step / 2 + ulps(end, offset));
        if (q < max) expect(Math.abs(offset + q * step - end)).toBeLessThanOrEqual(step / 2 + ulps(end, offset));
      }
    }
  });

  it('the unit range at 24 bits round-trips every code exactly (integers beyond float32 precision)', () => {
    const bits = 24;
    const step = segmentStep(1, 255, bits);
    // 1 / (2^24 − 1) = 2^-24 + 2^-48 + 2^-72 + …, just above the midpoint of 2^-24 and the next float32.
    expect(step).toBe(Math.fround(1 / (2 ** 24 - 1)));
    expect(step).toBe(2 ** -24 + 2 ** -47);
    for (let q = 2 ** 24 - 4096; q < 2 ** 24; q++) expect(quantizeToScale(q * step, 0, step, bits)).toBe(q);
    for (let q = 0; q < 4096; q++) expect(quantizeToScale(q * step, 0, step, bits)).toBe(q);
    // The top code lands within (2^24 − 1) · |step| · 2^-24 of 1, above it.
    const top = (2 ** 24 - 1) * step;
    expect(top).toBeGreaterThan(1);
    expect(top - 1).toBeLessThanOrEqual((2 ** 24 - 1) * f32Rounding(step));
  });

  it('clamps values outside the range and gives 0 for a zero step', () => {
    for (let bits = 1; bits <= MAX_QUANTIZED_BITS; bits++) {
      const step = segmentStep(2, 255, bits);
      expect(quantizeToScale(-0.5, 0, step, bits)).toBe(0);
      expect(quantizeToScale(3, 0, step, bits)).toBe(2 ** bits - 1);
      expect(quantizeToScale(0.3, 0.3, 0, bits)).toBe(0);
      expect(quantizeToScale(5, 0.3, segmentStep(7, 0, bits), bits)).toBe(0);
    }
  });

  it('segmentConstant is the float32 rounding of a 16-bit fraction of the clip range, hits both ends and round-trips every code', () => {
    for (const [clipMin, clipExtent] of rangeCases(3)) {
      if (!(clipExtent > 0)) continue;
      // The clip minimum of these cases is a float32, so code 0 is exactly it.
      expect(segmentConstant(clipMin, clipExtent, 0)).toBe(clipMin);
      expect(segmentConstant(clipMin, clipExtent, 65535)).toBe(Math.fround(clipMin + clipExtent));
      const halfCode = clipExtent / 65535 / 2;
      const notRounded: number[] = [],
        tooCoarse: number[] = [],
        wrong: number[] = [];
      for (let q = 0; q <= 65535; q++) {
        const v = segmentConstant(clipMin, clipExtent, q);
        const exact = clipMin + (q / 65535) * clipExtent;
        if (v !== Math.fround(exact)) notRounded.push(q);
        // float32 resolves half a code everywhere in these ranges, so its rounding keeps every code.
        if (!(f32Rounding(exact) + ulps(clipMin, clipExtent) < halfCode)) tooCoarse.push(q);
        if (Math.round(((v - clipMin) / clipExtent) * 65535) !== q) wrong.push(q);
      }
      expect({ notRounded, tooCoarse, wrong }).toEqual({ notRounded: [], tooCoarse: [], wrong: [] });
    }
  });

  it('segmentConstant on a range finer than float32 resolves collapses codes onto the nearest float32 values', () => {
    // float32 values near 1e6 are 1/16 apart: the 65536 codes of [1e6, 1e6 + 1] land on 17 of them.
    const values = new Set<number>();
    for (let q = 0; q <= 65535; q++) {
      const v = segmentConstant(1e6, 1, q);
      expect(Math.abs(v - (1e6 + q / 65535))).toBeLessThanOrEqual(1 / 32);
      values.add(v);
    }
    expect([...values].sort((a, b) => a - b)).toEqual(Array.from({ length: 17 }, (_, i) => 1e6 + i / 16));
  });

  it('a zero clip extent decodes to the clip minimum at every rate', () => {
    for (let bits = 1; bits <= MAX_QUANTIZED_BITS; bits++) {
      const offset = segmentOffset(-2.5, 0, 200);
      expect(offset + 12345 * segmentStep(0, 255, bits)).toBe(-2.5);
    }
    expect(segmentConstant(-2.5, 0, 40000)).toBe(-2.5);
  });
});

describe('floatFromBits and bitsFromFloat', { timeout: 30_000 }, () => {
  const patterns: Array<[string, number, number]> = [
    ['+0', 0x00000000, 0],
    ['-0', 0x80000000, -0],
    ['1', 0x3f800000, 1],
    ['-2', 0xc0000000, -2],
    ['smallest subnormal', 0x00000001, 2 ** -149],
    ['negative smallest subnormal', 0x80000001, -(2 ** -149)],
    ['largest subnormal', 0x007fffff, 2 ** -126 - 2 ** -149],
    ['smallest normal', 0x00800000, 2 ** -126],
    ['+max', 0x7f7fffff, 3.4028234663852886e38],
    ['-max', 0xff7fffff, -3.4028234663852886e38],
    ['+Infinity', 0x7f800000, Infinity],
    ['-Infinity', 0xff800000, -Infinity],
  ];

  it.each(patterns)('%s round-trips', (_name, bits, value) => {
    expect(Object.is(floatFromBits(bits), value)).toBe(true);
    expect(bitsFromFloat(value)).toBe(bits);
  });

  it('keeps the sign of -0 (not just its value)', () => {
    expect(bitsFromFloat(-0)).toBe(0x80000000);
    expect(bitsFromFloat(0)).toBe(0);
    expect(Object.is(floatFromBits(bitsFromFloat(-0)), -0)).toBe(true);
  });

  it('NaN bit patterns decode to NaN', () => {
    expect(floatFromBits(0x7fc00000)).toBeNaN();
    expect(floatFromBits(0xffffffff)).toBeNaN();
    expect(floatFromBits(bitsFromFloat(NaN))).toBeNaN();
  });

  it('round-trips seeded random non-NaN bit patterns exactly', () => {
    const random = mulberry32(2024);
    for (let i = 0; i < 20000; i++) {
      const bits = randomBits(random, 32);
      if ((bits & 0x7f800000) === 0x7f800000 && (bits & 0x007fffff) !== 0) continue; // NaN
      const value = floatFromBits(bits);
      expect(Math.fround(value)).toBe(value);
      expect(bitsFromFloat(value)).toBe(bits);
    }
  });

  it('rounds a float64 to float32 first', () => {
    expect(bitsFromFloat(0.1)).toBe(bitsFromFloat(Math.fround(0.1)));
    expect(floatFromBits(bitsFromFloat(0.1))).toBe(Math.fround(0.1));
    expect(bitsFromFloat(1e39)).toBe(0x7f800000);
  });

  it('stores raw floats through the bit stream unchanged', () => {
    const values = [0, -0, 1.5, -3.4028234663852886e38, 2 ** -149, Math.fround(Math.PI)];
    const writer = new BitWriter();
    writer.write(1, 3); // misalign on purpose
    for (const v of values) writer.write(bitsFromFloat(v), RAW_BITS);
    const words = writer.finish();
    values.forEach((v, i) => expect(Object.is(floatFromBits(readBits(words, 3 + 32 * i, RAW_BITS)), v)).toBe(true));
    expect(isRawRate(RAW_BITS)).toBe(true);
    expect(isRawRate(24)).toBe(false);
  });
});

describe('componentBits and trackComponentBits', { timeout: 30_000 }, () => {
  it('gives the widest component the full rate and a zero extent no bits', () => {
    for (let rate = 1; rate <= MAX_QUANTIZED_BITS; rate++) {
      expect(componentBits(rate, 0.37, 0.37)).toBe(rate);
      expect(componentBits(rate, 0, 0.37)).toBe(0);
      expect(componentBits(rate, 0, 0)).toBe(0);
    }
  });

  it('gives every component the fewest bits whose step is no coarser than the widest one', () => {
    const random = mulberry32(31);
    for (let rate = 1; rate <= MAX_QUANTIZED_BITS; rate++) {
      for (let i = 0; i < 300; i++) {
        const max = 10 ** (random() * 8 - 4);
        const extent = i % 10 === 0 ? max * 2 ** -Math.floor(random() * 30) : max * random();
        const b = componentBits(rate, extent, max);
        expect(b).toBeGreaterThanOrEqual(0);
        expect(b).toBeLessThanOrEqual(rate);
        // No coarser: extent / (2^b − 1) ≤ max / (2^rate − 1), in the decoder's exact arithmetic.
        expect(MAX_QUANT[b] * max).toBeGreaterThanOrEqual(extent * MAX_QUANT[rate]);
        // Fewest: one bit less would be coarser.
        if (b > 0) expect(MAX_QUANT[b - 1] * max).toBeLessThan(extent * MAX_QUANT[rate]);
      }
    }
  });

  it("reads each stored component's segment extent from its slot, by dropped component", () => {
    // Clip ranges of x, y, z, w: (min, extent) pairs with distinct extents.
    const clipRanges = Float64Array.of(-1, 2, -0.5, 0.25, 0, 1, 0.1, 0.01);
    const slot = Uint8Array.of(0, 255, 3, 128, 7, 9, 99);
    const out = new Uint8Array(4);
    for (const drop of [0, 1, 2, 3]) {
      const stored = [0, 1, 2, 3].filter((c) => c !== drop);
      for (const rate of [1, 5, 12, 24]) {
        trackComponentBits(slot, 0, rate, drop, clipRanges, 0, out, 1);
        const extents = stored.map((c, i) => segmentExtent(clipRanges[2 * c + 1], slot[2 * i + 1]));
        const max = Math.max(...extents);
        expect(Array.from(out.subarray(1, 4))).toEqual(extents.map((e) => componentBits(rate, e, max)));
        expect(out[0]).toBe(0); // writes only out[o..o+2]
      }
    }
    expect(segmentExtent(2, 255)).toBe(2);
    expect(segmentExtent(2, 0)).toBe(0);
    expect(segmentStep(2, 255, 0)).toBe(0);
  });
});

describe('rotation range and reference codes', () => {
  it('map u16 codes onto [−1, 1] ranges: 0 → −1, 32767 → 0, 65534 → 1', () => {
    expect(rotationRangeMin(0)).toBe(-1);
    expect(rotationRangeMin(32767)).toBe(0);
    expect(rotationRangeMin(65534)).toBe(1);
    expect(rotationRangeExtent(0)).toBe(0);
    expect(rotationRangeExtent(32767)).toBe(1);
    expect(rotationRangeExtent(65535)).toBeCloseTo(2, 4);
  });

  it('rebuild a reference with w ≥ 0 from its i16 x, y, z codes', () => {
    const out = new Float64Array(4);
    decodeReference(0, 0, 0, out, 0);
    expect(Array.from(out)).toEqual([0, 0, 0, 1]);
    decodeReference(32767, 0, 0, out, 0);
    expect(Array.from(out)).toEqual([1, 0, 0, 0]);
    decodeReference(-32767, -32767, 0, out, 0);
    expect(out[3]).toBe(0); // x² + y² > 1: w clamps to 0, never NaN
    const random = mulberry32(17);
    for (let i = 0; i < 1000; i++) {
      const codes = [0, 1, 2].map(() => Math.round((random() * 2 - 1) * 18000));
      decodeReference(codes[0], codes[1], codes[2], out, 0);
      // Rebuilt in float64, then each component rounded to float32 (docs/format.md section 6).
      expect(Array.from(out.subarray(0, 3))).toEqual(codes.map((c) => Math.fround(c / 32767)));
      const [x, y, z] = codes.map((c) => c / 32767);
      expect(out[3]).toBe(Math.fround(Math.sqrt(1 - x * x - y * y - z * z)));
      expect(out[3]).toBeGreaterThanOrEqual(0);
      expect(Math.hypot(...out)).toBeCloseTo(1, 6);
    }
  });
});
