/**
 * reconstructTrackSegment over part of a segment: the bit-rate search measures a trial at
 * one key from that key alone rebuilt, and keeps its decision only because the key comes
 * out exactly as in the whole segment's rebuild (the one the decoder test checks against
 * the decoder), with or without its dequantization passed in; and the rounding of its codes.
 */
import { describe, expect, it } from 'vitest';

import {
  DEQUANTIZATION_STRIDE,
  dequantization,
  reconstructTrackSegment,
  roundHalfUp,
} from '../../src/compress/quantize.js';
import { MAX_QUANTIZED_BITS, RAW_BITS } from '../../src/runtime/format.js';
import { encodeWithRates } from '../utils/clips.js';
import { makeSyntheticClip } from '../utils/synthetic.js';

const RATES = [0, ...Array.from({ length: MAX_QUANTIZED_BITS }, (_, i) => i + 1), RAW_BITS];

describe('reconstructTrackSegment', () => {
  it('rebuilds one key alone exactly as within its segment, at every rate and dropped component', () => {
    // Big rotations (every component dropped somewhere), animated translations and scales,
    // a short last segment.
    const clip = makeSyntheticClip({
      boneCount: 6,
      sampleCount: 45,
      seed: 7,
      animatedScale: true,
      maxAngleDeg: 175,
      animatedTranslationShare: 0.5,
    });
    const enc = encodeWithRates(clip, () => RAW_BITS, { reference: 'identity' });
    const drops = new Set<number>();
    const bits = new Uint8Array(3);
    const known = new Float64Array(3 * DEQUANTIZATION_STRIDE);
    let compared = 0;
    enc.tracks.forEach((track, j) => {
      for (let s = 0; s < enc.layout.count; s++) {
        const size = enc.layout.sizes[s];
        drops.add(track.drop[s]);
        for (const rate of RATES) {
          const at = { j, trackCount: enc.tracks.length, segment: s, start: enc.layout.starts[s], size };
          const whole = new Float32Array(size * 4);
          reconstructTrackSegment(track, at, rate, enc.clipRanges, enc.ranges, whole, 0, 4);
          if (rate > 0 && rate !== RAW_BITS)
            dequantization(track, at, rate, enc.clipRanges, enc.ranges, known, 0, bits);
          for (let k = 0; k < size; k++) {
            const one = { ...at, start: at.start + k, size: 1 };
            const alone = new Float32Array(4);
            reconstructTrackSegment(track, one, rate, enc.clipRanges, enc.ranges, alone, 0, 4);
            expect(alone).toEqual(whole.subarray(k * 4, k * 4 + 4));
            const fromKnown = new Float32Array(4);
            reconstructTrackSegment(track, one, rate, enc.clipRanges, enc.ranges, fromKnown, 0, 4, known, 0);
            expect(fromKnown).toEqual(alone);
            compared++;
          }
        }
      }
    });
    expect(compared).toBe(enc.tracks.length * clip.sampleCount * RATES.length);
    expect(drops.size).toBeGreaterThan(2);
  });
});

describe('roundHalfUp', () => {
  it('is Math.round for every x ≥ 0 and at most 0 below, halves and the doubles next to them included', () => {
    const xs = [
      0,
      0.5,
      1.5,
      2.5,
      0.49999999999999994,
      1.4999999999999998,
      2 ** 52 + 1,
      2 ** 52 + 2,
      2 ** 53 - 1,
      1e300,
    ];
    for (let n = 0; n < 70_000; n += 7) xs.push(n + 0.5, nextDown(n + 0.5), nextUp(n + 0.5), n + (n % 97) / 97);
    for (const x of xs) expect(roundHalfUp(x)).toBe(Math.round(x));
    expect(roundHalfUp(Number.POSITIVE_INFINITY)).toBe(Number.POSITIVE_INFINITY);
    expect(roundHalfUp(Number.NaN)).toBeNaN();
    for (const x of [-0.4, -0.5, nextDown(0), -1.5, -1e300]) expect(roundHalfUp(x)).toBeLessThanOrEqual(0);
  });
});

/** The double next to `x` towards +∞ (x > 0). */
function nextUp(x: number): number {
  const f = new Float64Array([x]);
  new BigUint64Array(f.buffer)[0] += 1n;
  return f[0];
}

/** The double next to `x` towards −∞ (x > 0; −tiny for 0). */
function nextDown(x: number): number {
  if (x === 0) return -Number.MIN_VALUE;
  const f = new Float64Array([x]);
  new BigUint64Array(f.buffer)[0] -= 1n;
  return f[0];
}
