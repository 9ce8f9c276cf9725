/**
 * Keyframed tracks → uniform samples. Pure functions over typed arrays, used by the glTF
 * reader (and by anything else whose source keys are not uniformly spaced).
 *
 * Interpolation follows the glTF 2.0 specification (Appendix C): STEP holds the previous
 * key, LINEAR lerps vectors and slerps rotations on the shortest arc, CUBICSPLINE is a
 * cubic Hermite spline whose tangents are stored next to each key and scaled by the key
 * interval; rotations are normalised after it. Before the first key the first value holds,
 * after the last key the last value holds.
 */

/** Keyframe interpolation modes, spelled as in glTF. */
export const INTERPOLATION = {
  STEP: 'STEP',
  LINEAR: 'LINEAR',
  CUBICSPLINE: 'CUBICSPLINE',
} as const;
/** An {@link INTERPOLATION} mode. */
export type Interpolation = (typeof INTERPOLATION)[keyof typeof INTERPOLATION];

/**
 * One keyframed track.
 * - `times`: key times in seconds, non-decreasing. Equal neighbours are allowed (a jump).
 * - `values`: `width` numbers per key; for CUBICSPLINE three groups per key in glTF order
 *   (in-tangent, value, out-tangent), i.e. `3 · width` numbers per key.
 * - `rotation`: the values are quaternions xyzw (`width` 4): LINEAR slerps, CUBICSPLINE
 *   normalises its result.
 */
export interface KeyframeTrack {
  readonly times: ArrayLike<number>;
  readonly values: ArrayLike<number>;
  readonly width: number;
  readonly interpolation: Interpolation;
  readonly rotation: boolean;
}

/** Settings of {@link detectSampleRate}; the values are what the glTF reader uses. */
export interface RateDetectionOptions {
  /** A key rate within this fraction of a whole number of Hz snaps to it. Default 0.005 (0.5%). */
  snapTolerance?: number;
  /** Key intervals shorter than this (seconds) are ignored as jumps or noise. Default 1e-4. */
  minInterval?: number;
  /** Key rates below this (Hz) are multiplied up. Default 20. */
  minKeyRate?: number;
  /** A key rate below `minKeyRate` becomes its smallest whole multiple at or above this (Hz). Default 30. */
  targetRate?: number;
  /** Rate used when no two keys differ in time (every track is a single pose). Default 30. */
  fallbackRate?: number;
}

/** Defaults of {@link RateDetectionOptions}. */
export const RATE_DETECTION_DEFAULTS = {
  snapTolerance: 0.005,
  minInterval: 1e-4,
  minKeyRate: 20,
  targetRate: 30,
  fallbackRate: 30,
} as const satisfies Required<RateDetectionOptions>;

/** Video rates that are not whole numbers (NTSC), snapped to when within 0.05%. */
const FRACTIONAL_RATES = [24000 / 1001, 30000 / 1001, 60000 / 1001, 120000 / 1001] as const;

/**
 * A key lying within this fraction of a sample period of a sample time counts as lying on
 * it. Key times come from float32 accessors, so `k / rate` is rarely exact; without this a
 * STEP key at 1/30 s would be missed by the sample at 1/30 s.
 */
export const KEY_TIME_TOLERANCE = 1e-3;
/** Relative float32 rounding of a key time, added to the tolerance for late keys. */
const FLOAT32_RELATIVE = 2.4e-7;

/** How far (seconds) a key may lie from a sample and still count as on it at `time`. */
function tolerance(time: number, sampleRate: number): number {
  return KEY_TIME_TOLERANCE / sampleRate + FLOAT32_RELATIVE * Math.abs(time);
}

/**
 * Snaps a measured key rate (Hz) to a sensible rate: an NTSC rate (23.976, 29.97, 59.94,
 * 119.88) when within 0.05%, else the nearest whole number of Hz when within
 * `snapTolerance`, otherwise the rate rounded to 0.01 Hz. A positive rate below 0.005 Hz
 * (keys more than 200 s apart), which would round to 0 Hz, is returned unsnapped: the
 * result is never 0 for a positive rate.
 */
export function snapSampleRate(rate: number, snapTolerance: number = RATE_DETECTION_DEFAULTS.snapTolerance): number {
  // NTSC first: 29.97 is within 0.5% of 30 but 0.1% away, far beyond float32 noise.
  for (const r of FRACTIONAL_RATES) if (Math.abs(rate - r) <= 5e-4 * r) return r;
  const whole = Math.round(rate);
  if (whole > 0 && Math.abs(rate - whole) <= snapTolerance * rate) return whole;
  const hundredths = Math.round(rate * 100) / 100;
  return hundredths > 0 || !(rate > 0) ? hundredths : rate;
}

/**
 * Detects a uniform sample rate (Hz) from the key times of one animation's tracks:
 * 1. every interval between neighbouring keys of a track, skipping those shorter than
 *    `minInterval` (jumps encoded as duplicate times);
 * 2. each interval as a rate 1/dt, snapped by {@link snapSampleRate} so float32 noise in the
 *    key times lands in one bucket;
 * 3. the most common snapped rate wins (ties go to the higher rate, the finer grid);
 * 4. a rate below `minKeyRate` (sparse, hand-set keys) is multiplied by the smallest whole
 *    number that brings it to `targetRate` or more: the keys stay on the sample grid while
 *    the curve between them is still sampled finely (2 Hz keys → 30 Hz, 12 Hz → 36 Hz).
 *
 * Returns `fallbackRate` when no two keys differ in time. Never returns 0, NaN or
 * Infinity: keys more than 200 s apart keep their unsnapped rate before step 4, so two keys
 * 300 s apart give 30 Hz. Allocates one small map.
 */
export function detectSampleRate(keyTimes: readonly ArrayLike<number>[], options: RateDetectionOptions = {}): number {
  const o = { ...RATE_DETECTION_DEFAULTS, ...options };
  const counts = new Map<number, number>();
  for (const times of keyTimes) {
    for (let i = 1; i < times.length; i++) {
      const dt = times[i] - times[i - 1];
      if (!(dt >= o.minInterval)) continue;
      const rate = snapSampleRate(1 / dt, o.snapTolerance);
      counts.set(rate, (counts.get(rate) ?? 0) + 1);
    }
  }
  let best = 0, bestCount = 0;
  for (const [rate, count] of counts) {
    if (count > bestCount || (count === bestCount && rate > best)) { best = rate; bestCount = count; }
  }
  if (bestCount === 0) return o.fallbackRate;
  if (best < o.minKeyRate) {
    best *= Math.ceil(o.targetRate / best - 1e-9);
    // An unsnapped rate (keys over 200 s apart) times its multiple is the target rate up to
    // float noise: 1/300 Hz × 9000 = 30.000000000000004.
    const whole = Math.round(best);
    if (Math.abs(best - whole) <= 1e-9 * best) best = whole;
  }
  // Only reachable with key intervals beyond float32 (1/dt underflows, or its multiple overflows).
  if (!(best > 0 && Number.isFinite(best))) return o.targetRate;
  return best;
}

/**
 * Number of uniform samples at `sampleRate` needed to cover `duration` seconds, the first
 * at 0. A last key within {@link KEY_TIME_TOLERANCE} of a sample past the previous one does
 * not add a sample. At least 1 for a positive finite rate; may be huge or Infinity for a
 * long duration, and NaN for a NaN rate, so callers check it against their limit with a
 * NaN-proof test (`!(count <= max)`).
 */
export function sampleCountFor(duration: number, sampleRate: number): number {
  if (!(duration > 0)) return 1;
  return Math.max(1, Math.ceil(duration * sampleRate - KEY_TIME_TOLERANCE)) + 1;
}

/**
 * Counts keys of `times` that do not lie on the sample grid `startTime + s / sampleRate`
 * (within {@link KEY_TIME_TOLERANCE}): resampling moves those keys' values onto the grid,
 * so readers can say so.
 */
export function countOffGridKeys(times: ArrayLike<number>, startTime: number, sampleRate: number): number {
  let off = 0;
  for (let i = 0; i < times.length; i++) {
    const pos = (times[i] - startTime) * sampleRate;
    if (Math.abs(pos - Math.round(pos)) > KEY_TIME_TOLERANCE + FLOAT32_RELATIVE * Math.abs(times[i]) * sampleRate) off++;
  }
  return off;
}

/**
 * Samples `track` at `sampleCount` uniform times `startTime + s / sampleRate` and writes
 * sample s at `out[outOffset + s · width …]`. Allocates nothing; the key cursor only moves
 * forward because sample times increase. The caller checks that `times` is non-decreasing
 * and that `values` holds enough numbers.
 */
export function resampleTrack(
  track: KeyframeTrack,
  startTime: number,
  sampleRate: number,
  sampleCount: number,
  out: Float32Array,
  outOffset: number,
): void {
  const { times, values, width, interpolation, rotation } = track;
  const keyCount = times.length;
  const cubic = interpolation === INTERPOLATION.CUBICSPLINE;
  // Offset of key k's value inside `values`: k·width, or (3k + 1)·width past the in-tangent.
  const keyStride = cubic ? 3 * width : width;
  const valueSkip = cubic ? width : 0;
  let k = 0;
  for (let s = 0; s < sampleCount; s++) {
    const t = startTime + s / sampleRate;
    const tol = tolerance(t, sampleRate);
    while (k + 1 < keyCount && times[k + 1] <= t + tol) k++;
    const o = outOffset + s * width;
    // A sample within tolerance of key k takes that key exactly (alpha 0), so keys on the
    // grid survive resampling bit for bit despite float32 key times.
    const hold = k + 1 >= keyCount || times[k] > t + tol || interpolation === INTERPOLATION.STEP || t - times[k] <= tol;
    if (hold) {
      // Before the first key, after the last, on a key, or STEP between keys.
      const v = k * keyStride + valueSkip;
      for (let c = 0; c < width; c++) out[o + c] = values[v + c];
      if (rotation) normalizeQuat(out, o);
      continue;
    }
    const t0 = times[k];
    const td = times[k + 1] - t0;
    const alpha = Math.min(1, (t - t0) / td);
    const v0 = k * keyStride + valueSkip;
    const v1 = v0 + keyStride;
    if (!cubic) {
      if (rotation) slerpInto(values, v0, v1, alpha, out, o);
      else for (let c = 0; c < width; c++) out[o + c] = values[v0 + c] + (values[v1 + c] - values[v0 + c]) * alpha;
      continue;
    }
    // Hermite basis; tangents are per second, so they scale by the key interval td.
    const a2 = alpha * alpha, a3 = a2 * alpha;
    const h00 = 2 * a3 - 3 * a2 + 1;
    const h10 = (a3 - 2 * a2 + alpha) * td;
    const h01 = -2 * a3 + 3 * a2;
    const h11 = (a3 - a2) * td;
    const outTangent = v0 + width; // b_k follows v_k
    const inTangent = v1 - width; // a_{k+1} precedes v_{k+1}
    for (let c = 0; c < width; c++) {
      out[o + c] = h00 * values[v0 + c] + h10 * values[outTangent + c] + h01 * values[v1 + c] + h11 * values[inTangent + c];
    }
    if (rotation) normalizeQuat(out, o);
  }
}

/** Shortest-arc slerp between quaternions at values[a] and values[b], written at out[o]. */
function slerpInto(values: ArrayLike<number>, a: number, b: number, alpha: number, out: Float32Array, o: number): void {
  const ax = values[a], ay = values[a + 1], az = values[a + 2], aw = values[a + 3];
  let bx = values[b], by = values[b + 1], bz = values[b + 2], bw = values[b + 3];
  let dot = ax * bx + ay * by + az * bz + aw * bw;
  if (dot < 0) { dot = -dot; bx = -bx; by = -by; bz = -bz; bw = -bw; }
  let wa: number, wb: number;
  if (dot > 0.9995) {
    // Nearly parallel: sin θ → 0 makes slerp unstable, and lerp is as exact there.
    wa = 1 - alpha; wb = alpha;
  } else {
    const theta = Math.acos(dot);
    const inv = 1 / Math.sin(theta);
    wa = Math.sin((1 - alpha) * theta) * inv;
    wb = Math.sin(alpha * theta) * inv;
  }
  out[o] = ax * wa + bx * wb;
  out[o + 1] = ay * wa + by * wb;
  out[o + 2] = az * wa + bz * wb;
  out[o + 3] = aw * wa + bw * wb;
  normalizeQuat(out, o);
}

/** Normalises the quaternion at out[o]; a zero quaternion becomes identity. */
function normalizeQuat(out: Float32Array, o: number): void {
  const x = out[o], y = out[o + 1], z = out[o + 2], w = out[o + 3];
  const len2 = x * x + y * y + z * z + w * w;
  if (len2 > 0) {
    const inv = 1 / Math.sqrt(len2);
    out[o] = x * inv; out[o + 1] = y * inv; out[o + 2] = z * inv; out[o + 3] = w * inv;
  } else {
    out[o] = 0; out[o + 1] = 0; out[o + 2] = 0; out[o + 3] = 1;
  }
}
