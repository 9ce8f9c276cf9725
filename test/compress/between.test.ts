/**
 * The error between samples (compress/between.ts): the figure measureBetweenErrors reports
 * after looking at ½ of every interval first is never above the bound of every interval
 * checked at its checksFor, and with the error at the samples it holds the error measured
 * densely between them (63 fractions of every interval), also when asked only whether it
 * stays within a figure; leaving out of a second look the bones that cannot reach the figure
 * changes no number of the report.
 */
import { describe, expect, it } from 'vitest';

import { bodyFaceFingersClip, chainClip } from '../../src/bench/big-rigs.js';
import type { RawClip } from '../../src/clip/raw-clip.js';
import { POSE_STRIDE } from '../../src/clip/skeleton.js';
import { SampleReference, measureBetweenErrors, referenceBetween, roundingTerm } from '../../src/compress/between.js';
import { compress } from '../../src/compress/index.js';
import {
  measureCompressed,
  measureCompressedBetween,
  sharedSampleObjects,
  verifyCompressed,
} from '../../src/compress/verify.js';
import {
  AFFINE_STRIDE,
  clipToObject,
  measureSampleErrors,
  poseToObject,
  shellBoundError,
  virtualVertexError,
} from '../../src/metric/error-metric.js';
import { CompressedClip } from '../../src/runtime/compressed-clip.js';
import { loadFixture } from '../utils/clips.js';
import { sampleBetween, sampleKey } from '../../src/runtime/sampler.js';

/** Fractions per interval of the dense measurement. */
const DENSE = 64;

const CLIPS: [string, () => RawClip][] = [
  ['a corpus fixture', () => loadFixture('dataset-1_dash_normal_001.bvh')],
  // A long chain turns fast: its intervals need up to 31 checks, so the second look runs.
  ['a 60-joint chain', () => chainClip(60, 40)],
  // Fingers turn fast, the face slowly: the second look leaves most of its bones out.
  ['a body-face-fingers rig', () => bodyFaceFingersClip(40)],
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
        sampleBetween(sampler, k, alpha, pose);
        for (let i = 0; i < pose.length; i++) out[i] = pose[i];
      };
      const shells = clip.skeleton.shellDistances;
      const report = measureBetweenErrors(clip, shells, decodedBetween);
      const perInterval = new Float64Array(clip.sampleCount - 1);
      const everyInterval = measureBetweenErrors(clip, shells, decodedBetween, { perInterval });
      expect(report.maxError).toBeGreaterThan(0);
      expect(report.maxError).toBeLessThanOrEqual(everyInterval.maxError);
      expect(report.shellMaxError).toBeLessThanOrEqual(everyInterval.shellMaxError);
      expect(Math.max(...perInterval)).toBe(everyInterval.maxError);
      // Leaving out the bones that cannot reach the figure changes nothing of the report.
      for (const metric of ['vertices', 'shell'] as const) {
        const pruned = measureBetweenErrors(clip, shells, decodedBetween, { metric });
        const everyBone = measureBetweenErrors(clip, shells, decodedBetween, { metric, prune: false });
        expect(pruned).toEqual(everyBone);
      }

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

      // Asked only whether the error stays within a figure (compress() asks so of its budget), the
      // checks stop once that is known: the figures still hold the dense measurement, and are on
      // the same side of that figure as the figure fully resolved.
      const { report: samples } = measureCompressed(clip, CompressedClip.open(bytes), shells, 'vertices');
      let decodes = 0;
      const counted = (k: number, alpha: number, out: Float64Array): void => {
        decodes++;
        decodedBetween(k, alpha, out);
      };
      measureBetweenErrors(clip, shells, counted);
      const resolving = decodes;
      // The samples' errors as compress() has them from its verification.
      const sampleErrors = {
        errors: new Float64Array(clip.sampleCount * boneCount),
        shells: new Float64Array(clip.sampleCount * boneCount),
      };
      const samplePose = new Float64Array(boneCount * POSE_STRIDE);
      const measuredSamples = measureSampleErrors(
        clip,
        undefined,
        shells,
        (s, out) => {
          samplePose.set(sampleKey(sampler, s, pose));
          poseToObject(samplePose, clip.skeleton.parents, out);
        },
        'vertices',
        sampleErrors,
      );
      expect(measuredSamples).toEqual(samples);
      for (const enough of [report.maxError / 2, report.maxError * 1.5]) {
        decodes = 0;
        const within = measureBetweenErrors(clip, shells, counted, { enough });
        expect(within.maxError > enough).toBe(report.maxError > enough);
        expect(dense).toBeLessThanOrEqual(Math.max(within.maxError, samples.maxError));
        expect(denseShell).toBeLessThanOrEqual(Math.max(within.shellMaxError, samples.shellMaxError));
        // Fewer checks, and far fewer where the error is known within the figure at once.
        expect(decodes).toBeLessThanOrEqual(resolving);
        if (enough > report.maxError) expect(decodes).toBeLessThan(resolving / 2);
        // With the samples' errors, intervals their samples bound get no check: the figures
        // still hold the dense measurement, on the same side of `enough`, and raise neither
        // the samples' figures nor the checked ones.
        const checking = decodes;
        decodes = 0;
        const fromEnds = measureBetweenErrors(clip, shells, counted, { enough, sampleErrors });
        expect(fromEnds.maxError > enough).toBe(report.maxError > enough);
        expect(dense).toBeLessThanOrEqual(Math.max(fromEnds.maxError, samples.maxError));
        expect(denseShell).toBeLessThanOrEqual(Math.max(fromEnds.shellMaxError, samples.shellMaxError));
        expect(fromEnds.maxError).toBeLessThanOrEqual(Math.max(within.maxError, samples.maxError));
        expect(fromEnds.shellMaxError).toBeLessThanOrEqual(Math.max(within.shellMaxError, samples.shellMaxError));
        expect(decodes).toBeLessThanOrEqual(checking);
        if (name === 'a corpus fixture') expect(decodes).toBeLessThan(checking);
      }
    });

    it(`${name}: the reference of a clip without keys, worked out per interval, is referenceBetween's object transforms to the bit`, () => {
      const clip = make();
      const boneCount = clip.skeleton.parents.length;
      // STEP tracks too (held over their intervals), which BVH never has.
      const stepMask = new Uint8Array(boneCount * 3).map((_, t) => Number(t % 4 === 1 || t % 7 === 0));
      // Two bones turning 1.2 and 3.6 rad per interval: slerp weights from Math.acos and Math.sin,
      // the second on the other hemisphere (a negative dot product).
      const rotations = Float32Array.from(clip.rotations);
      const n = clip.sampleCount;
      for (const [b, half] of [
        [0, 0.6],
        [1, 1.8],
      ]) {
        for (let s = 0; s < n; s++) rotations.set([Math.sin(s * half), 0, 0, Math.cos(s * half)], (b * n + s) * 4);
      }
      const fractions = [0, 1, 0.5, 0.25, 0.75, 0.125, 0.375, 0.625, 0.875, 1 / 32, 31 / 32, 0.3];
      // Some bones of the first half and their ancestors, as a second look measures them.
      const parents = clip.skeleton.parents;
      const needed = new Uint8Array(boneCount).map((_, b) => Number(b % 3 === 2 && 2 * b < boneCount));
      for (let b = boneCount - 1; b >= 0; b--) if (needed[b] === 1 && parents[b] >= 0) needed[parents[b]] = 1;
      expect(needed.includes(0) && needed.includes(1)).toBe(true);
      /** Numbers of the marked bones in `some` not those of `plain` to the bit. */
      const markedDiffer = (some: Float64Array, plain: Float64Array): number => {
        let count = 0;
        for (let i = 0; i < some.length; i++)
          if (needed[Math.floor(i / AFFINE_STRIDE)] === 1 && !Object.is(some[i], plain[i])) count++;
        return count;
      };
      for (const source of [clip, { ...clip, stepMask }, { ...clip, rotations }]) {
        const samples = new SampleReference(source);
        const pose = new Float64Array(boneCount * POSE_STRIDE);
        const fast = new Float64Array(boneCount * AFFINE_STRIDE);
        const plain = new Float64Array(boneCount * AFFINE_STRIDE);
        const some = new Float64Array(boneCount * AFFINE_STRIDE);
        let differ = 0;
        // Intervals out of order, as the second look visits them; each fraction first for some
        // bones, then for all (from the slerp weights the first call worked out).
        for (let j = 0; j + 1 < n; j++) {
          const k = (j * 7) % (n - 1);
          for (const alpha of fractions) {
            samples.objectAt(k, alpha, some, needed);
            samples.objectAt(k, alpha, fast);
            referenceBetween(source, k, alpha, pose);
            poseToObject(pose, parents, plain);
            for (let i = 0; i < fast.length; i++) if (!Object.is(fast[i], plain[i])) differ++;
            differ += markedDiffer(some, plain);
            poseToObject(pose, parents, some, 0, needed);
            differ += markedDiffer(some, plain);
          }
        }
        expect(differ).toBe(0);
      }
    });
  }
});

describe('measureCompressed', () => {
  for (const [name, make] of CLIPS) {
    it(`${name}: sharing the decoded samples and the clip's object transforms changes no number`, {
      timeout: 60_000,
    }, () => {
      const clip = make();
      const shells = clip.skeleton.shellDistances;
      for (const metric of ['vertices', 'shell'] as const) {
        const compressed = CompressedClip.open(compress(clip, { metric }).bytes);
        const apart = {
          report: verifyCompressed(clip, compressed, shells, undefined, metric),
          between: measureCompressedBetween(clip, compressed, shells, metric),
        };
        expect(measureCompressed(clip, compressed, shells, metric)).toEqual(apart);
        expect(measureCompressed(clip, compressed, shells, metric, sharedSampleObjects(clip))).toEqual(apart);
      }
      expect(roundingTerm(clip, shells, clipToObject(clip))).toBe(roundingTerm(clip, shells));
    });
  }

  it("the checks between samples take the samples' errors given, decoding no sample", () => {
    const clip = loadFixture('dataset-1_dash_normal_001.bvh');
    const boneCount = clip.skeleton.parents.length;
    const parents = clip.skeleton.parents;
    const shells = clip.skeleton.shellDistances;
    const sampler = CompressedClip.open(compress(clip).bytes).createSampler();
    const pose = new Float32Array(boneCount * POSE_STRIDE);
    let atSamples = 0;
    const decodedBetween = (k: number, alpha: number, out: Float64Array): void => {
      if (alpha === 0 || alpha === 1) atSamples++;
      sampleBetween(sampler, k, alpha, pose);
      out.set(pose);
    };
    const apart = measureBetweenErrors(clip, shells, decodedBetween);
    expect(atSamples).toBe(clip.sampleCount);
    atSamples = 0;
    const sampleErrors = {
      errors: new Float64Array(clip.sampleCount * boneCount),
      shells: new Float64Array(clip.sampleCount * boneCount),
    };
    const sample = new Float64Array(boneCount * POSE_STRIDE);
    measureSampleErrors(
      clip,
      undefined,
      shells,
      (s, out) => {
        sample.set(sampleKey(sampler, s, pose));
        poseToObject(sample, parents, out);
      },
      'vertices',
      sampleErrors,
    );
    expect(sampleErrors.errors.some((e) => e > 0)).toBe(true);
    expect(measureBetweenErrors(clip, shells, decodedBetween, { sampleErrors })).toEqual(apart);
    expect(atSamples).toBe(0);
  });
});
