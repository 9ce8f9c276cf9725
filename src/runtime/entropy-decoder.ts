/**
 * The adaptive binary range coder of the transport form (docs/transport.md): the decoding
 * half and the probability model shared with the encoder (compress/entropy-encoder.ts).
 *
 * Each binary decision has a state: an 11-bit probability of a 0 (low bits) and how many
 * times it has been used (bits 11–14, up to 15). The probability moves 1/2, 1/4, 1/4, 1/8
 * … of the way towards each coded bit, down to 1/32 after 15 uses (about 1/(n + 2), the
 * rate of a count, while the state is young), and stays within [31, 2017] / 2048 so every
 * decision costs at least 0.022 bits. The range is a 32-bit unsigned integer renormalised
 * a byte at a time, so the stream is a byte sequence with no alignment.
 */
import { FormatError } from './errors.js';

/** Probabilities are fractions of 2^PROB_BITS. Serialized: changing it changes every stream. */
export const PROB_BITS = 11;
/** A probability's starting value: one half. */
export const PROB_INIT = 1 << (PROB_BITS - 1);
/** Mask of the probability inside a state. */
export const PROB_MASK = (1 << PROB_BITS) - 1;
/** Least and largest probability of a 0. */
export const PROB_MIN = 31,
  PROB_MAX = (1 << PROB_BITS) - 31;
/** A state's probability moves by 1 / 2^ADAPT_SHIFT[uses] of its distance to the coded bit. Serialized. */
export const ADAPT_SHIFT: Uint8Array = new Uint8Array([1, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 4, 4, 4, 4, 5]);
/** The state after coding a 0 (`next0`) or a 1 (`next1`), indexed by the state. */
export const NEXT0: Uint16Array = new Uint16Array(1 << 15);
export const NEXT1: Uint16Array = new Uint16Array(1 << 15);
for (let n = 0; n < 16; n++) {
  const shift = ADAPT_SHIFT[n],
    uses = (n < 15 ? n + 1 : 15) << PROB_BITS;
  for (let p = 0; p <= PROB_MASK; p++) {
    const p0 = p + (((1 << PROB_BITS) - p) >>> shift),
      p1 = p - (p >>> shift);
    NEXT0[(n << PROB_BITS) | p] = uses | (p0 > PROB_MAX ? PROB_MAX : p0 < PROB_MIN ? PROB_MIN : p0);
    NEXT1[(n << PROB_BITS) | p] = uses | (p1 < PROB_MIN ? PROB_MIN : p1 > PROB_MAX ? PROB_MAX : p1);
  }
}
/**
 * The range starts at {@link RANGE_START} = 2^31 − 1 and is renormalised (× 256) when it
 * falls below 2^23, so range, code and every product stay below 2^31: the decoder's
 * arithmetic is int32 throughout (one bit of precision less than a 32-bit range).
 */
export const RANGE_TOP = 1 << 23;
/** The range before the first decision. */
export const RANGE_START = 0x7fffffff;
/** Largest magnitude class (bit length) of a signed value: magnitudes stay below 2^25. */
export const MAX_CLASS = 25;
/** Magnitude classes from this one on are coded as it plus a second 4-bit tree. */
export const CLASS_ESCAPE = 15;
/**
 * Probabilities of one signed-value context: 16 for the magnitude-class tree, 16 for the
 * escaped classes' tree, 3 for the sign by the previous sign.
 */
export const SIGNED_BLOCK = 35;

/** `count` probabilities, each at one half. */
export function createProbs(count: number): Uint16Array {
  return new Uint16Array(count).fill(PROB_INIT);
}

/**
 * One side of the coder, so the transport layout (runtime/transport.ts) is written once for
 * both directions: the encoder codes the value it is given and returns it, the decoder
 * ignores the value and returns what it decodes. The decoder implements each method with
 * its state in locals (the load-time hot path); the encoder mirrors it plainly.
 */
export interface BinaryCoder {
  /** True when encoding. */
  readonly encoding: boolean;
  /** Codes `bit` (0 or 1) with the adaptive probability `probs[index]`. */
  bit(probs: Uint16Array, index: number, bit: number): number;
  /** Codes `value` (0 … 2^count − 1, count 0 … 16) as one uniform symbol. */
  direct(value: number, count: number): number;
  /** Codes `value` (0 … 2^bits − 1) MSB first with the binary tree of probabilities at `probs[base + 1 …]`. */
  tree(probs: Uint16Array, base: number, bits: number, value: number): number;
  /**
   * Codes a signed integer of magnitude below 2^25 in the context at `probs[base …]`
   * ({@link SIGNED_BLOCK} probabilities): its magnitude class (bit length) as a 4-bit tree,
   * classes from {@link CLASS_ESCAPE} on with a second one; the bits below the leading 1
   * uniform (adaptive coding saves 0.02 % there); then the sign by `prevSign`
   * (0 none, 1 positive, 2 negative). `at` is the byte to name in errors.
   */
  signed(probs: Uint16Array, base: number, value: number, prevSign: number, at: number): number;
}

/** The decoding side over `bytes[start, end)`. */
export class RangeDecoder implements BinaryCoder {
  readonly encoding = false;
  private range = RANGE_START;
  private code = 0;
  /** Next byte to read; bytes past `end` read as 0, and `finish` then reports truncation. */
  private pos: number;

  constructor(
    private readonly bytes: Uint8Array,
    start: number,
    private readonly end: number,
  ) {
    this.pos = start + 5;
    // The encoder's first byte is always 0 (its carry slot before any output).
    if (start >= end) throw new FormatError('BAD_SECTION', 'entropy-coded stream is empty', start);
    if (bytes[start] !== 0)
      throw new FormatError('BAD_VALUE', 'entropy-coded stream does not start with a 0 byte', start);
    for (let i = 1; i < 5; i++) this.code = this.code * 256 + (start + i < end ? bytes[start + i] : 0);
    // code < range holds from here on for every input, so no later step can overflow.
    if (this.code >= this.range)
      throw new FormatError('BAD_VALUE', 'entropy-coded stream starts out of range', start + 1);
  }

  bit(probs: Uint16Array, index: number, _bit: number): number {
    const st = probs[index];
    let range = this.range,
      code = this.code,
      bit = 0;
    const bound = (range >> PROB_BITS) * (st & PROB_MASK);
    if (code < bound) {
      range = bound;
      probs[index] = NEXT0[st];
    } else {
      code -= bound;
      range -= bound;
      probs[index] = NEXT1[st];
      bit = 1;
    }
    if (range < RANGE_TOP) {
      range <<= 8;
      code = (code << 8) | (this.pos < this.end ? this.bytes[this.pos] : 0);
      this.pos++;
    }
    this.range = range;
    this.code = code;
    return bit;
  }

  direct(_value: number, count: number): number {
    if (count === 0) return 0;
    let range = this.range >>> count,
      code = this.code;
    const v = (code / range) | 0;
    if (v >= 1 << count)
      throw new FormatError(
        'BAD_VALUE',
        'entropy-coded stream holds an impossible value',
        Math.min(this.pos, this.end),
      );
    code -= v * range;
    while (range < RANGE_TOP) {
      range <<= 8;
      code = (code << 8) | (this.pos < this.end ? this.bytes[this.pos] : 0);
      this.pos++;
    }
    this.range = range;
    this.code = code;
    return v;
  }

  tree(probs: Uint16Array, base: number, bits: number, _value: number): number {
    let range = this.range,
      code = this.code,
      pos = this.pos,
      node = 1;
    const bytes = this.bytes,
      end = this.end;
    for (let i = 0; i < bits; i++) {
      const idx = base + node,
        st = probs[idx];
      const bound = (range >> PROB_BITS) * (st & PROB_MASK);
      if (code < bound) {
        range = bound;
        probs[idx] = NEXT0[st];
        node <<= 1;
      } else {
        code -= bound;
        range -= bound;
        probs[idx] = NEXT1[st];
        node = (node << 1) | 1;
      }
      if (range < RANGE_TOP) {
        range <<= 8;
        code = (code << 8) | (pos < end ? bytes[pos] : 0);
        pos++;
      }
    }
    this.range = range;
    this.code = code;
    this.pos = pos;
    return node - (1 << bits);
  }

  signed(probs: Uint16Array, base: number, _value: number, prevSign: number, at: number): number {
    // The hot path of a load: tree, uniform bits and sign written out with the state in locals.
    let range = this.range,
      code = this.code,
      pos = this.pos,
      node = 1;
    const bytes = this.bytes,
      end = this.end;
    for (let i = 0; i < 4; i++) {
      const idx = base + node,
        st = probs[idx];
      const bound = (range >> PROB_BITS) * (st & PROB_MASK);
      if (code < bound) {
        range = bound;
        probs[idx] = NEXT0[st];
        node <<= 1;
      } else {
        code -= bound;
        range -= bound;
        probs[idx] = NEXT1[st];
        node = (node << 1) | 1;
      }
      if (range < RANGE_TOP) {
        range <<= 8;
        code = (code << 8) | (pos < end ? bytes[pos] : 0);
        pos++;
      }
    }
    let cls = node - 16;
    if (cls === 0) {
      this.range = range;
      this.code = code;
      this.pos = pos;
      return 0;
    }
    if (cls === CLASS_ESCAPE) {
      this.range = range;
      this.code = code;
      this.pos = pos;
      cls += this.tree(probs, base + 16, 4, 0);
      if (cls > MAX_CLASS) throw new FormatError('BAD_VALUE', `magnitude class ${cls} (at most ${MAX_CLASS})`, at);
      range = this.range;
      code = this.code;
      pos = this.pos;
    }
    // The bits below the leading 1 as one uniform symbol (two for more than 16 bits).
    let m = 1,
      rest = cls - 1;
    while (rest > 0) {
      const n = rest > 16 ? rest - 16 : rest;
      range = range >>> n;
      const v = (code / range) | 0;
      if (v >= 1 << n)
        throw new FormatError('BAD_VALUE', 'entropy-coded stream holds an impossible value', Math.min(pos, end));
      code -= v * range;
      while (range < RANGE_TOP) {
        range <<= 8;
        code = (code << 8) | (pos < end ? bytes[pos] : 0);
        pos++;
      }
      m = m * (1 << n) + v;
      rest -= n;
    }
    const idx = base + 32 + prevSign,
      st = probs[idx];
    const bound = (range >> PROB_BITS) * (st & PROB_MASK);
    let negative = false;
    if (code < bound) {
      range = bound;
      probs[idx] = NEXT0[st];
    } else {
      code -= bound;
      range -= bound;
      probs[idx] = NEXT1[st];
      negative = true;
    }
    if (range < RANGE_TOP) {
      range <<= 8;
      code = (code << 8) | (pos < end ? bytes[pos] : 0);
      pos++;
    }
    this.range = range;
    this.code = code;
    this.pos = pos;
    return negative ? -m : m;
  }

  /**
   * Decodes keys 1 … keys − 1 of one stored component into `q[base + k]`: the loop of
   * `codeComponent` in transport.ts (prediction, clamp, context, signed value, range
   * check) fused with the state in locals, as the load-time hot path. The round-trip tests
   * hold the two together. Returns the last magnitude class.
   */
  residuals(
    probs: Uint16Array,
    ctxBase: number,
    classes: number,
    q: Float64Array,
    base: number,
    keys: number,
    max: number,
    linear: boolean,
    qLast: number,
    cls: number,
    at: number,
  ): number {
    let range = this.range,
      code = this.code,
      pos = this.pos,
      sign = 0;
    const bytes = this.bytes,
      end = this.end;
    let q1 = q[base],
      q2 = 0;
    for (let k = 1; k < keys; k++) {
      let pred = !linear ? q1 : k > 1 ? 2 * q1 - q2 : qLast === qLast ? Math.round(2 * q1 - qLast) : q1;
      pred = pred < 0 ? 0 : pred > max ? max : pred;
      const block = (ctxBase + (cls < classes ? cls : classes - 1)) * SIGNED_BLOCK;
      // The class: a 4-bit tree, and a second one after the escape.
      let c = 0,
        tb = block;
      for (;;) {
        let node = 1;
        for (let i = 0; i < 4; i++) {
          const idx = tb + node,
            st = probs[idx];
          const bound = (range >> PROB_BITS) * (st & PROB_MASK);
          if (code < bound) {
            range = bound;
            probs[idx] = NEXT0[st];
            node <<= 1;
          } else {
            code -= bound;
            range -= bound;
            probs[idx] = NEXT1[st];
            node = (node << 1) | 1;
          }
          if (range < RANGE_TOP) {
            range <<= 8;
            code = (code << 8) | (pos < end ? bytes[pos] : 0);
            pos++;
          }
        }
        c += node - 16;
        if (c !== CLASS_ESCAPE || tb !== block) break;
        tb = block + 16;
      }
      let r = 0;
      if (c !== 0) {
        if (c > MAX_CLASS) throw new FormatError('BAD_VALUE', `magnitude class ${c} (at most ${MAX_CLASS})`, at);
        let m = 1,
          rest = c - 1;
        while (rest > 0) {
          const n = rest > 16 ? rest - 16 : rest;
          range = range >>> n;
          const v = (code / range) | 0;
          if (v >= 1 << n)
            throw new FormatError('BAD_VALUE', 'entropy-coded stream holds an impossible value', Math.min(pos, end));
          code -= v * range;
          while (range < RANGE_TOP) {
            range <<= 8;
            code = (code << 8) | (pos < end ? bytes[pos] : 0);
            pos++;
          }
          m = m * (1 << n) + v;
          rest -= n;
        }
        const idx = block + 32 + sign,
          st = probs[idx];
        const bound = (range >> PROB_BITS) * (st & PROB_MASK);
        if (code < bound) {
          range = bound;
          probs[idx] = NEXT0[st];
          r = m;
        } else {
          code -= bound;
          range -= bound;
          probs[idx] = NEXT1[st];
          r = -m;
        }
        if (range < RANGE_TOP) {
          range <<= 8;
          code = (code << 8) | (pos < end ? bytes[pos] : 0);
          pos++;
        }
      }
      const v = pred + r;
      if (v < 0 || v > max) throw new FormatError('BAD_VALUE', `key value ${v} outside 0..${max}`, at);
      q[base + k] = v;
      q2 = q1;
      q1 = v;
      cls = c;
      sign = r === 0 ? 0 : r > 0 ? 1 : 2;
    }
    this.range = range;
    this.code = code;
    this.pos = pos;
    return cls;
  }

  /** Where the stream ended; throws if it read past `end`. */
  finish(what: string): number {
    if (this.pos > this.end)
      throw new FormatError('BAD_SECTION', `${what} is truncated (${this.pos - this.end} bytes missing)`, this.end);
    return this.pos;
  }
}
