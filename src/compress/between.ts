/**
 * The error between samples: what a user sees at any playback time, not only at the
 * stored samples.
 *
 * The reference between two samples is what the source means there: its own keys
 * evaluated with its own interpolation (slerp for glTF LINEAR rotations, Hermite for
 * CUBICSPLINE, the held value for STEP), or, for sources made of samples only (BVH, ACL
 * SJSON), slerp and lerp between the two samples, in float64. The decoded side is the
 * runtime's own interpolation.
 */
import { evaluateTrack, resampleTrack, sampleTrackAt, tolerance, type PlayerSlerp } from '../clip/keyframes.js';
import { clipStartTime, sampleTime, type RawClip } from '../clip/raw-clip.js';
import { POSE_STRIDE } from '../clip/skeleton.js';
import { KIND_POSE_OFFSET, TRACKS_PER_BONE, TRACK_KIND } from '../runtime/format.js';
import { slerpAngle, slerpWeightAt, slerpWeights } from '../runtime/interpolate.js';
import { keyPosition } from '../runtime/key-times.js';
import {
  AFFINE_STRIDE,
  boneErrorFunction,
  composeAffine,
  hypot3,
  localToAffine,
  poseToObject,
  sampleToObject,
  boneErrors,
  BONE_ERRORS,
  measureBoneErrors,
  type BoneErrorFunction,
  type ErrorMetric,
  type SampleErrors,
} from '../metric/error-metric.js';
import {
  clipSampleObjects,
  clipSampleSpecs,
  measureKernel,
  placeClipSamples,
  plainBuffers,
  type Buffers,
  type MeasureExports,
  type MeasureKernel,
} from './measure-kernel.js';

/**
 * The most checks a sample interval needs ({@link checksFor}): at i / m of it for
 * i = 1 … m − 1, m the smallest power of two from 4 whose {@link remainderFactor} is within
 * {@link REMAINDER_SHARE}: ¼, ½ and ¾ of an interval over which no chain of bones turns more
 * than about a quarter of a radian.
 */
const MIN_CHECKS = 4;
const MAX_CHECKS = 32;
/**
 * The m of an interval's first look (½ alone): its bound from that one check settles most
 * intervals (see {@link measureBetweenErrors}).
 */
const FIRST_CHECKS = 2;
/** Share of the error a check may leave unmeasured between two checks. */
export const REMAINDER_SHARE = 0.02;

/** The largest error between samples and where it occurs. Errors are in clip units. */
export interface BetweenReport {
  /** The metric of `maxError`. */
  metric: ErrorMetric;
  maxError: number;
  /** Largest whole-shell error between samples, whatever `metric`. */
  shellMaxError: number;
  worstBone: number;
  /** Sample interval (from sample `worstInterval` to the next) and fraction of the worst error. */
  worstInterval: number;
  worstFraction: number;
}

/**
 * Writes the reference local pose a fraction `alpha` of the way from sample `k` to `k + 1`
 * into `out` ({@link POSE_STRIDE} float64 per bone); with `player`, keyed rotations as that
 * player evaluates them ({@link PlayerSlerp}). `rotationsOnly` writes the rotations alone,
 * over a pose that holds the rest.
 */
export function referenceBetween(
  clip: RawClip,
  k: number,
  alpha: number,
  out: Float64Array,
  player?: PlayerSlerp,
  rotationsOnly = false,
): void {
  const n = clip.sampleCount;
  const boneCount = clip.skeleton.parents.length;
  const time = sampleTime(clip, k + alpha);
  // At a sample, a key within float32 jitter of its time is the sample, as the reader took it.
  const tol = alpha === 0 || alpha === 1 ? tolerance(time, clip.sampleRate) : 0;
  const k1 = Math.min(n - 1, k + 1);
  for (let b = 0; b < boneCount; b++) {
    for (let kind = 0; kind < (rotationsOnly ? 1 : TRACKS_PER_BONE); kind++) {
      const t = b * TRACKS_PER_BONE + kind;
      const o = b * POSE_STRIDE + KIND_POSE_OFFSET[kind];
      const keys = clip.keyframes?.[t];
      if (keys) {
        evaluateTrack(keys, time, out, o, tol, player);
        continue;
      }
      const held = clip.stepMask?.[t] === 1;
      if (kind === TRACK_KIND.ROTATION) {
        if (held) copy(clip.rotations, (b * n + k) * 4, 4, out, o);
        else slerpSamples(clip.rotations, (b * n + k) * 4, (b * n + k1) * 4, alpha, out, o);
      } else {
        const values = kind === TRACK_KIND.TRANSLATION ? clip.translations : clip.scales;
        const a = (b * n + k) * 3,
          c = (b * n + k1) * 3;
        for (let i = 0; i < 3; i++)
          out[o + i] = held ? values[a + i] : values[a + i] + (values[c + i] - values[a + i]) * alpha;
      }
    }
  }
}

const weights = new Float64Array(8);

/**
 * Slerp of the unit quaternions at `r[a]` and `r[c]` with the runtime's slerp weights
 * (exact to about 1e-8 where its series apply, Math.acos and Math.sin elsewhere), written
 * normalised in float64 at `out[o]`.
 */
function slerpSamples(r: Float32Array, a: number, c: number, alpha: number, out: Float64Array, o: number): void {
  weights[6] = alpha;
  slerpWeights(weights, r[a] * r[c] + r[a + 1] * r[c + 1] + r[a + 2] * r[c + 2] + r[a + 3] * r[c + 3]);
  let len = 0;
  for (let i = 0; i < 4; i++) {
    out[o + i] = r[a + i] * weights[6] + r[c + i] * weights[7];
    len += out[o + i] * out[o + i];
  }
  const inv = len > 0 ? 1 / Math.sqrt(len) : 0;
  for (let i = 0; i < 4; i++) out[o + i] *= inv;
}

/**
 * Writes the pose the decoder's interpolation gives between the clip's own (unquantised)
 * samples `k` and `k + 1`: its slerp weights for rotations, lerp otherwise, the held
 * sample for step tracks. Its distance to {@link referenceBetween} is the error no
 * bit rate can remove; a finer grid can.
 */
export function interpolateSamples(clip: RawClip, k: number, alpha: number, out: Float64Array): void {
  const n = clip.sampleCount;
  const boneCount = clip.skeleton.parents.length;
  const k1 = Math.min(n - 1, k + 1);
  for (let b = 0; b < boneCount; b++) {
    for (let kind = 0; kind < TRACKS_PER_BONE; kind++) {
      const t = b * TRACKS_PER_BONE + kind;
      const o = b * POSE_STRIDE + KIND_POSE_OFFSET[kind];
      const w = clip.stepMask?.[t] === 1 ? 0 : alpha;
      if (kind === TRACK_KIND.ROTATION) {
        slerpSamples(clip.rotations, (b * n + k) * 4, (b * n + k1) * 4, w, out, o);
      } else {
        const values = kind === TRACK_KIND.TRANSLATION ? clip.translations : clip.scales;
        const a = (b * n + k) * 3,
          c = (b * n + k1) * 3;
        for (let i = 0; i < 3; i++) out[o + i] = values[a + i] + (values[c + i] - values[a + i]) * w;
      }
    }
  }
}

/**
 * What {@link measureBetweenErrors} measures the decoded pose against: a function writing the
 * reference pose at fraction `alpha` of interval k, or the players whose evaluations of a clip's
 * keys count (the larger error).
 */
export type BetweenReference = ((k: number, alpha: number, out: Float64Array) => void) | readonly PlayerSlerp[];

/**
 * A reference as object transforms: `objectAt` writes them at fraction `alpha` of interval k;
 * with `needed`, only those of the bones marked there (each marked bone's ancestors marked too).
 */
interface ReferenceObjects {
  objectAt(k: number, alpha: number, outObject: Float64Array, needed?: Uint8Array): void;
}

/**
 * A reference given as local poses ({@link BetweenReference}'s function form) written into
 * `pose`, composed by {@link poseToObject}.
 */
class PoseReference implements ReferenceObjects {
  constructor(
    private readonly parents: Int32Array,
    private readonly pose: Float64Array,
    private readonly write: (k: number, alpha: number, out: Float64Array) => void,
  ) {}

  objectAt(k: number, alpha: number, outObject: Float64Array, needed?: Uint8Array): void {
    this.write(k, alpha, this.pose);
    poseToObject(this.pose, this.parents, outObject, 0, needed);
  }
}

/** The references of `reference` as {@link ReferenceObjects}, in order, and whether the samples are measured too. */
function referencesOf(
  clip: RawClip,
  reference: BetweenReference | undefined,
): { at: ReferenceObjects[]; samples: boolean } {
  const parents = clip.skeleton.parents;
  const pose = new Float64Array(parents.length * POSE_STRIDE);
  if (typeof reference === 'function') return { at: [new PoseReference(parents, pose, reference)], samples: false };
  if (reference && reference.length > 0 && clip.keyframes !== undefined) {
    // Players differ in rotations only, so after the first only rotations are written over the
    // pose they share. Their keys as stored are not the samples, so the samples are measured too.
    const at = reference.map(
      (player, p) =>
        new PoseReference(parents, pose, (k, alpha, out) => referenceBetween(clip, k, alpha, out, player, p > 0)),
    );
    return { at, samples: true };
  }
  if (clip.keyframes)
    return {
      at: [new PoseReference(parents, pose, (k, alpha, out) => referenceBetween(clip, k, alpha, out))],
      samples: false,
    };
  return { at: [new SampleReference(clip)], samples: false };
}

/**
 * {@link referenceBetween} of a clip without keys as object transforms ({@link poseToObject}),
 * the same numbers, with what each bone's slerp takes from its two samples alone (u and
 * {@link slerpAngle}) worked out once for all the checks of an interval, each slerp weight once
 * for the fractions that share it (at i / m it is that of 1 − i / m, on the other side), and the
 * local pose composed as it is made.
 */
export class SampleReference implements ReferenceObjects {
  private readonly u: Float64Array;
  private readonly angle: Float64Array;
  private sign: Float64Array;
  /**
   * Slot j ≤ {@link MAX_CHECKS}: each bone's weight of x = j / MAX_CHECKS for the interval held,
   * every bone's where `stamps[j]` is `stamp`, else bone b's where `boneStamps` there is (a
   * second look needs only some bones'); then two slots for other fractions' weights, worked
   * out at every call.
   */
  private weights: Float64Array;
  private readonly stamps: Uint32Array;
  private readonly boneStamps: Uint32Array;
  /** Counts the intervals held: a new one invalidates every weight without clearing them. */
  private stamp = 0;
  /** The interval whose u, angle and sign are held. */
  private k = -1;
  /** Per bone, its STEP tracks: {@link HELD_ROTATION}, {@link HELD_TRANSLATION}, {@link HELD_SCALE}. */
  private held: Uint8Array;
  /**
   * Where {@link place} put the reference in the measure kernel's memory: the kernel, that
   * memory's buffer, and the byte addresses of the clip's rotations, translations, scales and
   * parents there.
   */
  private kernel: MeasureExports | undefined;
  private kernelBuffer: ArrayBufferLike | undefined;
  private readonly kernelAt = new Int32Array(4);

  constructor(private readonly clip: RawClip) {
    const boneCount = clip.skeleton.parents.length;
    this.u = new Float64Array(boneCount);
    this.angle = new Float64Array(boneCount);
    this.sign = new Float64Array(boneCount);
    this.weights = new Float64Array((MAX_CHECKS + 3) * boneCount);
    this.stamps = new Uint32Array(MAX_CHECKS + 1);
    this.boneStamps = new Uint32Array((MAX_CHECKS + 1) * boneCount);
    this.held = new Uint8Array(boneCount);
    const step = clip.stepMask;
    if (step)
      for (let b = 0; b < boneCount; b++) {
        const t = b * TRACKS_PER_BONE;
        this.held[b] =
          (step[t + TRACK_KIND.ROTATION] === 1 ? HELD_ROTATION : 0) |
          (step[t + TRACK_KIND.TRANSLATION] === 1 ? HELD_TRANSLATION : 0) |
          (step[t + TRACK_KIND.SCALE] === 1 ? HELD_SCALE : 0);
      }
  }

  /**
   * Moves the reference into the measure kernel's memory, into `buffers` (as
   * {@link sampleReferenceSpecs} names them), the clip's parents being at byte `parents`
   * there: from then on, {@link objectAt} into that memory is the kernel's (the same numbers).
   */
  place(kernel: MeasureExports, buffers: SampleReferenceBuffers, parents: number): void {
    const { rotations, translations, scales, weights, sign, held } = buffers;
    placeClipSamples(buffers, this.clip);
    held.set(this.held);
    this.weights = weights;
    this.sign = sign;
    this.held = held;
    this.stamps.fill(0);
    this.boneStamps.fill(0);
    this.k = -1;
    this.kernel = kernel;
    this.kernelBuffer = rotations.buffer;
    this.kernelAt.set([rotations.byteOffset, translations.byteOffset, scales.byteOffset, parents]);
  }

  /**
   * Writes the object transforms of the reference pose a fraction `alpha` of the way from
   * sample `k` (below the last) to `k + 1` ({@link AFFINE_STRIDE} numbers per bone); with
   * `needed`, only those of the bones marked there (each marked bone's ancestors marked too).
   */
  objectAt(k: number, alpha: number, out: Float64Array, needed?: Uint8Array): void {
    const clip = this.clip;
    const n = clip.sampleCount,
      r = clip.rotations,
      t = clip.translations,
      sc = clip.scales,
      parents = clip.skeleton.parents;
    const boneCount = parents.length;
    if (k !== this.k) this.start(k);
    const al = Math.fround(alpha);
    const wa = this.weightsOf(Math.fround(1 - al), MAX_CHECKS + 1, needed) * boneCount,
      wb = this.weightsOf(al, MAX_CHECKS + 2, needed) * boneCount;
    const { sign, weights, held, kernel } = this;
    if (
      kernel !== undefined &&
      out.buffer === this.kernelBuffer &&
      (needed === undefined || needed.buffer === out.buffer)
    ) {
      const at = this.kernelAt;
      kernel.referenceObjects(
        at[0],
        at[1],
        at[2],
        n,
        k,
        alpha,
        weights.byteOffset + wa * 8,
        weights.byteOffset + wb * 8,
        sign.byteOffset,
        held.byteOffset,
        at[3],
        needed === undefined ? 0 : needed.byteOffset,
        out.byteOffset,
        boneCount,
      );
      return;
    }
    for (let b = 0; b < boneCount; b++) {
      if (needed !== undefined && needed[b] === 0) continue;
      const h = held[b];
      const a = (b * n + k) * 4,
        c = a + 4;
      let x = r[a],
        y = r[a + 1],
        z = r[a + 2],
        w = r[a + 3];
      if ((h & HELD_ROTATION) === 0) {
        const ka = weights[wa + b],
          kb = weights[wb + b] * sign[b];
        x = x * ka + r[c] * kb;
        y = y * ka + r[c + 1] * kb;
        z = z * ka + r[c + 2] * kb;
        w = w * ka + r[c + 3] * kb;
        const len = x * x + y * y + z * z + w * w;
        const inv = len > 0 ? 1 / Math.sqrt(len) : 0;
        x *= inv;
        y *= inv;
        z *= inv;
        w *= inv;
      }
      const a3 = (b * n + k) * 3;
      const heldT = (h & HELD_TRANSLATION) !== 0,
        heldS = (h & HELD_SCALE) !== 0;
      const o = b * AFFINE_STRIDE;
      localToAffine(
        x,
        y,
        z,
        w,
        heldT ? t[a3] : t[a3] + (t[a3 + 3] - t[a3]) * alpha,
        heldT ? t[a3 + 1] : t[a3 + 1] + (t[a3 + 4] - t[a3 + 1]) * alpha,
        heldT ? t[a3 + 2] : t[a3 + 2] + (t[a3 + 5] - t[a3 + 2]) * alpha,
        heldS ? sc[a3] : sc[a3] + (sc[a3 + 3] - sc[a3]) * alpha,
        heldS ? sc[a3 + 1] : sc[a3 + 1] + (sc[a3 + 4] - sc[a3 + 1]) * alpha,
        heldS ? sc[a3 + 2] : sc[a3 + 2] + (sc[a3 + 5] - sc[a3 + 2]) * alpha,
        out,
        o,
      );
      const parent = parents[b];
      if (parent >= 0) composeAffine(out, parent * AFFINE_STRIDE, out, o, out, o);
    }
  }

  /** Holds interval k: each bone's u, angle and sign as slerpWeights derives them from its samples' dot product. */
  private start(k: number): void {
    const { u, angle, sign } = this;
    const n = this.clip.sampleCount,
      r = this.clip.rotations;
    const f = Math.fround;
    this.k = k;
    this.stamp++;
    for (let b = 0; b < u.length; b++) {
      const a = (b * n + k) * 4,
        c = a + 4;
      const d = f(r[a] * r[c] + r[a + 1] * r[c + 1] + r[a + 2] * r[c + 2] + r[a + 3] * r[c + 3]);
      sign[b] = d < 0 ? -1 : 1;
      u[b] = f(1 - d * sign[b]);
      angle[b] = slerpAngle(u[b]);
    }
  }

  /**
   * The slot holding each bone's weight of `x` (a float32 fraction), worked out there unless
   * known (with `needed`, only the marked bones'); `spare` when x is off the grid.
   */
  private weightsOf(x: number, spare: number, needed: Uint8Array | undefined): number {
    const j = x * MAX_CHECKS;
    const onGrid = Number.isInteger(j);
    const stamp = this.stamp;
    if (onGrid && this.stamps[j] === stamp) return j;
    const slot = onGrid ? j : spare;
    const { u, angle, weights, boneStamps } = this;
    const at = slot * u.length;
    if (needed === undefined || !onGrid) {
      // Slot 0 (x = 0, an interval's end): slerpWeightAt gives +0 from either of its forms.
      if (slot === 0) weights.fill(0, 0, u.length);
      else for (let b = 0; b < u.length; b++) weights[at + b] = slerpWeightAt(x, u[b], angle[b]);
      if (onGrid) this.stamps[j] = stamp;
      return slot;
    }
    for (let b = 0; b < u.length; b++)
      if (needed[b] === 1 && boneStamps[at + b] !== stamp) {
        weights[at + b] = slerpWeightAt(x, u[b], angle[b]);
        boneStamps[at + b] = stamp;
      }
    return slot;
  }
}

/** The buffers {@link SampleReference.place} takes in the measure kernel's memory, for `clip`. */
export function sampleReferenceSpecs(clip: RawClip) {
  const boneCount = clip.skeleton.parents.length;
  return {
    ...clipSampleSpecs(boneCount * clip.sampleCount),
    weights: ['f64', (MAX_CHECKS + 3) * boneCount],
    sign: ['f64', boneCount],
    held: ['u8', boneCount],
  } as const;
}
type SampleReferenceBuffers = Buffers<ReturnType<typeof sampleReferenceSpecs>>;

/** {@link SampleReference}'s flags of a bone's STEP tracks. */
const HELD_ROTATION = 1,
  HELD_TRANSLATION = 2,
  HELD_SCALE = 4;

/** How {@link measureBetweenErrors} measures: every field optional. */
export interface BetweenOptions {
  /** What the figure bounds (default `vertices`). */
  readonly metric?: ErrorMetric;
  /** False leaves out the whole-shell figure (then 0 for the `vertices` metric); default true. */
  readonly shellToo?: boolean;
  /**
   * Receives the bound of each interval at its {@link checksFor} checks (it must start zeroed);
   * every interval then gets them.
   */
  readonly perInterval?: Float64Array;
  /**
   * What the decoded pose is measured against in place of {@link referenceBetween} of the clip:
   * a function (an additive clip's base ∘ delta), or players, against whose evaluation of a
   * clip's keys the larger error counts, at the samples too (for a clip without keys, players
   * are ignored).
   */
  readonly reference?: BetweenReference;
  /** False measures every bone at every check of a second look, for the same report; default true. */
  readonly prune?: boolean;
  /**
   * Each bone's error at every sample against what the reference is there (a clip's own
   * samples, not players' evaluations of its keys), by the metric, and a whole-shell figure
   * never below its own (metric/error-metric.ts `measureSampleErrors` writes both): the
   * intervals' ends take them instead of being measured.
   */
  readonly sampleErrors?: SampleErrors;
  /**
   * Above 0, asks only whether the error stays within it (compress() passes its error budget):
   * in the second look an interval gets more checks only while its bound could raise the
   * figure above both the clip's so far and `enough`, and the whole-shell figure of the
   * `vertices` metric asks for none. An interval left so counts with the bounds it has, so the
   * figures are still bounds on the error at any time, but may stand above those checked fully
   * (compress()'s bytes came out the same on every corpus and Khronos input: docs/design.md).
   */
  readonly enough?: number;
}

/**
 * Measures `decodedBetween(k, alpha, outPose)` against {@link referenceBetween} at evenly
 * spaced checks of every sample interval, at `shellDistances`, as `options` say. An interval's
 * figure is the bound on its error at any time: each bone's largest check times
 * 1 + {@link remainderFactor} of that bone's own chain's turn. Every interval is checked at ½
 * first; then, largest bound first, an interval gets more checks, doubling up to its
 * {@link checksFor}, only while its bound could still raise the clip's figure. The report is
 * therefore never above that of every interval checked at its {@link checksFor}, for fewer
 * checks (3.8 per interval instead of 5.4 on the bench corpus). A second look measures only the
 * bones whose bound could still reach the clip's figures, and their ancestors. Allocates a few
 * pose-sized buffers and, for the second look, three numbers per bone and interval (the first
 * look's turns and errors) besides two per bone and sample.
 */
export function measureBetweenErrors(
  clip: RawClip,
  shellDistances: Float32Array,
  decodedBetween: (k: number, alpha: number, outPose: Float64Array) => void,
  options: BetweenOptions = {},
): BetweenReport {
  const { metric = 'vertices', shellToo = true, perInterval, reference, prune = true } = options;
  const enough = options.enough ?? 0;
  const references = referencesOf(clip, reference);
  // Against the players every interval gets its most checks: the remainder term assumes a slerp
  // between checks, which their nlerp of close keys is not (docs/format.md, "The error at any time").
  const secondLook = !perInterval && !references.samples;
  const measure = new IntervalChecks(
    clip,
    shellDistances,
    decodedBetween,
    references,
    metric,
    shellToo,
    secondLook,
    prune,
    options.sampleErrors,
  );
  const report: BetweenReport = {
    metric,
    maxError: 0,
    shellMaxError: 0,
    worstBone: 0,
    worstInterval: 0,
    worstFraction: 0,
  };
  const keep = (k: number): void => {
    if (measure.bound > report.maxError) {
      report.maxError = measure.bound;
      report.worstBone = measure.boundBone;
      report.worstInterval = k;
      report.worstFraction = measure.boundFraction;
    }
    if (measure.shellBound > report.shellMaxError) report.shellMaxError = measure.shellBound;
  };
  const times = clip.sampleTimes;
  const intervals = Math.max(0, clip.sampleCount - 1);
  // Intervals left for a second look: their bound at the first checks, largest first below.
  const pending: number[] = [];
  const firstBound = new Float64Array(intervals),
    firstShell = new Float64Array(intervals);
  // With `enough`, what an interval left after its first look counts with: its figures then.
  const left = enough > 0 && secondLook ? new FirstLook(intervals) : undefined;
  // With `enough` and the samples' errors given, an interval whose two samples alone bound it
  // (as the checks of m = 1) within `enough` and the clip's largest errors at the samples gets
  // no check: it counts with those bounds, kept last, so that every decision is as it would be.
  const known = left ? options.sampleErrors : undefined;
  const endsFigure = known ? Math.min(enough, largest(known.errors)) : 0,
    endsShellFigure = known ? largest(known.shells) : 0;
  const settled: number[] = [];
  for (let k = 0; k < intervals; k++) {
    // A jump (two samples at one time) has no time between its samples.
    if (times && times[k + 1] === times[k]) continue;
    const checks = measure.start(k);
    if (known && measure.boundedByEnds(k, endsFigure, endsShellFigure)) {
      left!.set(k, measure);
      settled.push(k);
      continue;
    }
    const first = secondLook ? FIRST_CHECKS : checks;
    // The samples' errors bound only intervals that may be left before their most checks.
    for (let m = FIRST_CHECKS; m <= first; m *= 2)
      measure.check(k, m, report.maxError, report.shellMaxError, first !== checks);
    if (perInterval) perInterval[k] = measure.bound;
    if (first === checks) keep(k);
    else {
      pending.push(k);
      firstBound[k] = measure.endBound;
      firstShell[k] = measure.endShellBound;
      left?.set(k, measure);
    }
  }
  pending.sort((a, b) => firstBound[b] - firstBound[a] || a - b);
  for (const k of pending) {
    // Where the interval's bounds cannot raise the figures (above `enough`), it is done.
    const floor = Math.max(report.maxError, enough),
      shellFloor = left ? Number.POSITIVE_INFINITY : report.shellMaxError;
    if (firstBound[k] <= floor && firstShell[k] <= shellFloor) {
      if (left) left.keep(k, report);
      continue;
    }
    // The ½ check is the first look's: the interval's bounds at ½ are over the clip's figure, so
    // the ¼ and ¾ follow.
    const checks = measure.resume(k);
    for (let m = 2 * FIRST_CHECKS; m <= checks; m *= 2) {
      measure.check(k, m, report.maxError, report.shellMaxError, true);
      if (measure.endBound <= floor && measure.endShellBound <= shellFloor) break;
    }
    keep(k);
  }
  for (const k of settled) left!.keep(k, report);
  return report;
}

/** The largest of `values` (0 when empty). */
function largest(values: Float64Array): number {
  let max = 0;
  for (let i = 0; i < values.length; i++) if (values[i] > max) max = values[i];
  return max;
}

/**
 * Each interval's figures as a look left them (its first, or its two samples alone), for
 * {@link measureBetweenErrors} with `enough`.
 */
class FirstLook {
  private readonly bound: Float64Array;
  private readonly shellBound: Float64Array;
  private readonly bone: Int32Array;
  private readonly fraction: Float64Array;

  constructor(intervals: number) {
    this.bound = new Float64Array(intervals);
    this.shellBound = new Float64Array(intervals);
    this.bone = new Int32Array(intervals);
    this.fraction = new Float64Array(intervals);
  }

  /** Keeps interval k's figures as `measure` holds them. */
  set(k: number, measure: IntervalChecks): void {
    this.bound[k] = measure.bound;
    this.shellBound[k] = measure.shellBound;
    this.bone[k] = measure.boundBone;
    this.fraction[k] = measure.boundFraction;
  }

  /** Raises `report`'s figures to interval k's where they are larger. */
  keep(k: number, report: BetweenReport): void {
    if (this.bound[k] > report.maxError) {
      report.maxError = this.bound[k];
      report.worstBone = this.bone[k];
      report.worstInterval = k;
      report.worstFraction = this.fraction[k];
    }
    if (this.shellBound[k] > report.shellMaxError) report.shellMaxError = this.shellBound[k];
  }
}

/**
 * The largest error (`metric` at `shellDistances`) of `clip`'s own samples against what each
 * of `players` makes of its keys at the sample times: the floor no bit rate removes from the
 * error {@link measureBetweenErrors} reports at the samples (keys stored a little off unit
 * length, which the samples are not). 0 for a clip without keys.
 */
export function samplesFloor(
  clip: RawClip,
  shellDistances: Float32Array,
  metric: ErrorMetric,
  players: readonly PlayerSlerp[],
): number {
  if (!clip.keyframes) return 0;
  const boneError = boneErrorFunction(metric);
  const parents = clip.skeleton.parents;
  const boneCount = parents.length;
  const pose = new Float64Array(boneCount * POSE_STRIDE);
  const sampleObject = new Float64Array(boneCount * AFFINE_STRIDE),
    playerObject = new Float64Array(boneCount * AFFINE_STRIDE);
  let floor = 0;
  for (let s = 0; s < clip.sampleCount; s++) {
    sampleToObject(clip, s, sampleObject);
    for (let p = 0; p < players.length; p++) {
      // Players differ in rotations only: after the first, the rest of the pose stays.
      referenceBetween(clip, s, 0, pose, players[p], p > 0);
      poseToObject(pose, parents, playerObject);
      for (let b = 0; b < boneCount; b++) {
        const o = b * AFFINE_STRIDE;
        floor = Math.max(floor, boneError(playerObject, o, sampleObject, o, shellDistances[b]));
      }
    }
  }
  return floor;
}

/** Float32 unit roundoff, 2⁻²⁴: the largest relative error of one rounding to float32. */
const FLOAT32_ROUNDOFF = 2 ** -24;
/**
 * Float32 roundoffs of the lever sum ({@link roundingTerm}) by which the decoder's rounding may
 * move the error from one playback time to another: measured up to 2.97 on the Khronos Fox
 * (docs/format.md, "Rounding between checks").
 */
export const ROUNDING_ROUNDOFFS = 4;

/**
 * What float32 rounding can add to the error between the compressor's checks, in clip units:
 * {@link ROUNDING_ROUNDOFFS} float32 roundoffs of the largest lever sum of `clip`'s virtual
 * vertices over its samples. The decoder's float32 arithmetic leaves each value it
 * interpolates a few roundoffs off, differently at every playback time, which the checks see
 * at their own times only. A vertex's lever sum adds, over its bone's chain from the root,
 * each bone's distance to the vertex where the bone's rotation or scale varies (its rounding
 * turns or stretches the vertex about that bone) and its offset from its parent where its
 * translation varies (its rounding moves it; root motion counts). Values that hold still over
 * the clip decode alike at every time: their rounding is in every check. Under 1 % of the
 * threshold for a character in centimetres; most of it for a model 150 units across at
 * 0.01 cm.
 */
export function roundingTerm(clip: RawClip, shellDistances: Float32Array, clipObject?: Float64Array): number {
  return ROUNDING_ROUNDOFFS * FLOAT32_ROUNDOFF * new LeverSums(clip, shellDistances, clipObject).largest();
}

/**
 * {@link roundingTerm}'s lever sums, one sample at a time: a function of its own called per
 * sample, so the optimiser compiles it once instead of replacing a long loop while it runs.
 */
class LeverSums {
  private readonly parents: Int32Array;
  /** Per bone, 1 where its rotation or scale varies over the clip (`turns`), where its translation does (`moves`). */
  private readonly turns: Uint8Array;
  private readonly moves: Uint8Array;
  private readonly object: Float64Array;
  // Per bone at one sample: its turning ancestors (itself included), the sum of their
  // distances to its origin, and its moving ancestors' offsets. The sum is exact over the
  // nearest LEVER_WALK ancestors; beyond them the triangle inequality bounds it from the
  // ancestor reached, so a 1,000-joint chain costs its bones × LEVER_WALK (the whole walk
  // took seconds) while a character's chains are summed exactly.
  private readonly turning: Float64Array;
  private readonly turnSums: Float64Array;
  private readonly moveSums: Float64Array;

  constructor(
    private readonly clip: RawClip,
    private readonly shellDistances: Float32Array,
    private readonly clipObject: Float64Array | undefined,
  ) {
    const parents = clip.skeleton.parents;
    const boneCount = parents.length;
    const n = clip.sampleCount;
    this.parents = parents;
    this.turns = new Uint8Array(boneCount);
    this.moves = new Uint8Array(boneCount);
    for (let b = 0; b < boneCount; b++) {
      this.turns[b] = Number(varies(clip.rotations, b * n * 4, n, 4) || varies(clip.scales, b * n * 3, n, 3));
      this.moves[b] = Number(varies(clip.translations, b * n * 3, n, 3));
    }
    this.object = new Float64Array(boneCount * AFFINE_STRIDE);
    this.turning = new Float64Array(boneCount);
    this.turnSums = new Float64Array(boneCount);
    this.moveSums = new Float64Array(boneCount);
  }

  /**
   * The largest lever sum over the clip's samples: in the measure kernel (measure-kernel.wat
   * `leverSums`, the same float64s), which works out the samples' transforms too
   * (`sampleObjects`), {@link LEVER_CHUNK} samples at a time, where they are not known.
   */
  largest(): number {
    const known = this.clipObject,
      clip = this.clip,
      boneCount = this.parents.length,
      n = clip.sampleCount;
    const chunk = known ? n : Math.min(n, LEVER_CHUNK),
      values = known ? 0 : boneCount * n;
    const kernel = measureKernel('between', {
      object: ['f64', chunk * boneCount * AFFINE_STRIDE, 'copied'],
      ...clipSampleSpecs(values),
      parents: ['i32', boneCount],
      turns: ['u8', boneCount],
      moves: ['u8', boneCount],
      shells: ['f64', boneCount],
      turning: ['f64', boneCount],
      turnSums: ['f64', boneCount],
      moveSums: ['f64', boneCount],
    });
    let lever = 0;
    if (kernel) {
      const { object, parents, turns, moves, shells } = kernel.buffers;
      const { turning, turnSums, moveSums } = kernel.buffers;
      if (known) object.set(known);
      else placeClipSamples(kernel.buffers, clip);
      parents.set(this.parents);
      turns.set(this.turns);
      moves.set(this.moves);
      shells.set(this.shellDistances);
      for (let first = 0; first < n; first += chunk) {
        const count = Math.min(chunk, n - first);
        if (!known) clipSampleObjects(kernel.exports, kernel.buffers, clip, first, count, parents.byteOffset, object);
        const largest = kernel.exports.leverSums(
          object.byteOffset,
          count,
          boneCount,
          parents.byteOffset,
          turns.byteOffset,
          moves.byteOffset,
          shells.byteOffset,
          turning.byteOffset,
          turnSums.byteOffset,
          moveSums.byteOffset,
        );
        lever = Math.max(lever, largest);
      }
      return lever;
    }
    for (let s = 0; s < n; s++) lever = Math.max(lever, this.largestAt(s));
    return lever;
  }

  /** The largest lever sum of sample s's virtual vertices. */
  largestAt(s: number): number {
    const { parents, turns, moves, turning, turnSums, moveSums, shellDistances } = this;
    // The sample's transforms from bone `base` on, in the clip's when given.
    let object = this.object,
      base = 0;
    if (this.clipObject) {
      object = this.clipObject;
      base = s * parents.length * AFFINE_STRIDE;
    } else sampleToObject(this.clip, s, object);
    let lever = 0;
    for (let b = 0; b < parents.length; b++) {
      const o = base + b * AFFINE_STRIDE;
      const parent = parents[b];
      turning[b] = (parent >= 0 ? turning[parent] : 0) + turns[b];
      if (moves[b])
        moveSums[b] =
          (parent >= 0 ? moveSums[parent] : 0) +
          (parent >= 0
            ? distance(object, o + 9, object, base + parent * AFFINE_STRIDE + 9)
            : distance(object, o + 9, ORIGIN, 0));
      else moveSums[b] = parent >= 0 ? moveSums[parent] : 0;
      let turnSum = 0;
      let a = parent;
      for (let step = 0; a >= 0 && step < LEVER_WALK; step++, a = parents[a])
        if (turns[a]) turnSum += distance(object, o + 9, object, base + a * AFFINE_STRIDE + 9);
      if (a >= 0) turnSum += turnSums[a] + turning[a] * distance(object, o + 9, object, base + a * AFFINE_STRIDE + 9);
      turnSums[b] = turnSum;
      // The vertices lie the shell distance from the bone along its axes, as scaled.
      let scale = 0;
      for (let c = 0; c < 9; c += 3)
        scale = Math.max(scale, hypot3(object[o + c], object[o + c + 1], object[o + c + 2]));
      const sum = turnSum + moveSums[b] + turning[b] * shellDistances[b] * scale;
      if (sum > lever) lever = sum;
    }
    return lever;
  }
}

const ORIGIN = new Float64Array(3);
/** Ancestors whose distances {@link roundingTerm} sums exactly; deeper ones are bounded. */
const LEVER_WALK = 64;
/** Samples whose transforms the measure kernel works out at a time for {@link roundingTerm}, where the clip's are not known. */
const LEVER_CHUNK = 64;

/** True when the `count` values of `width` numbers from `at` are not all the first. */
function varies(values: Float32Array, at: number, count: number, width: number): boolean {
  for (let i = width; i < count * width; i++) if (values[at + i] !== values[at + (i % width)]) return true;
  return false;
}

function distance(a: Float64Array, ao: number, b: Float64Array, bo: number): number {
  const x = a[ao] - b[bo],
    y = a[ao + 1] - b[bo + 1],
    z = a[ao + 2] - b[bo + 2];
  return Math.sqrt(x * x + y * y + z * z);
}

/**
 * The checks of one interval at a time for {@link measureBetweenErrors}: each bone's largest
 * error so far and where, and the interval's bound from them.
 */
class IntervalChecks {
  private readonly boneError: BoneErrorFunction;
  private readonly isShell: boolean;
  private readonly parents: Int32Array;
  private readonly decoded: Float64Array;
  private readonly refObject: Float64Array;
  private readonly decObject: Float64Array;
  private readonly turn: Float64Array;
  private readonly worst: Float64Array;
  private readonly worstShell: Float64Array;
  private readonly worstFraction: Float64Array;
  private readonly grow: Float64Array;
  /** {@link scalingBones} of the clip. */
  private readonly scaling: Uint8Array;
  /** Each bone's largest error at the interval's two samples, and whole-shell error. */
  private readonly endWorst: Float64Array;
  private readonly endShell: Float64Array;
  /** Each sample's error per bone (and whole-shell figure), given or worked out once: NaN until then. */
  private readonly sampleWorst: Float64Array;
  private readonly sampleShell: Float64Array;
  /**
   * With a second look: each interval's {@link turn}, {@link worst} and {@link worstShell} after
   * its ½ check, which {@link resume} starts from instead of working them out again.
   */
  private readonly firstTurn: Float64Array | undefined;
  private readonly firstWorst: Float64Array | undefined;
  private readonly firstShell: Float64Array | undefined;
  /**
   * In a second look: the bones still measured (1), those whose bound can no longer reach the
   * clip's figures being left out ({@link prune}); `needed`, those and their ancestors, whose
   * object transforms the measure takes. `pruned` once some bone is left out.
   */
  private readonly live: Uint8Array;
  private readonly needed: Uint8Array;
  private pruned = false;
  /**
   * measure-kernel.ts's kernel, holding the buffers above but `turn` and the ends, where it
   * measures; the parents and shell distances copied there, at these byte addresses.
   */
  private readonly kernel: MeasureKernel | undefined;
  private readonly kernelParents: number;
  private readonly kernelShells: number;
  /** The interval's bound after the last {@link check}, the bone and fraction it comes from. */
  bound = 0;
  boundBone = 0;
  boundFraction = 0;
  /** The same for the whole shell (0 without `shellToo` unless the metric is `shell`). */
  shellBound = 0;
  /**
   * The bounds with the interval's samples as checks too (docs/format.md, "The error at any
   * time"): what an interval may be left at, since the error at ¼ may be nearer a sample's
   * than the ½'s. The figure kept for a checked interval is {@link bound}: its samples are
   * reported as samples.
   */
  endBound = 0;
  endShellBound = 0;

  constructor(
    private readonly clip: RawClip,
    private readonly shellDistances: Float32Array,
    private readonly decodedBetween: (k: number, alpha: number, outPose: Float64Array) => void,
    private readonly references: { at: ReferenceObjects[]; samples: boolean },
    metric: ErrorMetric,
    private readonly shellToo: boolean,
    secondLook: boolean,
    private readonly prunes: boolean,
    sampleErrors: SampleErrors | undefined,
  ) {
    this.boneError = boneErrorFunction(metric);
    this.isShell = metric === 'shell';
    this.parents = clip.skeleton.parents;
    const boneCount = this.parents.length;
    // What the measure reads and writes, in the kernel's memory where it measures.
    const specs = {
      decoded: ['f64', boneCount * POSE_STRIDE],
      refObject: ['f64', boneCount * AFFINE_STRIDE],
      decObject: ['f64', boneCount * AFFINE_STRIDE],
      worst: ['f64', boneCount],
      worstShell: ['f64', boneCount],
      worstFraction: ['f64', boneCount],
      grow: ['f64', boneCount],
      sampleWorst: ['f64', boneCount * clip.sampleCount],
      sampleShell: ['f64', boneCount * clip.sampleCount],
      live: ['u8', boneCount],
      needed: ['u8', boneCount],
      parents: ['i32', boneCount],
      shells: ['f64', boneCount],
    } as const;
    // A clip's own samples as the reference: the kernel works them out too.
    const samples = references.at[0] instanceof SampleReference ? references.at[0] : undefined;
    const withSamples = samples && measureKernel('between', { ...specs, ...sampleReferenceSpecs(clip) });
    const kernel = samples ? withSamples : measureKernel('between', specs);
    this.kernel = kernel;
    const buffers = kernel?.buffers ?? plainBuffers(specs);
    ({
      decoded: this.decoded,
      refObject: this.refObject,
      decObject: this.decObject,
      worst: this.worst,
      worstShell: this.worstShell,
      worstFraction: this.worstFraction,
      grow: this.grow,
      sampleWorst: this.sampleWorst,
      sampleShell: this.sampleShell,
      live: this.live,
      needed: this.needed,
    } = buffers);
    // The kernel's copies of the parents and the shell distances.
    buffers.parents.set(this.parents);
    buffers.shells.set(shellDistances);
    this.kernelParents = buffers.parents.byteOffset;
    this.kernelShells = buffers.shells.byteOffset;
    if (withSamples) samples?.place(withSamples.exports, withSamples.buffers, this.kernelParents);
    if (sampleErrors) {
      this.sampleWorst.set(sampleErrors.errors);
      this.sampleShell.set(sampleErrors.shells);
    } else this.sampleWorst.fill(Number.NaN);
    this.turn = new Float64Array(boneCount + 1);
    this.scaling = scalingBones(clip);
    this.endWorst = new Float64Array(boneCount);
    this.endShell = new Float64Array(boneCount);
    const intervals = Math.max(0, clip.sampleCount - 1);
    if (secondLook) {
      this.firstTurn = new Float64Array((boneCount + 1) * intervals);
      this.firstWorst = new Float64Array(boneCount * intervals);
    }
    if (secondLook && shellToo && !this.isShell) this.firstShell = new Float64Array(boneCount * intervals);
  }

  /** Starts interval k afresh; returns its {@link checksFor}. */
  start(k: number): number {
    this.pruned = false;
    this.worst.fill(0);
    this.worstShell.fill(0);
    return checksFor(this.clip, k, this.turn, this.scaling);
  }

  /**
   * Starts interval k again where its ½ check (with `ends`) left it, whatever the clip's figure
   * then: a bone's whole-shell error that could not raise that figure may have been worked out
   * more closely than it would be now, which leaves every later decision and the figure as they
   * would be. Returns its {@link checksFor}.
   */
  resume(k: number): number {
    const boneCount = this.parents.length;
    const turns = boneCount + 1;
    this.turn.set(this.firstTurn!.subarray(k * turns, (k + 1) * turns));
    this.worst.set(this.firstWorst!.subarray(k * boneCount, (k + 1) * boneCount));
    if (this.firstShell) this.worstShell.set(this.firstShell.subarray(k * boneCount, (k + 1) * boneCount));
    this.worstFraction.fill(1 / FIRST_CHECKS);
    this.pruned = false;
    this.live.fill(1);
    this.loadEnds(k, true);
    return checksOf(this.turn[boneCount]);
  }

  /**
   * Interval k's bounds from its two samples alone, as the checks of m = 1 (docs/format.md, "The
   * error at any time"), after {@link start}: true, with them in {@link bound} and
   * {@link shellBound}, when they are within `figure` and `shellFigure`.
   */
  boundedByEnds(k: number, figure: number, shellFigure: number): boolean {
    const { endWorst, endShell, isShell, turn } = this;
    this.loadEnds(k, true);
    let bound = 0,
      bone = 0,
      shellBound = 0;
    for (let b = 0; b < endWorst.length; b++) {
      const grow = 1 + remainderFactor(turn[b], 1);
      if (endWorst[b] * grow > bound) {
        bound = endWorst[b] * grow;
        bone = b;
      }
      shellBound = Math.max(shellBound, (isShell ? endWorst[b] : endShell[b]) * grow);
    }
    if (bound > figure || shellBound > shellFigure) return false;
    this.bound = bound;
    this.boundBone = bone;
    this.boundFraction = 0.5;
    this.shellBound = shellBound;
    return true;
  }

  /**
   * Checks interval k at the fractions i / `checks` not checked at `checks` / 2 (½ alone at
   * {@link FIRST_CHECKS}), then updates the bounds. The whole-shell bound of a bone is only
   * worked out where it could raise the interval's or `shellFloor` (the clip's so far).
   * With `ends`, the interval's two samples count as checks in {@link endBound}. In a second
   * look, bones whose bound cannot reach `floor` and `shellFloor` (the clip's figures so far)
   * are no longer measured ({@link prune}).
   */
  check(k: number, checks: number, floor: number, shellFloor: number, ends: boolean): void {
    const { isShell, worst, worstShell, grow } = this;
    const boneCount = this.parents.length;
    if (this.prunes && this.firstWorst && checks > FIRST_CHECKS) this.prune(checks, floor, shellFloor);
    for (let b = 0; b < boneCount; b++) grow[b] = 1 + remainderFactor(this.turn[b], checks);
    if (checks === FIRST_CHECKS && this.references.samples) {
      this.checkAt(k, 0, shellFloor);
      if (k + 2 === this.clip.sampleCount) this.checkAt(k, 1, shellFloor);
    }
    if (checks === FIRST_CHECKS) this.loadEnds(k, ends);
    for (let i = 1; i < checks; i += 2) this.checkAt(k, i / checks, shellFloor);
    if (checks === FIRST_CHECKS && this.firstWorst) {
      this.firstTurn!.set(this.turn, k * (boneCount + 1));
      this.firstWorst.set(worst, k * boneCount);
      this.firstShell?.set(worstShell, k * boneCount);
    }
    const { endWorst, endShell } = this;
    let bound = 0,
      shellBound = 0,
      endBound = 0,
      endShellBound = 0;
    for (let b = 0; b < boneCount; b++) {
      if (worst[b] * grow[b] > bound) {
        bound = worst[b] * grow[b];
        this.boundBone = b;
        this.boundFraction = this.worstFraction[b];
      }
      const shell = (isShell ? worst[b] : worstShell[b]) * grow[b];
      if (shell > shellBound) shellBound = shell;
      endBound = Math.max(endBound, endWorst[b] * grow[b]);
      endShellBound = Math.max(endShellBound, (isShell ? endWorst[b] : endShell[b]) * grow[b]);
    }
    this.bound = bound;
    this.shellBound = shellBound;
    this.endBound = Math.max(bound, endBound);
    this.endShellBound = Math.max(shellBound, endShellBound);
  }

  /**
   * Leaves out of the checks at `checks` and finer the bones whose bound cannot reach `floor`
   * nor `shellFloor`. By the bound at `checks` / 2, no time of the interval shows a bone's error
   * above its largest check or sample there times that level's factor (docs/format.md, "The
   * error at any time"); times the factor at `checks` (and every finer one, smaller), that is
   * the most the bone's bound can come to at any finer level, measured or not. When it is
   * within both floors, which only grow, the bone can raise neither the interval's figures over
   * the clip's nor decide whether the interval needs more checks: measured or left out, the
   * report comes out the same. Its ancestors are still composed for the bones that stay.
   */
  private prune(checks: number, floor: number, shellFloor: number): void {
    const { live, needed, parents, turn, worst, endWorst, isShell } = this;
    const shellWorst = isShell ? worst : this.worstShell,
      shellEnd = isShell ? endWorst : this.endShell;
    const boneCount = parents.length;
    let left = 0;
    for (let b = 0; b < boneCount; b++) {
      if (live[b] === 1) {
        const reach = (1 + remainderFactor(turn[b], checks / 2)) * (1 + remainderFactor(turn[b], checks));
        if (
          Math.max(worst[b], endWorst[b]) * reach <= floor &&
          Math.max(shellWorst[b], shellEnd[b]) * reach <= shellFloor
        )
          live[b] = 0;
      }
      left += live[b];
    }
    this.pruned = left < boneCount;
    needed.set(live);
    for (let b = boneCount - 1; b >= 0; b--) if (needed[b] === 1 && parents[b] >= 0) needed[parents[b]] = 1;
  }

  /** The interval's ends: with `ends`, its two samples' errors; otherwise none. */
  private loadEnds(k: number, ends: boolean): void {
    this.endWorst.fill(0);
    this.endShell.fill(0);
    if (ends) {
      this.addSample(k, k, 0);
      this.addSample(k + 1, k, 1);
    }
  }

  /** Folds sample s (fraction `alpha` of interval k) into the interval's ends, measured once. */
  private addSample(s: number, k: number, alpha: number): void {
    const { sampleWorst, sampleShell, endWorst, endShell } = this;
    const boneCount = this.parents.length;
    const at = s * boneCount;
    if (Number.isNaN(sampleWorst[at])) {
      sampleWorst.fill(0, at, at + boneCount);
      // No floor: the whole shell by its cheap bound (never below it), as these only decide what to skip.
      this.decode(k, alpha);
      this.measureAt(k, alpha, Number.POSITIVE_INFINITY, sampleWorst, sampleShell, at);
    }
    for (let b = 0; b < boneCount; b++) {
      endWorst[b] = Math.max(endWorst[b], sampleWorst[at + b]);
      endShell[b] = Math.max(endShell[b], sampleShell[at + b]);
    }
  }

  /** Measures fraction `alpha` of interval k into each bone's largest of the interval. */
  private checkAt(k: number, alpha: number, shellFloor: number): void {
    this.decode(k, alpha);
    this.measureAt(k, alpha, shellFloor, this.worst, this.worstShell, 0);
  }

  /** The decoded object transforms at fraction `alpha` of interval k, of the bones the checks take. */
  private decode(k: number, alpha: number): void {
    this.decodedBetween(k, alpha, this.decoded);
    const kernel = this.kernel;
    if (kernel !== undefined)
      kernel.exports.poseToObject(
        this.decoded.byteOffset,
        this.decObject.byteOffset,
        this.kernelParents,
        this.pruned ? this.needed.byteOffset : 0,
        this.parents.length,
      );
    else poseToObject(this.decoded, this.parents, this.decObject, 0, this.pruned ? this.needed : undefined);
  }

  /**
   * Measures the decoded object transforms {@link decode} left (fraction `alpha` of interval k)
   * against every reference, into each bone's largest (the interval's, or from `at` of a sample's).
   */
  private measureAt(
    k: number,
    alpha: number,
    shellFloor: number,
    worst: Float64Array,
    worstShell: Float64Array,
    at: number,
  ): void {
    const { boneError, isShell, parents, refObject, decObject, grow, live } = this;
    const shells = this.shellDistances,
      shellToo = this.shellToo;
    const boneCount = parents.length;
    const interval = worst === this.worst;
    const needed = this.pruned ? this.needed : undefined;
    const references = this.references.at;
    const kernel = this.kernel;
    if (kernel !== undefined) {
      const mode = isShell ? 2 : shellToo ? 0 : 1;
      for (let r = 0; r < references.length; r++) {
        references[r].objectAt(k, alpha, refObject, needed);
        kernel.exports.measureBones(
          refObject.byteOffset,
          decObject.byteOffset,
          boneCount,
          needed ? live.byteOffset : 0,
          this.kernelShells,
          worst.byteOffset + at * 8,
          worstShell.byteOffset + at * 8,
          interval ? this.worstFraction.byteOffset : 0,
          grow.byteOffset,
          shellFloor,
          alpha,
          mode,
        );
      }
      return;
    }
    for (let r = 0; r < references.length; r++) {
      references[r].objectAt(k, alpha, refObject, needed);
      for (let b = 0; b < boneCount; b++) {
        if (needed && live[b] === 0) continue;
        const o = b * AFFINE_STRIDE;
        let e: number;
        if (isShell || !shellToo) e = boneError(refObject, o, decObject, o, shells[b]);
        else {
          // Below shellFloor / grow the bone cannot raise the clip's figure at this or a finer level.
          const io = boneErrors;
          io[BONE_ERRORS.DISTANCE] = shells[b];
          io[BONE_ERRORS.FLOOR] = Math.max(worstShell[at + b], shellFloor / grow[b]);
          measureBoneErrors(refObject, o, decObject, o, io);
          e = io[BONE_ERRORS.VERTEX];
          if (io[BONE_ERRORS.SHELL] > worstShell[at + b]) worstShell[at + b] = io[BONE_ERRORS.SHELL];
        }
        if (e > worst[at + b]) {
          worst[at + b] = e;
          if (interval) this.worstFraction[b] = alpha;
        }
      }
    }
  }
}

/**
 * Checks for interval k (a power of two from {@link MIN_CHECKS} to {@link MAX_CHECKS}) whose
 * {@link remainderFactor} is within {@link REMAINDER_SHARE}. Writes each bone's turn over the
 * interval into `turn` (radians: its rotation angle plus its scale change relative to the
 * larger scale, STEP tracks aside, summed from the root) and the largest at `turn[boneCount]`.
 * `scaling`: the clip's {@link scalingBones}, when known.
 */
export function checksFor(clip: RawClip, k: number, turn: Float64Array, scaling = scalingBones(clip)): number {
  const n = clip.sampleCount,
    parents = clip.skeleton.parents,
    r = clip.rotations,
    sc = clip.scales,
    step = clip.stepMask;
  let worst = 0;
  for (let b = 0; b < parents.length; b++) {
    let own = 0;
    // A STEP track holds its value over the interval: it does not move.
    if (step?.[b * TRACKS_PER_BONE + TRACK_KIND.ROTATION] !== 1) {
      const a = (b * n + k) * 4,
        c = a + 4;
      own =
        2 *
        Math.acos(Math.min(1, Math.abs(r[a] * r[c] + r[a + 1] * r[c + 1] + r[a + 2] * r[c + 2] + r[a + 3] * r[c + 3])));
    }
    if (scaling[b] === 1) {
      for (let i = 0; i < 3; i++) {
        // Relative to the larger scale, so a scale growing from 0 (a hidden part appearing) counts as 1.
        const s0 = Math.abs(sc[(b * n + k) * 3 + i]),
          s1 = Math.abs(sc[(b * n + k + 1) * 3 + i]);
        const high = Math.max(s0, s1);
        if (high > 0) own += Math.abs(s1 - s0) / high;
      }
    }
    turn[b] = own + (parents[b] >= 0 ? turn[parents[b]] : 0);
    if (turn[b] > worst) worst = turn[b];
  }
  turn[parents.length] = worst;
  return checksOf(worst);
}

/**
 * Per bone, 1 where its scale may count in {@link checksFor}: not a STEP track, and not the same
 * at every sample (such a scale adds exactly 0 to every interval's turn).
 */
export function scalingBones(clip: RawClip): Uint8Array {
  const n = clip.sampleCount,
    step = clip.stepMask;
  const scaling = new Uint8Array(clip.skeleton.parents.length);
  for (let b = 0; b < scaling.length; b++)
    scaling[b] = Number(step?.[b * TRACKS_PER_BONE + TRACK_KIND.SCALE] !== 1 && varies(clip.scales, b * n * 3, n, 3));
  return scaling;
}

/** The {@link checksFor} of an interval whose chains turn at most `turn`. */
function checksOf(turn: number): number {
  let checks = MIN_CHECKS;
  while (checks < MAX_CHECKS && remainderFactor(turn, checks) > REMAINDER_SHARE) checks *= 2;
  return checks;
}

/**
 * How much the error may exceed the largest of `checks` − 1 evenly spaced checks anywhere
 * in an interval over which chains of bones turn at most `turn` radians, as a share of that
 * error: h²/8 times the bound (8Θ + 6Θ²) on the error's second derivative relative to the
 * error (docs/format.md, "The error at any time").
 */
export function remainderFactor(turn: number, checks: number): number {
  return (8 * turn + 6 * turn * turn) / (8 * checks * checks);
}

/** What {@link chooseSampleGrid} returns. */
export interface SampleGrid {
  /** The clip to compress: `clip` itself, or it sampled from its keys at more times. */
  clip: RawClip;
  /** Sample intervals of `clip` per interval of the source clip (1: the source's own samples). */
  factor: number;
  /** The error between samples that the samples alone leave (no quantisation), clip units. */
  gridError: number;
}

/** Times an interval may be halved so that lerp and slerp follow a curve between keys (up to 256 parts). */
const MAX_REFINEMENTS = 8;

/**
 * For a clip with its source's keys: samples whose own interpolation stays within `budget`
 * of the source between samples (measured with `metric`), so that the decoded pose can be
 * within the threshold at any time. A clip sampled at its keys' own times (or on a grid that
 * holds them) with LINEAR and STEP keys already is; CUBICSPLINE curves and fast rotations
 * between grid samples are not. Each interval over the budget is halved, up to
 * {@link MAX_REFINEMENTS} times, and only those: a uniform clip whose every interval needs it
 * stays uniform at twice the rate, otherwise the clip gets sample times of its own. A clip
 * without keys is its own reference and keeps its samples. When even the finest samples
 * miss the budget, they are returned with their error; the caller reports it.
 */
export function chooseSampleGrid(
  clip: RawClip,
  budget: number,
  shellDistances: Float32Array,
  metric: ErrorMetric = 'vertices',
): SampleGrid {
  if (!clip.keyframes || clip.sampleCount < 2) return { clip, factor: 1, gridError: 0 };
  // A uniform clip is evaluated at its grid times themselves, as verify's comparison does.
  let candidate = clip.sampleTimes ? clip : resampleFromKeys(clip, 1);
  // The factor of the last uniform grid over the budget.
  let failedFactor = 1;
  for (let round = 0; ; round++) {
    const perInterval = new Float64Array(candidate.sampleCount - 1);
    const c = candidate;
    const gridError = gridErrorOf(c, shellDistances, metric, perInterval);
    if (gridError <= budget || round === MAX_REFINEMENTS) {
      const refined = { clip: c, factor: (c.sampleCount - 1) / (clip.sampleCount - 1), gridError };
      if (clip.sampleTimes || !c.sampleTimes || gridError > budget) return refined;
      return uniformInstead(clip, refined, failedFactor, budget, shellDistances, metric);
    }
    const times = refinedTimes(c, perInterval, budget);
    if (!c.sampleTimes) failedFactor = (c.sampleCount - 1) / (clip.sampleCount - 1);
    candidate =
      times === undefined
        ? resampleFromKeys(clip, (2 * (c.sampleCount - 1)) / (clip.sampleCount - 1))
        : sampleFromKeysAt(clip, times);
  }
}

/** The largest error of `clip`'s own interpolation between its samples against its keys; per interval into `perInterval` when given. */
function gridErrorOf(
  clip: RawClip,
  shellDistances: Float32Array,
  metric: ErrorMetric,
  perInterval?: Float64Array,
): number {
  return measureBetweenErrors(clip, shellDistances, (k, alpha, out) => interpolateSamples(clip, k, alpha, out), {
    metric,
    shellToo: false,
    perInterval,
  }).maxError;
}

/**
 * For a uniform source whose refinement ended with sample times of its own (`refined`): the
 * uniform grid of the smallest integer factor above `failedFactor` that holds `budget`
 * (found by bisection), when it costs less. A stored time takes 32 bits, about what one
 * animated track's sample takes (three components at the rates the search settles on), so
 * n uniform samples of A keyed tracks cost n·A against the refined clip's m·(A + 1). On a
 * curve that needs samples all along (a CUBICSPLINE translation), halving leaves intervals
 * at up to twice the samples they need and pays a time for each; the smallest uniform grid
 * pays neither.
 */
function uniformInstead(
  clip: RawClip,
  refined: SampleGrid,
  failedFactor: number,
  budget: number,
  shellDistances: Float32Array,
  metric: ErrorMetric,
): SampleGrid {
  const intervals = clip.sampleCount - 1;
  const keyed = clip.keyframes!.filter((k) => k !== undefined).length;
  const cheaper = (factor: number) => (intervals * factor + 1) * keyed < refined.clip.sampleCount * (keyed + 1);
  // The grid as fine as the refinement's smallest interval holds every refined time.
  const times = refined.clip.sampleTimes!;
  let gap = Infinity;
  for (let k = 1; k < times.length; k++) if (times[k] > times[k - 1]) gap = Math.min(gap, times[k] - times[k - 1]);
  let hi = failedFactor * 2 ** Math.max(1, Math.round(Math.log2(1 / (gap * clip.sampleRate * failedFactor))));
  let lo = failedFactor;
  if (!cheaper(lo + 1)) return refined;
  let best: SampleGrid | undefined;
  const tryFactor = (factor: number): boolean => {
    const c = resampleFromKeys(clip, factor);
    const gridError = gridErrorOf(c, shellDistances, metric);
    if (gridError > budget) return false;
    best = { clip: c, factor, gridError };
    return true;
  };
  if (!tryFactor(hi)) return refined;
  while (hi - lo > 1) {
    const mid = (lo + hi) >>> 1;
    if (tryFactor(mid)) hi = mid;
    else lo = mid;
  }
  return cheaper(hi) ? best! : refined;
}

/**
 * The sample times of `clip` with the midpoint of every interval whose error is over
 * `budget` added (as a float32 time strictly inside it), or undefined when the clip is
 * uniform and every interval is over: then twice the rate holds the same samples without
 * storing their times.
 */
function refinedTimes(clip: RawClip, perInterval: Float64Array, budget: number): Float32Array | undefined {
  const n = clip.sampleCount;
  if (!clip.sampleTimes && perInterval.every((e) => e > budget)) return undefined;
  const times: number[] = [];
  for (let k = 0; k < n; k++) {
    const t = Math.fround(sampleTime(clip, k));
    times.push(t);
    if (k + 1 === n || !(perInterval[k] > budget)) continue;
    const mid = Math.fround(sampleTime(clip, k + 0.5));
    if (mid > t && mid < Math.fround(sampleTime(clip, k + 1))) times.push(mid);
  }
  return Float32Array.from(times);
}

/**
 * `clip` sampled at `times` (float32 values, non-decreasing, the first its start time): its
 * keyframed tracks from their keys ({@link sampleTrackAt}), the others with the source's
 * reference between its samples ({@link referenceBetween}).
 */
export function sampleFromKeysAt(clip: RawClip, times: Float32Array): RawClip {
  const n = clip.sampleCount;
  const boneCount = clip.skeleton.parents.length;
  const count = times.length;
  const rotations = new Float32Array(boneCount * count * 4);
  const translations = new Float32Array(boneCount * count * 3);
  const scales = new Float32Array(boneCount * count * 3);
  const pose = new Float64Array(boneCount * POSE_STRIDE);
  let unkeyed = false;
  for (let b = 0; b < boneCount; b++) {
    for (let kind = 0; kind < TRACKS_PER_BONE; kind++) {
      const keys = clip.keyframes?.[b * TRACKS_PER_BONE + kind];
      const width = kind === TRACK_KIND.ROTATION ? 4 : 3;
      const out = kind === TRACK_KIND.ROTATION ? rotations : kind === TRACK_KIND.TRANSLATION ? translations : scales;
      if (keys) sampleTrackAt(keys, times, out, b * count * width);
      else unkeyed = true;
    }
  }
  for (let s = 0; unkeyed && s < count; s++) {
    const pos = Math.min(
      n - 1,
      Math.max(0, keyPosition(clip.sampleTimes, clipStartTime(clip), clip.sampleRate, n, times[s], false)),
    );
    const k = Math.min(n - 2, Math.floor(pos));
    referenceBetween(clip, k, pos - k, pose);
    copyUnkeyed(clip, pose, s, count, rotations, translations, scales);
  }
  const span = times[count - 1] - times[0];
  return {
    ...clip,
    sampleRate: span > 0 ? (count - 1) / span : clip.sampleRate,
    sampleCount: count,
    sampleTimes: times,
    rotations,
    translations,
    scales,
  };
}

/** Copies the tracks of `pose` that have no keys in `clip` into sample `s` of the arrays. */
function copyUnkeyed(
  clip: RawClip,
  pose: Float64Array,
  s: number,
  count: number,
  rotations: Float32Array,
  translations: Float32Array,
  scales: Float32Array,
): void {
  const boneCount = clip.skeleton.parents.length;
  for (let b = 0; b < boneCount; b++) {
    for (let kind = 0; kind < TRACKS_PER_BONE; kind++) {
      if (clip.keyframes?.[b * TRACKS_PER_BONE + kind]) continue;
      const o = b * POSE_STRIDE + KIND_POSE_OFFSET[kind];
      if (kind === TRACK_KIND.ROTATION) copy(pose, o, 4, rotations, (b * count + s) * 4);
      else copy(pose, o, 3, kind === TRACK_KIND.TRANSLATION ? translations : scales, (b * count + s) * 3);
    }
  }
}

/**
 * `clip` with `factor` times as many sample intervals, evaluated from its keys at the
 * sample times themselves (a key a few float32 steps off the grid is what a player shows
 * at the grid time, not the key's value).
 */
export function resampleFromKeys(clip: RawClip, factor: number): RawClip {
  const n = clip.sampleCount;
  const boneCount = clip.skeleton.parents.length;
  const count = (n - 1) * factor + 1;
  const rate = clip.sampleRate * factor;
  const rotations = new Float32Array(boneCount * count * 4);
  const translations = new Float32Array(boneCount * count * 3);
  const scales = new Float32Array(boneCount * count * 3);
  const pose = new Float64Array(boneCount * POSE_STRIDE);
  const start = clipStartTime(clip);
  for (let b = 0; b < boneCount; b++) {
    for (let kind = 0; kind < TRACKS_PER_BONE; kind++) {
      const keys = clip.keyframes?.[b * TRACKS_PER_BONE + kind];
      const width = kind === TRACK_KIND.ROTATION ? 4 : 3;
      const out = kind === TRACK_KIND.ROTATION ? rotations : kind === TRACK_KIND.TRANSLATION ? translations : scales;
      if (keys) resampleTrack(keys, start, rate, count, out, b * count * width, true);
    }
  }
  // Tracks without keys: the source's reference between the old samples.
  for (let s = 0; s < count; s++) {
    const k = Math.min(n - 2, Math.floor(s / factor));
    referenceBetween(clip, k, s / factor - k, pose);
    copyUnkeyed(clip, pose, s, count, rotations, translations, scales);
  }
  return { ...clip, sampleRate: rate, sampleCount: count, rotations, translations, scales };
}

function copy(from: ArrayLike<number>, at: number, width: number, to: Float32Array | Float64Array, o: number): void {
  for (let i = 0; i < width; i++) to[o + i] = from[at + i];
}
