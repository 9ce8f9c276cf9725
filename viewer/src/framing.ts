/**
 * Where the camera stands to show a box whole: every corner of it inside the view, whatever
 * the box's shape (a tall figure, a wide one, one that travels) and the view's aspect (a
 * side-by-side half is narrower than it is tall). Pure, so it is tested on generated boxes.
 */
import * as THREE from 'three';

/** Share of the view's half-width and half-height the box may fill (the rest is margin). */
export const FRAME_FILL = 0.85;

/** What {@link frameBox} returns. */
export interface Framing {
  /** The point the camera looks at: the box's centre. */
  target: THREE.Vector3;
  /** Distance from the target to the camera, along `direction`. */
  distance: number;
}

/**
 * The target and distance at which a perspective camera of vertical field of view `fovDeg`
 * (degrees) and `aspect` (width / height), placed at target + direction·distance and looking
 * at the target with +y up, sees every corner of `box` within {@link FRAME_FILL} of its view.
 * For a corner at r from the target, its depth is distance − r·direction, and it is in view
 * when its offsets across (|r·right|, |r·up|) are within the depth times the half-view's
 * tangents: the distance is the largest that any corner asks for.
 */
export function frameBox(box: THREE.Box3, fovDeg: number, aspect: number, direction: THREE.Vector3): Framing {
  const target = box.getCenter(new THREE.Vector3());
  const back = direction.clone().normalize();
  const forward = back.clone().negate();
  const right = new THREE.Vector3().crossVectors(forward, new THREE.Vector3(0, 1, 0)).normalize();
  const up = new THREE.Vector3().crossVectors(right, forward);
  const tanV = Math.tan(THREE.MathUtils.degToRad(fovDeg / 2)) * FRAME_FILL;
  const tanH = tanV * aspect;
  const r = new THREE.Vector3();
  let distance = 0;
  for (let corner = 0; corner < 8; corner++) {
    r.set(
      corner & 1 ? box.max.x : box.min.x,
      corner & 2 ? box.max.y : box.min.y,
      corner & 4 ? box.max.z : box.min.z,
    ).sub(target);
    const across = Math.max(Math.abs(r.dot(right)) / tanH, Math.abs(r.dot(up)) / tanV);
    distance = Math.max(distance, r.dot(back) + across);
  }
  return { target, distance };
}
