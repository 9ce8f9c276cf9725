/**
 * A direct player for Babylon.js: a compressed clip written straight to the transform nodes
 * of a loaded character, without the glTF extension or an `AnimationGroup` (one character,
 * one clip, the caller's clock).
 */
import { Quaternion } from '@babylonjs/core/Maths/math.vector.js';
import type { Node } from '@babylonjs/core/node.js';
import type { TransformNode } from '@babylonjs/core/Meshes/transformNode.js';

import type { CompressedClip } from '../runtime/compressed-clip.js';
import { FORMAT_ERROR, FormatError } from '../runtime/errors.js';
import { POSE_STRIDE } from '../runtime/pose.js';
import type { ClipSampler, Looping, SampleOptions } from '../runtime/sampler.js';

/** Options of {@link bindNodes}. */
export interface BabylonBindOptions {
  /**
   * The glTF loader's node list, `loader.gltf.nodes` (each with its `_babylonTransformNode`):
   * with a clip that carries glTF node indices, each bone binds to the node made from its glTF
   * node, unnamed nodes included. Without it, node indices bind through the JSON pointers
   * (`/nodes/i`) the loader records on every node it makes.
   */
  gltfNodes?: readonly { _babylonTransformNode?: TransformNode }[];
  /** glTF node index of every bone in clip order, for a clip stored without them. Default: the clip's own. */
  nodeIndices?: ArrayLike<number>;
  /** Clip bone name → Babylon node name, tried before the bone's own name. */
  boneMap?: Readonly<Record<string, string>>;
  /** Throw when a bone does not bind instead of reporting it. Default false. */
  strict?: boolean;
}

/** What a clip offers for binding: {@link CompressedClip} satisfies it. */
export type BabylonBindableClip = Pick<CompressedClip, 'boneCount' | 'boneNames' | 'nodeIndices'>;

/** The JSON pointers Babylon's glTF loader records on what it makes (`_internalMetadata.gltf.pointers`). */
function pointersOf(node: Node): readonly string[] {
  return (
    (node as unknown as { _internalMetadata?: { gltf?: { pointers?: string[] } } })._internalMetadata?.gltf?.pointers ??
    []
  );
}

function isTransformNode(node: Node): node is TransformNode {
  return 'position' in node && 'scaling' in node;
}

/**
 * The transform node each bone of `clip` drives under `root` (itself included): by glTF node
 * index (through `options.gltfNodes`, else the loader's pointers), else by `options.boneMap`,
 * else by name (Babylon keeps glTF node names as they are). Returns the nodes (undefined
 * where a bone binds to nothing) and the unbound bones' names. Throws {@link FormatError}
 * (BAD_ARGUMENT) with `strict` when a bone does not bind, or when the clip has neither names
 * nor node indices.
 */
export function bindNodes(
  clip: BabylonBindableClip,
  root: Node,
  options: BabylonBindOptions = {},
): { nodes: (TransformNode | undefined)[]; unboundBones: string[] } {
  const indices = options.nodeIndices ?? clip.nodeIndices;
  if (!indices && !clip.boneNames) {
    throw new FormatError(
      FORMAT_ERROR.BAD_ARGUMENT,
      'the clip has neither bone names nor node indices to bind by; pass options.nodeIndices',
    );
  }
  const all = [root, ...root.getDescendants(false)].filter(isTransformNode);
  const byIndex = new Map<number, TransformNode>();
  for (const node of all) {
    for (const p of pointersOf(node)) {
      const m = /^\/nodes\/(\d+)$/.exec(p);
      if (m && !byIndex.has(Number(m[1]))) byIndex.set(Number(m[1]), node);
    }
  }
  const byName = new Map<string, TransformNode>();
  for (const node of all) if (!byName.has(node.name)) byName.set(node.name, node);
  const nodes: (TransformNode | undefined)[] = [];
  const unboundBones: string[] = [];
  for (let b = 0; b < clip.boneCount; b++) {
    const j = indices?.[b];
    const name = clip.boneNames?.[b];
    let node =
      j === undefined || j < 0
        ? undefined
        : options.gltfNodes
          ? options.gltfNodes[j]?._babylonTransformNode
          : byIndex.get(j);
    if (!node && name !== undefined) node = byName.get(options.boneMap?.[name] ?? name);
    nodes.push(node);
    if (!node) unboundBones.push(name ?? `bone ${b}`);
  }
  if (options.strict && unboundBones.length > 0) {
    throw new FormatError(
      FORMAT_ERROR.BAD_ARGUMENT,
      `${unboundBones.length} of ${clip.boneCount} bones bind to nothing in the scene: ${unboundBones.slice(0, 10).join(', ')}`,
    );
  }
  return { nodes, unboundBones };
}

/** Options of {@link BabylonClipPlayer}. */
export interface BabylonClipPlayerOptions extends BabylonBindOptions {
  /** `'repeat'` (period `duration`, as Babylon loops a glTF group), `'wrap'` or `'clamp'`, as the runtime's `Looping`. Default `'repeat'`. */
  loop?: Looping;
  /** Playback rate: 1 is real time, negative plays backwards. Default 1. */
  timeScale?: number;
  /** Multiplies translations (0.01 plays a centimetre clip in a metre scene). Default 1. */
  translationScale?: number;
  /** Start time in seconds. Default 0. The pose is applied once on construction. */
  time?: number;
}

/**
 * Drives the transform nodes of a Babylon character from a compressed clip, without an
 * `AnimationGroup`:
 *
 * ```ts
 * const player = new BabylonClipPlayer(CompressedClip.open(bytes), container.rootNodes[0]);
 * scene.onBeforeAnimationsObservable.add(() => player.update(engine.getDeltaTime() / 1000));
 * ```
 *
 * Writes every bound bone's `rotationQuaternion`, `position` and `scaling` (the paths the
 * source animates). {@link update} and {@link setTime} allocate nothing. It writes absolute
 * poses only: a clip stored additive is refused (play it as an additive `AnimationGroup`,
 * `createAnimationGroup`, over a base group).
 */
export class BabylonClipPlayer {
  /** Clip bones that bind to no node, in clip order. */
  readonly unboundBones: readonly string[];
  /** See {@link BabylonClipPlayerOptions.loop}; may be changed between frames. */
  loop: Looping;
  /** See {@link BabylonClipPlayerOptions.timeScale}; may be changed between frames. */
  timeScale: number;

  private currentTime = 0;
  private readonly sampler: ClipSampler;
  private readonly pose: Float32Array;
  private readonly nodes: TransformNode[] = [];
  /** Per entry of `nodes`: bone pose offset, then a bit mask of the animated paths (1 rotation, 2 translation, 4 scale). */
  private readonly slots: Int32Array;
  private readonly translationScale: number;
  private readonly sampleOptions: SampleOptions = { looping: 'clamp' };

  /**
   * Binds `clip` under `root` (see {@link bindNodes}) and applies the pose at `options.time`.
   * Throws {@link FormatError} (BAD_ARGUMENT) for a clip stored additive.
   */
  constructor(
    readonly clip: CompressedClip,
    root: Node,
    options: BabylonClipPlayerOptions = {},
  ) {
    if (clip.additive)
      throw new FormatError(
        FORMAT_ERROR.BAD_ARGUMENT,
        `clip "${clip.name ?? ''}" is stored additive: its poses are deltas for a base pose, which BabylonClipPlayer does not have; play it with createAnimationGroup (an additive AnimationGroup) over a base group`,
      );
    this.loop = options.loop ?? 'repeat';
    this.timeScale = options.timeScale ?? 1;
    this.translationScale = options.translationScale ?? 1;
    this.sampler = clip.createSampler();
    this.pose = new Float32Array(clip.boneCount * POSE_STRIDE);
    const { nodes, unboundBones } = bindNodes(clip, root, options);
    this.unboundBones = unboundBones;
    const slots: number[] = [];
    nodes.forEach((node, b) => {
      const mask = (clip.hasChannel(b, 0) ? 1 : 0) | (clip.hasChannel(b, 1) ? 2 : 0) | (clip.hasChannel(b, 2) ? 4 : 0);
      if (!node || mask === 0) return;
      node.rotationQuaternion ??= Quaternion.FromEulerVector(node.rotation);
      this.nodes.push(node);
      slots.push(b * POSE_STRIDE, mask);
    });
    this.slots = Int32Array.from(slots);
    this.setTime(options.time ?? 0);
  }

  /** Current time in seconds on the clip's timeline, wrapped or clamped by {@link loop}. */
  get time(): number {
    return this.currentTime;
  }

  /** Advances by `deltaSeconds × timeScale` and applies the pose. A non-finite step counts as 0. */
  update(deltaSeconds: number): this {
    const step = deltaSeconds * this.timeScale;
    return this.setTime(Number.isFinite(step) ? this.currentTime + step : this.currentTime);
  }

  /** Jumps to `seconds` (wrapped or clamped by {@link loop}) and applies the pose. NaN counts as 0. */
  setTime(seconds: number): this {
    let t = Number.isFinite(seconds) ? seconds : 0;
    const clip = this.clip;
    if (this.loop === 'clamp') {
      t = Math.min(Math.max(t, 0), clip.duration);
    } else {
      const start = this.loop === 'wrap' ? clip.startTime : 0;
      const period = this.loop === 'wrap' ? clip.sampleCount / clip.sampleRate : clip.duration;
      t = period > 0 ? start + ((((t - start) % period) + period) % period) : 0;
    }
    this.currentTime = t;
    this.sampleOptions.looping = this.loop;
    const pose = this.sampler.sample(t, this.pose, this.sampleOptions);
    const k = this.translationScale;
    for (let i = 0; i < this.nodes.length; i++) {
      const node = this.nodes[i],
        o = this.slots[2 * i],
        mask = this.slots[2 * i + 1];
      if (mask & 1) node.rotationQuaternion!.set(pose[o], pose[o + 1], pose[o + 2], pose[o + 3]);
      if (mask & 2) node.position.set(pose[o + 4] * k, pose[o + 5] * k, pose[o + 6] * k);
      if (mask & 4) node.scaling.set(pose[o + 7], pose[o + 8], pose[o + 9]);
    }
    return this;
  }
}
