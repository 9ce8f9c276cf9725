/**
 * Stage 2: each rotation, translation and scale track is default (identity: dropped),
 * constant (one value stored at full precision) or animated. A track collapses only when
 * the object-space movement that causes, at the furthest virtual vertex it carries, stays
 * under a small share of the threshold; the final error is measured anyway. That bound
 * (2·L·sin(θ/2) at lever arm L, shell included) holds for every point of the shell sphere,
 * so it serves both error metrics (metric/error-metric.ts) unchanged.
 */
import type { RawClip } from '../clip/raw-clip.js';
import { TRACKS_PER_BONE, TRACK_KIND } from '../runtime/format.js';
import { rotationAngle } from '../shared/rotation-angle.js';

/** Track classes. Values match the file's bitsets. */
export const TRACK_CLASS = { DEFAULT: 0, CONSTANT: 1, ANIMATED: 2 } as const;
/** A {@link TRACK_CLASS} value. */
export type TrackClassValue = (typeof TRACK_CLASS)[keyof typeof TRACK_CLASS];

/** Share of the threshold one collapsed track may spend (several may add up along a chain). */
export const COLLAPSE_SHARE = 1 / 32;

/** What classification decided, per track (index = bone × 3 + kind). */
export interface TrackClasses {
  readonly classes: Uint8Array;
  /** Value of each constant track: 4 floats per track slot (xyzw or xyz + unused). */
  readonly constants: Float32Array;
  /** Track indices of animated tracks, in track order. */
  readonly animated: Int32Array;
  readonly counts: { default: number; constant: number; animated: number };
}

/**
 * Lever arm of each bone: the furthest a virtual vertex of the bone or of a descendant can
 * be from the bone's origin (bone lengths at their longest over the clip plus the shell).
 */
export function boneLeverArms(clip: RawClip, shellDistances: Float32Array): Float64Array {
  const parents = clip.skeleton.parents;
  const boneCount = parents.length;
  const n = clip.sampleCount;
  const t = clip.translations;
  const lever = new Float64Array(boneCount);
  for (let b = 0; b < boneCount; b++) lever[b] = shellDistances[b];
  const maxLen = new Float64Array(boneCount);
  for (let b = 0; b < boneCount; b++) {
    // Squared lengths per sample, one square root per bone (Math.hypot is a slow builtin call).
    let m = 0;
    for (let s = 0; s < n; s++) {
      const i = (b * n + s) * 3;
      const x = t[i],
        y = t[i + 1],
        z = t[i + 2];
      const len2 = x * x + y * y + z * z;
      if (len2 > m) m = len2;
    }
    maxLen[b] = Math.sqrt(m);
  }
  // Children come after parents, so one backward pass propagates the furthest reach upwards.
  for (let b = boneCount - 1; b >= 0; b--) {
    const p = parents[b];
    if (p >= 0) lever[p] = Math.max(lever[p], lever[b] + maxLen[b]);
  }
  return lever;
}

/**
 * Classifies every track. `rotations` are the pre-processed rotations (unit, w ≥ 0).
 * `threshold` and `shellDistances` are in clip units. The lever arms come from the bone
 * lengths of `leverClip` (an additive clip's deltas have none: its applied poses do).
 */
export function classifyTracks(
  clip: RawClip,
  rotations: Float32Array,
  threshold: number,
  shellDistances: Float32Array,
  leverClip: RawClip = clip,
): TrackClasses {
  const boneCount = clip.skeleton.parents.length;
  const n = clip.sampleCount;
  const lever = boneLeverArms(leverClip, shellDistances);
  const budget = threshold * COLLAPSE_SHARE;
  const classes = new Uint8Array(boneCount * TRACKS_PER_BONE);
  const constants = new Float32Array(boneCount * TRACKS_PER_BONE * 4);
  const counts = { default: 0, constant: 0, animated: 0 };
  const animated: number[] = [];
  const ref = new Float64Array(4);
  for (let b = 0; b < boneCount; b++) {
    // A rotation by θ moves a point at distance L by 2·L·sin(θ/2).
    const maxAngle = 2 * Math.asin(Math.min(1, budget / (2 * lever[b])));
    const maxScale = budget / lever[b];
    for (let kind = 0; kind < TRACKS_PER_BONE; kind++) {
      const track = b * TRACKS_PER_BONE + kind;
      let cls: TrackClassValue;
      if (kind === TRACK_KIND.ROTATION) {
        cls = classifyRotation(rotations, b, n, maxAngle, ref);
      } else {
        const values = kind === TRACK_KIND.TRANSLATION ? clip.translations : clip.scales;
        const identity = kind === TRACK_KIND.TRANSLATION ? 0 : 1;
        cls = classifyVector(values, b, n, identity, kind === TRACK_KIND.TRANSLATION ? budget : maxScale, ref);
      }
      classes[track] = cls;
      if (cls === TRACK_CLASS.CONSTANT) {
        for (let c = 0; c < 4; c++) constants[track * 4 + c] = ref[c];
        counts.constant++;
      } else if (cls === TRACK_CLASS.DEFAULT) {
        counts.default++;
      } else {
        animated.push(track);
        counts.animated++;
      }
    }
  }
  return { classes, constants, animated: Int32Array.from(animated), counts };
}

function classifyRotation(
  rot: Float32Array,
  b: number,
  n: number,
  maxAngle: number,
  outRef: Float64Array,
): TrackClassValue {
  const base = b * n * 4;
  let isDefault = true;
  for (let s = 0; s < n && isDefault; s++) {
    const i = base + s * 4;
    if (rotationAngle(rot[i], rot[i + 1], rot[i + 2], rot[i + 3], 0, 0, 0, 1) > maxAngle) isDefault = false;
  }
  if (isDefault) return TRACK_CLASS.DEFAULT;
  // Reference: the normalised mean, signs aligned with the first sample.
  let x = 0,
    y = 0,
    z = 0,
    w = 0;
  const fx = rot[base],
    fy = rot[base + 1],
    fz = rot[base + 2],
    fw = rot[base + 3];
  for (let s = 0; s < n; s++) {
    const i = base + s * 4;
    const sign = rot[i] * fx + rot[i + 1] * fy + rot[i + 2] * fz + rot[i + 3] * fw < 0 ? -1 : 1;
    x += sign * rot[i];
    y += sign * rot[i + 1];
    z += sign * rot[i + 2];
    w += sign * rot[i + 3];
  }
  const len = Math.hypot(x, y, z, w);
  x /= len;
  y /= len;
  z /= len;
  w /= len;
  // Multiplied by the sign rather than negated in a branch that is rarely taken (and then
  // deoptimises the compiled code).
  const sign = w < 0 ? -1 : 1;
  x *= sign;
  y *= sign;
  z *= sign;
  w *= sign;
  const qx = Math.fround(x),
    qy = Math.fround(y),
    qz = Math.fround(z),
    qw = Math.fround(w);
  for (let s = 0; s < n; s++) {
    const i = base + s * 4;
    if (rotationAngle(rot[i], rot[i + 1], rot[i + 2], rot[i + 3], qx, qy, qz, qw) > maxAngle)
      return TRACK_CLASS.ANIMATED;
  }
  outRef[0] = qx;
  outRef[1] = qy;
  outRef[2] = qz;
  outRef[3] = qw;
  return TRACK_CLASS.CONSTANT;
}

function classifyVector(
  v: Float32Array,
  b: number,
  n: number,
  identity: number,
  tolerance: number,
  outRef: Float64Array,
): TrackClassValue {
  const base = b * n * 3;
  let maxDev2 = 0;
  const min = [Infinity, Infinity, Infinity],
    max = [-Infinity, -Infinity, -Infinity];
  for (let s = 0; s < n; s++) {
    const i = base + s * 3;
    maxDev2 = Math.max(maxDev2, distanceSquared(v, i, identity, identity, identity));
    for (let c = 0; c < 3; c++) {
      if (v[i + c] < min[c]) min[c] = v[i + c];
      if (v[i + c] > max[c]) max[c] = v[i + c];
    }
  }
  if (Math.sqrt(maxDev2) <= tolerance) return TRACK_CLASS.DEFAULT;
  // The box centre minimises the worst deviation per component.
  for (let c = 0; c < 3; c++) outRef[c] = Math.fround((min[c] + max[c]) / 2);
  outRef[3] = 0;
  let worst2 = 0;
  for (let s = 0; s < n; s++)
    worst2 = Math.max(worst2, distanceSquared(v, base + s * 3, outRef[0], outRef[1], outRef[2]));
  return Math.sqrt(worst2) <= tolerance ? TRACK_CLASS.CONSTANT : TRACK_CLASS.ANIMATED;
}

/** Squared distance from `v[i..i+2]` to (x, y, z). */
function distanceSquared(v: Float32Array, i: number, x: number, y: number, z: number): number {
  const dx = v[i] - x,
    dy = v[i + 1] - y,
    dz = v[i + 2] - z;
  return dx * dx + dy * dy + dz * dz;
}
