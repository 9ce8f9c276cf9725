/**
 * Sources whose keys lie on no uniform grid, and STEP / CUBICSPLINE node animation: the
 * Khronos sample models of ../shared/data/khronos-samples (Fox: a 0.2 s gap in a 24 Hz clip;
 * BrainStem: 37.5 Hz keys with jittered times; BoxAnimated; InterpolationTest: STEP, LINEAR
 * and CUBICSPLINE), or, when ../shared is absent, generated assets of the same shapes.
 *
 * Each clip is compressed at the defaults and then played by the runtime sampler at 200
 * random times and at every key time ± 1e-4 s; every pose is checked in float64 against the
 * source's own keys evaluated at that time (an independent check of what a user sees, not
 * the compressor's own figure).
 */
import { existsSync, readFileSync } from 'node:fs';
import { Document, NodeIO } from '@gltf-transform/core';
import { describe, expect, it } from 'vitest';

import { PLAYER_SLERPS, evaluateTrack } from '../../src/clip/keyframes.js';
import type { RawClip } from '../../src/clip/raw-clip.js';
import { POSE_STRIDE } from '../../src/clip/skeleton.js';
import { samplesFloor } from '../../src/compress/between.js';
import { compress } from '../../src/compress/index.js';
import { resolveOptions } from '../../src/compress/options.js';
import { AFFINE_STRIDE, poseToObject, virtualVertexError } from '../../src/metric/error-metric.js';
import { readGltf } from '../../src/readers/gltf.js';
import { CompressedClip } from '../../src/runtime/compressed-clip.js';
import { KIND_POSE_OFFSET, TRACKS_PER_BONE } from '../../src/runtime/format.js';
import { sharedData } from '../utils/shared-data.js';
import { mulberry32 } from '../utils/synthetic.js';

const KHRONOS = sharedData('khronos-samples');
const TIMEOUT = 120_000;
/**
 * The decoder's float32 rounding, which the compressor's bound (exact arithmetic) leaves
 * out. Fox spans about 100 units, where a hand's float32 position wobbles by up to 1e-5
 * (a tenth of the 1e-4 threshold) between playback times 1e-4 s apart: measured 1.0595× on
 * "Walk" at 0.16657 s, 1.0115× on "Survey". A term for it in the bound is still to come.
 */
const ROUNDING = 1.08;

/** The model's file under ../shared, or undefined when the corpus is absent. */
function khronos(model: string): Uint8Array | undefined {
  if (!KHRONOS) return undefined;
  for (const ext of ['glb', 'gltf']) {
    const file = `${KHRONOS}/${model}/${model}.${ext}`;
    if (existsSync(file) && ext === 'glb') return readFileSync(file);
  }
  return undefined;
}

interface Channel {
  node: number;
  path: 'rotation' | 'translation' | 'scale';
  interpolation?: 'STEP' | 'LINEAR' | 'CUBICSPLINE';
  times: number[];
  values: number[];
}

/** A chain of `bones` nodes 10 cm apart, one animation of `channels`. */
async function chainAsset(bones: number, channels: Channel[]): Promise<Uint8Array> {
  const doc = new Document();
  const buffer = doc.createBuffer();
  const scene = doc.createScene();
  const nodes = Array.from({ length: bones }, (_, i) =>
    doc.createNode(`bone${i}`).setTranslation([0, i === 0 ? 0 : 0.1, 0]),
  );
  nodes.forEach((n, i) => (i === 0 ? scene.addChild(n) : nodes[i - 1].addChild(n)));
  const anim = doc.createAnimation('clip');
  for (const c of channels) {
    const input = doc.createAccessor().setType('SCALAR').setArray(Float32Array.from(c.times)).setBuffer(buffer);
    const output = doc
      .createAccessor()
      .setType(c.path === 'rotation' ? 'VEC4' : 'VEC3')
      .setArray(Float32Array.from(c.values))
      .setBuffer(buffer);
    const sampler = doc
      .createAnimationSampler()
      .setInput(input)
      .setOutput(output)
      .setInterpolation(c.interpolation ?? 'LINEAR');
    anim
      .addSampler(sampler)
      .addChannel(doc.createAnimationChannel().setTargetNode(nodes[c.node]).setTargetPath(c.path).setSampler(sampler));
  }
  return new NodeIO().writeBinary(doc);
}

/** Key values of a smooth motion at `times`: rotations about a tilted axis, translations and scales on sines. */
function motion(path: Channel['path'], times: number[], phase: number, cubic = false): number[] {
  const out: number[] = [];
  for (const t of times) {
    const value = (x: number): number[] => {
      if (path === 'rotation') {
        const a = 0.6 * Math.sin(2.1 * x + phase),
          ax = [0.3, 0.8, 0.52],
          len = Math.hypot(...ax);
        return [...ax.map((c) => (c / len) * Math.sin(a / 2)), Math.cos(a / 2)];
      }
      if (path === 'translation')
        return [0.05 * Math.sin(3 * x + phase), 0.1 + 0.02 * Math.cos(2 * x), 0.03 * Math.sin(x + phase)];
      return [1 + 0.2 * Math.sin(2 * x + phase), 1, 1 - 0.1 * Math.sin(x)];
    };
    if (cubic) out.push(...value(t).map(() => 0.4), ...value(t), ...value(t).map(() => -0.3));
    else out.push(...value(t));
  }
  return out;
}

/** Generated stand-ins for the Khronos models, same shapes. */
async function generated(model: string): Promise<Uint8Array> {
  if (model === 'Fox') {
    // 24 Hz keys with one 0.2 s gap: the keys after it lie off the 24 Hz grid.
    const times = Array.from({ length: 25 }, (_, i) => (i <= 17 ? i / 24 : 17 / 24 + 0.2 + (i - 18) / 24));
    return chainAsset(
      6,
      [0, 1, 2, 3, 4, 5].map((node) => ({
        node,
        path: 'rotation' as const,
        times,
        values: motion('rotation', times, node),
      })),
    );
  }
  if (model === 'BrainStem') {
    // 37.5 Hz keys written with four decimals: a grid jittered far beyond float32 rounding.
    const times = Array.from({ length: 300 }, (_, i) => Math.round((i / 37.5) * 1e4) / 1e4);
    const channels: Channel[] = [];
    for (let node = 0; node < 19; node++)
      for (const path of ['rotation', 'translation', 'scale'] as const)
        channels.push({ node, path, times, values: motion(path, times, node) });
    return chainAsset(19, channels);
  }
  if (model === 'BoxAnimated') {
    return chainAsset(2, [
      { node: 0, path: 'rotation', times: [1.25, 2.5], values: [0, 0, 0, 1, 0, 1, 0, 0] },
      { node: 1, path: 'translation', times: [0, 1.25, 2.5, 3.7083], values: [0, 0, 0, 0, 0.5, 0, 0, 0.5, 0, 0, 0, 0] },
    ]);
  }
  // InterpolationTest: STEP, LINEAR and CUBICSPLINE at irregular times, mixed on one node.
  const times = [0, 0.4583, 0.9167, 1.2917, 1.7083];
  return chainAsset(2, [
    { node: 0, path: 'translation', interpolation: 'STEP', times, values: motion('translation', times, 0) },
    {
      node: 0,
      path: 'rotation',
      interpolation: 'LINEAR',
      times: [0.0417, 0.4167, 0.875, 1.25, 1.6667],
      values: motion('rotation', [0.0417, 0.4167, 0.875, 1.25, 1.6667], 1),
    },
    { node: 1, path: 'scale', interpolation: 'CUBICSPLINE', times, values: motion('scale', times, 2, true) },
    {
      node: 1,
      path: 'rotation',
      interpolation: 'STEP',
      times: [0, 0.6, 1.1],
      values: motion('rotation', [0, 0.6, 1.1], 3),
    },
  ]);
}

/** The pose the source means at `time`, float64: its keys evaluated, rest values elsewhere. */
function sourcePose(clip: RawClip, time: number, out: Float64Array): void {
  const boneCount = clip.skeleton.parents.length;
  for (let b = 0; b < boneCount; b++) {
    for (let i = 0; i < POSE_STRIDE; i++) out[b * POSE_STRIDE + i] = clip.skeleton.defaultPose[b * POSE_STRIDE + i];
    for (let kind = 0; kind < TRACKS_PER_BONE; kind++) {
      const keys = clip.keyframes?.[b * TRACKS_PER_BONE + kind];
      if (keys) evaluateTrack(keys, time, out, b * POSE_STRIDE + KIND_POSE_OFFSET[kind]);
    }
  }
}

/** Largest vertex error of the runtime sampler against the source's keys at random times and at every key ± 1e-4 s. */
function errorAtAnyTime(clip: RawClip, compressed: CompressedClip, shells: Float32Array): number {
  const times: number[] = [];
  const random = mulberry32(37);
  const end = compressed.duration;
  for (let i = 0; i < 200; i++) times.push(random() * end);
  for (const keys of clip.keyframes ?? [])
    for (const t of Array.from(keys?.times ?? [])) times.push(t, t - 1e-4, t + 1e-4);
  const boneCount = clip.skeleton.parents.length;
  const decoded = new Float32Array(boneCount * POSE_STRIDE),
    reference = new Float64Array(boneCount * POSE_STRIDE);
  const a = new Float64Array(boneCount * AFFINE_STRIDE),
    b = new Float64Array(boneCount * AFFINE_STRIDE);
  const sampler = compressed.createSampler();
  let worst = 0;
  for (const t of times) {
    if (!(t >= 0 && t <= end)) continue;
    sampler.sample(t, decoded);
    sourcePose(clip, t, reference);
    poseToObject(reference, clip.skeleton.parents, a);
    poseToObject(decoded, clip.skeleton.parents, b);
    for (let bone = 0; bone < boneCount; bone++)
      worst = Math.max(worst, virtualVertexError(a, bone * AFFINE_STRIDE, b, bone * AFFINE_STRIDE, shells[bone]));
  }
  return worst;
}

describe.each(['Fox', 'BrainStem', 'BoxAnimated', 'InterpolationTest'])(
  '%s (Khronos sample, or a generated asset of its shape)',
  (model) => {
    it(
      'compresses every clip within the threshold, as the runtime plays it at any time, and keeps off-grid keys at their own times',
      async () => {
        const bytes = khronos(model) ?? (await generated(model));
        const clips = await readGltf(bytes, `${model}.glb`);
        for (const clip of clips) {
          const { bytes: packed, stats } = compress(clip);
          const label = `${model}/${clip.name}`;
          expect(stats.maxError, label).toBeLessThanOrEqual(stats.threshold);
          const compressed = CompressedClip.open(packed);
          // A clip keyed off any grid stores the reader's sample times (or a refinement of them).
          if (clip.sampleTimes && stats.upsampling === 1)
            expect(Array.from(compressed.keyTimes!), label).toEqual(Array.from(clip.sampleTimes));
          const { shellDistances, threshold } = resolveOptions(clip, {});
          expect(errorAtAnyTime(clip, compressed, shellDistances), label).toBeLessThanOrEqual(threshold * ROUNDING);
          // Never more samples than the source has keys, but where a curve needs them.
          if (!clip.keyframes?.some((k) => k?.interpolation === 'CUBICSPLINE'))
            expect(compressed.sampleCount, label).toBe(clip.sampleCount);
        }
      },
      TIMEOUT,
    );
  },
);

describe('keys off the grid', () => {
  it(
    'the Fox "Run" gap and BrainStem jitter are kept at their own times; BrainStem compresses at ratio ≥ 10 without upsampling',
    async () => {
      const fox = await readGltf(khronos('Fox') ?? (await generated('Fox')), 'Fox.glb');
      const run = fox.find((c) => c.name === 'Run') ?? fox[0];
      expect(run.sampleTimes).toBeDefined();
      const gaps = Array.from(run.sampleTimes!)
        .slice(1)
        .map((t, i) => t - run.sampleTimes![i]);
      expect(Math.max(...gaps)).toBeCloseTo(0.2, 5);
      for (const c of fox) if (c !== run) expect(c.sampleTimes, c.name).toBeUndefined(); // Survey and Walk lie on 24 Hz
      const [brain] = await readGltf(khronos('BrainStem') ?? (await generated('BrainStem')), 'BrainStem.glb');
      expect(brain.sampleTimes).toBeDefined();
      const { stats } = compress(brain);
      expect(stats.upsampling).toBe(1);
      expect(stats.sampleCount).toBe(brain.sampleCount);
      // The model itself compresses at 13; its generated stand-in, a 19-node chain moving every track, at 3.2.
      expect(stats.ratio).toBeGreaterThanOrEqual(khronos('BrainStem') ? 10 : 2);
    },
    TIMEOUT,
  );

  it('keys stored off unit length leave a floor at the samples, which the first search aims below', async () => {
    const times = Array.from({ length: 31 }, (_, i) => i / 30);
    const unit = motion('rotation', times, 0);
    const clipOf = async (stretch: number): Promise<RawClip> => {
      const values = unit.map((v) => v * stretch);
      const [clip] = await readGltf(
        await chainAsset(3, [{ node: 1, path: 'rotation', times, values }]),
        'off-unit.glb',
      );
      return clip;
    };
    const off = await clipOf(1 + 1e-3);
    const { shellDistances, threshold, metric } = resolveOptions(off, {});
    // The players rotate by the stored key, which stretches vertices by about 2e-3 of their distance.
    const floor = samplesFloor(off, shellDistances, metric, PLAYER_SLERPS);
    expect(floor).toBeGreaterThan(1e-5);
    expect(floor).toBeLessThan(threshold);
    expect(samplesFloor(await clipOf(1), shellDistances, metric, PLAYER_SLERPS)).toBeLessThan(1e-9);
    const { stats } = compress(off);
    expect(stats.maxError).toBeLessThanOrEqual(threshold);
    // One search, as many trials as for the same keys at unit length (without the floor: four).
    expect(stats.searchTrials).toBe(compress(await clipOf(1)).stats.searchTrials);
  });

  it('STEP holds its key until the next one, even when other channels of the node have keys in between', async () => {
    const glb = await chainAsset(1, [
      { node: 0, path: 'translation', interpolation: 'STEP', times: [0, 0.5, 1], values: [0, 0, 0, 1, 0, 0, 2, 0, 0] },
      { node: 0, path: 'rotation', times: [0, 0.3, 0.7, 1], values: motion('rotation', [0, 0.3, 0.7, 1], 0) },
    ]);
    const [clip] = await readGltf(glb, 'mix.glb');
    const compressed = CompressedClip.open(compress(clip).bytes);
    const pose = new Float32Array(POSE_STRIDE);
    for (const [t, x] of [
      [0.2, 0],
      [0.4999, 0],
      [0.5, 1],
      [0.6, 1],
      [0.9999, 1],
      [1, 2],
    ] as const) {
      expect(compressed.createSampler().sample(t, pose)[4], `x at ${t} s`).toBeCloseTo(x, 3);
    }
  });
});
