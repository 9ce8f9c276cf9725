/**
 * Bit packing and the dequantisation arithmetic. The decoder and the compressor both call
 * these functions, so the values the compressor measures are the values users decode.
 *
 * Bit order: LSB-first inside little-endian 32-bit words (equivalently LSB-first in a
 * byte stream). A value never needs more than two words.
 */
import { RAW_BITS } from './format.js';

/** 2^bits − 1 for bits 0..32. */
export const MAX_QUANT: Float64Array = (() => {
  const t = new Float64Array(33);
  for (let b = 0; b <= 32; b++) t[b] = 2 ** b - 1;
  return t;
})();

/** 1 / (2^bits − 1) for bits 1..32; 0 for 0 bits (a 0-bit component is its offset). Tables keep divisions out of the decoder. */
export const INV_MAX_QUANT: Float64Array = MAX_QUANT.map((max) => (max > 0 ? 1 / max : 0));

const F32 = new Float32Array(1);
const U32 = new Uint32Array(F32.buffer);

/** The float32 whose bit pattern is `bits` (an unsigned 32-bit integer). */
export function floatFromBits(bits: number): number {
  U32[0] = bits;
  return F32[0];
}

/** The bit pattern (unsigned 32-bit integer) of `value` rounded to float32. */
export function bitsFromFloat(value: number): number {
  F32[0] = value;
  return U32[0];
}

/**
 * Reads `bitCount` (0..32) bits at `bitOffset` from `words`. The caller guarantees the
 * bits lie inside `words` (validated once when a clip is opened).
 */
export function readBits(words: Uint32Array, bitOffset: number, bitCount: number): number {
  if (bitCount === 0) return 0;
  const w = bitOffset >>> 5;
  const shift = bitOffset & 31;
  let v = words[w] >>> shift;
  if (shift + bitCount > 32) v |= words[w + 1] << (32 - shift);
  return bitCount === 32 ? v >>> 0 : v & ((1 << bitCount) - 1);
}

/** A growable LSB-first bit stream writer. `finish()` returns the words written. */
export class BitWriter {
  private words: Uint32Array;
  private bitLength = 0;

  constructor(initialWords = 64) {
    this.words = new Uint32Array(Math.max(1, initialWords));
  }

  /** Bits written so far. */
  get length(): number {
    return this.bitLength;
  }

  /** Appends the low `bitCount` (0..32) bits of `value` (an unsigned integer). */
  write(value: number, bitCount: number): void {
    if (bitCount === 0) return;
    const end = this.bitLength + bitCount;
    if (((end + 31) >>> 5) + 1 > this.words.length) {
      const grown = new Uint32Array(Math.max(this.words.length * 2, ((end + 31) >>> 5) + 1));
      grown.set(this.words);
      this.words = grown;
    }
    const v = bitCount === 32 ? value >>> 0 : (value & ((1 << bitCount) - 1)) >>> 0;
    const w = this.bitLength >>> 5;
    const shift = this.bitLength & 31;
    this.words[w] |= v << shift;
    if (shift + bitCount > 32) this.words[w + 1] |= v >>> (32 - shift);
    this.bitLength = end;
  }

  /** Pads with zero bits to a whole number of bits `multiple` (8 for bytes, 32 for words). */
  align(multiple: number): void {
    const r = this.bitLength % multiple;
    if (r !== 0) this.write(0, multiple - r);
  }

  /** The whole 32-bit words written (the last one zero-padded). */
  finish(): Uint32Array {
    return this.words.slice(0, (this.bitLength + 31) >>> 5);
  }

  /** The bytes written (the last one zero-padded). */
  finishBytes(): Uint8Array {
    const words = this.finish();
    return new Uint8Array(words.buffer, 0, (this.bitLength + 7) >>> 3);
  }
}

/**
 * Quantises `value` to the nearest of `offset + q · scale` for q in 0..2^bits − 1.
 * `scale` 0 gives q = 0.
 */
export function quantizeToScale(value: number, offset: number, scale: number, bits: number): number {
  if (!(scale > 0)) return 0;
  const q = Math.round((value - offset) / scale);
  const max = MAX_QUANT[bits];
  // `q <= 0`, not `q < 0`: Math.round gives -0 just below the offset, and a code is never -0.
  return q <= 0 ? 0 : q > max ? max : q;
}

/**
 * Scale of one quantisation step for a component at `bits` (1..24): the segment extent
 * (`segExtentByte` / 255 of the clip extent) over 2^bits − 1, rounded to float32 (offsets
 * and steps are float32 by definition, so a decoder may cache them in a Float32Array).
 */
export function segmentStep(clipExtent: number, segExtentByte: number, bits: number): number {
  return Math.fround(segmentExtent(clipExtent, segExtentByte) * INV_MAX_QUANT[bits]);
}

/** A segment's extent of one component: `segExtentByte` / 255 of the clip extent. */
export function segmentExtent(clipExtent: number, segExtentByte: number): number {
  return (segExtentByte / 255) * clipExtent;
}

/**
 * Bits of a component of extent `extent` in a track whose widest component (`maxExtent`)
 * has `rate` bits: the fewest b with (2^b − 1) · maxExtent ≥ extent · (2^rate − 1), so its
 * step is no coarser than the widest one's. Basic arithmetic only (no log2): every engine
 * computes the same count, which fixes the bit layout.
 */
export function componentBits(rate: number, extent: number, maxExtent: number): number {
  const need = extent * MAX_QUANT[rate];
  let b = 0;
  while (b < rate && MAX_QUANT[b] * maxExtent < need) b++;
  return b;
}

/** A rotation clip range's minimum from its u16 code. */
export function rotationRangeMin(code: number): number {
  return code / 32767 - 1;
}

/** A rotation clip range's extent from its u16 code. */
export function rotationRangeExtent(code: number): number {
  return code / 32767;
}

/**
 * A rotation reference from its i16 codes, w ≥ 0 rebuilt in float64; xyzw written at
 * `out[o..o+3]`, each rounded to float32 (the rotation arithmetic that uses it is float32).
 */
export function decodeReference(x: number, y: number, z: number, out: Float64Array, o: number): void {
  const fx = x / 32767,
    fy = y / 32767,
    fz = z / 32767;
  const t = 1 - fx * fx - fy * fy - fz * fz;
  out[o] = Math.fround(fx);
  out[o + 1] = Math.fround(fy);
  out[o + 2] = Math.fround(fz);
  out[o + 3] = t > 0 ? Math.fround(Math.sqrt(t)) : 0;
}

/** Value at q = 0 inside a segment: clip minimum plus `segMinByte` / 255 of the clip extent. */
export function segmentOffset(clipMin: number, clipExtent: number, segMinByte: number): number {
  return Math.fround(clipMin + (segMinByte / 255) * clipExtent);
}

/** Value of a component that is constant inside a segment (rate 0): a 16-bit fraction of the clip range. */
export function segmentConstant(clipMin: number, clipExtent: number, q16: number): number {
  return Math.fround(clipMin + (q16 / 65535) * clipExtent);
}

/** Is `bits` the raw float32 rate. */
export function isRawRate(bits: number): boolean {
  return bits === RAW_BITS;
}

/**
 * Bits of each stored component of a track at `rate` (1..24) in a segment: the widest
 * component (by segment extent) gets `rate`, the others the fewest bits whose step is no
 * coarser. Written at `out[o..o+2]`; shared with the compressor.
 */
export function trackComponentBits(
  bytes: Uint8Array,
  rangeAt: number,
  rate: number,
  drop: number,
  clipRanges: Float64Array,
  ro: number,
  out: Uint8Array,
  o: number,
): void {
  const c0 = drop === 0 ? 1 : 0,
    c1 = drop <= 1 ? 2 : 1,
    c2 = drop <= 2 ? 3 : 2;
  const e0 = segmentExtent(clipRanges[ro + 2 * c0 + 1], bytes[rangeAt + 1]);
  const e1 = segmentExtent(clipRanges[ro + 2 * c1 + 1], bytes[rangeAt + 3]);
  const e2 = segmentExtent(clipRanges[ro + 2 * c2 + 1], bytes[rangeAt + 5]);
  const max = Math.max(e0, e1, e2);
  out[o] = componentBits(rate, e0, max);
  out[o + 1] = componentBits(rate, e1, max);
  out[o + 2] = componentBits(rate, e2, max);
}
