/**
 * glTF output for every shape of asset and clip: a `.gltf` whose data sits in several
 * `.bin` files written as GLB; one-key, one-channel animations written as valid glTF; an
 * animation whose compressed form would not be smaller kept as it is (and said); and the
 * bones of a compressed asset named after its nodes by `info` and `sample`.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { Document, NodeIO } from '@gltf-transform/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import {
  animationBytes,
  BONEPRESS_ANIMATION_COMPRESSION,
  BonepressAnimationCompression,
  compressDocument,
} from '../../src/gltf-transform/index.js';
import { runCli } from '../cli/run-cli.js';
import { makeRigs } from '../utils/gltf-rigs.js';

const validator = createRequire(import.meta.url)('gltf-validator') as {
  validateBytes(
    data: Uint8Array,
  ): Promise<{ issues: { numErrors: number; messages: { code: string; severity: number }[] } }>;
};
const io = (): NodeIO => new NodeIO().registerExtensions([BonepressAnimationCompression]);

/** A two-joint skin and a mesh, whose one animation has `keys` keys on the tip's `paths`; with `split`, the animation data in a buffer of its own. */
function chainDocument(keys: number, paths: readonly ('rotation' | 'translation')[], split = false): Document {
  const doc = new Document();
  const meshBuffer = doc.createBuffer('mesh');
  const animationBuffer = split ? doc.createBuffer('animation') : meshBuffer;
  const root = doc.createNode('Root').setTranslation([0, 1, 0]);
  const tip = doc.createNode('Tip').setTranslation([0, 0.5, 0]);
  root.addChild(tip);
  doc.createSkin('skin').addJoint(root).addJoint(tip);
  const position = doc
    .createAccessor()
    .setType('VEC3')
    .setBuffer(meshBuffer)
    .setArray(new Float32Array([0, 0, 0, 1, 0, 0, 0, 1, 0]));
  const mesh = doc.createMesh('m').addPrimitive(doc.createPrimitive().setAttribute('POSITION', position));
  const body = doc.createNode('Body').setMesh(mesh);
  doc.createScene('scene').addChild(root).addChild(body);
  const times = doc
    .createAccessor()
    .setType('SCALAR')
    .setBuffer(animationBuffer)
    .setArray(Float32Array.from({ length: keys }, (_, k) => k / 30));
  const animation = doc.createAnimation('Pose');
  for (const path of paths) {
    const values =
      path === 'rotation'
        ? Float32Array.from({ length: keys * 4 }, (_, i) =>
            i % 4 === 3 ? Math.cos(0.01 * Math.floor(i / 4)) : i % 4 === 0 ? Math.sin(0.01 * Math.floor(i / 4)) : 0,
          )
        : Float32Array.from({ length: keys * 3 }, (_, i) => (i % 3 === 1 ? 0.5 + 0.001 * Math.floor(i / 3) : 0));
    const output = doc
      .createAccessor()
      .setType(path === 'rotation' ? 'VEC4' : 'VEC3')
      .setBuffer(animationBuffer)
      .setArray(values);
    const sampler = doc.createAnimationSampler().setInput(times).setOutput(output).setInterpolation('LINEAR');
    animation
      .addSampler(sampler)
      .addChannel(doc.createAnimationChannel().setTargetNode(tip).setTargetPath(path).setSampler(sampler));
  }
  return doc;
}

async function errorsOf(glb: Uint8Array): Promise<string[]> {
  return (await validator.validateBytes(glb)).issues.messages.filter((m) => m.severity === 0).map((m) => m.code);
}

describe('glTF output of every asset and clip shape', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'bonepress-shapes-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('writes a .gltf whose data sits in several .bin files as one GLB (exit 0, valid)', async () => {
    const input = join(dir, 'split.gltf');
    const { json, resources } = await io().writeJSON(chainDocument(40, ['rotation', 'translation'], true), {
      basename: 'split',
    });
    expect(json.buffers).toHaveLength(2);
    writeFileSync(input, JSON.stringify(json));
    for (const [uri, data] of Object.entries(resources)) writeFileSync(join(dir, uri), data);
    for (const out of ['split.bp.glb', 'split.bp.gltf']) {
      const run = runCli(['compress', input, '-o', join(dir, out)]);
      expect({ code: run.code, out }).toEqual({ code: 0, out });
    }
    expect(await errorsOf(new Uint8Array(readFileSync(join(dir, 'split.bp.glb'))))).toEqual([]);
  });

  it('writes one-key, one-channel and two-channel clips as valid glTF, with a stub of one key for a single pose', async () => {
    for (const [keys, paths] of [
      [1, ['rotation']],
      [1, ['rotation', 'translation']],
      [2, ['translation']],
      [30, ['rotation']],
    ] as const) {
      const doc = chainDocument(keys, paths);
      const { animations } = await compressDocument(doc, { keepSmallerSource: false });
      expect(animations.map((a) => a.stats.sampleCount)).toEqual([keys]);
      const stub = doc.getRoot().listAnimations()[0].listChannels();
      expect(stub.map((c) => [c.getTargetNode(), c.getSampler()!.getInput()!.getCount()])).toEqual([
        [null, keys === 1 ? 1 : 2],
      ]);
      expect({ keys, paths, errors: await errorsOf(await io().writeBinary(doc)) }).toEqual({ keys, paths, errors: [] });
    }
  });

  it('keeps an animation whose compressed form would not be smaller as it is, says so, and never grows the animation bytes', async () => {
    const doc = chainDocument(3, ['rotation']);
    const before = await io().writeBinary(doc);
    const result = await compressDocument(doc);
    expect(result.animations).toEqual([]);
    expect(result.kept).toEqual([
      { animation: 'Pose', index: 0, compressedBytes: expect.any(Number), sourceBytes: expect.any(Number) },
    ]);
    expect(result.kept[0].compressedBytes).toBeGreaterThanOrEqual(result.kept[0].sourceBytes);
    expect(
      result.warnings.some((w) =>
        /animation 0 "Pose": compressed it would take \d+ bytes, its channels take \d+; kept as it is/.test(w),
      ),
    ).toBe(true);
    const after = await io().writeBinary(doc);
    expect(after).toEqual(before);
    const { json } = await io().binaryToJSON(after);
    expect(json.extensionsUsed ?? []).not.toContain(BONEPRESS_ANIMATION_COMPRESSION);

    // A longer clip compresses, and its animation bytes shrink.
    const long = chainDocument(300, ['rotation', 'translation']);
    const source = animationBytes((await io().binaryToJSON(await io().writeBinary(long))).json).total;
    expect((await compressDocument(long)).animations).toHaveLength(1);
    expect(animationBytes((await io().binaryToJSON(await io().writeBinary(long))).json).total).toBeLessThan(source);
  });

  it('names the bones of a compressed asset after its nodes in info and sample', async () => {
    const rig = (await makeRigs()).find((r) => r.name === 'mixamo')!;
    const input = join(dir, 'mixamo.glb'),
      out = join(dir, 'mixamo.bp.glb');
    writeFileSync(input, rig.glb);
    expect(runCli(['compress', input, '-o', out]).code).toBe(0);
    const info = runCli(['info', out, '--clip', 'Run', '--json']);
    expect(info.code).toBe(0);
    const names = (JSON.parse(info.stdout) as { bones: { name: string }[] }).bones.map((b) => b.name);
    expect(names).toContain('mixamorig:LeftForeArm');
    const sample = runCli([
      'sample',
      out,
      '--clip',
      'Run',
      '--bone',
      'mixamorig:LeftForeArm',
      '--time',
      '0.5',
      '--json',
    ]);
    expect(sample.stderr).toBe('');
    expect((JSON.parse(sample.stdout) as { bones: { name: string; index: number }[] }).bones).toEqual([
      expect.objectContaining({ name: 'mixamorig:LeftForeArm', index: names.indexOf('mixamorig:LeftForeArm') }),
    ]);
  });
});
