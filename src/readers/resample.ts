/**
 * The sample grid of keyframed sources: which uniform rate their keys lie on, how many
 * samples cover them, and which keys fall off the grid. Used by the glTF reader; the
 * keyframe evaluation itself lives in clip/keyframes.ts.
 */

import {
  INTERPOLATION,
  KEY_TIME_TOLERANCE,
  resampleTrack,
  sampleTrackAt,
  type Interpolation,
  type KeyframeTrack,
} from '../clip/keyframes.js';

export { INTERPOLATION, KEY_TIME_TOLERANCE, resampleTrack, sampleTrackAt, type Interpolation, type KeyframeTrack };

/** Settings of {@link detectSampleRate}; the glTF reader uses the defaults but `minKeyRate`, which it sets to 1 Hz. */
export interface RateDetectionOptions {
  /** A key rate within this fraction of a whole number of Hz snaps to it. Default 0.005 (0.5%). */
  snapTolerance?: number;
  /** Key intervals shorter than this (seconds) are ignored as jumps or noise. Default 1e-4. */
  minInterval?: number;
  /** Key rates below this (Hz) are multiplied up. Default 20 (the glTF reader: 1). */
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

/** Relative float32 rounding of a key time, added to the tolerance for late keys. */
const FLOAT32_RELATIVE = 2.4e-7;

/**
 * Snaps a measured key rate (Hz) to a sensible rate: an NTSC rate (23.976, 29.97, 59.94,
 * 119.88) when within 0.05%, else the nearest whole number of Hz when within
 * `snapTolerance`, else the nearest half or quarter Hz (37.5, 12.5, 15.25) when within a
 * tenth of that, otherwise the rate rounded to 0.01 Hz. A positive rate below 0.005 Hz
 * (keys more than 200 s apart), which would round to 0 Hz, is returned unsnapped: the
 * result is never 0 for a positive rate.
 */
export function snapSampleRate(rate: number, snapTolerance: number = RATE_DETECTION_DEFAULTS.snapTolerance): number {
  // NTSC first: 29.97 is within 0.5% of 30 but 0.1% away, far beyond float32 noise.
  for (const r of FRACTIONAL_RATES) if (Math.abs(rate - r) <= 5e-4 * r) return r;
  const whole = Math.round(rate);
  if (whole > 0 && Math.abs(rate - whole) <= snapTolerance * rate) return whole;
  for (const parts of [2, 4]) {
    const fraction = Math.round(rate * parts) / parts;
    if (fraction > 0 && Math.abs(rate - fraction) <= 0.1 * snapTolerance * rate) return fraction;
  }
  const hundredths = Math.round(rate * 100) / 100;
  return hundredths > 0 || !(rate > 0) ? hundredths : rate;
}

/**
 * Detects a uniform sample rate (Hz) from the key times of one animation's tracks:
 * 1. every interval between neighbouring keys of a track, skipping those shorter than
 *    `minInterval` (jumps encoded as duplicate times);
 * 2. intervals within `snapTolerance` of each other form one cluster (float32 key times
 *    make a 37.5 Hz grid's intervals differ in their last digits); the largest cluster
 *    wins (ties go to the shorter interval, the finer grid);
 * 3. its rate is the cluster's count over its summed intervals, so the noise averages
 *    out, snapped by {@link snapSampleRate};
 * 4. a rate below `minKeyRate` (sparse, hand-set keys) is multiplied by the smallest whole
 *    number that brings it to `targetRate` or more: the keys stay on the sample grid while
 *    the curve between them is still sampled finely (2 Hz keys → 30 Hz, 12 Hz → 36 Hz).
 *
 * Returns `fallbackRate` when no two keys differ in time. Never returns 0, NaN or
 * Infinity: keys more than 200 s apart keep their unsnapped rate before step 4, so two keys
 * 300 s apart give 30 Hz. Allocates one array of the intervals.
 */
export function detectSampleRate(keyTimes: readonly ArrayLike<number>[], options: RateDetectionOptions = {}): number {
  const o = { ...RATE_DETECTION_DEFAULTS, ...options };
  let total = 0;
  for (const times of keyTimes) total += Math.max(0, times.length - 1);
  const intervals = new Float64Array(total);
  let n = 0;
  for (const times of keyTimes) {
    for (let i = 1; i < times.length; i++) {
      const dt = times[i] - times[i - 1];
      if (dt >= o.minInterval && Number.isFinite(dt)) intervals[n++] = dt;
    }
  }
  if (n === 0) return o.fallbackRate;
  const sorted = intervals.subarray(0, n).sort();
  // Clusters of sorted intervals, each within snapTolerance of its first member.
  let bestCount = 0,
    bestSum = 0;
  for (let i = 0; i < n; ) {
    let j = i,
      sum = 0;
    while (j < n && sorted[j] <= sorted[i] * (1 + o.snapTolerance)) sum += sorted[j++];
    if (j - i > bestCount) {
      bestCount = j - i;
      bestSum = sum;
    }
    i = j;
  }
  let best = snapSampleRate(bestCount / bestSum, o.snapTolerance);
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
    if (Math.abs(pos - Math.round(pos)) > KEY_TIME_TOLERANCE + FLOAT32_RELATIVE * Math.abs(times[i]) * sampleRate)
      off++;
  }
  return off;
}

/**
 * True when every key of `keyTimes` lies on the grid `startTime + s / sampleRate` up to
 * the float32 rounding of its time (a player at the grid time shows the key itself), so a
 * uniform clip holds the keys exactly.
 */
export function keysOnGrid(keyTimes: readonly ArrayLike<number>[], startTime: number, sampleRate: number): boolean {
  for (const times of keyTimes) {
    for (let i = 0; i < times.length; i++) {
      const grid = startTime + Math.round((times[i] - startTime) * sampleRate) / sampleRate;
      if (Math.abs(times[i] - grid) > FLOAT32_RELATIVE * Math.max(Math.abs(times[i]), Math.abs(startTime)) + 1e-9)
        return false;
    }
  }
  return true;
}

/**
 * The union of the tracks' key times, sorted, as float32 values: each time once, or as
 * many times as one track repeats it (a jump keeps both sides). Sampled there
 * ({@link sampleTrackAt}), a clip keeps every key of every track at its own time.
 */
export function unionKeyTimes(keyTimes: readonly ArrayLike<number>[]): Float32Array {
  const counts = new Map<number, number>();
  for (const times of keyTimes) {
    for (let i = 0; i < times.length; ) {
      const t = Math.fround(times[i]);
      let j = i + 1;
      while (j < times.length && Math.fround(times[j]) === t) j++;
      counts.set(t, Math.max(counts.get(t) ?? 0, j - i));
      i = j;
    }
  }
  const sorted = [...counts.keys()].sort((a, b) => a - b);
  const out: number[] = [];
  for (const t of sorted) for (let m = counts.get(t)!; m > 0; m--) out.push(t);
  return Float32Array.from(out);
}
