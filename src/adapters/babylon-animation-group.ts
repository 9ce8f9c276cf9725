/**
 * Compressed clips as Babylon.js `AnimationGroup`s, in one of two modes:
 *
 * - `'decode'`: the clip is decoded once into Babylon keyframes (one key per sample, at the
 *   clip's own times), so Babylon plays plain animations and the compressed bytes can be
 *   dropped;
 * - `'resident'`: the clip stays compressed. Each targeted animation holds two keys (for the
 *   group's range) and reads its value out of one pose per group, decoded by the runtime
 *   sampler the first time any of the group's animations asks for a new time, so a frame
 *   costs one pose decode per group however many bones it moves.
 *
 * Either way Babylon's own `Animatable`s drive the nodes, so `play`, `goToFrame`, speed
 * ratios, weights, blending and animation events work as with the loader's groups.
 */
import { Animation } from '@babylonjs/core/Animations/animation.js';
import { AnimationGroup } from '@babylonjs/core/Animations/animationGroup.js';
import { Quaternion, Vector3 } from '@babylonjs/core/Maths/math.vector.js';
import type { IAnimationKey } from '@babylonjs/core/Animations/animationKey.js';
import type { MorphTarget } from '@babylonjs/core/Morph/morphTarget.js';
import type { TransformNode } from '@babylonjs/core/Meshes/transformNode.js';
import type { Scene } from '@babylonjs/core/scene.js';

import type { CompressedClip } from '../runtime/compressed-clip.js';
import { POSE_STRIDE } from '../runtime/pose.js';
import { isStepTrack, keyTime } from '../runtime/clip-inspection.js';
import { sampleKey, type SampleOptions } from '../runtime/sampler.js';
import { PoseContext } from './pose-context.js';

/** How a group plays its clip: keyframes decoded at load, or the compressed clip itself. */
export type BabylonClipMode = 'decode' | 'resident';

/** One node's morph-weight bones: from `firstBone` on, bone t's translation x over `scales[t]` is weight t of each target list. */
export interface BabylonMorphWeights {
  readonly firstBone: number;
  readonly scales: readonly number[];
  /** Per morph target index t, the Babylon `MorphTarget`s it drives (one per primitive mesh of the node). */
  readonly targets: readonly (readonly MorphTarget[])[];
}

/** Options of {@link createAnimationGroup}. */
export interface AnimationGroupOptions {
  /** The group's name. Default: the clip's name, else `'bonepress'`. */
  name?: string;
  /** Default `'decode'`. */
  mode?: BabylonClipMode;
  /** Babylon frames per second of the group (the glTF loader's `targetFps`, 60 by default). */
  fps?: number;
  /** Multiplies translations (0.01 plays a centimetre clip in a metre scene). Default 1. */
  translationScale?: number;
  /** Morph-weight bones (a `BONEPRESS_animation_compression` clip's weight bones), see {@link BabylonMorphWeights}. */
  morphWeights?: readonly BabylonMorphWeights[];
  /** An empty group to fill instead of a new one (the glTF extension makes it as the loader does). */
  group?: AnimationGroup;
}

const CLAMP: SampleOptions = { looping: 'clamp' };
const PROPERTY = ['rotationQuaternion', 'position', 'scaling'] as const;
/** Pose offset of each kind (rotation, translation, scale) within a bone. */
const KIND_OFFSET = [0, 4, 7] as const;
/** Babylon's `AnimationKeyInterpolation.STEP`. */
const STEP_KEY = 1;

/**
 * A Babylon `Animation` whose value at a frame comes from its group's decoded pose: kind 0
 * a rotation quaternion, 1 a translation (times `scale`), 2 a scale (minus `scale` in an
 * additive group, see {@link channelValue}), 3 a morph weight (translation x over `scale`).
 * Its keys only span the group's range.
 */
export class ResidentAnimation extends Animation {
  private readonly value: Quaternion | Vector3 | undefined;

  /** @internal Made by {@link createAnimationGroup}. */
  constructor(
    name: string,
    property: string,
    fps: number,
    private readonly source: PoseContext,
    private readonly offset: number,
    private readonly kind: number,
    private readonly scale: number,
  ) {
    super(
      name,
      property,
      fps,
      kind === 0
        ? Animation.ANIMATIONTYPE_QUATERNION
        : kind === 3
          ? Animation.ANIMATIONTYPE_FLOAT
          : Animation.ANIMATIONTYPE_VECTOR3,
    );
    this.value = kind === 0 ? new Quaternion() : kind === 3 ? undefined : new Vector3();
  }

  /**
   * Babylon's per-frame evaluation hook (`RuntimeAnimation` calls it with the group's frame):
   * the value at `frame / framePerSecond` seconds. The returned object is reused; Babylon
   * copies it into the target or blends from it.
   */
  override _interpolate(
    currentFrame: number,
    state: Parameters<Animation['_interpolate']>[1],
    searchClosestKeyOnly = false,
  ): unknown {
    // A finished non-looping range, and key searches, keep Babylon's own behaviour.
    if (searchClosestKeyOnly || (state.loopMode === Animation.ANIMATIONLOOPMODE_CONSTANT && state.repeatCount > 0)) {
      return super._interpolate(currentFrame, state, searchClosestKeyOnly);
    }
    const pose = this.source.at(currentFrame / this.framePerSecond);
    const o = this.offset;
    const value = this.value;
    if (value instanceof Quaternion) return value.set(pose[o], pose[o + 1], pose[o + 2], pose[o + 3]);
    if (this.kind === 2)
      return (value as Vector3).set(pose[o] - this.scale, pose[o + 1] - this.scale, pose[o + 2] - this.scale);
    if (value) return value.set(pose[o] * this.scale, pose[o + 1] * this.scale, pose[o + 2] * this.scale);
    return pose[o] / this.scale;
  }
}

/**
 * What one animation of the group reads: pose offset, kind (0–3 as in {@link ResidentAnimation}),
 * scale, and its target. A scale channel's `scale` is what it subtracts: 1 in an additive
 * group, whose clip stores scales plus one (docs/format.md, section 6d) and which Babylon
 * adds to the base as they are, else 0.
 */
interface Channel {
  readonly offset: number;
  readonly kind: number;
  readonly scale: number;
  readonly step: boolean;
  readonly target: TransformNode | MorphTarget;
}

/** A value of `channel` out of `pose`, as Babylon stores it. */
function channelValue(channel: Channel, pose: Float32Array): Quaternion | Vector3 | number {
  const o = channel.offset,
    k = channel.scale;
  if (channel.kind === 0) return new Quaternion(pose[o], pose[o + 1], pose[o + 2], pose[o + 3]);
  if (channel.kind === 3) return pose[o] / k;
  if (channel.kind === 2) return new Vector3(pose[o] - k, pose[o + 1] - k, pose[o + 2] - k);
  return new Vector3(pose[o] * k, pose[o + 1] * k, pose[o + 2] * k);
}

/**
 * Makes a Babylon `AnimationGroup` of `compressed` in `scene`, each bone driving
 * `nodes[bone]` (a `TransformNode`; undefined leaves the bone unbound) on the properties the
 * source animates (`compressed.hasChannel`), and each morph-weight bone its `MorphTarget`s'
 * `influence`.
 *
 * Time base: Babylon frame f is time f / fps seconds on the clip's own timeline, so the
 * group runs from frame 0 to `duration × fps` as Babylon's glTF loader shows the source
 * animation (`normalize(0)`). Before the first sample the first pose holds, after the
 * last the last. Sampled tracks blend between samples (Babylon's slerp / lerp in
 * `'decode'` mode, the runtime's interpolation in `'resident'` mode); STEP tracks hold each
 * sample.
 *
 * A clip stored additive (`compressed.additive`) makes an additive group (`isAdditive`,
 * weight 1) whose values are Babylon's additive deltas (rotation base · delta, translation
 * and scale base + delta): it plays over base groups that have a weight themselves (not −1,
 * Babylon's default), since Babylon adds additive animations only in its weighted blend.
 */
export function createAnimationGroup(
  compressed: CompressedClip,
  nodes: readonly (TransformNode | undefined)[],
  scene: Scene,
  options: AnimationGroupOptions = {},
): AnimationGroup {
  const fps = options.fps ?? 60;
  const translationScale = options.translationScale ?? 1;
  const additive = compressed.additive !== undefined;
  const scaleOffset = additive ? 1 : 0;
  const channels: Channel[] = [];
  nodes.forEach((node, b) => {
    if (!node) return;
    for (let kind = 0; kind < 3; kind++) {
      if (!compressed.hasChannel(b, kind)) continue;
      if (kind === 0 && !node.rotationQuaternion) node.rotationQuaternion = Quaternion.FromEulerVector(node.rotation);
      channels.push({
        offset: b * POSE_STRIDE + KIND_OFFSET[kind],
        kind,
        scale: kind === 1 ? translationScale : kind === 2 ? scaleOffset : 1,
        step: isStepTrack(compressed, b, kind),
        target: node,
      });
    }
  });
  for (const { firstBone, scales, targets } of options.morphWeights ?? []) {
    targets.forEach((list, t) => {
      const bone = firstBone + t;
      for (const target of list)
        channels.push({
          offset: bone * POSE_STRIDE + 4,
          kind: 3,
          scale: scales[t],
          step: isStepTrack(compressed, bone, 1),
          target,
        });
    });
  }

  const group = options.group ?? new AnimationGroup(options.name ?? compressed.name ?? 'bonepress', scene);
  const name = group.name;
  const endFrame = compressed.duration * fps;
  const property = (c: Channel) => (c.kind === 3 ? 'influence' : PROPERTY[c.kind]);
  if (options.mode === 'resident') {
    const source = new PoseContext(compressed);
    const first = source.at(compressed.startTime).slice(),
      last = source.at(compressed.duration);
    channels.forEach((c, i) => {
      const animation = new ResidentAnimation(`${name}_${i}`, property(c), fps, source, c.offset, c.kind, c.scale);
      animation.setKeys([
        { frame: compressed.startTime * fps, value: channelValue(c, first) },
        { frame: endFrame, value: channelValue(c, last) },
      ]);
      group.addTargetedAnimation(animation, c.target);
    });
  } else {
    // Key times (the source's own where they lie on no grid) before the clip's end, then the end itself: keys span exactly [startTime, duration].
    const sampler = compressed.createSampler();
    const pose = new Float32Array(compressed.boneCount * POSE_STRIDE);
    const keys: IAnimationKey[][] = channels.map(() => []);
    const addKeys = (frame: number) =>
      channels.forEach((c, i) =>
        keys[i].push(
          c.step
            ? { frame, value: channelValue(c, pose), interpolation: STEP_KEY }
            : { frame, value: channelValue(c, pose) },
        ),
      );
    for (let k = 0; k < compressed.sampleCount; k++) {
      const time = keyTime(compressed, k);
      if (k > 0 && time >= compressed.duration) break;
      sampleKey(sampler, k, pose);
      addKeys(time * fps);
    }
    sampler.sample(compressed.duration, pose, CLAMP);
    if (keys[0]?.[keys[0].length - 1].frame !== endFrame) addKeys(endFrame);
    channels.forEach((c, i) => {
      const type =
        c.kind === 0
          ? Animation.ANIMATIONTYPE_QUATERNION
          : c.kind === 3
            ? Animation.ANIMATIONTYPE_FLOAT
            : Animation.ANIMATIONTYPE_VECTOR3;
      const animation = new Animation(`${name}_${i}`, property(c), fps, type);
      animation.setKeys(keys[i], true);
      group.addTargetedAnimation(animation, c.target);
    });
  }
  if (additive) {
    // Babylon adds an additive animation to the base only in its weighted blend (late bindings).
    group.isAdditive = true;
    group.weight = 1;
  }
  group.normalize(0);
  return group;
}
