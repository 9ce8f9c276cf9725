/**
 * Keys on no uniform grid (readers/resample.ts, clip/keyframes.ts): which key sets a grid
 * holds, the union of the channels' key times, and sampling a track at those times.
 */
import { describe, expect, it } from 'vitest';

import { keysOnGrid, sampleTrackAt, unionKeyTimes, type KeyframeTrack } from '../../src/readers/resample.js';

const f32 = (values: number[]) => Float32Array.from(values);

describe('keysOnGrid', () => {
  it('holds float32 key times of k / rate, and not a gap, nor jitter beyond float32 rounding', () => {
    expect(keysOnGrid([f32(Array.from({ length: 200 }, (_, k) => k / 24))], 0, 24)).toBe(true);
    expect(keysOnGrid([f32(Array.from({ length: 40 }, (_, k) => 1 + k / 30))], 1, 30)).toBe(true);
    const gap = Array.from({ length: 25 }, (_, k) => (k <= 17 ? k / 24 : 17 / 24 + 0.2 + (k - 17) / 24));
    expect(keysOnGrid([f32(gap)], 0, 24)).toBe(false);
    const jitter = Array.from({ length: 100 }, (_, k) => Math.round((k / 37.5) * 1e4) / 1e4);
    expect(keysOnGrid([f32(jitter)], 0, 37.5)).toBe(false);
  });
});

describe('unionKeyTimes', () => {
  it("merges the channels' times once each, and keeps both sides of a jump", () => {
    expect(Array.from(unionKeyTimes([f32([0, 0.5, 1]), f32([0, 0.3, 1]), f32([0.3, 0.3, 0.7])]))).toEqual(
      [0, 0.3, 0.3, 0.5, 0.7, 1].map(Math.fround),
    );
  });
});

describe('sampleTrackAt', () => {
  const times = f32([0, 0.3, 0.3, 0.5, 0.7, 1]);
  it('takes keys exactly, holds STEP keys, and interpolates LINEAR between its own keys', () => {
    const step: KeyframeTrack = {
      times: f32([0, 0.5, 1]),
      values: f32([0, 0, 0, 1, 0, 0, 2, 0, 0]),
      width: 3,
      interpolation: 'STEP',
      rotation: false,
    };
    const out = new Float32Array(18);
    sampleTrackAt(step, times, out, 0);
    expect(Array.from({ length: 6 }, (_, s) => out[s * 3])).toEqual([0, 0, 0, 1, 1, 2]);
    const linear: KeyframeTrack = { ...step, interpolation: 'LINEAR' };
    sampleTrackAt(linear, times, out, 0);
    expect(out[3]).toBeCloseTo(0.6, 6);
    expect(out[4 * 3]).toBeCloseTo(1.4, 6);
    expect(out[5 * 3]).toBe(2);
  });

  it('a jump in the track: the first sample at its time takes the key before, the second the key after', () => {
    const jump: KeyframeTrack = {
      times: f32([0, 0.3, 0.3, 1]),
      values: f32([0, 0, 0, 1, 0, 0, 5, 0, 0, 6, 0, 0]),
      width: 3,
      interpolation: 'LINEAR',
      rotation: false,
    };
    const out = new Float32Array(18);
    sampleTrackAt(jump, times, out, 0);
    expect([out[3], out[6]]).toEqual([1, 5]);
  });

  it('CUBICSPLINE keys take their value, not a tangent', () => {
    const cubic: KeyframeTrack = {
      times: f32([0, 1]),
      values: f32([9, 9, 9, 1, 2, 3, 9, 9, 9, /**/ 9, 9, 9, 4, 5, 6, 9, 9, 9]),
      width: 3,
      interpolation: 'CUBICSPLINE',
      rotation: false,
    };
    const out = new Float32Array(6);
    sampleTrackAt(cubic, f32([0, 1]), out, 0);
    expect(Array.from(out)).toEqual([1, 2, 3, 4, 5, 6]);
  });
});
