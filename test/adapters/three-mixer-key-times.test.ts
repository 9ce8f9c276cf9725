/**
 * The three.js mixer path and the direct player give one pose at one time, on a clip with
 * key times as on a uniform one: the mixer's interpolants sample through the same sampler
 * (key-times.ts maps the time), at random times, at every key time and ± 1e-4 s around it,
 * and past the end with LoopRepeat.
 */
import * as THREE from 'three';
import { describe, expect, it } from 'vitest';

import { createMixerClip } from '../../src/adapters/three.js';
import { compress } from '../../src/compress/index.js';
import { CompressedClip } from '../../src/runtime/compressed-clip.js';
import { POSE_STRIDE } from '../../src/runtime/pose.js';
import { makeSyntheticClip, mulberry32 } from '../utils/synthetic.js';

describe('createMixerClip on a clip with key times', () => {
  it('poses every bone as CompressedClip.sample does at the same time', () => {
    const uniform = makeSyntheticClip({
      boneCount: 5,
      sampleCount: 48,
      seed: 9,
      animatedTranslationShare: 1,
      shape: 'chain',
    });
    // 24 Hz with a 0.2 s gap after key 30, as a glTF source with a pause.
    const sampleTimes = Float32Array.from({ length: 48 }, (_, k) => k / 24 + (k > 30 ? 0.2 : 0));
    const compressed = CompressedClip.open(
      compress({ ...uniform, sampleTimes, startTime: 0, duration: sampleTimes[47] }).bytes,
    );
    expect(compressed.keyTimes).toBeDefined();
    const root = new THREE.Object3D();
    let parent = root;
    const bones = uniform.skeleton.boneNames.map((name) => {
      const b = new THREE.Bone();
      b.name = name;
      parent.add(b);
      parent = b;
      return b;
    });
    const clip = createMixerClip(compressed, root);
    expect(clip.unboundBones).toEqual([]);
    const mixer = new THREE.AnimationMixer(root);
    mixer.clipAction(clip).play();
    const times: number[] = [];
    const random = mulberry32(3);
    for (let i = 0; i < 100; i++) times.push(random() * compressed.duration);
    for (const t of compressed.keyTimes!) times.push(t, t - 1e-4, t + 1e-4);
    const pose = new Float32Array(5 * POSE_STRIDE);
    const sampler = compressed.createSampler();
    for (const t of times) {
      if (!(t >= 0 && t < compressed.duration)) continue;
      mixer.setTime(t);
      sampler.sample(t, pose);
      bones.forEach((bone, b) => {
        const o = b * POSE_STRIDE;
        const q = bone.quaternion;
        // The mixer's quaternion may be either sign of the same rotation.
        const sign = q.x * pose[o] + q.y * pose[o + 1] + q.z * pose[o + 2] + q.w * pose[o + 3] < 0 ? -1 : 1;
        expect(
          Math.abs(q.x - sign * pose[o]) +
            Math.abs(q.y - sign * pose[o + 1]) +
            Math.abs(q.z - sign * pose[o + 2]) +
            Math.abs(q.w - sign * pose[o + 3]),
          `bone ${b} at ${t} s`,
        ).toBeLessThan(1e-6);
        expect(
          bone.position.distanceTo(new THREE.Vector3(pose[o + 4], pose[o + 5], pose[o + 6])),
          `bone ${b} at ${t} s`,
        ).toBeLessThan(1e-5);
      });
    }
  });
});
