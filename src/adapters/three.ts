/**
 * `bonepress/three`: compressed clips in three.js.
 *
 * - {@link createMixerClip}: an `AnimationClip` that `AnimationMixer` plays like any other
 *   (crossfades, weights, loop modes, additive blending), decoded from the compressed data;
 * - {@link CompressedClipPlayer}: a direct player that writes one skeleton's bones, without
 *   a mixer.
 *
 * Imports the runtime and three.js (a peer dependency), nothing from the compressor, so a
 * browser bundle gets the decoder and these files. Nothing here needs WebGL: it runs in
 * Node too (tests, servers that pose characters).
 */
import type { Bone, Mesh, Object3D, Skeleton } from 'three';

import type { CompressedClip, Looping, Rounding, SampleOptions } from '../runtime/compressed-clip.js';
import type { ClipSampler } from '../runtime/sampler.js';
import { POSE_STRIDE } from '../runtime/pose.js';
import { FormatError } from '../runtime/errors.js';
import { bindBones, findWeightBones, listNames, type BindOptions } from './three-binding.js';

export {
  bindBones,
  findWeightBones,
  gltfNodeObjects,
  sanitizeNodeName,
  type BindableClip,
  type BindOptions,
  type BoneBinding,
  type LoadedGltf,
  type WeightBones,
} from './three-binding.js';
export { CompressedAnimationClip, createMixerClip, type MixerClipOptions } from './three-mixer.js';
export {
  BONEPRESS_EXTENSION,
  BonepressGLTFLoaderPlugin,
  type BonepressGLTFLoaderPluginOptions,
} from './three-gltf-plugin.js';

/**
 * What the player needs from a clip: {@link CompressedClip} satisfies it (the player samples
 * it with a sampler of its own), and so can any other clip with the same
 * 10-floats-per-bone pose layout that has a `sample` method instead.
 */
export type PlayableClip = Pick<
  CompressedClip,
  'boneCount' | 'boneNames' | 'sampleCount' | 'sampleRate' | 'duration' | 'startTime'
> &
  Partial<Pick<CompressedClip, 'nodeIndices' | 'createSampler' | 'additive'> & Pick<ClipSampler, 'sample'>>;

/** Options of {@link CompressedClipPlayer}. */
export interface CompressedClipPlayerOptions extends BindOptions {
  /**
   * `'repeat'` repeats with period `duration` as three.js's `LoopRepeat` does, `'wrap'`
   * blends the last sample back into the first, `'clamp'` holds the first/last pose.
   * Default `'repeat'`.
   */
  loop?: Looping;
  /** Playback rate: 1 is real time, 0.5 half speed, negative plays backwards. Default 1. */
  timeScale?: number;
  /** Sampling between keys (see the runtime's `SampleOptions`). Default `'none'` (interpolate). */
  rounding?: Rounding;
  /**
   * Multiplies translations, to convert the clip's unit into the scene's (0.01 plays a
   * centimetre clip in a metre scene). Default 1.
   */
  translationScale?: number;
  /** Receives the warning listing unbound bones. Default `console.warn`. */
  onWarning?: (message: string) => void;
  /** Start time in seconds. Default 0. The pose is applied once on construction. */
  time?: number;
}

/** Defaults of {@link CompressedClipPlayerOptions}. */
export const PLAYER_DEFAULTS = {
  loop: 'repeat',
  timeScale: 1,
  rounding: 'none',
  translationScale: 1,
  time: 0,
} as const satisfies Required<Omit<CompressedClipPlayerOptions, keyof BindOptions | 'onWarning'>>;

/**
 * Drives the bones of a three.js `Skeleton` from a compressed clip, without a mixer.
 *
 * ```ts
 * const clip = CompressedClip.open(bytes);
 * const player = new CompressedClipPlayer(clip, skinnedMesh.skeleton, { associations: gltf.parser.associations });
 * renderer.setAnimationLoop(() => { player.update(timer.getDelta()); renderer.render(scene, camera); });
 * ```
 *
 * The pose buffer is allocated once; {@link update}, {@link setTime} and {@link apply}
 * allocate nothing. Clip bones that bind to nothing are listed in {@link unboundBones}
 * (and warned about) and skipped; skeleton bones the clip does not drive keep whatever
 * transform they have.
 */
export class CompressedClipPlayer {
  /** The clip being played. */
  readonly clip: PlayableClip;
  /** The skeleton whose bones are written. */
  readonly skeleton: Skeleton;
  /** Clip bones that bind to no bone of {@link skeleton}, in clip order. */
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
  /** Morph influences the clip's weight bones set: per mesh, its influences, the first weight bone's translation x and each target's scale. */
  private readonly weights: readonly { influences: number[]; offset: number; scales: Float32Array }[];
  /** Reused for every sample call, so playing allocates nothing. */
  private readonly sampleOptions: SampleOptions = { looping: 'clamp', rounding: 'none' };
  /** The player's own sampler, or the clip itself when it samples but makes no sampler. */
  private readonly sampler: Pick<ClipSampler, 'sample'>;

  /**
   * Binds `clip` to `skeleton` (by node index, bone map or sanitized name, see
   * {@link bindBones}) and applies the pose at `options.time`. Unbound bones go to
   * `options.onWarning` (default `console.warn`). Throws {@link FormatError} (code
   * BAD_ARGUMENT) when the clip has neither bone names nor node indices to bind by, with
   * `strict` when a bone binds to nothing, or for an additive clip (its poses are deltas).
   */
  constructor(clip: PlayableClip, skeleton: Skeleton, options: CompressedClipPlayerOptions = {}) {
    if (clip.additive)
      throw new FormatError(
        'BAD_ARGUMENT',
        'the clip is additive (its poses are deltas to a base): play it through createMixerClip, or apply its poses with applyAdditivePose',
      );
    this.clip = clip;
    this.skeleton = skeleton;
    const sampler = clip.createSampler?.() ?? clip;
    if (sampler.sample === undefined)
      throw new FormatError('BAD_ARGUMENT', 'the clip has neither createSampler nor sample');
    this.sampler = sampler as Pick<ClipSampler, 'sample'>;
    this.loop = options.loop ?? PLAYER_DEFAULTS.loop;
    this.timeScale = options.timeScale ?? PLAYER_DEFAULTS.timeScale;
    this.rounding = options.rounding ?? PLAYER_DEFAULTS.rounding;
    this.translationScale = options.translationScale ?? PLAYER_DEFAULTS.translationScale;
    this.pose = new Float32Array(clip.boneCount * POSE_STRIDE);

    // Morph-weight bones (a glTF file's `<node>.weights[<t>]`) set influences; the bones before them bind as transforms.
    const weights = findWeightBones(clip, skeleton, options);
    const transformBones = weights.reduce((n, w) => Math.min(n, w.firstBone), clip.boneCount);
    const bindable =
      transformBones === clip.boneCount
        ? clip
        : {
            boneCount: transformBones,
            boneNames: (options.boneNames ?? clip.boneNames)?.slice(0, transformBones),
            nodeIndices: (options.nodeIndices ? Int32Array.from(options.nodeIndices) : clip.nodeIndices)?.subarray(
              0,
              transformBones,
            ),
          };
    this.weights = weights.flatMap((w) =>
      w.objects.map((object) => ({
        influences: (object as Mesh).morphTargetInfluences!,
        offset: w.firstBone * POSE_STRIDE + 4,
        scales: Float32Array.from(w.scales),
      })),
    );
    const { objects, unboundBones } =
      bindable === clip
        ? bindBones(clip, skeleton, options)
        : bindBones(bindable, skeleton, { ...options, boneNames: undefined, nodeIndices: undefined });
    const bones: Bone[] = [];
    const offsets: number[] = [];
    objects.forEach((object, b) => {
      if (!object || !skeleton.bones.includes(object as Bone)) return;
      bones.push(object as Bone);
      offsets.push(b * POSE_STRIDE);
    });
    this.bones = bones;
    this.offsets = Int32Array.from(offsets);
    this.unboundBones = unboundBones;
    if (unboundBones.length > 0) {
      (options.onWarning ?? console.warn)(
        `bonepress: ${unboundBones.length} of ${clip.boneCount} clip bones bind to no bone of the skeleton and will not move: ${listNames(unboundBones)}`,
      );
    }
    const driven = new Set<Object3D>(bones);
    this.unanimatedBones = skeleton.bones.filter((bone) => !driven.has(bone)).map((bone) => bone.name);
    this.setTime(options.time ?? PLAYER_DEFAULTS.time);
  }

  /**
   * Current time in seconds, on the clip's own timeline: in [0, duration) with `'repeat'`,
   * in [startTime, startTime + period) with `'wrap'` (period = sampleCount / sampleRate, the
   * last sample blending back into the first), in [0, duration] with `'clamp'`.
   */
  get time(): number {
    return this.currentTime;
  }

  /** Clip duration in seconds, from time 0 (see `CompressedClip.duration`). */
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
      const start = this.clip.startTime;
      t = (t - start) % period;
      if (t < 0) t += period;
      t += start;
    } else if (this.loop === 'repeat') {
      const period = this.clip.duration;
      t = period > 0 ? t % period : 0;
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
    const pose = this.sampler.sample(this.currentTime, this.pose, options);
    const bones = this.bones,
      offsets = this.offsets,
      k = this.translationScale;
    for (let i = 0; i < bones.length; i++) {
      const bone = bones[i];
      const o = offsets[i];
      bone.quaternion.set(pose[o], pose[o + 1], pose[o + 2], pose[o + 3]);
      bone.position.set(pose[o + 4] * k, pose[o + 5] * k, pose[o + 6] * k);
      bone.scale.set(pose[o + 7], pose[o + 8], pose[o + 9]);
    }
    for (const { influences, offset, scales } of this.weights) {
      for (let t = 0; t < scales.length; t++) influences[t] = pose[offset + t * POSE_STRIDE] / scales[t];
    }
    return this;
  }
}
