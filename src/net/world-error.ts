/**
 * How far a decoded entity is from the true one, measured where a player sees it: for a
 * rigid body, the largest distance between matching points of the two bodies (a box's
 * eight corners, or for a sphere |Δposition| + 2·sin(Δangle/2)·radius).
 */
import { rotationAngle } from '../shared/rotation-angle.js';
import type { EntityTypeSchema } from './world-schema.js';

function rotate(q: Float32Array, qo: number, x: number, y: number, z: number, out: Float64Array): void {
  const qx = q[qo],
    qy = q[qo + 1],
    qz = q[qo + 2],
    qw = q[qo + 3];
  // v' = v + 2w(q×v) + 2q×(q×v), q normalised by the caller's data (decoded or true).
  const tx = 2 * (qy * z - qz * y),
    ty = 2 * (qz * x - qx * z),
    tz = 2 * (qx * y - qy * x);
  out[0] = x + qw * tx + (qy * tz - qz * ty);
  out[1] = y + qw * ty + (qz * tx - qx * tz);
  out[2] = z + qw * tz + (qx * ty - qy * tx);
}

const ra = new Float64Array(3),
  rb = new Float64Array(3);

/**
 * The largest distance between matching points of entity values `a[ao..]` and `b[bo..]`
 * of a type with a rigid body (see {@link EntityTypeSchema.rigidBody}); 0 for other types.
 * Allocates nothing.
 */
export function rigidBodyError(
  type: EntityTypeSchema,
  a: Float32Array,
  ao: number,
  b: Float32Array,
  bo: number,
): number {
  const rb0 = type.rigidBody;
  if (!rb0) return 0;
  const p = rb0.position.valueOffset,
    q = rb0.orientation.valueOffset;
  const dx = a[ao + p] - b[bo + p],
    dy = a[ao + p + 1] - b[bo + p + 1],
    dz = a[ao + p + 2] - b[bo + p + 2];
  const h = rb0.halfExtents;
  if (!h) {
    const angle = rotationAngle(
      a[ao + q],
      a[ao + q + 1],
      a[ao + q + 2],
      a[ao + q + 3],
      b[bo + q],
      b[bo + q + 1],
      b[bo + q + 2],
      b[bo + q + 3],
    );
    return Math.hypot(dx, dy, dz) + 2 * Math.sin(angle / 2) * rb0.radius;
  }
  let worst = 0;
  for (let c = 0; c < 8; c++) {
    const x = c & 1 ? h[0] : -h[0],
      y = c & 2 ? h[1] : -h[1],
      z = c & 4 ? h[2] : -h[2];
    rotate(a, ao + q, x, y, z, ra);
    rotate(b, bo + q, x, y, z, rb);
    const e = Math.hypot(ra[0] - rb[0] + dx, ra[1] - rb[1] + dy, ra[2] - rb[2] + dz);
    if (e > worst) worst = e;
  }
  return worst;
}
