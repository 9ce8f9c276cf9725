/**
 * Time → key position (src/runtime/key-times.ts), and the sampler on a clip with a
 * key-times section: the pose at a key time is that key, between two keys the blend by
 * the share of the time between them, a jump takes its later key, and looping works as on
 * a uniform clip.
 */
import { describe, expect, it } from 'vitest';

import { compress } from '../../src/compress/index.js';
import { CompressedClip } from '../../src/runtime/compressed-clip.js';
import { sectionSizes } from '../../src/runtime/clip-inspection.js';
import { keyPosition, tablePosition } from '../../src/runtime/key-times.js';
import { POSE_STRIDE } from '../../src/runtime/pose.js';
import { makeSyntheticClip } from '../utils/synthetic.js';
import { sampleKey } from '../../src/runtime/sampler.js';

const TIMES = Float32Array.from([0.5, 0.6, 1, 1, 2]);

describe('tablePosition', () => {
  it('maps a time to k + the share of the interval, the later key of a jump, and continues at the rate outside', () => {
    expect(tablePosition(TIMES, 10, 0.5)).toBe(0);
    expect(tablePosition(TIMES, 10, 0.55)).toBeCloseTo(0.5, 6);
    expect(tablePosition(TIMES, 10, 0.8)).toBeCloseTo(1 + (0.8 - Math.fround(0.6)) / (1 - Math.fround(0.6)), 12);
    expect(tablePosition(TIMES, 10, 1)).toBe(3); // the jump's later side
    expect(tablePosition(TIMES, 10, 1.5)).toBeCloseTo(3.5, 12);
    expect(tablePosition(TIMES, 10, 2)).toBe(4);
    expect(tablePosition(TIMES, 10, 2.1)).toBeCloseTo(5, 9);
    expect(tablePosition(TIMES, 10, 0.4)).toBeCloseTo(-1, 9);
  });

  it('keyPosition: uniform clips as before, and wrap repeats the key times with one sample period after the last', () => {
    expect(keyPosition(undefined, 1, 30, 10, 1.5, false)).toBeCloseTo(15, 9);
    expect(keyPosition(undefined, 0, 30, 10, 11 / 30, true)).toBeCloseTo(1, 9);
    const span = 2 - 0.5 + 1 / 10;
    expect(keyPosition(TIMES, 0.5, 10, 5, 0.55 + span, true)).toBeCloseTo(0.5, 5);
    expect(keyPosition(TIMES, 0.5, 10, 5, 2.05, true)).toBeCloseTo(4.5, 5);
    expect(keyPosition(TIMES, 0.5, 10, 5, 0.55 - span, true)).toBeCloseTo(0.5, 5);
    expect(keyPosition(TIMES, 0.5, 10, 5, Infinity, true)).toBe(0);
  });
});

describe('a clip with key times', () => {
  const uniform = makeSyntheticClip({ boneCount: 4, sampleCount: 40, seed: 5, animatedTranslationShare: 1 });
  const sampleTimes = Float32Array.from({ length: 40 }, (_, k) => (k < 20 ? k / 30 : k / 30 + 0.25));
  const clip = { ...uniform, sampleTimes, startTime: 0, duration: sampleTimes[39] };
  const bytes = compress(clip).bytes;
  const compressed = CompressedClip.open(bytes);

  it('stores the times and plays each key at its own time, blending by time between keys', () => {
    expect(Array.from(compressed.keyTimes!)).toEqual(Array.from(sampleTimes));
    expect(sectionSizes(compressed).keyTimes).toBe(4 * 40);
    const sampler = compressed.createSampler();
    const at = new Float32Array(4 * POSE_STRIDE),
      k0 = new Float32Array(4 * POSE_STRIDE),
      k1 = new Float32Array(4 * POSE_STRIDE);
    for (const k of [0, 19, 20, 39])
      expect(Array.from(sampler.sample(sampleTimes[k], at))).toEqual(Array.from(sampleKey(sampler, k, k0)));
    // Across the gap (keys 19 and 20, 0.2833 s apart): a translation a quarter of the way in time is a quarter of the way.
    const t = sampleTimes[19] + 0.25 * (sampleTimes[20] - sampleTimes[19]);
    sampler.sample(t, at);
    sampleKey(sampler, 19, k0);
    sampleKey(sampler, 20, k1);
    for (let b = 0; b < 4; b++) {
      for (let c = 4; c < 7; c++)
        expect(at[b * POSE_STRIDE + c]).toBeCloseTo(
          k0[b * POSE_STRIDE + c] + 0.25 * (k1[b * POSE_STRIDE + c] - k0[b * POSE_STRIDE + c]),
          4,
        );
    }
  });

  it('uniform clips carry no key times and keep their bytes', () => {
    const plain = CompressedClip.open(compress(uniform).bytes);
    expect(plain.keyTimes).toBeUndefined();
    expect(sectionSizes(plain).keyTimes).toBe(0);
    expect(compress(uniform).bytes.length).toBe(bytes.length - 4 * 40);
  });
});
