/**
 * Compressed clips as three.js `AnimationClip`s that `AnimationMixer` plays unchanged
 * (`play`, `crossFadeTo`, weights, `timeScale`, every loop mode, `clampWhenFinished`,
 * additive blending), while the data stays compressed in memory.
 *
 * Each track of the clip is a small stand-in (one key) whose interpolant reads from a pose
 * decoded once per action per mixer update: the first track's interpolant decodes the
 * whole pose at the action's time into its action's {@link PoseContext}, the others copy
 * their bone's values out of it. One resident {@link CompressedClip} serves any number of
 * characters and actions; each action owns a small sampler.
 */
import {
  AdditiveAnimationBlendMode,
  AnimationClip,
  DiscreteInterpolant,
  type Interpolant,
  NumberKeyframeTrack,
  Quaternion,
  QuaternionKeyframeTrack,
  VectorKeyframeTrack,
  type AnimationBlendMode,
  type KeyframeTrack,
  type Object3D,
  type TypedArray,
} from 'three';

import type { CompressedClip } from '../runtime/compressed-clip.js';
import { KIND_POSE_OFFSET } from '../runtime/format.js';
import { POSE_STRIDE, identityFloat } from '../runtime/pose.js';
import { PoseContext } from './pose-context.js';
import { bindBones, findWeightBones, listNames, type BindOptions } from './three-binding.js';

/** Options of {@link createMixerClip}. */
export interface MixerClipOptions extends BindOptions {
  /** The AnimationClip's name. Default: the compressed clip's name, else `'bonepress'`. */
  name?: string;
  /**
   * Multiplies translations, to convert the clip's unit into the scene's (0.01 plays a
   * centimetre clip in a metre scene). Default 1.
   */
  translationScale?: number;
  /** Receives the warning listing unbound bones. Default `console.warn`. */
  onWarning?: (message: string) => void;
  /**
   * Bones that carry morph-target weights instead of a transform (a
   * `BONEPRESS_animation_compression` clip's weight bones, docs/gltf-extension.md): from
   * `firstBone` on, one bone per target, whose translation x divided by `scales[t]` is
   * weight t. Each becomes a `morphTargetInfluences` track on every object of `objects` (the
   * meshes three.js made of that glTF node). Weight bones come after every transform bone,
   * and are never bound as transforms. Default: the bones of a loose clip named
   * `<node>.weights[<t>]` (a glTF file's morph weights, see `findWeightBones`).
   */
  morphWeights?: readonly MorphWeightBones[];
}

/** One node's morph-weight bones, see {@link MixerClipOptions.morphWeights}. */
export interface MorphWeightBones {
  readonly firstBone: number;
  readonly scales: readonly number[];
  readonly objects: readonly Object3D[];
}

/**
 * What a track's interpolant reads from the pose: the values from pose offset `offset` on,
 * each times `factor` (a translation's is the translation scale, a rotation's or a scale's
 * 1), or for morph weights, translation x of consecutive bones over `scales` (one weight
 * each). A `rotation` in an additive clip is conj(reference) · q rather than a difference.
 */
interface TrackBinding {
  readonly offset: number;
  readonly rotation?: boolean;
  readonly factor?: number;
  readonly scales?: Float32Array;
}

interface InterpolantFactory {
  createInterpolant: (result?: TypedArray) => Interpolant;
}
const PROPERTY = ['quaternion', 'position', 'scale'] as const;

/**
 * Reads one bone property out of its action's decoded pose. A discrete interpolant over the
 * stand-in's one key, so that it has every method an interpolant needs; `evaluate` never
 * reaches them.
 */
class CompressedInterpolant extends DiscreteInterpolant {
  // `declare`d: the constructor assigns each, so the build emits no list of them.
  declare private readonly context: PoseContext;
  declare private readonly binding: TrackBinding;
  declare private readonly reference: Float32Array | undefined;

  constructor(
    context: PoseContext,
    binding: TrackBinding,
    reference: Float32Array | undefined,
    track: KeyframeTrack,
    result: TypedArray | undefined,
  ) {
    super(track.times, track.values, track.getValueSize(), result);
    this.context = context;
    this.binding = binding;
    this.reference = reference;
  }

  override evaluate(time: number): TypedArray {
    const pose = this.context.at(time);
    const out = this.resultBuffer as Float32Array;
    const { offset: o, factor = 1, scales } = this.binding;
    const ref = this.reference;
    if (ref && this.binding.rotation) {
      // conj(reference) · q (the reference's rotations are stored conjugated), three.js's own
      // product, as its makeClipAdditive stores additive rotations.
      // (Its types say number[]; it indexes any array.)
      type Flat = number[];
      Quaternion.multiplyQuaternionsFlat(
        out as unknown as Flat,
        0,
        ref as unknown as Flat,
        o,
        pose as unknown as Flat,
        o,
      );
      return out;
    }
    // Morph weights read one bone apart; a bone's rotation, translation or scale, consecutive floats.
    for (let i = 0, p = o; i < this.valueSize; i++, p += scales ? POSE_STRIDE : 1) {
      const v = ref ? pose[p] - ref[p] : pose[p];
      out[i] = scales ? v / scales[i] : v * factor;
    }
    return out;
  }
}

/**
 * A compressed clip as a three.js `AnimationClip`: pass it to `mixer.clipAction(clip)`.
 * Made by {@link createMixerClip}. The data stays in {@link compressed}; the tracks are
 * one-key stand-ins (their `times` and `values` hold what the clip plays at its start, for
 * tools that read them) whose interpolants decode the compressed clip.
 */
export class CompressedAnimationClip extends AnimationClip {
  // `declare`d: the constructor assigns each, so the build emits no list of them.
  /** The compressed clip this plays (shared, immutable). */
  declare readonly compressed: CompressedClip;
  /** Clip bones that bind to no object of the scene, in clip order. */
  declare readonly unboundBones: readonly string[];
  /**
   * For an additive clip: the reference pose, rotations conjugated (the identity pose for a
   * clip stored additive, whose poses already are the deltas).
   */
  declare readonly additiveReference: Float32Array | undefined;
  /** Each stand-in track's binding, by the track itself: a copy finds its bindings whatever the user did to `tracks`. */
  readonly #bindings: Map<KeyframeTrack, TrackBinding>;

  /** @internal Use {@link createMixerClip}. */
  constructor(
    name: string,
    compressed: CompressedClip,
    tracks: KeyframeTrack[],
    bindings: readonly (TrackBinding | undefined)[],
    unboundBones: readonly string[],
    additiveReference?: Float32Array,
    blendMode?: AnimationBlendMode,
  ) {
    // AnimationClip's default blend mode is the normal one.
    super(name, compressed.duration, tracks, blendMode ?? (additiveReference && AdditiveAnimationBlendMode));
    this.compressed = compressed;
    this.#bindings = new Map();
    this.unboundBones = unboundBones;
    this.additiveReference = additiveReference;
    // `AnimationAction` creates its interpolants in track order, so the first bound track
    // opens a new per-action context and the others join it; an interpolant made out of
    // order gets a context of its own if none is open. Contexts cache by time, so sharing one
    // never changes a value, only the work. Tracks without a binding are plain keyframe
    // tracks (a glTF animation's channels outside the skeleton).
    let context: PoseContext | undefined;
    const first = bindings.findIndex((binding) => binding !== undefined);
    bindings.forEach((binding, i) => {
      if (!binding) return;
      const track = tracks[i];
      this.#bindings.set(track, binding);
      const factory = track as unknown as InterpolantFactory;
      // An own property shadows KeyframeTrack.prototype.createInterpolant (untyped in @types/three); clone() copies it.
      factory.createInterpolant = (result) => {
        if (i === first || !context) context = new PoseContext(compressed);
        return new CompressedInterpolant(context, binding, additiveReference, track, result);
      };
      // The stand-in's one key: what this clip plays at its start.
      factory.createInterpolant(track.values).evaluate(compressed.startTime);
    });
  }

  /**
   * An additive version of this clip, as three.js's `AnimationUtils.makeClipAdditive`
   * makes of a raw clip: every pose relative to the pose at `referenceFrame / fps` seconds
   * (rotations conj(reference) · q, translations and scales minus the reference), with
   * `AdditiveAnimationBlendMode`. Returns a new clip; this one is unchanged. A clip stored
   * additive (`compressed.additive`) already is: it cannot be made additive again.
   */
  makeAdditive(referenceFrame = 0, fps = 30): CompressedAnimationClip {
    if (this.compressed.additive)
      throw new Error(`bonepress: clip "${this.name}" is stored additive; it plays additive as it is`);
    const reference = new PoseContext(this.compressed).at(referenceFrame / (fps > 0 ? fps : 30));
    // Each rotation normalized and conjugated.
    for (let o = 0; o < reference.length; o += POSE_STRIDE) {
      const len = Math.hypot(reference[o], reference[o + 1], reference[o + 2], reference[o + 3]) || 1;
      for (let i = 0; i < 4; i++) reference[o + i] /= i < 3 ? -len : len;
    }
    return this.#copy(reference);
  }

  /** A copy sharing the compressed data and bindings. */
  override clone(): this {
    return this.#copy(this.additiveReference, this.blendMode) as this;
  }

  /** A copy sharing the compressed data and bindings, with `additiveReference` (and `blendMode`, default additive where it has one). */
  #copy(additiveReference: Float32Array | undefined, blendMode?: AnimationBlendMode): CompressedAnimationClip {
    return new CompressedAnimationClip(
      this.name,
      this.compressed,
      this.tracks.map((t) => t.clone()),
      this.tracks.map((t) => this.#bindings.get(t)),
      this.unboundBones,
      additiveReference,
      blendMode,
    );
  }
}

/**
 * Makes a mixer-native clip of `compressed` for the scene under `root` (the object the
 * `AnimationMixer` animates). Bones bind as {@link bindBones} says; a track is made for
 * every property the source animates (`compressed.hasChannel`), named as three.js's
 * GLTFLoader names it (the object's name, or its uuid when it has none or shares it).
 * Unbound bones go to `options.onWarning` (or throw with `strict`). Time is the clip's
 * own: 0 to `compressed.duration`, as the source's AnimationClip.
 */
export function createMixerClip(
  compressed: CompressedClip,
  root: Object3D,
  options: MixerClipOptions = {},
): CompressedAnimationClip {
  // A loose clip's weight bones are found by their names; an asset's come from its extension (the plugin).
  const weightBones = options.morphWeights ?? findWeightBones(compressed, root, options);
  // Transform bones are those before the first weight bone; only they are bound to objects.
  const transformBones = weightBones.reduce((n, w) => Math.min(n, w.firstBone), compressed.boneCount);
  const bindable =
    transformBones === compressed.boneCount
      ? compressed
      : {
          boneCount: transformBones,
          boneNames: (options.boneNames ?? compressed.boneNames)?.slice(0, transformBones),
          nodeIndices: compressed.nodeIndices?.subarray(0, transformBones),
        };
  const { objects, unboundBones } = bindBones(bindable, root, {
    ...options,
    boneNames: options.boneNames?.slice(0, transformBones),
    nodeIndices:
      options.nodeIndices === undefined ? undefined : Array.from(options.nodeIndices).slice(0, transformBones),
  });
  if (unboundBones.length > 0) {
    const message = `bonepress: ${unboundBones.length} of ${compressed.boneCount} bones of clip "${compressed.name ?? ''}" bind to nothing in the scene and will not move: ${listNames(unboundBones)}`;
    (options.onWarning ?? console.warn)(message);
  }
  // Named as GLTFLoader names tracks, but by uuid where another object of the scene has the name.
  const nameCount = new Map<string, number>();
  root.traverse((o) => {
    if (o.name !== '') nameCount.set(o.name, (nameCount.get(o.name) ?? 0) + 1);
  });
  const trackName = (o: Object3D) => (nameCount.get(o.name) === 1 ? o.name : o.uuid);
  return mixerClipOf(
    compressed,
    objects,
    weightBones,
    options.name ?? compressed.name ?? 'bonepress',
    options.translationScale,
    trackName,
    unboundBones,
  );
}

/**
 * {@link createMixerClip} with the clip's weight bones, the object of each transform bone
 * (`objects`, undefined for the `unboundBones`), the clip's name and the translation scale
 * given: the glTF plugin's, which has them from the extension (so a page that loads assets
 * only carries no name-based search or binding).
 * A track is named `trackName(object)`: by default as GLTFLoader names its own tracks, the
 * object's name, or its uuid when it has none.
 */
export function mixerClipOf(
  compressed: CompressedClip,
  objects: readonly (Object3D | undefined)[],
  weightBones: readonly MorphWeightBones[],
  name: string,
  scale = 1,
  trackName = (o: Object3D) => o.name || o.uuid,
  unboundBones: readonly string[] = [],
): CompressedAnimationClip {
  const tracks: KeyframeTrack[] = [];
  const bindings: TrackBinding[] = [];
  // Each stand-in's one key is filled by the clip, with what it plays at its start.
  objects.forEach((object, b) => {
    if (!object) return;
    for (let kind = 0; kind < 3; kind++) {
      if (!compressed.hasChannel(b, kind)) continue;
      const track = kind ? VectorKeyframeTrack : QuaternionKeyframeTrack;
      tracks.push(new track(`${trackName(object)}.${PROPERTY[kind]}`, [0], new Float32Array(kind ? 3 : 4)));
      bindings.push({
        offset: b * POSE_STRIDE + KIND_POSE_OFFSET[kind],
        rotation: !kind,
        factor: kind === 1 ? scale : 1,
      });
    }
  });
  for (const { firstBone, scales, objects: targets } of weightBones) {
    const binding = { offset: firstBone * POSE_STRIDE + 4, scales: Float32Array.from(scales) };
    for (const object of targets) {
      tracks.push(
        new NumberKeyframeTrack(`${trackName(object)}.morphTargetInfluences`, [0], new Float32Array(scales.length)),
      );
      bindings.push(binding);
    }
  }
  // A clip stored additive holds three.js's additive values relative to the identity pose
  // (its scales stored plus one, runtime/format.ts ADDITIVE_MODE).
  return new CompressedAnimationClip(
    name,
    compressed,
    tracks,
    bindings,
    unboundBones,
    compressed.additive
      ? Float32Array.from({ length: compressed.boneCount * POSE_STRIDE }, (_, i) => identityFloat(i))
      : undefined,
  );
}
