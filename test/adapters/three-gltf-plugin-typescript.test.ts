/**
 * The three.js GLTFLoader plugin where the engine has no WebAssembly SIMD: the plugin
 * imports the clip without the TypeScript decoder (src/runtime/clip.ts) and loads that
 * decoder through import() for a clip the kernel cannot decode. In a module graph of its
 * own (no compressed-clip.ts, which installs the decoder statically) and with
 * WebAssembly.validate refusing the kernel, the plugin's clips decode in TypeScript and play
 * bit for bit as the same asset loaded where the kernel decodes.
 */
import { NodeIO } from '@gltf-transform/core';
import * as THREE from 'three';
import { GLTFLoader, type GLTF } from 'three/examples/jsm/loaders/GLTFLoader.js';
import { afterAll, describe, expect, it, vi } from 'vitest';

import { BonepressGLTFLoaderPlugin } from '../../src/adapters/three.js';
import { bonepress, BonepressAnimationCompression } from '../../src/gltf-transform/index.js';
import { makeRigs } from '../utils/gltf-rigs.js';

type Plugin = typeof BonepressGLTFLoaderPlugin;

async function load(glb: Uint8Array, plugin: Plugin): Promise<GLTF> {
  const loader = new GLTFLoader();
  loader.register((parser) => new plugin(parser));
  const buffer = glb.buffer.slice(glb.byteOffset, glb.byteOffset + glb.byteLength) as ArrayBuffer;
  return new Promise((resolve, reject) => loader.parse(buffer, '', resolve, reject));
}

/** Every object's local TRS at each of `times`, playing `clip` on `gltf.scene`. */
function play(gltf: GLTF, clip: THREE.AnimationClip, times: number[]): number[][] {
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

describe('BonepressGLTFLoaderPlugin without WebAssembly SIMD', () => {
  afterAll(() => vi.restoreAllMocks());

  it('loads the TypeScript decoder for its clips and plays them as the kernel does', async () => {
    const io = new NodeIO().registerExtensions([BonepressAnimationCompression]);
    const assets: Uint8Array[] = [];
    for (const rig of (await makeRigs()).filter((r) => r.name !== 'noisy')) {
      const doc = await io.readBinary(rig.glb);
      await doc.transform(bonepress({ onWarning: () => {} }));
      assets.push(await io.writeBinary(doc));
    }
    const kernel = await Promise.all(assets.map((glb) => load(glb, BonepressGLTFLoaderPlugin)));
    const decoders = kernel.map((g) => g.animations.map(decoderOf));
    expect(decoders.flat().filter((d) => d === 'wasm').length).toBeGreaterThan(0);

    // A fresh module graph, where the kernel's module is refused and no module has installed the TypeScript decoder.
    vi.resetModules();
    vi.spyOn(WebAssembly, 'validate').mockReturnValue(false);
    const fresh = (await import('../../src/adapters/three-gltf-plugin.js')).BonepressGLTFLoaderPlugin;
    for (const [i, glb] of assets.entries()) {
      const gltf = await load(glb, fresh);
      expect(gltf.animations.map(decoderOf)).toEqual(decoders[i].map((d) => d && 'typescript'));
      for (const [a, clip] of gltf.animations.entries())
        expect(play(gltf, clip, TIMES)).toEqual(play(kernel[i], kernel[i].animations[a], TIMES));
    }
  }, 120_000);
});
