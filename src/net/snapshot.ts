/**
 * Pose snapshots on the wire. A pose is first quantised to integer codes
 * ({@link CODE_STRIDE} per bone, laid out by the {@link SnapshotSchema}); snapshots are
 * then sent either absolute (every sent bone, or one flag bit for a bone at its default
 * pose) or as a delta against a baseline snapshot the receiver holds. Both are lossless on
 * the codes, so the decoded pose only carries the quantisation error the schema bounds.
 *
 * Each message is one `serialize*` description run by a {@link WriteStream} or a
 * {@link ReadStream} (bit-stream.ts). docs/net.md lists the fields.
 */
import { NET_ERROR, NetError, bitsRequired, type BitStream } from './bit-stream.js';
import { CODE_STRIDE } from './quantize.js';
import type { SnapshotSchema } from './schema.js';
import { SMALLEST_THREE_INDEX_BITS } from './smallest-three.js';

/** True when bone `b`'s sent codes are equal in `a` and `b2`. */
export function boneCodesEqual(schema: SnapshotSchema, b: number, a: Int32Array, b2: Int32Array): boolean {
  const c = b * CODE_STRIDE;
  for (let i = 0; i < CODE_STRIDE; i++) if (schema.codeBits[c + i] > 0 && a[c + i] !== b2[c + i]) return false;
  return true;
}

/**
 * Absolute snapshot, one description for both directions. For every bone with a sent slot,
 * in order: 1 bit "at default pose"; if 0, every sent slot on its bit count (rotation: 2-bit
 * index and three components; then translation x y z and scale x y z where sent).
 * Serialized: never reorder.
 */
export function serializeAbsolute(stream: BitStream, schema: SnapshotSchema, codes: Int32Array): void {
  const bits = schema.codeBits,
    def = schema.defaultCodes;
  const sent = schema.sentBones;
  for (let j = 0; j < sent.length; j++) {
    const b = sent[j],
      c = b * CODE_STRIDE;
    const atDefault = stream.serializeBool(stream.isWriting && boneCodesEqual(schema, b, codes, def));
    for (let i = 0; i < CODE_STRIDE; i++) {
      const n = bits[c + i];
      if (n === 0) continue;
      codes[c + i] = atDefault ? def[c + i] : stream.serializeBits(codes[c + i], n);
    }
  }
}

// Relative index codes of changed bones (gap = bones skipped since the previous changed one):
// '1' + 1 bit for 0..1, '01' + 2 bits for 2..5, '001' + 4 bits for 6..21, '000' + the gap in full.
const GAP_TIERS = [1, 2, 4] as const;

function gapBits(gap: number, fullBits: number): number {
  let base = 0;
  for (let t = 0; t < GAP_TIERS.length; t++) {
    const size = 1 << GAP_TIERS[t];
    if (gap < base + size) return t + 1 + GAP_TIERS[t];
    base += size;
  }
  return GAP_TIERS.length + fullBits;
}

function serializeGap(stream: BitStream, gap: number, fullBits: number): number {
  let base = 0;
  for (let t = 0; t < GAP_TIERS.length; t++) {
    const size = 1 << GAP_TIERS[t];
    const here = stream.serializeBool(gap >= base && gap < base + size);
    if (here) return base + stream.serializeBits(gap - base, GAP_TIERS[t]);
    base += size;
  }
  return stream.serializeBits(gap, fullBits);
}

/**
 * Encodes and decodes snapshot bodies for one schema, absolute or as a delta against a
 * baseline. Holds the per-packet scratch (allocated once).
 */
export class SnapshotCodec {
  private readonly changed: Uint8Array;

  constructor(readonly schema: SnapshotSchema) {
    this.changed = new Uint8Array(schema.sentBones.length);
  }

  /**
   * Delta snapshot, one description for both directions. On a reader, `codes` receives the
   * snapshot and `baseline` must hold the same codes the writer used.
   *
   * Layout: 1 bit "every sent bone changed"; if 0, 1 bit choosing how the changed bones are
   * listed — 0: one bit per sent bone; 1: their count (bitsRequired(sent bones) bits) and
   * each one's gap since the previous (tiers '1'+1 bit, '01'+2, '001'+4, '000'+the gap on
   * bitsRequired(sent bones − 1) bits);
   * the writer takes the shorter. Then 1 bit "some changed bone has a new smallest-three
   * index" (only if the schema sends rotations), and the packet's width shift
   * ({@link DELTA_SHIFT_BITS} bits, shift = value + {@link DELTA_SHIFT_MIN}), which the
   * writer picks to make the body shortest. Then for each changed bone: if its rotation
   * is sent and that bit was 1, 1 bit "same index as the baseline"; with the same index the
   * three component deltas follow, with a new one the 2-bit index and the three components
   * in full; then each sent translation and scale component as a delta. A component delta
   * d = code − baseline is '0' + d on the small width (offset to unsigned), '10' + d on the
   * large width, or '11' + the code in full (the large tier is left out when it is no
   * wider than the small one or no narrower than the code), with widths
   * clamp(bits − offset + shift, 1, bits) from the schema's offsets. Serialized: never reorder.
   *
   * A reader throws {@link NetError} `BAD_VALUE` when a delta leaves a code's range or a
   * bone index runs past the last bone.
   */
  serializeDelta(stream: BitStream, codes: Int32Array, baseline: Int32Array): void {
    const s = this.schema;
    const sent = s.sentBones;
    const n = sent.length;
    const changed = this.changed;
    const bits = s.codeBits;
    const fullBits = bitsRequired(n - 1);
    let useIndices = false,
      count = 0,
      newIndex = false;
    if (stream.isWriting) {
      let indexCost = bitsRequired(n),
        prev = -1;
      for (let j = 0; j < n; j++) {
        changed[j] = boneCodesEqual(s, sent[j], codes, baseline) ? 0 : 1;
        if (changed[j]) {
          count++;
          indexCost += gapBits(j - prev - 1, fullBits);
          prev = j;
        }
        const c = sent[j] * CODE_STRIDE;
        if (bits[c] > 0 && codes[c] !== baseline[c]) newIndex = true;
      }
      useIndices = indexCost < n;
    }
    if (stream.serializeBool(count === n)) {
      changed.fill(1);
    } else if (stream.serializeBool(useIndices)) {
      count = stream.serializeInt(count, 0, n);
      if (stream.isReading) changed.fill(0);
      let prev = -1;
      for (let k = 0; k < count; k++) {
        let gap = 0;
        if (stream.isWriting) {
          let j = prev + 1;
          while (!changed[j]) j++;
          gap = j - prev - 1;
        }
        const at = stream.bitOffset;
        gap = serializeGap(stream, gap, fullBits);
        const j = prev + 1 + gap;
        if (j >= n) throw new NetError(NET_ERROR.BAD_VALUE, `changed bone ${j} is past the last of ${n}`, at);
        changed[j] = 1;
        prev = j;
      }
    } else {
      for (let j = 0; j < n; j++) changed[j] = stream.serializeBool(changed[j] === 1) ? 1 : 0;
    }
    if (s.sendsRotations) newIndex = stream.serializeBool(newIndex);
    let shift = 0;
    if (stream.isWriting) {
      let best = Infinity;
      for (let v = DELTA_SHIFT_MIN; v < DELTA_SHIFT_MIN + (1 << DELTA_SHIFT_BITS); v++) {
        const cost = this.componentCost(codes, baseline, v);
        if (cost < best) {
          best = cost;
          shift = v;
        }
      }
    }
    shift = stream.serializeBits(shift - DELTA_SHIFT_MIN, DELTA_SHIFT_BITS) + DELTA_SHIFT_MIN;
    const smallOffset = s.deltaSmallOffset - shift,
      largeOffset = s.deltaLargeOffset - shift;
    for (let j = 0; j < n; j++) {
      const b = sent[j],
        c = b * CODE_STRIDE;
      if (!changed[j]) {
        for (let i = 0; i < CODE_STRIDE; i++) if (bits[c + i] > 0) codes[c + i] = baseline[c + i];
        continue;
      }
      let first = 4;
      if (bits[c] > 0) {
        first = 1;
        if (!newIndex || stream.serializeBool(codes[c] === baseline[c])) {
          codes[c] = baseline[c];
        } else {
          codes[c] = stream.serializeBits(codes[c], SMALLEST_THREE_INDEX_BITS);
          for (let i = 1; i <= 3; i++) codes[c + i] = stream.serializeBits(codes[c + i], bits[c + i]);
          first = 4;
        }
      }
      for (let i = first; i < CODE_STRIDE; i++) {
        const n2 = bits[c + i];
        if (n2 === 0) continue;
        codes[c + i] = serializeComponentDelta(
          stream,
          codes[c + i],
          baseline[c + i],
          n2,
          widthOf(n2, smallOffset),
          widthOf(n2, largeOffset),
        );
      }
    }
  }

  /** Bits the component deltas of changed bones with an unchanged index take at width shift `shift`. */
  private componentCost(codes: Int32Array, baseline: Int32Array, shift: number): number {
    const s = this.schema,
      bits = s.codeBits,
      sent = s.sentBones;
    const smallOffset = s.deltaSmallOffset - shift,
      largeOffset = s.deltaLargeOffset - shift;
    let cost = 0;
    for (let j = 0; j < sent.length; j++) {
      if (!this.changed[j]) continue;
      const c = sent[j] * CODE_STRIDE;
      const first = bits[c] > 0 && codes[c] !== baseline[c] ? 4 : 1;
      for (let i = first; i < CODE_STRIDE; i++) {
        const n = bits[c + i];
        if (n > 0)
          cost += componentDeltaBits(
            codes[c + i] - baseline[c + i],
            n,
            widthOf(n, smallOffset),
            widthOf(n, largeOffset),
          );
      }
    }
    return cost;
  }

  /** {@link serializeAbsolute} with this codec's schema. */
  serializeAbsolute(stream: BitStream, codes: Int32Array): void {
    serializeAbsolute(stream, this.schema, codes);
  }
}

/** Bits of the packet's delta width shift. */
export const DELTA_SHIFT_BITS = 3;
/** Smallest delta width shift; shifts run from here up by 2^DELTA_SHIFT_BITS − 1. */
export const DELTA_SHIFT_MIN = -5;

function widthOf(bits: number, offset: number): number {
  const w = bits - offset;
  return w < 1 ? 1 : w > bits ? bits : w;
}

function componentDeltaBits(d: number, bits: number, small: number, large: number): number {
  const hs = 2 ** (small - 1);
  if (d >= -hs && d < hs) return 1 + small;
  if (large > small && large < bits) {
    const hl = 2 ** (large - 1);
    return d >= -hl && d < hl ? 2 + large : 2 + bits;
  }
  return 1 + bits;
}

function serializeComponentDelta(
  stream: BitStream,
  code: number,
  base: number,
  bits: number,
  small: number,
  large: number,
): number {
  const at = stream.bitOffset;
  const d = code - base;
  const hs = 2 ** (small - 1);
  let value: number;
  if (!stream.serializeBool(stream.isWriting && !(d >= -hs && d < hs))) {
    value = base + stream.serializeBits(d + hs, small) - hs;
  } else if (large > small && large < bits) {
    const hl = 2 ** (large - 1);
    if (!stream.serializeBool(stream.isWriting && !(d >= -hl && d < hl)))
      value = base + stream.serializeBits(d + hl, large) - hl;
    else value = stream.serializeBits(code, bits);
  } else {
    value = stream.serializeBits(code, bits);
  }
  if (value < 0 || value > 2 ** bits - 1)
    throw new NetError(NET_ERROR.BAD_VALUE, `delta leaves the code range 0..${2 ** bits - 1}: ${value}`, at);
  return value;
}
