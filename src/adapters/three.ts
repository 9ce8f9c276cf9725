/**
 * `bonepress/three`: plays a compressed clip on a three.js `Skeleton`.
 *
 * Imports only the runtime and three.js types, so a browser bundle gets the decoder and
 * this file, nothing from the compressor. three.js is a peer: the player only calls
 * `quaternion.set`, `position.set` and `scale.set` on the bones it is given, so it also runs
 * in Node without WebGL (tests, servers that pose characters).
 */
import type { Bone, Skeleton } from 'three';

import type { CompressedClip, Looping, Rounding, SampleOptions } from '../runtime/compressed-clip.js';
import { FORMAT_ERROR, FormatError } from '../runtime/errors.js';
import { POSE_STRIDE } from '../runtime/pose.js';

/**
 * What the player needs from a clip: {@link CompressedClip} satisfies it, and so can any
 * other sampler with the same 10-floats-per-bone pose layout.
 */
export type PlayableClip = Pick<CompressedClip, 'boneCount' | 'boneNames' | 'sampleCount' | 'sampleRate' | 'duration' | 'sample'>;

/** Options of {@link CompressedClipPlayer}. */
export interface CompressedClipPlayerOptions {
  /** `'wrap'` repeats the clip, `'clamp'` holds the first/last pose outside it. Default `'wrap'`. */
  loop?: Looping;
  /** Playback rate: 1 is real time, 0.5 half speed, negative plays backwards. Default 1. */
  timeScale?: number;
  /** Sampling between keys (see the runtime's `SampleOptions`). Default `'none'` (interpolate). */
  rounding?: Rounding;
  /**
   * Bone names in clip order, for a clip compressed without its names section
   * (`stripNames`). Default: the clip's own names.
   */
  boneNames?: readonly string[];
  /**
   * Multiplies translations, to convert the clip's unit into the scene's (0.01 plays a
   * centimetre clip in a metre scene). Default 1.
   */
  translationScale?: number;
  /** Start time in seconds. Default 0. The pose is applied once on construction. */
  time?: number;
}

/** Defaults of {@link CompressedClipPlayerOptions}. */
export const PLAYER_DEFAULTS = {
  loop: 'wrap',
  timeScale: 1,
  rounding: 'none',
  translationScale: 1,
  time: 0,
} as const satisfies Required<Omit<CompressedClipPlayerOptions, 'boneNames'>>;

/**
 * Drives the bones of a three.js `Skeleton` from a compressed clip, matching bones by name.
 *
 * ```ts
 * const clip = CompressedClip.open(bytes);
 * const player = new CompressedClipPlayer(clip, skinnedMesh.skeleton, { loop: 'wrap' });
 * if (player.unboundBones.length) console.warn('not in the model:', player.unboundBones);
 * renderer.setAnimationLoop(() => { player.update(timer.getDelta()); renderer.render(scene, camera); });
 * ```
 *
 * The pose buffer is allocated once; {@link update}, {@link setTime} and {@link apply}
 * allocate nothing. Clip bones without a three.js bone of the same name are listed in
 * {@link unboundBones} and skipped; skeleton bones the clip does not name keep whatever
 * transform they have.
 */
export class CompressedClipPlayer {
  /** The clip being played. */
  readonly clip: PlayableClip;
  /** The skeleton whose bones are written. */
  readonly skeleton: Skeleton;
  /** Clip bones that have no bone of the same name in {@link skeleton}, in clip order. */
  readonly unboundBones: readonly string[];
  /** Skeleton bones that no clip bone drives, in skeleton order. */
  readonly unanimatedBones: readonly string[];
  /** See {@link CompressedClipPlayerOptions.loop}; may be changed between frames. */
  loop: Looping;
  /** See {@link CompressedClipPlayerOptions.timeScale}; may be changed between frames. */
  timeScale: number;
  /** See {@link CompressedClipPlayerOptions.rounding}; may be changed between frames. */
  rounding: Rounding;
  /** See {@link CompressedClipPlayerOptions.translationScale}. */
  translationScale: number;

  private currentTime = 0;
  private readonly pose: Float32Array;
  private readonly bones: Bone[];
  /** Pose offset (bone index × POSE_STRIDE) of each entry of `bones`. */
  private readonly offsets: Int32Array;
  /** Reused for every sample call, so playing allocates nothing. */
  private readonly sampleOptions: SampleOptions = { looping: 'clamp', rounding: 'none' };

  /**
   * Binds `clip` to `skeleton` by bone name and applies the pose at `options.time`.
   * Throws {@link FormatError} (code BAD_ARGUMENT) when the clip has no bone names and
   * `options.boneNames` does not supply them, or supplies the wrong number.
   */
  constructor(clip: PlayableClip, skeleton: Skeleton, options: CompressedClipPlayerOptions = {}) {
    const names = options.boneNames ?? clip.boneNames;
    if (!names) {
      throw new FormatError(FORMAT_ERROR.BAD_ARGUMENT, 'the clip has no bone names (compressed with stripNames); pass options.boneNames');
    }
    if (names.length !== clip.boneCount) {
      throw new FormatError(FORMAT_ERROR.BAD_ARGUMENT, `${names.length} bone names for a clip of ${clip.boneCount} bones`);
    }
    this.clip = clip;
    this.skeleton = skeleton;
    this.loop = options.loop ?? PLAYER_DEFAULTS.loop;
    this.timeScale = options.timeScale ?? PLAYER_DEFAULTS.timeScale;
    this.rounding = options.rounding ?? PLAYER_DEFAULTS.rounding;
    this.translationScale = options.translationScale ?? PLAYER_DEFAULTS.translationScale;
    this.pose = new Float32Array(clip.boneCount * POSE_STRIDE);

    const byName = new Map<string, Bone>();
    for (const bone of skeleton.bones) if (!byName.has(bone.name)) byName.set(bone.name, bone);
    const bones: Bone[] = [];
    const offsets: number[] = [];
    const unbound: string[] = [];
    const driven = new Set<Bone>();
    names.forEach((name, b) => {
      const bone = byName.get(name);
      if (!bone) { unbound.push(name); return; }
      bones.push(bone);
      offsets.push(b * POSE_STRIDE);
      driven.add(bone);
    });
    this.bones = bones;
    this.offsets = Int32Array.from(offsets);
    this.unboundBones = unbound;
    this.unanimatedBones = skeleton.bones.filter((bone) => !driven.has(bone)).map((bone) => bone.name);
    this.setTime(options.time ?? PLAYER_DEFAULTS.time);
  }

  /**
   * Current time in seconds: in [0, period) with `'wrap'` (period = sampleCount / sampleRate,
   * the last sample blending back into the first), in [0, duration] with `'clamp'`.
   */
  get time(): number {
    return this.currentTime;
  }

  /** Clip duration in seconds, (sampleCount − 1) / sampleRate. */
  get duration(): number {
    return this.clip.duration;
  }

  /** Advances by `deltaSeconds × timeScale` and applies the pose. A non-finite delta counts as 0. */
  update(deltaSeconds: number): this {
    const step = deltaSeconds * this.timeScale;
    return this.setTime(Number.isFinite(step) ? this.currentTime + step : this.currentTime);
  }

  /** Jumps to `seconds` (wrapped or clamped by {@link loop}) and applies the pose. NaN counts as 0. */
  setTime(seconds: number): this {
    let t = Number.isFinite(seconds) ? seconds : 0;
    if (this.loop === 'wrap') {
      const period = this.clip.sampleCount / this.clip.sampleRate;
      t %= period;
      if (t < 0) t += period;
    } else {
      const end = this.clip.duration;
      t = t < 0 ? 0 : t > end ? end : t;
    }
    this.currentTime = t;
    return this.apply();
  }

  /** Samples the clip at {@link time} and writes every bound bone's quaternion, position and scale. */
  apply(): this {
    const options = this.sampleOptions;
    options.looping = this.loop;
    options.rounding = this.rounding;
    const pose = this.clip.sample(this.currentTime, this.pose, options);
    const bones = this.bones, offsets = this.offsets, k = this.translationScale;
    for (let i = 0; i < bones.length; i++) {
      const bone = bones[i];
      const o = offsets[i];
      bone.quaternion.set(pose[o], pose[o + 1], pose[o + 2], pose[o + 3]);
      bone.position.set(pose[o + 4] * k, pose[o + 5] * k, pose[o + 6] * k);
      bone.scale.set(pose[o + 7], pose[o + 8], pose[o + 9]);
    }
    return this;
  }
}
