/**
 * The viewer's camera framing (viewer/src/framing.ts) on generated bounds: a tall figure (in
 * metres and in centimetres), a wide one and a flat one, each seen whole, projected through a
 * three.js camera placed as the viewer places it, in a square view, a side-by-side half and a
 * wide window.
 */
import * as THREE from 'three';
import { describe, expect, it } from 'vitest';

import { FRAME_FILL, frameBox } from '../../viewer/src/framing.js';

const DIRECTION = new THREE.Vector3(0.55, 0.3, 1).normalize();

/** The largest |x| and |y| in normalised device coordinates of the box's corners, seen as the viewer frames it. */
function projectedExtent(box: THREE.Box3, aspect: number): { x: number; y: number; behind: boolean } {
  const camera = new THREE.PerspectiveCamera(40, aspect, 0.001, 1e6);
  const { target, distance } = frameBox(box, camera.fov, aspect, DIRECTION);
  camera.position.copy(target).addScaledVector(DIRECTION, distance);
  camera.lookAt(target);
  camera.updateMatrixWorld(true);
  let x = 0,
    y = 0,
    behind = false;
  for (let corner = 0; corner < 8; corner++) {
    const p = new THREE.Vector3(
      corner & 1 ? box.max.x : box.min.x,
      corner & 2 ? box.max.y : box.min.y,
      corner & 4 ? box.max.z : box.min.z,
    );
    if (p.clone().applyMatrix4(camera.matrixWorldInverse).z >= 0) behind = true;
    p.project(camera);
    x = Math.max(x, Math.abs(p.x));
    y = Math.max(y, Math.abs(p.y));
  }
  return { x, y, behind };
}

const box = (min: [number, number, number], max: [number, number, number]) =>
  new THREE.Box3(new THREE.Vector3(...min), new THREE.Vector3(...max));

describe('frameBox', () => {
  const shapes = {
    'a 1.8 m tall figure': box([-0.25, 0, -0.15], [0.25, 1.8, 0.15]),
    'a 180-unit tall figure (cm), off the origin': box([975, -3, 480], [1025, 177, 510]),
    'a 2 m wide figure (arms out)': box([-1, 0, -0.2], [1, 1.7, 0.2]),
    'a flat, deep one (a crawl)': box([-0.3, 0, -1.2], [0.3, 0.4, 1.2]),
  };
  for (const [name, bounds] of Object.entries(shapes)) {
    for (const aspect of [0.55, 1, 1.9]) {
      it(`shows ${name} whole at aspect ${aspect}, filling the view to its margin`, () => {
        const { x, y, behind } = projectedExtent(bounds, aspect);
        expect(behind).toBe(false);
        // Every corner within the fill share of the view; one of them at it (no wasted zoom).
        expect(Math.max(x, y)).toBeLessThanOrEqual(FRAME_FILL + 1e-9);
        expect(Math.max(x, y)).toBeGreaterThan(FRAME_FILL - 1e-6);
      });
    }
  }
});
