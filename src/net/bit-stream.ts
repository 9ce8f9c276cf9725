/**
 * Symmetric bit streams for network messages: one `serialize` function describes a message
 * and runs over a {@link WriteStream} to pack it or over a {@link ReadStream} to unpack it,
 * so the writer and the reader cannot drift apart. Every `serialize*` call takes the value
 * to write and returns the value read (the writer returns what the reader will get back),
 * so a message is described as `x = stream.serializeInt(x, 0, 9)`.
 *
 * Bit order is runtime/bits.ts's: LSB-first inside little-endian words. Reads are bounds
 * checked and fail with a {@link NetError}; nothing here allocates per value.
 */
import { BonepressError } from '../shared/errors.js';
import { BitWriter, MAX_QUANT, bitsFromFloat, floatFromBits, quantizeToScale, readBits } from '../runtime/bits.js';

/**
 * Why a network message was rejected. Serialized in messages and JSON output: never
 * rename a code.
 */
export const NET_ERROR = {
  /** The packet ends before the message does. */
  PACKET_TRUNCATED: 'PACKET_TRUNCATED',
  /** A field holds a value its description does not allow (out of range, bad padding, bytes left over). */
  BAD_VALUE: 'BAD_VALUE',
  /** A delta names a baseline snapshot the receiver does not hold (any more). */
  UNKNOWN_BASELINE: 'UNKNOWN_BASELINE',
  /** The packet's check bits do not match its contents (corruption, or another schema). */
  BAD_CHECKSUM: 'BAD_CHECKSUM',
  /** A caller passed something the codec cannot work with (a schema/pose mismatch, a bad option). */
  BAD_ARGUMENT: 'BAD_ARGUMENT',
} as const;
/** A {@link NET_ERROR} code. */
export type NetErrorCode = (typeof NET_ERROR)[keyof typeof NET_ERROR];

/**
 * A packet or a call the network codec rejects. `bitOffset` is where in the packet the
 * problem was found (-1 when it is not a place in a packet).
 */
export class NetError extends BonepressError {
  override readonly name = 'NetError';
  declare readonly code: NetErrorCode;
  constructor(
    code: NetErrorCode,
    message: string,
    readonly bitOffset = -1,
  ) {
    super(code, bitOffset >= 0 ? `${message} (at bit ${bitOffset})` : message);
  }
}

/** Bits needed to hold every integer in `0..range` (0 for a range of 0). `range` ≤ 2^32 − 1. */
export function bitsRequired(range: number): number {
  if (range <= 0) return 0;
  if (range >= 0x100000000) return 33;
  return 32 - Math.clz32(range >>> 0);
}

/** Bits of an integer in `min..max`; throws {@link NetError} `BAD_ARGUMENT` above 32. */
function intBits(min: number, max: number, bitOffset: number): number {
  const bits = bitsRequired(max - min);
  if (bits > 32)
    throw new NetError(NET_ERROR.BAD_ARGUMENT, `integer range ${min}..${max} needs more than 32 bits`, bitOffset);
  return bits;
}

/**
 * One side of a symmetric message description. A `serialize` function calls these in a
 * fixed order; on a writer they pack the given value and return it, on a reader they ignore
 * the given value and return what was read.
 */
export interface BitStream {
  /** True on a {@link WriteStream}. */
  readonly isWriting: boolean;
  /** True on a {@link ReadStream}. */
  readonly isReading: boolean;
  /** Bits written or read so far. */
  readonly bitOffset: number;
  /** An unsigned integer of `bitCount` bits (0..32). */
  serializeBits(value: number, bitCount: number): number;
  /** One bit. */
  serializeBool(value: boolean): boolean;
  /**
   * An integer in `min..max` (inclusive), in `bitsRequired(max − min)` bits. A writer
   * throws {@link NetError} `BAD_ARGUMENT` for a value outside the range; a reader throws
   * `BAD_VALUE` when the bits decode past `max`.
   */
  serializeInt(value: number, min: number, max: number): number;
  /**
   * A float in `min..max` quantised on `bitCount` (1..32) bits to the nearest of
   * `min + q · (max − min) / (2^bitCount − 1)`; values outside the range are clamped. Both
   * sides return the dequantised value, so a sender knows exactly what its receiver gets.
   */
  serializeFloatBounded(value: number, min: number, max: number, bitCount: number): number;
  /** A float32, bit for bit (NaN and infinities included; a reader cannot tell). */
  serializeFloat32(value: number): number;
  /** Zero bits up to the next byte boundary (a reader throws {@link NetError} `BAD_VALUE` if they are not zero). */
  align(): void;
}

/** Writes a message: a {@link BitStream} over runtime/bits's {@link BitWriter}. */
export class WriteStream implements BitStream {
  readonly isWriting = true;
  readonly isReading = false;
  private writer: BitWriter;

  /** `initialBytes` sizes the first buffer (it grows as needed). */
  constructor(private readonly initialBytes = 256) {
    this.writer = new BitWriter(Math.ceil(initialBytes / 4));
  }

  get bitOffset(): number {
    return this.writer.length;
  }

  /** Starts a new message (the previous one's bytes, if taken with {@link finish}, stay valid). */
  reset(): void {
    this.writer = new BitWriter(Math.ceil(this.initialBytes / 4));
  }

  serializeBits(value: number, bitCount: number): number {
    if (
      !(bitCount >= 0 && bitCount <= 32) ||
      !(value >= 0 && value <= MAX_QUANT[bitCount]) ||
      !Number.isInteger(value)
    ) {
      throw new NetError(NET_ERROR.BAD_ARGUMENT, `cannot write ${value} in ${bitCount} bits`, this.writer.length);
    }
    this.writer.write(value, bitCount);
    return value;
  }

  serializeBool(value: boolean): boolean {
    this.writer.write(value ? 1 : 0, 1);
    return value;
  }

  serializeInt(value: number, min: number, max: number): number {
    if (!(value >= min && value <= max) || !Number.isInteger(value)) {
      throw new NetError(
        NET_ERROR.BAD_ARGUMENT,
        `cannot write ${value} as an integer in ${min}..${max}`,
        this.writer.length,
      );
    }
    this.writer.write(value - min, intBits(min, max, this.writer.length));
    return value;
  }

  serializeFloatBounded(value: number, min: number, max: number, bitCount: number): number {
    const scale = (max - min) / MAX_QUANT[bitCount];
    const q = quantizeToScale(value, min, scale, bitCount);
    this.writer.write(q, bitCount);
    return min + q * scale;
  }

  serializeFloat32(value: number): number {
    const bits = bitsFromFloat(value);
    this.writer.write(bits, 32);
    return floatFromBits(bits);
  }

  align(): void {
    this.writer.align(8);
  }

  /** Pads the message to a whole byte with zero bits and returns its bytes (a fresh array). */
  finish(): Uint8Array {
    return this.writer.finishBytes();
  }
}

/**
 * Reads a message from a packet. Reading past the packet's last bit throws {@link NetError}
 * `PACKET_TRUNCATED`; {@link finish} checks that the message used the whole packet.
 */
export class ReadStream implements BitStream {
  readonly isWriting = false;
  readonly isReading = true;
  private words = new Uint32Array(64);
  private bitLength = 0;
  private offset = 0;

  constructor(bytes?: Uint8Array) {
    if (bytes) this.reset(bytes);
  }

  get bitOffset(): number {
    return this.offset;
  }

  /** Bits left to read. */
  get remainingBits(): number {
    return this.bitLength - this.offset;
  }

  /** Starts reading `bytes` (copied into the stream's own word buffer, which is reused). */
  reset(bytes: Uint8Array): void {
    const wordCount = ((bytes.length + 3) >>> 2) + 1; // one spare word: readBits may touch w + 1
    if (this.words.length < wordCount) this.words = new Uint32Array(Math.max(wordCount, this.words.length * 2));
    this.words.fill(0, 0, wordCount);
    for (let i = 0; i < bytes.length; i++) this.words[i >>> 2] |= bytes[i] << ((i & 3) * 8);
    this.bitLength = bytes.length * 8;
    this.offset = 0;
  }

  private take(bitCount: number): number {
    if (this.offset + bitCount > this.bitLength) {
      throw new NetError(
        NET_ERROR.PACKET_TRUNCATED,
        `packet ends after ${this.bitLength} bits, ${bitCount} more needed`,
        this.offset,
      );
    }
    const v = readBits(this.words, this.offset, bitCount);
    this.offset += bitCount;
    return v;
  }

  serializeBits(_value: number, bitCount: number): number {
    return this.take(bitCount);
  }

  serializeBool(_value: boolean): boolean {
    return this.take(1) === 1;
  }

  serializeInt(_value: number, min: number, max: number): number {
    const at = this.offset;
    const v = min + this.take(intBits(min, max, at));
    if (v > max) throw new NetError(NET_ERROR.BAD_VALUE, `integer ${v} is above its maximum ${max}`, at);
    return v;
  }

  serializeFloatBounded(_value: number, min: number, max: number, bitCount: number): number {
    const scale = (max - min) / MAX_QUANT[bitCount];
    return min + this.take(bitCount) * scale;
  }

  serializeFloat32(_value: number): number {
    return floatFromBits(this.take(32));
  }

  align(): void {
    const pad = (8 - (this.offset & 7)) & 7;
    const at = this.offset;
    if (this.take(pad) !== 0) throw new NetError(NET_ERROR.BAD_VALUE, 'non-zero padding bits', at);
  }

  /**
   * Checks the end of a message: fewer than 8 bits may remain, and they must be the zero
   * padding a {@link WriteStream} adds. Throws {@link NetError} `BAD_VALUE` when whole
   * bytes are left over or the padding is not zero.
   */
  finish(): void {
    const left = this.bitLength - this.offset;
    if (left >= 8)
      throw new NetError(NET_ERROR.BAD_VALUE, `${left >>> 3} bytes left over after the message`, this.offset);
    if (left > 0 && readBits(this.words, this.offset, left) !== 0) {
      throw new NetError(NET_ERROR.BAD_VALUE, 'non-zero padding after the message', this.offset);
    }
    this.offset = this.bitLength;
  }
}
