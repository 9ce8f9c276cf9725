/**
 * Face capture on a web avatar (test/facial/avatar-rig.ts): the asset is what such avatars
 * are, the built CLI compresses it, and three.js plays the source and the compressed GLB; the
 * error is measured on the deformed head's vertices (morph targets with the played weights,
 * then the skin) at 200 random times, not only on the weights.
 */
import { createRequire } from 'node:module';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { NodeIO } from '@gltf-transform/core';
import type { GLTF } from 'three/examples/jsm/loaders/GLTFLoader.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { CompressedAnimationClip } from '../../src/adapters/three.js';
import { MORPH_WEIGHT_SHARE } from '../../src/runtime/morph-share.js';
import { makeTempDir, runCli } from '../cli/run-cli.js';
import { mulberry32 } from '../utils/synthetic.js';
import { ARKIT_BLENDSHAPES, AVATAR, makeFacialAvatar } from './avatar-rig.js';
import { deformHead, headError, largestDistance, loadGlb, playPoses, randomTimes } from './deformed-head.js';

const validator = createRequire(import.meta.url)('gltf-validator') as {
  validateBytes(data: Uint8Array): Promise<{ issues: { numErrors: number; messages: unknown[] } }>;
};

/** The CLI's default bound, in metres. */
const THRESHOLD = 1e-4;

describe('facial animation on a web avatar', () => {
  const temp = makeTempDir('bonepress-facial-');
  let glb: Uint8Array;
  beforeAll(async () => {
    glb = await makeFacialAvatar();
  }, 60_000);
  afterAll(() => temp.remove());

  it('is shaped like a face-capture avatar: 67-bone skin, a 20 cm head with the 52 ARKit targets, weights at 60 Hz for 30 s', async () => {
    const report = await validator.validateBytes(glb);
    expect(report.issues.numErrors, JSON.stringify(report.issues.messages.slice(0, 3))).toBe(0);
    const root = (await new NodeIO().readBinary(glb)).getRoot();
    expect(root.listSkins()[0].listJoints()).toHaveLength(67);
    const head = root.listMeshes().find((m) => m.getName() === AVATAR.headMesh)!;
    expect(head.getExtras().targetNames).toEqual([...ARKIT_BLENDSHAPES]);
    const prim = head.listPrimitives()[0];
    const extent = [0, 1, 2].map(
      (i) => prim.getAttribute('POSITION')!.getMax([])[i] - prim.getAttribute('POSITION')!.getMin([])[i],
    );
    expect(Math.max(...extent)).toBeGreaterThan(0.15);
    expect(Math.max(...extent)).toBeLessThan(0.25);
    const largest = prim.listTargets().map((t) => {
      const a = t.getAttribute('POSITION')!.getArray()!;
      let m = 0;
      for (let i = 0; i < a.length; i += 3) m = Math.max(m, Math.hypot(a[i], a[i + 1], a[i + 2]));
      return m;
    });
    expect(largest).toHaveLength(52);
    expect(Math.min(...largest)).toBeGreaterThan(0.001);
    expect(Math.max(...largest)).toBeLessThanOrEqual(0.021);
    const weights = root
      .listAnimations()[0]
      .listChannels()
      .find((c) => c.getTargetPath() === 'weights')!
      .getSampler()!;
    const times = weights.getInput()!.getArray()!;
    expect(times.length).toBe(1801);
    expect(times[times.length - 1]).toBeCloseTo(30, 5);
    expect(times[1] - times[0]).toBeCloseTo(1 / 60, 6);
    const values = weights.getOutput()!.getArray()!;
    expect(values.length).toBe(1801 * 52);
    expect(Math.min(...values)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...values)).toBeLessThanOrEqual(1);
    // Blinks close the eyes.
    const blink = Array.from({ length: 1801 }, (_, k) => values[k * 52 + ARKIT_BLENDSHAPES.indexOf('eyeBlinkLeft')]);
    expect(Math.max(...blink)).toBeGreaterThan(0.8);
  }, 60_000);

  describe('compressed by the built CLI and played through three.js', () => {
    let source: GLTF, packed: GLTF;
    const times = randomTimes(mulberry32(200), 200, AVATAR.duration);
    beforeAll(async () => {
      const input = join(temp.dir, 'avatar.glb'),
        output = join(temp.dir, 'avatar.bp.glb');
      writeFileSync(input, glb);
      const run = runCli(['compress', input, '-o', output, '--quiet']);
      expect(run.stderr).toBe('');
      expect(run.code).toBe(0);
      [source, packed] = await Promise.all([loadGlb(glb), loadGlb(readFileSync(output))]);
    }, 120_000);

    it('plays the compressed clip, which moves the face and the head', () => {
      const clip = packed.animations.find((c) => c.name === AVATAR.animation)!;
      expect(clip).toBeInstanceOf(CompressedAnimationClip);
      expect(clip.tracks.some((t) => t.name.endsWith('.morphTargetInfluences'))).toBe(true);
      const [a, b] = playPoses(packed, AVATAR.animation, AVATAR.headMesh, [3, 17]);
      expect(a.weights).not.toEqual(b.weights);
      expect(a.transforms.get('Head')).not.toEqual(b.transforms.get('Head'));
    });

    it('keeps the deformed head within the threshold at 200 random times: the weights within their share, the skin within the rest', () => {
      const error = headError(source, packed, AVATAR.animation, AVATAR.headMesh, times);
      // The error is there to measure (the weights are quantised).
      expect(error.weight).toBeGreaterThan(0);
      expect(error.vertex).toBeGreaterThan(0);
      // Skin and morphs add at a vertex: the weights are held to their share of the bound, the
      // bones to the rest (runtime/morph-share.ts), so the deformed head is within the bound.
      expect(error.vertex).toBeLessThanOrEqual(THRESHOLD);
      // The morphs' share (the source's bones, the played weights): every weight's precision
      // accounts for the other targets that move its vertices (readers/gltf.ts).
      expect(error.morphs).toBeGreaterThan(0);
      expect(error.morphs).toBeLessThanOrEqual(MORPH_WEIGHT_SHARE * THRESHOLD);
      // The skin's share (the played bones, the source's weights).
      expect(error.skin).toBeLessThanOrEqual((1 - MORPH_WEIGHT_SHARE) * THRESHOLD);
    }, 120_000);
  });

  it('measures a played pose against the source: a weight moved by 0.01 on jawOpen moves the chin by 0.01 × 2 cm', async () => {
    // The measuring itself: a known change of one weight shows as the known vertex error.
    const gltf = await loadGlb(glb);
    const [pose] = playPoses(gltf, AVATAR.animation, AVATAR.headMesh, [5]);
    const jaw = ARKIT_BLENDSHAPES.indexOf('jawOpen');
    const moved = { transforms: pose.transforms, weights: pose.weights.map((w, t) => (t === jaw ? w + 0.01 : w)) };
    const worst = largestDistance(deformHead(gltf, AVATAR.headMesh, pose), deformHead(gltf, AVATAR.headMesh, moved));
    // Rotating the head (skinning) keeps the displacement's length.
    expect(worst).toBeGreaterThan(0.01 * 0.02 * 0.99);
    expect(worst).toBeLessThanOrEqual(0.01 * Math.hypot(0.02, 0.004) * 1.0001);
  }, 60_000);
});
