/**
 * Additive animations through the glTF-Transform integration: `bonepress({ additive })`
 * stores the chosen animations as additive clips (the `.bpk`'s ADDITIVE record, `additive:
 * true` in the extension object), measured over their base within the threshold; they read
 * back, validate with the Khronos validator, keep no channel of their own, and bad settings
 * or a disagreeing `additive` field are refused by name.
 */
import { createRequire } from 'node:module';

import { NodeIO, type Document } from '@gltf-transform/core';
import { beforeAll, describe, expect, it } from 'vitest';

import { OptionsError } from '../../src/compress/options.js';
import {
  BONEPRESS_ANIMATION_COMPRESSION,
  bonepress,
  BonepressAnimationCompression,
  compressDocument,
  type BonepressOptions,
  type CompressedAnimation,
} from '../../src/gltf-transform/index.js';
import { CompressedClip } from '../../src/runtime/compressed-clip.js';
import { makeRigs, makeSceneRig, type Rig } from '../utils/gltf-rigs.js';
import { glbOf, splitGlb } from '../utils/glb.js';

const validator = createRequire(import.meta.url)('gltf-validator') as {
  validateBytes(
    data: Uint8Array,
  ): Promise<{ issues: { messages: { code: string; message: string; severity: number }[] } }>;
};

const THRESHOLD = 1e-4; // 0.01 cm in metres
const io = (): NodeIO => new NodeIO().registerExtensions([BonepressAnimationCompression]);

async function transformed(glb: Uint8Array, options: BonepressOptions): Promise<{ doc: Document; glb: Uint8Array }> {
  const doc = await io().readBinary(glb);
  await doc.transform(bonepress({ onWarning: () => {}, ...options }));
  return { doc, glb: await io().writeBinary(doc) };
}

type AnimationJson = { name?: string; channels: unknown[]; extensions?: Record<string, Record<string, unknown>> };

let rigs: Rig[];
beforeAll(async () => {
  rigs = (await makeRigs()).filter((r) => r.name === 'mixamo' || r.name === 'blender');
  expect(rigs).toHaveLength(2);
});

describe('additive animations in glTF output', () => {
  it('stores the chosen animation additive over its base within the threshold, the other absolute; reads back and validates', async () => {
    for (const rig of rigs) {
      const doc = await io().readBinary(rig.glb);
      const names = doc
        .getRoot()
        .listAnimations()
        .map((a) => a.getName());
      const { animations } = await compressDocument(doc, {
        additive: { animations: [names[0]], reference: 2, base: { animation: names[1] } },
        onWarning: () => {},
      });
      expect(animations.map((a) => a.animation)).toEqual(names);
      const [layer, absolute] = animations;
      expect(layer.stats.additive, rig.name).toMatchObject({ mode: 'local', reference: { kind: 'frame', frame: 2 } });
      expect(layer.stats.maxError, rig.name).toBeLessThanOrEqual(THRESHOLD);
      expect(absolute.stats.additive).toBeUndefined();

      const glb = await io().writeBinary(doc);
      const { json } = splitGlb<{ animations: AnimationJson[]; extensionsRequired?: string[] }>(glb);
      expect(json.extensionsRequired).toContain(BONEPRESS_ANIMATION_COMPRESSION);
      expect(json.animations[0].extensions![BONEPRESS_ANIMATION_COMPRESSION].additive).toBe(true);
      expect(json.animations[1].extensions![BONEPRESS_ANIMATION_COMPRESSION]).not.toHaveProperty('additive');
      // No channel of the source stays (they are absolute poses): only the node-less stub.
      expect(json.animations[0].channels).toEqual([expect.objectContaining({ target: { path: 'rotation' } })]);

      const back = (await io().readBinary(glb)).getRoot().listAnimations();
      const stored = back.map((a) => a.getExtension<CompressedAnimation>(BONEPRESS_ANIMATION_COMPRESSION)!);
      expect(stored.map((c) => c.isAdditive())).toEqual([true, false]);
      const clip = CompressedClip.open(stored[0].getData()!);
      expect(clip.additive).toEqual(layer.stats.additive);
      // Written again unchanged: the field follows the clip.
      expect(await io().writeBinary(await io().readBinary(glb))).toEqual(glb);

      const errors = (await validator.validateBytes(glb)).issues.messages.filter((m) => m.severity === 0);
      expect(errors, JSON.stringify(errors)).toEqual([]);
    }
  });

  it('`additive: true` makes every animation additive against its frame 0, measured over its reference pose', async () => {
    const { doc } = await transformed(rigs[0].glb, { additive: true });
    const clips = doc
      .getRoot()
      .listAnimations()
      .map((a) =>
        CompressedClip.open(a.getExtension<CompressedAnimation>(BONEPRESS_ANIMATION_COMPRESSION)!.getData()!),
      );
    expect(clips.map((c) => c.additive?.reference)).toEqual(
      clips.map((c) => ({ kind: 'frame', frame: 0, time: c.startTime })),
    );
  });

  it('per-animation settings: a list of entries, the reference a pose of another animation', async () => {
    const doc = await io().readBinary(rigs[1].glb);
    const [walk, wave] = doc.getRoot().listAnimations();
    const { animations } = await compressDocument(doc, {
      additive: [
        { animations: [0], reference: { animation: wave.getName(), time: 0.5 } },
        { animations: [wave.getName()], reference: 1 },
      ],
      onWarning: () => {},
    });
    expect(animations.map((a) => a.stats.additive?.reference)).toEqual([
      { kind: 'pose', time: 0.5 },
      expect.objectContaining({ kind: 'frame', frame: 1 }),
    ]);
    for (const a of animations) expect(a.stats.maxError, a.animation).toBeLessThanOrEqual(THRESHOLD);
    expect(walk.getName()).toBe(animations[0].animation);
  });

  it('refuses bad settings with an OptionsError naming the problem', async () => {
    const cases: [BonepressOptions, RegExp][] = [
      [{ additive: { reference: 100000 } }, /additive reference frame 100000: clip "Run" has frames 0\.\.\d+/],
      [{ additive: { reference: -1 } }, /additive reference frame -1/],
      [
        { additive: { animations: ['Jump'] } },
        /additive animation "Jump": the document has no such animation \(0 "Run", 1 "Idle"\)/,
      ],
      [{ additive: { animations: [2] } }, /additive animation 2: the document has no such animation/],
      [{ additive: [{ animations: ['Run'] }, { animations: [0] }] }, /animation 0 "Run" is named by two entries/],
      [{ additive: true, fallback: true }, /additive animations keep no fallback channels/],
      [{ additive: { base: { animation: 'Idle', time: -1 } } }, /additive base: time -1 s/],
      [{ additive: { base: { animation: 'Nope' } } }, /additive base "Nope": the document has no such animation/],
    ];
    for (const [options, message] of cases) {
      const doc = await io().readBinary(rigs[0].glb);
      const error = await compressDocument(doc, { ...options, onWarning: () => {} }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error, String(message)).toBeInstanceOf(OptionsError);
      expect((error as Error).message).toMatch(message);
    }
  });

  it('refuses an additive animation whose channels would stay outside its clip, and a base of other bones', async () => {
    const scene = await makeSceneRig({ texture: false });
    // Without extras the morph weights stay plain channels: absolute values beside a layer.
    const doc = await io().readBinary(scene);
    await expect(
      compressDocument(doc, { extras: false, additive: { animations: ['WalkA'] }, onWarning: () => {} }),
    ).rejects.toThrow(/additive animation 0 "WalkA": 1 channel \(Face weights\) would stay outside its clip/);
    // WalkA moves one character, WaveB another: not the same bones.
    await expect(
      compressDocument(await io().readBinary(scene), {
        additive: { animations: ['WalkA'], base: { animation: 'WaveB', time: 0 } },
        onWarning: () => {},
      }),
    ).rejects.toThrow(/additive base "WaveB".*(bones|not the same skeleton)/);
  });

  it('says so when an animation it should make additive is not compressed (it moves nothing the clip can hold)', async () => {
    const doc = await io().readBinary(await makeSceneRig({ texture: false }));
    const fly = doc
      .getRoot()
      .listAnimations()
      .findIndex((a) => a.getName() === 'CameraFly');
    const { animations, warnings } = await compressDocument(doc, {
      extras: false,
      additive: { animations: ['CameraFly'] },
      onWarning: () => {},
    });
    expect(animations.some((a) => a.index === fly)).toBe(false);
    expect(warnings).toContain(
      `animation ${fly} "CameraFly": not compressed here, so not made additive (its channels stay as they were)`,
    );
  });

  it('the extension reader refuses an `additive` field that disagrees with the clip, naming its JSON path', async () => {
    const { glb } = await transformed(rigs[0].glb, { additive: { animations: ['Run'] } });
    const { json, bin } = splitGlb<{ animations: AnimationJson[] }>(glb);
    const edit = (f: (a: AnimationJson[]) => void) => {
      const copy = structuredClone(json);
      f(copy.animations);
      return glbOf(copy, bin);
    };
    const ext = (a: AnimationJson) => a.extensions![BONEPRESS_ANIMATION_COMPRESSION];
    const path = (i: number) => `animations\\[${i}\\]\\.extensions\\.${BONEPRESS_ANIMATION_COMPRESSION}\\.additive`;
    await expect(io().readBinary(edit((a) => delete ext(a[0]).additive))).rejects.toThrow(
      new RegExp(`${path(0)}: is absent or false, but the clip is additive`),
    );
    await expect(io().readBinary(edit((a) => (ext(a[1]).additive = true)))).rejects.toThrow(
      new RegExp(`${path(1)}: says the animation is additive, but its clip is not`),
    );
    await expect(io().readBinary(edit((a) => (ext(a[0]).additive = 'yes')))).rejects.toThrow(
      new RegExp(`${path(0)}: "yes" is not a boolean`),
    );
  });
});
