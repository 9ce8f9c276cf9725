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
  return q < 0 ? 0 : q > max ? max : q;
}

/**
 * Scale of one quantisation step for a component at `bits` (1..24): the segment extent
 * (`segExtentByte` / 255 of the clip extent) over 2^bits − 1.
 */
export function segmentStep(clipExtent: number, segExtentByte: number, bits: number): number {
  return ((segExtentByte / 255) * clipExtent) / MAX_QUANT[bits];
}

/** Value at q = 0 inside a segment: clip minimum plus `segMinByte` / 255 of the clip extent. */
export function segmentOffset(clipMin: number, clipExtent: number, segMinByte: number): number {
  return clipMin + (segMinByte / 255) * clipExtent;
}

/** Value of a component that is constant inside a segment (rate 0): a 16-bit fraction of the clip range. */
export function segmentConstant(clipMin: number, clipExtent: number, q16: number): number {
  return clipMin + (q16 / 65535) * clipExtent;
}

/** Is `bits` the raw float32 rate. */
export function isRawRate(bits: number): boolean {
  return bits === RAW_BITS;
}
