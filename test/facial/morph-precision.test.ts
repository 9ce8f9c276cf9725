/**
 * The precision the glTF reader gives a morph weight (readers/gltf.ts, GltfClipExtras): its
 * scale is the largest total displacement, over all the mesh's targets, of a vertex its
 * target moves, so the weight errors of targets that overlap add up to at most the vertex
 * precision.
 */
import { Document, NodeIO, type GLTF } from '@gltf-transform/core';
import { describe, expect, it } from 'vitest';

import { ParseError } from '../../src/readers/errors.js';
import { readGltfWithWarnings } from '../../src/readers/gltf.js';
import { MORPH_WEIGHT_SHARE } from '../../src/runtime/morph-share.js';
import { glbOf, splitGlb } from '../utils/glb.js';

/**
 * One joint and a three-vertex mesh whose four target weights are animated: "a" moves vertex
 * 0 by 1 cm and vertex 1 by 2 cm, "b" vertex 1 by 3 cm, "c" nothing (its accessor stores no
 * data: zeros), "d" vertex 2 by 4 mm. The joint's rotation is animated too unless `weightsOnly`.
 */
async function overlappingTargets(weightsOnly = false): Promise<{ json: GLTF.IGLTF; bin: Uint8Array }> {
  const doc = new Document();
  const buffer = doc.createBuffer();
  const f32 = (type: 'SCALAR' | 'VEC3' | 'VEC4', values: number[]) =>
    doc.createAccessor().setType(type).setBuffer(buffer).setArray(new Float32Array(values));
  const target = (name: string, values: number[]) =>
    doc.createPrimitiveTarget(name).setAttribute('POSITION', f32('VEC3', values));
  const mesh = doc.createMesh('face').addPrimitive(
    doc
      .createPrimitive()
      .setAttribute('POSITION', f32('VEC3', [0, 0, 0, 0.1, 0, 0, 0, 0.1, 0]))
      .addTarget(target('a', [0, 0.01, 0, 0.02, 0, 0, 0, 0, 0]))
      .addTarget(target('b', [0, 0, 0, 0, 0.03, 0, 0, 0, 0]))
      .addTarget(target('c', [0, 0, 0, 0, 0, 0, 0, 0, 0]))
      .addTarget(target('d', [0, 0, 0, 0, 0, 0, 0, 0, 0.004])),
  );
  const joint = doc.createNode('Root');
  const face = doc.createNode('Face').setMesh(mesh);
  doc.createScene().addChild(joint).addChild(face);
  const times = f32('SCALAR', [0, 1, 2]);
  const animation = doc.createAnimation('Talk');
  const add = (node: typeof joint, path: 'rotation' | 'weights', output: ReturnType<typeof f32>) => {
    const sampler = doc.createAnimationSampler().setInput(times).setOutput(output);
    animation
      .addSampler(sampler)
      .addChannel(doc.createAnimationChannel().setTargetNode(node).setTargetPath(path).setSampler(sampler));
  };
  if (!weightsOnly) add(joint, 'rotation', f32('VEC4', [0, 0, 0, 1, 0, 0.1, 0, 0.995, 0, 0, 0, 1]));
  add(face, 'weights', f32('SCALAR', [0, 0, 0, 0, 0.5, 1, 0.2, 0.7, 1, 0, 0, 0]));
  const { json, bin } = splitGlb<GLTF.IGLTF>(await new NodeIO().writeBinary(doc));
  // Target "c": an accessor without a buffer view or sparse values, all zeros (glTF 2.0, 3.6.2.1).
  const c = json.meshes![0].primitives[0].targets![2].POSITION;
  delete json.accessors![c].bufferView;
  delete json.accessors![c].byteOffset;
  return { json, bin };
}

describe('morph weight precision', () => {
  it('scales each weight by the total displacement at the vertices its target moves', async () => {
    const { json, bin } = await overlappingTargets(true);
    const { extras } = await readGltfWithWarnings(glbOf(json, bin), 'face.glb', { extraTracks: true });
    expect(extras![0].skeletonBones + extras![0].nodes.length).toBe(0);
    const [scales] = extras![0].weights.map((w) => w.scales);
    // a: 1 cm at vertex 0, and 2 + 3 cm with b at vertex 1; b: vertex 1; c: moves nothing; d: alone at vertex 2.
    expect(scales.map((s) => Number(s.toFixed(6)))).toEqual([0.05, 0.05, 1, 0.004]);
  });

  it('gives the weights their share of the bound when the clip moves a joint too (the two errors add at a vertex)', async () => {
    const { json, bin } = await overlappingTargets();
    const { extras } = await readGltfWithWarnings(glbOf(json, bin), 'face.glb', { extraTracks: true });
    expect(extras![0].skeletonBones).toBe(1);
    const [scales] = extras![0].weights.map((w) => w.scales);
    // Measured against the joint's share 1 − s, a weight error |Δw|·D·(1 − s)/s within it is |Δw|·D within s.
    const k = (1 - MORPH_WEIGHT_SHARE) / MORPH_WEIGHT_SHARE;
    expect(k).toBeGreaterThan(1);
    expect(scales.map((s) => Number(s.toFixed(6)))).toEqual(
      [0.05 * k, 0.05 * k, 1, 0.004 * k].map((s) => Number(s.toFixed(6))),
    );
  });

  it('refuses a target POSITION that names no accessor, naming the file and the place', async () => {
    const { json, bin } = await overlappingTargets();
    json.meshes![0].primitives[0].targets![1].POSITION = 99;
    const read = readGltfWithWarnings(glbOf(json, bin), 'face.glb', { extraTracks: true });
    await expect(read).rejects.toBeInstanceOf(ParseError);
    await expect(read).rejects.toThrow(/face\.glb.*meshes\[0\]\.primitives\[0\]\.targets\[1\]\.POSITION/);
  });
});
