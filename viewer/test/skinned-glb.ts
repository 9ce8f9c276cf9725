/**
 * A skinned character made from mocap clips, for the viewer's asset e2e test and for
 * scripts/gltf-sizes.mjs: one skin over the clips' skeleton, a box along every bone rigidly
 * weighted to it (with normals, so it shades), one coloured material, and every clip as an
 * animation, converted to metres. Channels are written the way an exporter that drops
 * constant channels writes them: a rotation per bone, a translation only where it moves.
 * Deterministic: same clips, same bytes.
 */
import { Document, type Node } from '@gltf-transform/core';
import { POSE_STRIDE, type RawClip } from 'bonepress';
import { Matrix4, Quaternion, Vector3 } from 'three';

/** Options of {@link skinnedDocument}. */
export interface SkinnedDocumentOptions {
  /** Metres per clip unit (0.01 for centimetre BVH). */
  metresPerUnit: number;
  /** Base colour of the body (linear RGBA). Default orange. */
  colour?: [number, number, number, number];
}

/** True when the translation track of bone `b` of `clip` changes over the clip. */
function translationMoves(clip: RawClip, b: number): boolean {
  const n = clip.sampleCount;
  const t = clip.translations;
  for (let s = 1; s < n; s++) {
    for (let c = 0; c < 3; c++) if (Math.abs(t[(b * n + s) * 3 + c] - t[b * n * 3 + c]) > 1e-7) return true;
  }
  return false;
}

/**
 * A Document holding one skinned character animated by `clips`, which must share one
 * skeleton (same bone names and parents). Throws when they do not.
 */
export function skinnedDocument(clips: readonly RawClip[], options: SkinnedDocumentOptions): Document {
  if (clips.length === 0) throw new Error('skinnedDocument: no clips');
  const { boneNames, parents, defaultPose } = clips[0].skeleton;
  for (const clip of clips) {
    if (clip.skeleton.boneNames.join('\n') !== boneNames.join('\n'))
      throw new Error(`skinnedDocument: ${clip.name} has another skeleton`);
  }
  const k = options.metresPerUnit;
  const doc = new Document();
  const buffer = doc.createBuffer('data');
  const scene = doc.createScene('Scene');
  const skin = doc.createSkin('Skin');

  // Rest pose: local TRS from the skeleton's default pose, world matrices for the bind pose.
  const world: Matrix4[] = [];
  const nodes: Node[] = boneNames.map((name, b) => {
    const d = defaultPose.subarray(b * POSE_STRIDE, (b + 1) * POSE_STRIDE);
    const node = doc
      .createNode(name)
      .setRotation([d[0], d[1], d[2], d[3]])
      .setTranslation([d[4] * k, d[5] * k, d[6] * k])
      .setScale([d[7], d[8], d[9]]);
    const local = new Matrix4().compose(
      new Vector3(d[4] * k, d[5] * k, d[6] * k),
      new Quaternion(d[0], d[1], d[2], d[3]),
      new Vector3(d[7], d[8], d[9]),
    );
    world.push(parents[b] < 0 ? local : new Matrix4().multiplyMatrices(world[parents[b]], local));
    skin.addJoint(node);
    return node;
  });
  nodes.forEach((node, b) => (parents[b] < 0 ? scene.addChild(node) : nodes[parents[b]].addChild(node)));
  const inverseBind = new Float32Array(nodes.length * 16);
  world.forEach((m, b) => inverseBind.set(new Matrix4().copy(m).invert().elements, b * 16));
  skin.setInverseBindMatrices(
    doc.createAccessor('inverseBindMatrices').setType('MAT4').setBuffer(buffer).setArray(inverseBind),
  );

  // A box from each parent joint to its child joint, weighted to the parent.
  const positions: number[] = [],
    normals: number[] = [],
    joints: number[] = [],
    weights: number[] = [],
    indices: number[] = [];
  const at = (b: number): Vector3 => new Vector3().setFromMatrixPosition(world[b]);
  for (let b = 0; b < nodes.length; b++) {
    const p = parents[b];
    // A link whose length changes (a hips bone that travels away from a root left at the
    // origin) cannot carry a rigid box.
    if (p < 0 || clips.some((clip) => translationMoves(clip, b))) continue;
    const from = at(p),
      to = at(b);
    const axis = new Vector3().subVectors(to, from);
    const length = axis.length();
    if (length < 1e-4) continue;
    axis.divideScalar(length);
    const helper = Math.abs(axis.y) < 0.9 ? new Vector3(0, 1, 0) : new Vector3(1, 0, 0);
    const u = new Vector3().crossVectors(axis, helper).normalize();
    const v = new Vector3().crossVectors(axis, u);
    const half = Math.min(0.06, 0.015 + 0.12 * length);
    // Corner (i, j, l): i along the bone, j along u, l along v.
    const corner = (i: number, j: number, l: number): Vector3 =>
      from
        .clone()
        .addScaledVector(axis, i * length)
        .addScaledVector(u, (j * 2 - 1) * half)
        .addScaledVector(v, (l * 2 - 1) * half);
    const faces: [Vector3, [number, number, number][]][] = [
      [
        axis.clone().negate(),
        [
          [0, 0, 0],
          [0, 0, 1],
          [0, 1, 1],
          [0, 1, 0],
        ],
      ],
      [
        axis.clone(),
        [
          [1, 0, 0],
          [1, 1, 0],
          [1, 1, 1],
          [1, 0, 1],
        ],
      ],
      [
        u.clone().negate(),
        [
          [0, 0, 0],
          [1, 0, 0],
          [1, 0, 1],
          [0, 0, 1],
        ],
      ],
      [
        u.clone(),
        [
          [0, 1, 0],
          [0, 1, 1],
          [1, 1, 1],
          [1, 1, 0],
        ],
      ],
      [
        v.clone().negate(),
        [
          [0, 0, 0],
          [0, 1, 0],
          [1, 1, 0],
          [1, 0, 0],
        ],
      ],
      [
        v.clone(),
        [
          [0, 0, 1],
          [1, 0, 1],
          [1, 1, 1],
          [0, 1, 1],
        ],
      ],
    ];
    for (const [normal, quad] of faces) {
      const base = positions.length / 3;
      const points = quad.map(([i, j, l]) => corner(i, j, l));
      // Wind each quad so that its front faces along its normal.
      const facing =
        new Vector3()
          .subVectors(points[1], points[0])
          .cross(new Vector3().subVectors(points[2], points[0]))
          .dot(normal) > 0;
      for (const q of points) {
        positions.push(q.x, q.y, q.z);
        normals.push(normal.x, normal.y, normal.z);
        joints.push(p, 0, 0, 0);
        weights.push(1, 0, 0, 0);
      }
      indices.push(...(facing ? [0, 1, 2, 0, 2, 3] : [0, 2, 1, 0, 3, 2]).map((i) => base + i));
    }
  }
  const material = doc
    .createMaterial('Body')
    .setBaseColorFactor(options.colour ?? [0.95, 0.42, 0.08, 1])
    .setMetallicFactor(0)
    .setRoughnessFactor(0.7);
  const primitive = doc
    .createPrimitive()
    .setMaterial(material)
    .setAttribute(
      'POSITION',
      doc.createAccessor().setType('VEC3').setBuffer(buffer).setArray(new Float32Array(positions)),
    )
    .setAttribute('NORMAL', doc.createAccessor().setType('VEC3').setBuffer(buffer).setArray(new Float32Array(normals)))
    .setAttribute('JOINTS_0', doc.createAccessor().setType('VEC4').setBuffer(buffer).setArray(new Uint16Array(joints)))
    .setAttribute(
      'WEIGHTS_0',
      doc.createAccessor().setType('VEC4').setBuffer(buffer).setArray(new Float32Array(weights)),
    )
    .setIndices(doc.createAccessor().setType('SCALAR').setBuffer(buffer).setArray(new Uint32Array(indices)));
  scene.addChild(doc.createNode('Body').setMesh(doc.createMesh('Body').addPrimitive(primitive)).setSkin(skin));

  for (const clip of clips) {
    const n = clip.sampleCount;
    const times = doc
      .createAccessor(`${clip.name}_times`)
      .setType('SCALAR')
      .setBuffer(buffer)
      .setArray(Float32Array.from({ length: n }, (_, s) => s / clip.sampleRate));
    const animation = doc.createAnimation(clip.name);
    const channel = (node: Node, path: 'rotation' | 'translation', values: Float32Array): void => {
      const output = doc
        .createAccessor()
        .setType(path === 'rotation' ? 'VEC4' : 'VEC3')
        .setBuffer(buffer)
        .setArray(values);
      const sampler = doc.createAnimationSampler().setInput(times).setOutput(output).setInterpolation('LINEAR');
      animation
        .addSampler(sampler)
        .addChannel(doc.createAnimationChannel().setTargetNode(node).setTargetPath(path).setSampler(sampler));
    };
    nodes.forEach((node, b) => {
      channel(node, 'rotation', clip.rotations.slice(b * n * 4, (b + 1) * n * 4));
      if (translationMoves(clip, b))
        channel(
          node,
          'translation',
          clip.translations.slice(b * n * 3, (b + 1) * n * 3).map((x) => x * k),
        );
    });
  }
  return doc;
}
