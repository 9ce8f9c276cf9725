/**
 * The error a viewer sees on a face: a GLB's animation played through three.js (GLTFLoader,
 * with the bonepress plugin and the meshopt decoder, and AnimationMixer), and the head's
 * vertices deformed by three's own arithmetic (`SkinnedMesh.getVertexPosition`: morph targets
 * with the played weights, then the skin with the played bones), compared with the same for
 * the source asset.
 *
 * Each asset's played pose (the head skin's bone transforms, by name, and the head's morph
 * weights) is applied to the source asset's head before deforming, so the comparison measures the animation only:
 * an asset whose geometry was re-encoded (gltfpack quantises positions and morph targets) is
 * still deformed from the source geometry.
 */
import * as THREE from 'three';
import { GLTFLoader, type GLTF } from 'three/examples/jsm/loaders/GLTFLoader.js';
import { MeshoptDecoder } from 'three/examples/jsm/libs/meshopt_decoder.module.js';

import { BonepressGLTFLoaderPlugin } from '../../src/adapters/three.js';

/** Loads GLB bytes with GLTFLoader, the bonepress plugin and the meshopt decoder. */
export async function loadGlb(glb: Uint8Array): Promise<GLTF> {
  const loader = new GLTFLoader().setMeshoptDecoder(MeshoptDecoder);
  loader.register((parser) => new BonepressGLTFLoaderPlugin(parser));
  const bytes = glb.buffer.slice(glb.byteOffset, glb.byteOffset + glb.byteLength) as ArrayBuffer;
  return new Promise((resolve, reject) => loader.parse(bytes, '', resolve, reject));
}

/** What a clip set on a scene at one time: every named object's local TRS and the head's morph weights. */
export interface PlayedPose {
  transforms: Map<string, number[]>;
  weights: number[];
}

/** The head mesh of a loaded asset (a skinned mesh named `name`, or the child GLTFLoader made of that node). */
function headOf(gltf: GLTF, name: string): THREE.SkinnedMesh {
  let found: THREE.SkinnedMesh | undefined;
  gltf.scene.traverse((o) => {
    if (found === undefined && (o as THREE.SkinnedMesh).isSkinnedMesh && (o.name === name || o.parent?.name === name))
      found = o as THREE.SkinnedMesh;
  });
  if (found === undefined) throw new Error(`no skinned mesh "${name}" in the asset`);
  return found;
}

/** Plays the animation `clipName` of `gltf` with an AnimationMixer and records the pose at each of `times` (seconds). */
export function playPoses(gltf: GLTF, clipName: string, headName: string, times: readonly number[]): PlayedPose[] {
  const clip = gltf.animations.find((c) => c.name === clipName);
  if (clip === undefined)
    throw new Error(`no animation "${clipName}" (have: ${gltf.animations.map((c) => c.name).join(', ')})`);
  const head = headOf(gltf, headName);
  const mixer = new THREE.AnimationMixer(gltf.scene);
  mixer.clipAction(clip).play();
  const out = times.map((t) => {
    mixer.setTime(t);
    const transforms = new Map<string, number[]>();
    gltf.scene.traverse((o) => {
      if (o.name !== '' && !transforms.has(o.name))
        transforms.set(o.name, [...o.position.toArray(), ...o.quaternion.toArray(), ...o.scale.toArray()]);
    });
    return { transforms, weights: [...head.morphTargetInfluences!] };
  });
  mixer.stopAllAction();
  return out;
}

/**
 * The head's deformed vertices (world space, metres, xyz per vertex) in `source` posed as
 * `pose`: the pose's transforms set on the source's objects of the same names, its weights on
 * the head's morph targets.
 */
export function deformHead(source: GLTF, headName: string, pose: PlayedPose): Float64Array {
  const head = headOf(source, headName);
  if (pose.weights.length !== head.morphTargetInfluences!.length) {
    throw new Error(
      `the played head has ${pose.weights.length} morph weights, the source ${head.morphTargetInfluences!.length}`,
    );
  }
  for (const bone of head.skeleton.bones) {
    const trs = pose.transforms.get(bone.name);
    if (trs === undefined) throw new Error(`the played asset has no bone "${bone.name}"`);
    bone.position.fromArray(trs, 0);
    bone.quaternion.fromArray(trs, 3);
    bone.scale.fromArray(trs, 7);
  }
  head.morphTargetInfluences!.splice(0, pose.weights.length, ...pose.weights);
  source.scene.updateMatrixWorld(true);
  const count = head.geometry.getAttribute('position').count;
  const out = new Float64Array(count * 3);
  const v = new THREE.Vector3();
  for (let i = 0; i < count; i++) {
    head.getVertexPosition(i, v).applyMatrix4(head.matrixWorld);
    out[i * 3] = v.x;
    out[i * 3 + 1] = v.y;
    out[i * 3 + 2] = v.z;
  }
  return out;
}

/** The largest errors of `other` against `source` over `times`. */
export interface HeadError {
  /** Largest distance between a deformed head vertex and the source's, metres. */
  vertex: number;
  /** Time (seconds) of that largest vertex error. */
  vertexTime: number;
  /** The morphs' share: the largest vertex error with the source's bones and the played weights, metres. */
  morphs: number;
  /** The skin's share: the largest vertex error with the played bones and the source's weights, metres. */
  skin: number;
  /** Largest difference of a played morph weight. */
  weight: number;
}

/** Largest distance between the vertices (xyz each) of `a` and `b`. */
export function largestDistance(a: Float64Array, b: Float64Array): number {
  let max = 0;
  for (let v = 0; v < a.length; v += 3)
    max = Math.max(max, Math.hypot(b[v] - a[v], b[v + 1] - a[v + 1], b[v + 2] - a[v + 2]));
  return max;
}

/** Plays `clipName` of both assets at `times` and compares the deformed heads (see the module header). */
export function headError(
  source: GLTF,
  other: GLTF,
  clipName: string,
  headName: string,
  times: readonly number[],
): HeadError {
  const a = playPoses(source, clipName, headName, times);
  const b = playPoses(other, clipName, headName, times);
  const result: HeadError = { vertex: 0, vertexTime: times[0], morphs: 0, skin: 0, weight: 0 };
  times.forEach((t, i) => {
    for (let w = 0; w < a[i].weights.length; w++)
      result.weight = Math.max(result.weight, Math.abs(a[i].weights[w] - (b[i].weights[w] ?? NaN)));
    const want = deformHead(source, headName, a[i]);
    const vertex = largestDistance(want, deformHead(source, headName, b[i]));
    if (vertex > result.vertex) {
      result.vertex = vertex;
      result.vertexTime = t;
    }
    result.morphs = Math.max(
      result.morphs,
      largestDistance(want, deformHead(source, headName, { transforms: a[i].transforms, weights: b[i].weights })),
    );
    result.skin = Math.max(
      result.skin,
      largestDistance(want, deformHead(source, headName, { transforms: b[i].transforms, weights: a[i].weights })),
    );
  });
  return result;
}

/** `count` random playback times in [0, `duration`], seeded. */
export function randomTimes(random: () => number, count: number, duration: number): number[] {
  return Array.from({ length: count }, () => random() * duration);
}
