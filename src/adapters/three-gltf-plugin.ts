/**
 * A three.js `GLTFLoader` plugin for `BONEPRESS_animation_compression` assets
 * (docs/gltf-extension.md): each compressed animation loads as a mixer-native
 * {@link CompressedAnimationClip}, resident compressed and bound to the loaded nodes through
 * the file's bone table and the animation's node and weight lists (morph weights play as
 * `morphTargetInfluences`). Fallback channels on what the clip holds are discarded; the
 * animation's other channels load as usual and play in the same clip. An additive animation
 * (`additive: true`) loads with `AdditiveAnimationBlendMode`, to play over a base action.
 */
import type { AnimationClip, Object3D } from 'three';
import type { GLTFLoaderPlugin, GLTFParser } from 'three/examples/jsm/loaders/GLTFLoader.js';

import { FormatError, type FormatErrorCode } from '../runtime/errors.js';
import {
  BONEPRESS_EXTENSION,
  openExtensionClip,
  otherChannels,
  readExtensionBones,
  type ChannelDef,
  type ExtensionJson,
} from './gltf-extension-def.js';
import { mixerClipOf, type MixerClipOptions } from './three-mixer.js';

export { BONEPRESS_EXTENSION } from './gltf-extension-def.js';

/**
 * Options of {@link BonepressGLTFLoaderPlugin}. Every bone binds to the object loaded for its
 * node, so there are no unbound bones to warn about (createMixerClip's `onWarning`, `strict`).
 */
export interface BonepressGLTFLoaderPluginOptions extends Pick<MixerClipOptions, 'translationScale'> {}

interface AnimationDef {
  name?: string;
  channels?: ChannelDef[];
  extensions?: Record<string, unknown>;
}
interface AnimationExtensionDef {
  skeleton?: unknown;
  bufferView?: unknown;
  nodes?: unknown;
  weights?: unknown;
  additive?: unknown;
}

/**
 * `loader.register((parser) => new BonepressGLTFLoaderPlugin(parser))`: `gltf.animations`
 * then hold {@link CompressedAnimationClip}s for the compressed animations (play them with
 * `mixer.clipAction(clip)`, on `gltf.scene` as loaded). A malformed extension or `.bpk`
 * rejects the load with a {@link FormatError} naming the animation; so does (code
 * UNSUPPORTED_PLATFORM) a page where the WebAssembly kernel cannot run, unless the app
 * imports `bonepress/runtime`, which installs the TypeScript decoder (docs/gltf-extension.md).
 */
export class BonepressGLTFLoaderPlugin implements GLTFLoaderPlugin {
  readonly name = BONEPRESS_EXTENSION;
  // `declare`d: the constructor assigns each, so the build emits no list of them.
  declare private readonly parser: GLTFParser;
  declare private readonly options: BonepressGLTFLoaderPluginOptions;

  constructor(parser: GLTFParser, options: BonepressGLTFLoaderPluginOptions = {}) {
    this.parser = parser;
    this.options = options;
  }

  /** GLTFLoader's hook (absent from the GLTFLoaderPlugin type): null leaves the animation to the loader. */
  loadAnimation(animationIndex: number): Promise<AnimationClip> | null {
    const def = (this.parser.json.animations as AnimationDef[])[animationIndex];
    const ext = def.extensions?.[BONEPRESS_EXTENSION] as AnimationExtensionDef | undefined;
    return ext ? this.#load(animationIndex, def, ext) : null;
  }

  async #load(index: number, def: AnimationDef, ext: AnimationExtensionDef): Promise<AnimationClip> {
    const name = def.name || `animation_${index}`;
    const fail = (problem: string, code: FormatErrorCode = 'BAD_ARGUMENT'): never => {
      throw new FormatError(code, `${BONEPRESS_EXTENSION}: animation ${index} ("${name}"): ${problem}`);
    };
    const parser = this.parser;
    const node = (j: number) => parser.getDependency('node', j) as Promise<Object3D>;
    const bones = readExtensionBones(parser.json as ExtensionJson, ext as Record<string, unknown>, fail);
    const bytes = (await parser.getDependency('bufferView', bones.bufferView)) as ArrayBuffer;
    const compressed = openExtensionClip(bytes, bones, fail);
    const nodes = await Promise.all(bones.nodeIndices.map(node));
    const morphWeights = await Promise.all(
      bones.weights.map(async (w) => {
        const objects: Object3D[] = [];
        // GLTFLoader makes a mesh, or a group of meshes (one per primitive), of a node.
        (await node(w.node)).traverse((o) => {
          if ((o as { morphTargetInfluences?: number[] }).morphTargetInfluences) objects.push(o);
        });
        return { ...w, objects };
      }),
    );
    // Each transform bone drives the object made from its node.
    const clip = mixerClipOf(compressed, nodes, morphWeights, name, this.options.translationScale);
    // The channels the clip does not replace, and the animation's extras (as userData), as the
    // loader itself makes them. Its own loadAnimation reads the channel list synchronously
    // before it awaits anything, so the list is swapped only for that call.
    const all = def.channels ?? [];
    const kept = otherChannels(all, bones, fail);
    def.channels = kept;
    let pending: Promise<AnimationClip>;
    try {
      pending = (parser as unknown as { loadAnimation(i: number): Promise<AnimationClip> }).loadAnimation(index);
    } finally {
      def.channels = all;
    }
    const loaded = await pending;
    clip.tracks.push(...loaded.tracks);
    clip.userData = loaded.userData;
    return clip;
  }
}
