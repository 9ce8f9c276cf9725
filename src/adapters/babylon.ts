/**
 * `bonepress/babylon`: compressed clips in Babylon.js.
 *
 * - {@link registerBonepressExtension}: Babylon's glTF loader plays
 *   `BONEPRESS_animation_compression` assets, every compressed animation an `AnimationGroup`
 *   (decoded to keyframes at load, or resident compressed);
 * - {@link createAnimationGroup}: the same group for a loose `.bpk` clip and nodes of your own;
 * - {@link BabylonClipPlayer}: a direct player that writes one character's nodes, without a group.
 *
 * Imports the runtime and Babylon (`@babylonjs/core` and `@babylonjs/loaders`, optional peer
 * dependencies), nothing from the compressor. Nothing here needs WebGL: it runs on Babylon's
 * `NullEngine` in Node too. See docs/babylon.md.
 */
export {
  createAnimationGroup,
  ResidentAnimation,
  type AnimationGroupOptions,
  type BabylonClipMode,
  type BabylonMorphWeights,
} from './babylon-animation-group.js';
export {
  BONEPRESS_EXTENSION,
  BonepressBabylonExtension,
  registerBonepressExtension,
  type BonepressBabylonOptions,
} from './babylon-gltf-extension.js';
export {
  BabylonClipPlayer,
  bindNodes,
  type BabylonBindableClip,
  type BabylonBindOptions,
  type BabylonClipPlayerOptions,
} from './babylon-player.js';
