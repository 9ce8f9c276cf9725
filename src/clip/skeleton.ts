import { BonepressError } from '../shared/errors.js';
import { convertLength, type Length, type LengthUnit } from './units.js';

import { POSE_STRIDE, identityFloat } from '../shared/pose-layout.js';

export { POSE_STRIDE };

/** Default shell distance (virtual-vertex distance from each bone). */
export const DEFAULT_SHELL: Length = { value: 3, unit: 'cm' };

/**
 * Bones in parent-before-child order.
 * - `parents[b]` is the parent's index (< b) or -1 for a root.
 * - `defaultPose` holds the bind/default local transform, {@link POSE_STRIDE} floats per bone.
 * - `shellDistances[b]` is the virtual-vertex distance for bone b, in the clip's unit.
 */
export interface Skeleton {
  readonly boneNames: readonly string[];
  readonly parents: Int32Array;
  readonly defaultPose: Float32Array;
  readonly shellDistances: Float32Array;
  /** The glTF node index of every bone, when the skeleton came from a glTF asset (hosts bind by it). */
  readonly nodeIndices?: Int32Array;
}

/** Thrown when a skeleton or clip breaks the data model's invariants. */
export class ClipError extends BonepressError {
  override readonly name = 'ClipError';
  declare readonly code: 'BAD_SKELETON' | 'BAD_CLIP' | 'NO_SUCH_BONE';
  constructor(code: 'BAD_SKELETON' | 'BAD_CLIP' | 'NO_SUCH_BONE', message: string) {
    super(code, message);
  }
}

/**
 * Builds a skeleton, filling shell distances with {@link DEFAULT_SHELL} in `unit`.
 * Throws {@link ClipError} when a parent index does not precede its child.
 */
export function createSkeleton(
  boneNames: readonly string[],
  parents: ArrayLike<number>,
  defaultPose: Float32Array,
  unit: LengthUnit,
): Skeleton {
  const boneCount = boneNames.length;
  if (parents.length !== boneCount)
    throw new ClipError('BAD_SKELETON', `skeleton: ${parents.length} parents for ${boneCount} bones`);
  if (defaultPose.length !== boneCount * POSE_STRIDE) {
    throw new ClipError(
      'BAD_SKELETON',
      `skeleton: default pose has ${defaultPose.length} floats, expected ${boneCount * POSE_STRIDE}`,
    );
  }
  const p = Int32Array.from(parents);
  for (let b = 0; b < boneCount; b++) {
    if (p[b] < -1 || p[b] >= b)
      throw new ClipError(
        'BAD_SKELETON',
        `skeleton: bone ${b} (${boneNames[b]}) has parent ${p[b]}; parents must come first`,
      );
  }
  const shell = new Float32Array(boneCount).fill(convertLength(DEFAULT_SHELL, unit));
  return { boneNames: [...boneNames], parents: p, defaultPose, shellDistances: shell };
}

/** Index of the bone called `name`; throws {@link ClipError} when there is none. */
export function boneIndexOf(skeleton: Skeleton, name: string): number {
  const i = skeleton.boneNames.indexOf(name);
  if (i < 0) throw new ClipError('NO_SUCH_BONE', `no bone named "${name}"`);
  return i;
}

/** Per-bone shell distances in `unit`: `shell` for every bone, then `overrides` by bone name. */
export function resolveShellDistances(
  skeleton: Skeleton,
  unit: LengthUnit,
  shell: Length = DEFAULT_SHELL,
  overrides: Readonly<Record<string, Length>> = {},
): Float32Array {
  const out = new Float32Array(skeleton.boneNames.length).fill(convertLength(shell, unit));
  for (const [name, len] of Object.entries(overrides)) out[boneIndexOf(skeleton, name)] = convertLength(len, unit);
  return out;
}

/** A copy of `skeleton` with the given shell distances. */
export function withShellDistances(skeleton: Skeleton, shellDistances: Float32Array): Skeleton {
  return { ...skeleton, shellDistances };
}

/** Writes the identity transform (unit quaternion, zero translation, unit scale) at `bone`. */
export function setIdentity(pose: Float32Array, bone: number): void {
  const o = bone * POSE_STRIDE;
  for (let i = 0; i < POSE_STRIDE; i++) pose[o + i] = identityFloat(i);
}
