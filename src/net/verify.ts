/**
 * Verified precision: the sender knows exactly what its receiver decodes (the same codes,
 * baseline and arithmetic), so instead of trusting the schema's error bound it can measure
 * every bone's decoded error against the true pose and spend bits only where they are needed.
 *
 * Each bone of a delta snapshot gets a precision level L: its components move from the
 * baseline's codes in whole steps of 2^L codes (the bound-derived grid is level 0). The
 * quantiser starts every bone at a coarse level and lowers, one step at a time, the level
 * of the bone (or ancestor) responsible for the first bone whose measured virtual-vertex
 * error exceeds the threshold, until every bone is within it. With every level at 0 the
 * codes are the plain quantiser's, which the bound covers, so the loop always ends.
 */
import {
  AFFINE_STRIDE,
  composeAffine,
  poseToAffine,
  poseToObject,
  virtualVertexError,
} from '../metric/error-metric.js';
import { POSE_STRIDE } from '../runtime/pose.js';
import { CODE_STRIDE, PoseQuantizer, dequantizeBone } from './quantize.js';
import type { SnapshotSchema } from './schema.js';

/** Highest precision level (a step of 2^7 codes); levels are coded in 3 bits. */
export const MAX_PRECISION_LEVEL = 7;

/** Level every bone of a verified delta starts from. */
export const START_PRECISION_LEVEL = 2;

/**
 * A bone whose own joint is off by more than this share of the threshold is refined in an
 * ancestor first (its own rotation cannot move its joint).
 */
const JOINT_SHARE = 0.85;

/** Quantises poses as deltas with per-bone precision levels, checked against the threshold. */
export class VerifiedQuantizer {
  private readonly quantizer: PoseQuantizer;
  private readonly reference: Float64Array;
  private readonly decoded: Float64Array;
  private readonly decodedPose: Float32Array;
  /** Measured virtual-vertex error of each bone in the last {@link quantize}. */
  readonly errors: Float64Array;
  private readonly limit: number;
  private readonly subtrees: number[][];

  constructor(
    readonly schema: SnapshotSchema,
    readonly startLevel = START_PRECISION_LEVEL,
  ) {
    this.quantizer = new PoseQuantizer(schema);
    this.reference = new Float64Array(schema.boneCount * AFFINE_STRIDE);
    this.decoded = new Float64Array(schema.boneCount * AFFINE_STRIDE);
    this.decodedPose = new Float32Array(schema.boneCount * POSE_STRIDE);
    this.errors = new Float64Array(schema.boneCount);
    this.limit = schema.threshold;
    // Bones below each bone (itself first), in bone order: parents come before children.
    this.subtrees = Array.from({ length: schema.boneCount }, () => [] as number[]);
    for (let b = 0; b < schema.boneCount; b++) for (let a = b; a >= 0; a = schema.parents[a]) this.subtrees[a].push(b);
  }

  /**
   * Writes the codes of `pose` against `baseline` into `outCodes` and each bone's level into
   * `outLevels`, and returns the largest measured error (≤ the threshold unless even level 0,
   * the bound-derived codes, misses it — which the bound rules out).
   */
  quantize(pose: Float32Array, baseline: Int32Array, outCodes: Int32Array, outLevels: Uint8Array): number {
    const s = this.schema,
      n = s.boneCount,
      parents = s.parents;
    this.quantizer.check(pose, outCodes);
    poseToObject(pose, parents, this.reference, 0);
    for (let b = 0; b < n; b++) outLevels[b] = boneIsSent(s, b) ? this.startLevel : 0;
    let from = 0;
    for (;;) {
      if (from === 0) for (let b = 0; b < n; b++) this.quantizeBone(pose, b, baseline, outCodes, outLevels[b]);
      else this.requantize(pose, from, baseline, outCodes, outLevels);
      let failing = -1;
      for (let b = 0; b < n; b++)
        if (this.errors[b] > this.limit) {
          failing = b;
          break;
        }
      if (failing < 0) break;
      const refine = this.pickRefinement(failing, outLevels);
      if (refine < 0) break; // every level already 0: the bound's codes
      outLevels[refine]--;
      from = refine;
    }
    // Greedy refinement can overshoot: try each bone one level coarser, keep what still passes.
    for (let b = 0; b < n; b++) {
      if (outLevels[b] >= MAX_PRECISION_LEVEL || !boneIsSent(s, b)) continue;
      outLevels[b]++;
      if (!this.requantize(pose, b, baseline, outCodes, outLevels)) {
        outLevels[b]--;
        this.requantize(pose, b, baseline, outCodes, outLevels);
      }
    }
    let worst = 0;
    for (let b = 0; b < n; b++) if (this.errors[b] > worst) worst = this.errors[b];
    return worst;
  }

  /** Quantises `root`'s subtree again with `levels`; true when every bone in it is within the threshold. */
  private requantize(
    pose: Float32Array,
    root: number,
    baseline: Int32Array,
    codes: Int32Array,
    levels: Uint8Array,
  ): boolean {
    let ok = true;
    for (const b of this.subtrees[root]) {
      this.quantizeBone(pose, b, baseline, codes, levels[b]);
      if (this.errors[b] > this.limit) ok = false;
    }
    return ok;
  }

  /** The bone to lower a level for bone `d`'s error: itself, or the nearest coarser ancestor when its joint is off. */
  private pickRefinement(d: number, levels: Uint8Array): number {
    const parents = this.schema.parents;
    const m = d * AFFINE_STRIDE,
      r = this.reference,
      x = this.decoded;
    const jx = r[m + 9] - x[m + 9],
      jy = r[m + 10] - x[m + 10],
      jz = r[m + 11] - x[m + 11];
    const jointOff = Math.sqrt(jx * jx + jy * jy + jz * jz) > JOINT_SHARE * this.limit;
    if (!jointOff && levels[d] > 0) return d;
    for (let a = parents[d]; a >= 0; a = parents[a]) if (levels[a] > 0) return a;
    return levels[d] > 0 ? d : -1;
  }

  private quantizeBone(pose: Float32Array, b: number, baseline: Int32Array, codes: Int32Array, level: number): void {
    const s = this.schema;
    this.quantizer.quantizeBone(pose, b, codes, baseline, level);
    // The receiver's arithmetic: dequantizePose, then poseToObject, bone by bone.
    dequantizeBone(s, codes, b, this.decodedPose);
    const p = b * POSE_STRIDE,
      m = b * AFFINE_STRIDE,
      q = this.decodedPose,
      out = this.decoded;
    poseToAffine(q, p, out, m);
    const parent = s.parents[b];
    if (parent >= 0) composeAffine(out, parent * AFFINE_STRIDE, out, m, out, m);
    this.errors[b] = virtualVertexError(this.reference, m, out, m, s.shellDistances[b]);
  }
}

function boneIsSent(s: SnapshotSchema, b: number): boolean {
  for (let i = 0; i < CODE_STRIDE; i++) if (s.codeBits[b * CODE_STRIDE + i] > 0) return true;
  return false;
}
