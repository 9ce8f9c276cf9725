/**
 * A minimal Babylon.js page for a `BONEPRESS_animation_compression` asset: Babylon's glTF
 * loader with the bonepress extension registered, the first animation group playing.
 *
 * `?src=` the asset's URL (default `model.bp.glb` beside the page), `?mode=resident` keeps
 * the clips compressed (default `decode`: keyframes at load). `window.bonepress` lets a test
 * pause at a time and read the canvas; `body[data-ready]` is `1` once playing, `error` on
 * failure (the message in #status).
 */
import { Engine } from '@babylonjs/core/Engines/engine.js';
import { Scene } from '@babylonjs/core/scene.js';
import { ArcRotateCamera } from '@babylonjs/core/Cameras/arcRotateCamera.js';
import { HemisphericLight } from '@babylonjs/core/Lights/hemisphericLight.js';
import { Color4 } from '@babylonjs/core/Maths/math.color.js';
import { Vector3 } from '@babylonjs/core/Maths/math.vector.js';
import { LoadAssetContainerAsync } from '@babylonjs/core/Loading/sceneLoader.js';
import '@babylonjs/loaders/glTF/2.0/glTFLoader.js';
import { BONEPRESS_EXTENSION, registerBonepressExtension, type BabylonClipMode } from 'bonepress/babylon';
// The TypeScript decoder, for browsers where the WebAssembly kernel cannot run (no
// WebAssembly SIMD, or a Content-Security-Policy that blocks it): a demo page should play
// everywhere, so it pays the 1.8 kB gzip an app may leave out.
import 'bonepress/runtime';

const params = new URLSearchParams(location.search);
const src = params.get('src') ?? 'model.bp.glb';
const mode: BabylonClipMode = params.get('mode') === 'resident' ? 'resident' : 'decode';
const status = document.getElementById('status')!;
const canvas = document.getElementById('view') as HTMLCanvasElement;

registerBonepressExtension();
// preserveDrawingBuffer: the canvas can be read back after a frame (tests, screenshots).
const engine = new Engine(canvas, true, { preserveDrawingBuffer: true });
const scene = new Scene(engine);
scene.clearColor = new Color4(0.11, 0.14, 0.19, 1);
new HemisphericLight('light', new Vector3(0.3, 1, -0.4), scene);

async function main(): Promise<void> {
  const container = await LoadAssetContainerAsync(src, scene, {
    pluginExtension: '.glb',
    pluginOptions: { gltf: { extensionOptions: { [BONEPRESS_EXTENSION]: { mode } } } },
  });
  container.addAllToScene();
  const group = container.animationGroups[0];
  if (!group) throw new Error(`${src}: no animation`);
  group.start(true);
  // Follow the skeleton's centre (mocap walks away from the origin); skinned meshes are
  // always drawn, as their bounding box is the bind pose's.
  for (const mesh of container.meshes) if (mesh.skeleton) mesh.alwaysSelectAsActiveMesh = true;
  const joints = (container.skeletons[0]?.bones ?? []).flatMap((b) => b.getTransformNode() ?? []);
  const camera = new ArcRotateCamera('camera', -Math.PI / 2, Math.PI / 2.3, 3.5, Vector3.Zero(), scene);
  camera.attachControl(canvas, true);
  scene.onBeforeCameraRenderObservable.add(() => {
    if (joints.length === 0) return;
    camera.target.setAll(0);
    for (const joint of joints) camera.target.addInPlace(joint.getAbsolutePosition());
    camera.target.scaleInPlace(1 / joints.length);
  });
  // Shaders compile asynchronously: draw only once everything can be drawn.
  await scene.whenReadyAsync();
  engine.runRenderLoop(() => scene.render());
  addEventListener('resize', () => engine.resize());

  const frameOf = (seconds: number) => group.from + Math.min(seconds * 60, group.to - group.from);
  Object.assign(window, {
    bonepress: {
      group: group.name,
      clips: container.animationGroups.length,
      /** Pauses at `seconds` and renders that frame. */
      pauseAt(seconds: number): void {
        group.pause();
        group.goToFrame(frameOf(seconds));
        scene.render();
      },
    },
  });
  status.textContent = `${src}: "${group.name}" (${mode}), ${container.animationGroups.length} animation group(s)`;
  document.body.dataset.ready = '1';
}

main().catch((error: unknown) => {
  status.textContent = `error: ${(error as Error).message ?? String(error)}`;
  document.body.dataset.ready = 'error';
});
