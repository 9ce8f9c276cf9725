/**
 * Which three.js object each bone of a compressed clip drives: by glTF node index when the
 * clip came from the same asset as the loaded scene, else by the name three.js gives the
 * node, else by an explicit bone map. Unbound bones are reported, never silently left in
 * their rest pose.
 */
import type { BufferAttribute, InterleavedBufferAttribute, Mesh, Object3D, Skeleton } from 'three';

import { FormatError } from '../runtime/errors.js';
import { morphWeightScale } from '../runtime/morph-share.js';

/**
 * three.js's `PropertyBinding.sanitizeNodeName`, which GLTFLoader applies to every node
 * name: white space becomes `_` and the characters `[ ] . : /` are removed
 * (`mixamorig:Hips` → `mixamorigHips`, `Foot.L` → `FootL`). Written out so the binding
 * logic runs without three.js loaded; test/adapters checks it against three's own.
 */
export function sanitizeNodeName(name: string): string {
  return name.replace(/\s/g, '_').replace(/[[\].:/]/g, '');
}

/** What a clip offers for binding: {@link CompressedClip} satisfies it. */
export interface BindableClip {
  readonly boneCount: number;
  readonly boneNames: readonly string[] | undefined;
  readonly nodeIndices?: Int32Array | undefined;
}

/** Options of {@link bindBones}. */
export interface BindOptions {
  /**
   * The loader's node associations, `gltf.parser.associations` (three.js GLTFLoader): with a
   * clip that carries glTF node indices, each bone binds to the object made from its node,
   * unnamed nodes included. Use it when the scene is the one the loader returned (a clone
   * has new objects: bind it by name).
   */
  associations?: ReadonlyMap<unknown, { nodes?: number } | undefined>;
  /**
   * The object three.js made of each glTF node, by node index ({@link gltfNodeObjects} of
   * the loader's result): with a clip that carries node indices, each bone binds to its
   * node's object, unnamed nodes included, whatever `associations` records. Checked before
   * `associations`.
   */
  nodes?: ArrayLike<Object3D | undefined>;
  /** Clip bone name → scene object name, tried before the sanitized name. */
  boneMap?: Readonly<Record<string, string>>;
  /**
   * Bone names in clip order, for a clip compressed without its names section
   * (`stripNames`). Default: the clip's own names.
   */
  boneNames?: readonly string[];
  /**
   * glTF node index of every bone in clip order, for a clip stored without its node-index
   * section (a `BONEPRESS_animation_compression` asset keeps them in its bone table).
   * Default: the clip's own.
   */
  nodeIndices?: ArrayLike<number>;
  /** Throw when a bone does not bind instead of reporting it. Default false. */
  strict?: boolean;
}

/** The outcome of {@link bindBones}. */
export interface BoneBinding {
  /** Per clip bone: the object it drives, or undefined when it binds to nothing. */
  readonly objects: readonly (Object3D | undefined)[];
  /** Names of the clip bones that bind to nothing, in clip order. */
  readonly unboundBones: readonly string[];
}

/**
 * Finds the object each bone of `clip` drives under `root` (the object an
 * `AnimationMixer` would animate, e.g. `gltf.scene`, or a `Skeleton`'s bones): by node index through
 * `options.nodes` or `options.associations`, else by `options.boneMap`, else by the sanitized name, looking
 * at `root` itself and its descendants as three.js's `PropertyBinding.findNode` does.
 * Throws {@link FormatError} (BAD_ARGUMENT) when names are missing, or, with `strict`,
 * when a bone does not bind.
 */
export function bindBones(clip: BindableClip, root: Object3D | Skeleton, options: BindOptions = {}): BoneBinding {
  const names = options.boneNames ?? clip.boneNames;
  if (names && names.length !== clip.boneCount) {
    throw new FormatError('BAD_ARGUMENT', `${names.length} bone names for a clip of ${clip.boneCount} bones`);
  }
  const nodeIndices = options.nodeIndices ?? clip.nodeIndices;
  if (nodeIndices && nodeIndices.length !== clip.boneCount) {
    throw new FormatError('BAD_ARGUMENT', `${nodeIndices.length} node indices for a clip of ${clip.boneCount} bones`);
  }
  const byNode = new Map<number, Object3D>();
  if (options.associations && nodeIndices) {
    for (const [object, value] of options.associations) {
      if (value?.nodes !== undefined && isObject3D(object)) byNode.set(value.nodes, object);
    }
  }
  if (options.nodes && nodeIndices) {
    for (let n = 0; n < options.nodes.length; n++) {
      const object = options.nodes[n];
      if (object) byNode.set(n, object);
    }
  }
  const byName = new Map<string, Object3D>();
  const add = (o: Object3D) => {
    if (o.name !== '' && !byName.has(o.name)) byName.set(o.name, o);
  };
  if ('bones' in root) root.bones.forEach(add);
  else root.traverse(add);
  const objects: (Object3D | undefined)[] = [];
  const unbound: string[] = [];
  for (let b = 0; b < clip.boneCount; b++) {
    const name = names?.[b];
    let object = nodeIndices ? byNode.get(nodeIndices[b]) : undefined;
    if (!object && name !== undefined) {
      const mapped = options.boneMap?.[name];
      object = mapped !== undefined ? byName.get(mapped) : (byName.get(sanitizeNodeName(name)) ?? byName.get(name));
    }
    objects.push(object);
    if (!object) unbound.push(name ?? `bone ${b}`);
  }
  if (!names && byNode.size === 0) {
    throw new FormatError(
      'BAD_ARGUMENT',
      'the clip has no bone names (compressed with stripNames) and no node indices bind it; pass options.boneNames',
    );
  }
  if (options.strict && unbound.length > 0) {
    throw new FormatError(
      'BAD_ARGUMENT',
      `${unbound.length} of ${clip.boneCount} bones bind to nothing in the scene: ${listNames(unbound)}`,
    );
  }
  return { objects, unboundBones: unbound };
}

/** One glTF node's morph-weight bones in a clip: see `MixerClipOptions.morphWeights` (three-mixer.ts). */
export interface WeightBones {
  readonly firstBone: number;
  readonly scales: readonly number[];
  readonly objects: readonly Object3D[];
}

const WEIGHT_BONE = /^(.*)\.weights\[(\d+)\]$/;

/**
 * The morph-weight bones of a loose clip read from a glTF file (readers/gltf.ts names them
 * `<node>.weights[<t>]`, one per morph target of that node, and gives each the node's index),
 * with the meshes three.js made of the node (found through `options.nodes`, `associations`
 * or the name) and each target's displacement scale, recomputed as the reader computes it
 * from the targets' POSITION data. Empty when the clip has no such bones; a node with no
 * morph mesh in the scene gets no objects (its weight bones then set nothing, and are never
 * bound as transforms of the node).
 */
export function findWeightBones(
  clip: BindableClip,
  root: Object3D | Skeleton,
  options: BindOptions = {},
): WeightBones[] {
  const names = options.boneNames ?? clip.boneNames;
  if (!names) return [];
  const nodeIndices = options.nodeIndices ?? clip.nodeIndices;
  const out: WeightBones[] = [];
  for (let b = 0; b < clip.boneCount; ) {
    const match = WEIGHT_BONE.exec(names[b]);
    if (!match || Number(match[2]) !== 0) {
      b++;
      continue;
    }
    const node = nodeIndices?.[b];
    let count = 1;
    while (
      b + count < clip.boneCount &&
      names[b + count] === `${match[1]}.weights[${count}]` &&
      nodeIndices?.[b + count] === node
    )
      count++;
    const object = nodeObject(node, match[1], root, options);
    const objects: Object3D[] = [];
    object?.traverse((o) => {
      if ((o as Mesh).morphTargetInfluences) objects.push(o);
    });
    // Bones before the first weight bone are transforms the weights share the bound with.
    out.push({ firstBone: b, scales: targetScales(objects, count, (out[0]?.firstBone ?? b) > 0), objects });
    b += count;
  }
  return out;
}

/** The object of glTF node `node` (by index through the options, else by name under `root`). */
function nodeObject(
  node: number | undefined,
  name: string,
  root: Object3D | Skeleton,
  options: BindOptions,
): Object3D | undefined {
  if (node !== undefined && node >= 0) {
    const direct = options.nodes?.[node];
    if (direct) return direct;
    for (const [object, value] of options.associations ?? [])
      if (value?.nodes === node && isObject3D(object)) return object;
  }
  if ('bones' in root) return undefined;
  return root.getObjectByName(sanitizeNodeName(name)) ?? root.getObjectByName(name);
}

/**
 * Per morph target, its weight's scale as the glTF reader derives it (readers/gltf.ts
 * `morphDisplacements`, runtime/morph-share.ts): from the largest total displacement, summed
 * over all targets of a primitive (here: a mesh), of a vertex the target moves, and whether
 * the clip moves transforms too (`shared`).
 */
function targetScales(meshes: readonly Object3D[], count: number, shared: boolean): number[] {
  const scales = new Array<number>(count).fill(0);
  for (const mesh of meshes) {
    const targets = ((mesh as Mesh).geometry?.morphAttributes.position ?? []) as (
      | BufferAttribute
      | InterleavedBufferAttribute
      | undefined
    )[];
    const vertices = Math.max(0, ...targets.map((a) => a?.count ?? 0));
    for (let i = 0; i < vertices; i++) {
      let total = 0;
      for (let t = 0; t < count; t++) {
        const a = targets[t];
        if (a && i < a.count) total += Math.hypot(a.getX(i), a.getY(i), a.getZ(i));
      }
      if (total === 0) continue;
      for (let t = 0; t < count; t++) {
        const a = targets[t];
        if (a && i < a.count && (a.getX(i) !== 0 || a.getY(i) !== 0 || a.getZ(i) !== 0))
          scales[t] = Math.max(scales[t], total);
      }
    }
  }
  return scales.map((d) => morphWeightScale(d, shared));
}

/** What {@link gltfNodeObjects} reads of a GLTFLoader result. */
export interface LoadedGltf {
  readonly parser: {
    readonly json: { readonly nodes?: readonly unknown[] };
    getDependency(type: 'node', index: number): Promise<unknown>;
  };
}

/**
 * The object three.js's GLTFLoader made of every glTF node of `gltf` (its `load`/`parse`
 * result), by node index: pass it as {@link BindOptions.nodes} to bind a loose clip's bones
 * by node index, unnamed joints included. The loader caches each node, so these are the
 * objects of `gltf.scene` (not of a clone: bind a clone by name).
 */
export async function gltfNodeObjects(gltf: LoadedGltf): Promise<Object3D[]> {
  const count = gltf.parser.json.nodes?.length ?? 0;
  return Promise.all(
    Array.from({ length: count }, (_, n) => gltf.parser.getDependency('node', n) as Promise<Object3D>),
  );
}

function isObject3D(value: unknown): value is Object3D {
  return typeof value === 'object' && value !== null && (value as { isObject3D?: boolean }).isObject3D === true;
}

/** Up to 10 names, then a count. */
export function listNames(names: readonly string[]): string {
  const shown = names
    .slice(0, 10)
    .map((n) => JSON.stringify(n))
    .join(', ');
  return names.length > 10 ? `${shown} and ${names.length - 10} more` : shown;
}
