import { describe, expect, it } from 'vitest';

import { compress } from '../../src/compress/index.js';
import { CompressedClip } from '../../src/runtime/compressed-clip.js';
import { MAX_QUANTIZED_BITS, RAW_BITS } from '../../src/runtime/format.js';
import { POSE_STRIDE } from '../../src/runtime/pose.js';
import { encodeWithRates, loadFixture } from '../utils/clips.js';
import { makeSyntheticClip, mulberry32 } from '../utils/synthetic.js';
import { SlowSampler } from './slow-sampler.js';
import { isStepTrack } from '../../src/runtime/clip-inspection.js';
import { sampleBetween, sampleBone, sampleKey } from '../../src/runtime/sampler.js';

const TIMEOUT = 60_000;

/** Index of the first float whose bits differ, or -1. */
function firstDifference(a: Float32Array, b: Float32Array, length: number): number {
  const ua = new Uint32Array(a.buffer, a.byteOffset, length),
    ub = new Uint32Array(b.buffer, b.byteOffset, length);
  for (let i = 0; i < length; i++) if (ua[i] !== ub[i]) return i;
  return -1;
}

/** The decoders of CompressedClip.open: the WebAssembly kernel where available, and TypeScript. */
const DECODERS = ['auto', 'typescript'] as const;

/** Checks every key, and several fractions between every pair of keys, bit for bit, with each decoder. */
function expectSameBits(bytes: Uint8Array, seed: number): void {
  for (const decoder of DECODERS) expectSameBitsWith(bytes, seed, decoder);
}

function expectSameBitsWith(bytes: Uint8Array, seed: number, decoder: (typeof DECODERS)[number]): void {
  const clip = CompressedClip.open(bytes, { decoder });
  const slow = new SlowSampler(clip, bytes);
  const sampler = clip.createSampler();
  const floats = clip.boneCount * POSE_STRIDE;
  const pose = new Float32Array(floats);
  const random = mulberry32(seed);
  for (let k = 0; k < clip.sampleCount; k++) {
    sampleKey(sampler, k, pose);
    expect(firstDifference(pose, slow.decode(k, k, 0), floats), `${decoder}: key ${k}`).toBe(-1);
    if (k + 1 === clip.sampleCount) continue;
    for (const alpha of [0.5, random(), 1e-3 + 0.998 * random()]) {
      sampleBetween(sampler, k, alpha, pose);
      expect(firstDifference(pose, slow.decode(k, k + 1, alpha), floats), `${decoder}: key ${k} + ${alpha}`).toBe(-1);
    }
  }
}

/** sampleBone (always the TypeScript decoder) and sampleInto give the very bits of sample, with each decoder. */
function expectViewsAgree(bytes: Uint8Array, seed: number): void {
  for (const decoder of DECODERS) expectViewsAgreeWith(bytes, seed, decoder);
}

function expectViewsAgreeWith(bytes: Uint8Array, seed: number, decoder: (typeof DECODERS)[number]): void {
  const clip = CompressedClip.open(bytes, { decoder });
  const sampler = clip.createSampler();
  const floats = clip.boneCount * POSE_STRIDE;
  const pose = new Float32Array(floats);
  const bone = new Float32Array(POSE_STRIDE);
  const shared = new Float32Array(7 + 2 * floats);
  const random = mulberry32(seed);
  for (let i = 0; i < 40; i++) {
    const time = (random() * 1.4 - 0.2) * clip.duration;
    for (const looping of ['clamp', 'repeat', 'wrap'] as const) {
      sampler.sample(time, pose, { looping });
      expect(sampler.sampleInto(time, shared, 7 + floats, { looping })).toBe(7 + 2 * floats);
      expect(firstDifference(shared.subarray(7 + floats), pose, floats), `sampleInto at ${time} (${looping})`).toBe(-1);
      for (let b = 0; b < clip.boneCount; b++) {
        sampleBone(sampler, time, b, bone, { looping });
        expect(
          firstDifference(bone, pose.subarray(b * POSE_STRIDE), POSE_STRIDE),
          `bone ${b} at ${time} (${looping})`,
        ).toBe(-1);
      }
    }
  }
}

describe('the sampler computes what interpolate.ts and bits.ts compute, bit for bit', { timeout: TIMEOUT }, () => {
  it('on a corpus clip compressed at the defaults', () => {
    const { bytes } = compress(loadFixture('dataset-1_dash_normal_001.bvh'));
    expectSameBits(bytes, 1);
    expectViewsAgree(bytes, 2);
  });

  it('with random rates: constant segments, every quantised width and raw floats, over 4 segments with a merged tail', () => {
    const clip = makeSyntheticClip({
      boneCount: 9,
      sampleCount: 61,
      seed: 7,
      animatedScale: true,
      animatedTranslationShare: 0.6,
      shape: 'chain',
    });
    const random = mulberry32(3);
    const { bytes } = encodeWithRates(clip, () => {
      const r = random();
      return r < 0.15 ? 0 : r < 0.3 ? RAW_BITS : 1 + Math.floor(random() * MAX_QUANTIZED_BITS);
    });
    expectSameBits(bytes, 3);
    expectViewsAgree(bytes, 4);
  });

  it('with STEP tracks held between samples', () => {
    const clip = makeSyntheticClip({ boneCount: 6, sampleCount: 40, seed: 11, animatedTranslationShare: 1 });
    const stepMask = new Uint8Array(clip.skeleton.parents.length * 3);
    for (let t = 0; t < stepMask.length; t += 2) stepMask[t] = 1;
    const bytes = compress({ ...clip, stepMask }).bytes;
    const opened = CompressedClip.open(bytes);
    let steps = 0;
    for (let b = 0; b < opened.boneCount; b++)
      for (let kind = 0; kind < 3; kind++) if (isStepTrack(opened, b, kind)) steps++;
    expect(steps).toBeGreaterThan(0);
    expectSameBits(bytes, 5);
    expectViewsAgree(bytes, 6);
  });

  it('on a single-sample clip', () => {
    const clip = makeSyntheticClip({ boneCount: 4, sampleCount: 1, seed: 13 });
    const { bytes } = compress(clip);
    expectSameBits(bytes, 7);
    expectViewsAgree(bytes, 8);
  });
});
