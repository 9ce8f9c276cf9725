/**
 * glTF documents built from clips, for tests: a skinned skeleton with the clip's rest pose
 * and one LINEAR animation per name, every track keyed at every sample.
 */
import { Document, type Accessor, type Node } from '@gltf-transform/core';
import type { RawClip } from '../../src/clip/raw-clip.js';
import { POSE_STRIDE } from '../../src/clip/skeleton.js';

/** The skeleton of `clip` as glTF nodes with one skin over all of them; returns the nodes. */
export function addSkeleton(doc: Document, clip: RawClip): Node[] {
  const { boneNames, parents, defaultPose } = clip.skeleton;
  const scene = doc.createScene('scene');
  const skin = doc.createSkin('skin');
  const nodes = boneNames.map((name, b) => {
    const o = b * POSE_STRIDE;
    const d = Array.from(defaultPose.subarray(o, o + POSE_STRIDE));
    const node = doc
      .createNode(name)
      .setRotation([d[0], d[1], d[2], d[3]])
      .setTranslation([d[4], d[5], d[6]])
      .setScale([d[7], d[8], d[9]]);
    skin.addJoint(node);
    return node;
  });
  nodes.forEach((node, b) => (parents[b] < 0 ? scene.addChild(node) : nodes[parents[b]].addChild(node)));
  return nodes;
}

/** One track of `clip` (bone-major) as a glTF accessor. */
export function trackAccessor(
  doc: Document,
  clip: RawClip,
  path: 'rotation' | 'translation' | 'scale',
  bone: number,
): Accessor {
  const width = path === 'rotation' ? 4 : 3;
  const src = path === 'rotation' ? clip.rotations : path === 'translation' ? clip.translations : clip.scales;
  const n = clip.sampleCount;
  return doc
    .createAccessor()
    .setType(width === 4 ? 'VEC4' : 'VEC3')
    .setArray(src.slice(bone * n * width, (bone + 1) * n * width))
    .setBuffer(doc.getRoot().listBuffers()[0]);
}

/** A glTF document holding `clip` as LINEAR animations named `names`, every track keyed at every sample. */
export function clipToDocument(clip: RawClip, names: string[] = [clip.name]): { doc: Document; nodes: Node[] } {
  const doc = new Document();
  const buffer = doc.createBuffer('data');
  const nodes = addSkeleton(doc, clip);
  const times = doc
    .createAccessor('times')
    .setType('SCALAR')
    .setBuffer(buffer)
    .setArray(Float32Array.from({ length: clip.sampleCount }, (_, s) => s / clip.sampleRate));
  for (const name of names) {
    const anim = doc.createAnimation(name);
    nodes.forEach((node, b) => {
      for (const path of ['rotation', 'translation', 'scale'] as const) {
        const sampler = doc
          .createAnimationSampler()
          .setInput(times)
          .setOutput(trackAccessor(doc, clip, path, b))
          .setInterpolation('LINEAR');
        anim
          .addSampler(sampler)
          .addChannel(doc.createAnimationChannel().setTargetNode(node).setTargetPath(path).setSampler(sampler));
      }
    });
  }
  return { doc, nodes };
}
