/**
 * Compressed glTF assets through Babylon.js, in Node (NullEngine): each asset is compressed
 * with the built CLI (`bonepress compress x.glb -o y.glb`), then loaded twice by Babylon's
 * glTF loader, the original as it is and the compressed one through the
 * `BONEPRESS_animation_compression` extension. Both play through Babylon's own
 * `AnimationGroup`s; every node's world-space virtual vertices (and every morph target's
 * largest vertex displacement) must agree within the compressor's threshold at 200 random
 * times, in both modes, in crossfades and with weights. The assets: the generated rigs the
 * three.js tests use, and the Khronos sample models from ../shared (generated scene and
 * prop rigs of the same shapes when ../shared is absent).
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { NullEngine } from '@babylonjs/core/Engines/nullEngine.js';
import { type Matrix, Vector3 } from '@babylonjs/core/Maths/math.vector.js';
import type { Scene } from '@babylonjs/core/scene.js';
import type { AssetContainer } from '@babylonjs/core/assetContainer.js';
import { AnimationEvent } from '@babylonjs/core/Animations/animationEvent.js';
import { AnimationGroup } from '@babylonjs/core/Animations/animationGroup.js';
import { NodeIO } from '@gltf-transform/core';
import type { Mesh } from '@babylonjs/core/Meshes/mesh.js';
import type { TransformNode } from '@babylonjs/core/Meshes/transformNode.js';
import '@babylonjs/loaders/glTF/2.0/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import {
  BabylonClipPlayer,
  BONEPRESS_EXTENSION,
  createAnimationGroup,
  registerBonepressExtension,
  ResidentAnimation,
  type BabylonClipMode,
} from '../../src/adapters/babylon.js';
import { compress } from '../../src/compress/index.js';
import { bonepress, BonepressAnimationCompression } from '../../src/gltf-transform/index.js';
import { readGltfWithWarnings } from '../../src/readers/gltf.js';
import { CompressedClip } from '../../src/runtime/compressed-clip.js';
import { runCli } from '../cli/run-cli.js';
import { makePropRig, makeRigs, makeSceneRig } from '../utils/gltf-rigs.js';
import { loadBabylonGlb } from '../utils/babylon-load.js';
import { glbOf, splitGlb } from '../utils/glb.js';
import { sharedData } from '../utils/shared-data.js';
import { mulberry32 } from '../utils/synthetic.js';

const THRESHOLD = 1e-4; // 0.01 cm in metres, the compressor's default
const SHELL = 0.03; // 3 cm, the compressor's default shell distance for joints
// Babylon evaluates the source in float32 (keys, slerp, matrices) and, in 'decode' mode,
// slerps where the runtime nlerps between samples: allow that rounding on top.
const TOLERANCE = THRESHOLD * 1.02;
const FPS = 60;
const KHRONOS = sharedData('khronos-samples');
/** The animated Khronos sample models stored as GLB: skins, node animation, morph weights, STEP/CUBICSPLINE. */
const KHRONOS_MODELS = [
  'CesiumMan',
  'RiggedFigure',
  'RiggedSimple',
  'Fox',
  'AnimatedMorphCube',
  'AnimatedMorphSphere',
  'MorphStressTest',
  'BoxAnimated',
  'CesiumMilkTruck',
  'InterpolationTest',
  'RecursiveSkeletons',
  'BrainStem',
  'VC',
];

interface Asset {
  name: string;
  original: Uint8Array;
  compressed: Uint8Array;
  /** Per animation, the bound the CLI reports: the threshold, or its measured error where it says a clip is above it. */
  bounds: number[];
}

let engine: NullEngine;
let work: string;
let assets: Asset[];

beforeAll(async () => {
  registerBonepressExtension();
  // float64 world matrices: the comparison measures the clips, not Babylon's float32 rounding on a 100-unit character (Fox).
  engine = new NullEngine({
    renderWidth: 256,
    renderHeight: 256,
    textureSize: 256,
    deterministicLockstep: false,
    lockstepMaxSteps: 4,
    useHighPrecisionMatrix: true,
  });
  work = mkdtempSync(join(tmpdir(), 'bonepress-babylon-'));
  const sources: { name: string; glb: Uint8Array }[] = (await makeRigs()).map((r) => ({ name: r.name, glb: r.glb }));
  const khronos = (KHRONOS ? KHRONOS_MODELS : [])
    .map((m) => ({ name: m, path: join(KHRONOS ?? '', m, `${m}.glb`) }))
    .filter((m) => existsSync(m.path));
  if (khronos.length > 0) {
    sources.push(...khronos.map((m) => ({ name: m.name, glb: new Uint8Array(readFileSync(m.path)) })));
  } else {
    console.warn(
      `babylon test: ../shared/data/khronos-samples is absent or not in use; the Khronos checks run on generated scene and prop rigs`,
    );
    sources.push(
      { name: 'scene', glb: await makeSceneRig({ texture: false }) },
      { name: 'props', glb: await makePropRig() },
    );
  }
  assets = sources.map(({ name, glb }) => {
    const input = join(work, `${name}.glb`),
      output = join(work, `${name}.bp.glb`);
    writeFileSync(input, glb);
    const run = runCli(['compress', input, '-o', output, '--json', '--compress-all']);
    // Exit 1: written, with a clip above the threshold (keys off the sample grid); its own figure is then the bound.
    expect([0, 1], `${name}: ${run.stderr}`).toContain(run.code);
    const report = JSON.parse(run.stdout) as { animations: { stats: { maxError: number } }[] };
    const bounds = report.animations.map((a) => Math.max(THRESHOLD, a.stats.maxError));
    return { name, original: glb, compressed: new Uint8Array(readFileSync(output)), bounds };
  });
}, 240_000);

afterAll(() => {
  engine?.dispose();
  if (work) rmSync(work, { recursive: true, force: true });
});

const load = (glb: Uint8Array, mode?: BabylonClipMode) => loadBabylonGlb(engine, glb, mode);

/** Every node the loader made of a glTF node, by node index (the JSON pointer it records). */
function nodesByIndex(container: AssetContainer): Map<number, TransformNode> {
  const out = new Map<number, TransformNode>();
  for (const node of [...container.transformNodes, ...container.meshes]) {
    const pointers =
      (node as unknown as { _internalMetadata?: { gltf?: { pointers?: string[] } } })._internalMetadata?.gltf
        ?.pointers ?? [];
    for (const p of pointers) {
      const m = /^\/nodes\/(\d+)$/.exec(p);
      if (m && !out.has(Number(m[1]))) out.set(Number(m[1]), node as TransformNode);
    }
  }
  return out;
}

/** Largest displacement of each morph target of each mesh (its virtual-vertex distance), by mesh. */
function morphScales(container: AssetContainer): Map<Mesh, number[]> {
  const out = new Map<Mesh, number[]>();
  for (const mesh of container.meshes as Mesh[]) {
    const manager = mesh.morphTargetManager;
    const base = mesh.getVerticesData?.('position');
    if (!manager || !base) continue;
    const scales: number[] = [];
    for (let t = 0; t < manager.numTargets; t++) {
      const p = manager.getTarget(t).getPositions();
      let worst = 0;
      if (p)
        for (let i = 0; i < p.length; i += 3)
          worst = Math.max(worst, Math.hypot(p[i] - base[i], p[i + 1] - base[i + 1], p[i + 2] - base[i + 2]));
      scales.push(worst);
    }
    out.set(mesh, scales);
  }
  return out;
}

interface Pair {
  a: { scene: Scene; container: AssetContainer; nodes: Map<number, TransformNode> };
  b: { scene: Scene; container: AssetContainer; nodes: Map<number, TransformNode> };
  morph: Map<Mesh, number[]>;
}

async function loadPair(asset: Asset, mode: BabylonClipMode): Promise<Pair> {
  const a = await load(asset.original),
    b = await load(asset.compressed, mode);
  return {
    a: { ...a, nodes: nodesByIndex(a.container) },
    b: { ...b, nodes: nodesByIndex(b.container) },
    morph: morphScales(a.container),
  };
}

function disposePair(p: Pair): void {
  p.a.scene.dispose();
  p.b.scene.dispose();
}

const depth = (n: TransformNode): number => {
  let d = 0;
  for (let p = n.parent; p; p = p.parent) d++;
  return d;
};

/** Largest world-space virtual-vertex distance over every node, and morph-weight displacement over every target. */
function worldError(p: Pair): number {
  const update = (nodes: Map<number, TransformNode>) =>
    [...nodes.values()].sort((x, y) => depth(x) - depth(y)).forEach((n) => n.computeWorldMatrix(true));
  update(p.a.nodes);
  update(p.b.nodes);
  expect(p.b.nodes.size).toBe(p.a.nodes.size);
  let worst = 0;
  const va = new Vector3(),
    vb = new Vector3(),
    axis = new Vector3();
  for (const [j, na] of p.a.nodes) {
    const nb = p.b.nodes.get(j)!;
    const ma: Matrix = na.getWorldMatrix(),
      mb: Matrix = nb.getWorldMatrix();
    for (let k = 0; k < 3; k++) {
      axis.set(k === 0 ? SHELL : 0, k === 1 ? SHELL : 0, k === 2 ? SHELL : 0);
      Vector3.TransformCoordinatesToRef(axis, ma, va);
      Vector3.TransformCoordinatesToRef(axis, mb, vb);
      worst = Math.max(worst, Vector3.Distance(va, vb));
    }
  }
  const meshesB = p.b.container.meshes as Mesh[];
  (p.a.container.meshes as Mesh[]).forEach((mesh, i) => {
    const scales = p.morph.get(mesh);
    if (!scales) return;
    const other = meshesB[i].morphTargetManager!;
    scales.forEach((s, t) => {
      worst = Math.max(
        worst,
        Math.abs(mesh.morphTargetManager!.getTarget(t).influence - other.getTarget(t).influence) * s,
      );
    });
  });
  return worst;
}

function groupsOf(p: Pair): [AnimationGroup, AnimationGroup][] {
  const a = p.a.container.animationGroups,
    b = p.b.container.animationGroups;
  expect(b.map((g) => g.name)).toEqual(a.map((g) => g.name));
  return a.map((g, i) => [g, b[i]]);
}

describe('Babylon glTF loader with the BONEPRESS_animation_compression extension', () => {
  for (const mode of ['decode', 'resident'] as const) {
    it(`${mode}: every animation keeps Babylon's time base and every node stays within the threshold at 200 random times`, async () => {
      let checked = 0,
        morphAssets = 0;
      for (const asset of assets) {
        const pair = await loadPair(asset, mode);
        if (pair.morph.size > 0) morphAssets++;
        for (const [i, [ga, gb]] of groupsOf(pair).entries()) {
          const where = `${asset.name} ${ga.name}`;
          expect(gb.from, where).toBe(ga.from);
          expect(gb.to, where).toBeCloseTo(ga.to, 3);
          // Every animation of a compressed group is the extension's (resident) or a plain keyframe one (decode).
          expect(
            gb.targetedAnimations.some((t) => t.animation instanceof ResidentAnimation),
            where,
          ).toBe(mode === 'resident');
          ga.start(true);
          gb.start(true);
          const random = mulberry32(asset.name.length * 1000 + ga.name.length);
          const period = (ga.to - ga.from) / FPS;
          let worst = 0;
          for (let i = 0; i < 200; i++) {
            // Up to two periods: Babylon loops the range [from, to].
            const t = random() * 2 * period;
            const frame = ga.from + (period > 0 ? (t % period) * FPS : 0);
            ga.goToFrame(frame);
            gb.goToFrame(frame);
            worst = Math.max(worst, worldError(pair));
          }
          expect(worst, where).toBeLessThanOrEqual((TOLERANCE * asset.bounds[i]) / THRESHOLD);
          ga.stop();
          gb.stop();
          checked++;
        }
        disposePair(pair);
      }
      expect(checked).toBeGreaterThan(assets.length);
      expect(morphAssets).toBeGreaterThan(0); // morph weights are among what is compared
    }, 240_000);
  }

  it('crossfades and weights (Babylon blending between two groups) give the same pose as the original groups, in both modes', async () => {
    for (const mode of ['decode', 'resident'] as const) {
      let checked = 0;
      for (const asset of assets) {
        const pair = await loadPair(asset, mode);
        const groups = groupsOf(pair);
        if (groups.length < 2) {
          disposePair(pair);
          continue;
        }
        const [[a1, b1], [a2, b2]] = groups;
        for (const [x, y] of [
          [a1, a2],
          [b1, b2],
        ]) {
          x.start(true, 1);
          y.start(true, 0.7);
          x.setWeightForAllAnimatables(1);
          y.setWeightForAllAnimatables(0);
        }
        for (const s of [pair.a.scene, pair.b.scene]) s.useConstantAnimationDeltaTime = true;
        let worst = 0;
        for (let step = 0; step < 90; step++) {
          // A crossfade over 48 frames, then a fixed blend by weight.
          const w = step < 48 ? step / 48 : 0.65;
          a1.setWeightForAllAnimatables(1 - w);
          b1.setWeightForAllAnimatables(1 - w);
          a2.setWeightForAllAnimatables(w);
          b2.setWeightForAllAnimatables(w);
          pair.a.scene.animate();
          pair.b.scene.animate();
          worst = Math.max(worst, worldError(pair));
        }
        expect(worst, `${mode} ${asset.name}`).toBeLessThanOrEqual((TOLERANCE * Math.max(...asset.bounds)) / THRESHOLD);
        disposePair(pair);
        checked++;
      }
      expect(checked).toBeGreaterThan(2);
    }
  }, 240_000);

  it('an animation stored additive loads as an additive group and plays over a base within the threshold of MakeAnimationAdditive of the original, in both modes', async () => {
    const io = new NodeIO().registerExtensions([BonepressAnimationCompression]);
    let checked = 0;
    for (const rig of (await makeRigs()).filter((r) => r.name === 'mixamo' || r.name === 'blender')) {
      const doc = await io.readBinary(rig.glb);
      // The first animation additive against its frame 0, measured over the second played alongside.
      await doc.transform(bonepress({ additive: { animations: [0], base: { animation: 1 } }, onWarning: () => {} }));
      const asset = { name: rig.name, original: rig.glb, compressed: await io.writeBinary(doc), bounds: [] };
      for (const mode of ['decode', 'resident'] as const) {
        const pair = await loadPair(asset, mode);
        const [[a1, b1], [a2]] = groupsOf(pair);
        expect(b1.isAdditive, `${rig.name} ${mode}`).toBe(true);
        expect(b1.weight).toBe(1);
        // Babylon's own additive conversion of the original, at the time of the clip's frame 0.
        const reference = (await readGltfWithWarnings(rig.glb, `${rig.name}.glb`)).clips[0].startTime ?? 0;
        AnimationGroup.MakeAnimationAdditive(a1, { referenceFrame: reference * FPS });
        a1.isAdditive = true;
        a1.weight = 1;
        a2.weight = 1;
        // The same uncompressed base on both sides: the original's group, and its animations bound to the other scene's nodes.
        const indexOf = new Map([...pair.a.nodes].map(([i, n]) => [n as unknown, i]));
        const base = new AnimationGroup('base', pair.b.scene);
        for (const { animation, target } of a2.targetedAnimations)
          base.addTargetedAnimation(animation, pair.b.nodes.get(indexOf.get(target)!)!);
        base.normalize(0);
        base.weight = 1;
        for (const g of [a2, base, a1, b1]) g.start(true);
        for (const s of [pair.a.scene, pair.b.scene]) s.useConstantAnimationDeltaTime = true;
        let worst = 0;
        for (let step = 0; step < 200; step++) {
          pair.a.scene.animate();
          pair.b.scene.animate();
          worst = Math.max(worst, worldError(pair));
        }
        expect(worst, `${rig.name} ${mode}`).toBeLessThanOrEqual(TOLERANCE);
        expect(worst, `${rig.name} ${mode}: the layer moves the character`).toBeGreaterThan(0);
        disposePair(pair);
        checked++;
      }
    }
    expect(checked).toBe(4);
  }, 120_000);

  it('the direct player refuses a clip stored additive', async () => {
    const asset = assets.find((a) => a.name === 'mixamo')!;
    const [source] = (await readGltfWithWarnings(asset.original, 'mixamo.glb')).clips;
    const clip = CompressedClip.open(compress(source, { additive: {} }).bytes);
    const { scene, container } = await load(asset.original);
    expect(() => new BabylonClipPlayer(clip, container.rootNodes[0])).toThrow(
      /clip "Run" is stored additive: its poses are deltas for a base pose/,
    );
    scene.dispose();
  });

  it('resident groups decode one pose per group per frame, fire Babylon animation events and run the group observables', async () => {
    const asset = assets.find((a) => a.name === 'mixamo')!;
    const { scene, container } = await load(asset.compressed, 'resident');
    const group = container.animationGroups[0];
    const animation = group.targetedAnimations[0].animation as ResidentAnimation;
    const clip = (animation as unknown as { source: { sampler: { sample: (...args: unknown[]) => unknown } } }).source
      .sampler;
    let decodes = 0;
    const sample = clip.sample.bind(clip);
    clip.sample = (...args: unknown[]) => {
      decodes++;
      return sample(...args);
    };
    expect(group.targetedAnimations.length).toBeGreaterThan(3);
    let ended = 0,
      fired = 0;
    group.onAnimationGroupLoopObservable.add(() => ended++);
    animation.addEvent(new AnimationEvent(30, () => fired++));
    scene.useConstantAnimationDeltaTime = true;
    group.start(true);
    decodes = 0;
    for (let i = 0; i < 10; i++) scene.animate();
    expect(decodes).toBe(10);
    for (let i = 0; i < 200; i++) scene.animate();
    expect(ended).toBeGreaterThan(0); // the 2 s clip looped within 210 frames of 16 ms
    expect(fired).toBeGreaterThan(0); // an AnimationEvent on a resident animation fires at its frame
    scene.dispose();
  }, 60_000);

  it('refuses a damaged clip, naming the animation and the problem', async () => {
    const { json, bin } = splitGlb(assets.find((a) => a.name === 'fast')!.compressed);
    const ext = (json.animations as { extensions: Record<string, { bufferView: number }> }[])[0].extensions[
      BONEPRESS_EXTENSION
    ];
    const view = (json.bufferViews as { byteOffset?: number; byteLength: number }[])[ext.bufferView];
    bin[(view.byteOffset ?? 0) + view.byteLength - 1] ^= 0x40;
    await expect(load(glbOf(json, bin))).rejects.toThrow(
      /BONEPRESS_animation_compression: \/animations\/0 \("Punch"\): checksum mismatch/,
    );
  }, 60_000);
});

describe('createAnimationGroup and BabylonClipPlayer, without the extension', () => {
  it('a loose .bpk clip plays through createAnimationGroup and the direct player as through the extension', async () => {
    const asset = assets.find((a) => a.name === 'mixamo')!;
    const { clips } = await readGltfWithWarnings(asset.original, 'mixamo.glb');
    const compressed = CompressedClip.open(compress(clips[0]).bytes);
    const viaExtension = await loadPair(asset, 'resident');
    const [ga, gb] = groupsOf(viaExtension)[0];
    void ga;
    // The original scene, driven by a group made from the loose clip, against the extension's group.
    const target = viaExtension.a;
    for (const g of target.container.animationGroups) g.dispose();
    const root = target.container.rootNodes[0];
    const nodes = Array.from(compressed.nodeIndices!, (j) => target.nodes.get(j));
    const group = createAnimationGroup(compressed, nodes, target.scene, { mode: 'resident' });
    group.start(true);
    gb.start(true);
    const player = new BabylonClipPlayer(compressed, root);
    expect(player.unboundBones).toEqual([]);
    let worstGroup = 0,
      worstPlayer = 0;
    for (const t of [0, 0.05, 0.37, 1.1, 2.05, 3.3]) {
      const frame = (t % (gb.to / FPS)) * FPS;
      group.goToFrame(frame);
      gb.goToFrame(frame);
      worstGroup = Math.max(worstGroup, worldError(viaExtension));
      group.stop();
      player.setTime(t);
      worstPlayer = Math.max(worstPlayer, worldError(viaExtension));
      group.start(true);
    }
    // The same decoder at the same times: equal up to float32 matrix rounding.
    expect(worstGroup).toBeLessThan(1e-6);
    expect(worstPlayer).toBeLessThan(1e-6);
    disposePair(viaExtension);
  }, 60_000);
});
