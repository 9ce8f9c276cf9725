/**
 * Loading a GLB with Babylon.js's glTF loader in the adapters' tests: into a new scene of
 * the given engine, the `BONEPRESS_animation_compression` extension in the given mode,
 * without materials, every group added to the scene and stopped.
 */
import type { AbstractEngine } from '@babylonjs/core/Engines/abstractEngine.js';
import { LoadAssetContainerAsync } from '@babylonjs/core/Loading/sceneLoader.js';
import { Scene } from '@babylonjs/core/scene.js';
import type { AssetContainer } from '@babylonjs/core/assetContainer.js';

import { BONEPRESS_EXTENSION, type BabylonClipMode } from '../../src/adapters/babylon.js';

export async function loadBabylonGlb(
  engine: AbstractEngine,
  glb: Uint8Array,
  mode: BabylonClipMode = 'decode',
): Promise<{ scene: Scene; container: AssetContainer }> {
  const scene = new Scene(engine);
  const container = await LoadAssetContainerAsync(glb, scene, {
    pluginExtension: '.glb',
    pluginOptions: {
      gltf: { skipMaterials: true, animationStartMode: 0, extensionOptions: { [BONEPRESS_EXTENSION]: { mode } } },
    },
  });
  container.addAllToScene();
  for (const g of container.animationGroups) g.stop();
  return { scene, container };
}
