/**
 * A world stream from one server to many clients over unreliable links. The server
 * quantises each tick once ({@link WorldServer.tick}); for each client it codes that
 * snapshot as a delta against the newest snapshot the client has acknowledged (or against
 * an empty world before any ack, or once that ack has left the window), and splits messages
 * larger than the MTU into fragments. Clients that share a baseline share the packet: it
 * is coded once per tick and baseline. Clients acknowledge with the newest sequence and a
 * 32-bit field of the ones before it, so a lost ack costs nothing once a later one arrives.
 *
 * Message: 1 bit 0 (a fragment's first byte is {@link FRAGMENT_MARKER}, lowest bit 1),
 * sequence (16), baseline distance (0: absolute), the body (world-codec.ts), zero padding,
 * then `checkBits` of CRC-32 keyed on the schema's and the baseline's hashes. Serialized:
 * never reorder.
 */
import { NET_ERROR, NetError, ReadStream, WriteStream, type BitStream } from './bit-stream.js';
import {
  FRAGMENT_MARKER,
  Reassembler,
  fragmentMessage,
  resolveFragmentOptions,
  type FragmentOptions,
} from './fragment.js';
import { WorldCodec, WorldSnapshot, type WorldBodyStats, type WorldState } from './world-codec.js';
import type { WorldSchema } from './world-schema.js';
import { SEQUENCE_BITS, sequenceDistance, sequenceGreaterThan } from './session.js';
import { crc32 } from '../runtime/format.js';

const SEQUENCE_MOD = 1 << SEQUENCE_BITS;

/** Bits of the ack field: the 32 sequences before the newest. */
export const ACK_FIELD_BITS = 32;

/** Options of {@link WorldServer} and {@link WorldClient}; both ends must agree. */
export interface WorldSessionOptions extends FragmentOptions {
  /** Snapshots kept on each side; a baseline older than this is not used. 2..1024, default 64 (about 1 s at 60 Hz). */
  windowSize?: number;
  /** Bits of packet check: 8, 16, 24 or 32. Default 16. */
  checkBits?: number;
  /**
   * Server only. Before a client's first ack, the server sends one full state (in fragments
   * when large) and then deltas against it, trusting it arrived; it sends a new full state
   * when no ack has come `joinResendTicks` ticks after the last one. A client that lost the
   * full state rejects those deltas (`UNKNOWN_BASELINE`) until the next. 2..windowSize − 1,
   * default 15 (250 ms at 60 Hz; more than a round trip).
   */
  joinResendTicks?: number;
  /**
   * Server only. Code each tick once per baseline and give clients at the same baseline the
   * same datagrams (default true); false codes every client's packet on its own (same bytes).
   */
  shareMessages?: boolean;
}

/** Defaults of {@link WorldSessionOptions}. */
export const WORLD_SESSION_DEFAULTS = {
  windowSize: 64,
  checkBits: 16,
  joinResendTicks: 15,
} as const;

interface ResolvedWorldSession {
  windowSize: number;
  checkBytes: number;
  joinResendTicks: number;
  shareMessages: boolean;
  fragments: Required<FragmentOptions>;
}

function resolveWorldSession(options: WorldSessionOptions): ResolvedWorldSession {
  const windowSize = options.windowSize ?? WORLD_SESSION_DEFAULTS.windowSize;
  const checkBits = options.checkBits ?? WORLD_SESSION_DEFAULTS.checkBits;
  if (!Number.isInteger(windowSize) || windowSize < 2 || windowSize > 1024) {
    throw new NetError(NET_ERROR.BAD_ARGUMENT, `windowSize must be a whole number in 2..1024, got ${windowSize}`);
  }
  if (![8, 16, 24, 32].includes(checkBits))
    throw new NetError(NET_ERROR.BAD_ARGUMENT, `checkBits must be 8, 16, 24 or 32, got ${checkBits}`);
  const joinResendTicks = options.joinResendTicks ?? Math.min(WORLD_SESSION_DEFAULTS.joinResendTicks, windowSize - 1);
  if (!Number.isInteger(joinResendTicks) || joinResendTicks < 2 || joinResendTicks > windowSize - 1) {
    throw new NetError(
      NET_ERROR.BAD_ARGUMENT,
      `joinResendTicks must be a whole number in 2..${windowSize - 1}, got ${joinResendTicks}`,
    );
  }
  return {
    windowSize,
    checkBytes: checkBits / 8,
    joinResendTicks,
    shareMessages: options.shareMessages ?? true,
    fragments: resolveFragmentOptions(options),
  };
}

function keyedCheck(
  schemaHash: number,
  baselineHash: number,
  bytes: Uint8Array,
  end: number,
  checkBytes: number,
): number {
  const keyed = new Uint8Array(8 + end);
  for (let i = 0; i < 4; i++) {
    keyed[i] = (schemaHash >>> (8 * i)) & 0xff;
    keyed[4 + i] = (baselineHash >>> (8 * i)) & 0xff;
  }
  keyed.set(bytes.subarray(0, end), 8);
  const crc = crc32(keyed);
  return checkBytes === 4 ? crc >>> 0 : crc & ((1 << (checkBytes * 8)) - 1);
}

function seal(schemaHash: number, baselineHash: number, body: Uint8Array, checkBytes: number): Uint8Array {
  const out = new Uint8Array(body.length + checkBytes);
  out.set(body);
  const check = keyedCheck(schemaHash, baselineHash, body, body.length, checkBytes);
  for (let i = 0; i < checkBytes; i++) out[body.length + i] = (check >>> (8 * i)) & 0xff;
  return out;
}

function checkMatches(schemaHash: number, baselineHash: number, message: Uint8Array, checkBytes: number): boolean {
  const end = message.length - checkBytes;
  let stored = 0;
  for (let i = 0; i < checkBytes; i++) stored += message[end + i] * 2 ** (8 * i);
  return stored === keyedCheck(schemaHash, baselineHash, message, end, checkBytes);
}

interface WorldHeader {
  sequence: number;
  baselineOffset: number;
}

function serializeWorldHeader(stream: BitStream, h: WorldHeader, windowSize: number): void {
  const at = stream.bitOffset;
  if (stream.serializeBits(0, 1) !== 0)
    throw new NetError(NET_ERROR.BAD_VALUE, 'a fragment where a message was expected', at);
  h.sequence = stream.serializeBits(h.sequence, SEQUENCE_BITS);
  h.baselineOffset = stream.serializeInt(h.baselineOffset, 0, windowSize - 1);
}

/** What the server sent one client for one tick. */
export interface WorldPacketInfo {
  readonly sequence: number;
  /** Sequence of the baseline, or -1 for a snapshot against an empty world. */
  readonly baselineSequence: number;
  /** Bytes of every datagram together (fragment headers and check included). */
  readonly bytes: number;
  readonly datagrams: number;
  /** Entities listed (spawned, despawned or changed). */
  readonly changed: number;
}

interface ClientRecord {
  /** Tick index of the newest acked snapshot, -1 for none. */
  ackedIndex: number;
  /** Tick index of the last full state sent before the first ack, -1 for none. */
  fullIndex: number;
  acks: number;
  /** Per window slot: tick index the client reported received (newest or in the ack field). */
  received: Float64Array;
  last: WorldPacketInfo | undefined;
}

interface CachedMessage {
  baselineIndex: number;
  datagrams: Uint8Array[];
  info: Omit<WorldPacketInfo, 'bytes' | 'datagrams'>;
  bytes: number;
}

/**
 * The server side: one quantisation per tick, one delta per client (shared by the clients
 * acked at the same baseline). Holds `windowSize` snapshots of the world.
 */
export class WorldServer {
  private readonly session: ResolvedWorldSession;
  private readonly codec: WorldCodec;
  private readonly history: WorldSnapshot[];
  private readonly historyIndex: Float64Array;
  private readonly stream = new WriteStream(4096);
  private readonly clients = new Map<number, ClientRecord>();
  private readonly cache: CachedMessage[] = [];
  private ticks = 0;
  private nextClientId = 0;

  /** Throws {@link NetError} `BAD_ARGUMENT` for bad options. */
  constructor(
    readonly schema: WorldSchema,
    options: WorldSessionOptions = {},
  ) {
    this.session = resolveWorldSession(options);
    this.codec = new WorldCodec(schema);
    this.history = Array.from({ length: this.session.windowSize }, () => new WorldSnapshot(schema));
    this.historyIndex = new Float64Array(this.session.windowSize).fill(-1);
  }

  /** Ticks made so far; the current snapshot's sequence is `(tickCount − 1) mod 65536`. */
  get tickCount(): number {
    return this.ticks;
  }

  /** Quantises `state` as the next tick's snapshot (once for every client). */
  tick(state: WorldState): void {
    if (state.schema !== this.schema) throw new NetError(NET_ERROR.BAD_ARGUMENT, 'world state of another schema');
    const slot = this.ticks % this.session.windowSize;
    this.history[slot].quantize(state);
    this.historyIndex[slot] = this.ticks;
    this.ticks++;
    this.cache.length = 0;
  }

  /** The quantised snapshot of the current tick (what every client decodes for it). */
  get current(): WorldSnapshot {
    if (this.ticks === 0) throw new NetError(NET_ERROR.BAD_ARGUMENT, 'no tick yet');
    return this.history[(this.ticks - 1) % this.session.windowSize];
  }

  /** Registers a client; returns its id for {@link packetsFor} and {@link receiveAck}. */
  addClient(): number {
    const id = this.nextClientId++;
    this.clients.set(id, {
      ackedIndex: -1,
      fullIndex: -1,
      acks: 0,
      received: new Float64Array(this.session.windowSize).fill(-1),
      last: undefined,
    });
    return id;
  }

  /** Forgets a client. */
  removeClient(clientId: number): void {
    this.clients.delete(clientId);
  }

  private client(clientId: number): ClientRecord {
    const c = this.clients.get(clientId);
    if (!c) throw new NetError(NET_ERROR.BAD_ARGUMENT, `no client ${clientId}`);
    return c;
  }

  /** The newest snapshot `clientId` acknowledged that is still a usable baseline, as a tick index, or -1. */
  baselineOf(clientId: number): number {
    const c = this.client(clientId);
    const w = this.session.windowSize;
    if (c.ackedIndex < 0 || this.ticks - 1 - c.ackedIndex >= w || this.ticks - 1 === c.ackedIndex) return -1;
    return this.historyIndex[c.ackedIndex % w] === c.ackedIndex ? c.ackedIndex : -1;
  }

  /**
   * The datagrams that carry the current tick to `clientId` (one unless the message is
   * over the MTU). The arrays may be shared with other clients of the same baseline: do
   * not modify them. Throws {@link NetError} `BAD_ARGUMENT` before the first tick, for an
   * unknown client, or when the message needs more than `maxFragments`.
   */
  packetsFor(clientId: number): Uint8Array[] {
    const c = this.client(clientId);
    if (this.ticks === 0) throw new NetError(NET_ERROR.BAD_ARGUMENT, 'no tick yet');
    let baselineIndex = this.baselineOf(clientId);
    if (baselineIndex < 0 && c.ackedIndex < 0) {
      // Joining: deltas against the last full state until an ack or the resend time.
      const age = this.ticks - 1 - c.fullIndex;
      if (c.fullIndex >= 0 && age > 0 && age < this.session.joinResendTicks) baselineIndex = c.fullIndex;
      else c.fullIndex = this.ticks - 1;
    }
    let cached = this.session.shareMessages ? this.cache.find((m) => m.baselineIndex === baselineIndex) : undefined;
    if (!cached) {
      cached = this.encode(baselineIndex);
      if (this.session.shareMessages) this.cache.push(cached);
    }
    c.last = { ...cached.info, bytes: cached.bytes, datagrams: cached.datagrams.length };
    return cached.datagrams;
  }

  /** What the last {@link packetsFor} of `clientId` sent. */
  lastPacket(clientId: number): WorldPacketInfo | undefined {
    return this.client(clientId).last;
  }

  private encode(baselineIndex: number): CachedMessage {
    const s = this.session,
      w = s.windowSize;
    const index = this.ticks - 1;
    const current = this.history[index % w];
    const baseline = baselineIndex >= 0 ? this.history[baselineIndex % w] : null;
    const sequence = index % SEQUENCE_MOD;
    const stream = this.stream;
    stream.reset();
    serializeWorldHeader(stream, { sequence, baselineOffset: baselineIndex >= 0 ? index - baselineIndex : 0 }, w);
    this.codec.serialize(stream, current, baseline);
    const stats: WorldBodyStats = this.codec.stats;
    const message = seal(this.schema.hash, baseline ? baseline.hash : 0, stream.finish(), s.checkBytes);
    const datagrams = fragmentMessage(message, sequence, s.fragments);
    let bytes = 0;
    for (const d of datagrams) bytes += d.length;
    return {
      baselineIndex,
      datagrams,
      bytes,
      info: { sequence, baselineSequence: baseline ? baselineIndex % SEQUENCE_MOD : -1, changed: stats.changed },
    };
  }

  /**
   * Takes an ack datagram from `clientId`: its newest sequence (and the field of the 32
   * before) names snapshots of the last `windowSize` ticks; the newest of them becomes the
   * client's baseline. Acks of older snapshots are ignored: an ack expires with the window,
   * whatever its 16-bit sequence says. Throws {@link NetError} for a damaged ack.
   */
  receiveAck(clientId: number, packet: Uint8Array): void {
    const c = this.client(clientId);
    const { newest, field } = readWorldAck(this.schema.hash, packet, this.session.checkBytes);
    if (this.ticks === 0) return;
    const w = this.session.windowSize;
    const lastSequence = (this.ticks - 1) % SEQUENCE_MOD;
    const back = sequenceDistance(lastSequence, newest);
    if (back >= w || back > this.ticks - 1) return;
    const index = this.ticks - 1 - back;
    c.acks++;
    if (index > c.ackedIndex) c.ackedIndex = index;
    c.received[index % w] = index;
    for (let i = 0; i < ACK_FIELD_BITS; i++) {
      const j = index - 1 - i;
      if (j < 0 || this.ticks - 1 - j >= w) break;
      if ((field >>> i) & 1) c.received[j % w] = j;
    }
  }

  /**
   * How many of the last `windowSize` ticks `clientId` reported received (through the
   * newest sequence and the ack field of every ack), and how many of them were sent: the
   * client's loss as the server sees it.
   */
  receivedInWindow(clientId: number): number {
    const c = this.client(clientId),
      w = this.session.windowSize;
    let n = 0;
    for (let j = Math.max(0, this.ticks - w); j < this.ticks; j++) if (c.received[j % w] === j) n++;
    return n;
  }
}

function readWorldAck(schemaHash: number, packet: Uint8Array, checkBytes: number): { newest: number; field: number } {
  if (packet.length !== 6 + checkBytes)
    throw new NetError(
      NET_ERROR.PACKET_TRUNCATED,
      `ack of ${packet.length} bytes (expected ${6 + checkBytes})`,
      packet.length * 8,
    );
  if (!checkMatches(schemaHash, 0, packet, checkBytes))
    throw new NetError(NET_ERROR.BAD_CHECKSUM, 'ack check does not match (corrupted, or another schema)', 0);
  const stream = new ReadStream(packet.subarray(0, 6));
  const newest = stream.serializeBits(0, SEQUENCE_BITS);
  const field = stream.serializeBits(0, ACK_FIELD_BITS);
  return { newest, field };
}

/** What {@link WorldClient.receive} decoded. */
export interface WorldReceived {
  readonly sequence: number;
  /** The sequence unwrapped: ticks since the first snapshot this client received, plus its sequence. */
  readonly tick: number;
  readonly baselineSequence: number;
  /** True when no newer snapshot had been received before. */
  readonly isNewest: boolean;
  /** The decoded snapshot: owned by the client, valid until `windowSize` more snapshots arrive. */
  readonly snapshot: WorldSnapshot;
  /** Bytes of the message (fragments reassembled, fragment headers not counted). */
  readonly bytes: number;
}

/** The client side: reassembles, decodes against the snapshots it holds, and acks. */
export class WorldClient {
  private readonly session: ResolvedWorldSession;
  private readonly codec: WorldCodec;
  private readonly ring: WorldSnapshot[];
  private readonly ringSequence: Int32Array;
  private readonly reassembler: Reassembler;
  private readonly stream = new ReadStream();
  private readonly scratch: WorldSnapshot;
  private newest = -1;
  private newestTick = 0;
  // Received flags of the last 33 sequences up to the newest, for the ack field.
  private readonly received = new Int32Array(64).fill(-1);

  /** Throws {@link NetError} `BAD_ARGUMENT` for bad options. */
  constructor(
    readonly schema: WorldSchema,
    options: WorldSessionOptions = {},
  ) {
    this.session = resolveWorldSession(options);
    this.codec = new WorldCodec(schema);
    this.ring = Array.from({ length: this.session.windowSize }, () => new WorldSnapshot(schema));
    this.ringSequence = new Int32Array(this.session.windowSize).fill(-1);
    this.reassembler = new Reassembler(this.session.fragments);
    this.scratch = new WorldSnapshot(schema);
  }

  /** The newest sequence received, or -1. */
  get newestSequence(): number {
    return this.newest;
  }

  /** The newest snapshot received, or undefined. */
  get latest(): WorldSnapshot | undefined {
    if (this.newest < 0) return undefined;
    const slot = this.newest % this.session.windowSize;
    return this.ringSequence[slot] === this.newest ? this.ring[slot] : undefined;
  }

  /**
   * Takes one datagram. Returns the decoded snapshot, or undefined while a fragmented
   * message is incomplete. Throws {@link NetError}: `BAD_CHECKSUM` (damage, another schema,
   * or a delta coded against another snapshot than the one held under its baseline's
   * sequence), `PACKET_TRUNCATED`, `BAD_VALUE`, `UNKNOWN_BASELINE`. A rejected datagram
   * changes nothing but the reassembly buffer.
   */
  receive(datagram: Uint8Array): WorldReceived | undefined {
    if (datagram.length === 0) throw new NetError(NET_ERROR.PACKET_TRUNCATED, 'empty datagram', 0);
    let message = datagram;
    if (datagram[0] === FRAGMENT_MARKER) {
      const whole = this.reassembler.add(datagram);
      if (!whole) return undefined;
      message = whole;
    }
    return this.receiveMessage(message);
  }

  private receiveMessage(message: Uint8Array): WorldReceived {
    const s = this.session,
      w = s.windowSize;
    if (message.length <= s.checkBytes)
      throw new NetError(NET_ERROR.PACKET_TRUNCATED, `message of ${message.length} bytes`, message.length * 8);
    const stream = this.stream;
    stream.reset(message.subarray(0, message.length - s.checkBytes));
    const header: WorldHeader = { sequence: 0, baselineOffset: 0 };
    serializeWorldHeader(stream, header, w);
    const sequence = header.sequence;
    let baseline: WorldSnapshot | null = null,
      baselineSequence = -1;
    if (header.baselineOffset > 0) {
      baselineSequence = (sequence - header.baselineOffset + SEQUENCE_MOD) % SEQUENCE_MOD;
      const slot = baselineSequence % w;
      if (this.ringSequence[slot] !== baselineSequence) {
        throw new NetError(
          NET_ERROR.UNKNOWN_BASELINE,
          `snapshot ${sequence} is a delta against ${baselineSequence}, which this client does not hold`,
        );
      }
      baseline = this.ring[slot];
    }
    // The check is keyed on the baseline held here: a delta coded against another snapshot of that sequence fails it.
    if (!checkMatches(this.schema.hash, baseline ? baseline.hash : 0, message, s.checkBytes)) {
      throw new NetError(
        NET_ERROR.BAD_CHECKSUM,
        'message check does not match (corrupted, another schema, or a baseline other than the one held under its sequence)',
        0,
      );
    }
    const out = this.scratch;
    this.codec.serialize(stream, out, baseline);
    stream.finish();
    out.rehash();
    const isNewest = this.newest < 0 || sequenceGreaterThan(sequence, this.newest);
    let tick: number;
    if (this.newest < 0) tick = sequence;
    else {
      const d = sequenceDistance(sequence, this.newest);
      tick = this.newestTick + (d < SEQUENCE_MOD / 2 ? d : d - SEQUENCE_MOD);
    }
    // Keep it unless it is older than the window (it would overwrite a newer slot).
    let kept = out;
    if (isNewest || sequenceDistance(this.newest, sequence) < w) {
      const slot = sequence % w;
      this.ring[slot].copyFrom(out);
      this.ringSequence[slot] = sequence;
      kept = this.ring[slot];
    }
    if (isNewest) {
      this.newest = sequence;
      this.newestTick = tick;
    }
    this.received[sequence % 64] = sequence;
    return { sequence, tick, baselineSequence, isNewest, snapshot: kept, bytes: message.length };
  }

  /**
   * The ack datagram: the newest sequence received (16 bits), a 32-bit field whose bit i
   * says whether sequence newest − 1 − i arrived, then the check. Throws {@link NetError}
   * `BAD_ARGUMENT` before any snapshot arrived.
   */
  ack(): Uint8Array {
    if (this.newest < 0) throw new NetError(NET_ERROR.BAD_ARGUMENT, 'nothing received to acknowledge yet');
    let field = 0;
    for (let i = 0; i < ACK_FIELD_BITS; i++) {
      const q = (this.newest - 1 - i + SEQUENCE_MOD) % SEQUENCE_MOD;
      if (this.received[q % 64] === q) field |= 1 << i;
    }
    const stream = new WriteStream(8);
    stream.serializeBits(this.newest, SEQUENCE_BITS);
    stream.serializeBits(field >>> 0, ACK_FIELD_BITS);
    return seal(this.schema.hash, 0, stream.finish(), this.session.checkBytes);
  }
}
