/**
 * Sender and receiver of a pose snapshot stream over an unreliable link (packets may be
 * lost, duplicated or reordered). The sender numbers its snapshots (16-bit sequence
 * numbers that wrap), keeps the last `windowSize` it sent, and encodes each new one as a
 * delta against the newest snapshot the receiver has acknowledged — or absolute (against
 * the default pose) before any ack or when that snapshot has left the window. The receiver
 * keeps the snapshots it decoded and answers with acks naming the newest one.
 *
 * Packets: `checkBits` of CRC-32 over the schema hash and the rest of the packet, then the
 * header and the snapshot body (docs/net.md). A packet that is corrupted, truncated or made
 * for another schema is rejected with a {@link NetError}, never another exception.
 */
import { NET_ERROR, NetError, ReadStream, WriteStream, bitsRequired, type BitStream } from './bit-stream.js';
import { EntropyCodec, SnapshotRangeDecoder, SnapshotRangeEncoder, type EntropyState } from './entropy.js';
import type { SnapshotSchema } from './schema.js';
import { PoseQuantizer, createSnapshotCodes, dequantizePose } from './quantize.js';
import { VerifiedQuantizer } from './verify.js';
import { SnapshotCodec } from './snapshot.js';
import { crc32 } from '../runtime/format.js';
import { POSE_STRIDE } from '../runtime/pose.js';

/** Sequence numbers are 16 bits and wrap around. */
export const SEQUENCE_BITS = 16;
const SEQUENCE_MOD = 1 << SEQUENCE_BITS;
const HALF_SEQUENCE = SEQUENCE_MOD / 2;

/**
 * True when sequence `a` is newer than `b` in 16-bit wraparound order (a is ahead of b by
 * less than half the sequence space).
 */
export function sequenceGreaterThan(a: number, b: number): boolean {
  return (a > b && a - b < HALF_SEQUENCE) || (a < b && b - a > HALF_SEQUENCE);
}

/** How far `newer` is ahead of `older` in wraparound order (0..65535). */
export function sequenceDistance(newer: number, older: number): number {
  return (newer - older + SEQUENCE_MOD) % SEQUENCE_MOD;
}

/** How a session codes snapshot bodies. */
export const SNAPSHOT_CODING = {
  /** Fixed-width codes (snapshot.ts). */
  PLAIN: 'plain',
  /** Adaptive binary range coding of the same symbols (entropy.ts). */
  ENTROPY: 'entropy',
} as const;
/** A {@link SNAPSHOT_CODING} value. */
export type SnapshotCoding = (typeof SNAPSHOT_CODING)[keyof typeof SNAPSHOT_CODING];

/** Options shared by {@link SnapshotSender} and {@link SnapshotReceiver}; both ends must agree. */
export interface SessionOptions {
  /** Snapshots kept on each side; a baseline older than this is not used. 2..1024, default 64 (about 1 s at 60 Hz). */
  windowSize?: number;
  /** Bits of packet check (0, 8, 16, 24 or 32). Default 16. */
  checkBits?: number;
  /** Body coding the sender uses (the receiver reads either). Default 'plain'. */
  coding?: SnapshotCoding;
  /**
   * Sender only. 'verified' (default): entropy-coded deltas give each bone a precision level
   * (coarser steps from the baseline) and the sender measures every bone's decoded error,
   * refining until all are within the schema's threshold (verify.ts). 'bound': the
   * bound-derived codes everywhere (level 0). Plain bodies always use the bound's codes.
   */
  precision?: SnapshotPrecision;
}

/** How a sender picks codes: see {@link SessionOptions.precision}. */
export type SnapshotPrecision = 'verified' | 'bound';

/** Defaults of {@link SessionOptions}. */
export const SESSION_DEFAULTS = {
  windowSize: 64,
  checkBits: 16,
  coding: SNAPSHOT_CODING.PLAIN,
  precision: 'verified',
} as const;

interface ResolvedSession {
  windowSize: number;
  checkBits: number;
  checkBytes: number;
  offsetBits: number;
  coding: SnapshotCoding;
  precision: SnapshotPrecision;
}

function resolveSession(options: SessionOptions): ResolvedSession {
  const windowSize = options.windowSize ?? SESSION_DEFAULTS.windowSize;
  const checkBits = options.checkBits ?? SESSION_DEFAULTS.checkBits;
  const coding = options.coding ?? SESSION_DEFAULTS.coding;
  const precision = options.precision ?? SESSION_DEFAULTS.precision;
  if (precision !== 'verified' && precision !== 'bound')
    throw new NetError(NET_ERROR.BAD_ARGUMENT, `unknown precision "${String(precision)}"`);
  if (!Number.isInteger(windowSize) || windowSize < 2 || windowSize > 1024) {
    throw new NetError(NET_ERROR.BAD_ARGUMENT, `windowSize must be a whole number in 2..1024, got ${windowSize}`);
  }
  if (![0, 8, 16, 24, 32].includes(checkBits))
    throw new NetError(NET_ERROR.BAD_ARGUMENT, `checkBits must be 0, 8, 16, 24 or 32, got ${checkBits}`);
  if (coding !== SNAPSHOT_CODING.PLAIN && coding !== SNAPSHOT_CODING.ENTROPY)
    throw new NetError(NET_ERROR.BAD_ARGUMENT, `unknown coding "${String(coding)}"`);
  return {
    windowSize,
    checkBits,
    checkBytes: checkBits / 8,
    offsetBits: bitsRequired(windowSize - 2),
    coding,
    precision,
  };
}

/** What one snapshot packet held, for statistics. */
export interface PacketInfo {
  readonly sequence: number;
  /** Sequence of the baseline, or -1 for an absolute snapshot. */
  readonly baselineSequence: number;
  readonly coding: SnapshotCoding;
  /** Bits of the snapshot body alone (no header, check or byte padding). */
  readonly bodyBits: number;
  /** Bits on the wire: the whole packet in bytes × 8. */
  readonly packetBits: number;
}

// Packet check: CRC-32 of the schema hash and the baseline's hash (4 bytes each, little-endian)
// then the packet after the check. Keying on the baseline makes a delta decoded against
// another snapshot with the same sequence (one sent 65,536 sends earlier) fail the check.
function packetCheck(
  schemaHash: number,
  baselineHash: number,
  bytes: Uint8Array,
  start: number,
  checkBytes: number,
): number {
  const keyed = new Uint8Array(8 + bytes.length - start);
  for (let i = 0; i < 4; i++) {
    keyed[i] = (schemaHash >>> (8 * i)) & 0xff;
    keyed[4 + i] = (baselineHash >>> (8 * i)) & 0xff;
  }
  keyed.set(bytes.subarray(start), 8);
  const crc = crc32(keyed);
  return checkBytes === 4 ? crc >>> 0 : crc & ((1 << (checkBytes * 8)) - 1);
}

function sealPacket(schemaHash: number, baselineHash: number, body: Uint8Array, checkBytes: number): Uint8Array {
  if (checkBytes === 0) return body;
  const packet = new Uint8Array(checkBytes + body.length);
  packet.set(body, checkBytes);
  const check = packetCheck(schemaHash, baselineHash, packet, checkBytes, checkBytes);
  for (let i = 0; i < checkBytes; i++) packet[i] = (check >>> (8 * i)) & 0xff;
  return packet;
}

function checkPacketLength(packet: Uint8Array, checkBytes: number): void {
  if (packet.length <= checkBytes)
    throw new NetError(NET_ERROR.PACKET_TRUNCATED, `packet of ${packet.length} bytes is too short`, packet.length * 8);
}

function verifyPacket(schemaHash: number, baselineHash: number, packet: Uint8Array, checkBytes: number): void {
  if (checkBytes === 0) return;
  let stored = 0;
  for (let i = 0; i < checkBytes; i++) stored += packet[i] * 2 ** (8 * i);
  if (stored !== packetCheck(schemaHash, baselineHash, packet, checkBytes, checkBytes)) {
    throw new NetError(
      NET_ERROR.BAD_CHECKSUM,
      baselineHash === 0
        ? 'packet check does not match (corrupted, or sent with another schema)'
        : 'packet check does not match (corrupted, sent with another schema, or a delta against a snapshot other than the one this receiver holds under that sequence)',
      0,
    );
  }
}

function openPacket(schemaHash: number, packet: Uint8Array, checkBytes: number): Uint8Array {
  checkPacketLength(packet, checkBytes);
  verifyPacket(schemaHash, 0, packet, checkBytes);
  return packet.subarray(checkBytes);
}

/** Hash of a stored snapshot (its codes and entropy state) that keys the check of deltas against it; never 0. */
function snapshotHash(codes: Int32Array, state: EntropyState): number {
  let h = crc32(new Uint8Array(codes.buffer, codes.byteOffset, codes.byteLength));
  h =
    (h ^
      crc32(
        new Uint8Array(state.probabilities.buffer, state.probabilities.byteOffset, state.probabilities.byteLength),
      )) >>>
    0;
  h = (Math.imul(h, 0x9e3779b1) ^ crc32(state.classes) ^ crc32(state.levels)) >>> 0;
  h = (h ^ crc32(new Uint8Array(state.signs.buffer, state.signs.byteOffset, state.signs.byteLength)) ^ state.age) >>> 0;
  return h === 0 ? 1 : h;
}

/**
 * Header of a snapshot packet, one description for both directions: sequence (16 bits),
 * 1 bit "delta", then the baseline's distance back (1..windowSize − 1) when delta, then
 * 1 bit "entropy coded". Serialized: never reorder.
 */
interface Header {
  sequence: number;
  baselineOffset: number;
  entropy: boolean;
}

function serializeHeader(stream: BitStream, h: Header, session: ResolvedSession): void {
  h.sequence = stream.serializeBits(h.sequence, SEQUENCE_BITS);
  const delta = stream.serializeBool(h.baselineOffset > 0);
  h.baselineOffset = delta ? stream.serializeInt(h.baselineOffset, 1, session.windowSize - 1) : 0;
  h.entropy = stream.serializeBool(h.entropy);
}

/** A ring of snapshots (codes and the entropy state each leaves) by sequence number. */
class SnapshotRing {
  readonly codes: Int32Array[];
  readonly states: EntropyState[];
  readonly sequences: Int32Array;
  /** Per slot: {@link snapshotHash} of what it holds. */
  readonly hashes: Uint32Array;

  constructor(
    schema: SnapshotSchema,
    entropy: EntropyCodec,
    readonly size: number,
  ) {
    this.codes = Array.from({ length: size }, () => createSnapshotCodes(schema));
    this.states = Array.from({ length: size }, () => entropy.createState());
    this.sequences = new Int32Array(size).fill(-1);
    this.hashes = new Uint32Array(size);
  }

  /** Slot of `sequence`, or -1 when the ring does not hold it. */
  find(sequence: number): number {
    const i = sequence % this.size;
    return this.sequences[i] === sequence ? i : -1;
  }

  /** Stores `codes` and `state` as `sequence` (copies). */
  store(sequence: number, codes: Int32Array, state: EntropyState): void {
    const i = sequence % this.size;
    this.codes[i].set(codes);
    const to = this.states[i];
    to.probabilities.set(state.probabilities);
    to.classes.set(state.classes);
    to.signs.set(state.signs);
    to.levels.set(state.levels);
    to.age = state.age;
    this.sequences[i] = sequence;
    this.hashes[i] = snapshotHash(codes, state);
  }
}

/**
 * Quantises poses and writes snapshot packets. One sender per receiver (each receiver acks
 * its own baseline).
 */
export class SnapshotSender {
  private readonly session: ResolvedSession;
  private readonly quantizer: PoseQuantizer;
  private readonly verified: VerifiedQuantizer;
  private readonly levels: Uint8Array;
  private readonly codec: SnapshotCodec;
  private readonly entropy: EntropyCodec;
  private readonly ring: SnapshotRing;
  private readonly codes: Int32Array;
  private readonly state: EntropyState;
  private readonly stream = new WriteStream(512);
  private nextSequence = 0;
  // Sends so far, and the send index of the newest acked snapshot (-1: none). Counting sends
  // without wrapping is what lets an ack expire: after 65,536 sends the 16-bit sequence of an
  // old ack names a newer snapshot the receiver never got (test/net/wraparound.test.ts).
  private sentCount = 0;
  private ackedIndex = -1;
  private last: PacketInfo | undefined;
  private verifiedError = -1;

  /** Throws {@link NetError} `BAD_ARGUMENT` for bad options. */
  constructor(
    readonly schema: SnapshotSchema,
    options: SessionOptions = {},
  ) {
    this.session = resolveSession(options);
    this.quantizer = new PoseQuantizer(schema);
    this.verified = new VerifiedQuantizer(schema);
    this.levels = new Uint8Array(schema.boneCount);
    this.codec = new SnapshotCodec(schema);
    this.entropy = new EntropyCodec(schema);
    this.ring = new SnapshotRing(schema, this.entropy, this.session.windowSize);
    this.codes = createSnapshotCodes(schema);
    this.state = this.entropy.createState();
  }

  /** Sequence number the next {@link send} will use. */
  get sequence(): number {
    return this.nextSequence;
  }

  /**
   * The newest acknowledged sequence still usable as a baseline (sent fewer than
   * `windowSize` sends ago), or -1 when there is none: acks expire with the window.
   */
  get ackedSequence(): number {
    return this.ackedIndex >= 0 && this.sentCount - this.ackedIndex < this.session.windowSize
      ? this.ackedIndex % SEQUENCE_MOD
      : -1;
  }

  /** What the last packet held. */
  get lastPacket(): PacketInfo | undefined {
    return this.last;
  }

  /**
   * The largest virtual-vertex error of the pose the receiver decodes from the last packet,
   * as the sender measured it, when that packet was a verified delta; -1 otherwise.
   */
  get lastVerifiedError(): number {
    return this.verifiedError;
  }

  /**
   * Encodes `pose` ({@link POSE_STRIDE} floats per bone) as the next snapshot and returns the
   * packet (a fresh array the caller owns). Delta against the newest acked snapshot still in
   * the window, else absolute.
   */
  send(pose: Float32Array): Uint8Array {
    const s = this.session;
    const sequence = this.nextSequence;
    let slot = -1,
      offset = 0;
    const ackedSequence = this.ackedSequence;
    if (ackedSequence >= 0) {
      slot = this.ring.find(ackedSequence);
      if (slot >= 0) offset = this.sentCount - this.ackedIndex;
    }
    const baseline = slot >= 0 ? this.ring.codes[slot] : null;
    const base = slot >= 0 ? this.ring.states[slot] : null;
    const header: Header = { sequence, baselineOffset: offset, entropy: s.coding === SNAPSHOT_CODING.ENTROPY };
    const codes = this.codes,
      levels = this.levels;
    if (header.entropy && baseline && s.precision === 'verified') {
      this.verifiedError = this.verified.quantize(pose, baseline, codes, levels);
    } else {
      this.quantizer.quantize(pose, codes);
      levels.fill(0);
      this.verifiedError = -1;
    }
    const stream = this.stream;
    stream.reset();
    serializeHeader(stream, header, s);
    const bodyStart = stream.bitOffset;
    let body: Uint8Array, bodyBits: number;
    if (header.entropy) {
      stream.align();
      const encoder = new SnapshotRangeEncoder();
      this.entropy.serialize(encoder, codes, baseline, base, offset, this.state, levels);
      const coded = encoder.finish();
      const head = stream.finish();
      body = new Uint8Array(head.length + coded.length);
      body.set(head);
      body.set(coded, head.length);
      bodyBits = coded.length * 8;
    } else {
      if (baseline) this.codec.serializeDelta(stream, codes, baseline);
      else this.codec.serializeAbsolute(stream, codes);
      this.entropy.recordPlain(codes, baseline, base, offset, this.state);
      bodyBits = stream.bitOffset - bodyStart;
      body = stream.finish();
    }
    const packet = sealPacket(this.schema.hash, slot >= 0 ? this.ring.hashes[slot] : 0, body, s.checkBytes);
    this.ring.store(sequence, codes, this.state);
    this.last = {
      sequence,
      baselineSequence: baseline ? ackedSequence : -1,
      coding: header.entropy ? SNAPSHOT_CODING.ENTROPY : SNAPSHOT_CODING.PLAIN,
      bodyBits,
      packetBits: packet.length * 8,
    };
    this.nextSequence = (sequence + 1) % SEQUENCE_MOD;
    this.sentCount++;
    return packet;
  }

  /**
   * Takes an ack packet from the receiver. An ack of one of the last `windowSize − 1` sends,
   * newer than the current one, becomes the baseline of the next sends; others are ignored.
   * An ack expires once its snapshot is `windowSize` sends old (the sender then sends
   * absolute snapshots until a newer ack arrives). Throws {@link NetError} for a corrupted
   * or truncated ack.
   */
  receiveAck(packet: Uint8Array): void {
    const sequence = readAck(this.schema.hash, packet, this.session);
    const distance = sequenceDistance(this.nextSequence, sequence);
    if (distance === 0 || distance >= this.session.windowSize || distance > this.sentCount) return; // not sent yet, or too old to use
    if (this.ring.find(sequence) < 0) return;
    const index = this.sentCount - distance;
    if (index > this.ackedIndex) this.ackedIndex = index;
  }
}

/** What {@link SnapshotReceiver.receive} decoded. */
export interface ReceivedSnapshot extends PacketInfo {
  /** True when no newer snapshot had been received before this one. */
  readonly isNewest: boolean;
}

/** Reads snapshot packets into poses and writes acks. */
export class SnapshotReceiver {
  private readonly session: ResolvedSession;
  private readonly codec: SnapshotCodec;
  private readonly entropy: EntropyCodec;
  private readonly ring: SnapshotRing;
  private readonly codes: Int32Array;
  private readonly state: EntropyState;
  private readonly stream = new ReadStream();
  private newest = -1;

  /** Throws {@link NetError} `BAD_ARGUMENT` for bad options. */
  constructor(
    readonly schema: SnapshotSchema,
    options: SessionOptions = {},
  ) {
    this.session = resolveSession(options);
    this.codec = new SnapshotCodec(schema);
    this.entropy = new EntropyCodec(schema);
    this.ring = new SnapshotRing(schema, this.entropy, this.session.windowSize);
    this.codes = createSnapshotCodes(schema);
    this.state = this.entropy.createState();
  }

  /** The newest sequence received, or -1 before any. */
  get newestSequence(): number {
    return this.newest;
  }

  /**
   * Decodes a snapshot packet into `outPose` ({@link POSE_STRIDE} floats per bone). Throws
   * {@link NetError}: `BAD_CHECKSUM`, `PACKET_TRUNCATED` or `BAD_VALUE` for a damaged packet,
   * `UNKNOWN_BASELINE` for a delta against a snapshot this receiver does not hold. A rejected
   * packet changes nothing. A packet older than the window is decoded but not kept.
   */
  receive(packet: Uint8Array, outPose: Float32Array): ReceivedSnapshot {
    const s = this.session;
    if (outPose.length < this.schema.boneCount * POSE_STRIDE) {
      throw new NetError(NET_ERROR.BAD_ARGUMENT, `pose of ${outPose.length} floats for ${this.schema.boneCount} bones`);
    }
    checkPacketLength(packet, s.checkBytes);
    const body = packet.subarray(s.checkBytes);
    const stream = this.stream;
    stream.reset(body);
    const header: Header = { sequence: 0, baselineOffset: 0, entropy: false };
    serializeHeader(stream, header, s);
    const sequence = header.sequence;
    let slot = -1,
      baselineSequence = -1;
    if (header.baselineOffset > 0) {
      baselineSequence = (sequence - header.baselineOffset + SEQUENCE_MOD) % SEQUENCE_MOD;
      slot = this.ring.find(baselineSequence);
      if (slot < 0) {
        throw new NetError(
          NET_ERROR.UNKNOWN_BASELINE,
          `snapshot ${sequence} is a delta against ${baselineSequence}, which this receiver does not hold`,
        );
      }
    }
    // The check is keyed on the baseline the receiver holds, so it fails for a delta the
    // sender coded against another snapshot of the same sequence number.
    verifyPacket(this.schema.hash, slot >= 0 ? this.ring.hashes[slot] : 0, packet, s.checkBytes);
    const baseline = slot >= 0 ? this.ring.codes[slot] : null;
    const base = slot >= 0 ? this.ring.states[slot] : null;
    const codes = this.codes;
    const bodyStart = stream.bitOffset;
    let bodyBits: number;
    if (header.entropy) {
      stream.align();
      const coded = body.subarray(stream.bitOffset >>> 3);
      const decoder = new SnapshotRangeDecoder(coded);
      this.entropy.serialize(decoder, codes, baseline, base, header.baselineOffset, this.state);
      decoder.finish();
      bodyBits = coded.length * 8;
    } else {
      if (baseline) this.codec.serializeDelta(stream, codes, baseline);
      else this.codec.serializeAbsolute(stream, codes);
      bodyBits = stream.bitOffset - bodyStart;
      stream.finish();
      this.entropy.recordPlain(codes, baseline, base, header.baselineOffset, this.state);
    }
    const isNewest = this.newest < 0 || sequenceGreaterThan(sequence, this.newest);
    // Keep it unless it is older than the window (it would overwrite a newer slot).
    if (isNewest || sequenceDistance(this.newest, sequence) < s.windowSize)
      this.ring.store(sequence, codes, this.state);
    if (isNewest) this.newest = sequence;
    dequantizePose(this.schema, codes, outPose);
    return {
      sequence,
      baselineSequence,
      coding: header.entropy ? SNAPSHOT_CODING.ENTROPY : SNAPSHOT_CODING.PLAIN,
      bodyBits,
      packetBits: packet.length * 8,
      isNewest,
    };
  }

  /**
   * The ack packet naming the newest snapshot received: check bits, then the 16-bit
   * sequence. Throws {@link NetError} `BAD_ARGUMENT` before any snapshot was received.
   */
  ack(): Uint8Array {
    if (this.newest < 0) throw new NetError(NET_ERROR.BAD_ARGUMENT, 'nothing received to acknowledge yet');
    const stream = new WriteStream(4);
    stream.serializeBits(this.newest, SEQUENCE_BITS);
    return sealPacket(this.schema.hash, 0, stream.finish(), this.session.checkBytes);
  }
}

function readAck(schemaHash: number, packet: Uint8Array, session: ResolvedSession): number {
  const stream = new ReadStream(openPacket(schemaHash, packet, session.checkBytes));
  const sequence = stream.serializeBits(0, SEQUENCE_BITS);
  stream.finish();
  return sequence;
}
