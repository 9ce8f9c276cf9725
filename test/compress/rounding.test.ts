/**
 * The rounding term of the compressor's bound (compress/between.ts, `roundingTerm`): on a
 * rig about 150 m tall at the default 0.01 cm, the decoder's float32 output moves the error
 * between the compressor's checks by a good part of the threshold, and the search leaves room
 * for it, so the error sampled densely (the decoder's pose composed as three.js composes it,
 * against the source's slerp and lerp in float64) stays within the threshold, where without
 * the term it goes over. On a character in centimetres the term is under 1 % of the
 * threshold and costs next to no bytes.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';

import type { RawClip } from '../../src/clip/raw-clip.js';
import { POSE_STRIDE } from '../../src/clip/skeleton.js';
import { referenceBetween, roundingTerm } from '../../src/compress/between.js';
import { compress } from '../../src/compress/index.js';
import { resolveOptions } from '../../src/compress/options.js';
import { AFFINE_STRIDE, poseToObject, virtualVertexError } from '../../src/metric/error-metric.js';
import { CompressedClip } from '../../src/runtime/compressed-clip.js';
import { makeSyntheticClip, mulberry32 } from '../utils/synthetic.js';
import { sampleBetween } from '../../src/runtime/sampler.js';

/** Random playback times of the dense measurement. */
const DENSE_TIMES = 100_000;

/** A chain of 8 bones 5–20 units long on a root 90 units up that walks: in metres, a 150 m rig. */
const rig = (unit: 'm' | 'cm'): RawClip =>
  makeSyntheticClip({ boneCount: 8, sampleCount: 61, shape: 'chain', unit, seed: 3, name: `chain-${unit}` });

/**
 * The largest error of `bytes` against `clip` at {@link DENSE_TIMES} random times (a random
 * interval, a random fraction of it): the runtime sampler's float32 pose, composed in float64
 * as three.js composes it, against the source's interpolation of its samples.
 */
function denseError(clip: RawClip, bytes: Uint8Array): number {
  const parents = clip.skeleton.parents;
  const boneCount = parents.length;
  const shells = resolveOptions(clip, {}).shellDistances;
  const sampler = CompressedClip.open(bytes).createSampler();
  const decoded = new Float32Array(boneCount * POSE_STRIDE),
    reference = new Float64Array(boneCount * POSE_STRIDE);
  const decodedObject = new Float64Array(boneCount * AFFINE_STRIDE),
    referenceObject = new Float64Array(boneCount * AFFINE_STRIDE);
  const random = mulberry32(11);
  let worst = 0;
  for (let i = 0; i < DENSE_TIMES; i++) {
    const k = Math.floor(random() * (clip.sampleCount - 1));
    const alpha = random();
    sampleBetween(sampler, k, alpha, decoded);
    poseToObject(decoded, parents, decodedObject);
    referenceBetween(clip, k, alpha, reference);
    poseToObject(reference, parents, referenceObject);
    for (let b = 0; b < boneCount; b++) {
      const o = b * AFFINE_STRIDE;
      worst = Math.max(worst, virtualVertexError(referenceObject, o, decodedObject, o, shells[b]));
    }
  }
  return worst;
}

/** `compress` of a fresh module graph whose rounding term is 0, as before the term. */
async function compressWithoutTerm(): Promise<typeof compress> {
  vi.resetModules();
  vi.doMock('../../src/compress/between.js', async (original) => ({
    ...(await original<typeof import('../../src/compress/between.js')>()),
    roundingTerm: () => 0,
  }));
  return (await import('../../src/compress/index.js')).compress;
}

afterEach(() => {
  vi.doUnmock('../../src/compress/between.js');
  vi.resetModules();
});

describe('the rounding term', () => {
  it('holds a 150 m rig within the threshold at any time, which it exceeds without the term', {
    timeout: 120_000,
  }, async () => {
    const clip = rig('m');
    const threshold = resolveOptions(clip, {}).threshold;
    const term = roundingTerm(clip, resolveOptions(clip, {}).shellDistances);
    expect(term / threshold).toBeGreaterThan(0.1);
    expect(term / threshold).toBeLessThan(0.9);
    const { bytes, stats } = compress(clip);
    expect(stats.maxError + term).toBeLessThanOrEqual(threshold);
    expect(denseError(clip, bytes)).toBeLessThanOrEqual(threshold);
    const without = (await compressWithoutTerm())(clip);
    expect(denseError(clip, without.bytes)).toBeGreaterThan(threshold);
  });

  it('is under 1 % of the threshold on a character in centimetres, and changes its bytes by under 1 %', async () => {
    const clip = rig('cm');
    const options = resolveOptions(clip, {});
    expect(roundingTerm(clip, options.shellDistances) / options.threshold).toBeLessThan(0.01);
    const withTerm = compress(clip).bytes.length;
    const withoutTerm = (await compressWithoutTerm())(clip).bytes.length;
    expect(Math.abs(withTerm / withoutTerm - 1)).toBeLessThan(0.01);
  });
});
