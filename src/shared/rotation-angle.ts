/**
 * The angle between two orientations, accurate near zero.
 */

/**
 * Angle in radians (0..π) of the rotation taking quaternion a to quaternion b, either sign
 * of either: 2·atan2(|v|, |w|) of conj(a)·b. Not 2·acos(a·b): near identity the dot product
 * loses the angle (a float32 quaternion of a 0.004° turn has w = 1 exactly), while the
 * vector part keeps it, so a tiny turn far up a long chain would be taken for none.
 * Unnormalised inputs are fine (both parts scale alike).
 */
export function rotationAngle(
  ax: number,
  ay: number,
  az: number,
  aw: number,
  bx: number,
  by: number,
  bz: number,
  bw: number,
): number {
  const dot = ax * bx + ay * by + az * bz + aw * bw;
  const vx = aw * bx - bw * ax - (ay * bz - az * by);
  const vy = aw * by - bw * ay - (az * bx - ax * bz);
  const vz = aw * bz - bw * az - (ax * by - ay * bx);
  return 2 * Math.atan2(Math.sqrt(vx * vx + vy * vy + vz * vz), Math.abs(dot));
}
