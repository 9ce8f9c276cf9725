/**
 * glTF 2.0 reader (`.gltf` JSON and `.glb`): each animation becomes one {@link RawClip}
 * over one skeleton shared by all of the file's clips.
 *
 * The file's JSON is checked and cut down to what animation needs (nodes, animation
 * samplers, their accessors, buffer views and buffers) before @gltf-transform/core decodes
 * it, so meshes, textures and their extensions (Draco, KTX2, …) neither need to be present
 * nor understood, and every problem in the animation data gets a message naming the file
 * and the object instead of a TypeError from deep inside a decoder.
 *
 * Browser-safe: no node:* imports. External `.bin` buffers come from
 * {@link GltfReadOptions.resources} or {@link GltfReadOptions.loadResource}.
 */
import { WebIO, type Accessor, type Document, type ILogger, type JSONDocument } from '@gltf-transform/core';

import { createRawClip, validateRawClip, type RawClip } from '../clip/raw-clip.js';
import { createSkeleton, POSE_STRIDE, type Skeleton } from '../clip/skeleton.js';
import { TRACKS_PER_BONE } from '../runtime/format.js';
import { morphWeightScale } from '../runtime/morph-share.js';
import { convertLength, type LengthUnit } from '../clip/units.js';
import { MAX_QUOTED_CHARS, ParseError, PARSE_ERROR, quoteText, type ParseErrorCode } from './errors.js';
import { boneSamplesProblem, checkBoneCount, checkClipSize, READ_LIMITS, type ReadOptions } from './options.js';
import {
  countOffGridKeys,
  detectSampleRate,
  INTERPOLATION,
  keysOnGrid,
  resampleTrack,
  sampleCountFor,
  sampleTrackAt,
  unionKeyTimes,
  type Interpolation,
  type KeyframeTrack,
} from './resample.js';

/** Options of {@link readGltf} and {@link readGltfWithWarnings}. */
export interface GltfReadOptions extends ReadOptions {
  /**
   * External resources by URI exactly as written in the file (`"walk.bin"`), for `.gltf`
   * files whose buffers are separate files. Looked up before {@link loadResource}.
   */
  resources?: Readonly<Record<string, Uint8Array>>;
  /**
   * Loads an external buffer by its URI as written in the file (relative to the `.gltf`);
   * `undefined` means not found, and a thrown error (its message says why, without quoting
   * the resource's bytes) is reported as code `UNSUPPORTED`. The Node layer passes a file
   * reader here that stays inside the asset's folder, a browser a `fetch` wrapper. Only
   * buffers that animations use are requested.
   */
  loadResource?: (uri: string) => Promise<Uint8Array | undefined> | Uint8Array | undefined;
  /** Called with each warning, in order ({@link readGltf} otherwise drops them). */
  onWarning?: (message: string) => void;
  /**
   * Also read morph-target weights and the translation, rotation and scale of animated nodes
   * outside the skeleton, as extra bones after the skeleton's ({@link GltfClipExtras}), for
   * `BONEPRESS_animation_compression` (docs/gltf-extension.md). Unset, loose `.bpk` clips
   * hold the skeleton only, except in a file whose animations move no node but animate morph
   * weights: those are read as extra bones rather than refused. `false` never reads them.
   */
  extraTracks?: boolean;
}

/**
 * The extra bones of one clip read with {@link GltfReadOptions.extraTracks}, in bone order
 * after the `skeletonBones` bones of the skeleton:
 *
 * - one bone per node in `nodes` (props, cameras: animated nodes outside the skeleton), a
 *   root (parent −1) holding the node's local transform, its shell distance the radius of
 *   the meshes under it (at least 1 m for a camera, the default where there is nothing);
 * - then, per entry of `weights`, one bone per morph target of that node's mesh, whose
 *   translation x is the weight times `scales[t]`, from the largest total displacement D_t,
 *   summed over all the mesh's targets, of a vertex that target `t` moves (1 when it moves
 *   none). A vertex moved by several targets takes the weight errors of them all, at most
 *   Σ_t |Δw_t|·|d_t(v)|; with every |Δw_t|·D_t within the vertex precision, that sum is
 *   too. In a clip that also moves transforms, the scale is D_t·(1 − s)/s, so that the
 *   weights, measured against the transforms' share of the bound, take only their share s
 *   (`morphWeightScale`, runtime/morph-share.ts: the two errors add at a vertex). Such a
 *   clip is compressed at (1 − s) of the bound for the sum to hold it: the glTF transform
 *   and `verify` do; a caller of `compress` on it does the same.
 */
export interface GltfClipExtras {
  /**
   * How many of the clip's bones are skeleton bones: the bones of the skins the animation
   * moves (joints and their ancestors, in skeleton order), all of them in a file without
   * skins, 0 when the animation moves no skeleton node.
   */
  skeletonBones: number;
  /** Node index of each node bone. */
  nodes: number[];
  /** Morph-weight bones: the node whose weights they are, and one scale per morph target (see above). */
  weights: { node: number; scales: number[] }[];
}

/** Defaults of {@link GltfReadOptions}. */
export const GLTF_DEFAULTS = {
  /** glTF positions are metres by specification. */
  unit: 'm',
  /**
   * Refuse animation data whose `EXT_meshopt_compression` buffer views decode to more than
   * this many bytes in all (a few compressed bytes can declare gigabytes).
   */
  maxMeshoptBytes: 256 * 1024 * 1024,
} as const satisfies { unit: LengthUnit; maxMeshoptBytes: number };

/** What {@link readGltfWithWarnings} returns. */
export interface GltfReadResult {
  /** One clip per animation that animates the skeleton, in file order. */
  clips: RawClip[];
  /**
   * Things that were read but not kept, one line each: channels on nodes outside the
   * skeleton, morph-weight channels, keys moved onto the sample grid, renamed bones.
   */
  warnings: string[];
  /** With {@link GltfReadOptions.extraTracks}: each clip's extra bones, parallel to `clips`. */
  extras?: GltfClipExtras[];
}

/**
 * Reads every animation of a glTF 2.0 file (`.gltf` JSON or `.glb`, told apart by the GLB
 * magic) as one clip each; warnings go to `options.onWarning` when given. See
 * {@link readGltfWithWarnings} for the rules. Throws {@link ParseError} naming the file and
 * the problem.
 */
export async function readGltf(bytes: Uint8Array, file: string, options: GltfReadOptions = {}): Promise<RawClip[]> {
  const { clips, warnings } = await readGltfWithWarnings(bytes, file, options);
  if (options.onWarning) for (const w of warnings) options.onWarning(w);
  return clips;
}

/**
 * Reads every animation of a glTF 2.0 file as one clip each, and says what it left out.
 *
 * - **Skeleton**: the joints of every skin (their union), or, without skins, every node an
 *   animation moves; plus all their ancestors, so object space is the model's even when a
 *   non-joint node such as a Blender "Armature" carries a scale; plus the nodes an animated
 *   node carries with a mesh or camera at or below them (their error shows there). Bones
 *   are ordered parents first, otherwise in the order joints are listed. Names come from
 *   the nodes (`node_<i>` when unnamed; a repeated name gets `_<i>` appended). The default pose is each node's rest
 *   TRS (a `matrix` is decomposed). Without skins, each clip holds only the nodes its
 *   animation moves, their ancestors and the nodes they carry.
 * - **Clips**: one per animation, named after it (`animation_<i>` when unnamed), starting at
 *   the animation's earliest key (usually 0) and ending at its last. Translation, rotation
 *   and scale channels are sampled at `options.sampleRate`, or at the rate
 *   {@link detectSampleRate} finds in the key times (the most common key interval, snapped
 *   to a whole number of Hz or an NTSC rate, raised to a whole multiple of at least 30 Hz
 *   only when keys are sparser than 1 Hz) when every key lies on that grid; otherwise at the
 *   keys' own times, the union of the channels' key times ({@link RawClip.sampleTimes}), so
 *   gaps and jittered times keep every key exactly. STEP / LINEAR / CUBICSPLINE as in
 *   `resample.ts`. Bones without a channel keep their rest value.
 * - **Units**: metres unless `options.unit` says the file is in another unit.
 * - **Warnings** (not errors): channels on nodes outside the skeleton, morph-weight and
 *   pointer channels, duplicate channels, keys off the sample grid, renamed bones, and
 *   animations left with no usable channel (skipped).
 *
 * Throws {@link ParseError} for: a corrupt GLB header or chunk, malformed JSON, a missing or
 * short buffer, accessors outside their buffer views, sampler accessors with no data behind
 * their count (no bufferView and no sparse values, or sparse-only key times with more keys
 * than sparse entries + 1), sampler input and output counts that disagree, a sampler with
 * zero keys, decreasing key times, NaN or infinite values, a malformed
 * `EXT_meshopt_compression` buffer view (such views are decoded with meshoptimizer's
 * decoder, as gltfpack writes them), and a file with no animations; code `LIMIT` for a clip
 * over `READ_LIMITS.maxBoneSamples` (readers/options.ts) (keys spanning a very long time) or a meshopt
 * views over {@link GLTF_DEFAULTS}.maxMeshoptBytes.
 */
export async function readGltfWithWarnings(
  bytes: Uint8Array,
  file: string,
  options: GltfReadOptions = {},
): Promise<GltfReadResult> {
  const fail = (problem: string, code: ParseErrorCode = PARSE_ERROR.BAD_VALUE): never => {
    throw new ParseError(code, problem, file);
  };
  const warnings: string[] = [];
  const rate = options.sampleRate;
  if (rate !== undefined && !(rate > 0 && Number.isFinite(rate)))
    fail(`sample rate ${rate} Hz (need a positive number)`);
  const unit = options.unit ?? GLTF_DEFAULTS.unit;

  const { json, glbBin } = parseContainer(bytes, file);
  const gltf = new GltfJson(json, fail);
  const hierarchy = readHierarchy(gltf, fail);
  const extraTracks = options.extraTracks === true;
  const animations = collectChannels(gltf, hierarchy, warnings, fail, extraTracks);
  const skeleton = chooseSkeleton(gltf, hierarchy, animations, warnings, fail, file);
  keepSkeletonChannels(animations, skeleton, hierarchy, warnings, extraTracks);
  const usable = animations.filter((a) => {
    if (a.channels.length > 0 || a.props.length > 0 || a.weights.length > 0) return true;
    warnings.push(`animation "${a.name}" has no translation, rotation or scale channel on the skeleton; skipped`);
    return false;
  });
  if (usable.length === 0) {
    // Morph weights alone (no node moves): read them as extra bones, as the glTF output does,
    // rather than refuse the file; unless the caller turned extra tracks off.
    if (options.extraTracks === undefined && animatesWeights(json))
      return readGltfWithWarnings(bytes, file, { ...options, extraTracks: true });
    fail(
      `no skeletal animation: none of the ${animations.length} animations moves the skeleton`,
      PARSE_ERROR.NO_ANIMATION,
    );
  }
  // Nodes the extra bones stand for, after the skeleton's in the trimmed document.
  const extraNodes = [...new Set(usable.flatMap((a) => [...a.props, ...a.weights].map((ch) => ch.node)))].sort(
    (x, y) => x - y,
  );
  const trimIndex = Int32Array.from(skeleton.boneOfNode);
  extraNodes.forEach((n, i) => {
    trimIndex[n] = skeleton.nodes.length + i;
  });

  const { document: trimmed, targetAccessors } = await trimDocument(
    gltf,
    hierarchy,
    skeleton,
    extraNodes,
    trimIndex,
    usable,
    glbBin,
    options,
    fail,
  );
  const logger: ILogger = {
    debug: () => {},
    info: () => {},
    error: () => {},
    warn: (text) => warnings.push(`glTF-Transform: ${text}`),
  };
  let doc: Document;
  try {
    doc = await new WebIO().setLogger(logger).readJSON(trimmed);
  } catch (e) {
    return fail(`cannot decode the animation data: ${(e as Error).message}`);
  }
  const root = doc.getRoot();
  const docNodes = root.listNodes();
  const docAnimations = root.listAnimations();
  const docAccessors = root.listAccessors();
  const targetData = (a: number): Float32Array | undefined => {
    const i = targetAccessors.get(a);
    return i === undefined ? undefined : accessorFloats(docAccessors[i]);
  };

  const skeletonBoneCount = skeleton.nodes.length;
  const defaultPose = new Float32Array(skeletonBoneCount * POSE_STRIDE);
  // The trimmed document holds the skeleton's nodes in bone order, then the extra nodes.
  const restOf = (trimmedNode: number, sourceNode: number, out: Float32Array, o: number): void => {
    const node = docNodes[trimmedNode];
    const trs = [...node.getRotation(), ...node.getTranslation(), ...node.getScale()];
    for (let i = 0; i < POSE_STRIDE; i++) {
      if (!Number.isFinite(trs[i]))
        fail(`node ${sourceNode} ("${hierarchy.names[sourceNode]}"): rest transform holds ${trs[i]}`);
      out[o + i] = trs[i];
    }
  };
  for (let b = 0; b < skeletonBoneCount; b++) restOf(b, skeleton.nodes[b], defaultPose, b * POSE_STRIDE);
  const parents = skeleton.nodes.map((n) => (hierarchy.parent[n] < 0 ? -1 : skeleton.boneOfNode[hierarchy.parent[n]]));
  // Node indices let a host bind bones exactly as its loader numbered them (three.js names unnamed nodes "").
  const bones: Skeleton = {
    ...createSkeleton(skeleton.names, parents, defaultPose, unit),
    nodeIndices: Int32Array.from(skeleton.nodes),
  };

  const clips: RawClip[] = [];
  const extras: GltfClipExtras[] = [];
  usable.forEach((animation, a) => {
    const docChannels = docAnimations[a].listChannels();
    // A clip holds the bones its animation needs (clipSubset): with extra tracks, and in a scene
    // without skins, where each animation may move a node of its own (a skin's clip otherwise
    // keeps the whole skeleton). With extra tracks, an animation that moves no skeleton node
    // holds only its extra bones.
    const clipSkeleton =
      extraTracks || gltf.skins.length === 0
        ? clipSkeletonOf(gltf, hierarchy, skeleton, animation, bones, unit, targetData, fail)
        : undefined;
    const clipBones = clipSkeleton?.bones ?? bones;
    if (clipSkeleton && extraTracks) {
      clipSkeleton.extras.nodes.forEach((n, i) =>
        restOf(trimIndex[n], n, clipBones.defaultPose, (clipSkeleton.extras.skeletonBones + i) * POSE_STRIDE),
      );
      extras.push(clipSkeleton.extras);
    }
    const boneCount = clipBones.boneNames.length;
    const tracks: { bone: number; path: TrsPath; track: KeyframeTrack }[] = [];
    [...animation.channels, ...animation.props, ...animation.weights].forEach((ch, i) => {
      const sampler = docChannels[i].getSampler()!;
      const what = `animation "${animation.name}" channel ${ch.channelIndex} (${hierarchy.names[ch.node]}.${ch.path})`;
      const times = accessorFloats(sampler.getInput()!);
      const values = accessorFloats(sampler.getOutput()!);
      for (let k = 0; k < times.length; k++) {
        if (!Number.isFinite(times[k])) fail(`${what}: key ${k} time is ${times[k]}`);
        if (k > 0 && times[k] < times[k - 1])
          fail(`${what}: key times must not decrease (key ${k} at ${times[k]} s follows ${times[k - 1]} s)`);
      }
      for (let v = 0; v < values.length; v++) {
        if (!Number.isFinite(values[v])) fail(`${what}: output value ${v} is ${values[v]}`);
      }
      if (ch.path === 'weights') {
        // One translation track per morph target: x = weight × the target's displacement scale.
        const group = clipSkeleton!.extras.weights.findIndex((w) => w.node === ch.node);
        const { scales } = clipSkeleton!.extras.weights[group];
        const first = clipSkeleton!.weightBone[group];
        scales.forEach((scale, t) => {
          const x = new Float32Array((values.length / scales.length) * 3);
          for (let k = 0; k < x.length / 3; k++) x[k * 3] = values[k * scales.length + t] * scale;
          tracks.push({
            bone: first + t,
            path: 'translation',
            track: { times, values: x, width: 3, interpolation: ch.interpolation, rotation: false },
          });
        });
        return;
      }
      const width = ch.path === 'rotation' ? 4 : 3;
      const bone =
        i >= animation.channels.length
          ? clipSkeleton!.extras.skeletonBones + clipSkeleton!.extras.nodes.indexOf(ch.node)
          : clipSkeleton
            ? clipSkeleton.clipBoneOf[skeleton.boneOfNode[ch.node]]
            : skeleton.boneOfNode[ch.node];
      tracks.push({
        bone,
        path: ch.path,
        track: { times, values, width, interpolation: ch.interpolation, rotation: ch.path === 'rotation' },
      });
    });

    const keyTimes = tracks.map((t) => t.track.times);
    // Keys down to 1 Hz keep their own rate: a curve between them is sampled where it needs
    // it (compress/between.ts), not everywhere. Sparser keys are still multiplied up, which
    // keeps the rate of keys minutes apart (or 1e30 s) a sensible number.
    let sampleRate = rate ?? detectSampleRate(keyTimes, { minKeyRate: 1 });
    let start = Infinity,
      end = -Infinity;
    for (const { track } of tracks) {
      start = Math.min(start, track.times[0]);
      end = Math.max(end, track.times[track.times.length - 1]);
    }
    // Keys on no uniform grid (gaps, jitter beyond float32 rounding) are kept at their own
    // times, unless the caller asked for a rate.
    const sampleTimes =
      rate === undefined && !keysOnGrid(keyTimes, start, sampleRate) ? unionKeyTimes(keyTimes) : undefined;
    const sampleCount = sampleTimes ? sampleTimes.length : sampleCountFor(end - start, sampleRate);
    if (sampleTimes && sampleCount > 1 && end > start) sampleRate = (sampleCount - 1) / (end - start);
    // So that a bogus rate or key time cannot exhaust memory.
    const tooMany = boneSamplesProblem(boneCount, sampleCount);
    if (tooMany !== undefined) {
      fail(
        `animation "${animation.name}": keys from ${start} s to ${end} s at ${formatRate(sampleRate)} Hz: ${tooMany}`,
        PARSE_ERROR.LIMIT,
      );
    }
    checkClipSize(file, 0, `animation ${quoteText(animation.name)}`, boneCount, sampleCount, options);
    const samples = createRawClip(animation.name, clipBones, sampleRate, sampleCount, unit);
    const trackCount = boneCount * TRACKS_PER_BONE;
    const channelMask = new Uint8Array(trackCount);
    const stepMask = new Uint8Array(trackCount);
    const keyframes: (KeyframeTrack | undefined)[] = new Array<KeyframeTrack | undefined>(trackCount).fill(undefined);
    let offGrid = 0,
      keys = 0;
    for (const { bone, path, track } of tracks) {
      const kind = path === 'rotation' ? 0 : path === 'translation' ? 1 : 2;
      const out = kind === 0 ? samples.rotations : kind === 1 ? samples.translations : samples.scales;
      if (sampleTimes) sampleTrackAt(track, sampleTimes, out, bone * sampleCount * track.width);
      else {
        resampleTrack(track, start, sampleRate, sampleCount, out, bone * sampleCount * track.width);
        offGrid += countOffGridKeys(track.times, start, sampleRate);
      }
      keys += track.times.length;
      const t = bone * TRACKS_PER_BONE + kind;
      channelMask[t] = 1;
      stepMask[t] = track.interpolation === INTERPOLATION.STEP ? 1 : 0;
      keyframes[t] = track;
    }
    // The time base is the file's: three.js plays the clip from 0 (holding the first key
    // until it) to the last key, and loops with that period.
    // Added to the created clip, not spread into a new one, so that clips share V8's hidden
    // classes (each spread-built clip had its own, and the compressor's code kept deoptimising).
    const clip: RawClip = Object.assign(
      samples,
      { startTime: start, duration: end, channelMask, stepMask, keyframes },
      sampleTimes ? { sampleTimes } : {},
    );
    if (offGrid > 0) {
      warnings.push(
        `animation "${animation.name}": ${offGrid} of ${keys} keys fall between samples at ${formatRate(sampleRate)} Hz; their values are interpolated, not kept exactly`,
      );
    }
    try {
      validateRawClip(clip);
    } catch (e) {
      fail((e as Error).message);
    }
    clips.push(clip);
  });
  return extraTracks ? { clips, warnings, extras } : { clips, warnings };
}

/**
 * The skeleton of one clip: the bones of the file's skeleton it needs ({@link clipSubset}),
 * then the {@link GltfClipExtras} bones (none without extra tracks). Node bones get their
 * rest transform from the caller; weight bones rest at the mesh's default weights.
 */
function clipSkeletonOf(
  gltf: GltfJson,
  hierarchy: Hierarchy,
  skeleton: SkeletonNodes,
  animation: AnimationRef,
  bones: Skeleton,
  unit: LengthUnit,
  targetData: (accessor: number) => Float32Array | undefined,
  fail: Fail,
): { bones: Skeleton; extras: GltfClipExtras; weightBone: number[]; clipBoneOf: Int32Array } {
  const subset = clipSubset(hierarchy, skeleton, animation, gltf.skins);
  const skeletonBones = subset.length;
  const clipBoneOf = new Int32Array(skeleton.nodes.length).fill(-1);
  subset.forEach((b, i) => {
    clipBoneOf[b] = i;
  });
  const nodes = [...new Set(animation.props.map((ch) => ch.node))].sort((x, y) => x - y);
  const weightNodes = [...new Set(animation.weights.map((ch) => ch.node))].sort((x, y) => x - y);
  // The weights share the bound with the transforms the clip moves (runtime/morph-share.ts).
  const shared = skeletonBones + nodes.length > 0;
  const targets = weightNodes.map((n) => {
    const { positions, defaults } = morphTargets(gltf, n, fail);
    const displacements = morphDisplacements(positions, defaults.length, targetData);
    return { scales: displacements.map((d) => morphWeightScale(d, shared)), defaults };
  });
  const names = subset.map((b) => skeleton.names[b]);
  const used = new Set(names);
  const unique = (name: string): string => {
    let out = name;
    for (let i = 2; used.has(out); i++) out = `${name}_${i}`;
    used.add(out);
    return out;
  };
  for (const n of nodes) names.push(unique(hierarchy.names[n]));
  const weightBone: number[] = [];
  weightNodes.forEach((n, w) => {
    weightBone.push(names.length);
    targets[w].scales.forEach((_, t) => names.push(unique(`${hierarchy.names[n]}.weights[${t}]`)));
  });
  const boneCount = names.length;
  const parents = new Int32Array(boneCount).fill(-1);
  const defaultPose = new Float32Array(boneCount * POSE_STRIDE);
  // The subset holds every ancestor of its bones, in skeleton order, so parents still come first.
  subset.forEach((b, i) => {
    parents[i] = bones.parents[b] < 0 ? -1 : clipBoneOf[bones.parents[b]];
    defaultPose.set(bones.defaultPose.subarray(b * POSE_STRIDE, (b + 1) * POSE_STRIDE), i * POSE_STRIDE);
  });
  const base = createSkeleton(names, parents, defaultPose, unit);
  const shellDistances = base.shellDistances;
  const nodeIndices = new Int32Array(boneCount).fill(-1);
  subset.forEach((b, i) => {
    shellDistances[i] = bones.shellDistances[b];
    nodeIndices[i] = bones.nodeIndices![b];
  });
  const metre = convertLength({ value: 1, unit: 'm' }, unit);
  const radii = new Map<number, number>();
  nodes.forEach((n, i) => {
    const b = skeletonBones + i;
    nodeIndices[b] = n;
    const radius = subtreeRadius(gltf, n, radii);
    // A camera's error shows on what it looks at, far beyond any 3 cm shell.
    const floor = gltf.nodes[n].camera !== undefined ? metre : 0;
    if (Math.max(radius, floor) > 0) shellDistances[b] = Math.max(radius, floor);
  });
  weightNodes.forEach((n, w) => {
    targets[w].scales.forEach((scale, t) => {
      const b = weightBone[w] + t;
      nodeIndices[b] = n;
      defaultPose[b * POSE_STRIDE + 4] = targets[w].defaults[t] * scale;
    });
  });
  // Identity rotations and unit scales; node bones' rest transforms are filled in by the caller.
  for (let b = skeletonBones; b < boneCount; b++) {
    defaultPose[b * POSE_STRIDE + 3] = 1;
    defaultPose.fill(1, b * POSE_STRIDE + 7, b * POSE_STRIDE + 10);
  }
  return {
    bones: { ...base, shellDistances, nodeIndices },
    extras: { skeletonBones, nodes, weights: weightNodes.map((node, w) => ({ node, scales: targets[w].scales })) },
    weightBone,
    clipBoneOf,
  };
}

/**
 * The skeleton bones one clip needs, in skeleton order: the bones of every skin the
 * animation moves (its joints and their ancestors), so a clip of one character does not
 * carry the others' bones; without skins, the nodes the animation moves with their ancestors
 * and the nodes they carry, so a clip of one node of a scene does not hold (and reset) the
 * others. None when the animation moves no skeleton node. The nodes joints carry
 * (chooseSkeleton) are left out of a skin's, so such a clip does not measure the error there.
 */
function clipSubset(
  hierarchy: Hierarchy,
  skeleton: SkeletonNodes,
  animation: AnimationRef,
  skins: unknown[],
): number[] {
  if (animation.channels.length === 0) return [];
  const moved = new Set(animation.channels.map((ch) => skeleton.boneOfNode[ch.node]));
  const keep = new Uint8Array(skeleton.nodes.length);
  if (skins.length === 0) {
    const parentBone = (b: number): number => {
      const parent = hierarchy.parent[skeleton.nodes[b]];
      return parent < 0 ? -1 : skeleton.boneOfNode[parent];
    };
    // Bones are parents first: a bone is carried (1) when its parent is moved or carried.
    for (let b = 0; b < skeleton.nodes.length; b++) {
      const p = parentBone(b);
      if (moved.has(b) || (p >= 0 && keep[p] === 1)) keep[b] = 1;
    }
    // Ancestors (2) at their rest values, so object space is the model's.
    for (const b of moved) for (let a = parentBone(b); a >= 0 && keep[a] === 0; a = parentBone(a)) keep[a] = 2;
    return skeleton.nodes.map((_, b) => b).filter((b) => keep[b] !== 0);
  }
  for (const skin of skins as { joints: number[] }[]) {
    // Joints were checked by chooseSkeleton; every joint and ancestor is a bone.
    const bonesOfSkin = new Set<number>();
    for (const j of skin.joints) {
      for (let n = j; n >= 0 && !bonesOfSkin.has(skeleton.boneOfNode[n]); n = hierarchy.parent[n])
        bonesOfSkin.add(skeleton.boneOfNode[n]);
    }
    if ([...moved].some((b) => bonesOfSkin.has(b))) for (const b of bonesOfSkin) keep[b] = 1;
  }
  return skeleton.nodes.map((_, b) => b).filter((b) => keep[b] === 1);
}

/** Whether any animation channel of the glTF JSON targets the morph weights of a node with a mesh. */
function animatesWeights(json: unknown): boolean {
  const { animations, nodes } = json as { animations?: unknown; nodes?: unknown };
  const hasMesh = (n: unknown): boolean =>
    Array.isArray(nodes) &&
    Number.isInteger(n) &&
    (nodes[n as number] as { mesh?: unknown } | undefined)?.mesh !== undefined;
  return (
    Array.isArray(animations) &&
    animations.some(
      (a: { channels?: unknown }) =>
        Array.isArray(a?.channels) &&
        a.channels.some(
          (c: { target?: { node?: unknown; path?: unknown } }) =>
            c?.target?.path === 'weights' && hasMesh(c.target.node),
        ),
    )
  );
}

/**
 * The morph targets of node `n`'s mesh: per primitive, each target's POSITION accessor
 * (undefined for a target without positions), and per target the default weight (the
 * node's `weights`, else the mesh's, else 0).
 */
function morphTargets(
  gltf: GltfJson,
  n: number,
  fail: Fail,
): { positions: (number | undefined)[][]; defaults: number[] } {
  const node = gltf.nodes[n];
  const where = `node ${n} ("${typeof node.name === 'string' ? node.name : ''}")`;
  const m = gltf.index(node.mesh, gltf.meshes.length, `${where} (animated weights) mesh`);
  const mesh = gltf.meshes[m];
  if (!isObject(mesh)) return fail(`meshes[${m}] is not an object`);
  const primitives = Array.isArray(mesh.primitives) ? (mesh.primitives as unknown[]) : [];
  let count = -1;
  const positions = primitives.map((prim, p) => {
    const targets = isObject(prim) && Array.isArray(prim.targets) ? (prim.targets as unknown[]) : [];
    if (count >= 0 && targets.length !== count)
      fail(`${where}: the primitives of its mesh have different numbers of morph targets`);
    count = targets.length;
    return targets.map((target, t) => {
      const a = isObject(target) ? target.POSITION : undefined;
      return a === undefined
        ? undefined
        : gltf.index(a, gltf.accessors.length, `meshes[${m}].primitives[${p}].targets[${t}].POSITION`);
    });
  });
  if (count <= 0) fail(`${where}: its weights are animated but its mesh has no morph targets`);
  const weights = Array.isArray(node.weights) ? node.weights : Array.isArray(mesh.weights) ? mesh.weights : [];
  const defaults = Array.from({ length: count }, (_, t) =>
    typeof weights[t] === 'number' && Number.isFinite(weights[t]) ? (weights[t] as number) : 0,
  );
  return { positions, defaults };
}

/**
 * Per morph target, the largest total displacement of a vertex it moves: at each vertex, the
 * sum over all `count` targets of their displacement lengths; 0 for a target that moves no
 * vertex. `positions` is {@link morphTargets}' per primitive accessor list, `data` decodes one
 * (undefined for an accessor that stores nothing: all zeros).
 */
function morphDisplacements(
  positions: readonly (number | undefined)[][],
  count: number,
  data: (accessor: number) => Float32Array | undefined,
): number[] {
  const scales = new Array<number>(count).fill(0);
  for (const targets of positions) {
    const displacements = targets.map((a) => (a === undefined ? undefined : data(a)));
    const length = Math.max(0, ...displacements.map((d) => d?.length ?? 0));
    for (let i = 0; i < length; i += 3) {
      let total = 0;
      for (const d of displacements) if (d !== undefined && i < d.length) total += Math.hypot(d[i], d[i + 1], d[i + 2]);
      if (total === 0) continue;
      displacements.forEach((d, t) => {
        if (d !== undefined && i < d.length && (d[i] !== 0 || d[i + 1] !== 0 || d[i + 2] !== 0))
          scales[t] = Math.max(scales[t], total);
      });
    }
  }
  return scales;
}

/** Distance from the origin to the farthest corner of the box `min`…`max` (0 when they are not 3 finite numbers each). */
function boundsRadius(min: unknown, max: unknown): number {
  const ok = (v: unknown): v is number[] =>
    Array.isArray(v) && v.length === 3 && v.every((x) => typeof x === 'number' && Number.isFinite(x));
  if (!ok(min) || !ok(max)) return 0;
  return Math.hypot(...min.map((lo, i) => Math.max(Math.abs(lo), Math.abs(max[i]))));
}

/**
 * Radius, in node `n`'s own space, of a sphere about its origin holding every mesh of its
 * subtree at rest (POSITION bounds, children's rest translations and largest scales).
 * Iterative, with the radii of visited nodes kept in `cache`, so a deep or shared subtree
 * costs one visit per node.
 */
function subtreeRadius(gltf: GltfJson, n: number, cache: Map<number, number>): number {
  const children = (i: number): number[] =>
    Array.isArray(gltf.nodes[i].children) ? (gltf.nodes[i].children as number[]) : [];
  // Post-order over the subtree (the hierarchy was checked for cycles and single parents by readHierarchy).
  const stack: number[] = [n];
  while (stack.length > 0) {
    const i = stack[stack.length - 1];
    if (cache.has(i)) {
      stack.pop();
      continue;
    }
    const pending = children(i).filter((c) => !cache.has(c));
    if (pending.length > 0) {
      for (const c of pending) stack.push(c);
      continue;
    }
    stack.pop();
    let radius = 0;
    const mesh = typeof gltf.nodes[i].mesh === 'number' ? gltf.meshes[gltf.nodes[i].mesh as number] : undefined;
    if (isObject(mesh)) {
      for (const prim of Array.isArray(mesh.primitives) ? mesh.primitives : []) {
        const a = isObject(prim) && isObject(prim.attributes) ? prim.attributes.POSITION : undefined;
        const def = typeof a === 'number' ? gltf.accessors[a] : undefined;
        if (isObject(def)) radius = Math.max(radius, boundsRadius(def.min, def.max));
      }
    }
    for (const c of children(i)) {
      const child = gltf.nodes[c];
      const m = Array.isArray(child.matrix) && child.matrix.length === 16 ? (child.matrix as number[]) : undefined;
      const t = m
        ? [m[12], m[13], m[14]]
        : Array.isArray(child.translation)
          ? (child.translation as number[])
          : [0, 0, 0];
      const scale = m
        ? Math.max(Math.hypot(m[0], m[1], m[2]), Math.hypot(m[4], m[5], m[6]), Math.hypot(m[8], m[9], m[10]))
        : Array.isArray(child.scale)
          ? Math.max(...(child.scale as number[]).map(Math.abs))
          : 1;
      const r = Math.hypot(t[0], t[1], t[2]) + scale * cache.get(c)!;
      if (Number.isFinite(r)) radius = Math.max(radius, r);
    }
    cache.set(i, radius);
  }
  return cache.get(n)!;
}

// ---------------------------------------------------------------------------------------
// Container: GLB chunks or JSON text.

const GLB_MAGIC = 0x46546c67; // "glTF"
const CHUNK_JSON = 0x4e4f534a; // "JSON"
const CHUNK_BIN = 0x004e4942; // "BIN\0"

/** The file's JSON and, for GLB, its BIN chunk. */
function parseContainer(bytes: Uint8Array, file: string): { json: unknown; glbBin: Uint8Array | undefined } {
  const corrupt = (problem: string, code: ParseErrorCode = PARSE_ERROR.BAD_VALUE): never => {
    throw new ParseError(code, `corrupt GLB: ${problem}`, file);
  };
  let first = 0;
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) first = 3; // UTF-8 BOM
  while (
    first < bytes.length &&
    (bytes[first] === 0x20 || bytes[first] === 0x09 || bytes[first] === 0x0a || bytes[first] === 0x0d)
  )
    first++;
  if (bytes[first] === 0x7b /* { */)
    return { json: parseJsonText(decodeUtf8(bytes.subarray(first), file), file), glbBin: undefined };

  if (bytes.length < 12) corrupt(`${bytes.length} bytes is shorter than the 12-byte header`, PARSE_ERROR.TRUNCATED);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const magic = view.getUint32(0, true);
  if (magic !== GLB_MAGIC)
    corrupt(`bad magic 0x${magic.toString(16).padStart(8, '0')} (expected "glTF", or a JSON file starting with "{")`);
  const version = view.getUint32(4, true);
  if (version !== 2) corrupt(`container version ${version} (only glTF 2.0 is supported)`, PARSE_ERROR.UNSUPPORTED);
  const length = view.getUint32(8, true);
  if (length > bytes.length)
    corrupt(`header says ${length} bytes but the file holds ${bytes.length} (truncated?)`, PARSE_ERROR.TRUNCATED);
  if (length < 20) corrupt(`header says ${length} bytes, too short for a JSON chunk`);
  let at = 12;
  let json: unknown;
  let glbBin: Uint8Array | undefined;
  for (let chunk = 0; at < length; chunk++) {
    if (at + 8 > length)
      corrupt(`chunk ${chunk} header at byte ${at} runs past the end (${length} bytes)`, PARSE_ERROR.TRUNCATED);
    const chunkLength = view.getUint32(at, true);
    const type = view.getUint32(at + 4, true);
    const data = at + 8;
    if (data + chunkLength > length)
      corrupt(
        `chunk ${chunk} (${chunkLength} bytes at byte ${data}) runs past the end (${length} bytes)`,
        PARSE_ERROR.TRUNCATED,
      );
    if (chunk === 0) {
      if (type !== CHUNK_JSON) corrupt(`first chunk has type 0x${type.toString(16)}, expected JSON`);
      json = parseJsonText(decodeUtf8(bytes.subarray(data, data + chunkLength), file), file);
    } else if (type === CHUNK_BIN && glbBin === undefined) {
      glbBin = bytes.subarray(data, data + chunkLength);
    } // Other chunk types are reserved for extensions: skipped, as the spec asks.
    at = data + ((chunkLength + 3) & ~3);
  }
  return { json, glbBin };
}

function decodeUtf8(bytes: Uint8Array, file: string): string {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new ParseError(PARSE_ERROR.SYNTAX, 'the glTF JSON is not valid UTF-8', file);
  }
}

/**
 * JSON.parse with the failure turned into a ParseError, at a line and column when V8's
 * message gives a position (or the input ended early); some messages quote the text instead.
 */
function parseJsonText(text: string, file: string): unknown {
  try {
    return JSON.parse(text);
  } catch (e) {
    const message = (e as Error).message;
    let line = 0,
      column = 0;
    const lc = /line (\d+) column (\d+)/.exec(message);
    const pos = /position (\d+)/.exec(message);
    const atEnd = /end of JSON input/.test(message);
    if (lc) {
      line = Number(lc[1]);
      column = Number(lc[2]);
    } else if (pos || atEnd) {
      const p = pos ? Number(pos[1]) : text.length;
      const before = text.slice(0, p);
      line = before.split('\n').length;
      column = p - before.lastIndexOf('\n');
    }
    throw new ParseError(PARSE_ERROR.SYNTAX, `invalid JSON: ${message}`, file, line, column);
  }
}

// ---------------------------------------------------------------------------------------
// JSON access with checks: untrusted input, so every index and type is verified once.

type Fail = (problem: string, code?: ParseErrorCode) => never;
type JsonObject = Record<string, unknown>;
type TrsPath = 'translation' | 'rotation' | 'scale';

function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The top-level glTF object and checked accessors for its arrays. */
class GltfJson {
  readonly nodes: JsonObject[];
  readonly animations: JsonObject[];
  readonly skins: JsonObject[];
  /** Checked only where extra tracks need them (a broken mesh does not stop reading animations). */
  readonly meshes: unknown[];
  readonly accessors: unknown[];
  readonly bufferViews: unknown[];
  readonly buffers: unknown[];

  constructor(
    json: unknown,
    readonly fail: Fail,
  ) {
    if (!isObject(json)) fail('the glTF JSON is not an object');
    const root = json as JsonObject;
    const asset = root.asset;
    if (!isObject(asset) || typeof asset.version !== 'string') fail('missing "asset.version" (not a glTF 2.0 file?)');
    const version = (asset as JsonObject).version as string;
    if (!/^2\.\d+$/.test(version)) fail(`glTF version "${version}" (only 2.x is supported)`, PARSE_ERROR.UNSUPPORTED);
    const list = (key: string): unknown[] => {
      const v = root[key];
      if (v === undefined) return [];
      if (!Array.isArray(v)) return fail(`"${key}" is not an array`);
      return v;
    };
    const objects = (key: string): JsonObject[] =>
      list(key).map((v, i) => (isObject(v) ? v : fail(`${key}[${i}] is not an object`)));
    this.nodes = objects('nodes');
    this.animations = objects('animations');
    this.skins = objects('skins');
    this.meshes = list('meshes');
    this.accessors = list('accessors');
    this.bufferViews = list('bufferViews');
    this.buffers = list('buffers');
  }

  /** `v` as an index into an array of `length`, or a failure naming `what`. */
  index(v: unknown, length: number, what: string): number {
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v >= length) {
      return this.fail(`${what} is ${describeJson(v)}, not an index below ${length}`);
    }
    return v;
  }

  /** A non-negative whole number, or `fallback` when absent. */
  count(v: unknown, what: string, fallback?: number): number {
    if (v === undefined && fallback !== undefined) return fallback;
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 0)
      return this.fail(`${what} is ${describeJson(v)}, not a whole number ≥ 0`);
    return v;
  }
}

/** Parent of every node (-1 for roots) and display names. */
interface Hierarchy {
  parent: Int32Array;
  names: string[];
}

function readHierarchy(gltf: GltfJson, fail: Fail): Hierarchy {
  const n = gltf.nodes.length;
  const parent = new Int32Array(n).fill(-1);
  gltf.nodes.forEach((node, i) => {
    if (node.children === undefined) return;
    if (!Array.isArray(node.children)) fail(`nodes[${i}].children is not an array`);
    (node.children as unknown[]).forEach((c, j) => {
      const child = gltf.index(c, n, `nodes[${i}].children[${j}]`);
      if (parent[child] >= 0 || child === i)
        fail(`node ${child} has more than one parent (nodes ${parent[child]} and ${i})`);
      parent[child] = i;
    });
  });
  // Each node has at most one parent, so walking up from every node and marking what is
  // known to reach a root visits each node a bounded number of times: linear in the node
  // count whatever the depth (a walk per node would cost nodes × depth).
  const state = new Uint8Array(n); // 0: not seen, 1: on the current walk, 2: reaches a root
  const walk: number[] = [];
  for (let i = 0; i < n; i++) {
    walk.length = 0;
    let p = i;
    while (p >= 0 && state[p] === 0) {
      state[p] = 1;
      walk.push(p);
      p = parent[p];
    }
    if (p >= 0 && state[p] === 1) fail(`node ${p} is its own ancestor (the node hierarchy has a cycle)`);
    for (const w of walk) state[w] = 2;
  }
  const names = gltf.nodes.map((node, i) =>
    typeof node.name === 'string' && node.name !== '' ? node.name : `node_${i}`,
  );
  return { parent, names };
}

/** A kept channel of one animation, as the file states it. */
interface ChannelRef {
  channelIndex: number;
  node: number;
  path: TrsPath | 'weights';
  input: number;
  output: number;
  interpolation: Interpolation;
}

interface AnimationRef {
  name: string;
  /** Translation, rotation and scale channels on the skeleton. */
  channels: ChannelRef[];
  /** With extra tracks: translation, rotation and scale channels on nodes outside the skeleton. */
  props: ChannelRef[];
  /** With extra tracks: morph-target weight channels. */
  weights: ChannelRef[];
}

const INTERPOLATIONS: readonly string[] = Object.values(INTERPOLATION);

/** Every animation's translation/rotation/scale channels, checked; the rest become warnings. */
function collectChannels(
  gltf: GltfJson,
  hierarchy: Hierarchy,
  warnings: string[],
  fail: Fail,
  extraTracks: boolean,
): AnimationRef[] {
  if (gltf.animations.length === 0) fail('no animations in the file', PARSE_ERROR.NO_ANIMATION);
  return gltf.animations.map((anim, a) => {
    const name = typeof anim.name === 'string' && anim.name !== '' ? anim.name : `animation_${a}`;
    const where = `animation "${name}"`;
    const channels = anim.channels,
      samplers = anim.samplers;
    if (!Array.isArray(channels) || channels.length === 0) fail(`${where} has no channels`);
    if (!Array.isArray(samplers)) fail(`${where} has no "samplers" array`);
    const samplerList = samplers as unknown[];
    const morph: string[] = [],
      other: string[] = [];
    const byTarget = new Map<string, ChannelRef>();
    const weights = new Map<number, ChannelRef>();
    (channels as unknown[]).forEach((ch, c) => {
      const what = `${where} channel ${c}`;
      if (!isObject(ch) || !isObject(ch.target)) return fail(`${what} has no target`);
      const s = gltf.index(ch.sampler, samplerList.length, `${what} sampler`);
      const sampler = samplerList[s];
      if (!isObject(sampler)) return fail(`${where} sampler ${s} is not an object`);
      const path = ch.target.path;
      if (ch.target.node === undefined) {
        other.push(`channel ${c} (${String(path)}, no target node)`);
        return;
      }
      const node = gltf.index(ch.target.node, gltf.nodes.length, `${what} target node`);
      if (path === 'weights' && !extraTracks) {
        morph.push(hierarchy.names[node]);
        return;
      }
      if (path !== 'translation' && path !== 'rotation' && path !== 'scale' && path !== 'weights') {
        other.push(`channel ${c} (path ${JSON.stringify(path)})`);
        return;
      }
      const interpolation = sampler.interpolation ?? INTERPOLATION.LINEAR;
      if (typeof interpolation !== 'string' || !INTERPOLATIONS.includes(interpolation)) {
        return fail(
          `${where} sampler ${s}: unknown interpolation ${JSON.stringify(interpolation)} (expected STEP, LINEAR or CUBICSPLINE)`,
        );
      }
      if (path === 'weights') {
        if (weights.has(node))
          warnings.push(
            `${where}: channels ${weights.get(node)!.channelIndex} and ${c} both animate ${hierarchy.names[node]}.weights; channel ${c} is used`,
          );
        weights.set(node, {
          channelIndex: c,
          node,
          path,
          input: gltf.index(sampler.input, gltf.accessors.length, `${where} sampler ${s} input`),
          output: gltf.index(sampler.output, gltf.accessors.length, `${where} sampler ${s} output`),
          interpolation: interpolation as Interpolation,
        });
        return;
      }
      const key = `${node}.${path}`;
      const previous = byTarget.get(key);
      if (previous) {
        warnings.push(
          `${where}: channels ${previous.channelIndex} and ${c} both animate ${hierarchy.names[node]}.${path}; channel ${c} is used`,
        );
        byTarget.delete(key);
      }
      byTarget.set(key, {
        channelIndex: c,
        node,
        path,
        input: gltf.index(sampler.input, gltf.accessors.length, `${where} sampler ${s} input`),
        output: gltf.index(sampler.output, gltf.accessors.length, `${where} sampler ${s} output`),
        interpolation: interpolation as Interpolation,
      });
    });
    if (morph.length > 0) {
      warnings.push(
        `${where}: ${morph.length} morph-target weight channel${morph.length > 1 ? 's' : ''} (${listNames(morph)}) not supported; ignored`,
      );
    }
    if (other.length > 0)
      warnings.push(
        `${where}: ${other.length} channel${other.length > 1 ? 's' : ''} not on a node transform (${other.join(', ')}); ignored`,
      );
    return { name, channels: [...byTarget.values()], props: [], weights: [...weights.values()] };
  });
}

function listNames(names: readonly string[]): string {
  const unique = [...new Set(names)];
  return unique.length <= 5 ? unique.join(', ') : `${unique.slice(0, 5).join(', ')}, …`;
}

/** Skeleton nodes (parents first), their bone names, and node → bone. */
interface SkeletonNodes {
  nodes: number[];
  names: string[];
  boneOfNode: Int32Array;
}

function chooseSkeleton(
  gltf: GltfJson,
  hierarchy: Hierarchy,
  animations: AnimationRef[],
  warnings: string[],
  fail: Fail,
  file: string,
): SkeletonNodes {
  const seeds: number[] = [];
  if (gltf.skins.length > 0) {
    gltf.skins.forEach((skin, s) => {
      if (!Array.isArray(skin.joints) || skin.joints.length === 0) fail(`skins[${s}] has no joints`);
      (skin.joints as unknown[]).forEach((j, i) =>
        seeds.push(gltf.index(j, gltf.nodes.length, `skins[${s}].joints[${i}]`)),
      );
    });
  } else {
    for (const a of animations) for (const ch of a.channels) seeds.push(ch.node);
  }
  const boneOfNode = new Int32Array(gltf.nodes.length).fill(-1);
  const nodes: number[] = [];
  const chain: number[] = [];
  for (const seed of seeds) {
    // Ancestors first, so every bone's parent precedes it; otherwise keep the joint order.
    chain.length = 0;
    for (let n = seed; n >= 0 && boneOfNode[n] < 0; n = hierarchy.parent[n]) chain.push(n);
    // Before the bone list grows past what a .bpk holds.
    checkBoneCount(file, 0, nodes.length + chain.length);
    for (let i = chain.length - 1; i >= 0; i--) {
      boneOfNode[chain[i]] = nodes.length;
      nodes.push(chain[i]);
    }
  }
  // Nodes an animated node carries without moving them (a camera, a mesh or a prop set off
  // from it) move with it at their own distance from it, where an error in its rotation
  // shows multiplied by that distance: they are measured as bones of their own, those with
  // something to see (a mesh or camera in their subtree), as many as a clip holds. Parents
  // precede children in `nodes`, so one pass over the growing list reaches every depth.
  const moves = new Uint8Array(gltf.nodes.length);
  for (const a of animations) for (const ch of a.channels) moves[ch.node] = 1;
  const shows = visibleSubtrees(gltf, hierarchy.parent);
  let dropped = 0;
  for (let b = 0; b < nodes.length; b++) {
    const n = nodes[b];
    const parent = hierarchy.parent[n];
    if (parent >= 0 && moves[parent] === 1) moves[n] = 1;
    if (moves[n] === 0) continue;
    for (const c of (gltf.nodes[n].children as number[] | undefined) ?? []) {
      if (boneOfNode[c] >= 0 || shows[c] === 0) continue;
      if (nodes.length >= READ_LIMITS.maxBones) {
        dropped++;
        continue;
      }
      boneOfNode[c] = nodes.length;
      nodes.push(c);
    }
  }
  if (dropped > 0)
    warnings.push(`${dropped} nodes carried by animated nodes are over the bone limit; their error is not measured`);
  const used = new Set<string>();
  const names = nodes.map((n) => {
    let name = hierarchy.names[n];
    if (used.has(name)) {
      const renamed = `${name}_${n}`;
      warnings.push(`two skeleton nodes are named "${name}"; node ${n} becomes bone "${renamed}"`);
      name = renamed;
    }
    used.add(name);
    return name;
  });
  return { nodes, names, boneOfNode };
}

/**
 * Per node, 1 when it or a node below it holds a mesh or a camera. Iterative post-order
 * (the hierarchy was checked for cycles and single parents by readHierarchy).
 */
function visibleSubtrees(gltf: GltfJson, parent: Int32Array): Uint8Array {
  const count = gltf.nodes.length;
  const shows = new Uint8Array(count);
  const order: number[] = [];
  // Roots first, then children: reversed, every child precedes its parent.
  const stack: number[] = [];
  for (let i = 0; i < count; i++) if (parent[i] < 0) stack.push(i);
  while (stack.length > 0) {
    const i = stack.pop()!;
    order.push(i);
    for (const c of (gltf.nodes[i].children as number[] | undefined) ?? []) stack.push(c);
  }
  for (let j = order.length - 1; j >= 0; j--) {
    const i = order[j];
    if (gltf.nodes[i].mesh !== undefined || gltf.nodes[i].camera !== undefined) shows[i] = 1;
    if (shows[i] === 1 && parent[i] >= 0) shows[parent[i]] = 1;
  }
  return shows;
}

/** Drops channels on nodes outside the skeleton, with one warning per animation. */
function keepSkeletonChannels(
  animations: AnimationRef[],
  skeleton: SkeletonNodes,
  hierarchy: Hierarchy,
  warnings: string[],
  extraTracks: boolean,
): void {
  for (const a of animations) {
    const outside = a.channels.filter((ch) => skeleton.boneOfNode[ch.node] < 0);
    if (outside.length === 0) continue;
    a.channels = a.channels.filter((ch) => skeleton.boneOfNode[ch.node] >= 0);
    if (extraTracks) {
      a.props = outside;
      continue;
    }
    warnings.push(
      `animation "${a.name}": ${outside.length} channel${outside.length > 1 ? 's' : ''} animate${outside.length > 1 ? '' : 's'} nodes outside the skeleton ` +
        `(${listNames(outside.map((ch) => hierarchy.names[ch.node]))}), which are not skin joints or their ancestors; ignored`,
    );
  }
}

// ---------------------------------------------------------------------------------------
// Trimming: a JSON document holding only what the kept channels need, renumbered.

const COMPONENT_BYTES: Readonly<Record<number, number>> = { 5120: 1, 5121: 1, 5122: 2, 5123: 2, 5125: 4, 5126: 4 };
const TYPE_COMPONENTS: Readonly<Record<string, number>> = {
  SCALAR: 1,
  VEC2: 2,
  VEC3: 3,
  VEC4: 4,
  MAT2: 4,
  MAT3: 9,
  MAT4: 16,
};

/**
 * The JSON document the animation data is decoded from: the skeleton's and the extra nodes
 * (in bone order, no `children`), the kept channels with their samplers, and only the
 * accessors, buffer views and buffers they read.
 */
async function trimDocument(
  gltf: GltfJson,
  hierarchy: Hierarchy,
  skeleton: SkeletonNodes,
  extraNodes: readonly number[],
  trimIndex: Int32Array,
  animations: AnimationRef[],
  glbBin: Uint8Array | undefined,
  options: GltfReadOptions,
  fail: Fail,
): Promise<{ document: JSONDocument; targetAccessors: Map<number, number> }> {
  const data = new TrimmedData(gltf, fail);
  const outAnimations = trimAnimations(gltf, animations, trimIndex, data, fail);
  const targetAccessors = trimMorphTargets(gltf, hierarchy, animations, data, fail);
  const { buffers, resources } = await loadTrimmedBuffers(gltf, data, glbBin, options, fail);
  const nodes = trimNodes(gltf, hierarchy, [...skeleton.nodes, ...extraNodes], fail);
  return {
    document: {
      json: {
        asset: { version: '2.0' },
        nodes,
        accessors: data.accessors,
        bufferViews: data.bufferViews,
        buffers,
        animations: outAnimations,
      } as unknown as JSONDocument['json'],
      resources,
    },
    targetAccessors,
  };
}

/**
 * The accessors, buffer views and buffers of a trimmed document, renumbered as they are kept
 * (each once), with the checks that bound them: counts within their views, views within
 * their buffers (checked once the buffers are loaded), meshopt streams within the limit.
 */
class TrimmedData {
  readonly accessors: JsonObject[] = [];
  readonly bufferViews: JsonObject[] = [];
  /** What each buffer of the trimmed document holds: a buffer of the file, or the decoded bytes of a meshopt view. */
  readonly bufferSources: (number | MeshoptView)[] = [];
  /** Where each kept view (or compressed meshopt stream) ends in its source buffer. */
  readonly viewEnds: { what: string; buffer: number; end: number }[] = [];
  private readonly accessorMap = new Map<number, number>();
  private readonly viewMap = new Map<number, number>();
  private readonly bufferMap = new Map<number, number>();
  private meshoptBytes = 0;

  constructor(
    private readonly gltf: GltfJson,
    private readonly fail: Fail,
  ) {}

  keepBuffer(b: number): number {
    let i = this.bufferMap.get(b);
    if (i === undefined) {
      i = this.bufferSources.length;
      this.bufferMap.set(b, i);
      this.bufferSources.push(b);
    }
    return i;
  }

  /** Keeps buffer view `v` (its buffer, or, for a meshopt view, its decoded stream) once; its index in the trimmed document. */
  keepView(v: number, what: string): { index: number; byteLength: number; byteStride: number | undefined } {
    const { gltf, fail } = this;
    const def = gltf.bufferViews[v];
    if (!isObject(def)) return fail(`bufferViews[${v}] (${what}) is not an object`);
    const byteLength = gltf.count(def.byteLength, `bufferViews[${v}].byteLength`);
    const byteStride =
      def.byteStride === undefined ? undefined : gltf.count(def.byteStride, `bufferViews[${v}].byteStride`);
    let index = this.viewMap.get(v);
    if (index === undefined) {
      index = this.bufferViews.length;
      this.viewMap.set(v, index);
      const meshopt = isObject(def.extensions) ? def.extensions.EXT_meshopt_compression : undefined;
      if (meshopt !== undefined) {
        // gltfpack -c output: the view's bytes are a meshopt stream in another buffer; its own
        // buffer may be a fallback with no data, so only the stream's buffer is loaded.
        const stream = readMeshoptView(gltf, v, meshopt, byteLength, fail);
        this.viewEnds.push({
          what: `bufferViews[${v}].extensions.EXT_meshopt_compression`,
          buffer: stream.buffer,
          end: stream.byteOffset + stream.byteLength,
        });
        this.meshoptBytes += stream.count * stream.byteStride;
        if (!(this.meshoptBytes <= GLTF_DEFAULTS.maxMeshoptBytes)) {
          fail(
            `the EXT_meshopt_compression views of the animations decode to more than the reader's limit of ${GLTF_DEFAULTS.maxMeshoptBytes} bytes (at bufferViews[${v}])`,
            PARSE_ERROR.LIMIT,
          );
        }
        this.bufferViews.push({
          buffer: this.bufferSources.length,
          byteOffset: 0,
          byteLength,
          ...(byteStride !== undefined ? { byteStride } : {}),
        });
        this.bufferSources.push(stream);
      } else {
        const buffer = gltf.index(def.buffer, gltf.buffers.length, `bufferViews[${v}].buffer`);
        const byteOffset = gltf.count(def.byteOffset, `bufferViews[${v}].byteOffset`, 0);
        this.bufferViews.push({
          buffer: this.keepBuffer(buffer),
          byteOffset,
          byteLength,
          ...(byteStride !== undefined ? { byteStride } : {}),
        });
        this.viewEnds.push({ what: `bufferViews[${v}]`, buffer, end: byteOffset + byteLength });
      }
    }
    return { index, byteLength, byteStride };
  }

  /** Checks that `count` elements at `byteOffset` (with the view's stride) fit inside view `v`. */
  fits(v: number, byteOffset: number, count: number, elementBytes: number, what: string): number {
    const view = this.keepView(v, what);
    // A stride shorter than an element (0 above all) would let any count fit in a few bytes.
    if (view.byteStride !== undefined && view.byteStride < elementBytes) {
      this.fail(
        `bufferViews[${v}].byteStride is ${view.byteStride}, shorter than the ${elementBytes}-byte elements of ${what}`,
      );
    }
    const stride = view.byteStride ?? elementBytes;
    const needed = count === 0 ? 0 : byteOffset + stride * (count - 1) + elementBytes;
    if (needed > view.byteLength)
      this.fail(`${what} needs ${needed} bytes of bufferViews[${v}], which holds ${view.byteLength}`);
    return view.index;
  }

  /**
   * Keeps accessor `a` of a sampler. Its count is bounded by the bytes present: elements in
   * its buffer view, or, without one, its sparse entries (the rest read as zeros). An
   * accessor with neither holds no data, only a declared count, and is rejected.
   */
  keepAccessor(
    a: number,
    what: string,
    type: readonly string[],
  ): { index: number; count: number; sparseOnly: number | undefined } {
    const { gltf, fail } = this;
    const def = gltf.accessors[a];
    if (!isObject(def)) return fail(`accessors[${a}] (${what}) is not an object`);
    const componentType = def.componentType as number;
    const bytes = COMPONENT_BYTES[componentType];
    if (bytes === undefined)
      fail(`accessors[${a}] (${what}): unknown componentType ${JSON.stringify(def.componentType)}`);
    if (typeof def.type !== 'string' || !type.includes(def.type)) {
      fail(`accessors[${a}] (${what}) has type ${JSON.stringify(def.type)}, expected ${type.join(' or ')}`);
    }
    const count = gltf.count(def.count, `accessors[${a}].count`);
    if (def.bufferView === undefined && def.sparse === undefined) {
      fail(
        `accessors[${a}] (${what}) has no bufferView and no sparse values: its ${count} elements are not stored in the file`,
      );
    }
    let index = this.accessorMap.get(a);
    let sparseOnly: number | undefined;
    if (index !== undefined) {
      if (def.bufferView === undefined)
        sparseOnly = gltf.count((def.sparse as JsonObject).count, `accessors[${a}].sparse.count`);
      return { index, count, sparseOnly };
    }
    const elementBytes = bytes * TYPE_COMPONENTS[def.type as string];
    const out: JsonObject = { componentType, type: def.type, count };
    if (def.normalized === true) out.normalized = true;
    if (def.bufferView !== undefined) {
      const v = gltf.index(def.bufferView, gltf.bufferViews.length, `accessors[${a}].bufferView`);
      const byteOffset = gltf.count(def.byteOffset, `accessors[${a}].byteOffset`, 0);
      out.bufferView = this.fits(v, byteOffset, count, elementBytes, `accessors[${a}] (${what})`);
      if (byteOffset) out.byteOffset = byteOffset;
    }
    if (def.sparse !== undefined) {
      const sparse = def.sparse;
      if (!isObject(sparse) || !isObject(sparse.indices) || !isObject(sparse.values))
        return fail(`accessors[${a}].sparse is malformed`);
      const sparseCount = gltf.count(sparse.count, `accessors[${a}].sparse.count`);
      if (sparseCount > count)
        fail(`accessors[${a}].sparse.count is ${sparseCount}, more than the accessor's count ${count}`);
      if (def.bufferView === undefined) sparseOnly = sparseCount;
      const indexBytes = COMPONENT_BYTES[sparse.indices.componentType as number];
      if (indexBytes === undefined || sparse.indices.componentType === 5126)
        fail(`accessors[${a}].sparse.indices has a bad componentType`);
      const iv = gltf.index(
        sparse.indices.bufferView,
        gltf.bufferViews.length,
        `accessors[${a}].sparse.indices.bufferView`,
      );
      const io = gltf.count(sparse.indices.byteOffset, `accessors[${a}].sparse.indices.byteOffset`, 0);
      const vv = gltf.index(
        sparse.values.bufferView,
        gltf.bufferViews.length,
        `accessors[${a}].sparse.values.bufferView`,
      );
      const vo = gltf.count(sparse.values.byteOffset, `accessors[${a}].sparse.values.byteOffset`, 0);
      out.sparse = {
        count: sparseCount,
        indices: {
          bufferView: this.fits(iv, io, sparseCount, indexBytes, `accessors[${a}].sparse.indices`),
          byteOffset: io,
          componentType: sparse.indices.componentType,
        },
        values: {
          bufferView: this.fits(vv, vo, sparseCount, elementBytes, `accessors[${a}].sparse.values`),
          byteOffset: vo,
        },
      };
    }
    index = this.accessors.length;
    this.accessorMap.set(a, index);
    this.accessors.push(out);
    return { index, count, sparseOnly };
  }
}

/**
 * The kept channels of `animations` as trimmed JSON animations (one sampler per channel,
 * nodes renumbered by `trimIndex`), keeping their accessors in `data`; the key and value
 * counts are checked against each other.
 */
function trimAnimations(
  gltf: GltfJson,
  animations: readonly AnimationRef[],
  trimIndex: Int32Array,
  data: TrimmedData,
  fail: Fail,
): JsonObject[] {
  return animations.map((anim) => {
    const samplers: JsonObject[] = [];
    const channels = [...anim.channels, ...anim.props, ...anim.weights].map((ch, i) => {
      const what = `animation "${anim.name}" channel ${ch.channelIndex}`;
      const input = data.keepAccessor(ch.input, `${what} key times`, ['SCALAR']);
      const output = data.keepAccessor(ch.output, `${what} ${ch.path} values`, [
        ch.path === 'rotation' ? 'VEC4' : ch.path === 'weights' ? 'SCALAR' : 'VEC3',
      ]);
      if (input.count === 0) fail(`${what}: zero keys`);
      // Key times increase (glTF requires it strictly), so a sparse accessor over zeros holds at
      // most one key beyond its sparse entries; more would be repeated zeros no byte backs.
      // Output counts are tied to the input count below.
      if (input.sparseOnly !== undefined && input.count > input.sparseOnly + 1) {
        fail(
          `${what}: accessors[${ch.input}] declares ${input.count} key times but stores ${input.sparseOnly} (sparse, no bufferView); key times must increase`,
        );
      }
      const perKey = ch.path === 'weights' ? morphTargets(gltf, ch.node, fail).defaults.length : 1;
      const expected = (ch.interpolation === INTERPOLATION.CUBICSPLINE ? 3 * input.count : input.count) * perKey;
      if (output.count !== expected) {
        const targets = perKey > 1 ? ` × ${perKey} morph targets` : '';
        fail(
          `${what}: ${input.count} key times but ${output.count} output values (${ch.interpolation}${targets} needs ${expected}); accessor counts disagree`,
        );
      }
      samplers.push({ input: input.index, output: output.index, interpolation: ch.interpolation });
      return { sampler: i, target: { node: trimIndex[ch.node], path: ch.path } };
    });
    return { name: anim.name, channels, samplers };
  });
}

/**
 * Keeps the POSITION accessors of the morph targets of the nodes whose weights are animated,
 * for the weights' precision (morphScales): each source accessor's index in the trimmed
 * document. An accessor with neither a buffer view nor sparse values is all zeros and is not kept.
 */
function trimMorphTargets(
  gltf: GltfJson,
  hierarchy: Hierarchy,
  animations: readonly AnimationRef[],
  data: TrimmedData,
  fail: Fail,
): Map<number, number> {
  const targetAccessors = new Map<number, number>();
  for (const n of new Set(animations.flatMap((anim) => anim.weights.map((ch) => ch.node)))) {
    for (const a of morphTargets(gltf, n, fail).positions.flat()) {
      const def = a === undefined ? undefined : gltf.accessors[a];
      if (
        a === undefined ||
        targetAccessors.has(a) ||
        (isObject(def) && def.bufferView === undefined && def.sparse === undefined)
      )
        continue;
      targetAccessors.set(
        a,
        data.keepAccessor(a, `node ${n} ("${hierarchy.names[n]}") morph target POSITION`, ['VEC3']).index,
      );
    }
  }
  return targetAccessors;
}

/**
 * Loads the buffers `data` keeps (file buffers first: each view, and each meshopt stream
 * before it is decoded, is checked against its buffer), as the trimmed document's resources.
 */
async function loadTrimmedBuffers(
  gltf: GltfJson,
  data: TrimmedData,
  glbBin: Uint8Array | undefined,
  options: GltfReadOptions,
  fail: Fail,
): Promise<{ buffers: JsonObject[]; resources: Record<string, Uint8Array<ArrayBuffer>> }> {
  const resources: Record<string, Uint8Array<ArrayBuffer>> = {};
  const loaded = new Map<number, Promise<Uint8Array>>();
  const load = (b: number): Promise<Uint8Array> => {
    let pending = loaded.get(b);
    if (pending === undefined) {
      pending = (async () => {
        const def = gltf.buffers[b];
        if (!isObject(def)) return fail(`buffers[${b}] is not an object`);
        const declared = gltf.count(def.byteLength, `buffers[${b}].byteLength`);
        const bytes = await loadBuffer(def, b, glbBin, options, fail);
        if (bytes.byteLength < declared)
          fail(`buffer ${b} holds ${bytes.byteLength} bytes but declares ${declared}`, PARSE_ERROR.TRUNCATED);
        return bytes;
      })();
      loaded.set(b, pending);
    }
    return pending;
  };
  // File buffers first: a meshopt stream is checked against its buffer before it is decoded.
  await Promise.all(data.bufferSources.map((source) => (typeof source === 'number' ? load(source) : undefined)));
  for (const { what, buffer, end } of data.viewEnds) {
    const size = (await load(buffer)).byteLength;
    if (end > size) fail(`${what} ends at byte ${end} but buffer ${buffer} holds ${size}`, PARSE_ERROR.TRUNCATED);
  }
  const buffers = await Promise.all(
    data.bufferSources.map(async (source, i) => {
      const bytes =
        typeof source === 'number'
          ? await load(source)
          : await decodeMeshoptView(source, await load(source.buffer), fail);
      // A "__" prefix keeps glTF-Transform from treating the key as a URI to write back.
      const key = `__bonepress_buffer_${i}.bin`;
      resources[key] = bytes as Uint8Array<ArrayBuffer>;
      return { uri: key, byteLength: bytes.byteLength };
    }),
  );
  return { buffers, resources };
}

/** The trimmed document's nodes: `nodes` of the file in that order, with their names and rest transforms. */
function trimNodes(gltf: GltfJson, hierarchy: Hierarchy, nodes: readonly number[], fail: Fail): JsonObject[] {
  // Only the skeleton's nodes, in bone order and without `children` (parents come from
  // readHierarchy): glTF-Transform's cost grows faster than linearly with nodes and edges,
  // and a file with 100,000 nodes would spend seconds there for nothing.
  return nodes.map((i) => {
    const node = gltf.nodes[i];
    const out: JsonObject = { name: hierarchy.names[i] };
    for (const [key, size] of [
      ['translation', 3],
      ['rotation', 4],
      ['scale', 3],
      ['matrix', 16],
    ] as const) {
      const v = node[key];
      if (v === undefined) continue;
      if (!Array.isArray(v) || v.length !== size || !v.every((x) => typeof x === 'number' && Number.isFinite(x))) {
        fail(`nodes[${i}].${key} must be ${size} finite numbers`);
      }
      out[key] = v;
    }
    return out;
  });
}

/** An `EXT_meshopt_compression` buffer view: where its compressed stream is and how it decodes. */
interface MeshoptView {
  view: number;
  buffer: number;
  byteOffset: number;
  byteLength: number;
  count: number;
  byteStride: number;
  mode: 'ATTRIBUTES' | 'TRIANGLES' | 'INDICES';
  filter: 'NONE' | 'OCTAHEDRAL' | 'QUATERNION' | 'EXPONENTIAL' | 'COLOR';
}

const MESHOPT_MODES: readonly string[] = ['ATTRIBUTES', 'TRIANGLES', 'INDICES'];
const MESHOPT_FILTERS: readonly string[] = ['NONE', 'OCTAHEDRAL', 'QUATERNION', 'EXPONENTIAL', 'COLOR'];

/** Checks the `EXT_meshopt_compression` object of buffer view `v` (declared `byteLength` bytes once decoded). */
function readMeshoptView(gltf: GltfJson, v: number, def: unknown, byteLength: number, fail: Fail): MeshoptView {
  const at = `bufferViews[${v}].extensions.EXT_meshopt_compression`;
  if (!isObject(def)) return fail(`${at} is not an object`);
  const buffer = gltf.index(def.buffer, gltf.buffers.length, `${at}.buffer`);
  const byteOffset = gltf.count(def.byteOffset, `${at}.byteOffset`, 0);
  const streamLength = gltf.count(def.byteLength, `${at}.byteLength`);
  const count = gltf.count(def.count, `${at}.count`);
  const byteStride = gltf.count(def.byteStride, `${at}.byteStride`);
  const mode = def.mode,
    filter = def.filter ?? 'NONE';
  if (typeof mode !== 'string' || !MESHOPT_MODES.includes(mode))
    fail(`${at}.mode is ${describeJson(mode)} (expected ATTRIBUTES, TRIANGLES or INDICES)`);
  if (typeof filter !== 'string' || !MESHOPT_FILTERS.includes(filter))
    fail(
      `${at}.filter is ${describeJson(filter)} (expected NONE, OCTAHEDRAL, QUATERNION, EXPONENTIAL or COLOR)`,
      PARSE_ERROR.UNSUPPORTED,
    );
  // The limits of the extension's specification, which the decoder relies on.
  const strideOk =
    mode === 'ATTRIBUTES'
      ? byteStride > 0 && byteStride <= 256 && byteStride % 4 === 0
      : byteStride === 2 || byteStride === 4;
  if (!strideOk) fail(`${at}.byteStride ${byteStride} is not allowed in mode ${mode as string}`);
  if (mode === 'TRIANGLES' && count % 3 !== 0) fail(`${at}.count ${count} is not a multiple of 3 (mode TRIANGLES)`);
  const decoded = count * byteStride;
  if (decoded < byteLength)
    fail(`${at} decodes to ${decoded} bytes (count × byteStride), fewer than the view's byteLength ${byteLength}`);
  return {
    view: v,
    buffer,
    byteOffset,
    byteLength: streamLength,
    count,
    byteStride,
    mode: mode as MeshoptView['mode'],
    filter: filter as MeshoptView['filter'],
  };
}

/** Decodes a meshopt view from the buffer its stream lies in (bounds already checked). */
async function decodeMeshoptView(view: MeshoptView, source: Uint8Array, fail: Fail): Promise<Uint8Array> {
  // Loaded on first use: most files have no meshopt views, and the decoder carries its WebAssembly.
  const { MeshoptDecoder } = await import('meshoptimizer/decoder');
  await MeshoptDecoder.ready;
  const out = new Uint8Array(view.count * view.byteStride);
  try {
    MeshoptDecoder.decodeGltfBuffer(
      out,
      view.count,
      view.byteStride,
      source.subarray(view.byteOffset, view.byteOffset + view.byteLength),
      view.mode,
      view.filter,
    );
  } catch (e) {
    return fail(`bufferViews[${view.view}]: cannot decode its EXT_meshopt_compression data (${(e as Error).message})`);
  }
  return out;
}

/** The bytes of buffer `b`: the GLB BIN chunk, a data: URI, or an external resource. */
async function loadBuffer(
  def: JsonObject,
  b: number,
  glbBin: Uint8Array | undefined,
  options: GltfReadOptions,
  fail: Fail,
): Promise<Uint8Array> {
  const uri = def.uri;
  if (uri === undefined) {
    if (b === 0 && glbBin) return glbBin;
    return fail(
      glbBin === undefined && b === 0 ? 'buffer 0 has no uri and there is no GLB BIN chunk' : `buffer ${b} has no uri`,
      PARSE_ERROR.TRUNCATED,
    );
  }
  if (typeof uri !== 'string') return fail(`buffers[${b}].uri is not a string`);
  if (uri.startsWith('data:')) return decodeDataUri(uri, b, fail);
  let decoded = uri;
  try {
    decoded = decodeURIComponent(uri);
  } catch {
    /* keep the raw URI */
  }
  const given = options.resources?.[uri] ?? options.resources?.[decoded];
  if (given) return given;
  if (options.loadResource) {
    let loaded: Uint8Array | undefined;
    try {
      loaded = await options.loadResource(uri);
    } catch (e) {
      // The loader's message says why (outside the asset's folder, not a regular file…); it
      // never holds bytes of the resource.
      return fail(
        `cannot load buffer ${quoteText(uri)} (buffer ${b}): ${(e as Error).message}`,
        PARSE_ERROR.UNSUPPORTED,
      );
    }
    if (loaded) return loaded;
  }
  // With a loader (files on disk) the buffer file is missing; without one the caller must pass it.
  const remedy = options.loadResource
    ? 'no such file next to the glTF'
    : 'supply it with the resources or loadResource option';
  return fail(`missing buffer ${quoteText(uri)} (buffer ${b}): ${remedy}`, PARSE_ERROR.TRUNCATED);
}

/** Decodes `data:[<mime>][;base64],<data>`. */
function decodeDataUri(uri: string, b: number, fail: Fail): Uint8Array {
  const comma = uri.indexOf(',');
  if (comma < 0) return fail(`buffers[${b}].uri is a malformed data: URI (no comma)`);
  const header = uri.slice(5, comma);
  const payload = uri.slice(comma + 1);
  if (/;base64$/i.test(header)) {
    let binary: string;
    try {
      binary = atob(payload.replace(/\s+/g, ''));
    } catch {
      return fail(`buffers[${b}].uri holds invalid base64`);
    }
    const out = new Uint8Array(binary.length);
    for (let i = 0; i < binary.length; i++) out[i] = binary.charCodeAt(i);
    return out;
  }
  try {
    return new TextEncoder().encode(decodeURIComponent(payload));
  } catch {
    return fail(`buffers[${b}].uri is a malformed data: URI`);
  }
}

/** An accessor's elements as float32, normalised integers decoded to [-1, 1] or [0, 1]. */
function accessorFloats(accessor: Accessor): Float32Array {
  const count = accessor.getCount();
  const size = accessor.getElementSize();
  const out = new Float32Array(count * size);
  const array = accessor.getArray();
  if (array instanceof Float32Array && !accessor.getNormalized()) {
    out.set(array.subarray(0, count * size));
    return out;
  }
  const element: number[] = new Array<number>(size).fill(0);
  for (let i = 0; i < count; i++) {
    accessor.getElement(i, element);
    for (let c = 0; c < size; c++) out[i * size + c] = element[c];
  }
  return out;
}

/** A JSON value for an error message, cut to a readable length (a huge array is not echoed). */
function describeJson(v: unknown): string {
  const text = JSON.stringify(v) ?? String(v);
  return text.length <= MAX_QUOTED_CHARS ? text : quoteText(text);
}

function formatRate(rate: number): string {
  return Number.isInteger(rate) ? String(rate) : rate.toFixed(3);
}
