/**
 * Object-space error metric: what a skinned mesh would show. For bone b at sample s, with d
 * b's shell distance, the reference and the decoded object-space transform move
 * - the virtual vertices (d,0,0), (0,d,0), (0,0,d): the `vertices` metric (the default) is
 *   the largest of the three distances;
 * - every point of the sphere of radius d around the bone: the `shell` metric is a bound on
 *   the largest distance over the whole sphere ({@link shellBoundError}).
 *
 * Object transforms are affine 3×4 matrices in float64, column-major with the translation
 * last (12 numbers): applying scale, then rotation, then translation, composed parent
 * first. The decoded *local* values are the decoder's float32 output; composing them in
 * float64 keeps the metric's own rounding out of the figure.
 */
import { BonepressError } from '../shared/errors.js';
import { POSE_STRIDE } from '../clip/skeleton.js';
import type { RawClip } from '../clip/raw-clip.js';
import type { LengthUnit } from '../clip/units.js';

/** Numbers per affine matrix. */
export const AFFINE_STRIDE = 12;

/**
 * What the error of a bone measures: `vertices`, the three virtual vertices on the axes
 * ({@link virtualVertexError}); `shell`, every point of the sphere ({@link shellBoundError}).
 */
export type ErrorMetric = 'vertices' | 'shell';

/** Every {@link ErrorMetric}, the default first. */
export const ERROR_METRICS: readonly ErrorMetric[] = ['vertices', 'shell'];

/** True when `s` names an {@link ErrorMetric}. */
export function isErrorMetric(s: unknown): s is ErrorMetric {
  return typeof s === 'string' && (ERROR_METRICS as readonly string[]).includes(s);
}

/** The error of one bone between two object transforms at shell distance `d` (see {@link ErrorMetric}). */
export type BoneErrorFunction = (a: Float64Array, ao: number, b: Float64Array, bo: number, d: number) => number;

/** The function that measures `metric`. */
export function boneErrorFunction(metric: ErrorMetric): BoneErrorFunction {
  return metric === 'shell' ? shellBoundError : virtualVertexError;
}

/**
 * Writes the affine matrix of a local transform as engines compose it (three.js
 * `Matrix4.compose`, Babylon.js `Matrix.ComposeToRef`): the quaternion as it is. One of
 * length k, as float32 rounding leaves it a little off 1, gives k²R + (1 − k²)I instead of
 * the rotation R, off by (k² − 1)(R − I), which a large model shows.
 */
export function localToAffine(
  qx: number,
  qy: number,
  qz: number,
  qw: number,
  tx: number,
  ty: number,
  tz: number,
  sx: number,
  sy: number,
  sz: number,
  out: Float64Array,
  o: number,
): void {
  const k = 2;
  const xx = qx * qx * k,
    yy = qy * qy * k,
    zz = qz * qz * k;
  const xy = qx * qy * k,
    xz = qx * qz * k,
    yz = qy * qz * k;
  const wx = qw * qx * k,
    wy = qw * qy * k,
    wz = qw * qz * k;
  out[o] = (1 - yy - zz) * sx;
  out[o + 1] = (xy + wz) * sx;
  out[o + 2] = (xz - wy) * sx;
  out[o + 3] = (xy - wz) * sy;
  out[o + 4] = (1 - xx - zz) * sy;
  out[o + 5] = (yz + wx) * sy;
  out[o + 6] = (xz + wy) * sz;
  out[o + 7] = (yz - wx) * sz;
  out[o + 8] = (1 - xx - yy) * sz;
  out[o + 9] = tx;
  out[o + 10] = ty;
  out[o + 11] = tz;
}

/**
 * {@link localToAffine} of the pose-layout transform at `pose[p..p + 9]` (rotation xyzw,
 * translation, scale). Hot loops call this rather than passing ten numbers: a call that is
 * not inlined would box each of them.
 */
export function poseToAffine(pose: Float32Array | Float64Array, p: number, out: Float64Array, o: number): void {
  localToAffine(
    pose[p],
    pose[p + 1],
    pose[p + 2],
    pose[p + 3],
    pose[p + 4],
    pose[p + 5],
    pose[p + 6],
    pose[p + 7],
    pose[p + 8],
    pose[p + 9],
    out,
    o,
  );
}

/** out = a ∘ b (b applied first). `out` may alias `b` but not `a`. */
export function composeAffine(
  a: Float64Array,
  ao: number,
  b: Float64Array,
  bo: number,
  out: Float64Array,
  o: number,
): void {
  const a0 = a[ao],
    a1 = a[ao + 1],
    a2 = a[ao + 2];
  const a3 = a[ao + 3],
    a4 = a[ao + 4],
    a5 = a[ao + 5];
  const a6 = a[ao + 6],
    a7 = a[ao + 7],
    a8 = a[ao + 8];
  for (let c = 0; c < 4; c++) {
    const x = b[bo + c * 3],
      y = b[bo + c * 3 + 1],
      z = b[bo + c * 3 + 2];
    out[o + c * 3] = a0 * x + a3 * y + a6 * z;
    out[o + c * 3 + 1] = a1 * x + a4 * y + a7 * z;
    out[o + c * 3 + 2] = a2 * x + a5 * y + a8 * z;
  }
  out[o + 9] += a[ao + 9];
  out[o + 10] += a[ao + 10];
  out[o + 11] += a[ao + 11];
}

/**
 * Largest displacement of the three virtual vertices at distance `d` between two object
 * transforms: |d·(column_k(a) − column_k(b)) + (t(a) − t(b))| for k = 0..2.
 */
export function virtualVertexError(a: Float64Array, ao: number, b: Float64Array, bo: number, d: number): number {
  const tx = a[ao + 9] - b[bo + 9],
    ty = a[ao + 10] - b[bo + 10],
    tz = a[ao + 11] - b[bo + 11];
  let worst = 0;
  for (let k = 0; k < 3; k++) {
    const x = d * (a[ao + k * 3] - b[bo + k * 3]) + tx;
    const y = d * (a[ao + k * 3 + 1] - b[bo + k * 3 + 1]) + ty;
    const z = d * (a[ao + k * 3 + 2] - b[bo + k * 3 + 2]) + tz;
    const e = x * x + y * y + z * z;
    if (e > worst) worst = e;
  }
  return Math.sqrt(worst);
}

/**
 * Whole-shell bound between two object transforms (the `shell` metric): no point of the
 * sphere of radius `d` around the bone moves more than d · σ + |t(a) − t(b)|, σ the largest
 * singular value of the difference of the two 3 × 3 parts (2 sin(θ/2) for two rotations θ
 * apart). Never below {@link virtualVertexError}, whose three points lie on that sphere.
 * With `floor`, a result at most `floor` may be any number from the bound up to `floor`:
 * where d · ‖D‖ (Frobenius, never below σ) shows the bound cannot exceed it, the
 * eigenvalue is not computed, and a running maximum from `floor` comes out the same.
 */
export function shellBoundError(
  a: Float64Array,
  ao: number,
  b: Float64Array,
  bo: number,
  d: number,
  floor = -1,
): number {
  boneErrors[BONE_ERRORS.DISTANCE] = d;
  boneErrors[BONE_ERRORS.FLOOR] = floor;
  measureBoneErrors(a, ao, b, bo, boneErrors);
  return boneErrors[BONE_ERRORS.SHELL];
}

/** The numbers in and out of {@link measureBoneErrors}, by index in one Float64Array of `COUNT`. */
// biome-ignore lint/suspicious/noConstEnum: numbers in the code, as format.ts's tables
export const enum BONE_ERRORS {
  /** In: the shell distance d. */
  DISTANCE,
  /** In: the floor of the whole-shell error ({@link shellBoundError}). */
  FLOOR,
  /** Out: the {@link virtualVertexError}. */
  VERTEX,
  /** Out: the {@link shellBoundError} with the floor. */
  SHELL,
  COUNT,
}

/** A {@link BONE_ERRORS} record, for callers that need only one at a time. */
export const boneErrors = new Float64Array(BONE_ERRORS.COUNT);

/**
 * A bone's {@link virtualVertexError} and its {@link shellBoundError} with a floor, the
 * difference of the transforms taken once, with its numbers in `io` ({@link BONE_ERRORS}): a
 * call the engine does not inline (this one is too long) boxes every number passed or
 * returned that is not a small integer, which in a loop over bones and checks is an
 * allocation each.
 */
export function measureBoneErrors(a: Float64Array, ao: number, b: Float64Array, bo: number, io: Float64Array): void {
  const d = io[BONE_ERRORS.DISTANCE],
    floor = io[BONE_ERRORS.FLOOR];
  const tx = a[ao + 9] - b[bo + 9],
    ty = a[ao + 10] - b[bo + 10],
    tz = a[ao + 11] - b[bo + 11];
  const d0 = a[ao] - b[bo],
    d1 = a[ao + 1] - b[bo + 1],
    d2 = a[ao + 2] - b[bo + 2];
  const d3 = a[ao + 3] - b[bo + 3],
    d4 = a[ao + 4] - b[bo + 4],
    d5 = a[ao + 5] - b[bo + 5];
  const d6 = a[ao + 6] - b[bo + 6],
    d7 = a[ao + 7] - b[bo + 7],
    d8 = a[ao + 8] - b[bo + 8];
  const e0 = squaredLength(d * d0 + tx, d * d1 + ty, d * d2 + tz),
    e1 = squaredLength(d * d3 + tx, d * d4 + ty, d * d5 + tz),
    e2 = squaredLength(d * d6 + tx, d * d7 + ty, d * d8 + tz);
  // M = DᵀD (D = A − B, column-major), symmetric positive semi-definite.
  const m00 = d0 * d0 + d1 * d1 + d2 * d2,
    m11 = d3 * d3 + d4 * d4 + d5 * d5,
    m22 = d6 * d6 + d7 * d7 + d8 * d8;
  const move = Math.sqrt(tx * tx + ty * ty + tz * tz);
  const cheap = d * Math.sqrt(m00 + m11 + m22) + move;
  // The margin covers the closed form's rounding above ‖D‖² (a rank-one M has λ = trace).
  if (cheap * (1 + 1e-9) <= floor) io[BONE_ERRORS.SHELL] = cheap;
  else {
    // Largest eigenvalue of M, closed form for symmetric 3 × 3 matrices.
    const m01 = d0 * d3 + d1 * d4 + d2 * d5,
      m02 = d0 * d6 + d1 * d7 + d2 * d8,
      m12 = d3 * d6 + d4 * d7 + d5 * d8;
    const off = m01 * m01 + m02 * m02 + m12 * m12;
    const q = (m00 + m11 + m22) / 3;
    let largest: number;
    if (off === 0) {
      largest = Math.max(m00, m11, m22);
    } else {
      const a00 = m00 - q,
        a11 = m11 - q,
        a22 = m22 - q;
      const p = Math.sqrt((a00 * a00 + a11 * a11 + a22 * a22 + 2 * off) / 6);
      const det = a00 * (a11 * a22 - m12 * m12) - m01 * (m01 * a22 - m12 * m02) + m02 * (m01 * m12 - a11 * m02);
      const r = det / (2 * p * p * p);
      const phi = r <= -1 ? Math.PI / 3 : r >= 1 ? 0 : Math.acos(r) / 3;
      largest = q + 2 * p * Math.cos(phi);
    }
    // Rounding can put the closed form a little below trace / 3, which the largest eigenvalue never is.
    const third = (m00 + m11 + m22) / 3;
    io[BONE_ERRORS.SHELL] = d * Math.sqrt(largest > third ? largest : third) + move;
  }
  let worst = 0;
  if (e0 > worst) worst = e0;
  if (e1 > worst) worst = e1;
  if (e2 > worst) worst = e2;
  io[BONE_ERRORS.VERTEX] = Math.sqrt(worst);
}

function squaredLength(x: number, y: number, z: number): number {
  return x * x + y * y + z * z;
}

/**
 * Math.hypot of three numbers with Node's arithmetic (each divided by the largest, their squares
 * summed with Kahan's compensation, the root times the largest), written out: the builtin is a
 * call into the engine's runtime, which took a twentieth of compress() in compress/between.ts `roundingTerm`.
 */
export function hypot3(x: number, y: number, z: number): number {
  const max = Math.max(Math.abs(x), Math.abs(y), Math.abs(z));
  if (max === 0 || max === Number.POSITIVE_INFINITY) return max;
  const a = Math.abs(x) / max,
    b = Math.abs(y) / max,
    c = Math.abs(z) / max;
  const sum = a * a + b * b;
  const compensation = sum - a * a - b * b;
  return Math.sqrt(sum + (c * c - compensation)) * max;
}

/**
 * Writes the object transforms of one pose ({@link POSE_STRIDE} floats per bone) into
 * `out` at `o` ({@link AFFINE_STRIDE} numbers per bone); with `needed`, only those of the
 * bones marked there, which must include every ancestor of a marked bone.
 */
export function poseToObject(
  pose: Float32Array | Float64Array,
  parents: Int32Array,
  out: Float64Array,
  o = 0,
  needed?: Uint8Array,
): void {
  const boneCount = parents.length;
  for (let b = 0; b < boneCount; b++) {
    if (needed && needed[b] === 0) continue;
    const p = b * POSE_STRIDE;
    const m = o + b * AFFINE_STRIDE;
    poseToAffine(pose, p, out, m);
    const parent = parents[b];
    if (parent >= 0) composeAffine(out, o + parent * AFFINE_STRIDE, out, m, out, m);
  }
}

/**
 * Object transforms of sample `s` of a clip into `out` at `o` ({@link AFFINE_STRIDE}
 * numbers per bone) — the same arithmetic as {@link poseToObject} on that sample's pose.
 */
export function sampleToObject(clip: RawClip, s: number, out: Float64Array, o = 0): void {
  const n = clip.sampleCount;
  const parents = clip.skeleton.parents;
  const r = clip.rotations,
    t = clip.translations,
    sc = clip.scales;
  for (let b = 0; b < parents.length; b++) {
    const i = b * n + s;
    const m = o + b * AFFINE_STRIDE;
    localToAffine(
      r[i * 4],
      r[i * 4 + 1],
      r[i * 4 + 2],
      r[i * 4 + 3],
      t[i * 3],
      t[i * 3 + 1],
      t[i * 3 + 2],
      sc[i * 3],
      sc[i * 3 + 1],
      sc[i * 3 + 2],
      out,
      m,
    );
    const parent = parents[b];
    if (parent >= 0) composeAffine(out, o + parent * AFFINE_STRIDE, out, m, out, m);
  }
}

/**
 * Object transforms of every sample of a clip, sample-major:
 * `out[(s * boneCount + b) * 12 + i]`.
 */
export function clipToObject(clip: RawClip): Float64Array {
  const boneCount = clip.skeleton.parents.length;
  const out = new Float64Array(clip.sampleCount * boneCount * AFFINE_STRIDE);
  for (let s = 0; s < clip.sampleCount; s++) sampleToObject(clip, s, out, s * boneCount * AFFINE_STRIDE);
  return out;
}

/** What {@link measureClipError} reports. Errors are in `unit`. */
export interface ErrorReport {
  /** The metric of `maxError`, `p99Error`, `meanError` and `boneMaxError`. */
  readonly metric: ErrorMetric;
  readonly maxError: number;
  /** Largest whole-shell error ({@link shellBoundError}) over every bone × sample, whatever `metric`. */
  readonly shellMaxError: number;
  /** 99th percentile over every bone × sample. */
  readonly p99Error: number;
  readonly meanError: number;
  /** Index and name of the bone and the sample where `maxError` occurs. */
  readonly worstBone: number;
  readonly worstBoneName: string;
  readonly worstSample: number;
  readonly unit: LengthUnit;
  /** Largest error of each bone over the clip. */
  readonly boneMaxError: Float64Array;
  readonly sampleCount: number;
  readonly boneCount: number;
}

/** Thrown when two clips cannot be compared (different bones or sample counts). */
export class MetricError extends BonepressError {
  override readonly name = 'MetricError';
  declare readonly code: 'CLIPS_DIFFER';
  constructor(message: string) {
    super('CLIPS_DIFFER', message);
  }
}

/**
 * Measures `decoded` against `reference` at every sample with `metric` (default `vertices`)
 * at `shellDistances` (per bone, clip units; default: the reference skeleton's).
 * `referenceObject` may pass `clipToObject(reference)` when the caller already has it.
 * The clips must have the same bones (same count and parents) and sample count; bones are
 * matched by index. Throws {@link MetricError} otherwise.
 */
export function measureClipError(
  reference: RawClip,
  decoded: RawClip,
  shellDistances: Float32Array = reference.skeleton.shellDistances,
  referenceObject?: Float64Array,
  metric: ErrorMetric = 'vertices',
): ErrorReport {
  const boneCount = reference.skeleton.parents.length;
  const n = reference.sampleCount;
  if (decoded.skeleton.parents.length !== boneCount) {
    throw new MetricError(`bone counts differ: ${boneCount} vs ${decoded.skeleton.parents.length}`);
  }
  for (let b = 0; b < boneCount; b++) {
    if (decoded.skeleton.parents[b] !== reference.skeleton.parents[b]) {
      throw new MetricError(`hierarchies differ at bone ${b} (${reference.skeleton.boneNames[b]})`);
    }
  }
  if (decoded.sampleCount !== n) throw new MetricError(`sample counts differ: ${n} vs ${decoded.sampleCount}`);
  if (shellDistances.length !== boneCount)
    throw new MetricError(`${shellDistances.length} shell distances for ${boneCount} bones`);
  return measureSampleErrors(
    reference,
    referenceObject,
    shellDistances,
    (s, out) => sampleToObject(decoded, s, out),
    metric,
  );
}

/** Each bone's errors at every sample of a clip, sample-major: `errors[s * boneCount + b]`. */
export interface SampleErrors {
  /** By the metric measured. */
  readonly errors: Float64Array;
  /**
   * Whole shell: the error where it could raise the clip's whole-shell figure so far, elsewhere
   * a bound never below it ({@link measureBoneErrors} with that figure as its floor).
   */
  readonly shells: Float64Array;
}

/**
 * The error report of a decoded clip given sample by sample: `decodeObject(s, out)` writes
 * the decoded object transforms of sample `s` (one pose, {@link AFFINE_STRIDE} per bone)
 * into `out`, so the decoded clip never needs to exist whole. `referenceObject` may pass
 * `clipToObject(reference)`; without it the reference is transformed sample by sample too.
 * Errors are measured with `metric`; the whole-shell figure is measured as well. `into`, when
 * given (each array bones × samples long), receives every bone's errors at every sample.
 */
export function measureSampleErrors(
  reference: RawClip,
  referenceObject: Float64Array | undefined,
  shellDistances: Float32Array,
  decodeObject: (sample: number, out: Float64Array) => void,
  metric: ErrorMetric = 'vertices',
  into?: SampleErrors,
): ErrorReport {
  const boneCount = reference.skeleton.parents.length;
  const n = reference.sampleCount;
  const decoded = new Float64Array(boneCount * AFFINE_STRIDE);
  const referenceSample = referenceObject ? undefined : new Float64Array(boneCount * AFFINE_STRIDE);
  const errors = into?.errors ?? new Float64Array(n * boneCount);
  const boneMax = new Float64Array(boneCount);
  const running = new Float64Array(RUNNING.COUNT);
  running[RUNNING.MAX] = -1;
  for (let s = 0; s < n; s++) {
    decodeObject(s, decoded);
    if (referenceSample) sampleToObject(reference, s, referenceSample);
    const ref = referenceSample ?? referenceObject!;
    const base = referenceSample ? 0 : s * boneCount * AFFINE_STRIDE;
    measureSample(ref, base, decoded, shellDistances, metric, s, errors, into?.shells, boneMax, running);
  }
  const max = running[RUNNING.MAX],
    worstBone = running[RUNNING.WORST_BONE] | 0,
    worstSample = running[RUNNING.WORST_SAMPLE] | 0,
    sum = running[RUNNING.SUM],
    shellMax = running[RUNNING.SHELL_MAX];
  return {
    metric,
    maxError: Math.max(0, max),
    shellMaxError: shellMax,
    p99Error: percentile(errors, 0.99),
    meanError: sum / errors.length,
    worstBone,
    worstBoneName: reference.skeleton.boneNames[worstBone],
    worstSample,
    unit: reference.unit,
    boneMaxError: boneMax,
    sampleCount: n,
    boneCount,
  };
}

/** The running figures of {@link measureSampleErrors}, by index in one Float64Array of `COUNT`. */
// biome-ignore lint/suspicious/noConstEnum: numbers in the code, as format.ts's tables
const enum RUNNING {
  MAX,
  WORST_BONE,
  WORST_SAMPLE,
  SUM,
  SHELL_MAX,
  COUNT,
}

/**
 * Measures sample `s` for {@link measureSampleErrors}: every bone of `decoded` against
 * `ref` from `base`, into `errors`, `boneMax` and the `running` figures. A function called
 * once per sample, so the engine compiles this loop alone rather than the whole measure
 * mid-run and again whole.
 */
function measureSample(
  ref: Float64Array,
  base: number,
  decoded: Float64Array,
  shellDistances: Float32Array,
  metric: ErrorMetric,
  s: number,
  errors: Float64Array,
  shells: Float64Array | undefined,
  boneMax: Float64Array,
  running: Float64Array,
): void {
  const boneCount = boneMax.length;
  let max = running[RUNNING.MAX],
    sum = running[RUNNING.SUM],
    shellMax = running[RUNNING.SHELL_MAX];
  for (let b = 0; b < boneCount; b++) {
    const o = base + b * AFFINE_STRIDE;
    boneErrors[BONE_ERRORS.DISTANCE] = shellDistances[b];
    // The shell metric's figure is its bound worked out in full.
    boneErrors[BONE_ERRORS.FLOOR] = metric === 'shell' ? -1 : shellMax;
    measureBoneErrors(ref, o, decoded, b * AFFINE_STRIDE, boneErrors);
    const shell = boneErrors[BONE_ERRORS.SHELL];
    const e = metric === 'shell' ? shell : boneErrors[BONE_ERRORS.VERTEX];
    if (shell > shellMax) shellMax = shell;
    if (shells) shells[s * boneCount + b] = shell;
    errors[s * boneCount + b] = e;
    sum += e;
    if (e > boneMax[b]) boneMax[b] = e;
    if (e > max) {
      max = e;
      running[RUNNING.WORST_BONE] = b;
      running[RUNNING.WORST_SAMPLE] = s;
    }
  }
  running[RUNNING.MAX] = max;
  running[RUNNING.SUM] = sum;
  running[RUNNING.SHELL_MAX] = shellMax;
}

/**
 * The `q` quantile (0..1) of `values` by nearest rank: the value sorting would put at that rank
 * (NaN above every number), found by selection on a copy (sorting a clip's bone × sample errors
 * took as long as measuring them).
 */
export function percentile(values: Float64Array, q: number): number {
  if (values.length === 0) return 0;
  const a = Float64Array.from(values);
  const rank = Math.min(a.length - 1, Math.max(0, Math.ceil(q * a.length) - 1));
  if (a.some(Number.isNaN)) return a.sort()[rank];
  let lo = 0,
    hi = a.length - 1;
  while (lo < hi) {
    // Hoare's partition about the median of three: [lo, j] ≤ pivot ≤ [i, hi], j < i.
    const x = a[lo],
      y = a[(lo + hi) >>> 1],
      z = a[hi];
    const pivot = x < y ? (y < z ? y : x < z ? z : x) : x < z ? x : y < z ? z : y;
    let i = lo,
      j = hi;
    while (i <= j) {
      while (a[i] < pivot) i++;
      while (a[j] > pivot) j--;
      if (i <= j) {
        const t = a[i];
        a[i++] = a[j];
        a[j--] = t;
      }
    }
    if (rank <= j) hi = j;
    else if (rank >= i) lo = i;
    else return pivot;
  }
  return a[rank];
}
