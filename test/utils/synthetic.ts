/**
 * Synthetic clips for tests and the bench: random but smooth, and fully determined by a
 * seed, so a failing case can be replayed from its seed alone.
 *
 * Shape of a clip from {@link makeSyntheticClip}:
 * - bone 0 is the root at the origin; every other bone hangs off an earlier bone (a chain,
 *   or a random tree that prefers recent bones so it grows limbs rather than a star), with
 *   a bind translation 5..20 units long in a random direction;
 * - every track is one of three kinds ({@link SyntheticTrackKind}): `default` (equal to the
 *   bind pose in every sample), `constant` (one non-bind value in every sample) or
 *   `animated`; animated rotations are Euler angles driven by sines (0.2..1.5 Hz, up to
 *   `maxAngleDeg`), so neighbouring samples are close and quaternions vary continuously;
 * - the root translation is always animated (a walk forward along x with a vertical bob).
 */
import { createRawClip, type RawClip } from '../../src/clip/raw-clip.js';
import { createSkeleton, POSE_STRIDE } from '../../src/clip/skeleton.js';
import type { LengthUnit } from '../../src/clip/units.js';

import { mulberry32 } from '../../src/clip/random.js';

export { mulberry32 };

/** How a synthetic track behaves over the clip. */
export const SYNTHETIC_TRACK_KIND = {
  DEFAULT: 'default',
  CONSTANT: 'constant',
  ANIMATED: 'animated',
} as const;
/** A {@link SYNTHETIC_TRACK_KIND}. */
export type SyntheticTrackKind = (typeof SYNTHETIC_TRACK_KIND)[keyof typeof SYNTHETIC_TRACK_KIND];

/** Options of {@link makeSyntheticClip}; every field but the counts has a default. */
export interface SyntheticClipOptions {
  boneCount: number;
  sampleCount: number;
  /** PRNG seed; default 1. */
  seed?: number;
  /** Samples per second; default 30. */
  sampleRate?: number;
  /** Length unit of translations; default 'cm'. */
  unit?: LengthUnit;
  /** 'chain' (bone b's parent is b-1) or 'tree' (random earlier bone); default 'tree'. */
  shape?: 'chain' | 'tree';
  /** Share of non-root rotation tracks that are constant; default 0.2. */
  constantShare?: number;
  /** Share of non-root rotation tracks that are default (bind pose); default 0.2. */
  defaultShare?: number;
  /** Share of non-root translation tracks that are animated (the rest are mostly default); default 0.1. */
  animatedTranslationShare?: number;
  /** Animate the scale of some bones (otherwise every scale track is default 1); default false. */
  animatedScale?: boolean;
  /** Largest Euler amplitude of animated rotations, in degrees; default 45. */
  maxAngleDeg?: number;
  /** Clip name; default `synthetic-<seed>`. */
  name?: string;
}

/** A synthetic clip with the kind of each of its tracks (index = bone). */
export interface SyntheticClip {
  readonly clip: RawClip;
  readonly rotationKinds: readonly SyntheticTrackKind[];
  readonly translationKinds: readonly SyntheticTrackKind[];
  readonly scaleKinds: readonly SyntheticTrackKind[];
}

/** Writes the quaternion of intrinsic X·Y·Z Euler angles (radians) at `out[o..o+3]`. */
function eulerXyzToQuat(ax: number, ay: number, az: number, out: Float32Array, o: number): void {
  const sx = Math.sin(ax / 2),
    cx = Math.cos(ax / 2);
  const sy = Math.sin(ay / 2),
    cy = Math.cos(ay / 2);
  const sz = Math.sin(az / 2),
    cz = Math.cos(az / 2);
  // qx · qy
  const x1 = sx * cy,
    y1 = cx * sy,
    z1 = sx * sy,
    w1 = cx * cy;
  // (qx · qy) · qz
  out[o] = x1 * cz + y1 * sz;
  out[o + 1] = y1 * cz - x1 * sz;
  out[o + 2] = w1 * sz + z1 * cz;
  out[o + 3] = w1 * cz - z1 * sz;
}

/**
 * Builds a random, smooth clip (see the module comment for its shape). Deterministic for a
 * given option set. Allocates a new clip; throws only when the counts are not positive
 * integers.
 */
export function makeSyntheticClipWithKinds(options: SyntheticClipOptions): SyntheticClip {
  const { boneCount, sampleCount } = options;
  if (!Number.isInteger(boneCount) || boneCount < 1)
    throw new RangeError(`boneCount must be a positive integer, got ${boneCount}`);
  if (!Number.isInteger(sampleCount) || sampleCount < 1)
    throw new RangeError(`sampleCount must be a positive integer, got ${sampleCount}`);
  const seed = options.seed ?? 1;
  const sampleRate = options.sampleRate ?? 30;
  const unit = options.unit ?? 'cm';
  const shape = options.shape ?? 'tree';
  const constantShare = options.constantShare ?? 0.2;
  const defaultShare = options.defaultShare ?? 0.2;
  const animatedTranslationShare = options.animatedTranslationShare ?? 0.1;
  const maxAngle = ((options.maxAngleDeg ?? 45) * Math.PI) / 180;
  const random = mulberry32(seed);
  const between = (lo: number, hi: number): number => lo + (hi - lo) * random();

  const names: string[] = [];
  const parents: number[] = [];
  const defaultPose = new Float32Array(boneCount * POSE_STRIDE);
  for (let b = 0; b < boneCount; b++) {
    names.push(b === 0 ? 'root' : `bone${b}`);
    parents.push(b === 0 ? -1 : shape === 'chain' ? b - 1 : Math.max(0, b - 1 - Math.floor(random() * 3)));
    const o = b * POSE_STRIDE;
    defaultPose[o + 3] = 1;
    if (b > 0) {
      // Random direction (normalised Gaussian-ish via three uniforms), length 5..20.
      let dx = between(-1, 1),
        dy = between(-1, 1),
        dz = between(-1, 1);
      const len = Math.hypot(dx, dy, dz) || 1;
      const length = between(5, 20);
      dx *= length / len;
      dy *= length / len;
      dz *= length / len;
      defaultPose[o + 4] = dx;
      defaultPose[o + 5] = dy;
      defaultPose[o + 6] = dz;
    }
    defaultPose[o + 7] = 1;
    defaultPose[o + 8] = 1;
    defaultPose[o + 9] = 1;
  }
  const skeleton = createSkeleton(names, parents, defaultPose, unit);
  const clip = createRawClip(options.name ?? `synthetic-${seed}`, skeleton, sampleRate, sampleCount, unit);

  const rotationKinds: SyntheticTrackKind[] = [];
  const translationKinds: SyntheticTrackKind[] = [];
  const scaleKinds: SyntheticTrackKind[] = [];
  const { rotations, translations, scales } = clip;

  for (let b = 0; b < boneCount; b++) {
    const base = b * sampleCount;

    // Rotation: the root always animates, so every clip has motion to compress.
    const pick = random();
    const rotationKind: SyntheticTrackKind =
      b === 0
        ? 'animated'
        : pick < defaultShare
          ? 'default'
          : pick < defaultShare + constantShare
            ? 'constant'
            : 'animated';
    rotationKinds.push(rotationKind);
    if (rotationKind === 'constant') {
      const ax = between(-maxAngle, maxAngle),
        ay = between(-maxAngle, maxAngle),
        az = between(-maxAngle, maxAngle);
      for (let s = 0; s < sampleCount; s++) eulerXyzToQuat(ax, ay, az, rotations, (base + s) * 4);
    } else if (rotationKind === 'animated') {
      const amp = [between(0.1, 1) * maxAngle, between(0.1, 1) * maxAngle, between(0.1, 1) * maxAngle];
      const freq = [between(0.2, 1.5), between(0.2, 1.5), between(0.2, 1.5)];
      const phase = [between(0, 2 * Math.PI), between(0, 2 * Math.PI), between(0, 2 * Math.PI)];
      for (let s = 0; s < sampleCount; s++) {
        const t = s / sampleRate;
        const angle = (k: number) => amp[k] * Math.sin(2 * Math.PI * freq[k] * t + phase[k]);
        eulerXyzToQuat(angle(0), angle(1), angle(2), rotations, (base + s) * 4);
      }
    }

    // Translation: the root walks; other bones mostly keep their bind offset.
    const tPick = random();
    const translationKind: SyntheticTrackKind =
      b === 0
        ? 'animated'
        : tPick < animatedTranslationShare
          ? 'animated'
          : tPick < animatedTranslationShare + 0.1
            ? 'constant'
            : 'default';
    translationKinds.push(translationKind);
    const bind = [defaultPose[b * POSE_STRIDE + 4], defaultPose[b * POSE_STRIDE + 5], defaultPose[b * POSE_STRIDE + 6]];
    if (b === 0) {
      const speed = between(50, 150),
        bob = between(1, 5),
        bobHz = between(1, 2);
      for (let s = 0; s < sampleCount; s++) {
        const t = s / sampleRate;
        translations[(base + s) * 3] = speed * t;
        translations[(base + s) * 3 + 1] = 90 + bob * Math.sin(2 * Math.PI * bobHz * t);
        translations[(base + s) * 3 + 2] = 0;
      }
    } else if (translationKind === 'constant') {
      const shift = [between(-2, 2), between(-2, 2), between(-2, 2)];
      for (let s = 0; s < sampleCount; s++)
        for (let c = 0; c < 3; c++) translations[(base + s) * 3 + c] = bind[c] + shift[c];
    } else if (translationKind === 'animated') {
      const amp = between(0.5, 3),
        hz = between(0.2, 1.5),
        axis = Math.floor(random() * 3);
      for (let s = 0; s < sampleCount; s++) {
        for (let c = 0; c < 3; c++) translations[(base + s) * 3 + c] = bind[c];
        translations[(base + s) * 3 + axis] += amp * Math.sin((2 * Math.PI * hz * s) / sampleRate);
      }
    }

    // Scale: default unless asked for; then a third constant, a third animated.
    let scaleKind: SyntheticTrackKind = 'default';
    if (options.animatedScale) {
      const sPick = random();
      scaleKind = sPick < 1 / 3 ? 'default' : sPick < 2 / 3 ? 'constant' : 'animated';
    }
    scaleKinds.push(scaleKind);
    if (scaleKind === 'constant') {
      const k = between(0.5, 2);
      scales.fill(k, base * 3, (base + sampleCount) * 3);
    } else if (scaleKind === 'animated') {
      const hz = between(0.2, 1.5);
      for (let s = 0; s < sampleCount; s++) {
        const k = 1 + 0.25 * Math.sin((2 * Math.PI * hz * s) / sampleRate);
        for (let c = 0; c < 3; c++) scales[(base + s) * 3 + c] = k;
      }
    }
  }
  return { clip, rotationKinds, translationKinds, scaleKinds };
}

/**
 * A random, smooth clip: {@link makeSyntheticClipWithKinds} without the track kinds. Use it
 * for tests and benches that need realistic but reproducible motion, e.g.
 * `makeSyntheticClip({ boneCount: 40, sampleCount: 90, seed: 7 })`.
 */
export function makeSyntheticClip(options: SyntheticClipOptions): RawClip {
  return makeSyntheticClipWithKinds(options).clip;
}
