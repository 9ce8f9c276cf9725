/**
 * The `metric` option of compress(): with `shell`, every point of each bone's shell sphere
 * stays within the threshold at the samples and between them, measured here without the
 * compressor's help (the runtime decoder's output against the source, slerp between its
 * samples written out below); with the default metric, the whole-shell figure compress()
 * reports is that same independent measurement.
 */
import { describe, expect, it } from 'vitest';

import type { RawClip } from '../../src/clip/raw-clip.js';
import { POSE_STRIDE } from '../../src/clip/skeleton.js';
import { compress } from '../../src/compress/index.js';
import { measureCompressedBetween } from '../../src/compress/verify.js';
import { OptionsError, resolveOptions, type CompressOptions } from '../../src/compress/options.js';
import {
  AFFINE_STRIDE,
  poseToObject,
  sampleToObject,
  shellBoundError,
  virtualVertexError,
} from '../../src/metric/error-metric.js';
import { CompressedClip } from '../../src/runtime/compressed-clip.js';
import { compareCompressed } from '../../src/inspect/compare.js';
import { readGltf } from '../../src/readers/gltf.js';
import { loadFixture } from '../utils/clips.js';
import { makeRigs } from '../utils/gltf-rigs.js';
import { makeSyntheticClip } from '../utils/synthetic.js';
import { sampleBetween, sampleKey } from '../../src/runtime/sampler.js';

const TIMEOUT = 60_000;
/** The two shortest BVH fixtures: enough to exercise the search, cheap to compress twice. */
const CLIPS = ['dataset-1_dash_normal_001.bvh', 'dataset-1_byebye_angry_001.bvh'];
const FRACTIONS = [0.25, 0.5, 0.75];

/** Plain float64 slerp of the source's unit quaternions at `r[a]` and `r[c]`, normalised, into `out[o]`. */
function slerp(r: Float32Array, a: number, c: number, t: number, out: Float64Array, o: number): void {
  let dot = r[a] * r[c] + r[a + 1] * r[c + 1] + r[a + 2] * r[c + 2] + r[a + 3] * r[c + 3];
  const sign = dot < 0 ? -1 : 1;
  dot *= sign;
  let wa = 1 - t,
    wc = t;
  if (dot < 1 - 1e-12) {
    const theta = Math.acos(Math.min(1, dot));
    wa = Math.sin((1 - t) * theta) / Math.sin(theta);
    wc = Math.sin(t * theta) / Math.sin(theta);
  }
  let len = 0;
  for (let i = 0; i < 4; i++) {
    out[o + i] = r[a + i] * wa + sign * r[c + i] * wc;
    len += out[o + i] ** 2;
  }
  for (let i = 0; i < 4; i++) out[o + i] /= Math.sqrt(len);
}

/** The source's pose a fraction `t` of the way from sample k to k + 1 (a sampled source: slerp and lerp). */
function sourceBetween(clip: RawClip, k: number, t: number, out: Float64Array): void {
  const n = clip.sampleCount;
  for (let b = 0; b < clip.skeleton.parents.length; b++) {
    const o = b * POSE_STRIDE,
      i = b * n + k;
    slerp(clip.rotations, i * 4, (i + 1) * 4, t, out, o);
    for (let c = 0; c < 3; c++) {
      out[o + 4 + c] =
        clip.translations[i * 3 + c] + (clip.translations[(i + 1) * 3 + c] - clip.translations[i * 3 + c]) * t;
      out[o + 7 + c] = clip.scales[i * 3 + c] + (clip.scales[(i + 1) * 3 + c] - clip.scales[i * 3 + c]) * t;
    }
  }
}

interface Measured {
  /** Largest whole-shell error at the samples and between them. */
  shellSamples: number;
  shellBetween: number;
  /** Largest virtual-vertex error at the samples and between them. */
  vertices: number;
}

/** Decodes `bytes` with the runtime and measures it against `clip` with both metrics. */
function measure(clip: RawClip, bytes: Uint8Array, shells: Float32Array): Measured {
  expect(clip.keyframes).toBeUndefined();
  const compressed = CompressedClip.open(bytes);
  expect(compressed.sampleCount).toBe(clip.sampleCount);
  const parents = clip.skeleton.parents;
  const B = parents.length;
  const pose = new Float32Array(B * POSE_STRIDE);
  const refPose = new Float64Array(B * POSE_STRIDE);
  const ref = new Float64Array(B * AFFINE_STRIDE),
    dec = new Float64Array(B * AFFINE_STRIDE);
  const out: Measured = { shellSamples: 0, shellBetween: 0, vertices: 0 };
  const compare = (field: 'shellSamples' | 'shellBetween'): void => {
    for (let b = 0; b < B; b++) {
      const o = b * AFFINE_STRIDE;
      out[field] = Math.max(out[field], shellBoundError(ref, o, dec, o, shells[b]));
      out.vertices = Math.max(out.vertices, virtualVertexError(ref, o, dec, o, shells[b]));
    }
  };
  for (let s = 0; s < clip.sampleCount; s++) {
    sampleKey(compressed.createSampler(), s, pose);
    poseToObject(pose, parents, dec);
    sampleToObject(clip, s, ref);
    compare('shellSamples');
  }
  const sampler = compressed.createSampler();
  for (let k = 0; k + 1 < clip.sampleCount; k++) {
    for (const t of FRACTIONS) {
      sampleBetween(sampler, k, t, pose);
      poseToObject(pose, parents, dec);
      sourceBetween(clip, k, t, refPose);
      poseToObject(refPose, parents, ref);
      compare('shellBetween');
    }
  }
  return out;
}

describe("compress() with metric: 'shell'", () => {
  for (const file of CLIPS) {
    it(
      `${file}: every point of every bone's shell is within the threshold at the samples and between them`,
      () => {
        const clip = loadFixture(file);
        const options: CompressOptions = { metric: 'shell' };
        const { threshold, shellDistances } = resolveOptions(clip, options);
        const result = compress(clip, options);
        const measured = measure(clip, result.bytes, shellDistances);
        expect(measured.shellSamples).toBeLessThanOrEqual(threshold);
        expect(measured.shellBetween).toBeLessThanOrEqual(threshold);
        // The three virtual vertices lie on the shell: the default metric's error is within too.
        expect(measured.vertices).toBeLessThanOrEqual(threshold);
        // What compress() reports is what the decoder gives: the sample figure bit for bit.
        expect(result.stats.metric).toBe('shell');
        expect(result.stats.sampleMaxError).toBe(measured.shellSamples);
        expect(result.stats.shellMaxError).toBe(result.stats.maxError);
        // Between samples the compressor reports a bound over the whole interval (more checks
        // where bones turn fast, and the remainder between them): never below what ¼, ½ and ¾
        // show (to float32 precision of the blend fraction), and within the threshold.
        expect(result.stats.betweenMaxError).toBeGreaterThanOrEqual(measured.shellBetween - 5e-7);
        expect(result.stats.betweenMaxError).toBeLessThanOrEqual(threshold);
        // Same input and settings, same bytes.
        expect(compress(clip, options).bytes).toEqual(result.bytes);
      },
      TIMEOUT,
    );
  }
});

describe('compress() with the default metric', () => {
  it(
    'reports the whole-shell error an independent measurement finds: at the samples exactly, between them a bound that verification resolves',
    () => {
      const clip = loadFixture(CLIPS[0]);
      const { shellDistances } = resolveOptions(clip);
      const result = compress(clip);
      const measured = measure(clip, result.bytes, shellDistances);
      const largest = Math.max(measured.shellSamples, measured.shellBetween);
      expect(result.stats.metric).toBe('vertices');
      expect(result.report.shellMaxError).toBe(measured.shellSamples);
      // compress() checks between samples only until the error is known within the threshold:
      // the whole-shell figure is a bound from those checks (to float32 precision of the blend
      // fraction), and the checks of verification, which resolve it, find the measured figure.
      expect(result.stats.shellMaxError).toBeGreaterThanOrEqual(largest - 5e-7);
      const resolved = measureCompressedBetween(clip, CompressedClip.open(result.bytes), shellDistances);
      expect(Math.max(result.report.shellMaxError, resolved.shellMaxError)).toBeCloseTo(largest, 9);
      // The whole shell is never below the three vertices it contains.
      expect(result.stats.shellMaxError).toBeGreaterThanOrEqual(result.stats.maxError);
      expect(result.stats.sampleMaxError).toBe(result.report.maxError);
    },
    TIMEOUT,
  );

  it(
    'leaves points of the shell beyond the threshold on a fixture, which the shell metric holds at some cost in bytes',
    () => {
      const clip = loadFixture(CLIPS[1]);
      const vertices = compress(clip);
      const shell = compress(clip, { metric: 'shell' });
      expect(vertices.stats.shellMaxError).toBeGreaterThan(vertices.stats.threshold);
      expect(shell.stats.shellMaxError).toBeLessThanOrEqual(shell.stats.threshold);
      expect(shell.bytes.length).toBeGreaterThanOrEqual(vertices.bytes.length);
    },
    TIMEOUT,
  );
});

describe("metric: 'shell' on keyframed glTF sources (the sample grid is chosen with the metric too)", () => {
  it(
    "holds the whole shell within the threshold against the source's own interpolation, and verify reads the same figure",
    async () => {
      const rigs = await makeRigs();
      let clips = 0;
      for (const rig of rigs) {
        for (const clip of await readGltf(rig.glb, `${rig.name}.glb`)) {
          const result = compress(clip, { metric: 'shell' });
          const compressed = CompressedClip.open(result.bytes);
          // verify's path: the source resampled on the compressed clip's grid, its keys' own interpolation between samples.
          const shell = compareCompressed(clip, compressed, { metric: 'shell' });
          expect(shell.maxError, `${rig.name}/${clip.name}`).toBeLessThanOrEqual(shell.threshold);
          expect(shell.maxError).toBe(result.stats.maxError);
          expect(result.stats.shellMaxError).toBe(result.stats.maxError);
          const vertices = compareCompressed(clip, compressed);
          expect(vertices.shellMaxError).toBe(shell.maxError);
          expect(vertices.maxError).toBeLessThanOrEqual(shell.maxError);
          clips++;
        }
      }
      expect(clips).toBeGreaterThan(3);
    },
    TIMEOUT,
  );
});

describe('metric option validation', () => {
  it('refuses an unknown metric with an OptionsError naming the choices', () => {
    const clip = makeSyntheticClip({ boneCount: 3, sampleCount: 4 });
    const options = { metric: 'sphere' } as unknown as CompressOptions;
    expect(() => compress(clip, options)).toThrow(OptionsError);
    expect(() => resolveOptions(clip, options)).toThrow(/metric: expected vertices or shell, got "sphere"/);
  });
});
