/**
 * readGltf with `extraTracks` (the glTF output path of BONEPRESS_animation_compression):
 * morph-target weights and animated nodes outside the skins become extra bones with the
 * scales and shell distances of docs/gltf-extension.md ("Extra bones"), each clip holds the
 * skins it moves, and bad weight channels are ParseErrors naming the node.
 */
import { Document, GLB_BUFFER, NodeIO, type GLTF } from '@gltf-transform/core';
import { beforeAll, describe, expect, it } from 'vitest';

import { POSE_STRIDE } from '../../src/clip/skeleton.js';
import { readGltfWithWarnings } from '../../src/readers/gltf.js';
import { MORPH_WEIGHT_SHARE } from '../../src/runtime/morph-share.js';
import { makePropRig } from '../utils/gltf-rigs.js';
import { glbOf } from '../utils/glb.js';
import { parseError } from '../utils/errors.js';

describe('readGltf with extraTracks', () => {
  let glb: Uint8Array;
  let json: GLTF.IGLTF;
  let resources: Record<string, Uint8Array>;
  beforeAll(async () => {
    glb = await makePropRig();
    ({ json, resources } = await new NodeIO().binaryToJSON(glb));
  });
  const nodeIndex = (name: string) => json.nodes!.findIndex((n) => n.name === name);

  it('reads weights and props as extra bones after the skeleton bones the clip moves', async () => {
    const { clips, extras, warnings } = await readGltfWithWarnings(glb, 'props.glb', { extraTracks: true });
    expect(warnings.filter((w) => /ignored|not supported/.test(w))).toEqual([]);
    expect(clips.map((c) => c.name)).toEqual(['Scene', 'Props']);
    const [scene, props] = extras!;
    expect(scene.skeletonBones).toBe(2);
    expect(scene.nodes).toEqual([nodeIndex('Crate'), nodeIndex('Camera')].sort((a, b) => a - b));
    expect(scene.weights.map((w) => w.node)).toEqual([nodeIndex('Blob'), nodeIndex('Blink')].sort((a, b) => a - b));
    // Each weight's scale: its target's displacement, over the weights' share of the bound the bones share.
    const share = (1 - MORPH_WEIGHT_SHARE) / MORPH_WEIGHT_SHARE;
    const blob = scene.weights.find((w) => w.node === nodeIndex('Blob'))!;
    expect(blob.scales[0]).toBeCloseTo(0.5 * share, 6);
    expect(blob.scales[1]).toBeCloseTo(0.05 * share, 6);
    expect(scene.weights.find((w) => w.node === nodeIndex('Blink'))!.scales[0]).toBeCloseTo(0.02 * share, 6);
    // "Props" moves only the crate: no skeleton bone at all.
    expect(props).toEqual({ skeletonBones: 0, nodes: [nodeIndex('Crate')], weights: [] });
    expect(clips[1].skeleton.boneNames).toEqual(['Crate']);

    const clip = clips[0];
    const names = clip.skeleton.boneNames;
    expect(names).toEqual([
      'J0',
      'J1',
      ...scene.nodes.map((n) => json.nodes![n].name),
      ...scene.weights.flatMap((w) => w.scales.map((_, t) => `${json.nodes![w.node].name}.weights[${t}]`)),
    ]);
    expect(Array.from(clip.skeleton.parents)).toEqual([-1, 0, -1, -1, -1, -1, -1]);
    const bone = (name: string) => names.indexOf(name);
    // Shells: the crate's box and lid, a camera's metre, the default elsewhere.
    expect(clip.skeleton.shellDistances[bone('Crate')]).toBeCloseTo(0.6 + 0.25 * Math.sqrt(3), 5);
    expect(clip.skeleton.shellDistances[bone('Camera')]).toBe(1);
    expect(clip.skeleton.shellDistances[bone('Blob.weights[0]')]).toBeCloseTo(0.03, 6);
    // Weight bones: translation x = weight × scale, only translation animated, rest = the mesh's default weights.
    const b = bone('Blob.weights[0]');
    expect(clip.skeleton.defaultPose[b * POSE_STRIDE + 4]).toBeCloseTo(0.25 * blob.scales[0], 6);
    expect(Array.from(clip.channelMask!.subarray(b * 3, b * 3 + 3))).toEqual([0, 1, 0]);
    for (const k of [0, 7, 30]) {
      const x = clip.translations[(b * clip.sampleCount + k) * 3];
      expect(x / blob.scales[0]).toBeCloseTo(0.5 + 0.5 * Math.sin(k / 7), 5);
      expect(clip.translations[(b * clip.sampleCount + k) * 3 + 1]).toBe(0);
    }
    // Without the option the same file reads as before: one skeleton (with the mesh J1
    // carries), the rest warned about.
    const plain = await readGltfWithWarnings(glb, 'props.glb');
    expect(plain.extras).toBeUndefined();
    expect(plain.clips.map((c) => c.skeleton.boneNames)).toEqual([['J0', 'J1', 'Blink']]);
    expect(
      plain.warnings.some((w) => /morph-target weight channels \(Blob, Blink\) not supported; ignored/.test(w)),
    ).toBe(true);
  });

  it("sizes a prop's shell from a subtree 20,000 nodes deep without recursion", async () => {
    const doc = new Document();
    const buffer = doc.createBuffer();
    const scene = doc.createScene();
    const joint = doc.createNode('joint');
    scene.addChild(joint);
    doc.createSkin().addJoint(joint);
    const prop = doc.createNode('Prop');
    scene.addChild(prop);
    let tip = prop;
    for (let i = 0; i < 20_000; i++) {
      const next = doc.createNode(`link${i}`).setTranslation([0, 0.001, 0]);
      tip.addChild(next);
      tip = next;
    }
    tip.setMesh(
      doc.createMesh().addPrimitive(
        doc.createPrimitive().setAttribute(
          'POSITION',
          doc
            .createAccessor()
            .setType('VEC3')
            .setBuffer(buffer)
            .setArray(new Float32Array([0, 0, 0, 0, 1, 0, 0, 0, 0])),
        ),
      ),
    );
    const times = doc
      .createAccessor()
      .setType('SCALAR')
      .setBuffer(buffer)
      .setArray(new Float32Array([0, 1]));
    const turn = doc
      .createAccessor()
      .setType('VEC4')
      .setBuffer(buffer)
      .setArray(new Float32Array([0, 0, 0, 1, 0, 0.5, 0, Math.sqrt(0.75)]));
    const sampler = doc.createAnimationSampler().setInput(times).setOutput(turn);
    doc
      .createAnimation('spin')
      .addSampler(sampler)
      .addChannel(doc.createAnimationChannel().setTargetNode(prop).setTargetPath('rotation').setSampler(sampler));
    const { clips, extras } = await readGltfWithWarnings(await new NodeIO().writeBinary(doc), 'deep.glb', {
      extraTracks: true,
    });
    expect(extras![0]).toEqual({ skeletonBones: 0, nodes: [1], weights: [] });
    // 20,000 links of 1 mm, then a mesh reaching 1 m further.
    expect(clips[0].skeleton.shellDistances[0]).toBeCloseTo(21, 2);
  }, 60_000);

  const edited = (edit: (j: GLTF.IGLTF) => void): Uint8Array => {
    const copy = structuredClone(json);
    edit(copy);
    return glbOf(copy, resources[GLB_BUFFER]);
  };

  it('refuses animated weights on a node without morph targets, and weight counts that do not match the targets', async () => {
    const noMesh = edited((j) => {
      delete j.nodes![nodeIndex('Blob')].mesh;
    });
    const e = await parseError(readGltfWithWarnings(noMesh, 'bad.glb', { extraTracks: true }));
    expect(e.message).toMatch(
      new RegExp(`node ${nodeIndex('Blob')} \\("Blob"\\) \\(animated weights\\) mesh is undefined`),
    );
    const fewer = await edited((j) => {
      const anim = j.animations![0];
      const channel = anim.channels.find((c) => c.target.node === nodeIndex('Blob'))!;
      j.accessors![anim.samplers[channel.sampler].output].count -= 2;
    });
    const f = await parseError(readGltfWithWarnings(fewer, 'bad.glb', { extraTracks: true }));
    expect(f.message).toMatch(
      /61 key times but 120 output values \(LINEAR × 2 morph targets needs 122\); accessor counts disagree/,
    );
  });
});
