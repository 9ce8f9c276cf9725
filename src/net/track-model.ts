/**
 * The track model of a schema: which tracks are sent and which are constant (their value
 * in the base pose and their small error), and what the error bound needs to know about
 * each sent one (extents, magnitudes, the lever arms that decide constancy).
 */
import type { Skeleton } from '../clip/skeleton.js';
import { POSE_STRIDE } from '../runtime/pose.js';
import type { PoseRanges } from './pose-ranges.js';
import { SMALLEST_THREE_MAX_NORM } from './smallest-three.js';

// Share of the threshold a constant (unsent) track may use: small, so sent tracks keep the rest.
const CONSTANT_SHARE = 0.01;
// Two scales within this relative difference count as one uniform scale.
const UNIFORM_SCALE_TOLERANCE = 1e-6;

/** What the error bound needs to know about each track (clip units, radians). */
export interface TrackModel {
  boneCount: number;
  parents: Int32Array;
  shell: Float32Array;
  basePose: Float32Array;
  rotationSent: Uint8Array;
  /** Bound of the norm of the three smallest components of the quaternions a bone's codes carry. */
  rotationSmallNorm: Float64Array;
  /** Angle error of an unsent rotation (its range around the constant). */
  rotationConstantError: Float64Array;
  /** Extent of each sent translation / scale component (0: not sent) and error of each unsent one. */
  translationExtent: Float64Array;
  translationConstantError: Float64Array;
  translationMin: Float64Array;
  translationMax: Float64Array;
  scaleExtent: Float64Array;
  scaleConstantError: Float64Array;
  scaleMin: Float64Array;
  scaleMax: Float64Array;
  /** Largest translation length and largest |scale| component per bone. */
  translationLength: Float64Array;
  scaleMagnitude: Float64Array;
  /** Largest magnitude of each translation / scale component (for float32 rounding). */
  translationMagnitude: Float64Array;
  /** True when no scale is sent and every constant scale is uniform. */
  uniformScales: boolean;
}

/** The track model of a skeleton whose poses stay inside `ranges` (clip units). */
export function classifyTracks(
  skeleton: Skeleton,
  ranges: PoseRanges,
  shell: Float32Array,
  threshold: number,
): TrackModel {
  const boneCount = skeleton.boneNames.length;
  const parents = skeleton.parents;
  const m: TrackModel = {
    boneCount,
    parents,
    shell,
    basePose: Float32Array.from(skeleton.defaultPose),
    rotationSent: new Uint8Array(boneCount),
    rotationSmallNorm: new Float64Array(boneCount).fill(SMALLEST_THREE_MAX_NORM),
    rotationConstantError: new Float64Array(boneCount),
    translationExtent: new Float64Array(boneCount * 3),
    translationConstantError: new Float64Array(boneCount * 3),
    translationMin: new Float64Array(boneCount * 3),
    translationMax: new Float64Array(boneCount * 3),
    scaleExtent: new Float64Array(boneCount * 3),
    scaleConstantError: new Float64Array(boneCount * 3),
    scaleMin: new Float64Array(boneCount * 3),
    scaleMax: new Float64Array(boneCount * 3),
    translationLength: new Float64Array(boneCount),
    scaleMagnitude: new Float64Array(boneCount),
    translationMagnitude: new Float64Array(boneCount * 3),
    uniformScales: true,
  };
  // Lever arms with the widest ranges (chain length to the furthest descendant + shell),
  // only to decide which tracks are constant enough to leave out.
  for (let b = 0; b < boneCount; b++) {
    let len2 = 0,
      smag = 0;
    for (let c = 0; c < 3; c++) {
      const tlo = finiteOr(ranges.translationMin[b * 3 + c], skeleton.defaultPose[b * POSE_STRIDE + 4 + c]);
      const thi = finiteOr(ranges.translationMax[b * 3 + c], skeleton.defaultPose[b * POSE_STRIDE + 4 + c]);
      const tm = Math.max(Math.abs(tlo), Math.abs(thi));
      m.translationMagnitude[b * 3 + c] = tm;
      len2 += tm * tm;
      const slo = finiteOr(ranges.scaleMin[b * 3 + c], skeleton.defaultPose[b * POSE_STRIDE + 7 + c]);
      const shi = finiteOr(ranges.scaleMax[b * 3 + c], skeleton.defaultPose[b * POSE_STRIDE + 7 + c]);
      smag = Math.max(smag, Math.abs(slo), Math.abs(shi));
    }
    m.translationLength[b] = Math.sqrt(len2);
    m.scaleMagnitude[b] = smag;
  }
  const lever = new Float64Array(boneCount);
  const reach = new Float64Array(boneCount); // scale product from the root, widest
  for (let b = 0; b < boneCount; b++)
    reach[b] = (parents[b] >= 0 ? reach[parents[b]] : 1) * Math.max(1, m.scaleMagnitude[b]);
  for (let b = 0; b < boneCount; b++) lever[b] = shell[b] * reach[b];
  for (let b = boneCount - 1; b > 0; b--) {
    const p = parents[b];
    if (p >= 0) lever[p] = Math.max(lever[p], lever[b] + m.translationLength[b] * reach[p]);
  }
  const tolerance = CONSTANT_SHARE * threshold;
  for (let b = 0; b < boneCount; b++) {
    const o = b * POSE_STRIDE;
    // Rotation: constant when the box of its components fits in a small angle.
    let h2 = 0;
    const mid = [0, 0, 0, 0];
    let valid = true;
    for (let c = 0; c < 4; c++) {
      const lo = ranges.rotationMin[b * 4 + c],
        hi = ranges.rotationMax[b * 4 + c];
      if (!(lo <= hi)) {
        valid = false;
        break;
      }
      mid[c] = (lo + hi) / 2;
      h2 += ((hi - lo) / 2) ** 2;
    }
    const half = Math.sqrt(h2);
    // Chord to the normalised midpoint ≤ 2·|half extents|; angle ≤ 4·asin(that / 2).
    const angle = !valid ? 0 : half >= 1 ? Math.PI : 4 * Math.asin(half);
    if (valid && angle * lever[b] <= tolerance) {
      const len = Math.hypot(mid[0], mid[1], mid[2], mid[3]);
      if (len > 0) for (let c = 0; c < 4; c++) m.basePose[o + c] = mid[c] / len;
      m.rotationConstantError[b] = angle;
    } else if (valid) {
      m.rotationSent[b] = 1;
      // The largest component is at least the largest lower bound of any |component|
      // over the box, so the other three have a norm of at most √(1 − that²).
      let largest = 0;
      for (let c = 0; c < 4; c++) {
        const lo = ranges.rotationMin[b * 4 + c],
          hi = ranges.rotationMax[b * 4 + c];
        largest = Math.max(largest, lo > 0 ? lo : hi < 0 ? -hi : 0);
      }
      // Only above 1/√2: then every two rotations in the box are in the same hemisphere, so
      // shortest-path interpolation between them stays above that lower bound too.
      if (largest > Math.SQRT1_2) m.rotationSmallNorm[b] = Math.sqrt(1 - largest * largest);
    }
    for (let c = 0; c < 3; c++) {
      const i = b * 3 + c;
      const tlo = ranges.translationMin[i],
        thi = ranges.translationMax[i];
      if (tlo <= thi) {
        const ext = thi - tlo;
        if (ext / 2 <= tolerance / Math.sqrt(3) / reach[b]) {
          m.basePose[o + 4 + c] = (tlo + thi) / 2;
          m.translationConstantError[i] = ext / 2;
        } else {
          m.translationExtent[i] = ext;
          m.translationMin[i] = tlo;
          m.translationMax[i] = thi;
        }
      }
      const slo = ranges.scaleMin[i],
        shi = ranges.scaleMax[i];
      if (slo <= shi) {
        const ext = shi - slo;
        const below = (lever[b] / Math.max(1e-30, reach[b])) * (parents[b] >= 0 ? reach[parents[b]] : 1);
        if ((ext / 2) * below <= tolerance) {
          m.basePose[o + 7 + c] = (slo + shi) / 2;
          m.scaleConstantError[i] = ext / 2;
        } else {
          m.scaleExtent[i] = ext;
          m.scaleMin[i] = slo;
          m.scaleMax[i] = shi;
        }
      }
    }
    const sx = m.basePose[o + 7],
      sy = m.basePose[o + 8],
      sz = m.basePose[o + 9];
    const uniform =
      Math.abs(sx - sy) <= UNIFORM_SCALE_TOLERANCE * Math.abs(sx) &&
      Math.abs(sx - sz) <= UNIFORM_SCALE_TOLERANCE * Math.abs(sx);
    if (
      !uniform ||
      m.scaleExtent[b * 3] > 0 ||
      m.scaleExtent[b * 3 + 1] > 0 ||
      m.scaleExtent[b * 3 + 2] > 0 ||
      m.scaleConstantError[b * 3] > 0 ||
      m.scaleConstantError[b * 3 + 1] > 0 ||
      m.scaleConstantError[b * 3 + 2] > 0
    ) {
      m.uniformScales = false;
    }
  }
  return m;
}

/**
 * A compensated rotation is the bone's rotation turned by its parent's object rotation
 * error, at most Θ ≤ threshold / (parent shell · parent scale) once the bound holds; that
 * moves each quaternion component by at most Θ/2, so the norm bound widens by that much.
 */
export function widenForCompensation(m: TrackModel, threshold: number): void {
  const scale = new Float64Array(m.boneCount);
  for (let b = 0; b < m.boneCount; b++) {
    const p = m.parents[b];
    scale[b] = (p >= 0 ? scale[p] : 1) * Math.abs(m.basePose[b * POSE_STRIDE + 7]);
    if (p < 0 || !m.rotationSent[b]) continue;
    const reach = m.shell[p] * scale[p];
    m.rotationSmallNorm[b] = reach > 0 ? m.rotationSmallNorm[b] + threshold / (2 * reach) : SMALLEST_THREE_MAX_NORM;
  }
}

function finiteOr(v: number, fallback: number): number {
  return Number.isFinite(v) ? v : fallback;
}
