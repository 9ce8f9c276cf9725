/**
 * `bonepress(options)`: a glTF-Transform transform that compresses every skeletal animation
 * of a Document in place into `BONEPRESS_animation_compression` data (docs/gltf-extension.md).
 * Only animation channels change; every other property of the Document is left as it is.
 */
import {
  Document,
  Logger,
  WebIO,
  type Accessor,
  type Animation,
  type AnimationChannel,
  type AnimationSampler,
  type Mesh,
  type Node,
  type Transform,
} from '@gltf-transform/core';

import type { RawClip } from '../clip/raw-clip.js';
import type { Length } from '../clip/units.js';
import { compress } from '../compress/index.js';
import { atVertexBound, transformShare } from '../compress/morph-bound.js';
import { COMPRESS_DEFAULTS } from '../compress/options.js';
import { isStepTrack, keyTime } from '../runtime/clip-inspection.js';
import { CompressedClip } from '../runtime/compressed-clip.js';
import { POSE_STRIDE } from '../runtime/pose.js';
import { ParseError, PARSE_ERROR } from '../readers/errors.js';
import { readGltfWithWarnings, type GltfClipExtras } from '../readers/gltf.js';
import { clipEndTime, clipStartTime } from '../clip/raw-clip.js';
import { additiveOptions, additiveSettings, refuseAbsoluteChannels } from './additive.js';
import { KHR_ANIMATION_POINTER, type AnimationPointer } from './animation-pointer.js';
import { BONEPRESS_ANIMATION_COMPRESSION, BonepressAnimationCompression, type BoneTable } from './extension.js';
import type { BonepressOptions, CompressedAnimationReport, KeptAnimationReport } from './types.js';

export type {
  BonepressOptions,
  CompressedAnimationReport,
  GltfAdditiveOptions,
  GltfAnimationPose,
  KeptAnimationReport,
} from './types.js';

/** Defaults of {@link BonepressOptions}. */
export const BONEPRESS_DEFAULTS = {
  error: COMPRESS_DEFAULTS.error,
  shell: COMPRESS_DEFAULTS.shell,
  fallback: false,
  extras: true,
  keepSmallerSource: true,
} as const satisfies BonepressOptions;

/** What {@link compressDocument} did. */
export interface CompressDocumentResult {
  animations: CompressedAnimationReport[];
  /**
   * Animations whose compressed form would take at least the bytes of the channels it
   * replaces: they keep their plain channels (never with a fallback, which keeps them anyway).
   */
  kept: KeptAnimationReport[];
  /** The reader's warnings, in order. */
  warnings: string[];
}

const TRS = new Set(['translation', 'rotation', 'scale']);

/**
 * Compresses every skeletal animation of `doc` in place, as {@link bonepress} does, and says
 * what it did. Animations already compressed are left alone; an animation that moves no
 * skeleton node is left alone (the reader's warning says so). Throws the reader's
 * `ParseError` for bad animation data and `OptionsError` for bad options (an additive
 * reference frame out of the animation, an additive animation of other bones than its
 * reference or base, or with channels its clip does not hold).
 */
export async function compressDocument(doc: Document, options: BonepressOptions = {}): Promise<CompressDocumentResult> {
  const fallback = options.fallback === true ? 'original' : options.fallback || undefined;
  const root = doc.getRoot();
  const animations = root.listAnimations();
  const additiveOf = additiveSettings(options, animations);
  const pending = animations.filter(
    (a) => !a.getExtension(BONEPRESS_ANIMATION_COMPRESSION) && a.listChannels().length > 0,
  );
  if (pending.length === 0) return { animations: [], kept: [], warnings: [] };

  let clips: Awaited<ReturnType<typeof readClips>>;
  try {
    clips = await readClips(doc, animations, options);
  } catch (error) {
    // Animations, but none on a skeleton (a camera fly-through): nothing to compress.
    if (error instanceof ParseError && error.code === PARSE_ERROR.NO_ANIMATION)
      return { animations: [], kept: [], warnings: [error.message, ...notAdditive(animations, additiveOf, [])] };
    throw error;
  }
  const clipOf = new Map(clips.clips.map(({ clip, index }) => [index, clip]));
  const chosen = clips.clips
    .map((c, i) => ({ ...c, extra: clips.extras[i] }))
    .filter(({ index }) => pending.includes(animations[index]));
  if (chosen.length === 0)
    return { animations: [], kept: [], warnings: [...clips.warnings, ...notAdditive(animations, additiveOf, [])] };
  // Created only now, so a document with nothing to compress does not list the extension.
  const extension = doc.createExtension(BonepressAnimationCompression);
  const fresh = extension.listProperties().length === 0;
  const nodes = root.listNodes();
  const reports: CompressedAnimationReport[] = [];
  const kept: KeptAnimationReport[] = [];
  const warnings = [...clips.warnings];
  for (const { clip, index, extra } of chosen) {
    const animation = animations[index];
    const skeleton = clip.skeleton;
    const b0 = extra.skeletonBones;
    const joints = Array.from(skeleton.nodeIndices!.subarray(0, b0), (n) => nodes[n]);
    const parents = Array.from(skeleton.parents.subarray(0, b0));
    const props = extra.nodes.map((n) => nodes[n]);
    const weightNodes = extra.weights.map((w) => nodes[w.node]);
    // Names and node indices live in the file (the animation's name, the bone table, the node lists).
    const stored: RawClip = { ...clip, name: animation.getName(), skeleton: { ...skeleton, nodeIndices: undefined } };
    // Weights and transforms add at a morphed vertex: the bones get their share of the bound (runtime/morph-share.ts).
    const shared = extra.weights.length > 0 && b0 + props.length > 0;
    const additiveSetting = additiveOf.get(index);
    const additive = additiveSetting && additiveOptions(additiveSetting, animations, clipOf, index);
    const replaced = replacedChannels(animation, new Set(joints), new Set(props), new Set(weightNodes));
    if (additive) refuseAbsoluteChannels(animation, index, replaced);
    const result = compress(stored, {
      error: shared ? transformShare(options.error ?? BONEPRESS_DEFAULTS.error) : options.error,
      shell: options.shell,
      shellBones: extraShells(clip, b0, options),
      metric: options.metric,
      stripNames: true,
      checksum: true,
      ...(additive ? { additive } : {}),
    });
    // One table per set of skins, shared by every clip that moves that set; a clip of props and weights alone has none.
    const sharedTable = b0 > 0 ? findTable(extension, joints, parents) : undefined;
    // An additive animation is always compressed: its own channels are absolute poses, not the layer.
    if (!fallback && !additive && (options.keepSmallerSource ?? BONEPRESS_DEFAULTS.keepSmallerSource)) {
      const sizes = {
        compressedBytes: compressedCost(
          result.bytes.byteLength,
          props.length,
          extra.weights,
          b0 > 0 && !sharedTable ? b0 : 0,
          replaced.length === animation.listChannels().length,
        ),
        sourceBytes: plainChannelBytes(animation, replaced),
      };
      if (sizes.compressedBytes >= sizes.sourceBytes) {
        kept.push({ animation: animation.getName(), index, ...sizes });
        warnings.push(
          `animation ${index} ${JSON.stringify(animation.getName())}: compressed it would take ${sizes.compressedBytes} bytes, its channels take ${sizes.sourceBytes}; kept as it is`,
        );
        continue;
      }
    }
    const table = b0 > 0 ? (sharedTable ?? extension.createBoneTable().setBones(joints, parents)) : undefined;
    const compressed = extension
      .createCompressedAnimation()
      .setData(result.bytes)
      .setNodes(props)
      .setWeights(
        weightNodes,
        extra.weights.map((w) => w.scales),
      );
    if (table) compressed.setSkeleton(table);
    animation.setExtension(BONEPRESS_ANIMATION_COMPRESSION, compressed);
    if (fallback !== 'original') removeChannels(animation, replaced);
    if (fallback === 'quantized') {
      addQuantizedChannels(
        doc,
        animation,
        CompressedClip.open(result.bytes),
        [...joints, ...props],
        weightNodes.map((node, w) => ({ node, scales: extra.weights[w].scales })),
      );
    }
    if (animation.listChannels().length === 0) addStub(doc, animation, clipStartTime(clip), clipEndTime(clip));
    const stats = shared ? atVertexBound(result.stats) : result.stats;
    reports.push({ animation: animation.getName(), index, stats: { ...stats, name: animation.getName() } });
  }
  warnings.push(...notAdditive(animations, additiveOf, reports));
  if (reports.length === 0) {
    if (fresh) extension.dispose();
  } else if (!fallback) {
    // Required unless every compressed animation keeps a fallback; one without makes it required.
    extension.setRequired(true);
  } else if (fresh) {
    extension.setRequired(false);
  }
  return { animations: reports, kept, warnings };
}

/** A warning per animation the additive option names that stays as it was (not compressed, so not a layer). */
function notAdditive(
  animations: readonly Animation[],
  additive: ReadonlyMap<number, unknown>,
  compressed: readonly CompressedAnimationReport[],
): string[] {
  const done = new Set(compressed.map((r) => r.index));
  return [...additive.keys()]
    .filter((i) => !done.has(i))
    .map(
      (i) =>
        `animation ${i} ${JSON.stringify(animations[i].getName())}: not compressed here, so not made additive (its channels stay as they were)`,
    );
}

/**
 * A glTF-Transform transform that compresses every skeletal animation of the Document with
 * bonepress: `await document.transform(bonepress({ error: '0.01cm' }))`. See
 * {@link compressDocument}. Register {@link BonepressAnimationCompression} on the I/O that
 * reads the result back.
 */
export function bonepress(options: BonepressOptions = {}): Transform {
  const transform: Transform = async (doc: Document): Promise<void> => {
    const { warnings } = await compressDocument(doc, options);
    const warn = options.onWarning ?? ((message: string) => doc.getLogger().warn(`bonepress: ${message}`));
    for (const w of warnings) warn(w);
  };
  return Object.defineProperty(transform, 'name', { value: 'bonepress' });
}

/**
 * The clips of the document's animations, read by the glTF reader from a GLB of
 * {@link animationDocument}. Each animation is named by its index for the read, so clips map
 * back to animations whatever their names (repeated, empty).
 */
async function readClips(
  doc: Document,
  animations: Animation[],
  options: BonepressOptions,
): Promise<{ clips: { clip: RawClip; index: number }[]; extras: GltfClipExtras[]; warnings: string[] }> {
  const names = animations.map((a) => a.getName());
  const bytes = await new WebIO().setLogger(new Logger(Logger.Verbosity.SILENT)).writeBinary(animationDocument(doc));
  const extraTracks = options.extras ?? BONEPRESS_DEFAULTS.extras;
  const { clips, warnings, extras } = await readGltfWithWarnings(bytes, options.file ?? 'document', {
    sampleRate: options.sampleRate,
    unit: options.unit,
    extraTracks,
  });
  return {
    clips: clips.map((clip) => ({ clip, index: Number(clip.name) })),
    extras: extras ?? clips.map((clip) => ({ skeletonBones: clip.skeleton.boneNames.length, nodes: [], weights: [] })),
    // The reader's words are for loose clips; here what it leaves out stays in the asset as it was.
    warnings: [
      ...warnings.map((w) =>
        w
          .replace(/animation "(\d+)"/g, (_, i: string) => `animation ${i} ${JSON.stringify(names[Number(i)])}`)
          .replace(/; (ignored|skipped)$/, '; kept uncompressed'),
      ),
      ...pointerWarnings(animations),
    ],
  };
}

/**
 * What the glTF reader needs of `doc`, as a new Document: every node (same order, names,
 * rest TRS, weights and hierarchy), every skin's joints, each mesh's positions and morph
 * target positions (their bounds set the extra bones' precision) and a stand-in for each
 * camera, and every animation's node channels with their samplers' accessors (arrays shared,
 * not copied), animation `i` named `"i"`. Materials, textures and other attributes stay
 * out, so the write needs no codec (Draco, meshopt) and costs little beyond the animation
 * bytes. `KHR_animation_pointer` channels stay out too: {@link pointerWarnings} reports them.
 */
function animationDocument(doc: Document): Document {
  const root = doc.getRoot();
  const out = new Document();
  const buffer = out.createBuffer();
  const nodes = new Map<Node, Node>();
  for (const node of root.listNodes()) {
    nodes.set(
      node,
      out
        .createNode(node.getName())
        .setTranslation(node.getTranslation())
        .setRotation(node.getRotation())
        .setScale(node.getScale()),
    );
  }
  for (const [node, copy] of nodes) for (const child of node.listChildren()) copy.addChild(nodes.get(child)!);
  for (const skin of root.listSkins()) {
    const copy = out.createSkin(skin.getName());
    for (const joint of skin.listJoints()) copy.addJoint(nodes.get(joint)!);
  }
  const accessors = new Map<Accessor, Accessor>();
  const accessor = (a: Accessor): Accessor => {
    let copy = accessors.get(a);
    if (!copy) {
      copy = out
        .createAccessor()
        .setType(a.getType())
        .setArray(a.getArray())
        .setNormalized(a.getNormalized())
        .setBuffer(buffer);
      accessors.set(a, copy);
    }
    return copy;
  };
  const meshes = new Map<Mesh, Mesh>();
  for (const [node, copy] of nodes) {
    if (node.getCamera()) copy.setCamera(out.createCamera());
    if (node.getWeights().length > 0) copy.setWeights(node.getWeights());
    const mesh = node.getMesh();
    if (!mesh) continue;
    let meshCopy = meshes.get(mesh);
    if (!meshCopy) {
      meshCopy = out.createMesh(mesh.getName()).setWeights(mesh.getWeights());
      for (const prim of mesh.listPrimitives()) {
        const primCopy = out.createPrimitive();
        const position = prim.getAttribute('POSITION');
        if (position?.getArray()) primCopy.setAttribute('POSITION', accessor(position));
        for (const target of prim.listTargets()) {
          const targetCopy = out.createPrimitiveTarget();
          const delta = target.getAttribute('POSITION');
          if (delta?.getArray()) targetCopy.setAttribute('POSITION', accessor(delta));
          primCopy.addTarget(targetCopy);
        }
        meshCopy.addPrimitive(primCopy);
      }
      meshes.set(mesh, meshCopy);
    }
    copy.setMesh(meshCopy);
  }
  root.listAnimations().forEach((animation, i) => {
    const copy = out.createAnimation(`${i}`);
    const samplers = new Map<AnimationSampler, AnimationSampler>();
    for (const channel of animation.listChannels()) {
      const node = channel.getTargetNode(),
        path = channel.getTargetPath(),
        sampler = channel.getSampler();
      const input = sampler?.getInput(),
        output = sampler?.getOutput();
      if (!node || !path || !sampler || !input || !output || !input.getArray() || !output.getArray()) continue;
      let s = samplers.get(sampler);
      if (!s) {
        s = out
          .createAnimationSampler()
          .setInput(accessor(input))
          .setOutput(accessor(output))
          .setInterpolation(sampler.getInterpolation());
        samplers.set(sampler, s);
        copy.addSampler(s);
      }
      copy.addChannel(out.createAnimationChannel().setTargetNode(nodes.get(node)!).setTargetPath(path).setSampler(s));
    }
  });
  return out;
}

/** One warning per animation with `KHR_animation_pointer` channels: they stay as they are. */
function pointerWarnings(animations: Animation[]): string[] {
  const out: string[] = [];
  animations.forEach((animation, i) => {
    const pointers = animation
      .listChannels()
      .map((c) => c.getExtension<AnimationPointer>(KHR_ANIMATION_POINTER)?.getPointer())
      .filter((p): p is string => p !== undefined);
    if (pointers.length === 0) return;
    const shown = pointers.length <= 3 ? pointers.join(', ') : `${pointers.slice(0, 3).join(', ')}, …`;
    out.push(
      `animation ${i} ${JSON.stringify(animation.getName())}: ${pointers.length} KHR_animation_pointer channel${pointers.length > 1 ? 's' : ''} (${shown}) pass${pointers.length > 1 ? '' : 'es'} through uncompressed`,
    );
  });
  return out;
}

function findTable(
  extension: BonepressAnimationCompression,
  joints: readonly Node[],
  parents: Int32Array | readonly number[],
): BoneTable | undefined {
  for (const p of extension.listProperties()) {
    if (p.propertyType !== 'BonepressBoneTable') continue;
    const t = p as BoneTable;
    const j = t.listJoints(),
      q = t.getParents();
    if (j.length === joints.length && j.every((n, b) => n === joints[b] && q[b] === parents[b])) return t;
  }
  return undefined;
}

/**
 * The channels a compressed clip replaces: translation, rotation and scale of `trs` nodes
 * (table and node bones), weights of `weights` nodes.
 */
function replacedChannels(
  animation: Animation,
  ...[skeleton, props, weights]: [Set<Node>, Set<Node>, Set<Node>]
): AnimationChannel[] {
  return animation.listChannels().filter((channel) => {
    const node = channel.getTargetNode();
    const path = channel.getTargetPath() ?? '';
    return (
      node !== null &&
      ((TRS.has(path) && (skeleton.has(node) || props.has(node))) || (path === 'weights' && weights.has(node)))
    );
  });
}

/** Removes `channels`, their samplers and the accessors nothing else uses. */
function removeChannels(animation: Animation, channels: readonly AnimationChannel[]): void {
  for (const channel of channels) channel.dispose();
  const used = new Set(animation.listChannels().map((c) => c.getSampler()));
  for (const sampler of animation.listSamplers()) {
    if (used.has(sampler)) continue;
    const accessors = [sampler.getInput(), sampler.getOutput()];
    sampler.dispose();
    for (const accessor of accessors) if (accessor) disposeIfUnused(accessor);
  }
}

// Smallest JSON glTF-Transform writes for a channel, a sampler, and an accessor with its buffer view.
const CHANNEL_JSON = 45,
  SAMPLER_JSON = 45,
  ACCESSOR_JSON = 110;
// The stub's two keys (data and JSON) and an extension object without lists.
const STUB_BYTES = 40 + CHANNEL_JSON + SAMPLER_JSON + 2 * ACCESSOR_JSON,
  EXTENSION_JSON = 80;

/**
 * What removing `channels` saves: the bytes of the accessors only they read (an input shared
 * with channels that stay, or with another animation, stays) and their JSON, at its smallest.
 */
function plainChannelBytes(animation: Animation, channels: readonly AnimationChannel[]): number {
  const removed = new Set(channels);
  const samplers = new Set(channels.map((c) => c.getSampler()).filter((s): s is AnimationSampler => s !== null));
  const keptSamplers = new Set(
    animation
      .listChannels()
      .filter((c) => !removed.has(c))
      .map((c) => c.getSampler()),
  );
  const freed = new Set<Accessor>();
  for (const sampler of samplers) {
    if (keptSamplers.has(sampler)) continue;
    for (const accessor of [sampler.getInput(), sampler.getOutput()]) {
      if (!accessor) continue;
      const users = accessor.listParents().filter((p) => p.propertyType !== 'Root');
      if (users.every((p) => samplers.has(p as AnimationSampler) && !keptSamplers.has(p as AnimationSampler)))
        freed.add(accessor);
    }
  }
  let bytes = channels.length * CHANNEL_JSON + samplers.size * SAMPLER_JSON;
  for (const accessor of freed) bytes += accessor.getByteLength() + ACCESSOR_JSON;
  return bytes;
}

/**
 * What a compressed animation adds: the clip, its extension object (node list, weight
 * scales), a new bone table of `tableBones` bones, and the stub when no channel stays.
 */
function compressedCost(
  clipBytes: number,
  nodes: number,
  weights: readonly { scales: readonly number[] }[],
  tableBones: number,
  stub: boolean,
): number {
  const listed = JSON.stringify(weights).length + 8 * nodes;
  return clipBytes + EXTENSION_JSON + listed + 12 * tableBones + (stub ? STUB_BYTES : 0);
}

/**
 * The `shellBones` to compress a clip with: the caller's, plus, when the caller sets shells
 * at all, each extra bone's own distance (the radius of a prop's meshes), which a global
 * `shell` would otherwise replace. Undefined keeps the clip's own distances for every bone.
 */
function extraShells(clip: RawClip, skeletonBones: number, options: BonepressOptions): BonepressOptions['shellBones'] {
  if (options.shell === undefined && options.shellBones === undefined) return undefined;
  const out: Record<string, Length> = {};
  const { boneNames, shellDistances } = clip.skeleton;
  for (let b = skeletonBones; b < boneNames.length; b++)
    out[boneNames[b]] = { value: shellDistances[b], unit: clip.unit };
  return { ...out, ...options.shellBones };
}

/**
 * The stub of docs/gltf-extension.md, for an animation left without channels (glTF needs
 * one): a STEP channel with no target node, keyed at the clip's start time and duration, or
 * once when they coincide (key times must increase: a one-key clip has one stub key).
 */
function addStub(doc: Document, animation: Animation, startTime: number, duration: number): void {
  const buffer = doc.getRoot().listBuffers()[0] ?? doc.createBuffer();
  const times = Math.fround(duration) > Math.fround(startTime) ? [startTime, duration] : [startTime];
  const input = doc.createAccessor().setType('SCALAR').setBuffer(buffer).setArray(new Float32Array(times));
  const output = doc
    .createAccessor()
    .setType('VEC4')
    .setBuffer(buffer)
    .setArray(new Float32Array(times.flatMap(() => [0, 0, 0, 1])));
  const sampler = doc.createAnimationSampler().setInput(input).setOutput(output).setInterpolation('STEP');
  animation.addSampler(sampler).addChannel(doc.createAnimationChannel().setTargetPath('rotation').setSampler(sampler));
}

// Exactly sample k, whatever the rounding of start + k / rate.
const SAMPLE_AT_KEY = { looping: 'clamp', rounding: 'nearest' } as const;

/**
 * The fallback of `fallback: 'quantized'`: one channel per track the source animated, keyed
 * at every sample of the compressed clip (what the extension plays, at its own rate):
 * rotations as normalised SHORT quaternions, translations and scales as floats; STEP where
 * the source holds its keys, else LINEAR. `joints` are the nodes of the transform bones
 * (table and node bones, in bone order); `weights` the weight bones that follow them, whose
 * channel is one float weight per morph target and key.
 */
function addQuantizedChannels(
  doc: Document,
  animation: Animation,
  clip: CompressedClip,
  joints: readonly Node[],
  weights: readonly { node: Node; scales: readonly number[] }[],
): void {
  const n = clip.sampleCount;
  const buffer = doc.getRoot().listBuffers()[0] ?? doc.createBuffer();
  const times = new Float32Array(n);
  const poses = new Float32Array(n * clip.boneCount * POSE_STRIDE);
  const sampler = clip.createSampler();
  for (let k = 0; k < n; k++) {
    times[k] = keyTime(clip, k);
    sampler.sample(
      keyTime(clip, k),
      poses.subarray(k * clip.boneCount * POSE_STRIDE, (k + 1) * clip.boneCount * POSE_STRIDE),
      SAMPLE_AT_KEY,
    );
  }
  let input: Accessor | undefined;
  const paths = ['rotation', 'translation', 'scale'] as const;
  for (let b = 0; b < joints.length; b++) {
    for (let kind = 0; kind < 3; kind++) {
      if (!clip.hasChannel(b, kind)) continue;
      const width = kind === 0 ? 4 : 3,
        at = kind === 0 ? 0 : kind === 1 ? 4 : 7;
      const values = kind === 0 ? new Int16Array(n * 4) : new Float32Array(n * 3);
      for (let k = 0; k < n; k++) {
        const o = (k * clip.boneCount + b) * POSE_STRIDE + at;
        for (let c = 0; c < width; c++)
          values[k * width + c] =
            kind === 0 ? Math.round(Math.max(-1, Math.min(1, poses[o + c])) * 32767) : poses[o + c];
      }
      input ??= doc.createAccessor().setType('SCALAR').setBuffer(buffer).setArray(times);
      const output = doc
        .createAccessor()
        .setType(kind === 0 ? 'VEC4' : 'VEC3')
        .setBuffer(buffer)
        .setArray(values)
        .setNormalized(kind === 0);
      const s = doc
        .createAnimationSampler()
        .setInput(input)
        .setOutput(output)
        .setInterpolation(isStepTrack(clip, b, kind) ? 'STEP' : 'LINEAR');
      animation
        .addSampler(s)
        .addChannel(doc.createAnimationChannel().setTargetNode(joints[b]).setTargetPath(paths[kind]).setSampler(s));
    }
  }
  let first = joints.length;
  for (const { node, scales } of weights) {
    const count = scales.length;
    const values = new Float32Array(n * count);
    for (let k = 0; k < n; k++) {
      for (let t = 0; t < count; t++)
        values[k * count + t] = poses[(k * clip.boneCount + first + t) * POSE_STRIDE + 4] / scales[t];
    }
    input ??= doc.createAccessor().setType('SCALAR').setBuffer(buffer).setArray(times);
    const output = doc.createAccessor().setType('SCALAR').setBuffer(buffer).setArray(values);
    const s = doc
      .createAnimationSampler()
      .setInput(input)
      .setOutput(output)
      .setInterpolation(isStepTrack(clip, first, 1) ? 'STEP' : 'LINEAR');
    animation
      .addSampler(s)
      .addChannel(doc.createAnimationChannel().setTargetNode(node).setTargetPath('weights').setSampler(s));
    first += count;
  }
}

function disposeIfUnused(accessor: Accessor): void {
  if (accessor.listParents().every((p) => p.propertyType === 'Root')) accessor.dispose();
}
