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
import { LENGTH_UNITS, convertLength, parseLength, type Length, type LengthUnit } from '../clip/units.js';
import { crc32 } from '../runtime/format.js';
import { POSE_STRIDE } from '../runtime/pose.js';
import { NET_ERROR, NetError, ReadStream, WriteStream, type BitStream } from './bit-stream.js';
import { CODE_STRIDE, PoseQuantizer } from './quantize.js';
import {
  SMALLEST_THREE_INDEX_BITS, SMALLEST_THREE_MAX_BITS, SMALLEST_THREE_MAX_NORM, SMALLEST_THREE_MIN_BITS, smallestThreeMaxAngle,
} from './smallest-three.js';

/** Most bits of a translation or scale component. */
export const COMPONENT_MAX_BITS = 24;

/** Version of the schema's wire form. Serialized: bump it when the layout changes. */
export const SCHEMA_VERSION = 1;

/** A length as an object or a string such as `"0.1cm"`. */
export type NetLength = Length | string;

/**
 * Value ranges of every track over the poses a stream will send, per bone: quaternion
 * components (normalised, w ≥ 0), translation and scale components. Built by
 * {@link measurePoseRanges}; {@link mergePoseRanges} covers several clips.
 */
export interface PoseRanges {
  readonly boneCount: number;
  /** 4 per bone. */
  readonly rotationMin: Float32Array;
  readonly rotationMax: Float32Array;
  /** 3 per bone, in the clip's unit. */
  readonly translationMin: Float32Array;
  readonly translationMax: Float32Array;
  /** 3 per bone. */
  readonly scaleMin: Float32Array;
  readonly scaleMax: Float32Array;
}

/** The ranges of every track of `clip` (allocates the result). */
export function measurePoseRanges(clip: RawClip): PoseRanges {
  const boneCount = clip.skeleton.boneNames.length;
  const n = clip.sampleCount;
  const r = emptyRanges(boneCount);
  const rot = clip.rotations, tr = clip.translations, sc = clip.scales;
  for (let b = 0; b < boneCount; b++) {
    for (let s = 0; s < n; s++) {
      const i = b * n + s;
      const x = rot[i * 4], y = rot[i * 4 + 1], z = rot[i * 4 + 2], w = rot[i * 4 + 3];
      const len = Math.sqrt(x * x + y * y + z * z + w * w);
      const k = (w < 0 ? -1 : 1) / (len > 0 ? len : 1);
      widen(r.rotationMin, r.rotationMax, b * 4, x * k);
      widen(r.rotationMin, r.rotationMax, b * 4 + 1, y * k);
      widen(r.rotationMin, r.rotationMax, b * 4 + 2, z * k);
      widen(r.rotationMin, r.rotationMax, b * 4 + 3, w * k);
      for (let c = 0; c < 3; c++) {
        widen(r.translationMin, r.translationMax, b * 3 + c, tr[i * 3 + c]);
        widen(r.scaleMin, r.scaleMax, b * 3 + c, sc[i * 3 + c]);
      }
    }
  }
  return r;
}

/** Ranges covering both `a` and `b` (same bone count; throws {@link NetError} otherwise). */
export function mergePoseRanges(a: PoseRanges, b: PoseRanges): PoseRanges {
  if (a.boneCount !== b.boneCount) throw new NetError(NET_ERROR.BAD_ARGUMENT, `cannot merge ranges of ${a.boneCount} and ${b.boneCount} bones`);
  const m = emptyRanges(a.boneCount);
  const pairs: [Float32Array, Float32Array, Float32Array, Float32Array, Float32Array, Float32Array][] = [
    [m.rotationMin, m.rotationMax, a.rotationMin, a.rotationMax, b.rotationMin, b.rotationMax],
    [m.translationMin, m.translationMax, a.translationMin, a.translationMax, b.translationMin, b.translationMax],
    [m.scaleMin, m.scaleMax, a.scaleMin, a.scaleMax, b.scaleMin, b.scaleMax],
  ];
  for (const [lo, hi, alo, ahi, blo, bhi] of pairs) {
    for (let i = 0; i < lo.length; i++) {
      lo[i] = Math.min(alo[i], blo[i]);
      hi[i] = Math.max(ahi[i], bhi[i]);
    }
  }
  return m;
}

function emptyRanges(boneCount: number): PoseRanges {
  return {
    boneCount,
    rotationMin: new Float32Array(boneCount * 4).fill(Infinity),
    rotationMax: new Float32Array(boneCount * 4).fill(-Infinity),
    translationMin: new Float32Array(boneCount * 3).fill(Infinity),
    translationMax: new Float32Array(boneCount * 3).fill(-Infinity),
    scaleMin: new Float32Array(boneCount * 3).fill(Infinity),
    scaleMax: new Float32Array(boneCount * 3).fill(-Infinity),
  };
}

function widen(lo: Float32Array, hi: Float32Array, i: number, v: number): void {
  if (v < lo[i]) lo[i] = v;
  if (v > hi[i]) hi[i] = v;
}

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
  if (!(v > 0) || !Number.isFinite(v)) throw new NetError(NET_ERROR.BAD_ARGUMENT, `${what}: must be a length greater than 0`);
  return v;
}

// Share of the threshold a constant (unsent) track may use: small, so sent tracks keep the rest.
const CONSTANT_SHARE = 0.01;
// Two scales within this relative difference count as one uniform scale.
const UNIFORM_SCALE_TOLERANCE = 1e-6;

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
  if (ranges.boneCount !== boneCount) throw new NetError(NET_ERROR.BAD_ARGUMENT, `ranges cover ${ranges.boneCount} bones, the skeleton has ${boneCount}`);
  if (boneCount === 0 || boneCount > 0xffff) throw new NetError(NET_ERROR.BAD_ARGUMENT, `a schema needs 1..65535 bones, got ${boneCount}`);
  // float32, as the wire form holds it, so a decoded schema equals the built one.
  const threshold = Math.fround(resolveNetLength(options.error ?? SNAPSHOT_SCHEMA_DEFAULTS.error, unit, 'error'));
  let shellDistances: Float32Array;
  if (options.shellDistances) {
    if (options.shellDistances.length !== boneCount) throw new NetError(NET_ERROR.BAD_ARGUMENT, `${options.shellDistances.length} shell distances for ${boneCount} bones`);
    shellDistances = Float32Array.from(options.shellDistances);
  } else {
    shellDistances = new Float32Array(boneCount).fill(resolveNetLength(options.shell ?? SNAPSHOT_SCHEMA_DEFAULTS.shell, unit, 'shell'));
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

function checkOffsets(small: number, large: number): void {
  if (!Number.isInteger(small) || !Number.isInteger(large) || large < 0 || small < large || small > 31) {
    throw new NetError(NET_ERROR.BAD_ARGUMENT, `delta offsets must be whole numbers with 0 <= large (${large}) <= small (${small}) <= 31`);
  }
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

/** What the error bound needs to know about each track (clip units, radians). */
interface TrackModel {
  boneCount: number;
  parents: Int32Array;
  shell: Float32Array;
  basePose: Float32Array;
  rotationSent: Uint8Array;
  /** Bound of the norm of the three smallest components of the quaternions a bone's codes carry. */
  rotationSmallNorm: Float64Array;
  /** Angle error of an unsent rotation (its range around the constant). */
  rotationConstantError: Float64Array;
  /** Extent of each sent translation / scale component (0: not sent) and error of each unsent one. */
  translationExtent: Float64Array;
  translationConstantError: Float64Array;
  translationMin: Float64Array;
  translationMax: Float64Array;
  scaleExtent: Float64Array;
  scaleConstantError: Float64Array;
  scaleMin: Float64Array;
  scaleMax: Float64Array;
  /** Largest translation length and largest |scale| component per bone. */
  translationLength: Float64Array;
  scaleMagnitude: Float64Array;
  /** Largest magnitude of each translation / scale component (for float32 rounding). */
  translationMagnitude: Float64Array;
  /** True when no scale is sent and every constant scale is uniform. */
  uniformScales: boolean;
}

function classifyTracks(skeleton: Skeleton, ranges: PoseRanges, shell: Float32Array, threshold: number): TrackModel {
  const boneCount = skeleton.boneNames.length;
  const parents = skeleton.parents;
  const m: TrackModel = {
    boneCount,
    parents,
    shell,
    basePose: Float32Array.from(skeleton.defaultPose),
    rotationSent: new Uint8Array(boneCount),
    rotationSmallNorm: new Float64Array(boneCount).fill(SMALLEST_THREE_MAX_NORM),
    rotationConstantError: new Float64Array(boneCount),
    translationExtent: new Float64Array(boneCount * 3),
    translationConstantError: new Float64Array(boneCount * 3),
    translationMin: new Float64Array(boneCount * 3),
    translationMax: new Float64Array(boneCount * 3),
    scaleExtent: new Float64Array(boneCount * 3),
    scaleConstantError: new Float64Array(boneCount * 3),
    scaleMin: new Float64Array(boneCount * 3),
    scaleMax: new Float64Array(boneCount * 3),
    translationLength: new Float64Array(boneCount),
    scaleMagnitude: new Float64Array(boneCount),
    translationMagnitude: new Float64Array(boneCount * 3),
    uniformScales: true,
  };
  // Lever arms with the widest ranges (chain length to the furthest descendant + shell),
  // only to decide which tracks are constant enough to leave out.
  for (let b = 0; b < boneCount; b++) {
    let len2 = 0, smag = 0;
    for (let c = 0; c < 3; c++) {
      const tlo = finiteOr(ranges.translationMin[b * 3 + c], skeleton.defaultPose[b * POSE_STRIDE + 4 + c]);
      const thi = finiteOr(ranges.translationMax[b * 3 + c], skeleton.defaultPose[b * POSE_STRIDE + 4 + c]);
      const tm = Math.max(Math.abs(tlo), Math.abs(thi));
      m.translationMagnitude[b * 3 + c] = tm;
      len2 += tm * tm;
      const slo = finiteOr(ranges.scaleMin[b * 3 + c], skeleton.defaultPose[b * POSE_STRIDE + 7 + c]);
      const shi = finiteOr(ranges.scaleMax[b * 3 + c], skeleton.defaultPose[b * POSE_STRIDE + 7 + c]);
      smag = Math.max(smag, Math.abs(slo), Math.abs(shi));
    }
    m.translationLength[b] = Math.sqrt(len2);
    m.scaleMagnitude[b] = smag;
  }
  const lever = new Float64Array(boneCount);
  const reach = new Float64Array(boneCount); // scale product from the root, widest
  for (let b = 0; b < boneCount; b++) reach[b] = (parents[b] >= 0 ? reach[parents[b]] : 1) * Math.max(1, m.scaleMagnitude[b]);
  for (let b = 0; b < boneCount; b++) lever[b] = shell[b] * reach[b];
  for (let b = boneCount - 1; b > 0; b--) {
    const p = parents[b];
    if (p >= 0) lever[p] = Math.max(lever[p], lever[b] + m.translationLength[b] * reach[p]);
  }
  const tolerance = CONSTANT_SHARE * threshold;
  for (let b = 0; b < boneCount; b++) {
    const o = b * POSE_STRIDE;
    // Rotation: constant when the box of its components fits in a small angle.
    let h2 = 0;
    const mid = [0, 0, 0, 0];
    let valid = true;
    for (let c = 0; c < 4; c++) {
      const lo = ranges.rotationMin[b * 4 + c], hi = ranges.rotationMax[b * 4 + c];
      if (!(lo <= hi)) { valid = false; break; }
      mid[c] = (lo + hi) / 2;
      h2 += ((hi - lo) / 2) ** 2;
    }
    const half = Math.sqrt(h2);
    // Chord to the normalised midpoint ≤ 2·|half extents|; angle ≤ 4·asin(that / 2).
    const angle = !valid ? 0 : half >= 1 ? Math.PI : 4 * Math.asin(half);
    if (valid && angle * lever[b] <= tolerance) {
      const len = Math.hypot(mid[0], mid[1], mid[2], mid[3]);
      if (len > 0) for (let c = 0; c < 4; c++) m.basePose[o + c] = mid[c] / len;
      m.rotationConstantError[b] = angle;
    } else if (valid) {
      m.rotationSent[b] = 1;
      // The largest component is at least the largest lower bound of any |component|
      // over the box, so the other three have a norm of at most √(1 − that²).
      let largest = 0;
      for (let c = 0; c < 4; c++) {
        const lo = ranges.rotationMin[b * 4 + c], hi = ranges.rotationMax[b * 4 + c];
        largest = Math.max(largest, lo > 0 ? lo : hi < 0 ? -hi : 0);
      }
      // Only above 1/√2: then every two rotations in the box are in the same hemisphere, so
      // shortest-path interpolation between them stays above that lower bound too.
      if (largest > Math.SQRT1_2) m.rotationSmallNorm[b] = Math.sqrt(1 - largest * largest);
    }
    for (let c = 0; c < 3; c++) {
      const i = b * 3 + c;
      const tlo = ranges.translationMin[i], thi = ranges.translationMax[i];
      if (tlo <= thi) {
        const ext = thi - tlo;
        if (ext / 2 <= tolerance / Math.sqrt(3) / reach[b]) {
          m.basePose[o + 4 + c] = (tlo + thi) / 2;
          m.translationConstantError[i] = ext / 2;
        } else {
          m.translationExtent[i] = ext;
          m.translationMin[i] = tlo;
          m.translationMax[i] = thi;
        }
      }
      const slo = ranges.scaleMin[i], shi = ranges.scaleMax[i];
      if (slo <= shi) {
        const ext = shi - slo;
        const below = lever[b] / Math.max(1e-30, reach[b]) * (parents[b] >= 0 ? reach[parents[b]] : 1);
        if ((ext / 2) * below <= tolerance) {
          m.basePose[o + 7 + c] = (slo + shi) / 2;
          m.scaleConstantError[i] = ext / 2;
        } else {
          m.scaleExtent[i] = ext;
          m.scaleMin[i] = slo;
          m.scaleMax[i] = shi;
        }
      }
    }
    const sx = m.basePose[o + 7], sy = m.basePose[o + 8], sz = m.basePose[o + 9];
    const uniform = Math.abs(sx - sy) <= UNIFORM_SCALE_TOLERANCE * Math.abs(sx) && Math.abs(sx - sz) <= UNIFORM_SCALE_TOLERANCE * Math.abs(sx);
    if (!uniform || m.scaleExtent[b * 3] > 0 || m.scaleExtent[b * 3 + 1] > 0 || m.scaleExtent[b * 3 + 2] > 0
      || m.scaleConstantError[b * 3] > 0 || m.scaleConstantError[b * 3 + 1] > 0 || m.scaleConstantError[b * 3 + 2] > 0) {
      m.uniformScales = false;
    }
  }
  return m;
}

/**
 * A compensated rotation is the bone's rotation turned by its parent's object rotation
 * error, at most Θ ≤ threshold / (parent shell · parent scale) once the bound holds; that
 * moves each quaternion component by at most Θ/2, so the norm bound widens by that much.
 */
function widenForCompensation(m: TrackModel, threshold: number): void {
  const scale = new Float64Array(m.boneCount);
  for (let b = 0; b < m.boneCount; b++) {
    const p = m.parents[b];
    scale[b] = (p >= 0 ? scale[p] : 1) * Math.abs(m.basePose[b * POSE_STRIDE + 7]);
    if (p < 0 || !m.rotationSent[b]) continue;
    const reach = m.shell[p] * scale[p];
    m.rotationSmallNorm[b] = reach > 0 ? m.rotationSmallNorm[b] + threshold / (2 * reach) : SMALLEST_THREE_MAX_NORM;
  }
}

function finiteOr(v: number, fallback: number): number {
  return Number.isFinite(v) ? v : fallback;
}

/** Quantisation error (half a step) of a component of extent `ext` on `bits` bits, with float32 rounding of `magnitude`. */
function componentError(ext: number, bits: number, magnitude: number): number {
  return ext / (2 * (2 ** bits - 1)) + magnitude * 2 ** -24;
}

interface BitAllocation {
  rotation: Uint8Array;
  translation: Uint8Array;
  scale: Uint8Array;
  boneBounds: Float64Array;
}

const enum TrackKind { Rotation, Translation, Scale }

/**
 * The error bound of {@link buildSnapshotSchema}, bone by bone. For bone b with parent p it
 * composes Θ (object linear-part error), σ (object linear-part size) and P (joint position
 * error), and E = P + Θ·shell:
 *   Θ_b = Θ_p·s + (σ_p + Θ_p)·(θ·s + Δs)   (σ_p·s·θ for a compensated, sent rotation)
 *   σ_b = σ_p·s,   P_b = P_p + Θ_p·|t| + (σ_p + Θ_p)·δ
 * with θ, δ, Δs the bone's rotation, translation and scale errors and s, |t| its largest
 * scale and translation. A change to one bone's tracks only changes its subtree, so
 * {@link probe} re-evaluates just that (into scratch) and {@link commit} keeps it.
 */
class ErrorBound {
  readonly theta: Float64Array;
  readonly sigma: Float64Array;
  readonly pos: Float64Array;
  readonly bone: Float64Array;
  /** Scratch of a probe, valid for the probed subtree. */
  readonly probeBone: Float64Array;
  private readonly probeTheta: Float64Array;
  private readonly probeSigma: Float64Array;
  private readonly probePos: Float64Array;
  /** Each bone and its descendants, ascending (parents before children). */
  readonly subtree: Int32Array[];

  constructor(private readonly m: TrackModel, private readonly compensate: boolean, private readonly a: BitAllocation) {
    const n = m.boneCount;
    this.theta = new Float64Array(n); this.sigma = new Float64Array(n); this.pos = new Float64Array(n); this.bone = new Float64Array(n);
    this.probeTheta = new Float64Array(n); this.probeSigma = new Float64Array(n); this.probePos = new Float64Array(n); this.probeBone = new Float64Array(n);
    const lists: number[][] = Array.from({ length: n }, (_, b) => [b]);
    for (let b = n - 1; b >= 0; b--) {
      const p = m.parents[b];
      if (p >= 0) lists[p].push(...lists[b]);
    }
    this.subtree = lists.map((list) => Int32Array.from(list.sort((x, y) => x - y)));
  }

  /** Recomputes every bone; returns the largest E. */
  evaluateAll(): number {
    let worst = 0;
    for (let b = 0; b < this.m.boneCount; b++) {
      this.step(b, this.theta, this.sigma, this.pos, this.bone, this.theta, this.sigma, this.pos, -1, TrackKind.Rotation, 0);
      if (this.bone[b] > worst) worst = this.bone[b];
    }
    return worst;
  }

  /**
   * Evaluates the subtree of `root` with the current allocation into the probe scratch
   * (`probeBone`), optionally with bone `root`'s `kind` error replaced by `error` (≥ 0).
   * Returns the largest E in the subtree.
   */
  probe(root: number, overrideKind = TrackKind.Rotation, error = -1): number {
    let worst = 0;
    const list = this.subtree[root];
    for (let k = 0; k < list.length; k++) {
      const b = list[k];
      // The subtree root reads its parent from the committed state, the rest from the probe.
      const fromProbe = b !== root;
      this.step(
        b,
        fromProbe ? this.probeTheta : this.theta, fromProbe ? this.probeSigma : this.sigma, fromProbe ? this.probePos : this.pos,
        this.probeBone, this.probeTheta, this.probeSigma, this.probePos,
        b === root && error >= 0 ? b : -1, overrideKind, error,
      );
      if (this.probeBone[b] > worst) worst = this.probeBone[b];
    }
    return worst;
  }

  /** Keeps the last {@link probe} of `root`'s subtree. */
  commit(root: number): void {
    for (const b of this.subtree[root]) {
      this.theta[b] = this.probeTheta[b]; this.sigma[b] = this.probeSigma[b]; this.pos[b] = this.probePos[b]; this.bone[b] = this.probeBone[b];
    }
  }

  private step(
    b: number, parentTheta: Float64Array, parentSigma: Float64Array, parentPos: Float64Array,
    outBone: Float64Array, outTheta: Float64Array, outSigma: Float64Array, outPos: Float64Array,
    overrideBone: number, overrideKind: TrackKind, overrideError: number,
  ): void {
    const m = this.m, a = this.a;
    const p = m.parents[b];
    const thetaP = p >= 0 ? parentTheta[p] : 0, sigmaP = p >= 0 ? parentSigma[p] : 1, posP = p >= 0 ? parentPos[p] : 0;
    // A sent track without bits yet counts as exact (the sensitivity probes start there).
    let rot = m.rotationSent[b] ? (a.rotation[b] > 0 ? smallestThreeMaxAngle(a.rotation[b], m.rotationSmallNorm[b]) : 0) : m.rotationConstantError[b];
    let tr2 = 0, sc = 0;
    for (let c = 0; c < 3; c++) {
      const i = b * 3 + c;
      const te = m.translationExtent[i] > 0
        ? (a.translation[i] > 0 ? componentError(m.translationExtent[i], a.translation[i], m.translationMagnitude[i]) : 0)
        : m.translationConstantError[i];
      tr2 += te * te;
      const se = m.scaleExtent[i] > 0
        ? (a.scale[i] > 0 ? componentError(m.scaleExtent[i], a.scale[i], m.scaleMagnitude[b]) : 0)
        : m.scaleConstantError[i];
      if (se > sc) sc = se;
    }
    let tr = Math.sqrt(tr2);
    if (b === overrideBone) {
      if (overrideKind === TrackKind.Rotation) rot = overrideError;
      else if (overrideKind === TrackKind.Translation) tr = overrideError;
      else sc = overrideError;
    }
    const s = m.scaleMagnitude[b];
    // L_b = L_p·R·S: ΔL_b = ΔL_p·R·S + L'_p·(ΔR·S + R'·ΔS), with ‖L'_p‖ ≤ σ_p + Θ_p.
    const theta = this.compensate && m.rotationSent[b] ? sigmaP * s * rot : thetaP * s + (sigmaP + thetaP) * (rot * s + sc);
    // P_b = P_p + L_p·t: ΔP_b = ΔP_p + ΔL_p·t + L'_p·Δt.
    const pos = posP + thetaP * m.translationLength[b] + (sigmaP + thetaP) * tr;
    outTheta[b] = theta;
    outSigma[b] = sigmaP * s;
    outPos[b] = pos;
    outBone[b] = pos + theta * m.shell[b];
  }
}

interface Track {
  kind: TrackKind;
  bone: number;
  /** Index into the allocation array: bone for rotations, bone·3 + component otherwise. */
  slot: number;
  minBits: number;
  maxBits: number;
}

function allocateBits(m: TrackModel, compensate: boolean, threshold: number): BitAllocation {
  const boneCount = m.boneCount;
  const a: BitAllocation = {
    rotation: new Uint8Array(boneCount),
    translation: new Uint8Array(boneCount * 3),
    scale: new Uint8Array(boneCount * 3),
    boneBounds: new Float64Array(boneCount),
  };
  const tracks: Track[] = [];
  for (let b = 0; b < boneCount; b++) {
    if (m.rotationSent[b]) tracks.push({ kind: TrackKind.Rotation, bone: b, slot: b, minBits: SMALLEST_THREE_MIN_BITS, maxBits: SMALLEST_THREE_MAX_BITS });
    for (let c = 0; c < 3; c++) {
      if (m.translationExtent[b * 3 + c] > 0) tracks.push({ kind: TrackKind.Translation, bone: b, slot: b * 3 + c, minBits: 1, maxBits: COMPONENT_MAX_BITS });
      if (m.scaleExtent[b * 3 + c] > 0) tracks.push({ kind: TrackKind.Scale, bone: b, slot: b * 3 + c, minBits: 1, maxBits: COMPONENT_MAX_BITS });
    }
  }
  const arrayOf = (t: Track): Uint8Array => (t.kind === TrackKind.Rotation ? a.rotation : t.kind === TrackKind.Translation ? a.translation : a.scale);
  const bound = new ErrorBound(m, compensate, a);

  // 1. Sensitivities: how much each bone's bound grows per unit of each bone track's error
  // (every sent track exact first: what is left is the constants' share).
  bound.evaluateAll();
  const fixed = Float64Array.from(bound.bone);
  const h = threshold * 1e-3;
  const kinds = [TrackKind.Rotation, TrackKind.Translation, TrackKind.Scale];
  const hasKind = new Uint8Array(boneCount * 3);
  for (const t of tracks) hasKind[t.bone * 3 + t.kind] = 1;
  const dependsOn = new Int32Array(boneCount); // sent bone tracks each bone's bound depends on
  const sensitivity = (b: number, k: TrackKind, d: number): number => (bound.probeBone[d] - fixed[d]) / h;
  for (let b = 0; b < boneCount; b++) {
    for (const k of kinds) {
      if (!hasKind[b * 3 + k]) continue;
      bound.probe(b, k, h);
      for (const d of bound.subtree[b]) if (sensitivity(b, k, d) > 1e-12) dependsOn[d]++;
    }
  }
  // 2. Even split: each bone track gets the tightest of its shares over the bones it reaches
  // (for a chain, even shares minimise the total bits). Goals first: probes read the bits.
  const goals = new Float64Array(boneCount * 3).fill(Infinity);
  for (let b = 0; b < boneCount; b++) {
    for (const k of kinds) {
      if (!hasKind[b * 3 + k]) continue;
      bound.probe(b, k, h);
      for (const d of bound.subtree[b]) {
        const c = sensitivity(b, k, d);
        if (c > 1e-12) goals[b * 3 + k] = Math.min(goals[b * 3 + k], Math.max(0, threshold - fixed[d]) / (dependsOn[d] * c));
      }
    }
  }
  for (const t of tracks) {
    const goal = goals[t.bone * 3 + t.kind];
    let bits = t.minBits;
    if (t.kind === TrackKind.Rotation) {
      while (bits < t.maxBits && smallestThreeMaxAngle(bits, m.rotationSmallNorm[t.bone]) > goal) bits++;
    } else {
      const ext = t.kind === TrackKind.Translation ? m.translationExtent : m.scaleExtent;
      const sentComponents = [0, 1, 2].filter((c) => ext[t.bone * 3 + c] > 0).length;
      const mag = t.kind === TrackKind.Translation ? m.translationMagnitude[t.slot] : m.scaleMagnitude[t.bone];
      while (bits < t.maxBits && componentError(ext[t.slot], bits, mag) > goal / Math.sqrt(sentComponents)) bits++;
    }
    arrayOf(t)[t.slot] = bits;
  }
  // 3. Raise where the nonlinear terms broke the bound: the best fix of the worst bone.
  for (let worst = bound.evaluateAll(); worst > threshold;) {
    let worstBone = 0;
    for (let d = 0; d < boneCount; d++) if (bound.bone[d] > bound.bone[worstBone]) worstBone = d;
    let pick: Track | undefined, pickGain = 0;
    for (const t of tracks) {
      const bitsArr = arrayOf(t);
      if (bitsArr[t.slot] >= t.maxBits || !bound.subtree[t.bone].includes(worstBone)) continue;
      bitsArr[t.slot]++;
      bound.probe(t.bone);
      bitsArr[t.slot]--;
      const gain = bound.bone[worstBone] - bound.probeBone[worstBone];
      if (gain > pickGain) { pickGain = gain; pick = t; }
    }
    if (!pick) break; // every track at its widest: the threshold is out of reach
    arrayOf(pick)[pick.slot]++;
    worst = bound.evaluateAll();
  }
  // 4. Lower while every bone stays within the threshold, cheapest bits first: a bit's cost
  // is the largest share of any bone's remaining slack its removal uses, per component
  // saved. Each round prices every track, then lowers the cheapest few (one, for skeletons
  // under 20 tracks: exact greedy), re-checking each against the bound as it goes.
  if (bound.evaluateAll() <= threshold) {
    const costs = new Float64Array(tracks.length);
    const order = tracks.map((_, i) => i);
    const perRound = Math.max(1, Math.floor(tracks.length / 20));
    for (;;) {
      for (let i = 0; i < tracks.length; i++) {
        const t = tracks[i], bitsArr = arrayOf(t);
        costs[i] = Infinity;
        if (bitsArr[t.slot] <= t.minBits) continue;
        bitsArr[t.slot]--;
        const worst = bound.probe(t.bone);
        bitsArr[t.slot]++;
        if (worst > threshold) continue;
        let cost = 0;
        for (const d of bound.subtree[t.bone]) {
          const used = bound.probeBone[d] - bound.bone[d];
          if (used > 0) cost = Math.max(cost, used / Math.max(1e-300, threshold - bound.bone[d]));
        }
        costs[i] = t.kind === TrackKind.Rotation ? cost / 3 : cost;
      }
      order.sort((x, y) => costs[x] - costs[y] || x - y);
      let lowered = 0;
      for (let k = 0; k < order.length && lowered < perRound && Number.isFinite(costs[order[k]]); k++) {
        const t = tracks[order[k]], bitsArr = arrayOf(t);
        bitsArr[t.slot]--;
        if (bound.probe(t.bone) <= threshold) { bound.commit(t.bone); lowered++; } else bitsArr[t.slot]++;
      }
      if (lowered === 0) break;
    }
  }
  bound.evaluateAll();
  a.boneBounds.set(bound.bone);
  return a;
}

/** The serialized fields of a schema; the rest is derived by {@link finishSchema}. */
interface SchemaFields {
  boneCount: number;
  parents: Int32Array;
  unit: LengthUnit;
  threshold: number;
  shellDistances: Float32Array;
  basePose: Float32Array;
  defaultPose: Float32Array;
  compensate: boolean;
  codeBits: Uint8Array;
  translationMin: Float32Array;
  translationMax: Float32Array;
  scaleMin: Float32Array;
  scaleMax: Float32Array;
  deltaSmallOffset: number;
  deltaLargeOffset: number;
  errorBound: number;
}

function finishSchema(f: SchemaFields, boneBounds?: Float64Array): SnapshotSchema {
  const n = f.boneCount * CODE_STRIDE;
  const sent: number[] = [];
  let absoluteBits = 0;
  for (let b = 0; b < f.boneCount; b++) {
    let any = false;
    for (let i = 0; i < CODE_STRIDE; i++) {
      const bits = f.codeBits[b * CODE_STRIDE + i];
      if (bits === 0) continue;
      any = true;
      absoluteBits += bits;
    }
    if (any) { sent.push(b); absoluteBits++; }
  }
  const partial = {
    ...f,
    sentBones: Int32Array.from(sent),
    sendsRotations: sent.some((b) => f.codeBits[b * CODE_STRIDE] > 0),
    defaultCodes: new Int32Array(n),
    boneErrorBounds: boneBounds ?? new Float64Array(f.boneCount).fill(f.errorBound),
    absoluteBits,
    hash: 0,
  };
  // The default pose as the quantiser codes it (compensation included), so that a pose at
  // rest gives exactly these codes.
  new PoseQuantizer(partial).quantize(partial.defaultPose, partial.defaultCodes);
  const stream = new WriteStream(1024);
  serializeSchemaFields(stream, f);
  return { ...partial, hash: crc32(stream.finish()) };
}

/**
 * One description of the schema's wire form, for both directions. Serialized: never
 * reorder; bump {@link SCHEMA_VERSION}.
 */
function serializeSchemaFields(stream: BitStream, f: SchemaFields): void {
  const version = stream.serializeBits(SCHEMA_VERSION, 8);
  if (version !== SCHEMA_VERSION) throw new NetError(NET_ERROR.BAD_VALUE, `schema version ${version}, expected ${SCHEMA_VERSION}`, 0);
  f.boneCount = stream.serializeInt(f.boneCount, 1, 0xffff);
  if (stream.isReading) allocateFields(f);
  f.unit = LENGTH_UNITS[stream.serializeInt(LENGTH_UNITS.indexOf(f.unit), 0, LENGTH_UNITS.length - 1)];
  f.compensate = stream.serializeBool(f.compensate);
  f.threshold = stream.serializeFloat32(f.threshold);
  f.errorBound = stream.serializeFloat32(f.errorBound);
  f.deltaSmallOffset = stream.serializeInt(f.deltaSmallOffset, 0, 31);
  f.deltaLargeOffset = stream.serializeInt(f.deltaLargeOffset, 0, 31);
  for (let b = 0; b < f.boneCount; b++) {
    f.parents[b] = stream.serializeInt(f.parents[b], -1, b - 1);
    f.shellDistances[b] = stream.serializeFloat32(f.shellDistances[b]);
    for (let i = 0; i < POSE_STRIDE; i++) f.basePose[b * POSE_STRIDE + i] = stream.serializeFloat32(f.basePose[b * POSE_STRIDE + i]);
    for (let i = 0; i < POSE_STRIDE; i++) f.defaultPose[b * POSE_STRIDE + i] = stream.serializeFloat32(f.defaultPose[b * POSE_STRIDE + i]);
    const c = b * CODE_STRIDE;
    const rotBits = stream.serializeInt(f.codeBits[c + 1], 0, SMALLEST_THREE_MAX_BITS);
    if (rotBits > 0 && rotBits < SMALLEST_THREE_MIN_BITS) throw new NetError(NET_ERROR.BAD_VALUE, `bone ${b}: ${rotBits} rotation bits`, 0);
    f.codeBits[c] = rotBits > 0 ? SMALLEST_THREE_INDEX_BITS : 0;
    f.codeBits[c + 1] = f.codeBits[c + 2] = f.codeBits[c + 3] = rotBits;
    for (let k = 0; k < 3; k++) {
      const i = b * 3 + k;
      f.codeBits[c + 4 + k] = stream.serializeInt(f.codeBits[c + 4 + k], 0, COMPONENT_MAX_BITS);
      if (f.codeBits[c + 4 + k] > 0) {
        f.translationMin[i] = stream.serializeFloat32(f.translationMin[i]);
        f.translationMax[i] = stream.serializeFloat32(f.translationMax[i]);
      }
      f.codeBits[c + 7 + k] = stream.serializeInt(f.codeBits[c + 7 + k], 0, COMPONENT_MAX_BITS);
      if (f.codeBits[c + 7 + k] > 0) {
        f.scaleMin[i] = stream.serializeFloat32(f.scaleMin[i]);
        f.scaleMax[i] = stream.serializeFloat32(f.scaleMax[i]);
      }
    }
  }
}

function allocateFields(f: SchemaFields): void {
  const n = f.boneCount;
  f.parents = new Int32Array(n);
  f.shellDistances = new Float32Array(n);
  f.basePose = new Float32Array(n * POSE_STRIDE);
  f.defaultPose = new Float32Array(n * POSE_STRIDE);
  f.codeBits = new Uint8Array(n * CODE_STRIDE);
  f.translationMin = new Float32Array(n * 3);
  f.translationMax = new Float32Array(n * 3);
  f.scaleMin = new Float32Array(n * 3);
  f.scaleMax = new Float32Array(n * 3);
}

/**
 * The schema's wire form, for a server to send its clients once (a few bytes per bone:
 * parents, shells, base and default poses as float32, bit counts and ranges).
 */
export function encodeSnapshotSchema(schema: SnapshotSchema): Uint8Array {
  const stream = new WriteStream(1024);
  serializeSchemaFields(stream, { ...schema });
  return stream.finish();
}

/**
 * Reads a schema written by {@link encodeSnapshotSchema}. Throws {@link NetError}
 * (`PACKET_TRUNCATED`, `BAD_VALUE`) for bytes that are not one.
 */
export function decodeSnapshotSchema(bytes: Uint8Array): SnapshotSchema {
  const stream = new ReadStream(bytes);
  const f: SchemaFields = {
    boneCount: 0, parents: new Int32Array(0), unit: 'cm', threshold: 0, shellDistances: new Float32Array(0),
    basePose: new Float32Array(0), defaultPose: new Float32Array(0), compensate: false, codeBits: new Uint8Array(0),
    translationMin: new Float32Array(0), translationMax: new Float32Array(0), scaleMin: new Float32Array(0), scaleMax: new Float32Array(0),
    deltaSmallOffset: 0, deltaLargeOffset: 0, errorBound: 0,
  };
  serializeSchemaFields(stream, f);
  stream.finish();
  for (let i = 0; i < f.basePose.length; i++) {
    if (!Number.isFinite(f.basePose[i]) || !Number.isFinite(f.defaultPose[i])) throw new NetError(NET_ERROR.BAD_VALUE, 'schema pose value is not finite');
  }
  for (let i = 0; i < f.translationMin.length; i++) {
    const bad = (lo: number, hi: number, bits: number) => bits > 0 && !(Number.isFinite(lo) && Number.isFinite(hi) && hi > lo);
    if (bad(f.translationMin[i], f.translationMax[i], f.codeBits[Math.floor(i / 3) * CODE_STRIDE + 4 + (i % 3)])
      || bad(f.scaleMin[i], f.scaleMax[i], f.codeBits[Math.floor(i / 3) * CODE_STRIDE + 7 + (i % 3)])) {
      throw new NetError(NET_ERROR.BAD_VALUE, `schema range ${i} is empty or not finite`);
    }
  }
  checkOffsets(f.deltaSmallOffset, f.deltaLargeOffset);
  return finishSchema(f);
}
