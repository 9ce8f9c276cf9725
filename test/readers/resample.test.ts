import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import {
  countOffGridKeys,
  detectSampleRate,
  resampleTrack,
  sampleCountFor,
  snapSampleRate,
  type Interpolation,
  type KeyframeTrack,
} from '../../src/readers/resample.js';

/** Resamples a track and returns the output array. */
function run(track: KeyframeTrack, start: number, rate: number, count: number): Float32Array {
  const out = new Float32Array(count * track.width);
  resampleTrack(track, start, rate, count, out, 0);
  return out;
}

function scalar(times: number[], values: number[], interpolation: Interpolation): KeyframeTrack {
  return {
    times: Float32Array.from(times),
    values: Float32Array.from(values),
    width: 1,
    interpolation,
    rotation: false,
  };
}

describe('resampleTrack', () => {
  it('STEP holds the previous key until the next key time', () => {
    const out = run(scalar([0, 0.5, 1], [1, 2, 3], 'STEP'), 0, 4, 5);
    expect(Array.from(out)).toEqual([1, 1, 2, 2, 3]);
  });

  it('LINEAR interpolates vectors per component', () => {
    const track: KeyframeTrack = {
      times: Float32Array.from([0, 1]),
      values: Float32Array.from([0, 10, -2, 4, 20, 2]),
      width: 3,
      interpolation: 'LINEAR',
      rotation: false,
    };
    const out = run(track, 0, 4, 5);
    expect(Array.from(out.subarray(3, 6))).toEqual([1, 12.5, -1]);
    expect(Array.from(out.subarray(12, 15))).toEqual([4, 20, 2]);
  });

  it('holds the first value before the first key and the last after the last', () => {
    const out = run(scalar([1, 2], [5, 7], 'LINEAR'), 0, 2, 7);
    expect(Array.from(out)).toEqual([5, 5, 5, 6, 7, 7, 7]);
  });

  it('LINEAR slerps rotations: halfway from identity to 90° about z is 45°', () => {
    const s = Math.SQRT1_2;
    const track: KeyframeTrack = {
      times: Float32Array.from([0, 1]),
      values: Float32Array.from([0, 0, 0, 1, 0, 0, s, s]),
      width: 4,
      interpolation: 'LINEAR',
      rotation: true,
    };
    const out = run(track, 0, 2, 3);
    const half = Math.PI / 8; // 45° rotation → half angle 22.5°
    expect(out[6]).toBeCloseTo(Math.sin(half), 6);
    expect(out[7]).toBeCloseTo(Math.cos(half), 6);
    // A third of the way is 30°, which nlerp would miss; slerp hits it.
    const third = run(track, 0, 3, 4);
    expect(third[6]).toBeCloseTo(Math.sin(Math.PI / 12), 6);
    expect(third[7]).toBeCloseTo(Math.cos(Math.PI / 12), 6);
  });

  it('slerps on the shortest arc when the next key has the opposite sign', () => {
    const track: KeyframeTrack = {
      times: Float32Array.from([0, 1]),
      values: Float32Array.from([0, 0, 0, 1, 0, 0, 0, -1]),
      width: 4,
      interpolation: 'LINEAR',
      rotation: true,
    };
    const out = run(track, 0, 2, 3);
    expect(Math.abs(out[7])).toBeCloseTo(1, 6);
    expect(Math.hypot(out[4], out[5], out[6])).toBeCloseTo(0, 6);
  });

  it('CUBICSPLINE follows the Hermite curve with tangents scaled by the key interval', () => {
    // Keys at t = 0 and 2: (in, value, out) = (0, 0, 3) then (0, 2, 0).
    const track = scalar([0, 2], [0, 0, 3, 0, 2, 0], 'CUBICSPLINE');
    const out = run(track, 0, 2, 5); // t = 0, 0.5, 1, 1.5, 2
    // alpha 0.25: h00 = 0.84375, h10 = 0.140625·2, h01 = 0.15625 → 0.28125·3 + 0.15625·2 = 1.15625
    expect(out[1]).toBeCloseTo(1.15625, 6);
    // alpha 0.5: 0.125·2·3 + 0.5·2 = 1.75
    expect(out[2]).toBeCloseTo(1.75, 6);
    expect(out[0]).toBe(0);
    expect(out[4]).toBe(2);
  });

  it('CUBICSPLINE rotations come out normalised', () => {
    const s = Math.SQRT1_2;
    const values = Float32Array.from([
      0,
      0,
      0,
      0,
      /**/ 0,
      0,
      0,
      1,
      /**/ 0,
      0,
      1,
      0,
      0,
      0,
      1,
      0,
      /**/ 0,
      0,
      s,
      s,
      /**/ 0,
      0,
      0,
      0,
    ]);
    const out = run(
      { times: Float32Array.from([0, 1]), values, width: 4, interpolation: 'CUBICSPLINE', rotation: true },
      0,
      10,
      11,
    );
    for (let i = 0; i < 11; i++)
      expect(Math.hypot(out[i * 4], out[i * 4 + 1], out[i * 4 + 2], out[i * 4 + 3])).toBeCloseTo(1, 6);
  });

  it('takes the later value at a jump (two keys at the same time)', () => {
    const out = run(scalar([0, 0.5, 0.5, 1], [0, 1, 5, 6], 'LINEAR'), 0, 4, 5);
    expect(Array.from(out)).toEqual([0, 0.5, 5, 5.5, 6]);
  });

  it('hits STEP keys stored as float32 times that miss k / rate by rounding', () => {
    const times = Float32Array.from({ length: 100 }, (_, k) => k / 30);
    const values = Float32Array.from({ length: 100 }, (_, k) => k);
    const out = run({ times, values, width: 1, interpolation: 'STEP', rotation: false }, 0, 30, 100);
    expect(Array.from(out)).toEqual(Array.from(values));
  });

  it('writes at the given offset and leaves the rest of the output alone', () => {
    const out = new Float32Array(8).fill(-1);
    resampleTrack(scalar([0, 1], [0, 1], 'LINEAR'), 0, 2, 3, out, 4);
    expect(Array.from(out)).toEqual([-1, -1, -1, -1, 0, 0.5, 1, -1]);
  });

  it('reproduces uniformly spaced LINEAR keys bit for bit when sampled at the key rate (property)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 120 }),
        fc.constantFrom(24, 25, 30, 60, 120),
        fc.integer({ min: 0, max: 1000 }),
        (count, rate, startFrame) => {
          const start = startFrame / rate;
          const times = Float32Array.from({ length: count }, (_, k) => (startFrame + k) / rate);
          const values = Float32Array.from({ length: count * 3 }, (_, i) => Math.sin(i * 0.37) * 50);
          const out = run({ times, values, width: 3, interpolation: 'LINEAR', rotation: false }, start, rate, count);
          // Keys on the grid are copied, not interpolated: bit-exact despite float32 key times.
          return out.every((v, i) => v === values[i]);
        },
      ),
    );
  });
});

describe('detectSampleRate', () => {
  const uniform = (rate: number, count: number, start = 0) =>
    Float32Array.from({ length: count }, (_, k) => start + k / rate);

  it('finds common frame rates from float32 key times', () => {
    expect(detectSampleRate([uniform(30, 400)])).toBe(30);
    expect(detectSampleRate([uniform(24, 100, 3)])).toBe(24);
    expect(detectSampleRate([uniform(60, 50), uniform(60, 10)])).toBe(60);
    expect(detectSampleRate([Float32Array.from({ length: 50 }, (_, k) => k * 0.0333333)])).toBe(30);
    expect(detectSampleRate([uniform(30000 / 1001, 100)])).toBeCloseTo(29.97, 2);
  });

  it('takes the most common interval when tracks disagree', () => {
    expect(detectSampleRate([uniform(30, 100), uniform(25, 20)])).toBe(30);
  });

  it('multiplies sparse key rates up to at least 30 Hz, keeping keys on the grid', () => {
    expect(detectSampleRate([uniform(2, 5)])).toBe(30);
    expect(detectSampleRate([uniform(12, 20)])).toBe(36);
    expect(detectSampleRate([uniform(4, 9)])).toBe(32);
  });

  it('ignores jumps (repeated times) and falls back to 30 Hz without any interval', () => {
    expect(detectSampleRate([Float32Array.from([0, 0, 0])])).toBe(30);
    expect(detectSampleRate([Float32Array.from([0.5])])).toBe(30);
    expect(detectSampleRate([Float32Array.from([0, 1 / 30, 1 / 30, 2 / 30, 3 / 30])])).toBe(30);
  });

  it('snaps near-integer rates and leaves others rounded to 0.01 Hz', () => {
    expect(snapSampleRate(30.00003)).toBe(30);
    expect(snapSampleRate(29.9)).toBe(30);
    expect(snapSampleRate(17.5)).toBe(17.5);
  });

  it('(regression R3) never snaps a positive rate to 0 Hz: keys over 200 s apart keep the unsnapped rate', () => {
    expect(snapSampleRate(1 / 300)).toBe(1 / 300);
    expect(snapSampleRate(1e-30)).toBe(1e-30);
    expect(snapSampleRate(0.004)).toBe(0.004);
    expect(snapSampleRate(0.006)).toBe(0.01);
  });

  it('(regression R3) reads two keys 300 s apart at 30 Hz, and any key gap at a finite non-zero rate', () => {
    expect(detectSampleRate([Float32Array.from([0, 300])])).toBe(30);
    expect(detectSampleRate([Float32Array.from([0, 1000])])).toBe(30);
    expect(sampleCountFor(300, detectSampleRate([Float32Array.from([0, 300])]))).toBe(9001);
    for (const gap of [1e30, 3e38, 1e300, Number.MAX_VALUE]) {
      const rate = detectSampleRate([[0, gap]]);
      expect(rate, `gap ${gap}`).toBeGreaterThanOrEqual(20);
      expect(Number.isFinite(rate), `gap ${gap}`).toBe(true);
      // Huge, not NaN: a `!(count <= max)` limit check rejects it.
      expect(sampleCountFor(gap, rate) <= 50_000_000, `gap ${gap}`).toBe(false);
    }
  });
});

describe('sampleCountFor / countOffGridKeys', () => {
  it('covers the duration with a first sample at 0', () => {
    expect(sampleCountFor(0, 30)).toBe(1);
    expect(sampleCountFor(134 / 30, 30)).toBe(135);
    expect(sampleCountFor(Math.fround(134 / 30), 30)).toBe(135);
    expect(sampleCountFor(1.01, 30)).toBe(32);
  });

  it('is NaN for a NaN rate (callers check limits with !(count <= max))', () => {
    expect(sampleCountFor(1, Number.NaN)).toBeNaN();
  });

  it('counts keys that fall between samples', () => {
    expect(countOffGridKeys(Float32Array.from([0, 1 / 30, 2 / 30]), 0, 30)).toBe(0);
    expect(countOffGridKeys(Float32Array.from([0, 0.1, 0.35]), 0, 30)).toBe(1);
  });
});
