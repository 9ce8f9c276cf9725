/**
 * The encoding half of the transport form's binary range coder (the decoding half and the
 * shared probability model are in runtime/entropy-decoder.ts).
 */
import { ADAPT_SHIFT, PROB_BITS, RANGE_TOP, type BinaryCoder } from '../runtime/entropy-decoder.js';

const TWO_32 = 4294967296;

/** Encodes binary decisions into a growing byte buffer; `finish()` returns the stream. */
export class RangeEncoder implements BinaryCoder {
  readonly encoding = true;
  private low = 0; // up to 2^32 + 2^32: a carry pending in bit 32
  private range = 0xffffffff;
  private cache = 0;
  private cacheSize = 1;
  private out: Uint8Array;
  private length = 0;

  constructor(initialBytes = 1024) {
    this.out = new Uint8Array(Math.max(16, initialBytes));
  }

  bit(probs: Uint16Array, index: number, bit: number): number {
    const p = probs[index];
    const bound = (this.range >>> PROB_BITS) * p;
    if (bit === 0) {
      this.range = bound;
      probs[index] = p + (((1 << PROB_BITS) - p) >>> ADAPT_SHIFT);
    } else {
      this.low += bound;
      this.range -= bound;
      probs[index] = p - (p >>> ADAPT_SHIFT);
    }
    while (this.range < RANGE_TOP) {
      this.range *= 256;
      this.shiftLow();
    }
    return bit;
  }

  direct(value: number, count: number): number {
    for (let i = count - 1; i >= 0; i--) {
      this.range = this.range >>> 1;
      if ((value >>> i) & 1) this.low += this.range;
      while (this.range < RANGE_TOP) {
        this.range *= 256;
        this.shiftLow();
      }
    }
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

  private shiftLow(): void {
    if (this.low < 0xff000000 || this.low >= TWO_32) {
      const carry = this.low >= TWO_32 ? 1 : 0;
      let temp = this.cache;
      do {
        this.push((temp + carry) & 0xff);
        temp = 0xff;
      } while (--this.cacheSize !== 0);
      this.cache = Math.floor((this.low % TWO_32) / RANGE_TOP);
    }
    this.cacheSize++;
    this.low = (this.low % RANGE_TOP) * 256;
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
