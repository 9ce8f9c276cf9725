import { MAX_BONES } from '../shared/pose-layout.js';
import { ClipError, POSE_STRIDE, type Skeleton } from './skeleton.js';
import type { LengthUnit } from './units.js';
import type { KeyframeTrack } from './keyframes.js';

/**
 * An uncompressed clip: `sampleCount` samples per bone, uniformly spaced unless
 * {@link RawClip.sampleTimes} gives each its own time.
 *
 * Tracks are structure-of-arrays and bone-major, so one bone's track is contiguous:
 * - `rotations[(b * sampleCount + s) * 4 + c]`, quaternion xyzw
 * - `translations[(b * sampleCount + s) * 3 + c]`, in `unit`
 * - `scales[(b * sampleCount + s) * 3 + c]`
 *
 * Duration is `(sampleCount - 1) / sampleRate` seconds, or the span of `sampleTimes`.
 */
export interface RawClip {
  readonly name: string;
  readonly skeleton: Skeleton;
  /** Samples per second (Hz); with {@link sampleTimes}, the mean rate. */
  readonly sampleRate: number;
  readonly sampleCount: number;
  /** Unit of translations, default-pose translations and shell distances. */
  readonly unit: LengthUnit;
  readonly rotations: Float32Array;
  readonly translations: Float32Array;
  readonly scales: Float32Array;
  /** Time of sample 0 on the source's timeline, seconds (a glTF animation's first key). Default 0. */
  readonly startTime?: number;
  /**
   * The time of every sample on the source's timeline (seconds, float32 values,
   * non-decreasing; equal neighbours are a jump), for sources whose keys lie on no uniform
   * grid (glTF keys with gaps or jitter, or intervals refined for a curve). The first equals
   * `startTime`. Absent: sample s plays at startTime + s / sampleRate.
   */
  readonly sampleTimes?: Float32Array;
  /**
   * The source's duration from time 0, seconds, as its host counts it (three.js: a glTF
   * animation's last key time); the period of `'repeat'` looping. Default
   * startTime + (sampleCount − 1) / sampleRate.
   */
  readonly duration?: number;
  /** Per track (bone × 3 + kind): 1 where the source animates it. Default: every track. */
  readonly channelMask?: Uint8Array;
  /** Per track: 1 where the source holds each key until the next (glTF STEP). Default: none. */
  readonly stepMask?: Uint8Array;
  /**
   * Per track: the source's own keys, so the compressor can measure the error between
   * samples against what the source means there (slerp, Hermite, held values). Absent
   * (or an undefined entry, where the source has no channel): the samples themselves,
   * slerped and lerped, are the reference.
   */
  readonly keyframes?: readonly (KeyframeTrack | undefined)[];
}

/** {@link RawClip.startTime}, defaulted. */
export function clipStartTime(clip: RawClip): number {
  return clip.startTime ?? 0;
}

/** {@link RawClip.duration}, defaulted: never before the start time. */
export function clipEndTime(clip: RawClip): number {
  const start = clipStartTime(clip);
  return Math.max(start, clip.duration ?? start + clipDuration(clip));
}

/** Number of bones in a clip. */
export function boneCountOf(clip: RawClip): number {
  return clip.skeleton.boneNames.length;
}

/** Duration in seconds: from the first sample to the last. */
export function clipDuration(clip: RawClip): number {
  if (clip.sampleCount <= 1) return 0;
  const times = clip.sampleTimes;
  return times ? times[clip.sampleCount - 1] - times[0] : (clip.sampleCount - 1) / clip.sampleRate;
}

/** The time of sample `s` on the source's timeline, seconds (fractional `s` lies between samples s and s + 1). */
export function sampleTime(clip: RawClip, s: number): number {
  const times = clip.sampleTimes;
  if (!times) return clipStartTime(clip) + s / clip.sampleRate;
  const k = Math.min(clip.sampleCount - 1, Math.floor(s));
  const alpha = s - k;
  return alpha > 0 ? times[k] + (times[k + 1] - times[k]) * alpha : times[k];
}

/** Raw size in bytes as ACL counts it: 10 float32 per bone per sample. */
export function rawSizeBytes(boneCount: number, sampleCount: number): number {
  return 40 * boneCount * sampleCount;
}

/** Allocates a clip whose every sample is the skeleton's default pose. */
export function createRawClip(
  name: string,
  skeleton: Skeleton,
  sampleRate: number,
  sampleCount: number,
  unit: LengthUnit,
): RawClip {
  const boneCount = skeleton.boneNames.length;
  const clip: RawClip = {
    name,
    skeleton,
    sampleRate,
    sampleCount,
    unit,
    rotations: new Float32Array(boneCount * sampleCount * 4),
    translations: new Float32Array(boneCount * sampleCount * 3),
    scales: new Float32Array(boneCount * sampleCount * 3),
  };
  const d = skeleton.defaultPose;
  for (let b = 0; b < boneCount; b++) {
    fillTrack(clip.rotations, b, sampleCount, d.subarray(b * POSE_STRIDE, b * POSE_STRIDE + 4));
    fillTrack(clip.translations, b, sampleCount, d.subarray(b * POSE_STRIDE + 4, b * POSE_STRIDE + 7));
    fillTrack(clip.scales, b, sampleCount, d.subarray(b * POSE_STRIDE + 7, b * POSE_STRIDE + 10));
  }
  return clip;
}

/** Sets every sample of bone `b`'s track to `value`: one sample written, then copied in doubling runs. */
function fillTrack(track: Float32Array, b: number, sampleCount: number, value: Float32Array): void {
  const width = value.length;
  const start = b * sampleCount * width;
  const end = start + sampleCount * width;
  if (end === start) return;
  track.set(value, start);
  for (let filled = width; start + filled < end; filled *= 2)
    track.copyWithin(start + filled, start, Math.min(start + filled, end - filled));
}

/** Copies sample `s` of every bone into `outPose` ({@link POSE_STRIDE} floats per bone). */
export function readSamplePose(clip: RawClip, s: number, outPose: Float32Array): Float32Array {
  const n = clip.sampleCount;
  const boneCount = clip.skeleton.boneNames.length;
  for (let b = 0; b < boneCount; b++) {
    const i = b * n + s;
    const o = b * POSE_STRIDE;
    outPose[o] = clip.rotations[i * 4];
    outPose[o + 1] = clip.rotations[i * 4 + 1];
    outPose[o + 2] = clip.rotations[i * 4 + 2];
    outPose[o + 3] = clip.rotations[i * 4 + 3];
    outPose[o + 4] = clip.translations[i * 3];
    outPose[o + 5] = clip.translations[i * 3 + 1];
    outPose[o + 6] = clip.translations[i * 3 + 2];
    outPose[o + 7] = clip.scales[i * 3];
    outPose[o + 8] = clip.scales[i * 3 + 1];
    outPose[o + 9] = clip.scales[i * 3 + 2];
  }
  return outPose;
}

/** Writes `pose` as sample `s` of every bone. */
export function writeSamplePose(clip: RawClip, s: number, pose: Float32Array): void {
  const n = clip.sampleCount;
  const boneCount = clip.skeleton.boneNames.length;
  for (let b = 0; b < boneCount; b++) {
    const i = b * n + s;
    const o = b * POSE_STRIDE;
    clip.rotations[i * 4] = pose[o];
    clip.rotations[i * 4 + 1] = pose[o + 1];
    clip.rotations[i * 4 + 2] = pose[o + 2];
    clip.rotations[i * 4 + 3] = pose[o + 3];
    clip.translations[i * 3] = pose[o + 4];
    clip.translations[i * 3 + 1] = pose[o + 5];
    clip.translations[i * 3 + 2] = pose[o + 6];
    clip.scales[i * 3] = pose[o + 7];
    clip.scales[i * 3 + 1] = pose[o + 8];
    clip.scales[i * 3 + 2] = pose[o + 9];
  }
}

/** Largest magnitude a translation or scale component may have. */
export const MAX_MAGNITUDE = 1e30;

/**
 * Checks the clip's invariants: 1 to MAX_BONES bones (src/shared/pose-layout.ts) whose parents
 * precede them, array lengths, a positive finite sample rate, at least one sample, finite
 * values no larger than {@link MAX_MAGNITUDE} and non-zero quaternions. Linear in bones ×
 * samples whatever the hierarchy's depth. Throws {@link ClipError} naming the clip, bone and
 * sample of the first problem.
 */
export function validateRawClip(clip: RawClip): void {
  const boneCount = clip.skeleton.boneNames.length;
  const n = clip.sampleCount;
  const where = `clip "${clip.name}"`;
  if (boneCount === 0) throw new ClipError('BAD_CLIP', `${where}: no bones`);
  if (boneCount > MAX_BONES)
    throw new ClipError('BAD_CLIP', `${where}: ${boneCount} bones, more than the ${MAX_BONES} a .bpk clip holds`);
  const parents = clip.skeleton.parents;
  if (parents.length !== boneCount)
    throw new ClipError('BAD_SKELETON', `${where}: ${parents.length} parents for ${boneCount} bones`);
  for (let b = 0; b < boneCount; b++) {
    // Parents first: every walk over the hierarchy is then one pass in bone order.
    if (!(parents[b] >= -1 && parents[b] < b))
      throw new ClipError('BAD_SKELETON', `${where}: bone ${b} has parent ${parents[b]}; parents must come first`);
  }
  if (!Number.isInteger(n) || n < 1) throw new ClipError('BAD_CLIP', `${where}: sample count ${n} (need at least 1)`);
  if (!(clip.sampleRate > 0) || !Number.isFinite(clip.sampleRate))
    throw new ClipError('BAD_CLIP', `${where}: sample rate ${clip.sampleRate} Hz (need > 0)`);
  if (clip.rotations.length !== boneCount * n * 4)
    throw new ClipError(
      'BAD_CLIP',
      `${where}: rotations hold ${clip.rotations.length} floats, expected ${boneCount * n * 4}`,
    );
  if (clip.translations.length !== boneCount * n * 3)
    throw new ClipError(
      'BAD_CLIP',
      `${where}: translations hold ${clip.translations.length} floats, expected ${boneCount * n * 3}`,
    );
  if (clip.scales.length !== boneCount * n * 3)
    throw new ClipError(
      'BAD_CLIP',
      `${where}: scales hold ${clip.scales.length} floats, expected ${boneCount * n * 3}`,
    );
  const times = clip.sampleTimes;
  if (times) {
    if (times.length !== n) throw new ClipError('BAD_CLIP', `${where}: ${times.length} sample times for ${n} samples`);
    if (times[0] !== clipStartTime(clip))
      throw new ClipError(
        'BAD_CLIP',
        `${where}: sample 0 at ${times[0]} s, but the clip starts at ${clipStartTime(clip)} s`,
      );
    for (let s = 1; s < n; s++) {
      if (!(times[s] >= times[s - 1]) || !Number.isFinite(times[s]))
        throw new ClipError(
          'BAD_CLIP',
          `${where}: sample ${s} at ${times[s]} s follows sample ${s - 1} at ${times[s - 1]} s`,
        );
    }
  }
  const check = (arr: Float32Array, width: number, what: string) => {
    for (let i = 0; i < arr.length; i++) {
      // Far beyond any real skeleton; keeps range arithmetic (min + 2 · extent) inside float32.
      // Written so that NaN fails too.
      if (!(Math.abs(arr[i]) <= MAX_MAGNITUDE)) {
        const t = Math.floor(i / width);
        throw new ClipError(
          'BAD_CLIP',
          `${where}: bone ${clip.skeleton.boneNames[Math.floor(t / n)]} sample ${t % n}: ${what} is ${arr[i]}`,
        );
      }
    }
  };
  check(clip.rotations, 4, 'rotation');
  check(clip.translations, 3, 'translation');
  check(clip.scales, 3, 'scale');
  for (let t = 0; t < boneCount * n; t++) {
    const r = clip.rotations;
    const len2 =
      r[t * 4] * r[t * 4] + r[t * 4 + 1] * r[t * 4 + 1] + r[t * 4 + 2] * r[t * 4 + 2] + r[t * 4 + 3] * r[t * 4 + 3];
    if (len2 < 1e-12)
      throw new ClipError(
        'BAD_CLIP',
        `${where}: bone ${clip.skeleton.boneNames[Math.floor(t / n)]} sample ${t % n}: zero-length rotation quaternion`,
      );
  }
}
