/**
 * What a loader needs from a `BONEPRESS_animation_compression` animation
 * (docs/gltf-extension.md), read and checked against the file, for every engine's loader:
 * the glTF node of each bone, the weight entries, the buffer view, and the clip opened and
 * checked against them. Engine-free: the three.js plugin and the Babylon.js extension share it.
 */
import { CompressedClip } from '../runtime/clip.js';
import type { FormatError, FormatErrorCode } from '../runtime/errors.js';

/** The extension's name (docs/gltf-extension.md). */
export const BONEPRESS_EXTENSION = 'BONEPRESS_animation_compression';

/** The glTF JSON a loader holds, as far as the extension reads it. */
export interface ExtensionJson {
  extensions?: Record<string, unknown>;
  bufferViews?: readonly unknown[];
  nodes?: readonly unknown[];
}

/** One weight entry: the node whose morph-target weights `scales.length` bones hold, from `firstBone` on. */
export interface WeightDef {
  readonly node: number;
  readonly scales: readonly number[];
  readonly firstBone: number;
}

/** An animation's bones, in clip order: the table's and node bones' glTF nodes, then the weight entries. */
export interface ExtensionBones {
  /** glTF node of each transform bone: the bone table's joints, then the animation's `nodes`. */
  readonly nodeIndices: readonly number[];
  readonly weights: readonly WeightDef[];
  /** Transform and weight bones. */
  readonly boneCount: number;
  readonly bufferView: number;
  /** The bone table's parents (the first `parents.length` bones); every other bone is a root. */
  readonly parents: readonly number[];
  /**
   * The object's `additive` (false when absent): the clip holds deltas to play over a base
   * (docs/gltf-extension.md, "Additive animations"). Any value but a boolean that agrees with
   * the clip is refused by {@link openExtensionClip}.
   */
  readonly additive: unknown;
}

/** A glTF animation channel, as far as a loader sorts it. */
export interface ChannelDef {
  readonly target?: { readonly node?: number; readonly path?: string };
}

const TRS = ['translation', 'rotation', 'scale'];

/**
 * The animation's channels the clip does not replace: not a translation, rotation or scale
 * of a bone's node, not the weights of a weight node, nor the node-less stub. A loader
 * loads these itself, into the same clip or group. Calls `fail` (which throws) when the
 * animation is additive and has any: glTF channels are absolute poses, which an engine
 * would add to the base.
 */
export function otherChannels<C extends ChannelDef>(
  channels: readonly C[],
  bones: ExtensionBones,
  fail: (problem: string) => never,
): C[] {
  const kept = channels.filter(
    ({ target: t }) =>
      t?.node !== undefined &&
      !(t.path === 'weights'
        ? bones.weights.some((w) => w.node === t.node)
        : TRS.includes(t.path!) && bones.nodeIndices.includes(t.node)),
  );
  if (bones.additive && kept.length > 0)
    fail(`the clip is additive, but ${kept.length} of the animation's channels lie outside it (absolute poses)`);
  return kept;
}

/**
 * Reads the animation extension object `ext` against the file's `json`. Calls `fail` (which
 * throws) with the problem when a reference is out of the file or a list is malformed.
 */
export function readExtensionBones(
  json: ExtensionJson,
  ext: Record<string, unknown>,
  fail: (problem: string) => never,
): ExtensionBones {
  const isNode = (j: unknown): j is number => isIndex(j, json.nodes);
  const isNodeList = (list: unknown): list is number[] => Array.isArray(list) && list.every(isNode);
  // Absent lists are empty (absent additive false); any other value that is not a list of the right entries is refused.
  const { skeleton: s, nodes = [], weights = [], additive = false, bufferView: view } = ext;
  // Bone order: the table's bones, then the node bones, then the weight bones (docs/gltf-extension.md).
  let joints: number[] = [],
    parents: number[] = [];
  if (s !== undefined) {
    const skeletons = (
      json.extensions?.[BONEPRESS_EXTENSION] as { skeletons?: { joints?: unknown; parents?: unknown }[] } | undefined
    )?.skeletons;
    if (!isIndex(s, skeletons)) fail(`skeleton ${s} is not in the file's bone tables`);
    // A table that is not an object (null included) has no joints.
    const table = skeletons![s] ?? {};
    if (!isNodeList(table.joints)) fail(`bone table ${s} has joints that are not node indices`);
    if (!Array.isArray(table.parents) || table.parents.length !== table.joints.length)
      fail(`bone table ${s} needs one parent per joint`);
    joints = table.joints;
    parents = table.parents as number[];
  }
  if (!isNodeList(nodes)) fail('nodes are not node indices');
  if (
    !Array.isArray(weights) ||
    !weights.every(
      (w: { node?: unknown; scales?: unknown }) =>
        isNode(w?.node) &&
        Array.isArray(w.scales) &&
        w.scales.length > 0 &&
        w.scales.every((x: unknown) => Number.isFinite(x) && (x as number) > 0),
    )
  ) {
    fail('weights need a node index and positive scales each');
  }
  if (!isIndex(view, json.bufferViews)) fail(`bufferView ${view} is not in the file`);
  const nodeIndices = [...joints, ...nodes];
  let boneCount = nodeIndices.length;
  const weightDefs = (weights as WeightDef[]).map((w) => {
    boneCount += w.scales.length;
    return { ...w, firstBone: boneCount - w.scales.length };
  });
  return {
    nodeIndices,
    weights: weightDefs,
    boneCount,
    bufferView: view,
    parents,
    additive,
  };
}

/** `j` indexes an entry of `list` (an array). */
function isIndex(j: unknown, list: unknown): j is number {
  return Number.isInteger(j) && (j as number) >= 0 && Array.isArray(list) && (j as number) < list.length;
}

/**
 * Opens the animation's `.bpk` bytes and checks them against `bones`: the bone count (table,
 * nodes and weights), the table's parents, and `additive` (a boolean) against the clip's own record.
 * Calls `fail` with the problem otherwise (and the FormatError's code where the clip is
 * refused: UNSUPPORTED_PLATFORM where the WebAssembly kernel does not run and the TypeScript
 * decoder is not installed; the plugins import the clip without it, so a page pays for it
 * only by importing `bonepress/runtime`).
 */
export function openExtensionClip(
  bytes: Uint8Array | ArrayBuffer,
  bones: ExtensionBones,
  fail: (problem: string, code?: FormatErrorCode) => never,
): CompressedClip {
  let clip: CompressedClip;
  try {
    clip = CompressedClip.open(bytes);
    // A sampler refuses (UNSUPPORTED_PLATFORM) a clip the kernel does not decode here while
    // the TypeScript decoder is not installed: at load, not when the clip first plays.
    clip.createSampler();
  } catch (e) {
    return fail((e as Error).message, (e as FormatError).code);
  }
  if (bones.additive !== (clip.additive !== undefined))
    fail(`additive is ${JSON.stringify(bones.additive)} in the extension, ${clip.additive !== undefined} in the clip`);
  if (clip.boneCount !== bones.boneCount)
    fail(`the clip has ${clip.boneCount} bones, the extension ${bones.boneCount}`);
  // The table's parents, then a root per node and weight bone.
  const expected = (b: number) => (b < bones.parents.length ? bones.parents[b] : -1);
  const b = clip.parents.findIndex((p, b) => p !== expected(b));
  if (b >= 0) fail(`bone ${b}'s parent is ${clip.parents[b]} in the clip, ${expected(b)} in the extension`);
  return clip;
}
