/**
 * Which three.js object each bone of a compressed clip drives: by glTF node index when the
 * clip came from the same asset as the loaded scene, else by the name three.js gives the
 * node, else by an explicit bone map. Unbound bones are reported, never silently left in
 * their rest pose.
 */
import type { Object3D, Skeleton } from 'three';

import { FORMAT_ERROR, FormatError } from '../runtime/errors.js';

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
 * `options.associations`, else by `options.boneMap`, else by the sanitized name, looking
 * at `root` itself and its descendants as three.js's `PropertyBinding.findNode` does.
 * Throws {@link FormatError} (BAD_ARGUMENT) when names are missing, or, with `strict`,
 * when a bone does not bind.
 */
export function bindBones(clip: BindableClip, root: Object3D | Skeleton, options: BindOptions = {}): BoneBinding {
  const names = options.boneNames ?? clip.boneNames;
  if (names && names.length !== clip.boneCount) {
    throw new FormatError(FORMAT_ERROR.BAD_ARGUMENT, `${names.length} bone names for a clip of ${clip.boneCount} bones`);
  }
  const nodeIndices = options.nodeIndices ?? clip.nodeIndices;
  if (nodeIndices && nodeIndices.length !== clip.boneCount) {
    throw new FormatError(FORMAT_ERROR.BAD_ARGUMENT, `${nodeIndices.length} node indices for a clip of ${clip.boneCount} bones`);
  }
  const byNode = new Map<number, Object3D>();
  if (options.associations && nodeIndices) {
    for (const [object, value] of options.associations) {
      if (value?.nodes !== undefined && isObject3D(object)) byNode.set(value.nodes, object);
    }
  }
  const byName = new Map<string, Object3D>();
  const add = (o: Object3D) => { if (o.name !== '' && !byName.has(o.name)) byName.set(o.name, o); };
  if ('bones' in root) root.bones.forEach(add); else root.traverse(add);
  const objects: (Object3D | undefined)[] = [];
  const unbound: string[] = [];
  for (let b = 0; b < clip.boneCount; b++) {
    const name = names?.[b];
    let object = nodeIndices ? byNode.get(nodeIndices[b]) : undefined;
    if (!object && name !== undefined) {
      const mapped = options.boneMap?.[name];
      object = mapped !== undefined ? byName.get(mapped) : byName.get(sanitizeNodeName(name)) ?? byName.get(name);
    }
    objects.push(object);
    if (!object) unbound.push(name ?? `bone ${b}`);
  }
  if (!names && byNode.size === 0) {
    throw new FormatError(FORMAT_ERROR.BAD_ARGUMENT, 'the clip has no bone names (compressed with stripNames) and no node indices bind it; pass options.boneNames');
  }
  if (options.strict && unbound.length > 0) {
    throw new FormatError(FORMAT_ERROR.BAD_ARGUMENT, `${unbound.length} of ${clip.boneCount} bones bind to nothing in the scene: ${listNames(unbound)}`);
  }
  return { objects, unboundBones: unbound };
}

function isObject3D(value: unknown): value is Object3D {
  return typeof value === 'object' && value !== null && (value as { isObject3D?: boolean }).isObject3D === true;
}

/** Up to 10 names, then a count. */
export function listNames(names: readonly string[]): string {
  const shown = names.slice(0, 10).map((n) => JSON.stringify(n)).join(', ');
  return names.length > 10 ? `${shown} and ${names.length - 10} more` : shown;
}
