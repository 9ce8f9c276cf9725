/**
 * glTF characters through three.js, end to end: GLTFLoader (in Node, from an ArrayBuffer)
 * loads each rig of test/utils/gltf-rigs.ts twice; one copy plays the loader's own clips,
 * the other the compressed clips through `createMixerClip`, both through AnimationMixer.
 * The joints' world-space virtual vertices must agree within the threshold at random
 * times (between samples, past the end, looping), in crossfades, with weights and with
 * additive blending.
 */
import * as THREE from 'three';
import { GLTFLoader, type GLTF } from 'three/examples/jsm/loaders/GLTFLoader.js';
import { beforeAll, describe, expect, it } from 'vitest';

import { NodeIO } from '@gltf-transform/core';

import {
  BonepressGLTFLoaderPlugin,
  createMixerClip,
  sanitizeNodeName,
  type CompressedAnimationClip,
} from '../../src/adapters/three.js';
import { compress } from '../../src/compress/index.js';
import { bonepress, BonepressAnimationCompression } from '../../src/gltf-transform/index.js';
import { readGltfWithWarnings } from '../../src/readers/gltf.js';
import { CompressedClip } from '../../src/runtime/compressed-clip.js';
import { makeRigs, type Rig } from '../utils/gltf-rigs.js';
import { mulberry32 } from '../utils/synthetic.js';
import type { RawClip } from '../../src/clip/raw-clip.js';
import { isStepTrack } from '../../src/runtime/clip-inspection.js';

const THRESHOLD = 1e-4; // 0.01 cm in metres, the compressor's default
const SHELL = 0.03; // 3 cm
// three.js evaluates the source in float32 (keys, slerp, matrices): allow its rounding on top.
const TOLERANCE = THRESHOLD * 1.02;

async function load(glb: Uint8Array, plugin = false): Promise<GLTF> {
  const buffer = glb.buffer.slice(glb.byteOffset, glb.byteOffset + glb.byteLength) as ArrayBuffer;
  const loader = new GLTFLoader();
  if (plugin) loader.register((parser) => new BonepressGLTFLoaderPlugin(parser));
  return new Promise((resolve, reject) => loader.parse(buffer, '', resolve, reject));
}

/** Largest world-space distance of the three virtual vertices of every joint between two copies of a scene. */
function worldError(a: THREE.Object3D, b: THREE.Object3D): number {
  a.updateMatrixWorld(true);
  b.updateMatrixWorld(true);
  const listA: THREE.Object3D[] = [],
    listB: THREE.Object3D[] = [];
  a.traverse((o) => {
    if ((o as THREE.Bone).isBone) listA.push(o);
  });
  b.traverse((o) => {
    if ((o as THREE.Bone).isBone) listB.push(o);
  });
  expect(listB.length).toBe(listA.length);
  const va = new THREE.Vector3(),
    vb = new THREE.Vector3();
  let worst = 0;
  listA.forEach((joint, i) => {
    for (let axis = 0; axis < 3; axis++) {
      va.set(axis === 0 ? SHELL : 0, axis === 1 ? SHELL : 0, axis === 2 ? SHELL : 0);
      vb.copy(va);
      va.applyMatrix4(joint.matrixWorld);
      vb.applyMatrix4(listB[i].matrixWorld);
      worst = Math.max(worst, va.distanceTo(vb));
    }
  });
  return worst;
}

/**
 * Plays `layerA` on `a` and `layerB` on `b`, each over the same uncompressed `base` (bound by
 * name), so that the difference is the layers' alone; returns the largest {@link worldError}
 * at 200 random times over two periods of the layer.
 */
function layerOverBase(
  a: THREE.Object3D,
  layerA: THREE.AnimationClip,
  b: THREE.Object3D,
  layerB: THREE.AnimationClip,
  base: THREE.AnimationClip,
  random: () => number,
): number {
  const mixerA = new THREE.AnimationMixer(a),
    mixerB = new THREE.AnimationMixer(b);
  mixerA.clipAction(base).play();
  mixerB.clipAction(base).play();
  mixerA.clipAction(layerA).play();
  mixerB.clipAction(layerB).play();
  let worst = 0;
  for (let i = 0; i < 200; i++) {
    const t = random() * 2 * layerA.duration;
    mixerA.setTime(t);
    mixerB.setTime(t);
    worst = Math.max(worst, worldError(a, b));
  }
  mixerA.stopAllAction();
  mixerB.stopAllAction();
  mixerA.uncacheRoot(a);
  mixerB.uncacheRoot(b);
  return worst;
}

interface Loaded {
  rig: Rig;
  raw: GLTF;
  packed: GLTF;
  clips: Map<
    string,
    {
      source: RawClip;
      compressed: CompressedClip;
      mixerClip: CompressedAnimationClip;
      raw: THREE.AnimationClip;
      upsampling: number;
      sampleRate: number;
      maxError: number;
    }
  >;
  warnings: string[];
}

let loaded: Loaded[];
beforeAll(async () => {
  const rigs = await makeRigs();
  loaded = await Promise.all(
    rigs.map(async (rig) => {
      const raw = await load(rig.glb);
      const packed = await load(rig.glb);
      const { clips: sources, warnings } = await readGltfWithWarnings(rig.glb, `${rig.name}.glb`);
      const clips: Loaded['clips'] = new Map();
      for (const source of sources) {
        const { bytes, stats } = compress(source);
        const compressed = CompressedClip.open(bytes);
        const bindWarnings: string[] = [];
        const mixerClip = createMixerClip(compressed, packed.scene, {
          associations: packed.parser.associations,
          onWarning: (w) => bindWarnings.push(w),
        });
        expect(bindWarnings, rig.name).toEqual([]);
        const rawClip = raw.animations.find((c) => c.name === source.name)!;
        clips.set(source.name, {
          source,
          compressed,
          mixerClip,
          raw: rawClip,
          upsampling: stats.upsampling,
          sampleRate: stats.sampleRate,
          maxError: stats.maxError,
        });
      }
      return { rig, raw, packed, clips, warnings };
    }),
  );
}, 120_000);

describe('compressed glTF clips through three.js AnimationMixer', () => {
  it('bind every joint by node index, keep the source time base and stay within the threshold at 200 random times', () => {
    for (const { rig, raw, packed, clips } of loaded) {
      for (const [name, c] of clips) {
        expect(c.mixerClip.unboundBones, rig.name).toEqual([]);
        expect(c.mixerClip.duration, `${rig.name} ${name} duration`).toBeCloseTo(c.raw.duration, 6);
        expect(c.maxError, `${rig.name} ${name}: compressor's own figure`).toBeLessThanOrEqual(THRESHOLD);
        const mixerA = new THREE.AnimationMixer(raw.scene),
          mixerB = new THREE.AnimationMixer(packed.scene);
        const actionA = mixerA.clipAction(c.raw).play(),
          actionB = mixerB.clipAction(c.mixerClip).play();
        const random = mulberry32(rig.keyRate * 1000 + name.length);
        let worst = 0;
        for (let i = 0; i < 200; i++) {
          // Up to two periods, so LoopRepeat wraps with the source's duration.
          const t = random() * 2 * c.raw.duration;
          mixerA.setTime(t);
          mixerB.setTime(t);
          worst = Math.max(worst, worldError(raw.scene, packed.scene));
        }
        expect(worst, `${rig.name} ${name}`).toBeLessThanOrEqual(TOLERANCE);
        actionA.stop();
        actionB.stop();
        mixerA.uncacheRoot(raw.scene);
        mixerB.uncacheRoot(packed.scene);
      }
    }
  });

  it('crossfades, weights and timeScale give the same pose as the original clips', () => {
    for (const { rig, raw, packed, clips } of loaded) {
      if (clips.size < 2) continue;
      const [first, second] = [...clips.values()];
      const mixerA = new THREE.AnimationMixer(raw.scene),
        mixerB = new THREE.AnimationMixer(packed.scene);
      const a1 = mixerA.clipAction(first.raw),
        a2 = mixerA.clipAction(second.raw);
      const b1 = mixerB.clipAction(first.mixerClip),
        b2 = mixerB.clipAction(second.mixerClip);
      for (const [x, y] of [
        [a1, a2],
        [b1, b2],
      ] as const) {
        x.play();
        y.play();
        y.setEffectiveTimeScale(0.7);
        x.crossFadeTo(y, 0.8, false);
      }
      let worst = 0;
      for (let step = 0; step < 90; step++) {
        mixerA.update(1 / 60);
        mixerB.update(1 / 60);
        worst = Math.max(worst, worldError(raw.scene, packed.scene));
        if (step === 60) {
          // A fixed blend of the two, by weight.
          a1.setEffectiveWeight(0.35);
          b1.setEffectiveWeight(0.35);
          a2.setEffectiveWeight(0.65);
          b2.setEffectiveWeight(0.65);
        }
      }
      expect(worst, rig.name).toBeLessThanOrEqual(TOLERANCE);
      mixerA.stopAllAction();
      mixerB.stopAllAction();
      mixerA.uncacheRoot(raw.scene);
      mixerB.uncacheRoot(packed.scene);
    }
  });

  it('a clip stored additive plays over a base within the threshold of makeClipAdditive of the original', () => {
    let played = 0;
    for (const { rig, raw, packed, clips } of loaded) {
      if (clips.size < 2) continue;
      const [first, second] = [...clips.values()];
      // Compressed additive against its frame 0, measured over the second clip played alongside.
      const { bytes, stats } = compress(first.source, { additive: { base: second.source } });
      expect(stats.maxError, rig.name).toBeLessThanOrEqual(THRESHOLD);
      const compressed = CompressedClip.open(bytes);
      expect(compressed.additive, rig.name).toEqual({
        mode: 'local',
        reference: { kind: 'frame', frame: 0, time: first.compressed.startTime },
      });
      const additiveB = createMixerClip(compressed, packed.scene, { associations: packed.parser.associations });
      expect(additiveB.blendMode).toBe(THREE.AdditiveAnimationBlendMode);
      expect(() => additiveB.makeAdditive()).toThrow(/stored additive/);
      const additiveA = THREE.AnimationUtils.makeClipAdditive(first.raw.clone());
      const worst = layerOverBase(
        raw.scene,
        additiveA,
        packed.scene,
        additiveB,
        second.raw,
        mulberry32(rig.keyRate * 77),
      );
      expect(worst, `${rig.name} stored additive`).toBeLessThanOrEqual(TOLERANCE);
      played++;
    }
    expect(played).toBeGreaterThan(0);
  });

  it('a glTF animation stored additive (bonepress transform) loads through the plugin and plays over a base within the threshold of makeClipAdditive of the original', async () => {
    let played = 0;
    for (const { rig, raw, clips } of loaded) {
      if (clips.size < 2) continue;
      const [first, second] = [...clips.values()];
      const io = new NodeIO().registerExtensions([BonepressAnimationCompression]);
      const doc = await io.readBinary(rig.glb);
      // The first animation additive against its frame 3, measured over the second played alongside.
      await doc.transform(
        bonepress({ additive: { animations: [0], reference: 3, base: { animation: 1 } }, onWarning: () => {} }),
      );
      const packed = await load(await io.writeBinary(doc), true);
      const layer = packed.animations[0] as CompressedAnimationClip;
      expect(layer.compressed.additive?.reference, rig.name).toMatchObject({ kind: 'frame', frame: 3 });
      expect(layer.blendMode, rig.name).toBe(THREE.AdditiveAnimationBlendMode);
      expect(packed.animations[1].blendMode, rig.name).toBe(THREE.NormalAnimationBlendMode);
      // three.js takes the reference as a frame counted from time 0: the record's time (frame 3 after the start) at the key rate.
      const referenceTime = layer.compressed.additive!.reference.time;
      const additiveA = THREE.AnimationUtils.makeClipAdditive(
        first.raw.clone(),
        referenceTime * rig.keyRate,
        undefined,
        rig.keyRate,
      );
      const worst = layerOverBase(raw.scene, additiveA, packed.scene, layer, second.raw, mulberry32(rig.keyRate * 31));
      expect(worst, `${rig.name} additive glTF`).toBeLessThanOrEqual(TOLERANCE);
      played++;
    }
    expect(played).toBeGreaterThan(0);
  });

  it('additive clips match AnimationUtils.makeClipAdditive, and LoopOnce with clampWhenFinished holds the last pose', () => {
    for (const { rig, raw, packed, clips } of loaded) {
      if (clips.size < 2) continue;
      const [first, second] = [...clips.values()];
      const mixerA = new THREE.AnimationMixer(raw.scene),
        mixerB = new THREE.AnimationMixer(packed.scene);
      const additiveA = THREE.AnimationUtils.makeClipAdditive(first.raw.clone());
      const additiveB = first.mixerClip.makeAdditive();
      expect(additiveB.blendMode).toBe(THREE.AdditiveAnimationBlendMode);
      mixerA.clipAction(second.raw).play();
      mixerB.clipAction(second.mixerClip).play();
      mixerA.clipAction(additiveA).setEffectiveWeight(0.8).play();
      mixerB.clipAction(additiveB).setEffectiveWeight(0.8).play();
      const random = mulberry32(99);
      let worst = 0;
      for (let i = 0; i < 50; i++) {
        const t = random() * first.raw.duration;
        mixerA.setTime(t);
        mixerB.setTime(t);
        worst = Math.max(worst, worldError(raw.scene, packed.scene));
      }
      // An additive pose carries three decoded poses' errors (base, reference, pose): up to 3 × the threshold.
      expect(worst, `${rig.name} additive`).toBeLessThanOrEqual(3 * TOLERANCE);
      mixerA.stopAllAction();
      mixerB.stopAllAction();
      mixerA.uncacheRoot(raw.scene);
      mixerB.uncacheRoot(packed.scene);

      const onceA = mixerA.clipAction(first.raw).setLoop(THREE.LoopOnce, 1),
        onceB = mixerB.clipAction(first.mixerClip).setLoop(THREE.LoopOnce, 1);
      onceA.clampWhenFinished = true;
      onceB.clampWhenFinished = true;
      onceA.play();
      onceB.play();
      mixerA.update(first.raw.duration + 0.5);
      mixerB.update(first.raw.duration + 0.5);
      expect(worldError(raw.scene, packed.scene), `${rig.name} clamped`).toBeLessThanOrEqual(TOLERANCE);
      mixerA.stopAllAction();
      mixerB.stopAllAction();
      mixerA.uncacheRoot(raw.scene);
      mixerB.uncacheRoot(packed.scene);
    }
  });

  it('each stand-in track holds what the clip plays at its start, for tools that read its values', () => {
    for (const { packed, clips } of loaded) {
      for (const c of clips.values()) {
        for (const clip of [c.mixerClip, c.mixerClip.clone()]) {
          const mixer = new THREE.AnimationMixer(packed.scene);
          mixer.clipAction(clip).play();
          mixer.setTime(c.compressed.startTime);
          for (const track of clip.tracks) {
            const at = track.name.lastIndexOf('.');
            const node = track.name.slice(0, at);
            const object = packed.scene.getObjectByName(node) ?? packed.scene.getObjectByProperty('uuid', node)!;
            const played = (object as unknown as Record<string, { toArray(): number[] } | number[]>)[
              track.name.slice(at + 1)
            ];
            const values = Array.isArray(played) ? played : played.toArray();
            expect(Array.from(track.values), track.name).toEqual(values.map(Math.fround));
          }
          mixer.stopAllAction();
          mixer.uncacheRoot(packed.scene);
        }
      }
    }
  });

  it('a copy of a clip whose tracks the user filtered binds each kept track to its own bone', () => {
    // What each track's own interpolant gives at time t (the values the mixer would apply).
    const valuesAt = (clip: THREE.AnimationClip, t: number) =>
      clip.tracks.map((track) => {
        const out = new Float32Array(track.getValueSize());
        (track as unknown as { createInterpolant(r: Float32Array): THREE.Interpolant })
          .createInterpolant(out)
          .evaluate(t);
        return [track.name, Array.from(out)];
      });
    let compared = 0;
    for (const { clips } of loaded) {
      for (const c of clips.values()) {
        if (c.mixerClip.tracks.length < 3) continue;
        // Every other track dropped, the first among them (as a user removing root motion would).
        const keep = (_: unknown, i: number) => i % 2 === 1;
        const filtered = c.mixerClip.clone();
        filtered.tracks = filtered.tracks.filter(keep);
        const additive = c.mixerClip.makeAdditive();
        additive.tracks = additive.tracks.filter(keep);
        const random = mulberry32(c.compressed.boneCount);
        for (const [expected, copy] of [
          [filtered, filtered.clone()],
          [additive, filtered.makeAdditive()],
        ]) {
          expect(copy.tracks.map((t) => t.name)).toEqual(expected.tracks.map((t) => t.name));
          for (let i = 0; i < 5; i++) {
            const t = c.compressed.startTime + random() * c.compressed.duration;
            expect(valuesAt(copy, t)).toEqual(valuesAt(expected, t));
          }
        }
        compared++;
      }
    }
    expect(compared).toBeGreaterThan(0);
  });

  it('one resident compressed clip drives many characters, each action with its own state', () => {
    const { rig, clips } = loaded[0];
    const c = [...clips.values()][0];
    const scenes = [0, 1, 2].map(() => c.mixerClip.clone());
    expect(scenes.every((clip) => clip.compressed === c.compressed)).toBe(true);
    void rig;
  });
});

describe('binding and time base', () => {
  it('sanitizeNodeName matches three.js PropertyBinding.sanitizeNodeName', () => {
    for (const name of ['mixamorig:Hips', 'Foot.L', 'a b\tc', '[x]/y', 'plain', '']) {
      expect(sanitizeNodeName(name)).toBe(THREE.PropertyBinding.sanitizeNodeName(name));
    }
  });

  it('binds by sanitized name without the loader associations, and reports unnamed joints it cannot bind', () => {
    const byRig = new Map(loaded.map((l) => [l.rig.name, l]));
    for (const rigName of ['mixamo', 'blender']) {
      const { packed, clips } = byRig.get(rigName)!;
      const c = [...clips.values()][0];
      expect(createMixerClip(c.compressed, packed.scene, { onWarning: () => {} }).unboundBones, rigName).toEqual([]);
    }
    const { packed, clips } = byRig.get('unnamed')!;
    const c = [...clips.values()][0];
    const warnings: string[] = [];
    const clip = createMixerClip(c.compressed, packed.scene, { onWarning: (w) => warnings.push(w) });
    expect(clip.unboundBones).toEqual(['node_0', 'node_1', 'node_3']);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('3 of 4 bones');
    expect(() => createMixerClip(c.compressed, packed.scene, { strict: true })).toThrow(/3 of 4 bones bind to nothing/);
    // An explicit map binds them.
    let unnamed = 0;
    packed.scene.traverse((o) => {
      if ((o as THREE.Bone).isBone && o.name === '') o.name = `joint${unnamed++}`;
    });
    const mapped = createMixerClip(c.compressed, packed.scene, {
      boneMap: { node_0: 'joint0', node_1: 'joint1', node_3: 'joint2' },
      onWarning: () => {},
    });
    expect(mapped.unboundBones).toEqual([]);
  });

  it('keeps the start time, keeps float32-noisy 37.5 Hz key times at their own times, and samples curved motion finer', () => {
    const byRig = new Map(loaded.map((l) => [l.rig.name, l]));
    const mixamo = [...byRig.get('mixamo')!.clips.values()][0];
    expect(mixamo.compressed.startTime).toBeCloseTo(0.1, 6);
    const noisy = byRig.get('noisy')!;
    const long = [...noisy.clips.values()][0];
    // Times accumulated in float32 drift off the 37.5 Hz grid by more than their rounding: kept as they are.
    expect(long.compressed.keyTimes).toBeDefined();
    expect(long.compressed.sampleRate).toBeCloseTo(37.5, 3);
    expect(noisy.warnings.filter((w) => /fall between samples/.test(w))).toEqual([]);
    // The decoder slerps like three.js, so 120° between keys needs no finer grid; a Hermite curve does.
    expect([...byRig.get('fast')!.clips.values()][0].upsampling).toBe(1);
    expect([...byRig.get('cubic')!.clips.values()][0].upsampling).toBeGreaterThan(1);
    const step = [...byRig.get('step')!.clips.values()][0].compressed;
    expect(isStepTrack(step, 0, 0)).toBe(true);
    expect(step.hasChannel(1, 1)).toBe(false); // only the root's translation is animated
  });
});
