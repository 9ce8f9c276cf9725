import { readFileSync } from 'node:fs';

import { Bone, Matrix4, Skeleton, Vector3 } from 'three';
import { beforeAll, describe, expect, it } from 'vitest';

import { CompressedClipPlayer, type PlayableClip } from '../../src/adapters/three.js';
import { createRawClip, readSamplePose, type RawClip } from '../../src/clip/raw-clip.js';
import { POSE_STRIDE } from '../../src/clip/skeleton.js';
import { convertLength } from '../../src/clip/units.js';
import { compress } from '../../src/compress/index.js';
import { AFFINE_STRIDE, clipToObject, measureClipError } from '../../src/metric/error-metric.js';
import { readBvh } from '../../src/readers/bvh.js';
import { CompressedClip } from '../../src/runtime/compressed-clip.js';
import type { SampleOptions } from '../../src/runtime/compressed-clip.js';

const FIXTURE = 'fixtures/dataset-1_dash_normal_001.bvh';

/** A three.js skeleton with the clip's bones, hierarchy and default pose. */
function threeSkeleton(
  clip: RawClip,
  skip: readonly string[] = [],
): { skeleton: Skeleton; bones: (Bone | undefined)[] } {
  const { boneNames, parents, defaultPose } = clip.skeleton;
  const bones = boneNames.map((name, b) => {
    if (skip.includes(name)) return undefined;
    const bone = new Bone();
    bone.name = name;
    const o = b * POSE_STRIDE;
    bone.quaternion.set(defaultPose[o], defaultPose[o + 1], defaultPose[o + 2], defaultPose[o + 3]);
    bone.position.set(defaultPose[o + 4], defaultPose[o + 5], defaultPose[o + 6]);
    bone.scale.set(defaultPose[o + 7], defaultPose[o + 8], defaultPose[o + 9]);
    return bone;
  });
  bones.forEach((bone, b) => {
    if (bone && parents[b] >= 0) bones[parents[b]]?.add(bone);
  });
  return { skeleton: new Skeleton(bones.filter((b): b is Bone => b !== undefined)), bones };
}

/** Copies the bones' local transforms into sample s of `out`. */
function readBones(bones: Bone[], out: RawClip, s: number): void {
  const n = out.sampleCount;
  bones.forEach((bone, b) => {
    const i = b * n + s;
    out.rotations.set([bone.quaternion.x, bone.quaternion.y, bone.quaternion.z, bone.quaternion.w], i * 4);
    out.translations.set([bone.position.x, bone.position.y, bone.position.z], i * 3);
    out.scales.set([bone.scale.x, bone.scale.y, bone.scale.z], i * 3);
  });
}

/**
 * A clip that returns the raw sample nearest to the time (wrapping or clamping like the
 * runtime), to test the player without the compressor.
 */
class NearestSampleClip implements PlayableClip {
  readonly boneCount: number;
  readonly sampleCount: number;
  readonly sampleRate: number;
  readonly duration: number;
  readonly startTime = 0;
  readonly boneNames: readonly string[] | undefined;
  readonly times: number[] = [];
  constructor(
    readonly raw: RawClip,
    names = true,
  ) {
    this.boneCount = raw.skeleton.boneNames.length;
    this.sampleCount = raw.sampleCount;
    this.sampleRate = raw.sampleRate;
    this.duration = (raw.sampleCount - 1) / raw.sampleRate;
    this.boneNames = names ? raw.skeleton.boneNames : undefined;
  }
  sample(time: number, outPose: Float32Array, options?: SampleOptions): Float32Array {
    this.times.push(time);
    let s = Math.round(time * this.sampleRate);
    s =
      options?.looping === 'wrap'
        ? ((s % this.sampleCount) + this.sampleCount) % this.sampleCount
        : Math.min(Math.max(s, 0), this.sampleCount - 1);
    return readSamplePose(this.raw, s, outPose);
  }
}

let raw: RawClip;
beforeAll(() => {
  raw = readBvh(readFileSync(FIXTURE, 'utf8'), FIXTURE);
});

describe('CompressedClipPlayer on a compressed fixture', () => {
  it('refuses an additive clip: its poses are deltas, not poses to write into bones', () => {
    const clip = CompressedClip.open(compress(raw, { additive: {} }).bytes);
    const { skeleton } = threeSkeleton(raw);
    expect(() => new CompressedClipPlayer(clip, skeleton)).toThrow(/the clip is additive .*createMixerClip/);
  });

  it('poses a three.js skeleton at every sample within 0.01 cm of the raw clip', () => {
    const { bytes } = compress(raw);
    const clip = CompressedClip.open(bytes);
    const { skeleton } = threeSkeleton(raw);
    const player = new CompressedClipPlayer(clip, skeleton, { loop: 'clamp' });
    expect(player.unboundBones).toEqual([]);
    expect(player.unanimatedBones).toEqual([]);

    const decoded = createRawClip(raw.name, raw.skeleton, raw.sampleRate, raw.sampleCount, raw.unit);
    const rawObject = clipToObject(raw);
    const world = new Matrix4();
    const vertex = new Vector3();
    const expected = new Vector3();
    let worstWorld = 0;
    const boneCount = raw.skeleton.boneNames.length;
    for (let s = 0; s < raw.sampleCount; s++) {
      player.setTime(s / raw.sampleRate);
      readBones(skeleton.bones, decoded, s);
      // Object space through three.js itself: matrixWorld of each bone against the raw clip.
      skeleton.bones[0].updateMatrixWorld(true);
      for (let b = 0; b < boneCount; b++) {
        world.copy(skeleton.bones[b].matrixWorld);
        const d = raw.skeleton.shellDistances[b];
        const m = (s * boneCount + b) * AFFINE_STRIDE;
        for (let axis = 0; axis < 3; axis++) {
          vertex.set(axis === 0 ? d : 0, axis === 1 ? d : 0, axis === 2 ? d : 0).applyMatrix4(world);
          expected.set(
            rawObject[m + 9] + d * rawObject[m + axis * 3],
            rawObject[m + 10] + d * rawObject[m + axis * 3 + 1],
            rawObject[m + 11] + d * rawObject[m + axis * 3 + 2],
          );
          worstWorld = Math.max(worstWorld, vertex.distanceTo(expected));
        }
      }
    }
    const threshold = convertLength({ value: 0.01, unit: 'cm' }, raw.unit);
    expect(measureClipError(raw, decoded).maxError).toBeLessThanOrEqual(threshold);
    // three.js composes in float32-backed objects: allow its own rounding on top.
    expect(worstWorld).toBeLessThanOrEqual(threshold * 1.01);
  });
});

describe('CompressedClipPlayer', () => {
  it('binds by name, reports clip bones missing from the skeleton, and leaves unbound bones alone', () => {
    const hidden = raw.skeleton.boneNames[3];
    const { skeleton } = threeSkeleton(raw, [hidden]);
    const extra = new Bone();
    extra.name = 'Prop';
    extra.position.set(7, 8, 9);
    skeleton.bones.push(extra);
    const warnings: string[] = [];
    const player = new CompressedClipPlayer(new NearestSampleClip(raw), skeleton, {
      loop: 'clamp',
      onWarning: (w) => warnings.push(w),
    });
    expect(player.unboundBones).toEqual([hidden]);
    expect(warnings).toEqual([
      `bonepress: 1 of ${raw.skeleton.boneNames.length} clip bones bind to no bone of the skeleton and will not move: "${hidden}"`,
    ]);
    expect(() => new CompressedClipPlayer(new NearestSampleClip(raw), skeleton, { strict: true })).toThrow(
      `1 of ${raw.skeleton.boneNames.length} bones bind to nothing in the scene: "${hidden}"`,
    );
    expect(player.unanimatedBones).toEqual(['Prop']);
    player.setTime(5 / raw.sampleRate);
    expect(extra.position.toArray()).toEqual([7, 8, 9]);
    const b = 4,
      n = raw.sampleCount;
    const bone = skeleton.bones.find((x) => x.name === raw.skeleton.boneNames[b])!;
    expect(bone.quaternion.toArray()).toEqual(Array.from(raw.rotations.subarray((b * n + 5) * 4, (b * n + 5) * 4 + 4)));
    expect(bone.position.toArray()).toEqual(
      Array.from(raw.translations.subarray((b * n + 5) * 3, (b * n + 5) * 3 + 3)),
    );
  });

  it('advances by delta × timeScale, wraps or clamps, and keeps time in range', () => {
    const clip = new NearestSampleClip(raw);
    const { skeleton } = threeSkeleton(raw);
    const rate = raw.sampleRate,
      n = raw.sampleCount;
    const player = new CompressedClipPlayer(clip, skeleton, { timeScale: 2, loop: 'wrap' });
    expect(player.time).toBe(0);
    player.update(1 / rate);
    expect(player.time).toBeCloseTo(2 / rate, 12);
    player.setTime(n / rate + 3 / rate); // wrap period is sampleCount / sampleRate
    expect(player.time).toBeCloseTo(3 / rate, 12);
    player.timeScale = -1;
    player.update(4 / rate);
    expect(player.time).toBeCloseTo((n - 1) / rate, 12);

    player.loop = 'clamp';
    player.timeScale = 1;
    player.setTime(100);
    expect(player.time).toBe(player.duration);
    player.update(-1000);
    expect(player.time).toBe(0);
    player.update(Number.NaN);
    expect(player.time).toBe(0);
    expect(clip.times.at(-1)).toBe(0);

    // 'repeat' (the default) has three.js's LoopRepeat period: the duration.
    player.loop = 'repeat';
    player.setTime(player.duration + 3 / rate);
    expect(player.time).toBeCloseTo(3 / rate, 12);
    expect(new CompressedClipPlayer(clip, skeleton).loop).toBe('repeat');
  });

  it('scales translations into the scene unit and starts at options.time', () => {
    const { skeleton } = threeSkeleton(raw);
    const player = new CompressedClipPlayer(new NearestSampleClip(raw), skeleton, {
      translationScale: 0.01,
      time: 2 / raw.sampleRate,
      loop: 'clamp',
    });
    expect(player.time).toBeCloseTo(2 / raw.sampleRate, 12);
    const i = 2 * 3; // bone 0, sample 2
    const p = skeleton.bones[0].position.toArray();
    for (let c = 0; c < 3; c++) expect(p[c]).toBeCloseTo(raw.translations[i + c] * 0.01, 6);
  });

  it('needs bone names from the clip or the options', () => {
    const { skeleton } = threeSkeleton(raw);
    expect(() => new CompressedClipPlayer(new NearestSampleClip(raw, false), skeleton)).toThrow(/has no bone names/);
    expect(() => new CompressedClipPlayer(new NearestSampleClip(raw, false), skeleton, { boneNames: ['a'] })).toThrow(
      /1 bone names for a clip of/,
    );
    const player = new CompressedClipPlayer(new NearestSampleClip(raw, false), skeleton, {
      boneNames: raw.skeleton.boneNames,
    });
    expect(player.unboundBones).toEqual([]);
  });

  it('reuses one pose buffer and one options object across updates', () => {
    const seen = new Set<Float32Array>();
    const options = new Set<SampleOptions | undefined>();
    const clip = new NearestSampleClip(raw);
    const original = clip.sample.bind(clip);
    clip.sample = (time, outPose, opts) => {
      seen.add(outPose);
      options.add(opts);
      return original(time, outPose, opts);
    };
    const { skeleton } = threeSkeleton(raw);
    const player = new CompressedClipPlayer(clip, skeleton);
    for (let i = 0; i < 50; i++) player.update(1 / 60);
    expect(seen.size).toBe(1);
    expect(options.size).toBe(1);
  });
});
