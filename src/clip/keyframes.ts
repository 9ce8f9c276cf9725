/**
 * Keyframed tracks: the source's own keys and what they mean between keys, evaluated at
 * any time. Pure functions over typed arrays; the glTF reader resamples with them and the
 * compressor measures the error between samples against them.
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

/**
 * How a player slerps LINEAR rotation keys, for measuring against what users see
 * (docs/format.md, "The error at any time"): `three`, three.js r187's
 * `Quaternion.slerpFlat` (normalised lerp where the keys' dot product is at least 0.9995,
 * rotations under about 3.6°, slerp above); `babylon`, Babylon.js's `Quaternion.SlerpToRef`
 * (slerp, lerp above a dot product of 0.999999, normalised here). Both use the stored keys
 * as they are, not normalised, and leave the slerp unnormalised, as both engines do.
 */
export type PlayerSlerp = 'three' | 'babylon';

/** Every {@link PlayerSlerp}. */
export const PLAYER_SLERPS: readonly PlayerSlerp[] = ['three', 'babylon'];

/**
 * A key lying within this fraction of a sample period of a sample time counts as lying on
 * it. Key times come from float32 accessors, so `k / rate` is rarely exact; without this a
 * STEP key at 1/30 s would be missed by the sample at 1/30 s.
 */
export const KEY_TIME_TOLERANCE = 1e-3;
/** Relative float32 rounding of a key time, added to the tolerance for late keys. */
const FLOAT32_RELATIVE = 2.4e-7;

/** How far (seconds) a key may lie from a sample and still count as on it at `time`. */
export function tolerance(time: number, sampleRate: number): number {
  return KEY_TIME_TOLERANCE / sampleRate + FLOAT32_RELATIVE * Math.abs(time);
}

/**
 * Samples `track` at `sampleCount` uniform times `startTime + s / sampleRate` and writes
 * sample s at `out[outOffset + s · width …]`. Allocates nothing; the key cursor only moves
 * forward because sample times increase. The caller checks that `times` is non-decreasing
 * and that `values` holds enough numbers.
 *
 * A key within {@link KEY_TIME_TOLERANCE} of a sample time is taken exactly, so keys on the
 * grid survive float32 key times bit for bit. With `exact`, only STEP keys snap so (a held
 * value changes at its key, not a sample later); other tracks are evaluated at the sample
 * time itself, which is what a player shows then.
 */
export function resampleTrack(
  track: KeyframeTrack,
  startTime: number,
  sampleRate: number,
  sampleCount: number,
  out: Float32Array,
  outOffset: number,
  exact = false,
): void {
  const { times, width, interpolation } = track;
  const keyCount = times.length;
  let k = 0;
  for (let s = 0; s < sampleCount; s++) {
    const t = startTime + s / sampleRate;
    const tol = exact && interpolation !== INTERPOLATION.STEP ? 0 : tolerance(t, sampleRate);
    while (k + 1 < keyCount && times[k + 1] <= t + tol) k++;
    valueAt(track, k, t, tol, out, outOffset + s * width);
  }
}

/**
 * Writes the value of `track` at `time` into `out[o..o + width)`, given `k`, the last key at
 * or before `time + tol` (or 0 before the first key). A time within `tol` of key k takes
 * that key exactly (alpha 0), so keys on the grid survive resampling bit for bit despite
 * float32 key times.
 */
function valueAt(
  track: KeyframeTrack,
  k: number,
  time: number,
  tol: number,
  out: Float32Array | Float64Array,
  o: number,
  player?: PlayerSlerp,
): void {
  const { times, values, width, interpolation, rotation } = track;
  const cubic = interpolation === INTERPOLATION.CUBICSPLINE;
  // Offset of key k's value inside `values`: k·width, or (3k + 1)·width past the in-tangent.
  const keyStride = cubic ? 3 * width : width;
  const valueSkip = cubic ? width : 0;
  if (
    k + 1 >= times.length ||
    times[k] > time + tol ||
    interpolation === INTERPOLATION.STEP ||
    time - times[k] <= tol
  ) {
    // Before the first key, after the last, on a key, or STEP between keys.
    const v = k * keyStride + valueSkip;
    for (let c = 0; c < width; c++) out[o + c] = values[v + c];
    if (rotation && !player) normalizeQuat(out, o);
    return;
  }
  const t0 = times[k];
  const td = times[k + 1] - t0;
  const alpha = Math.min(1, (time - t0) / td);
  const v0 = k * keyStride + valueSkip;
  const v1 = v0 + keyStride;
  if (!cubic) {
    if (rotation && player) playerSlerp(values, v0, v1, alpha, player, out, o);
    else if (rotation) slerpInto(values, v0, v1, alpha, out, o);
    else for (let c = 0; c < width; c++) out[o + c] = values[v0 + c] + (values[v1 + c] - values[v0 + c]) * alpha;
    return;
  }
  // Hermite basis; tangents are per second, so they scale by the key interval td.
  const a2 = alpha * alpha,
    a3 = a2 * alpha;
  const h00 = 2 * a3 - 3 * a2 + 1;
  const h10 = (a3 - 2 * a2 + alpha) * td;
  const h01 = -2 * a3 + 3 * a2;
  const h11 = (a3 - a2) * td;
  const outTangent = v0 + width; // b_k follows v_k
  const inTangent = v1 - width; // a_{k+1} precedes v_{k+1}
  for (let c = 0; c < width; c++) {
    out[o + c] =
      h00 * values[v0 + c] + h10 * values[outTangent + c] + h01 * values[v1 + c] + h11 * values[inTangent + c];
  }
  if (rotation) normalizeQuat(out, o);
}

/**
 * Shortest-arc slerp between quaternions at values[a] and values[b], written at out[o]. The
 * angle comes from atan2 of the chord lengths, accurate at every angle, so even keys a few
 * degrees apart are slerped (nlerp there would be off by about θ³/50 of the lever arm, which
 * a large model's threshold sees); only below 1e-6 rad does lerp stand in, exact to θ².
 */
function slerpInto(
  values: ArrayLike<number>,
  a: number,
  b: number,
  alpha: number,
  out: Float32Array | Float64Array,
  o: number,
): void {
  const ax = values[a],
    ay = values[a + 1],
    az = values[a + 2],
    aw = values[a + 3];
  let bx = values[b],
    by = values[b + 1],
    bz = values[b + 2],
    bw = values[b + 3];
  if (ax * bx + ay * by + az * bz + aw * bw < 0) {
    bx = -bx;
    by = -by;
    bz = -bz;
    bw = -bw;
  }
  const la = Math.hypot(ax, ay, az, aw) || 1,
    lb = Math.hypot(bx, by, bz, bw) || 1;
  const theta =
    2 *
    Math.atan2(
      Math.hypot(ax / la - bx / lb, ay / la - by / lb, az / la - bz / lb, aw / la - bw / lb),
      Math.hypot(ax / la + bx / lb, ay / la + by / lb, az / la + bz / lb, aw / la + bw / lb),
    );
  let wa: number, wb: number;
  if (theta < 1e-6) {
    wa = 1 - alpha;
    wb = alpha;
  } else {
    const inv = 1 / Math.sin(theta);
    wa = (Math.sin((1 - alpha) * theta) * inv) / la;
    wb = (Math.sin(alpha * theta) * inv) / lb;
  }
  out[o] = ax * wa + bx * wb;
  out[o + 1] = ay * wa + by * wb;
  out[o + 2] = az * wa + bz * wb;
  out[o + 3] = aw * wa + bw * wb;
  normalizeQuat(out, o);
}

/** The slerp of `player` between the quaternions at values[a] and values[b], written at out[o]. */
function playerSlerp(
  values: ArrayLike<number>,
  a: number,
  b: number,
  alpha: number,
  player: PlayerSlerp,
  out: Float32Array | Float64Array,
  o: number,
): void {
  let dot =
    values[a] * values[b] +
    values[a + 1] * values[b + 1] +
    values[a + 2] * values[b + 2] +
    values[a + 3] * values[b + 3];
  const sign = dot < 0 ? -1 : 1;
  dot *= sign;
  let wa = 1 - alpha,
    wb = alpha;
  // three.js copies equal keys as they are.
  const same =
    player === 'three' &&
    values[a] === values[b] &&
    values[a + 1] === values[b + 1] &&
    values[a + 2] === values[b + 2] &&
    values[a + 3] === values[b + 3];
  if (same) {
    for (let c = 0; c < 4; c++) out[o + c] = values[a + c];
    return;
  }
  const lerp = player === 'three' ? dot >= 0.9995 : dot > 0.999999;
  if (!lerp) {
    const theta = Math.acos(dot);
    const inv = 1 / Math.sin(theta);
    wa = Math.sin(wa * theta) * inv;
    wb = Math.sin(alpha * theta) * inv;
  }
  for (let c = 0; c < 4; c++) out[o + c] = values[a + c] * wa + sign * values[b + c] * wb;
  // Babylon's lerp leaves the quaternion up to 2.5e-7 short, which no rotation matches (on
  // a 170-unit figure a whole threshold): normalised here, as three.js does.
  if (lerp) normalizeQuat(out, o);
}

/** Normalises the quaternion at out[o]; a zero quaternion becomes identity. */
function normalizeQuat(out: Float32Array | Float64Array, o: number): void {
  const x = out[o],
    y = out[o + 1],
    z = out[o + 2],
    w = out[o + 3];
  const len2 = x * x + y * y + z * z + w * w;
  if (len2 > 0) {
    const inv = 1 / Math.sqrt(len2);
    out[o] = x * inv;
    out[o + 1] = y * inv;
    out[o + 2] = z * inv;
    out[o + 3] = w * inv;
  } else {
    out[o] = 0;
    out[o + 1] = 0;
    out[o + 2] = 0;
    out[o + 3] = 1;
  }
}

/**
 * Evaluates `track` at `time` (seconds) into `out[o..o + width)`, as {@link resampleTrack}
 * would for a sample at that time: held before the first and after the last key, the key
 * itself within tolerance of a key time (`tolerance` seconds; default 0). With `player`,
 * rotations are the keys as stored and LINEAR ones that player's slerp ({@link PlayerSlerp}).
 * Binary search, no allocation.
 */
export function evaluateTrack(
  track: KeyframeTrack,
  time: number,
  out: Float32Array | Float64Array,
  o: number,
  tol = 0,
  player?: PlayerSlerp,
): void {
  const times = track.times;
  // Last key at or before time + tol (0 before the first).
  let lo = 0,
    hi = times.length - 1;
  if (times[0] > time + tol) hi = 0;
  while (lo < hi) {
    const mid = (lo + hi + 1) >>> 1;
    if (times[mid] <= time + tol) lo = mid;
    else hi = mid - 1;
  }
  valueAt(track, lo, time, tol, out, o, player);
}

/**
 * Samples `track` at `times` (non-decreasing; a time listed m + 1 times is a jump's m-th
 * side) into `out[outOffset + s · width …]`: a time where the track has keys takes its
 * key exactly (the m-th of them, or its last), any other time its interpolation there.
 * So a clip sampled at the union of its tracks' key times plays back what every track
 * means: lerp and slerp between samples follow LINEAR keys, and a held sample is a STEP
 * key. Allocates nothing; the key cursor only moves forward.
 */
export function sampleTrackAt(
  track: KeyframeTrack,
  times: ArrayLike<number>,
  out: Float32Array,
  outOffset: number,
): void {
  const { times: keys, width, interpolation } = track;
  const keyStride = interpolation === INTERPOLATION.CUBICSPLINE ? 3 * width : width;
  const valueSkip = interpolation === INTERPOLATION.CUBICSPLINE ? width : 0;
  let k = 0;
  for (let s = 0, side = 0; s < times.length; s++) {
    const t = times[s];
    side = s > 0 && times[s - 1] === t ? side + 1 : 0;
    while (k < keys.length && keys[k] < t) k++;
    const o = outOffset + s * width;
    if (k < keys.length && keys[k] === t) {
      let key = k;
      while (key - k < side && key + 1 < keys.length && keys[key + 1] === t) key++;
      const v = key * keyStride + valueSkip;
      for (let c = 0; c < width; c++) out[o + c] = track.values[v + c];
      if (track.rotation) normalizeQuat(out, o);
    } else {
      evaluateTrack(track, t, out, o);
    }
  }
}
