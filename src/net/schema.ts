/**
 * Snapshot schemas: what a sender and its receiver agree on before any snapshot flows —
 * which tracks are sent, each one's range and bit count, and the values of the tracks that
 * are not sent. A schema is built from a skeleton and the value ranges its poses will take
 * ({@link PoseRanges}, measured from one clip or merged over many), and its bit counts are
 * derived from an error bound, so that every decoded pose stays within the threshold:
 * see {@link buildSnapshotSchema} and docs/net.md.
 */
import type { RawClip } from '../clip/raw-clip.js';
import type { Skeleton } from '../clip/skeleton.js';
import { convertLength, parseLength, type Length, type LengthUnit } from '../clip/units.js';
import { allocateBits } from './bit-allocation.js';
import { NET_ERROR, NetError } from './bit-stream.js';
import { measurePoseRanges, type PoseRanges } from './pose-ranges.js';
import { CODE_STRIDE } from './quantize.js';
import { checkOffsets, finishSchema, type SchemaFields } from './schema-wire.js';
import { SMALLEST_THREE_INDEX_BITS } from './smallest-three.js';
import { classifyTracks, widenForCompensation } from './track-model.js';

/** A length as an object or a string such as `"0.1cm"`. */
export type NetLength = Length | string;

/** Options of {@link buildSnapshotSchema}. */
export interface SnapshotSchemaOptions {
  /** Largest virtual-vertex error of any bone in any decoded pose. Default 0.1 cm. */
  error?: NetLength;
  /** Virtual-vertex distance of every bone. Default 3 cm. Ignored when `shellDistances` is given. */
  shell?: NetLength;
  /** Per-bone shell distances in the skeleton's unit (overrides `shell`). */
  shellDistances?: Float32Array;
  /**
   * Quantise each rotation so that the bone's *object* rotation is right, correcting its
   * ancestors' rounding (possible when no bone has a sent or non-uniform scale). Then a
   * rotation's error only moves its own shell and its children's joints, not the whole
   * chain below, so fewer bits meet the same threshold. Default true.
   */
  compensate?: boolean;
  /**
   * Plain delta code widths: a changed component is sent in `bits − deltaSmallOffset + shift`
   * bits, or failing that `bits − deltaLargeOffset + shift` bits, or failing both in full,
   * where each packet picks its shift (see `SnapshotCodec.serializeDelta`). Defaults from
   * the net bench (src/bench/net.ts) on the bandai corpus at 60 Hz and 100 ms RTT.
   */
  deltaSmallOffset?: number;
  deltaLargeOffset?: number;
}

/** Defaults of {@link SnapshotSchemaOptions}. */
export const SNAPSHOT_SCHEMA_DEFAULTS = {
  error: '0.1cm',
  shell: '3cm',
  compensate: true,
  deltaSmallOffset: 7,
  deltaLargeOffset: 4,
} as const;

/**
 * What a sender and receiver share. Codes are {@link CODE_STRIDE} integers per bone;
 * `codeBits[b * CODE_STRIDE + i]` is the width of slot i (0 = not sent: the decoder takes
 * `basePose`). Arrays are owned by the schema: treat them as read-only.
 */
export interface SnapshotSchema {
  readonly boneCount: number;
  readonly parents: Int32Array;
  readonly unit: LengthUnit;
  /** Error threshold the bit counts were derived for, in `unit`. */
  readonly threshold: number;
  readonly shellDistances: Float32Array;
  /** Values of every slot that is not sent ({@link POSE_STRIDE} floats per bone). */
  readonly basePose: Float32Array;
  /** The skeleton's default pose; a bone at it is sent as one flag bit in absolute snapshots. */
  readonly defaultPose: Float32Array;
  readonly compensate: boolean;
  /** Bits per code slot ({@link CODE_STRIDE} per bone). */
  readonly codeBits: Uint8Array;
  /** Translation and scale ranges of sent components (3 per bone; unsent: 0). */
  readonly translationMin: Float32Array;
  readonly translationMax: Float32Array;
  readonly scaleMin: Float32Array;
  readonly scaleMax: Float32Array;
  /** Plain delta code widths: the small and large delta of a slot take its bits minus these (plus the packet's shift). */
  readonly deltaSmallOffset: number;
  readonly deltaLargeOffset: number;
  /** Bones with at least one sent slot, in order. */
  readonly sentBones: Int32Array;
  /** True when some bone's rotation is sent. */
  readonly sendsRotations: boolean;
  /** The default pose quantised ({@link CODE_STRIDE} per bone). */
  readonly defaultCodes: Int32Array;
  /** Per-bone bound of the virtual-vertex error of a decoded pose, in `unit`. */
  readonly boneErrorBounds: Float64Array;
  /** Largest of `boneErrorBounds`: ≤ `threshold` unless even the widest codes cannot reach it. */
  readonly errorBound: number;
  /** Bits of an absolute snapshot in which no bone is at its default pose. */
  readonly absoluteBits: number;
  /** CRC-32 of the schema's wire form ({@link encodeSnapshotSchema}); keys packet checks. */
  readonly hash: number;
}

/** A clip's ranges and skeleton as a schema: {@link buildSnapshotSchema} over {@link measurePoseRanges}. */
export function createSnapshotSchema(clip: RawClip, options: SnapshotSchemaOptions = {}): SnapshotSchema {
  return buildSnapshotSchema(clip.skeleton, measurePoseRanges(clip), clip.unit, options);
}

/** Converts a length option into `unit`; throws {@link NetError} `BAD_ARGUMENT`. */
export function resolveNetLength(input: NetLength, unit: LengthUnit, what: string): number {
  let length: Length;
  try {
    length = typeof input === 'string' ? parseLength(input) : input;
  } catch (e) {
    throw new NetError(NET_ERROR.BAD_ARGUMENT, `${what}: ${(e as Error).message}`);
  }
  const v = convertLength(length, unit);
  if (!(v > 0) || !Number.isFinite(v))
    throw new NetError(NET_ERROR.BAD_ARGUMENT, `${what}: must be a length greater than 0`);
  return v;
}

/**
 * Builds the schema of a stream of poses of `skeleton` whose values stay inside `ranges`
 * (in `unit`). Pure and deterministic: the same inputs give the same schema and hash on
 * both ends. Poses outside `ranges` are clamped by the encoder (and then the bound does not
 * hold).
 *
 * Which tracks are sent: a track whose whole range is within 1 % of the threshold of one
 * value is constant (that value goes in `basePose`, its small error in the bound);
 * the others are sent, scale only when it is not 1.
 *
 * Bit counts come from an error bound of the decoded pose, not from data. For each bone the
 * bound composes, parent first, an object linear-part error Θ and a joint position error P:
 * a rotation error θ moves the joint of every bone below it by θ times the distance
 * (the lever arm: chain length to the furthest descendant plus its shell), a translation
 * error δ moves the joint by δ, and the bone's error is P + Θ·shell. With `compensate`, a
 * sent rotation absorbs its ancestors' rotation error, so its θ only reaches its own shell
 * and its children's joints. Each bone's budget is split evenly over the tracks it depends
 * on (the even split minimises total bits for a chain), every track gets the fewest bits
 * that meet its share, then a greedy pass lowers tracks while every bone stays within the
 * threshold, and raises them if the nonlinear terms need it.
 *
 * Throws {@link NetError} `BAD_ARGUMENT` for mismatched sizes or bad lengths.
 */
export function buildSnapshotSchema(
  skeleton: Skeleton,
  ranges: PoseRanges,
  unit: LengthUnit,
  options: SnapshotSchemaOptions = {},
): SnapshotSchema {
  const boneCount = skeleton.boneNames.length;
  if (ranges.boneCount !== boneCount)
    throw new NetError(NET_ERROR.BAD_ARGUMENT, `ranges cover ${ranges.boneCount} bones, the skeleton has ${boneCount}`);
  if (boneCount === 0 || boneCount > 0xffff)
    throw new NetError(NET_ERROR.BAD_ARGUMENT, `a schema needs 1..65535 bones, got ${boneCount}`);
  // float32, as the wire form holds it, so a decoded schema equals the built one.
  const threshold = Math.fround(resolveNetLength(options.error ?? SNAPSHOT_SCHEMA_DEFAULTS.error, unit, 'error'));
  let shellDistances: Float32Array;
  if (options.shellDistances) {
    if (options.shellDistances.length !== boneCount)
      throw new NetError(
        NET_ERROR.BAD_ARGUMENT,
        `${options.shellDistances.length} shell distances for ${boneCount} bones`,
      );
    shellDistances = Float32Array.from(options.shellDistances);
  } else {
    shellDistances = new Float32Array(boneCount).fill(
      resolveNetLength(options.shell ?? SNAPSHOT_SCHEMA_DEFAULTS.shell, unit, 'shell'),
    );
  }
  const smallOffset = options.deltaSmallOffset ?? SNAPSHOT_SCHEMA_DEFAULTS.deltaSmallOffset;
  const largeOffset = options.deltaLargeOffset ?? SNAPSHOT_SCHEMA_DEFAULTS.deltaLargeOffset;
  checkOffsets(smallOffset, largeOffset);

  const model = classifyTracks(skeleton, ranges, shellDistances, threshold);
  const compensate = (options.compensate ?? SNAPSHOT_SCHEMA_DEFAULTS.compensate) && model.uniformScales;
  if (compensate) widenForCompensation(model, threshold);
  const bits = allocateBits(model, compensate, threshold);

  const codeBits = new Uint8Array(boneCount * CODE_STRIDE);
  for (let b = 0; b < boneCount; b++) {
    if (bits.rotation[b] > 0) {
      codeBits[b * CODE_STRIDE] = SMALLEST_THREE_INDEX_BITS;
      for (let c = 1; c <= 3; c++) codeBits[b * CODE_STRIDE + c] = bits.rotation[b];
    }
    for (let c = 0; c < 3; c++) {
      codeBits[b * CODE_STRIDE + 4 + c] = bits.translation[b * 3 + c];
      codeBits[b * CODE_STRIDE + 7 + c] = bits.scale[b * 3 + c];
    }
  }
  const fields: SchemaFields = {
    boneCount,
    parents: Int32Array.from(skeleton.parents),
    unit,
    threshold,
    shellDistances,
    basePose: model.basePose,
    defaultPose: Float32Array.from(skeleton.defaultPose),
    compensate,
    codeBits,
    translationMin: maskRange(model.translationMin, bits.translation),
    translationMax: maskRange(model.translationMax, bits.translation),
    scaleMin: maskRange(model.scaleMin, bits.scale),
    scaleMax: maskRange(model.scaleMax, bits.scale),
    deltaSmallOffset: smallOffset,
    deltaLargeOffset: largeOffset,
    errorBound: Math.fround(max(bits.boneBounds)),
  };
  return finishSchema(fields, bits.boneBounds);
}

function maskRange(values: Float64Array, bits: Uint8Array): Float32Array {
  const out = new Float32Array(values.length);
  for (let i = 0; i < values.length; i++) out[i] = bits[i] > 0 ? values[i] : 0;
  return out;
}

function max(values: Float64Array): number {
  let m = 0;
  for (let i = 0; i < values.length; i++) if (values[i] > m) m = values[i];
  return m;
}
