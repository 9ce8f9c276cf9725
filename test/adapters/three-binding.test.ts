/**
 * Binding loose clips of glTF assets in three.js without the caller's help: unnamed joints by
 * node index through the loader's own node objects (`gltfNodeObjects`), and morph-weight
 * bones by name (`findWeightBones`), through `createMixerClip` and `CompressedClipPlayer`,
 * played within the threshold of three.js's playback of the source (test/khronos/harness.ts).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { NodeIO } from '@gltf-transform/core';
import type * as THREE from 'three';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createMixerClip, findWeightBones, gltfNodeObjects } from '../../src/adapters/three.js';
import { compress } from '../../src/compress/index.js';
import { compressGltfFile } from '../../src/node/index.js';
import { readGltf } from '../../src/readers/gltf.js';
import { CompressedClip } from '../../src/runtime/compressed-clip.js';
import { loadableGlb, loadThree, playbackErrors, THRESHOLD } from '../khronos/harness.js';
import { makeRigs, makeSceneRig } from '../utils/gltf-rigs.js';

/** Writes `glb`, its `.bp.glb` and its loose `.bpk` clips (library defaults) under `dir`. */
async function prepare(
  dir: string,
  name: string,
  glb: Uint8Array,
): Promise<{ file: string; glbOut: string; bpkDir: string }> {
  const file = join(dir, `${name}.glb`),
    glbOut = join(dir, `${name}.bp.glb`),
    bpkDir = join(dir, `${name}-bpk`);
  writeFileSync(file, glb);
  await compressGltfFile(file, glbOut, { keepSmallerSource: false });
  mkdirSync(bpkDir);
  for (const clip of await readGltf(glb, file)) writeFileSync(join(bpkDir, `${clip.name}.bpk`), compress(clip).bytes);
  return { file, glbOut, bpkDir };
}

describe('binding loose glTF clips in three.js', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'bonepress-binding-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('binds unnamed joints by node index through gltfNodeObjects, and plays them within the threshold on every path', async () => {
    const rig = (await makeRigs()).find((r) => r.name === 'unnamed')!;
    const [source] = await readGltf(rig.glb, 'unnamed.glb');
    const clip = CompressedClip.open(compress(source).bytes);
    const { file, glbOut, bpkDir } = await prepare(dir, 'unnamed', rig.glb);
    const gltf = await loadThree(await loadableGlb(file), false);
    const nodes = await gltfNodeObjects(gltf);
    const warnings: string[] = [];
    const mixerClip = createMixerClip(clip, gltf.scene, { nodes, onWarning: (w) => warnings.push(w) });
    expect(warnings).toEqual([]);
    expect(mixerClip.unboundBones).toEqual([]);
    // Every bone's track targets the object made of its node.
    const targets = new Set(mixerClip.tracks.map((t) => t.name.split('.')[0]));
    for (const n of clip.nodeIndices!)
      expect(targets.has(nodes[n].name !== '' ? nodes[n].name : nodes[n].uuid)).toBe(true);

    const { errors, problems } = await playbackErrors(file, glbOut, bpkDir);
    expect(problems).toEqual([]);
    expect(errors.map((e) => e.path).sort()).toEqual(['CompressedClipPlayer', 'createMixerClip', 'plugin']);
    expect(errors.filter((e) => !(e.error <= THRESHOLD))).toEqual([]);
  });

  it('plays a loose clip of morph weights alone through createMixerClip and CompressedClipPlayer', async () => {
    const io = new NodeIO();
    const doc = await io.readBinary(await makeSceneRig({ texture: false }));
    doc
      .getRoot()
      .listAnimations()
      .slice(1)
      .forEach((a) => a.dispose());
    for (const c of doc.getRoot().listAnimations()[0].listChannels()) if (c.getTargetPath() !== 'weights') c.dispose();
    const glb = await io.writeBinary(doc);
    const [source] = await readGltf(glb, 'weights.glb');
    expect(source.skeleton.boneNames).toEqual(['Face.weights[0]']);

    const gltf = await loadThree(glb, false);
    const clip = CompressedClip.open(compress(source).bytes);
    const [weights] = findWeightBones(clip, gltf.scene, { nodes: await gltfNodeObjects(gltf) });
    expect(weights.firstBone).toBe(0);
    expect(weights.objects.every((o) => (o as THREE.Mesh).morphTargetInfluences !== undefined)).toBe(true);

    const { file, glbOut, bpkDir } = await prepare(dir, 'weights', glb);
    const { errors, problems } = await playbackErrors(file, glbOut, bpkDir);
    expect(problems).toEqual([]);
    expect(errors).toHaveLength(3);
    expect(errors.filter((e) => !(e.error <= THRESHOLD))).toEqual([]);
    // The weight moves: a clip that left it alone would be far off.
    expect(Math.max(...source.translations)).toBeGreaterThan(100 * THRESHOLD);
  });
});
