/**
 * `bonepress/gltf-transform`: bonepress as a glTF-Transform extension and transform.
 *
 * ```ts
 * import { NodeIO } from '@gltf-transform/core';
 * import { bonepress, BonepressAnimationCompression } from 'bonepress/gltf-transform';
 *
 * const io = new NodeIO().registerExtensions([BonepressAnimationCompression]);
 * const document = await io.read('hero.glb');
 * await document.transform(bonepress({ error: '0.01cm' }));
 * await io.write('hero.bp.glb', document);
 * ```
 *
 * `@gltf-transform/core` stays a regular dependency (bonepress's glTF reader uses it too), not
 * a peer: the Document must still come from the same copy as these classes, so a project
 * that uses glTF-Transform should keep it at the version bonepress pins (npm then installs
 * one copy).
 */
export {
  BONEPRESS_ANIMATION_COMPRESSION,
  BonepressAnimationCompression,
  BoneTable,
  CompressedAnimation,
  GltfExtensionError,
} from './extension.js';
export { AnimationPointer, KHR_ANIMATION_POINTER, KHRAnimationPointerPassThrough } from './animation-pointer.js';
export {
  BONEPRESS_DEFAULTS,
  bonepress,
  compressDocument,
  type BonepressOptions,
  type CompressDocumentResult,
  type CompressedAnimationReport,
  type GltfAdditiveOptions,
  type GltfAnimationPose,
  type KeptAnimationReport,
} from './bonepress.js';
export { animationBytes, type AnimationBytes } from './sizes.js';
