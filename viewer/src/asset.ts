/**
 * A glTF asset that carries BONEPRESS_animation_compression, shown whole: three.js's
 * GLTFLoader with `BonepressGLTFLoaderPlugin` (`bonepress/three`) loads the scene (skinned
 * meshes included) and the animations as mixer-native compressed clips, and an
 * `AnimationMixer` plays them on the loaded scene, as an app would.
 */
import { rawSizeBytes } from 'bonepress';
import { animationBytes, type AnimationBytes } from 'bonepress/gltf-transform';
import { BONEPRESS_EXTENSION, BonepressGLTFLoaderPlugin, CompressedAnimationClip } from 'bonepress/three';
import * as THREE from 'three';
import { GLTFLoader } from 'three/addons/loaders/GLTFLoader.js';

import type { GLTF as GltfJson } from '@gltf-transform/core';

const GLB_MAGIC = 0x46546c67; // 'glTF'
const CHUNK_JSON = 0x4e4f534a; // 'JSON'

/**
 * The JSON of a `.glb` (first chunk) or `.gltf`, or undefined when the bytes are neither
 * (the worker's reader then says what is wrong).
 */
export function gltfJson(bytes: Uint8Array): GltfJson.IGLTF | undefined {
  try {
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    if (bytes.byteLength >= 20 && view.getUint32(0, true) === GLB_MAGIC) {
      const length = view.getUint32(12, true);
      if (view.getUint32(16, true) !== CHUNK_JSON || 20 + length > bytes.byteLength) return undefined;
      return JSON.parse(new TextDecoder().decode(bytes.subarray(20, 20 + length))) as GltfJson.IGLTF;
    }
    return JSON.parse(new TextDecoder().decode(bytes)) as GltfJson.IGLTF;
  } catch {
    return undefined;
  }
}

/** True when the asset uses the extension, so it is shown whole rather than compressed again. */
export function carriesBonepress(json: GltfJson.IGLTF | undefined): boolean {
  return json?.extensionsUsed?.includes(BONEPRESS_EXTENSION) === true;
}

/** Sizes of a loaded asset, and of its source when the viewer compressed it. */
export interface AssetSizes {
  fileBytes: number;
  animation: AnimationBytes;
  /** 40 bytes per bone per sample of every compressed clip (float32 rotation, translation, scale). */
  rawBytes: number;
  source?: { fileBytes: number; animation: AnimationBytes };
}

/** A loaded asset and its mixer. */
export class AssetPlayer {
  readonly mixer: THREE.AnimationMixer;
  private action: THREE.AnimationAction | undefined;
  private clipIndex = 0;

  private constructor(
    readonly fileName: string,
    readonly root: THREE.Object3D,
    readonly clips: THREE.AnimationClip[],
    readonly sizes: AssetSizes,
    /** Skinned meshes in the scene. */
    readonly skinnedMeshes: THREE.SkinnedMesh[],
    /** Meshes of any kind in the scene. */
    readonly meshCount: number,
  ) {
    this.mixer = new THREE.AnimationMixer(root);
    if (clips.length > 0) this.select(0);
  }

  /** Parses `bytes` (GLB, or glTF with embedded buffers) with the plugin registered. */
  static async load(fileName: string, bytes: Uint8Array, source?: AssetSizes['source']): Promise<AssetPlayer> {
    const json = gltfJson(bytes);
    if (!json) throw new Error(`${fileName}: not a glTF asset`);
    const loader = new GLTFLoader();
    loader.register((parser) => new BonepressGLTFLoaderPlugin(parser));
    const copy = bytes.slice().buffer;
    const gltf = await loader.parseAsync(copy, '');
    const skinned: THREE.SkinnedMesh[] = [];
    let meshes = 0;
    gltf.scene.traverse((o) => {
      if ((o as THREE.Mesh).isMesh) meshes++;
      if ((o as THREE.SkinnedMesh).isSkinnedMesh) {
        skinned.push(o as THREE.SkinnedMesh);
        // The skinned box moves far from its bind-pose bounds; never cull it.
        o.frustumCulled = false;
      }
    });
    let rawBytes = 0;
    for (const clip of gltf.animations) {
      if (clip instanceof CompressedAnimationClip)
        rawBytes += rawSizeBytes(clip.compressed.boneCount, clip.compressed.sampleCount);
    }
    const sizes: AssetSizes = {
      fileBytes: bytes.byteLength,
      animation: animationBytes(json),
      rawBytes,
      ...(source ? { source } : {}),
    };
    return new AssetPlayer(fileName, gltf.scene, gltf.animations, sizes, skinned, meshes);
  }

  /** The clip being played. */
  get clip(): THREE.AnimationClip | undefined {
    return this.clips[this.clipIndex];
  }

  /** Number of clips that the plugin loaded compressed. */
  get compressedClipCount(): number {
    return this.clips.filter((c) => c instanceof CompressedAnimationClip).length;
  }

  /** Plays clip `index` alone. */
  select(index: number): void {
    this.action?.stop();
    this.clipIndex = Math.min(Math.max(0, index), this.clips.length - 1);
    const clip = this.clips[this.clipIndex];
    if (!clip) return;
    this.action = this.mixer.clipAction(clip).reset().setLoop(THREE.LoopRepeat, Infinity).play();
  }

  /** Poses the scene at `seconds` on the current clip's timeline. */
  setTime(seconds: number): void {
    this.mixer.setTime(seconds);
    this.root.updateMatrixWorld(true);
  }

  /** World-space bounds of the skinned meshes (or the whole scene) in the current pose. */
  bounds(out: THREE.Box3): THREE.Box3 {
    out.makeEmpty();
    if (this.skinnedMeshes.length === 0) return out.setFromObject(this.root);
    const box = new THREE.Box3();
    for (const mesh of this.skinnedMeshes) {
      mesh.computeBoundingBox();
      box.copy(mesh.boundingBox!).applyMatrix4(mesh.matrixWorld);
      out.union(box);
    }
    return out;
  }

  /**
   * Every bounds of the current clip over its duration (12 poses), for framing; the largest
   * extent of one of those poses along each axis into `poseExtent`.
   */
  clipBounds(poseExtent = new THREE.Vector3()): THREE.Box3 {
    const all = new THREE.Box3();
    const one = new THREE.Box3();
    const size = new THREE.Vector3();
    const d = this.clip?.duration ?? 0;
    poseExtent.set(0, 0, 0);
    for (let i = 0; i <= 12; i++) {
      this.setTime((d * i) / 12);
      all.union(this.bounds(one));
      poseExtent.max(one.getSize(size));
    }
    return all;
  }

  dispose(): void {
    this.mixer.stopAllAction();
    this.root.removeFromParent();
    this.root.traverse((o) => {
      const mesh = o as THREE.Mesh;
      if (!mesh.isMesh) return;
      mesh.geometry.dispose();
      for (const m of Array.isArray(mesh.material) ? mesh.material : [mesh.material]) m.dispose();
    });
  }
}
