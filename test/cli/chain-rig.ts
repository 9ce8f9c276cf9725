/**
 * The skinned three-bone chain (Hips, Spine, Head; metres) the CLI tests animate in their
 * generated GLBs, and the LINEAR channels they add to it.
 */
import type { Accessor, Animation, Buffer, Document, Node, Scene } from '@gltf-transform/core';

/** Adds the chain to `scene` under one skin; returns its joints, root first. */
export function addChain(doc: Document, scene: Scene): Node[] {
  const skin = doc.createSkin('skin');
  const joints = ['Hips', 'Spine', 'Head'].map((name, i) =>
    doc.createNode(name).setTranslation([0, i === 0 ? 1 : 0.3, 0]),
  );
  joints.forEach((joint, i) => {
    skin.addJoint(joint);
    if (i === 0) scene.addChild(joint);
    else joints[i - 1].addChild(joint);
  });
  return joints;
}

/** Adds a LINEAR channel on `target.path` keyed at `times` to `animation`. */
export function addChannel(
  doc: Document,
  buffer: Buffer,
  animation: Animation,
  times: Accessor,
  target: Node,
  path: 'rotation' | 'translation' | 'weights',
  type: 'VEC4' | 'VEC3' | 'SCALAR',
  values: readonly number[],
): void {
  const output = doc.createAccessor().setType(type).setArray(Float32Array.from(values)).setBuffer(buffer);
  const sampler = doc.createAnimationSampler().setInput(times).setOutput(output).setInterpolation('LINEAR');
  animation
    .addSampler(sampler)
    .addChannel(doc.createAnimationChannel().setTargetNode(target).setTargetPath(path).setSampler(sampler));
}

/**
 * The chain's swing for take `take`: per joint `j`, `samples` rotations about z over one
 * sine period, amplitude 0.4 + 0.2 j + 0.1 take radians (xyzw, flat).
 */
export function swingRotations(joint: number, take: number, samples: number): number[] {
  const values: number[] = [];
  for (let s = 0; s < samples; s++) {
    const half = ((0.4 + 0.2 * joint + 0.1 * take) * Math.sin((2 * Math.PI * s) / (samples - 1))) / 2;
    values.push(0, 0, Math.sin(half), Math.cos(half));
  }
  return values;
}
