/**
 * The three.js GLTFLoader plugin on assets written by the glTF-Transform integration, in
 * Node: a compressed GLB plays through AnimationMixer exactly as the same clip compressed to
 * a loose `.bpk` and bound with createMixerClip does; fallback channels are discarded,
 * channels outside the skeleton (morph weights) still play, and a damaged clip is refused.
 */
import { createRequire } from 'node:module';

import { NodeIO } from '@gltf-transform/core';
import * as THREE from 'three';
import { GLTFLoader, type GLTF } from 'three/examples/jsm/loaders/GLTFLoader.js';
import { beforeAll, describe, expect, it } from 'vitest';

import { BonepressGLTFLoaderPlugin, CompressedAnimationClip, createMixerClip } from '../../src/adapters/three.js';
import { compress } from '../../src/compress/index.js';
import { bonepress, BonepressAnimationCompression } from '../../src/gltf-transform/index.js';
import { readGltfWithWarnings } from '../../src/readers/gltf.js';
import { CompressedClip } from '../../src/runtime/compressed-clip.js';
import { makePropRig, makeRigs, makeSceneRig } from '../utils/gltf-rigs.js';
import { glbOf, splitGlb } from '../utils/glb.js';

const validator = createRequire(import.meta.url)('gltf-validator') as {
  validateBytes(
    data: Uint8Array,
  ): Promise<{ issues: { messages: { code: string; message: string; severity: number }[] } }>;
};

function toArrayBuffer(bytes: Uint8Array): ArrayBuffer {
  return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
}

async function load(glb: Uint8Array, plugin: boolean): Promise<GLTF> {
  const loader = new GLTFLoader();
  if (plugin) loader.register((parser) => new BonepressGLTFLoaderPlugin(parser));
  return new Promise((resolve, reject) => loader.parse(toArrayBuffer(glb), '', resolve, reject));
}

async function compressGlb(
  glb: Uint8Array,
  fallback: boolean | 'quantized' = false,
  extras = true,
): Promise<Uint8Array> {
  const io = new NodeIO().registerExtensions([BonepressAnimationCompression]);
  const doc = await io.readBinary(glb);
  await doc.transform(bonepress({ fallback, extras, keepSmallerSource: false, onWarning: () => {} }));
  return io.writeBinary(doc);
}

/** Every object's local TRS, in traversal order. */
function poses(root: THREE.Object3D): number[] {
  const out: number[] = [];
  root.traverse((o) => out.push(...o.quaternion.toArray(), ...o.position.toArray(), ...o.scale.toArray()));
  return out;
}

/** Plays `clipA` on `a` and `clipB` on `b` and returns the poses of both at every time in `times`. */
function playBoth(
  a: GLTF,
  clipA: THREE.AnimationClip,
  b: GLTF,
  clipB: THREE.AnimationClip,
  times: number[],
): [number[][], number[][]] {
  const mixerA = new THREE.AnimationMixer(a.scene),
    mixerB = new THREE.AnimationMixer(b.scene);
  mixerA.clipAction(clipA).play();
  mixerB.clipAction(clipB).play();
  const outA: number[][] = [],
    outB: number[][] = [];
  for (const t of times) {
    mixerA.setTime(t);
    mixerB.setTime(t);
    outA.push(poses(a.scene));
    outB.push(poses(b.scene));
  }
  mixerA.stopAllAction();
  mixerB.stopAllAction();
  return [outA, outB];
}

/** A track's name with the uuid of an unnamed node (new on every load) masked. */
const trackName = (t: THREE.KeyframeTrack): string => t.name.replace(/^[0-9a-f]{8}-[0-9a-f-]{27}\./, '<uuid>.');

const TIMES = [0, 0.013, 0.1, 0.37, 0.5, 0.99, 1.25, 1.5, 2.05, 2.6, 3.3];

describe('BonepressGLTFLoaderPlugin', () => {
  let rigs: Awaited<ReturnType<typeof makeRigs>>;
  beforeAll(async () => {
    rigs = await makeRigs();
  }, 60_000);

  it('plays every animation bit for bit like the .bpk of the same clip bound with createMixerClip', async () => {
    for (const rig of rigs.filter((r) => r.name !== 'noisy')) {
      const packed = await load(await compressGlb(rig.glb), true);
      const reference = await load(rig.glb, false);
      const { clips } = await readGltfWithWarnings(rig.glb, `${rig.name}.glb`);
      expect(
        packed.animations.map((c) => c.name),
        rig.name,
      ).toEqual(clips.map((c) => c.name));
      for (const source of clips) {
        const clip = packed.animations.find((c) => c.name === source.name)!;
        expect(clip, `${rig.name} ${source.name}`).toBeInstanceOf(CompressedAnimationClip);
        expect((clip as CompressedAnimationClip).unboundBones).toEqual([]);
        const bpk = CompressedClip.open(compress(source).bytes);
        expect(bpk.nodeIndices).toBeDefined();
        const viaBpk = createMixerClip(bpk, reference.scene, { associations: reference.parser.associations });
        expect(clip.duration).toBe(viaBpk.duration);
        expect(clip.tracks.map(trackName)).toEqual(viaBpk.tracks.map(trackName));
        const [a, b] = playBoth(packed, clip, reference, viaBpk, TIMES);
        expect(a, `${rig.name} ${source.name}`).toEqual(b);
        // And it moves: the pose changes over the clip.
        expect(a[0]).not.toEqual(a[4]);
      }
    }
  }, 120_000);

  it('discards the fallback channels (same clip as without them), while a loader without the plugin plays them', async () => {
    const rig = rigs.find((r) => r.name === 'mixamo')!;
    const withFallback = await compressGlb(rig.glb, true);
    const withPlugin = await load(withFallback, true);
    const stripped = await load(await compressGlb(rig.glb, false), true);
    const plain = await load(withFallback, false);
    const source = await load(rig.glb, false);
    for (let i = 0; i < source.animations.length; i++) {
      expect(withPlugin.animations[i]).toBeInstanceOf(CompressedAnimationClip);
      expect(withPlugin.animations[i].tracks.length).toBe(stripped.animations[i].tracks.length);
      const [a, b] = playBoth(withPlugin, withPlugin.animations[i], stripped, stripped.animations[i], TIMES);
      expect(a).toEqual(b);
      expect(plain.animations[i]).not.toBeInstanceOf(CompressedAnimationClip);
      const [c, d] = playBoth(plain, plain.animations[i], source, source.animations[i], TIMES);
      expect(c).toEqual(d);
    }
  }, 60_000);

  it("with the 'quantized' fallback: the plugin plays the compressed clip, a plain loader plays the fallback within 2e-4 of it at the samples", async () => {
    const rig = rigs.find((r) => r.name === 'mixamo')!;
    const glb = await compressGlb(rig.glb, 'quantized');
    const withPlugin = await load(glb, true),
      stripped = await load(await compressGlb(rig.glb, false), true),
      plain = await load(glb, false);
    for (let i = 0; i < withPlugin.animations.length; i++) {
      const clip = withPlugin.animations[i] as CompressedAnimationClip;
      expect(clip).toBeInstanceOf(CompressedAnimationClip);
      expect(plain.animations[i]).not.toBeInstanceOf(CompressedAnimationClip);
      const [a, b] = playBoth(withPlugin, clip, stripped, stripped.animations[i], TIMES);
      expect(a).toEqual(b);
      const samples = [0, 1, 7, 30, clip.compressed.sampleCount - 1].map(
        (k) => clip.compressed.startTime + k / clip.compressed.sampleRate,
      );
      const [c, d] = playBoth(withPlugin, clip, plain, plain.animations[i], samples);
      const worst = Math.max(...c.flatMap((pose, t) => pose.map((v, j) => Math.abs(v - d[t][j]))));
      expect(worst).toBeLessThan(2e-4);
      expect(worst).toBeGreaterThan(0); // the fallback is quantised, not the same data
    }
  }, 60_000);

  it('plays the channels the clip does not hold (here with extras off: a morph weight, a camera) in the same clip, as the source', async () => {
    const glb = await makeSceneRig({ texture: false });
    const packed = await load(await compressGlb(glb, false, false), true);
    const source = await load(glb, false);
    expect(packed.animations.map((c) => c.name)).toEqual(['WalkA', 'WaveB', 'Both', 'CameraFly']);
    const walk = packed.animations[0];
    expect(walk).toBeInstanceOf(CompressedAnimationClip);
    expect(walk.userData).toEqual({ loop: true });
    const weights = walk.tracks.filter((t) => t.name.endsWith('.morphTargetInfluences'));
    expect(weights).toHaveLength(1);
    const face = (g: GLTF): number => (g.scene.getObjectByName('Face') as THREE.Mesh).morphTargetInfluences![0];
    const mixerA = new THREE.AnimationMixer(packed.scene),
      mixerB = new THREE.AnimationMixer(source.scene);
    mixerA.clipAction(walk).play();
    mixerB.clipAction(source.animations[0]).play();
    for (const t of [0.1, 0.5, 0.9]) {
      mixerA.setTime(t);
      mixerB.setTime(t);
      expect(face(packed)).toBe(face(source));
      expect(face(packed)).toBeCloseTo(t, 6);
    }
    // The camera node is not in any skin: with extras off its animation stays a plain glTF animation.
    expect(packed.animations[3]).not.toBeInstanceOf(CompressedAnimationClip);
    const again = await load(await compressGlb(glb, false, false), true),
      fresh = await load(glb, false);
    const [c, d] = playBoth(again, again.animations[3], fresh, fresh.animations[3], TIMES);
    expect(c).toEqual(d);
    expect(c[1]).not.toEqual(c[3]); // the camera moves
    // A clone (subclip, tools) keeps the plain track plain.
    expect(() =>
      new THREE.AnimationMixer(packed.scene).clipAction((walk as CompressedAnimationClip).clone()).play(),
    ).not.toThrow();
  }, 60_000);

  it('plays morph weights and props / cameras outside the skins from the compressed clip, within the error bound of the source in object space', async () => {
    const glb = await makePropRig();
    const compressedGlb = await compressGlb(glb);
    const report = await validator.validateBytes(compressedGlb);
    expect(
      report.issues.messages.filter((m) => m.severity === 0),
      JSON.stringify(report.issues.messages),
    ).toEqual([]);
    const packed = await load(compressedGlb, true),
      source = await load(glb, false);
    expect(packed.animations.map((c) => c.name)).toEqual(['Scene', 'Props']);
    for (const clip of packed.animations) {
      expect(clip).toBeInstanceOf(CompressedAnimationClip);
      // Every channel is in the clip: no plain keyframe track is left.
      expect(clip.tracks.every((t) => t.times.length === 1)).toBe(true);
    }
    const scene = packed.animations[0] as CompressedAnimationClip;
    expect(scene.tracks.map((t) => t.name).sort()).toEqual([
      'Blink.morphTargetInfluences',
      'Blob.morphTargetInfluences',
      'Camera.quaternion',
      'Crate.position',
      'Crate.quaternion',
      'J1.quaternion',
    ]);
    expect(scene.unboundBones).toEqual([]);
    // "Props" moves only the crate: its clip is the crate alone.
    expect((packed.animations[1] as CompressedAnimationClip).compressed.boneCount).toBe(1);

    const threshold = 1e-4; // the default 0.01 cm, in metres
    // Shell points: the crate's subtree (box and lid) reaches 0.6 + 0.25·√3 m from its origin; a camera's shell is 1 m.
    const shell = { Crate: 0.6 + 0.25 * Math.sqrt(3), Camera: 1 };
    const scales = { Blob: [0.5, 0.05], Blink: [0.02] };
    for (const i of [0, 1]) {
      const mixerA = new THREE.AnimationMixer(packed.scene),
        mixerB = new THREE.AnimationMixer(source.scene);
      mixerA.clipAction(packed.animations[i]).play();
      mixerB.clipAction(source.animations[i]).play();
      let worst = 0,
        moved = 0;
      for (let k = 0; k <= 40; k++) {
        const t = k * 0.0517;
        mixerA.setTime(t);
        mixerB.setTime(t);
        for (const [name, r] of Object.entries(shell)) {
          const a = packed.scene.getObjectByName(name)!,
            b = source.scene.getObjectByName(name)!;
          a.updateMatrix();
          b.updateMatrix();
          for (const axis of [
            [r, 0, 0],
            [0, r, 0],
            [0, 0, r],
          ]) {
            const p = new THREE.Vector3(...axis).applyMatrix4(a.matrix),
              q = new THREE.Vector3(...axis).applyMatrix4(b.matrix);
            worst = Math.max(worst, p.distanceTo(q));
            moved = Math.max(moved, q.distanceTo(new THREE.Vector3(...axis).applyMatrix4(b.matrix.clone().identity())));
          }
        }
        if (i === 1) continue;
        for (const [name, s] of Object.entries(scales)) {
          const a = (packed.scene.getObjectByName(name) as THREE.Mesh).morphTargetInfluences!,
            b = (source.scene.getObjectByName(name) as THREE.Mesh).morphTargetInfluences!;
          s.forEach((scale, target) => {
            worst = Math.max(worst, Math.abs(a[target] - b[target]) * scale);
          });
        }
      }
      // float32 arithmetic in three.js adds a little beyond the codec's bound.
      expect(worst, packed.animations[i].name).toBeLessThan(threshold * 1.01 + 1e-6);
      expect(worst).toBeGreaterThan(0); // compressed, not copied
      expect(moved).toBeGreaterThan(0.1);
    }
  }, 60_000);

  it("with the 'quantized' fallback, props and morph weights get fallback channels too, which a plain loader plays close to the clip", async () => {
    const glb = await compressGlb(await makePropRig(), 'quantized');
    const report = await validator.validateBytes(glb);
    expect(
      report.issues.messages.filter((m) => m.severity <= 1),
      JSON.stringify(report.issues.messages),
    ).toEqual([]);
    const withPlugin = await load(glb, true),
      plain = await load(glb, false);
    const clip = withPlugin.animations[0] as CompressedAnimationClip;
    expect(clip).toBeInstanceOf(CompressedAnimationClip);
    expect(clip.tracks.every((t) => t.times.length === 1)).toBe(true); // the fallback channels are discarded
    expect(plain.animations[0].tracks.map((t) => t.name).sort()).toEqual(clip.tracks.map((t) => t.name).sort());
    const samples = [0, 1, 7, 30, clip.compressed.sampleCount - 1].map(
      (k) => clip.compressed.startTime + k / clip.compressed.sampleRate,
    );
    const influences = (g: GLTF) =>
      ['Blob', 'Blink'].flatMap((name) =>
        Array.from((g.scene.getObjectByName(name) as THREE.Mesh).morphTargetInfluences!),
      );
    const mixerA = new THREE.AnimationMixer(withPlugin.scene),
      mixerB = new THREE.AnimationMixer(plain.scene);
    mixerA.clipAction(clip).play();
    mixerB.clipAction(plain.animations[0]).play();
    let worst = 0;
    for (const t of samples) {
      mixerA.setTime(t);
      mixerB.setTime(t);
      const a = [...influences(withPlugin), ...poses(withPlugin.scene)],
        b = [...influences(plain), ...poses(plain.scene)];
      worst = Math.max(worst, ...a.map((v, i) => Math.abs(v - b[i])));
    }
    expect(worst).toBeLessThan(2e-4);
  }, 60_000);

  it('refuses a damaged clip, naming the animation and the problem', async () => {
    const rig = rigs.find((r) => r.name === 'fast')!;
    const glb = await compressGlb(rig.glb);
    const { json, bin } = splitGlb(glb);
    const ext = (json.animations as { extensions: Record<string, { bufferView: number }> }[])[0].extensions
      .BONEPRESS_animation_compression;
    const view = (json.bufferViews as { byteOffset?: number; byteLength: number }[])[ext.bufferView];
    bin[(view.byteOffset ?? 0) + view.byteLength - 1] ^= 0x40;
    await expect(load(glbOf(json, bin), true)).rejects.toThrow(
      /BONEPRESS_animation_compression: animation 0 \("Punch"\): checksum mismatch/,
    );
    bin[(view.byteOffset ?? 0) + view.byteLength - 1] ^= 0x40;
    // A bone table whose parents are not the clip's.
    const table = (json.extensions as Record<string, { skeletons: { parents: number[] }[] }>)
      .BONEPRESS_animation_compression.skeletons[0];
    const parent = table.parents[2];
    table.parents[2] = -1;
    await expect(load(glbOf(json, bin), true)).rejects.toThrow(
      new RegExp(`animation 0 \\("Punch"\\): bone 2's parent is ${parent} in the clip, -1 in the extension`),
    );
    // Extra-bone lists that do not match the clip.
    const props = splitGlb(await compressGlb(await makePropRig()));
    const scene = (
      props.json.animations as { extensions: Record<string, { weights: { scales: number[] }[]; nodes: number[] }> }[]
    )[0].extensions.BONEPRESS_animation_compression;
    scene.weights[0].scales.push(1);
    await expect(load(glbOf(props.json, props.bin), true)).rejects.toThrow(
      /animation 0 \("Scene"\): the clip has 7 bones, the extension 8/,
    );
    scene.weights[0].scales.pop();
    scene.nodes = [1e6];
    await expect(load(glbOf(props.json, props.bin), true)).rejects.toThrow(
      /animation 0 \("Scene"\): nodes are not node indices/,
    );
  }, 60_000);

  it('loads an additive animation additive, and refuses one whose additive field disagrees with its clip or that has channels outside its clip', async () => {
    const rig = rigs.find((r) => r.name === 'blender')!;
    const io = new NodeIO().registerExtensions([BonepressAnimationCompression]);
    const doc = await io.readBinary(rig.glb);
    await doc.transform(bonepress({ additive: { animations: [0] }, onWarning: () => {} }));
    const glb = await io.writeBinary(doc);
    const loaded = await load(glb, true);
    expect(loaded.animations.map((c) => c.blendMode)).toEqual([
      THREE.AdditiveAnimationBlendMode,
      THREE.NormalAnimationBlendMode,
    ]);
    type Json = {
      nodes: object[];
      scenes: { nodes: number[] }[];
      animations: {
        name: string;
        channels: { sampler: number; target: object }[];
        extensions: Record<string, Record<string, unknown>>;
      }[];
    };
    const edited = (edit: (json: Json) => void): Uint8Array => {
      const { json, bin } = splitGlb<Json>(glb);
      edit(json);
      return glbOf(json, bin);
    };
    await expect(
      load(
        edited((json) => delete json.animations[0].extensions.BONEPRESS_animation_compression.additive),
        true,
      ),
    ).rejects.toThrow(/animation 0 \("Walk"\): additive is false in the extension, true in the clip/);
    await expect(
      load(
        edited((json) => (json.animations[1].extensions.BONEPRESS_animation_compression.additive = true)),
        true,
      ),
    ).rejects.toThrow(/animation 1 \("Wave"\): additive is true in the extension, false in the clip/);
    await expect(
      load(
        edited((json) => (json.animations[0].extensions.BONEPRESS_animation_compression.additive = 'true')),
        true,
      ),
    ).rejects.toThrow(/animation 0 \("Walk"\): additive is "true" in the extension, true in the clip/);
    // An absolute channel beside the layer: a new node turned by the stub's own sampler (a STEP rotation).
    const withChannel = edited((json) => {
      json.nodes.push({ name: 'Extra' });
      json.scenes[0].nodes.push(json.nodes.length - 1);
      const stub = json.animations[0].channels[0];
      json.animations[0].channels.push({
        sampler: stub.sampler,
        target: { node: json.nodes.length - 1, path: 'rotation' },
      });
    });
    await expect(load(withChannel, true)).rejects.toThrow(
      /animation 0 \("Walk"\): the clip is additive, but 1 of the animation's channels lie outside it \(absolute poses\)/,
    );
  }, 60_000);
});
