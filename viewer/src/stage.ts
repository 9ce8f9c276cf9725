/**
 * The 3D view: one renderer and camera; the raw skeleton on layer 1, the decoded one on
 * layer 2, the floor on layer 0. "Side by side" renders two viewports (raw left, decoded
 * right) with the same camera; "overlaid" renders both skeletons in one.
 */
import * as THREE from 'three';
import { OrbitControls } from 'three/addons/controls/OrbitControls.js';

import { frameBox } from './framing.js';

export const LAYER_RAW = 1;
export const LAYER_DECODED = 2;

export type ViewMode = 'side-by-side' | 'overlaid' | 'decoded-only';

/** From the target towards the camera: in front, a little to the side and above. */
const VIEW_DIRECTION = new THREE.Vector3(0.55, 0.3, 1).normalize();

/** Where the clip moves, for framing: all joints over all samples. */
export interface ClipBounds {
  box: THREE.Box3;
  /** Largest extent of one pose (the figure's size). */
  poseSize: number;
  /** Largest extent of one pose along each axis, over the clip. */
  poseExtent: THREE.Vector3;
}

export class Stage {
  readonly renderer: THREE.WebGLRenderer;
  readonly scene = new THREE.Scene();
  readonly camera = new THREE.PerspectiveCamera(40, 1, 0.1, 1000);
  readonly controls: OrbitControls;
  mode: ViewMode = 'side-by-side';
  /** Keep the camera on the root bone as it travels. */
  follow = true;
  private floor: THREE.LineSegments | undefined;
  private readonly followed = new THREE.Vector3();
  private hasFollowed = false;

  constructor(private readonly canvas: HTMLCanvasElement) {
    this.renderer = new THREE.WebGLRenderer({ canvas, antialias: true, preserveDrawingBuffer: true });
    this.renderer.setPixelRatio(Math.min(2, window.devicePixelRatio || 1));
    this.renderer.setClearColor(0x15181d, 1);
    this.scene.add(new THREE.HemisphereLight(0xffffff, 0x40444c, 2.2));
    const sun = new THREE.DirectionalLight(0xffffff, 1.6);
    sun.position.set(1, 2, 1.5);
    this.scene.add(sun);
    for (const light of this.scene.children) light.layers.enableAll();
    this.controls = new OrbitControls(this.camera, canvas);
    this.controls.enableDamping = false;
  }

  /** Places the floor and the camera for a clip of these bounds (scene units = clip units), seen in `mode`. */
  frame(bounds: ClipBounds, mode: ViewMode = this.mode): void {
    const { box, poseSize } = bounds;
    const size = Math.max(poseSize, 1e-6);
    const centre = box.getCenter(new THREE.Vector3());
    if (this.floor) {
      this.floor.removeFromParent();
      this.floor.geometry.dispose();
      (this.floor.material as THREE.Material).dispose();
    }
    const extent = Math.max(box.max.x - box.min.x, box.max.z - box.min.z) + 2 * size;
    const cell = 10 ** Math.floor(Math.log10(size)) / 2;
    const divisions = Math.min(200, Math.max(4, Math.ceil(extent / cell)));
    this.floor = makeFloor(divisions, cell);
    this.floor.position.set(centre.x, box.min.y, centre.z);
    this.scene.add(this.floor);
    // The whole height the clip reaches, and across it the figure (the camera follows a figure that travels).
    const halfX = Math.min(box.max.x - box.min.x, bounds.poseExtent.x) / 2,
      halfZ = Math.min(box.max.z - box.min.z, bounds.poseExtent.z) / 2;
    const shown = new THREE.Box3(
      new THREE.Vector3(centre.x - halfX, box.min.y, centre.z - halfZ),
      new THREE.Vector3(centre.x + halfX, box.max.y, centre.z + halfZ),
    );
    const { target, distance } = frameBox(shown, this.camera.fov, this.viewAspect(mode), VIEW_DIRECTION);
    this.camera.near = Math.min(size, distance) / 100;
    this.camera.far = size * 200 + extent * 4 + distance * 2;
    this.camera.updateProjectionMatrix();
    this.controls.target.copy(target);
    this.camera.position.copy(target).add(VIEW_DIRECTION.clone().multiplyScalar(distance));
    this.controls.update();
    this.hasFollowed = false;
  }

  /** Moves camera and target along with the figure (`root`: its centre) on the floor plane. */
  track(root: THREE.Vector3): void {
    if (!this.follow) {
      this.hasFollowed = false;
      return;
    }
    // The first call centres the view on the figure, later calls move with it.
    const from = this.hasFollowed ? this.followed : this.controls.target;
    const dx = root.x - from.x,
      dz = root.z - from.z;
    if (dx !== 0 || dz !== 0) {
      this.camera.position.x += dx;
      this.camera.position.z += dz;
      this.controls.target.x += dx;
      this.controls.target.z += dz;
      this.controls.update();
    }
    this.followed.copy(root);
    this.hasFollowed = true;
  }

  /** Width over height of one view in `mode` (a half in side-by-side); 1 before the canvas has a size. */
  private viewAspect(mode: ViewMode): number {
    const width = this.canvas.clientWidth,
      height = this.canvas.clientHeight;
    if (!(width > 0 && height > 0)) return 1;
    return (mode === 'side-by-side' ? Math.floor(width / 2) : width) / height;
  }

  /** Resizes the drawing buffer to the canvas' CSS size. */
  private fit(): { width: number; height: number } {
    const width = this.canvas.clientWidth,
      height = this.canvas.clientHeight;
    const size = this.renderer.getSize(new THREE.Vector2());
    if (size.x !== width || size.y !== height) this.renderer.setSize(width, height, false);
    return { width, height };
  }

  render(): void {
    const { width, height } = this.fit();
    if (width === 0 || height === 0) return;
    const r = this.renderer;
    r.setScissorTest(true);
    const view = (x: number, w: number, layers: number[]): void => {
      r.setViewport(x, 0, w, height);
      r.setScissor(x, 0, w, height);
      this.camera.aspect = w / height;
      this.camera.updateProjectionMatrix();
      this.camera.layers.set(0);
      for (const layer of layers) this.camera.layers.enable(layer);
      r.render(this.scene, this.camera);
    };
    if (this.mode === 'side-by-side') {
      const half = Math.floor(width / 2);
      view(0, half, [LAYER_RAW]);
      view(half, width - half, [LAYER_DECODED]);
    } else if (this.mode === 'overlaid') {
      view(0, width, [LAYER_RAW, LAYER_DECODED]);
    } else {
      view(0, width, [LAYER_DECODED]);
    }
  }
}

/**
 * A floor grid of `divisions` × `divisions` cells of `cell` units, centred on the origin.
 * Each line is cut at every cell: software WebGL (SwiftShader, headless chromium) drops
 * whole lines that cross the camera's plane, and short segments keep that to one cell.
 */
function makeFloor(divisions: number, cell: number): THREE.LineSegments {
  const half = (divisions * cell) / 2;
  const points: number[] = [];
  for (let i = 0; i <= divisions; i++) {
    const a = -half + i * cell;
    for (let j = 0; j < divisions; j++) {
      const b0 = -half + j * cell,
        b1 = b0 + cell;
      points.push(a, 0, b0, a, 0, b1, b0, 0, a, b1, 0, a);
    }
  }
  const geometry = new THREE.BufferGeometry();
  geometry.setAttribute('position', new THREE.Float32BufferAttribute(points, 3));
  return new THREE.LineSegments(geometry, new THREE.LineBasicMaterial({ color: 0x3d434e }));
}
