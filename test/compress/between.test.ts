/**
 * The error between samples (compress/between.ts): the figure measureBetweenErrors reports
 * after looking at ½ of every interval first is never above the bound of every interval
 * checked at its checksFor, and with the error at the samples it holds the error measured
 * densely between them (63 fractions of every interval).
 */
import { describe, expect, it } from 'vitest';

import { chainClip } from '../../src/bench/big-rigs.js';
import type { RawClip } from '../../src/clip/raw-clip.js';
import { POSE_STRIDE } from '../../src/clip/skeleton.js';
import { measureBetweenErrors, referenceBetween } from '../../src/compress/between.js';
import { compress } from '../../src/compress/index.js';
import { AFFINE_STRIDE, poseToObject, shellBoundError, virtualVertexError } from '../../src/metric/error-metric.js';
import { CompressedClip } from '../../src/runtime/compressed-clip.js';
import { loadFixture } from '../utils/clips.js';

/** Fractions per interval of the dense measurement. */
const DENSE = 64;

const CLIPS: [string, () => RawClip][] = [
  ['a corpus fixture', () => loadFixture('dataset-1_dash_normal_001.bvh')],
  // A long chain turns fast: its intervals need up to 31 checks, so the second look runs.
  ['a 60-joint chain', () => chainClip(60, 40)],
];

describe('measureBetweenErrors', () => {
  for (const [name, make] of CLIPS) {
    it(`${name}: within the every-interval bound; the figure at any time holds a dense measurement`, {
      timeout: 60_000,
    }, () => {
      const clip = make();
      const boneCount = clip.skeleton.parents.length;
      const { bytes, stats } = compress(clip);
      const sampler = CompressedClip.open(bytes).createSampler();
      const pose = new Float32Array(boneCount * POSE_STRIDE);
      const decodedBetween = (k: number, alpha: number, out: Float64Array): void => {
        sampler.sampleBetween(k, alpha, pose);
        for (let i = 0; i < pose.length; i++) out[i] = pose[i];
      };
      const shells = clip.skeleton.shellDistances;
      const report = measureBetweenErrors(clip, shells, decodedBetween);
      const perInterval = new Float64Array(clip.sampleCount - 1);
      const everyInterval = measureBetweenErrors(clip, shells, decodedBetween, 'vertices', true, perInterval);
      expect(report.maxError).toBeGreaterThan(0);
      expect(report.maxError).toBeLessThanOrEqual(everyInterval.maxError);
      expect(report.shellMaxError).toBeLessThanOrEqual(everyInterval.shellMaxError);
      expect(Math.max(...perInterval)).toBe(everyInterval.maxError);

      const reference = new Float64Array(boneCount * POSE_STRIDE);
      const decoded = new Float64Array(boneCount * POSE_STRIDE);
      const refObject = new Float64Array(boneCount * AFFINE_STRIDE);
      const decObject = new Float64Array(boneCount * AFFINE_STRIDE);
      let dense = 0,
        denseShell = 0;
      for (let k = 0; k + 1 < clip.sampleCount; k++) {
        for (let i = 1; i < DENSE; i++) {
          referenceBetween(clip, k, i / DENSE, reference);
          decodedBetween(k, i / DENSE, decoded);
          poseToObject(reference, clip.skeleton.parents, refObject);
          poseToObject(decoded, clip.skeleton.parents, decObject);
          for (let b = 0; b < boneCount; b++) {
            const o = b * AFFINE_STRIDE;
            dense = Math.max(dense, virtualVertexError(refObject, o, decObject, o, shells[b]));
            denseShell = Math.max(denseShell, shellBoundError(refObject, o, decObject, o, shells[b]));
          }
        }
      }
      // Next to a sample the error is the sample's: the figure at any time holds both.
      expect(dense).toBeLessThanOrEqual(stats.maxError);
      expect(denseShell).toBeLessThanOrEqual(stats.shellMaxError);
    });
  }
});
