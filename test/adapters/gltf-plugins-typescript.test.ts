/**
 * The glTF plugins (three.js's GLTFLoader plugin, Babylon.js's loader extension) where the
 * WebAssembly kernel does not run (no WebAssembly SIMD, or a page policy refusing it). The
 * plugins import the clip without the TypeScript decoder (src/runtime/clip.ts), so a page
 * downloads it only by importing `bonepress/runtime`. In a module graph of their own (no
 * compressed-clip.ts, which installs the decoder) and with WebAssembly.validate refusing the
 * kernel, a load fails with a FormatError naming the animation, the reason and the remedy;
 * once `bonepress/runtime` is imported, the same assets load with clips that decode in
 * TypeScript and play bit for bit as where the kernel decodes.
 */
import { NullEngine } from '@babylonjs/core/Engines/nullEngine.js';
import type { AssetContainer } from '@babylonjs/core/assetContainer.js';
import type { Mesh } from '@babylonjs/core/Meshes/mesh.js';
import '@babylonjs/loaders/glTF/2.0/index.js';
import { unregisterGLTFExtension } from '@babylonjs/loaders/glTF/2.0/glTFLoaderExtensionRegistry.js';
import { NodeIO } from '@gltf-transform/core';
import * as THREE from 'three';
import { GLTFLoader, type GLTF } from 'three/examples/jsm/loaders/GLTFLoader.js';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

import { BONEPRESS_EXTENSION, registerBonepressExtension, type BabylonClipMode } from '../../src/adapters/babylon.js';
import { BonepressGLTFLoaderPlugin } from '../../src/adapters/three.js';
import { bonepress, BonepressAnimationCompression } from '../../src/gltf-transform/index.js';
import { loadBabylonGlb } from '../utils/babylon-load.js';
import { makeRigs } from '../utils/gltf-rigs.js';

type Plugin = typeof BonepressGLTFLoaderPlugin;
type Register = typeof registerBonepressExtension;

async function loadThree(glb: Uint8Array, plugin: Plugin): Promise<GLTF> {
  const loader = new GLTFLoader();
  loader.register((parser) => new plugin(parser));
  const buffer = glb.buffer.slice(glb.byteOffset, glb.byteOffset + glb.byteLength) as ArrayBuffer;
  return new Promise((resolve, reject) => loader.parse(buffer, '', resolve, reject));
}

/** Every object's local TRS at each of `times`, playing `clip` on `gltf.scene`. */
function playThree(gltf: GLTF, clip: THREE.AnimationClip, times: number[]): number[][] {
  const mixer = new THREE.AnimationMixer(gltf.scene);
  mixer.clipAction(clip).play();
  return times.map((t) => {
    mixer.setTime(t);
    const out: number[] = [];
    gltf.scene.traverse((o) => out.push(...o.quaternion.toArray(), ...o.position.toArray(), ...o.scale.toArray()));
    return out;
  });
}

/** The decoder of a plugin's compressed clip, undefined for a clip the loader made itself. */
const decoderOf = (clip: THREE.AnimationClip): string | undefined =>
  (clip as { compressed?: { decoder: string } }).compressed?.decoder;

const TIMES = [0, 0.013, 0.1, 0.37, 0.5, 0.99, 1.25, 1.5, 2.05, 2.6, 3.3];
const FRAMES = TIMES.map((t) => t * 60);

/** The error of a load where the kernel does not run and the TypeScript decoder is not installed (Babylon's loader prefixes its own words). */
const NOT_INSTALLED =
  /BONEPRESS_animation_compression: .*\("[^"]+"\): the WebAssembly kernel cannot run here and the TypeScript decoder is not installed: importing 'bonepress\/runtime' once in the app installs it$/;

const assets: Uint8Array[] = [];
let engine: NullEngine;

beforeAll(async () => {
  const io = new NodeIO().registerExtensions([BonepressAnimationCompression]);
  for (const rig of (await makeRigs()).filter((r) => r.name !== 'noisy')) {
    const doc = await io.readBinary(rig.glb);
    await doc.transform(bonepress({ onWarning: () => {} }));
    assets.push(await io.writeBinary(doc));
  }
  engine = new NullEngine();
}, 120_000);

afterAll(() => {
  vi.restoreAllMocks();
  engine?.dispose();
});

const loadBabylon = (glb: Uint8Array, mode: BabylonClipMode) => loadBabylonGlb(engine, glb, mode);

/** Every node's local TRS and every morph influence at each of `FRAMES`, playing each group of `container` alone. */
function playBabylon({ container }: { container: AssetContainer }): number[][] {
  const out: number[][] = [];
  for (const group of container.animationGroups) {
    for (const g of container.animationGroups) g.stop();
    group.start(false);
    for (const frame of FRAMES) {
      group.goToFrame(frame);
      const pose: number[] = [];
      for (const node of [...container.transformNodes, ...container.meshes]) {
        pose.push(...(node.rotationQuaternion?.asArray() ?? []), ...node.position.asArray(), ...node.scaling.asArray());
        const manager = (node as Mesh).morphTargetManager;
        for (let t = 0; t < (manager?.numTargets ?? 0); t++) pose.push(manager!.getTarget(t).influence);
      }
      out.push(pose);
    }
  }
  return out;
}

describe('the glTF plugins where the WebAssembly kernel does not run', () => {
  it('refuse to load without the TypeScript decoder, naming the animation, the reason and the remedy; with bonepress/runtime imported they play as the kernel does', async () => {
    // Where the kernel decodes, the references: three.js's poses and Babylon's, in both modes.
    const three = await Promise.all(assets.map((glb) => loadThree(glb, BonepressGLTFLoaderPlugin)));
    const decoders = three.map((g) => g.animations.map(decoderOf));
    expect(decoders.flat().filter((d) => d === 'wasm').length).toBeGreaterThan(0);
    registerBonepressExtension();
    const babylon = new Map<string, number[][]>();
    for (const [i, glb] of assets.entries())
      for (const mode of ['decode', 'resident'] as const) {
        const loaded = await loadBabylon(glb, mode);
        const poses = playBabylon(loaded);
        if (decoders[i].includes('wasm'))
          expect(new Set(poses.map(String)).size, `asset ${i} ${mode}`).toBeGreaterThan(1);
        babylon.set(`${i} ${mode}`, poses);
        loaded.scene.dispose();
      }

    // A fresh module graph, where the kernel's module is refused and no module has installed the TypeScript decoder.
    vi.resetModules();
    vi.spyOn(WebAssembly, 'validate').mockReturnValue(false);
    const fresh = (await import('../../src/adapters/three-gltf-plugin.js')).BonepressGLTFLoaderPlugin;
    const register: Register = (await import('../../src/adapters/babylon-gltf-extension.js'))
      .registerBonepressExtension;
    unregisterGLTFExtension(BONEPRESS_EXTENSION);
    register();
    const compressed = assets.filter((_, i) => decoders[i].includes('wasm'));
    expect(compressed.length).toBeGreaterThan(1);
    for (const glb of compressed) {
      const three = loadThree(glb, fresh);
      await expect(three).rejects.toThrow(NOT_INSTALLED);
      await expect(three).rejects.toMatchObject({ name: 'FormatError', code: 'UNSUPPORTED_PLATFORM' });
      const babylon = loadBabylon(glb, 'decode');
      await expect(babylon).rejects.toThrow(NOT_INSTALLED);
      await expect(babylon).rejects.toMatchObject({
        innerError: { name: 'FormatError', code: 'UNSUPPORTED_PLATFORM' },
      });
    }

    // The remedy: importing bonepress/runtime installs the decoder for the plugins' clips.
    await import('../../src/runtime/index.js');
    for (const [i, glb] of assets.entries()) {
      const gltf = await loadThree(glb, fresh);
      expect(gltf.animations.map(decoderOf)).toEqual(decoders[i].map((d) => d && 'typescript'));
      for (const [a, clip] of gltf.animations.entries())
        expect(playThree(gltf, clip, TIMES)).toEqual(playThree(three[i], three[i].animations[a], TIMES));
      for (const mode of ['decode', 'resident'] as const) {
        const loaded = await loadBabylon(glb, mode);
        expect(playBabylon(loaded), `asset ${i} ${mode}`).toEqual(babylon.get(`${i} ${mode}`));
        loaded.scene.dispose();
      }
    }
  }, 120_000);
});
