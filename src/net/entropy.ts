/**
 * Entropy coding of snapshot bodies: a binary range coder (LZMA-style, 12-bit adaptive
 * probabilities) over the same symbols as the plain delta code, with context modelling
 * from history both ends hold.
 *
 * The model a packet is coded with belongs to its baseline: every snapshot keeps an
 * {@link EntropyState} — the adaptive probabilities after its own packet, and the class
 * (bit length) of each slot's delta in that packet. A delta against baseline B starts from
 * B's state, so the sender and the receiver always start from the same model even when
 * packets are lost, and a bone's previous motion predicts the size of its next delta.
 *
 * Component delta d = code − baseline: class k = bit length of |d| (0 for d = 0) coded
 * relative to the predicted class (the slot's class in the baseline's packet, shifted by
 * log2 of the ratio of the two packets' baseline distances), then the sign and the k − 1
 * bits below the leading one sent as equiprobable bits.
 */
import { NET_ERROR, NetError, bitsRequired } from './bit-stream.js';
import { CODE_STRIDE } from './quantize.js';
import type { SnapshotSchema } from './schema.js';
import { boneCodesEqual } from './snapshot.js';

/** Bits of a probability (of a 0 bit). */
export const PROBABILITY_BITS = 12;
const PROBABILITY_ONE = 1 << PROBABILITY_BITS;
const PROBABILITY_HALF = PROBABILITY_ONE >>> 1;
/** Adaptation speed: each coded bit moves its probability 1/2^shift of the way. */
export const ADAPT_SHIFT = 5;
const TOP = 0x1000000;
const WORD = 0x100000000;

/**
 * One side of a symmetric range-coded description: on an encoder the calls code the given
 * bits and return them, on a decoder they ignore them and return what was decoded.
 */
export interface SnapshotBinaryCoder {
  readonly isWriting: boolean;
  /** One bit with the adaptive probability `probabilities[index]` (updated). */
  codeBit(bit: number, probabilities: Uint16Array, index: number): number;
  /** `bitCount` (0..30) equiprobable bits, most significant first. */
  codeDirect(value: number, bitCount: number): number;
}

/** Range encoder. {@link finish} returns the bytes; trailing zero bytes are left out. */
export class SnapshotRangeEncoder implements SnapshotBinaryCoder {
  readonly isWriting = true;
  private low = 0;
  private range = 0xffffffff;
  private cache = 0;
  private cacheSize = 1;
  private started = false;
  private bytes = new Uint8Array(64);
  private length = 0;

  codeBit(bit: number, probabilities: Uint16Array, index: number): number {
    const p = probabilities[index];
    const bound = (this.range >>> PROBABILITY_BITS) * p;
    if (bit === 0) {
      this.range = bound;
      probabilities[index] = p + ((PROBABILITY_ONE - p) >>> ADAPT_SHIFT);
    } else {
      this.low += bound;
      this.range -= bound;
      probabilities[index] = p - (p >>> ADAPT_SHIFT);
    }
    while (this.range < TOP) {
      this.range *= 256;
      this.shiftLow();
    }
    return bit;
  }

  codeDirect(value: number, bitCount: number): number {
    for (let i = bitCount - 1; i >= 0; i--) {
      this.range = Math.floor(this.range / 2);
      if (Math.floor(value / 2 ** i) % 2 === 1) this.low += this.range;
      while (this.range < TOP) {
        this.range *= 256;
        this.shiftLow();
      }
    }
    return value;
  }

  // Carry propagation as in LZMA: a byte is held back while a carry could still change it.
  private shiftLow(): void {
    if (this.low < 0xff000000 || this.low >= WORD) {
      const carry = this.low >= WORD ? 1 : 0;
      let temp = this.cache;
      do {
        this.emit((temp + carry) & 0xff);
        temp = 0xff;
      } while (--this.cacheSize !== 0);
      this.cache = Math.floor(this.low / TOP) & 0xff;
    }
    this.cacheSize++;
    this.low = (this.low % TOP) * 256;
  }

  private emit(byte: number): void {
    // The first byte is always 0 (nothing can carry into it): the decoder assumes it.
    if (!this.started) {
      this.started = true;
      return;
    }
    if (this.length === this.bytes.length) {
      const grown = new Uint8Array(this.bytes.length * 2);
      grown.set(this.bytes);
      this.bytes = grown;
    }
    this.bytes[this.length++] = byte;
  }

  /**
   * Ends the stream: picks the value in the final interval with the most trailing zero
   * bytes, flushes it, and drops trailing zero bytes (the decoder reads zeros past the end).
   * Returns a fresh array.
   */
  finish(): Uint8Array {
    for (let k = 0; k <= 4; k++) {
      const unit = 2 ** (32 - 8 * k);
      const v = Math.ceil(this.low / unit) * unit;
      if (v < this.low + this.range) {
        this.low = v;
        break;
      }
    }
    for (let i = 0; i < 5; i++) this.shiftLow();
    let n = this.length;
    while (n > 0 && this.bytes[n - 1] === 0) n--;
    return this.bytes.slice(0, n);
  }
}

/**
 * Range decoder over `bytes` (zeros past the end). Throws {@link NetError} `BAD_VALUE` when
 * the stream cannot have come from a {@link SnapshotRangeEncoder}.
 */
export class SnapshotRangeDecoder implements SnapshotBinaryCoder {
  readonly isWriting = false;
  private code = 0;
  private range = 0xffffffff;
  private position = 0;

  constructor(private readonly bytes: Uint8Array) {
    for (let i = 0; i < 4; i++) this.code = this.code * 256 + this.next();
    this.check();
  }

  private next(): number {
    const i = this.position++;
    return i < this.bytes.length ? this.bytes[i] : 0;
  }

  // A valid stream keeps code < range; anything else is damage.
  private check(): void {
    if (this.code >= this.range)
      throw new NetError(NET_ERROR.BAD_VALUE, 'entropy-coded body is corrupt', this.position * 8);
  }

  private normalize(): void {
    while (this.range < TOP) {
      this.range *= 256;
      this.code = this.code * 256 + this.next();
    }
  }

  codeBit(_bit: number, probabilities: Uint16Array, index: number): number {
    const p = probabilities[index];
    const bound = (this.range >>> PROBABILITY_BITS) * p;
    let bit: number;
    if (this.code < bound) {
      this.range = bound;
      probabilities[index] = p + ((PROBABILITY_ONE - p) >>> ADAPT_SHIFT);
      bit = 0;
    } else {
      this.code -= bound;
      this.range -= bound;
      probabilities[index] = p - (p >>> ADAPT_SHIFT);
      bit = 1;
    }
    this.normalize();
    this.check();
    return bit;
  }

  codeDirect(_value: number, bitCount: number): number {
    let value = 0;
    for (let i = 0; i < bitCount; i++) {
      this.range = Math.floor(this.range / 2);
      let bit = 0;
      if (this.code >= this.range) {
        this.code -= this.range;
        bit = 1;
      }
      value = value * 2 + bit;
      this.normalize();
      this.check();
    }
    return value;
  }

  /** Checks that every byte of the body was used (trailing garbage is damage). */
  finish(): void {
    if (this.position < this.bytes.length) {
      throw new NetError(
        NET_ERROR.BAD_VALUE,
        `${this.bytes.length - this.position} bytes left over after the entropy-coded body`,
        this.position * 8,
      );
    }
  }
}

/** Class (bit length of |d|) of a delta; 0 for 0. */
export function deltaClass(d: number): number {
  const a = d < 0 ? -d : d;
  return a === 0 ? 0 : 32 - Math.clz32(a);
}

/** A slot whose class in a snapshot's packet is unknown (absolute, or a new smallest-three index). */
export const UNKNOWN_CLASS = 255;

/** Modelled unary steps of a class's distance from its prediction; the rest is sent flat. */
const STEPS = 6;
const SET_SIZE = 2 + 2 * STEPS;
// Probability layout. Serialized in the sense that both ends must agree: never reorder.
const CHANGED = 0; // + 1 when the bone changed in the baseline's packet
const SAME_INDEX = 2;
const AT_DEFAULT = 3;
const SETS = 4; // then 10 sets: kind (0 rotation, 1 translation/scale) × context (0 first, 1 below, 2 on, 3 above its prediction, 4 unknown)
const CONTEXTS = 5;
const SIGN_FLIP = SETS + 2 * CONTEXTS * SET_SIZE; // per kind: the sign differs from the slot's previous one
const TOP_BIT = SIGN_FLIP + 2; // per kind × class (capped): the bit below the leading one
const TOP_BIT_CLASSES = 16;
const LEVEL = TOP_BIT + 2 * TOP_BIT_CLASSES; // per context (the bone's level in the baseline's packet, or unknown): a 3-bit tree
const LEVEL_BITS = 3;
const LEVEL_NODES = (1 << LEVEL_BITS) - 1;
/** A bone whose precision level in a snapshot's packet is unknown (absolute). */
export const UNKNOWN_LEVEL = 1 << LEVEL_BITS;
const PROBABILITY_COUNT = LEVEL + (UNKNOWN_LEVEL + 1) * LEVEL_NODES;

/**
 * The coding state a snapshot leaves for the packets that use it as their baseline. Owned
 * by the session's rings; {@link EntropyCodec.createState} allocates one.
 */
export interface EntropyState {
  readonly probabilities: Uint16Array;
  /** Per code slot: class of its delta in this snapshot's packet, or {@link UNKNOWN_CLASS}. */
  readonly classes: Uint8Array;
  /** Per code slot: sign of that delta (-1, 0 or 1; 0 when unknown). */
  readonly signs: Int8Array;
  /** Per bone: its precision level in this snapshot's packet (kept from the baseline's when unchanged), or {@link UNKNOWN_LEVEL}. */
  readonly levels: Uint8Array;
  /** Baseline distance of this snapshot's packet (0: absolute). */
  age: number;
}

/** Entropy-coded snapshot bodies for one schema. Allocation-free per packet. */
export class EntropyCodec {
  private readonly initial: EntropyState;

  constructor(readonly schema: SnapshotSchema) {
    this.initial = this.createState();
  }

  /** A fresh state: even probabilities, every class unknown. */
  createState(): EntropyState {
    return {
      probabilities: new Uint16Array(PROBABILITY_COUNT).fill(PROBABILITY_HALF),
      classes: new Uint8Array(this.schema.boneCount * CODE_STRIDE).fill(UNKNOWN_CLASS),
      signs: new Int8Array(this.schema.boneCount * CODE_STRIDE),
      levels: new Uint8Array(this.schema.boneCount).fill(UNKNOWN_LEVEL),
      age: 0,
    };
  }

  /**
   * Codes (or decodes into `codes`) one snapshot body — a delta against `baseline` with
   * `base` its state and `age` its distance, or absolute when `baseline` is null — and
   * writes the state it leaves into `out` (which must not be `base`).
   *
   * Absolute: per sent bone, an adaptive "at default" bit, then each sent slot flat on its
   * bit count. Delta: per sent bone an adaptive "changed" bit (context: did it change in
   * the baseline's packet); per changed bone an adaptive "same smallest-three index" bit
   * (else index and components flat), then each component delta as class, sign and low bits.
   * A decoder throws {@link NetError} `BAD_VALUE` for a code out of range or a corrupt stream.
   */
  serialize(
    coder: SnapshotBinaryCoder,
    codes: Int32Array,
    baseline: Int32Array | null,
    base: EntropyState | null,
    age: number,
    out: EntropyState,
    levels: Uint8Array | null = null,
  ): void {
    const s = this.schema;
    const probs = out.probabilities;
    probs.set(baseline && base ? base.probabilities : this.initial.probabilities);
    const bits = s.codeBits,
      sent = s.sentBones;
    if (!baseline || !base) {
      const def = s.defaultCodes;
      for (let j = 0; j < sent.length; j++) {
        const b = sent[j],
          c = b * CODE_STRIDE;
        const atDefault =
          coder.codeBit(coder.isWriting && boneCodesEqual(s, b, codes, def) ? 1 : 0, probs, AT_DEFAULT) === 1;
        for (let i = 0; i < CODE_STRIDE; i++) {
          if (bits[c + i] > 0) codes[c + i] = atDefault ? def[c + i] : coder.codeDirect(codes[c + i], bits[c + i]);
        }
      }
      this.record(codes, null, null, 0, out, null);
      return;
    }
    const outLevels = out.levels;
    const history = base.classes;
    const shift = base.age > 0 && age > 0 ? Math.round(Math.log2(age / base.age)) : 0;
    for (let j = 0; j < sent.length; j++) {
      const b = sent[j],
        c = b * CODE_STRIDE;
      let movedBefore = 0;
      for (let i = 0; i < CODE_STRIDE; i++) if (bits[c + i] > 0 && history[c + i] !== 0) movedBefore = 1;
      const changed = coder.codeBit(
        coder.isWriting && !boneCodesEqual(s, b, codes, baseline) ? 1 : 0,
        probs,
        CHANGED + movedBefore,
      );
      if (!changed) {
        for (let i = 0; i < CODE_STRIDE; i++) if (bits[c + i] > 0) codes[c + i] = baseline[c + i];
        outLevels[b] = base.levels[b];
        continue;
      }
      // Precision level: deltas of this bone are whole numbers of 2^level codes.
      const level = codeLevel(coder, levels ? levels[b] : 0, probs, LEVEL + base.levels[b] * LEVEL_NODES);
      outLevels[b] = level;
      let first = 4;
      if (bits[c] > 0) {
        first = 1;
        if (coder.codeBit(codes[c] === baseline[c] ? 1 : 0, probs, SAME_INDEX) === 1) {
          codes[c] = baseline[c];
        } else {
          codes[c] = coder.codeDirect(codes[c], bits[c]);
          for (let i = 1; i <= 3; i++) codes[c + i] = coder.codeDirect(codes[c + i], bits[c + i]);
          first = 4;
        }
      }
      let context = 0,
        previousKind = -1;
      for (let i = first; i < CODE_STRIDE; i++) {
        const n = bits[c + i];
        if (n === 0) continue;
        const kind = i < 4 ? 0 : 1;
        if (kind !== previousKind) {
          context = 0;
          previousKind = kind;
        }
        const h = history[c + i];
        // The coded value is the delta in steps of 2^l codes (l: the level, below the code's bits).
        const l = level < n ? level : n - 1,
          unit = 2 ** l,
          top = n - l;
        let predicted = -1;
        if (h !== UNKNOWN_CLASS) predicted = h === 0 ? 0 : Math.min(top, Math.max(1, h + shift - l));
        const set = SETS + (kind * CONTEXTS + (predicted < 0 ? CONTEXTS - 1 : context)) * SET_SIZE;
        const guess = predicted < 0 ? top >>> 1 : predicted;
        const fine = codes[c + i] - baseline[c + i];
        const d = fine / unit;
        if (coder.isWriting && !Number.isInteger(d))
          throw new NetError(NET_ERROR.BAD_ARGUMENT, `delta ${fine} is not a whole number of ${unit}-code steps`);
        const k = codeClass(coder, deltaClass(d), guess, top, probs, set);
        let value = baseline[c + i];
        if (k > 0) {
          // Motion tends to keep its direction: code the sign as "flipped since last time".
          const previousSign = base.signs[c + i];
          const negative =
            previousSign === 0
              ? coder.codeDirect(d < 0 ? 1 : 0, 1) === 1
              : (coder.codeBit(d < 0 === previousSign < 0 ? 0 : 1, probs, SIGN_FLIP + kind) === 1) !== previousSign < 0;
          const a = d < 0 ? -d : d;
          let magnitude = 2 ** (k - 1);
          if (k >= 2) {
            const top = coder.codeBit(
              a >= magnitude + 2 ** (k - 2) ? 1 : 0,
              probs,
              TOP_BIT + kind * TOP_BIT_CLASSES + Math.min(k, TOP_BIT_CLASSES - 1),
            );
            magnitude += top * 2 ** (k - 2) + coder.codeDirect(a % 2 ** (k - 2), k - 2);
          }
          value += (negative ? -magnitude : magnitude) * unit;
        }
        if (value < 0 || value > 2 ** n - 1)
          throw new NetError(NET_ERROR.BAD_VALUE, `entropy-coded delta leaves the code range 0..${2 ** n - 1}`);
        codes[c + i] = value;
        if (predicted >= 0) context = k < predicted ? 1 : k === predicted ? 2 : 3;
      }
    }
    this.record(codes, baseline, base, age, out, outLevels);
  }

  /**
   * Writes the classes and age `codes` leave (coded against `baseline` at distance `age`,
   * or absolute) into `out`; with `base` given, also starts `out`'s probabilities from it
   * (a plainly coded packet adapts nothing). Used for packets coded without entropy, so
   * that any snapshot can be the baseline of an entropy-coded one.
   */
  recordPlain(
    codes: Int32Array,
    baseline: Int32Array | null,
    base: EntropyState | null,
    age: number,
    out: EntropyState,
  ): void {
    out.probabilities.set(baseline && base ? base.probabilities : this.initial.probabilities);
    this.record(codes, baseline, base, age, out, null);
  }

  // `levels`: already in `out` (entropy-coded); null: level 0 for changed bones (plain).
  private record(
    codes: Int32Array,
    baseline: Int32Array | null,
    base: EntropyState | null,
    age: number,
    out: EntropyState,
    levels: Uint8Array | null,
  ): void {
    const s = this.schema;
    const classes = out.classes,
      signs = out.signs;
    out.age = baseline ? age : 0;
    if (!baseline) {
      classes.fill(UNKNOWN_CLASS);
      signs.fill(0);
      out.levels.fill(UNKNOWN_LEVEL);
      return;
    }
    if (!levels)
      for (let b = 0; b < s.boneCount; b++)
        out.levels[b] = !boneCodesEqual(s, b, codes, baseline) ? 0 : base ? base.levels[b] : UNKNOWN_LEVEL;
    for (let b = 0; b < s.boneCount; b++) {
      const c = b * CODE_STRIDE;
      const newIndex = s.codeBits[c] > 0 && codes[c] !== baseline[c];
      for (let i = 0; i < CODE_STRIDE; i++) {
        const d = codes[c + i] - baseline[c + i];
        const unknown = s.codeBits[c + i] === 0 || (i < 4 && newIndex);
        classes[c + i] = s.codeBits[c + i] === 0 ? 0 : unknown ? UNKNOWN_CLASS : deltaClass(d);
        signs[c + i] = unknown ? 0 : Math.sign(d);
      }
    }
  }
}

/** Codes a precision level (0..7) as a 3-bit tree of adaptive bits at `probs[at..]`, most significant first. */
function codeLevel(coder: SnapshotBinaryCoder, level: number, probs: Uint16Array, at: number): number {
  let node = 1;
  for (let i = LEVEL_BITS - 1; i >= 0; i--) node = node * 2 + coder.codeBit((level >>> i) & 1, probs, at + node - 1);
  return node - (1 << LEVEL_BITS);
}

/**
 * Codes class `k` (0..max) given a predicted class `guess` (0..max): "equal?", then "above?"
 * (skipped when only one side is possible), then the distance − 1 in unary over {@link STEPS}
 * adaptive bits and flat bits beyond. Returns the class.
 */
function codeClass(
  coder: SnapshotBinaryCoder,
  k: number,
  guess: number,
  max: number,
  probs: Uint16Array,
  set: number,
): number {
  if (coder.codeBit(k === guess ? 0 : 1, probs, set) === 0) return guess;
  const canUp = guess < max,
    canDown = guess > 0;
  if (!canUp && !canDown) throw new NetError(NET_ERROR.BAD_VALUE, 'entropy-coded class has nowhere to go');
  const up = canUp && canDown ? coder.codeBit(k > guess ? 1 : 0, probs, set + 1) === 1 : canUp;
  const maxDistance = up ? max - guess - 1 : guess - 1; // distance − 1 lies in 0..maxDistance
  const m = up ? k - guess - 1 : guess - k - 1;
  const steps = set + 2 + (up ? 0 : STEPS);
  let j = 0;
  for (; j < STEPS && j < maxDistance; j++) if (coder.codeBit(m > j ? 1 : 0, probs, steps + j) === 0) break;
  let distance = j;
  if (j === STEPS && STEPS < maxDistance) {
    distance = STEPS + coder.codeDirect(m - STEPS, bitsRequired(maxDistance - STEPS));
    if (distance > maxDistance) throw new NetError(NET_ERROR.BAD_VALUE, 'entropy-coded class out of range');
  }
  return up ? guess + 1 + distance : guess - 1 - distance;
}
