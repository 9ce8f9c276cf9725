/**
 * The adaptive binary range coder of the transport form (docs/transport.md): the decoding
 * half and the probability model shared with the encoder (compress/entropy-encoder.ts).
 *
 * Each binary decision has an 11-bit probability of a 0 that moves 1/32 of the way
 * towards the decoded bit. The range is a 32-bit unsigned integer renormalised a byte at a
 * time, so the stream is a byte sequence with no alignment.
 */
import { FORMAT_ERROR, FormatError } from './errors.js';

/** Probabilities are fractions of 2^PROB_BITS. Serialized: changing it changes every stream. */
export const PROB_BITS = 11;
/** A probability's starting value: one half. */
export const PROB_INIT = 1 << (PROB_BITS - 1);
/** A probability moves by 1 / 2^ADAPT_SHIFT of its distance to the coded bit. Serialized. */
export const ADAPT_SHIFT = 5;
/** The range is renormalised when it falls below 2^24. */
export const RANGE_TOP = 1 << 24;

/** `count` probabilities, each at one half. */
export function createProbs(count: number): Uint16Array {
  return new Uint16Array(count).fill(PROB_INIT);
}

/**
 * One side of the coder, so the transport layout (runtime/transport.ts) is written once for
 * both directions: the encoder codes the value it is given and returns it, the decoder
 * ignores the value and returns what it decodes.
 */
export interface BinaryCoder {
  /** True when encoding. */
  readonly encoding: boolean;
  /** Codes `bit` (0 or 1) with the adaptive probability `probs[index]`. */
  bit(probs: Uint16Array, index: number, bit: number): number;
  /** Codes the low `count` (0..16) bits of `value` at probability one half, most significant first. */
  direct(value: number, count: number): number;
}

/** The decoding side over `bytes[start, end)`. */
export class RangeDecoder implements BinaryCoder {
  readonly encoding = false;
  private range = 0xffffffff;
  private code = 0;
  private pos: number;
  /** Bytes read past the end (read as 0); any makes the stream truncated. */
  private overrun = 0;

  constructor(private readonly bytes: Uint8Array, start: number, private readonly end: number) {
    this.pos = start;
    // The encoder's first byte is always 0 (its carry slot before any output).
    if (this.next() !== 0) throw new FormatError(FORMAT_ERROR.BAD_VALUE, 'entropy-coded stream does not start with a 0 byte', start);
    for (let i = 0; i < 4; i++) this.code = this.code * 256 + this.next();
    // code < range holds from here on for every input, so no later step can overflow.
    if (this.code >= this.range) throw new FormatError(FORMAT_ERROR.BAD_VALUE, 'entropy-coded stream starts out of range', start + 1);
  }

  private next(): number {
    if (this.pos < this.end) return this.bytes[this.pos++];
    this.overrun++;
    return 0;
  }

  bit(probs: Uint16Array, index: number, _bit: number): number {
    const p = probs[index];
    const bound = (this.range >>> PROB_BITS) * p;
    let bit: number;
    if (this.code < bound) {
      this.range = bound;
      probs[index] = p + (((1 << PROB_BITS) - p) >>> ADAPT_SHIFT);
      bit = 0;
    } else {
      this.code -= bound;
      this.range -= bound;
      probs[index] = p - (p >>> ADAPT_SHIFT);
      bit = 1;
    }
    if (this.range < RANGE_TOP) {
      this.range *= 256;
      this.code = this.code * 256 + this.next();
    }
    return bit;
  }

  direct(_value: number, count: number): number {
    let v = 0;
    for (let i = 0; i < count; i++) {
      this.range = this.range >>> 1;
      let b = 0;
      if (this.code >= this.range) {
        this.code -= this.range;
        b = 1;
      }
      v = (v << 1) | b;
      if (this.range < RANGE_TOP) {
        this.range *= 256;
        this.code = this.code * 256 + this.next();
      }
    }
    return v;
  }

  /** Where the stream ended: throws if it read past `end` or left bytes unread. */
  finish(what: string): number {
    if (this.overrun > 0) throw new FormatError(FORMAT_ERROR.BAD_SECTION, `${what} is truncated (${this.overrun} bytes missing)`, this.end);
    return this.pos;
  }
}
