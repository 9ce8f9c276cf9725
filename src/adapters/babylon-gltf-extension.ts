/**
 * A Babylon.js glTF 2.0 loader extension for `BONEPRESS_animation_compression` assets
 * (docs/gltf-extension.md): each compressed animation loads as an `AnimationGroup` (see
 * babylon-animation-group.ts) bound to the nodes the loader made of the file's bone table
 * and the animation's node and weight lists, by glTF node index. Fallback channels on what
 * the clip holds are discarded; the animation's other channels load as the loader would
 * load them, into the same group. An additive animation (`additive: true`) loads as an
 * additive group (`isAdditive`, weight 1), to play over a weighted base group. Where the
 * WebAssembly kernel cannot run, a load fails (FormatError UNSUPPORTED_PLATFORM) unless the
 * app imports `bonepress/runtime`, which installs the TypeScript decoder.
 */
import { AnimationGroup } from '@babylonjs/core/Animations/animationGroup.js';
import type { Nullable } from '@babylonjs/core/types.js';
import type { MorphTarget } from '@babylonjs/core/Morph/morphTarget.js';
import type { TransformNode } from '@babylonjs/core/Meshes/transformNode.js';
import type { GLTFLoader } from '@babylonjs/loaders/glTF/2.0/glTFLoader.js';
import type { IGLTFLoaderExtension } from '@babylonjs/loaders/glTF/2.0/glTFLoaderExtension.js';
import type { IAnimation, INode } from '@babylonjs/loaders/glTF/2.0/glTFLoaderInterfaces.js';
import { registerGLTFExtension } from '@babylonjs/loaders/glTF/2.0/glTFLoaderExtensionRegistry.js';

import { FORMAT_ERROR, FormatError, type FormatErrorCode } from '../runtime/errors.js';
import {
  createAnimationGroup,
  type AnimationGroupOptions,
  type BabylonMorphWeights,
} from './babylon-animation-group.js';
import {
  BONEPRESS_EXTENSION,
  openExtensionClip,
  otherChannels,
  readExtensionBones,
  type ExtensionBones,
  type ExtensionJson,
} from './gltf-extension-def.js';

export { BONEPRESS_EXTENSION } from './gltf-extension-def.js';

/**
 * Options of the extension: given to {@link registerBonepressExtension}, and per load in the
 * glTF loader's `extensionOptions[BONEPRESS_EXTENSION]` (which win).
 */
export interface BonepressBabylonOptions extends Pick<AnimationGroupOptions, 'mode' | 'translationScale'> {}

/**
 * The loader extension: register it once with {@link registerBonepressExtension}; every
 * glTF load that uses the extension then makes one of these.
 */
export class BonepressBabylonExtension implements IGLTFLoaderExtension {
  readonly name = BONEPRESS_EXTENSION;
  enabled = true;
  private readonly options: BonepressBabylonOptions;

  constructor(
    private loader: GLTFLoader | undefined,
    options: BonepressBabylonOptions = {},
  ) {
    const perLoad = loader?.parent.extensionOptions[BONEPRESS_EXTENSION] as BonepressBabylonOptions | undefined;
    this.options = { ...options, ...perLoad };
  }

  dispose(): void {
    this.loader = undefined;
  }

  /** The loader's hook: null leaves an animation without the extension to the loader. */
  loadAnimationAsync(context: string, animation: IAnimation): Nullable<Promise<AnimationGroup>> {
    const ext = animation.extensions?.[BONEPRESS_EXTENSION] as Record<string, unknown> | undefined;
    if (!ext || !this.loader) return null;
    return this.load(this.loader, context, animation, ext);
  }

  private async load(
    loader: GLTFLoader,
    context: string,
    animation: IAnimation,
    ext: Record<string, unknown>,
  ): Promise<AnimationGroup> {
    const name = animation.name || `animation${animation.index}`;
    const fail = (problem: string, code: FormatErrorCode = FORMAT_ERROR.BAD_ARGUMENT): never => {
      throw new FormatError(code, `${BONEPRESS_EXTENSION}: ${context} ("${name}"): ${problem}`);
    };
    const gltf = loader.gltf;
    const bones = readExtensionBones(gltf as ExtensionJson, ext, fail);
    const bytes = await loader.loadBufferViewAsync(
      `/bufferViews/${bones.bufferView}`,
      gltf.bufferViews![bones.bufferView],
    );
    const compressed = openExtensionClip(new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength), bones, fail);
    const { nodeIndices, weights: weightDefs } = bones;
    const gltfNodes = gltf.nodes ?? [];

    const nodes: (TransformNode | undefined)[] = nodeIndices.map((j) => (gltfNodes[j] as INode)._babylonTransformNode);
    const morphWeights: BabylonMorphWeights[] = weightDefs.map((w) => {
      // The loader makes one mesh per primitive of the node, each with its own morph target manager.
      const meshes = (gltfNodes[w.node] as INode)._primitiveBabylonMeshes ?? [];
      const targets = w.scales.map((_, t) =>
        meshes.flatMap((m) =>
          m.morphTargetManager && t < m.morphTargetManager.numTargets
            ? [m.morphTargetManager.getTarget(t) as MorphTarget]
            : [],
        ),
      );
      return { ...w, targets };
    });

    // As the loader makes its own groups: kept out of the scene when loading into an asset container.
    const scene = loader.babylonScene;
    const container = loader._assetContainer;
    scene._blockEntityCollection = !!container;
    const group = new AnimationGroup(name, scene);
    group._parentContainer = container;
    scene._blockEntityCollection = false;
    animation._babylonAnimationGroup = group;
    createAnimationGroup(compressed, nodes, scene, {
      ...this.options,
      group,
      fps: loader.parent.targetFps,
      morphWeights,
    });
    await this.otherChannels(loader, context, animation, group, bones, fail);
    group.normalize(0);
    return group;
  }

  /**
   * Loads the animation's channels the clip does not replace (gltf-extension-def.ts's
   * otherChannels, which calls `fail` for an additive animation that has any) as the loader
   * itself would, into `group`.
   */
  private async otherChannels(
    loader: GLTFLoader,
    context: string,
    animation: IAnimation,
    group: AnimationGroup,
    bones: ExtensionBones,
    fail: (problem: string) => never,
  ): Promise<void> {
    animation.channels.forEach((c, i) => {
      c.index = i;
    });
    animation.samplers.forEach((s, i) => {
      s.index = i;
    });
    const kept = otherChannels(animation.channels, bones, fail);
    await Promise.all(
      kept.map((channel) =>
        loader._loadAnimationChannelAsync(
          `${context}/channels/${channel.index}`,
          context,
          animation,
          channel,
          (target, babylonAnimation) => {
            target.animations = target.animations ?? [];
            target.animations.push(babylonAnimation);
            group.addTargetedAnimation(babylonAnimation, target);
          },
        ),
      ),
    );
  }
}

/**
 * Registers the extension with Babylon's glTF 2.0 loader (`registerGLTFExtension`), with
 * `options` as the defaults of every load. Import the loader itself as usual
 * (`@babylonjs/loaders/glTF/2.0`, or `registerBuiltInLoaders()`). Per load, the loader's
 * `extensionOptions.BONEPRESS_animation_compression` overrides them; `enabled: false` there
 * turns the extension off (an asset that requires it then fails to load).
 */
export function registerBonepressExtension(options: BonepressBabylonOptions = {}): void {
  registerGLTFExtension(BONEPRESS_EXTENSION, true, (loader) => new BonepressBabylonExtension(loader, options));
}
