/**
 * Quantisation of poses into snapshot codes ({@link CODE_STRIDE} integers per bone, laid out
 * by a {@link SnapshotSchema}) and back. Both ends run the same arithmetic, so the sender
 * knows the exact pose its receiver will decode.
 */
import { POSE_STRIDE } from '../runtime/pose.js';
import { NET_ERROR, NetError } from './bit-stream.js';
import type { SnapshotSchema } from './schema.js';
import { decodeSmallestThree, encodeSmallestThreeNear, snapCode } from './smallest-three.js';

/**
 * Codes per bone in a quantised snapshot: the smallest-three index and three components,
 * then translation x, y, z and scale x, y, z codes. A slot with 0 bits is not sent.
 */
export const CODE_STRIDE = 10;

/** The code of `value` in `min..max` on `bits` bits (clamped; 0 when `bits` is 0). */
export function quantizeComponentCode(value: number, min: number, max: number, bits: number): number {
  if (bits === 0) return 0;
  const steps = 2 ** bits - 1;
  const q = Math.round(((value - min) / (max - min)) * steps);
  return q > 0 ? (q < steps ? q : steps) : 0;
}

/** The value of `code` in `min..max` on `bits` bits. */
export function dequantizeComponentCode(code: number, min: number, max: number, bits: number): number {
  return min + (code * (max - min)) / (2 ** bits - 1);
}

/** Allocates the codes of one snapshot (zeros) for `schema`. */
export function createSnapshotCodes(schema: SnapshotSchema): Int32Array {
  return new Int32Array(schema.boneCount * CODE_STRIDE);
}

/**
 * Turns poses into codes. With `schema.compensate`, each rotation is quantised so that the
 * bone's object rotation is right given its ancestors' *decoded* rotations, which is why
 * this keeps scratch state (allocated once; nothing per call).
 */
export class PoseQuantizer {
  private readonly trueObject: Float64Array;
  private readonly decodedObject: Float64Array;
  private readonly local = new Float32Array(4);

  constructor(readonly schema: SnapshotSchema) {
    this.trueObject = new Float64Array(schema.boneCount * 4);
    this.decodedObject = new Float64Array(schema.boneCount * 4);
  }

  /**
   * Writes the codes of `pose` ({@link POSE_STRIDE} floats per bone, local transforms) into
   * `outCodes` and returns it. Translation and scale values outside the schema's ranges are
   * clamped. Throws {@link NetError} `BAD_ARGUMENT` when the sizes do not match the schema.
   */
  quantize(pose: Float32Array, outCodes: Int32Array): Int32Array {
    this.check(pose, outCodes);
    for (let b = 0; b < this.schema.boneCount; b++) this.quantizeBone(pose, b, outCodes, null, 0);
    return outCodes;
  }

  /** Throws {@link NetError} `BAD_ARGUMENT` when the sizes of `pose` and `codes` do not match the schema. */
  check(pose: Float32Array, outCodes: Int32Array): void {
    const s = this.schema;
    if (pose.length < s.boneCount * POSE_STRIDE || outCodes.length < s.boneCount * CODE_STRIDE) {
      throw new NetError(
        NET_ERROR.BAD_ARGUMENT,
        `pose of ${pose.length} floats or codes of ${outCodes.length} for a schema of ${s.boneCount} bones`,
      );
    }
  }

  /**
   * Writes bone `b`'s codes of `pose` into `outCodes`. Bones must be quantised parent first
   * (every bone before `b` already quantised in this pose: compensation reads the parent's
   * decoded rotation). With a `baseline` and `level` > 0, each sent component is instead the
   * code nearest its value among `baseline code + k · 2^level` (level capped at bits − 1 per
   * component; a rotation whose smallest-three index changed is coded as usual): the delta is
   * a whole number of coarse steps, and the value up to 2^(level − 1) codes off. Sizes are
   * not checked (see {@link check}).
   */
  quantizeBone(pose: Float32Array, b: number, outCodes: Int32Array, baseline: Int32Array | null, level: number): void {
    const s = this.schema;
    const T = this.trueObject,
      D = this.decodedObject,
      local = this.local;
    const o = b * POSE_STRIDE,
      c = b * CODE_STRIDE,
      q = b * 4;
    const parent = s.parents[b];
    let x = pose[o],
      y = pose[o + 1],
      z = pose[o + 2],
      w = pose[o + 3];
    const len = Math.sqrt(x * x + y * y + z * z + w * w);
    if (len > 0 && Number.isFinite(len)) {
      x /= len;
      y /= len;
      z /= len;
      w /= len;
    } else {
      x = 0;
      y = 0;
      z = 0;
      w = 1;
    }
    const rotationBits = s.codeBits[c + 1];
    if (rotationBits > 0) {
      let tx = x,
        ty = y,
        tz = z,
        tw = w;
      if (s.compensate && parent >= 0) {
        // target = conj(decoded parent) · true parent · local: the local rotation that puts
        // the bone's object rotation where it belongs despite the ancestors' rounding.
        const p = parent * 4;
        mulQuat(T[p], T[p + 1], T[p + 2], T[p + 3], x, y, z, w, SCRATCH, 0);
        mulQuat(-D[p], -D[p + 1], -D[p + 2], D[p + 3], SCRATCH[0], SCRATCH[1], SCRATCH[2], SCRATCH[3], SCRATCH, 0);
        tx = SCRATCH[0];
        ty = SCRATCH[1];
        tz = SCRATCH[2];
        tw = SCRATCH[3];
      }
      const step = baseline && level > 0 ? 2 ** Math.min(level, rotationBits - 1) : 1;
      encodeSmallestThreeNear(tx, ty, tz, tw, rotationBits, outCodes, c, baseline, c, step);
      decodeSmallestThree(outCodes, c, rotationBits, local, 0);
    } else {
      for (let k = 0; k < 4; k++) {
        outCodes[c + k] = 0;
        local[k] = s.basePose[o + k];
      }
    }
    if (s.compensate) {
      // Object rotations, true and as the receiver will decode them (normalised like the error metric does).
      let lx = local[0],
        ly = local[1],
        lz = local[2],
        lw = local[3];
      const ll = Math.sqrt(lx * lx + ly * ly + lz * lz + lw * lw) || 1;
      lx /= ll;
      ly /= ll;
      lz /= ll;
      lw /= ll;
      if (parent >= 0) {
        const p = parent * 4;
        mulQuat(T[p], T[p + 1], T[p + 2], T[p + 3], x, y, z, w, T, q);
        mulQuat(D[p], D[p + 1], D[p + 2], D[p + 3], lx, ly, lz, lw, D, q);
      } else {
        T[q] = x;
        T[q + 1] = y;
        T[q + 2] = z;
        T[q + 3] = w;
        D[q] = lx;
        D[q + 1] = ly;
        D[q + 2] = lz;
        D[q + 3] = lw;
      }
    }
    for (let k = 0; k < 3; k++) {
      const i = b * 3 + k;
      outCodes[c + 4 + k] = quantizeNear(
        pose[o + 4 + k],
        s.translationMin[i],
        s.translationMax[i],
        s.codeBits[c + 4 + k],
        baseline,
        c + 4 + k,
        level,
      );
      outCodes[c + 7 + k] = quantizeNear(
        pose[o + 7 + k],
        s.scaleMin[i],
        s.scaleMax[i],
        s.codeBits[c + 7 + k],
        baseline,
        c + 7 + k,
        level,
      );
    }
  }
}

/** {@link quantizeComponentCode}, or with a baseline and level > 0 the nearest code a whole number of 2^level steps from it. */
function quantizeNear(
  value: number,
  min: number,
  max: number,
  bits: number,
  baseline: Int32Array | null,
  slot: number,
  level: number,
): number {
  if (bits === 0 || !baseline || level <= 0 || bits === 1) return quantizeComponentCode(value, min, max, bits);
  const steps = 2 ** bits - 1;
  return snapCode(((value - min) / (max - min)) * steps, baseline[slot], 2 ** Math.min(level, bits - 1), steps);
}

const SCRATCH = new Float64Array(4);

/** out[o..o+3] = a · b (Hamilton product, xyzw). */
function mulQuat(
  ax: number,
  ay: number,
  az: number,
  aw: number,
  bx: number,
  by: number,
  bz: number,
  bw: number,
  out: Float64Array,
  o: number,
): void {
  const x = aw * bx + ax * bw + ay * bz - az * by;
  const y = aw * by - ax * bz + ay * bw + az * bx;
  const z = aw * bz + ax * by - ay * bx + az * bw;
  const w = aw * bw - ax * bx - ay * by - az * bz;
  out[o] = x;
  out[o + 1] = y;
  out[o + 2] = z;
  out[o + 3] = w;
}

/**
 * Writes the pose that `codes` stand for into `outPose` ({@link POSE_STRIDE} floats per
 * bone; unsent slots take the schema's `basePose`) and returns it. Codes must be in range
 * (as every decoded snapshot's are). Allocates nothing.
 */
export function dequantizePose(schema: SnapshotSchema, codes: Int32Array, outPose: Float32Array): Float32Array {
  for (let b = 0; b < schema.boneCount; b++) dequantizeBone(schema, codes, b, outPose);
  return outPose;
}

/** Bone `b`'s part of {@link dequantizePose} (the same arithmetic, so a sender can check one bone). */
export function dequantizeBone(schema: SnapshotSchema, codes: Int32Array, b: number, outPose: Float32Array): void {
  const o = b * POSE_STRIDE,
    c = b * CODE_STRIDE;
  for (let k = 0; k < POSE_STRIDE; k++) outPose[o + k] = schema.basePose[o + k];
  const rotationBits = schema.codeBits[c + 1];
  if (rotationBits > 0) decodeSmallestThree(codes, c, rotationBits, outPose, o);
  for (let k = 0; k < 3; k++) {
    const i = b * 3 + k;
    const tb = schema.codeBits[c + 4 + k];
    if (tb > 0)
      outPose[o + 4 + k] = dequantizeComponentCode(
        codes[c + 4 + k],
        schema.translationMin[i],
        schema.translationMax[i],
        tb,
      );
    const sb = schema.codeBits[c + 7 + k];
    if (sb > 0)
      outPose[o + 7 + k] = dequantizeComponentCode(codes[c + 7 + k], schema.scaleMin[i], schema.scaleMax[i], sb);
  }
}
