/**
 * Time → key position: where a playback time falls among a clip's samples. A uniform clip's
 * sample k plays at start + k / rate; a clip with a key-times section (format.ts,
 * FLAGS.HAS_KEY_TIMES) plays sample k at its stored time. Both give a fractional position
 * k + alpha, alpha the share of the way from sample k to k + 1 in time, so the decode
 * (which blends two keys by alpha) never sees which kind of clip it is.
 */

/**
 * The position of `time` among samples played at `times` (non-decreasing, at least one):
 * k + (time − times[k]) / (times[k + 1] − times[k]) for the last k with times[k] ≤ time.
 * Equal neighbours (a jump) resolve to the later one, the value after the jump. Outside
 * the times the position continues at `rate` samples per second (negative before the first,
 * past sampleCount − 1 after the last), so clamping and wrapping work as on a uniform grid.
 * Binary search, no allocation.
 */
export function tablePosition(times: Float32Array, rate: number, time: number): number {
  const last = times.length - 1;
  if (!(time > times[0])) return (time - times[0]) * rate;
  if (time >= times[last]) return last + (time - times[last]) * rate;
  // times[lo] ≤ time < times[hi].
  let lo = 0,
    hi = last;
  while (hi - lo > 1) {
    const mid = (lo + hi) >>> 1;
    if (times[mid] <= time) lo = mid;
    else hi = mid;
  }
  return lo + (time - times[lo]) / (times[hi] - times[lo]);
}

/**
 * The position of `time` (seconds on the source's timeline) among the samples: uniform
 * (`times` undefined) at `rate` from `start`, or at the key times. With `wrap`, time first
 * repeats over the samples with the last one followed by the first a sample period
 * (1 / `rate`) later; the result then lies in [0, sampleCount).
 */
export function keyPosition(
  times: Float32Array | undefined,
  start: number,
  rate: number,
  sampleCount: number,
  time: number,
  wrap: boolean,
): number {
  if (times === undefined) {
    if (!wrap) return (time - start) * rate;
    let pos = ((time - start) * rate) % sampleCount;
    if (pos < 0) pos += sampleCount;
    return pos === pos ? pos : 0; // ±Infinity
  }
  if (!wrap) return tablePosition(times, rate, time);
  const span = times[sampleCount - 1] - start + 1 / rate;
  let t = (time - start) % span;
  if (t < 0) t += span;
  if (t !== t) t = 0; // ±Infinity
  const pos = tablePosition(times, rate, start + t);
  return pos < sampleCount ? pos : 0;
}
