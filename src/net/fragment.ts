/**
 * Fragmentation of messages larger than a link's MTU, and their reassembly. A message of n
 * bytes over an MTU of m becomes ⌈n / (m − FRAGMENT_HEADER_BYTES)⌉ fragments; the receiver
 * returns the message once every fragment of it has arrived, in any order. The message
 * keeps its own check (the fragments are checked again by the message once whole), so this
 * layer only bounds memory: at most `maxFragments` per message and `slots` messages in
 * reassembly at once (the oldest is dropped).
 */
import { NET_ERROR, NetError } from './bit-stream.js';

/** Fragment header: marker byte, message sequence (2 bytes), fragment index, fragment count. */
export const FRAGMENT_HEADER_BYTES = 5;

/** Marker byte of a fragment: its lowest bit is 1, where a whole world message's first bit is 0. */
export const FRAGMENT_MARKER = 0xff;

/** Defaults of {@link FragmentOptions}. */
export const FRAGMENT_DEFAULTS = {
  mtu: 1200,
  maxFragments: 64,
  slots: 4,
} as const;

/** How large datagrams may be and how much reassembly may hold. */
export interface FragmentOptions {
  /** Largest datagram in bytes, 64..65507. Default 1200 (fits IPv6's minimum MTU with UDP headers). */
  mtu?: number;
  /** Most fragments of one message, 2..255. Default 64 (75 KB at the default MTU). */
  maxFragments?: number;
  /** Messages reassembled at once, 1..64. Default 4. */
  slots?: number;
}

/** Checked {@link FragmentOptions}; throws {@link NetError} `BAD_ARGUMENT`. */
export function resolveFragmentOptions(options: FragmentOptions = {}): Required<FragmentOptions> {
  const mtu = options.mtu ?? FRAGMENT_DEFAULTS.mtu;
  const maxFragments = options.maxFragments ?? FRAGMENT_DEFAULTS.maxFragments;
  const slots = options.slots ?? FRAGMENT_DEFAULTS.slots;
  if (!Number.isInteger(mtu) || mtu < 64 || mtu > 65507)
    throw new NetError(NET_ERROR.BAD_ARGUMENT, `mtu must be a whole number of bytes in 64..65507, got ${mtu}`);
  if (!Number.isInteger(maxFragments) || maxFragments < 2 || maxFragments > 255)
    throw new NetError(NET_ERROR.BAD_ARGUMENT, `maxFragments must be in 2..255, got ${maxFragments}`);
  if (!Number.isInteger(slots) || slots < 1 || slots > 64)
    throw new NetError(NET_ERROR.BAD_ARGUMENT, `slots must be in 1..64, got ${slots}`);
  return { mtu, maxFragments, slots };
}

/**
 * `message` as datagrams of at most `mtu` bytes: itself when it fits, else fragments
 * tagged with `sequence` (16 bits). Throws {@link NetError} `BAD_ARGUMENT` when it needs
 * more than `maxFragments`.
 */
export function fragmentMessage(
  message: Uint8Array,
  sequence: number,
  options: Required<FragmentOptions>,
): Uint8Array[] {
  if (message.length <= options.mtu) return [message];
  const payload = options.mtu - FRAGMENT_HEADER_BYTES;
  const count = Math.ceil(message.length / payload);
  if (count > options.maxFragments) {
    throw new NetError(
      NET_ERROR.BAD_ARGUMENT,
      `message of ${message.length} bytes needs ${count} fragments of ${options.mtu} bytes (most ${options.maxFragments})`,
    );
  }
  const out: Uint8Array[] = [];
  for (let i = 0; i < count; i++) {
    const part = message.subarray(i * payload, Math.min(message.length, (i + 1) * payload));
    const d = new Uint8Array(FRAGMENT_HEADER_BYTES + part.length);
    d[0] = FRAGMENT_MARKER;
    d[1] = sequence & 0xff;
    d[2] = (sequence >>> 8) & 0xff;
    d[3] = i;
    d[4] = count;
    d.set(part, FRAGMENT_HEADER_BYTES);
    out.push(d);
  }
  return out;
}

interface Slot {
  sequence: number;
  count: number;
  have: number;
  parts: (Uint8Array | undefined)[];
  age: number;
}

/** Collects fragments into messages. */
export class Reassembler {
  private readonly options: Required<FragmentOptions>;
  private readonly slots: Slot[] = [];
  private clock = 0;

  constructor(options: FragmentOptions = {}) {
    this.options = resolveFragmentOptions(options);
  }

  /**
   * Takes a fragment datagram (starting with {@link FRAGMENT_MARKER}); returns the whole
   * message once its last fragment arrives, else undefined. Throws {@link NetError}
   * `PACKET_TRUNCATED` / `BAD_VALUE` for a malformed fragment header (a bad count, an index
   * past it, a count that disagrees with the message's other fragments, a size over the MTU).
   */
  add(datagram: Uint8Array): Uint8Array | undefined {
    const o = this.options;
    if (datagram.length <= FRAGMENT_HEADER_BYTES)
      throw new NetError(NET_ERROR.PACKET_TRUNCATED, `fragment of ${datagram.length} bytes`, datagram.length * 8);
    if (datagram.length > o.mtu)
      throw new NetError(NET_ERROR.BAD_VALUE, `fragment of ${datagram.length} bytes is over the MTU of ${o.mtu}`, 0);
    if (datagram[0] !== FRAGMENT_MARKER) throw new NetError(NET_ERROR.BAD_VALUE, 'not a fragment', 0);
    const sequence = datagram[1] | (datagram[2] << 8),
      index = datagram[3],
      count = datagram[4];
    if (count < 2 || count > o.maxFragments)
      throw new NetError(NET_ERROR.BAD_VALUE, `fragment count ${count} (2..${o.maxFragments})`, 32);
    if (index >= count) throw new NetError(NET_ERROR.BAD_VALUE, `fragment ${index} of ${count}`, 24);
    this.clock++;
    let slot = this.slots.find((s) => s.sequence === sequence);
    if (slot && slot.count !== count)
      throw new NetError(NET_ERROR.BAD_VALUE, `fragment says ${count} fragments, earlier ones ${slot.count}`, 32);
    if (!slot) {
      if (this.slots.length >= o.slots) {
        let oldest = 0;
        for (let i = 1; i < this.slots.length; i++) if (this.slots[i].age < this.slots[oldest].age) oldest = i;
        this.slots.splice(oldest, 1);
      }
      slot = { sequence, count, have: 0, parts: new Array<Uint8Array | undefined>(count), age: this.clock };
      this.slots.push(slot);
    }
    slot.age = this.clock;
    if (slot.parts[index]) return undefined; // duplicate
    slot.parts[index] = datagram.slice(FRAGMENT_HEADER_BYTES);
    if (++slot.have < count) return undefined;
    this.slots.splice(this.slots.indexOf(slot), 1);
    let length = 0;
    for (const p of slot.parts) length += p!.length;
    const message = new Uint8Array(length);
    let at = 0;
    for (const p of slot.parts) {
      message.set(p!, at);
      at += p!.length;
    }
    return message;
  }

  /** Messages waiting for fragments. */
  get pending(): number {
    return this.slots.length;
  }
}
