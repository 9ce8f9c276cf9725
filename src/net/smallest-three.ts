/**
 * Smallest-three rotations: a unit quaternion has one component of magnitude ≥ 1/2; send the
 * other three and rebuild the largest from the unit length. q and −q are the same rotation,
 * so q is negated to make the largest positive, and then each of the other three lies in
 * [−1/√2, +1/√2]. Wire layout: a 2-bit index of the largest component, then the three
 * others in x, y, z, w order (skipping the largest), each on `bits` bits.
 */

/** Largest magnitude of a non-largest component of a unit quaternion: 1/√2. */
export const SMALLEST_THREE_RANGE = Math.SQRT1_2;

/** Fewest bits per component: with fewer the error bound is no better than a random rotation. */
export const SMALLEST_THREE_MIN_BITS = 2;

/** Most bits per component: past 24 the float32 pose the decoder writes cannot hold more. */
export const SMALLEST_THREE_MAX_BITS = 24;

/** Bits of the largest component's index. */
export const SMALLEST_THREE_INDEX_BITS = 2;

/** Quantisation step of a component on `bits` bits: 2/√2 over 2^bits − 1 steps. */
export function smallestThreeStep(bits: number): number {
  return (2 * SMALLEST_THREE_RANGE) / (2 ** bits - 1);
}

/**
 * Encodes the rotation (x, y, z, w) (normalised here; a zero quaternion encodes identity)
 * into `outCodes[o..o+3]`: the index of the largest component (0..3, x..w), then the three
 * others quantised to 0..2^bits − 1. Allocates nothing.
 */
export function encodeSmallestThree(
  x: number,
  y: number,
  z: number,
  w: number,
  bits: number,
  outCodes: Int32Array,
  o: number,
): void {
  encodeSmallestThreeNear(x, y, z, w, bits, outCodes, o, null, 0, 1);
}

/**
 * {@link encodeSmallestThree}, except that when `baseline[bo]` holds the same largest index
 * and `step` > 1, each component is the code nearest the true value among
 * `baseline code + k · step` (in range): a delta of whole steps, up to step/2 codes off.
 * With `step` 1 or another index it is {@link encodeSmallestThree}. Allocates nothing.
 */
export function encodeSmallestThreeNear(
  x: number,
  y: number,
  z: number,
  w: number,
  bits: number,
  outCodes: Int32Array,
  o: number,
  baseline: Int32Array | null,
  bo: number,
  step: number,
): void {
  const len2 = x * x + y * y + z * z + w * w;
  if (!(len2 > 0) || !Number.isFinite(len2)) {
    x = 0;
    y = 0;
    z = 0;
    w = 1;
  }
  let index = 3,
    big = Math.abs(w);
  const ax = Math.abs(x),
    ay = Math.abs(y),
    az = Math.abs(z);
  if (ax > big) {
    index = 0;
    big = ax;
  }
  if (ay > big) {
    index = 1;
    big = ay;
  }
  if (az > big) {
    index = 2;
    big = az;
  }
  const largest = index === 0 ? x : index === 1 ? y : index === 2 ? z : w;
  // Normalising and flipping the sign in one factor keeps the largest positive.
  const k = (largest < 0 ? -1 : 1) / Math.sqrt(x * x + y * y + z * z + w * w);
  const max = 2 ** bits - 1;
  const scale = max / (2 * SMALLEST_THREE_RANGE);
  outCodes[o] = index;
  let c = o + 1;
  if (baseline && step > 1 && baseline[bo] === index) {
    let b = bo + 1;
    if (index !== 0) outCodes[c++] = snapCode((x * k + SMALLEST_THREE_RANGE) * scale, baseline[b++], step, max);
    if (index !== 1) outCodes[c++] = snapCode((y * k + SMALLEST_THREE_RANGE) * scale, baseline[b++], step, max);
    if (index !== 2) outCodes[c++] = snapCode((z * k + SMALLEST_THREE_RANGE) * scale, baseline[b++], step, max);
    if (index !== 3) outCodes[c] = snapCode((w * k + SMALLEST_THREE_RANGE) * scale, baseline[b], step, max);
    return;
  }
  if (index !== 0) outCodes[c++] = quantizeComponent(x * k, scale, max);
  if (index !== 1) outCodes[c++] = quantizeComponent(y * k, scale, max);
  if (index !== 2) outCodes[c++] = quantizeComponent(z * k, scale, max);
  if (index !== 3) outCodes[c] = quantizeComponent(w * k, scale, max);
}

function quantizeComponent(v: number, scale: number, max: number): number {
  const q = Math.round((v + SMALLEST_THREE_RANGE) * scale);
  return q < 0 ? 0 : q > max ? max : q;
}

/**
 * The code nearest `scaled` (a value in code units) among `base + k · step` within
 * 0..max (`base` in range, so k = 0 always is).
 */
export function snapCode(scaled: number, base: number, step: number, max: number): number {
  let code = base + Math.round((scaled - base) / step) * step;
  while (code > max) code -= step;
  while (code < 0) code += step;
  return code;
}

/**
 * Decodes `codes[o..o+3]` (as written by {@link encodeSmallestThree} with the same `bits`)
 * into the quaternion x, y, z, w at `out[oo..oo+3]`; the largest component is rebuilt as
 * √(1 − Σ others²) (0 if rounding pushed the sum past 1). Codes outside 0..2^bits − 1 or an
 * index outside 0..3 are the caller's to reject. Allocates nothing.
 */
export function decodeSmallestThree(
  codes: Int32Array,
  o: number,
  bits: number,
  out: Float32Array | Float64Array,
  oo: number,
): void {
  const index = codes[o];
  const step = smallestThreeStep(bits);
  const a = codes[o + 1] * step - SMALLEST_THREE_RANGE;
  const b = codes[o + 2] * step - SMALLEST_THREE_RANGE;
  const c = codes[o + 3] * step - SMALLEST_THREE_RANGE;
  const rest = 1 - a * a - b * b - c * c;
  const largest = rest > 0 ? Math.sqrt(rest) : 0;
  switch (index) {
    case 0:
      out[oo] = largest;
      out[oo + 1] = a;
      out[oo + 2] = b;
      out[oo + 3] = c;
      break;
    case 1:
      out[oo] = a;
      out[oo + 1] = largest;
      out[oo + 2] = b;
      out[oo + 3] = c;
      break;
    case 2:
      out[oo] = a;
      out[oo + 1] = b;
      out[oo + 2] = largest;
      out[oo + 3] = c;
      break;
    default:
      out[oo] = a;
      out[oo + 1] = b;
      out[oo + 2] = c;
      out[oo + 3] = largest;
      break;
  }
}

/** Largest norm of the three smaller components of any unit quaternion: √3/2 (the largest is ≥ 1/2). */
export const SMALLEST_THREE_MAX_NORM = Math.sqrt(3) / 2;

/**
 * Upper bound of the rotation angle (radians) between a unit quaternion and its smallest-three
 * round trip on `bits` bits, float32 output included. `smallNorm` bounds the norm of the
 * three sent components of the quaternions in question (default and at most √3/2, which
 * holds for all of them; rotations known to stay near one axis allow less).
 *
 * Each of the three sent components is off by at most half a step s/2, so together by
 * d = (√3/2)·s. The rebuilt component f(a) = √(1 − |a|²) has gradient |a|/f; along the
 * segment between the true and the decoded triple |a| ≤ smallNorm + d = A and f ≥ √(1 − A²)
 * = F, so the rebuilt component is off by at most (A/F)·d. The chord between the
 * quaternions is then at most c = d·√(1 + (A/F)²) and the angle at most 4·asin(c/2).
 * π when the bound says nothing.
 */
export function smallestThreeMaxAngle(bits: number, smallNorm: number = SMALLEST_THREE_MAX_NORM): number {
  const d = (Math.sqrt(3) / 2) * smallestThreeStep(bits);
  const A = Math.min(SMALLEST_THREE_MAX_NORM, Math.max(0, smallNorm)) + d;
  if (A >= 1) return Math.PI;
  const F = Math.sqrt(1 - A * A);
  const chord = d * Math.sqrt(1 + (A / F) ** 2) + FLOAT32_CHORD;
  return chord >= 2 ? Math.PI : Math.min(Math.PI, 4 * Math.asin(chord / 2));
}

// Storing x, y, z, w as float32 moves the quaternion by at most 2^-24 of its length (per component, so ×2 in all).
const FLOAT32_CHORD = 2 ** -23;
