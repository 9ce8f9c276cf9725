/**
 * The encoding half of the transport form's binary range coder (the decoding half and the
 * shared probability model are in runtime/entropy-decoder.ts; each method here mirrors
 * the decoder's).
 */
import {
  CLASS_ESCAPE,
  NEXT0,
  NEXT1,
  PROB_BITS,
  PROB_MASK,
  RANGE_START,
  RANGE_TOP,
  type BinaryCoder,
} from '../runtime/entropy-decoder.js';

const TWO_32 = 4294967296;
const TWO_24 = 16777216; // low is a 32-bit window: its top byte is bits 24 … 31

/** Encodes binary decisions into a growing byte buffer; `finish()` returns the stream. */
export class RangeEncoder implements BinaryCoder {
  readonly encoding = true;
  private low = 0; // below 2^33: a carry pending in bit 32
  private range = RANGE_START;
  private cache = 0;
  private cacheSize = 1;
  private out: Uint8Array;
  private length = 0;

  constructor(initialBytes = 1024) {
    this.out = new Uint8Array(Math.max(16, initialBytes));
  }

  bit(probs: Uint16Array, index: number, bit: number): number {
    const st = probs[index];
    const bound = (this.range >>> PROB_BITS) * (st & PROB_MASK);
    if (bit === 0) {
      this.range = bound;
      probs[index] = NEXT0[st];
    } else {
      this.low += bound;
      this.range -= bound;
      probs[index] = NEXT1[st];
    }
    this.normalize();
    return bit;
  }

  direct(value: number, count: number): number {
    if (count === 0) return value;
    this.range = this.range >>> count;
    this.low += value * this.range;
    this.normalize();
    return value;
  }

  tree(probs: Uint16Array, base: number, bits: number, value: number): number {
    let node = 1;
    for (let i = bits - 1; i >= 0; i--) {
      const b = (value >>> i) & 1;
      this.bit(probs, base + node, b);
      node = (node << 1) | b;
    }
    return value;
  }

  signed(probs: Uint16Array, base: number, value: number, prevSign: number): number {
    const mag = value < 0 ? -value : value;
    const cls = 32 - Math.clz32(mag);
    this.tree(probs, base, 4, cls < CLASS_ESCAPE ? cls : CLASS_ESCAPE);
    if (cls >= CLASS_ESCAPE) this.tree(probs, base + 16, 4, cls - CLASS_ESCAPE);
    if (cls === 0) return 0;
    const rest = cls - 1;
    if (rest > 16) {
      this.direct((mag >>> 16) & ((1 << (rest - 16)) - 1), rest - 16);
      this.direct(mag & 0xffff, 16);
    } else {
      this.direct(mag & ((1 << rest) - 1), rest);
    }
    this.bit(probs, base + 32 + prevSign, value < 0 ? 1 : 0);
    return value;
  }

  /** Bytes written so far (the last few still pending inside the coder). */
  get size(): number {
    return this.length + this.cacheSize;
  }

  /** Flushes the coder and returns the stream. */
  finish(): Uint8Array {
    for (let i = 0; i < 5; i++) this.shiftLow();
    return this.out.slice(0, this.length);
  }

  private normalize(): void {
    while (this.range < RANGE_TOP) {
      this.range *= 256;
      this.shiftLow();
    }
  }

  private shiftLow(): void {
    if (this.low < 0xff000000 || this.low >= TWO_32) {
      const carry = this.low >= TWO_32 ? 1 : 0;
      let temp = this.cache;
      do {
        this.push((temp + carry) & 0xff);
        temp = 0xff;
      } while (--this.cacheSize !== 0);
      this.cache = Math.floor((this.low % TWO_32) / TWO_24);
    }
    this.cacheSize++;
    this.low = (this.low % TWO_24) * 256;
  }

  private push(byte: number): void {
    if (this.length === this.out.length) {
      const grown = new Uint8Array(this.out.length * 2);
      grown.set(this.out);
      this.out = grown;
    }
    this.out[this.length++] = byte;
  }
}
