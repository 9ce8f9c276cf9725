/**
 * The glTF asset corpus checks, shared by the test files that run them: the animated Khronos
 * sample models read from `../shared/data/khronos-samples/` (never copied into the
 * repository), or, when `../shared` is absent, generated rigs of the same shapes
 * (test/utils/gltf-rigs.ts). Per asset: the built CLI's `.bp.glb` and `.bpk` outputs, the
 * validator's errors, and the largest virtual-vertex distance between three.js's own
 * playback of the source and each way of playing the compressed animation (the GLTFLoader
 * plugin, `createMixerClip`, `CompressedClipPlayer`) at random times and around every key.
 */
import { createRequire } from 'node:module';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { NodeIO, type GLTF as GltfJson } from '@gltf-transform/core';
import * as THREE from 'three';
import { GLTFLoader, type GLTF } from 'three/examples/jsm/loaders/GLTFLoader.js';

import {
  BonepressGLTFLoaderPlugin,
  CompressedClipPlayer,
  createMixerClip,
  gltfNodeObjects,
} from '../../src/adapters/three.js';
import { mergeBuffers } from '../../src/gltf-transform/buffers.js';
import { BonepressAnimationCompression } from '../../src/gltf-transform/index.js';
import { CompressedClip } from '../../src/runtime/compressed-clip.js';
import { makeRigs } from '../utils/gltf-rigs.js';
import { sharedData } from '../utils/shared-data.js';
import { mulberry32 } from '../utils/synthetic.js';

/** Where the Khronos sample models are read from; undefined without them (test/utils/shared-data.ts). */
export const KHRONOS_DIR = sharedData('khronos-samples');
/** The compressor's default threshold, 0.01 cm, in the assets' metres. */
export const THRESHOLD = 1e-4;
/** The default shell distance, 3 cm, in metres. */
const SHELL = 0.03;
/** Random playback times per animation. */
export const RANDOM_TIMES = 200;
/** Offset of the times checked on either side of every key. */
export const KEY_OFFSET = 1e-4;

/** One asset of the corpus: its name and its `.glb` or `.gltf` file. */
export interface CorpusAsset {
  name: string;
  file: string;
}

/**
 * The assets: every model folder of {@link KHRONOS_DIR} (its `.glb`, else its `.gltf`), or,
 * without it, generated rigs of the same shapes written into `workDir` (skinned characters
 * with named and unnamed joints, STEP and CUBICSPLINE, fast rotations, float32-jittered
 * 37.5 Hz keys).
 */
export async function corpusAssets(workDir: string): Promise<{ assets: CorpusAsset[]; khronos: boolean }> {
  if (KHRONOS_DIR) {
    const dir = KHRONOS_DIR;
    const assets = readdirSync(dir, { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .map((d) => {
        const files = readdirSync(join(dir, d.name));
        const file = files.find((f) => f.endsWith('.glb')) ?? files.find((f) => f.endsWith('.gltf'));
        if (!file) throw new Error(`${d.name}: no .glb or .gltf in ${dir}`);
        return { name: d.name, file: join(dir, d.name, file) };
      });
    return { assets: assets.sort((a, b) => a.name.localeCompare(b.name)), khronos: true };
  }
  // Characters only: loose clips hold skeletons, so the props and cameras of test/utils's
  // scene rigs would not play through them (the Khronos models animate no node outside a skeleton
  // besides morph weights, which loose clips hold when nothing else moves).
  return {
    assets: (await makeRigs()).map(({ name, glb }) => {
      const file = join(workDir, `${name}.glb`);
      writeFileSync(file, glb);
      return { name, file };
    }),
    khronos: false,
  };
}

const io = (): NodeIO => new NodeIO().registerExtensions([BonepressAnimationCompression]);

/**
 * The asset at `file` as one self-contained GLB for three.js in Node: buffers merged,
 * textures dropped (Node has no image decoder); nodes, meshes, skins and animations as
 * they are, in the same order.
 */
export async function loadableGlb(file: string): Promise<Uint8Array> {
  const doc = await io().read(file);
  for (const texture of doc.getRoot().listTextures()) texture.dispose();
  mergeBuffers(doc);
  return io().writeBinary(doc);
}

/** The asset's glTF JSON (external buffers are not read). */
export async function assetJson(file: string): Promise<GltfJson.IGLTF> {
  if (file.endsWith('.gltf')) return JSON.parse(readFileSync(file, 'utf8')) as GltfJson.IGLTF;
  return (await io().binaryToJSON(readFileSync(file))).json;
}

/** GLTFLoader's result for `glb`, with the bonepress plugin registered when `plugin`. */
export async function loadThree(glb: Uint8Array, plugin: boolean): Promise<GLTF> {
  const loader = new GLTFLoader();
  if (plugin) loader.register((parser) => new BonepressGLTFLoaderPlugin(parser));
  const buffer = glb.buffer.slice(glb.byteOffset, glb.byteOffset + glb.byteLength) as ArrayBuffer;
  return new Promise((resolve, reject) => loader.parse(buffer, '', resolve, reject));
}

/** The validator's error codes for the asset at `file` (external resources read beside it). */
export async function validatorErrors(file: string): Promise<Set<string>> {
  const validator = createRequire(import.meta.url)('gltf-validator') as {
    validateBytes(
      data: Uint8Array,
      options?: object,
    ): Promise<{ issues: { messages: { code: string; severity: number }[] } }>;
  };
  const dir = join(file, '..');
  const report = await validator.validateBytes(new Uint8Array(readFileSync(file)), {
    uri: file,
    externalResourceFunction: (uri: string) =>
      Promise.resolve(new Uint8Array(readFileSync(join(dir, decodeURIComponent(uri))))),
  });
  return new Set(report.issues.messages.filter((m) => m.severity === 0).map((m) => m.code));
}

/**
 * The times an animation is checked at: {@link RANDOM_TIMES} seeded random times over
 * [0, duration], and every key time of the source's channels and ± {@link KEY_OFFSET}
 * around it, within [0, duration].
 */
export function playbackTimes(keyTimes: readonly number[], duration: number, seed: number): number[] {
  const random = mulberry32(seed);
  const times = Array.from({ length: RANDOM_TIMES }, () => random() * duration);
  for (const t of keyTimes)
    for (const d of [-KEY_OFFSET, 0, KEY_OFFSET]) times.push(Math.min(duration, Math.max(0, t + d)));
  return times;
}

/** Every key time of a clip three.js loaded from the source (its tracks' times, as three plays them). */
export function clipKeyTimes(clip: THREE.AnimationClip): number[] {
  const times = new Set<number>();
  for (const track of clip.tracks) for (const t of track.times) times.add(t);
  return [...times].sort((a, b) => a - b);
}

/** What a scene looks like at one time: every node's three virtual vertices, and every morph influence scaled by its target's largest displacement. */
interface Snapshot {
  vertices: Float64Array;
  weights: Float64Array;
}

/** The objects a snapshot reads: per glTF node its object, and the morph meshes with their targets' largest displacements. */
export interface SceneProbe {
  nodes: THREE.Object3D[];
  morphs: { mesh: THREE.Mesh; scales: number[] }[];
}

/** A {@link SceneProbe} of a loaded asset. */
export async function probeOf(gltf: GLTF): Promise<SceneProbe> {
  const nodes = await gltfNodeObjects(gltf);
  const morphs: SceneProbe['morphs'] = [];
  gltf.scene.traverse((o) => {
    const mesh = o as THREE.Mesh;
    if (!mesh.morphTargetInfluences) return;
    const targets = mesh.geometry.morphAttributes.position ?? [];
    const scales = targets.map((attribute) => {
      let max = 0;
      for (let i = 0; i < attribute.count; i++)
        max = Math.max(max, Math.hypot(attribute.getX(i), attribute.getY(i), attribute.getZ(i)));
      return max > 0 ? max : 1;
    });
    morphs.push({ mesh, scales });
  });
  return { nodes, morphs };
}

function snapshot(scene: THREE.Object3D, probe: SceneProbe): Snapshot {
  scene.updateMatrixWorld(true);
  const vertices = new Float64Array(probe.nodes.length * 9);
  const v = new THREE.Vector3();
  probe.nodes.forEach((node, n) => {
    for (let axis = 0; axis < 3; axis++) {
      v.set(axis === 0 ? SHELL : 0, axis === 1 ? SHELL : 0, axis === 2 ? SHELL : 0).applyMatrix4(node.matrixWorld);
      vertices.set([v.x, v.y, v.z], n * 9 + axis * 3);
    }
  });
  const weights = probe.morphs.flatMap(({ mesh, scales }) =>
    mesh.morphTargetInfluences!.map((w, t) => w * (scales[t] ?? 1)),
  );
  return { vertices, weights: Float64Array.from(weights) };
}

/** Largest distance between two snapshots (virtual vertices, scaled morph weights). */
function distance(a: Snapshot, b: Snapshot): number {
  let worst = 0;
  for (let i = 0; i < a.vertices.length; i += 3) {
    worst = Math.max(
      worst,
      Math.hypot(
        a.vertices[i] - b.vertices[i],
        a.vertices[i + 1] - b.vertices[i + 1],
        a.vertices[i + 2] - b.vertices[i + 2],
      ),
    );
  }
  for (let i = 0; i < a.weights.length; i++) worst = Math.max(worst, Math.abs(a.weights[i] - b.weights[i]));
  return worst;
}

/** A way of posing a loaded scene at a time. */
export type Poser = (time: number) => void;

/** Poses a scene by playing `clip` through an `AnimationMixer` (LoopRepeat). */
export function mixerPoser(root: THREE.Object3D, clip: THREE.AnimationClip): Poser {
  const mixer = new THREE.AnimationMixer(root);
  mixer.clipAction(clip).play();
  return (time) => {
    mixer.setTime(time);
  };
}

/** Poses a scene with a loose compressed clip through `createMixerClip`, bound by node index. */
export function looseMixerPoser(
  gltf: GLTF,
  probe: SceneProbe,
  clip: CompressedClip,
  onWarning: (w: string) => void,
): Poser {
  return mixerPoser(gltf.scene, createMixerClip(clip, gltf.scene, { nodes: probe.nodes, onWarning }));
}

/** Poses a scene with a loose compressed clip through `CompressedClipPlayer` (every node as a bone), bound by node index. */
export function playerPoser(probe: SceneProbe, clip: CompressedClip, onWarning: (w: string) => void): Poser {
  const player = new CompressedClipPlayer(clip, new THREE.Skeleton(probe.nodes as THREE.Bone[]), {
    nodes: probe.nodes,
    onWarning,
  });
  return (time) => {
    player.setTime(time);
  };
}

/** The worst time and distance between a reference playback and another, over `times`. */
export function worstDistance(
  reference: { scene: THREE.Object3D; probe: SceneProbe; pose: Poser },
  other: { scene: THREE.Object3D; probe: SceneProbe; pose: Poser },
  times: readonly number[],
): { time: number; error: number } {
  let worst = { time: NaN, error: 0 };
  for (const t of times) {
    reference.pose(t);
    other.pose(t);
    const error = distance(snapshot(reference.scene, reference.probe), snapshot(other.scene, other.probe));
    if (error > worst.error || Number.isNaN(worst.time)) worst = { time: t, error: Math.max(error, worst.error) };
  }
  return worst;
}

/** How a compressed animation is played. */
export type PlaybackPath = 'plugin' | 'createMixerClip' | 'CompressedClipPlayer';

/** The largest distance from three.js's playback of the source along one path, and when. */
export interface PathError {
  animation: string;
  path: PlaybackPath;
  error: number;
  time: number;
}

/**
 * Plays every animation of the source at `sourceFile` in three.js, and beside it the
 * compressed asset `glbOut` through the plugin and, with `bpkDir`, the loose clip of the same
 * name through `createMixerClip` and `CompressedClipPlayer` (bound by node index), at
 * {@link playbackTimes}. Returns the worst distance per animation and path, and the problems
 * met on the way (a missing loose clip, bones that bind to nothing).
 */
export async function playbackErrors(
  sourceFile: string,
  glbOut: string,
  bpkDir?: string,
): Promise<{ errors: PathError[]; problems: string[] }> {
  const glb = await loadableGlb(sourceFile);
  const packedGlb = await loadableGlb(glbOut);
  const clips = bpkDir ? looseClips(bpkDir) : new Map<string, CompressedClip>();
  const errors: PathError[] = [],
    problems: string[] = [];
  const count = (await loadThree(glb, false)).animations.length;
  for (let index = 0; index < count; index++) {
    // Every playback on a scene of its own: a mixer leaves its last pose on the nodes it moved.
    const source = await loadThree(glb, false);
    const sourceClip = source.animations[index];
    const animation = sourceClip.name;
    const times = playbackTimes(clipKeyTimes(sourceClip), sourceClip.duration, index + 1);
    const reference = { scene: source.scene, probe: await probeOf(source), pose: mixerPoser(source.scene, sourceClip) };
    const check = async (
      path: PlaybackPath,
      bytes: Uint8Array,
      plugin: boolean,
      poser: (gltf: GLTF, probe: SceneProbe) => Poser,
    ): Promise<void> => {
      const gltf = await loadThree(bytes, plugin);
      const probe = await probeOf(gltf);
      errors.push({
        animation,
        path,
        ...worstDistance(reference, { scene: gltf.scene, probe, pose: poser(gltf, probe) }, times),
      });
    };
    await check('plugin', packedGlb, true, (gltf) => mixerPoser(gltf.scene, gltf.animations[index]));
    if (!bpkDir) continue;
    const loose = clips.get(animation);
    if (!loose) {
      problems.push(`${animation}: no loose .bpk (the folder holds ${[...clips.keys()].join(', ')})`);
      continue;
    }
    const warn = (w: string): void => {
      problems.push(`${animation}: ${w}`);
    };
    await check('createMixerClip', glb, false, (gltf, probe) => looseMixerPoser(gltf, probe, loose, warn));
    await check('CompressedClipPlayer', glb, false, (_, probe) => playerPoser(probe, loose, warn));
  }
  return { errors, problems };
}

/** The loose clips of a `.bpk` output folder, by clip name. */
export function looseClips(dir: string): Map<string, CompressedClip> {
  const out = new Map<string, CompressedClip>();
  for (const f of readdirSync(dir).filter((name) => name.endsWith('.bpk'))) {
    const clip = CompressedClip.open(new Uint8Array(readFileSync(join(dir, f))));
    out.set(clip.name ?? f, clip);
  }
  return out;
}
