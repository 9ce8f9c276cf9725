/**
 * The transport form of a clip (docs/transport.md): the bytes a game or web page downloads.
 * It is a lossless re-coding of the runtime `.bpk` bytes, so decoding it at load time gives
 * back the exact file the compressor measured, and the runtime decoder is unchanged.
 *
 * The layout is written once, in {@link codeClip}, for both directions (see
 * {@link BinaryCoder}): the encoder (compress/transport.ts) and the decoder walk the same
 * code, so they cannot drift apart.
 */
import {
  ANIMATED_COMPONENTS,
  CLIP_RANGE_BYTES,
  DROP_SHIFT,
  HEADER,
  MAGIC,
  MAX_BONES,
  MAX_FILE_BYTES,
  RANGE_COMPONENTS,
  RATE_MASK,
  SEGMENT_RANGE_BYTES,
  TRACKS_PER_BONE,
  TRACK_KIND,
  VERSION,
  align4,
  bitsetWords,
  segmentCountFor,
  segmentSampleCount,
} from './format.js';
import {
  MAX_QUANT,
  floatFromBits,
  rotationRangeExtent,
  rotationRangeMin,
  segmentConstant,
  segmentOffset,
  segmentStep,
  trackComponentBits,
} from './bits.js';
import { RangeDecoder, SIGNED_BLOCK, createProbs, type BinaryCoder } from './entropy-decoder.js';
import { FormatError, expectVersion, type FormatErrorCode } from './errors.js';
import { CompressedClip, type OpenOptions } from './compressed-clip.js';

/** "BPT" followed by 0x1A: distinct from the runtime form's "BPK". */
export const TRANSPORT_MAGIC = 0x1a545042; // little-endian bytes: 42 50 54 1A
/** Transport format version; every other is rejected with UNSUPPORTED_VERSION. */
export const TRANSPORT_VERSION = 1;
/** Transport header byte offsets. Serialized. */
export const TRANSPORT_HEADER = {
  MAGIC: 0, // u32
  VERSION: 4, // u16
  FLAGS: 6, // u16, 0
  RUNTIME_SIZE: 8, // u32: the size of the .bpk bytes it decodes to
  SIZE: 12,
} as const;
/**
 * The runtime bytes may be at most this many times the transport bytes (plus
 * {@link EXPANSION_SLACK}), so the memory and work of a decode are bounded per input byte.
 * The coder spends at least 0.022 bits on any decision (probabilities stay within
 * [31, 2017] / 2048), so real clips stay far below it; the encoder refuses any clip above it.
 */
export const MAX_EXPANSION = 1024;
/** Bytes of runtime size allowed beyond {@link MAX_EXPANSION} times the input. */
export const EXPANSION_SLACK = 4096;

// Prediction orders of a stored component in a segment. Serialized.
const ORDER_RAW = 0,
  ORDER_DELTA = 1,
  ORDER_LINEAR = 2,
  ORDERS = 3;
/** Contexts of key residuals: order (2) × bit-count class (4) × previous magnitude class (12). */
const PREV_CLASSES = 12;
const BIT_CLASSES = 4;
const RESIDUAL_CONTEXTS = 2 * BIT_CLASSES * PREV_CLASSES;
const BIT_CLASS: Uint8Array = (() => {
  const t = new Uint8Array(33);
  for (let b = 0; b <= 32; b++) t[b] = b <= 4 ? 0 : b <= 7 ? 1 : b <= 10 ? 2 : 3;
  return t;
})();

/** Adaptive probabilities of one clip, all starting at one half. */
class Models {
  readonly header = createProbs(4 * 256); // prefix bytes by position mod 4
  readonly tail = createProbs(8 * 256); // bytes after the segments, by the previous byte's top 3 bits
  readonly rate = createProbs(65 * 64); // by the track's rate in the previous segment (64: none)
  readonly drop = createProbs(6 * 4); // rotations by the previous drop (4: none), 5: other tracks
  readonly rangeByte = createProbs(4 * 256); // min byte, extent byte, rate-0 byte, other
  readonly rangeDelta = createProbs(3 * SIGNED_BLOCK); // min, extent: change from the previous segment; min: from the extrapolated path
  readonly order = createProbs(4 * 4); // by the previous segment's order (3: none)
  readonly residual = createProbs(RESIDUAL_CONTEXTS * SIGNED_BLOCK);
  readonly first = createProbs(2 * BIT_CLASSES * SIGNED_BLOCK); // key 0 predicted from the previous segment
  readonly flag = createProbs(2); // padding bytes zero, padding bits zero
}

/** Codes the low `count` (0 … 32) bits of `value` at probability one half. */
function direct(coder: BinaryCoder, value: number, count: number): number {
  if (count <= 16) return coder.direct(value, count);
  const hi = coder.direct(Math.floor(value / 65536), count - 16);
  return hi * 65536 + coder.direct(value & 0xffff, 16);
}

/** Bit length of a non-negative integer below 2^31 (0 for 0). */
function bitLength(v: number): number {
  return 32 - Math.clz32(v);
}

/** What the segment coder needs from the tables before the segments. */
interface ClipLayout {
  readonly sampleCount: number;
  readonly segmentCount: number;
  readonly segmentsOffset: number;
  readonly animated: number;
  readonly rotation: Uint8Array; // 1 for an animated rotation track
  readonly clipRanges: Float64Array; // per animated track: 8 floats, (min, extent) × 4
}

function u32(bytes: Uint8Array, at: number): number {
  return (bytes[at] | (bytes[at + 1] << 8) | (bytes[at + 2] << 16) | (bytes[at + 3] << 24)) >>> 0;
}
function u16(bytes: Uint8Array, at: number): number {
  return bytes[at] | (bytes[at + 1] << 8);
}
const F32_SCRATCH = new Float32Array(1);
const U32_SCRATCH = new Uint32Array(F32_SCRATCH.buffer);
function f32(bytes: Uint8Array, at: number): number {
  U32_SCRATCH[0] = u32(bytes, at);
  return F32_SCRATCH[0];
}

/**
 * Reads what the segment coder needs from the runtime header and tables, checking each
 * field it relies on (the rest is checked by `CompressedClip.open` after decoding).
 */
function readLayout(bytes: Uint8Array, segmentsOffset: number): ClipLayout {
  const bad = (code: FormatErrorCode, message: string, at: number): never => {
    throw new FormatError(code, `decoded clip header: ${message}`, at);
  };
  const boneCount = u16(bytes, HEADER.BONE_COUNT);
  if (boneCount < 1 || boneCount > MAX_BONES) bad('BAD_HEADER', `bone count ${boneCount}`, HEADER.BONE_COUNT);
  const sampleCount = u32(bytes, HEADER.SAMPLE_COUNT);
  if (sampleCount < 1) bad('BAD_HEADER', 'sample count 0', HEADER.SAMPLE_COUNT);
  const segmentCount = u32(bytes, HEADER.SEGMENT_COUNT);
  if (segmentCount !== segmentCountFor(sampleCount))
    bad('BAD_HEADER', `segment count ${segmentCount} for ${sampleCount} samples`, HEADER.SEGMENT_COUNT);
  const trackCount = boneCount * TRACKS_PER_BONE;
  const words = bitsetWords(trackCount);
  const bitsets = u32(bytes, HEADER.BITSETS_OFFSET);
  // The default and constant bitsets come first (then any others the version defines).
  if (bitsets < HEADER.SIZE || bitsets + 8 * words > segmentsOffset)
    bad('BAD_OFFSET', `bitsets at ${bitsets}`, HEADER.BITSETS_OFFSET);
  const kinds: number[] = [];
  for (let t = 0; t < trackCount; t++) {
    const word = 4 * (t >>> 5),
      bit = 1 << (t & 31);
    if ((u32(bytes, bitsets + word) & bit) === 0 && (u32(bytes, bitsets + 4 * words + word) & bit) === 0)
      kinds.push(t % TRACKS_PER_BONE);
  }
  const animated = kinds.length;
  if (animated !== u16(bytes, HEADER.ANIMATED_TRACK_COUNT))
    bad(
      'BAD_HEADER',
      `animated track count ${u16(bytes, HEADER.ANIMATED_TRACK_COUNT)}, bitsets say ${animated}`,
      HEADER.ANIMATED_TRACK_COUNT,
    );
  const rangesAt = u32(bytes, HEADER.CLIP_RANGES_OFFSET);
  let rangeBytes = 0;
  for (const k of kinds) rangeBytes += CLIP_RANGE_BYTES[k];
  if (rangesAt < HEADER.SIZE || rangesAt + rangeBytes > segmentsOffset)
    bad('BAD_OFFSET', `clip ranges at ${rangesAt}`, HEADER.CLIP_RANGES_OFFSET);
  const rotation = new Uint8Array(animated);
  const clipRanges = new Float64Array(8 * animated);
  let at = rangesAt;
  kinds.forEach((kind, j) => {
    rotation[j] = kind === TRACK_KIND.ROTATION ? 1 : 0;
    for (let c = 0; c < RANGE_COMPONENTS[kind]; c++) {
      if (kind === TRACK_KIND.ROTATION) {
        clipRanges[8 * j + 2 * c] = rotationRangeMin(u16(bytes, at));
        clipRanges[8 * j + 2 * c + 1] = rotationRangeExtent(u16(bytes, at + 2));
        at += 4;
      } else {
        clipRanges[8 * j + 2 * c] = f32(bytes, at);
        clipRanges[8 * j + 2 * c + 1] = f32(bytes, at + 4);
        at += 8;
      }
    }
  });
  return { sampleCount, segmentCount, segmentsOffset, animated, rotation, clipRanges };
}

/**
 * The transport layout, for both directions. `bytes` holds the runtime file: read when
 * encoding, written when decoding (it starts zeroed, `size` bytes).
 */
export function codeClip(coder: BinaryCoder, bytes: Uint8Array, size: number): void {
  const m = new Models();
  const enc = coder.encoding;
  // 1. The header, then (its size known) the tables up to the first segment.
  if (size < HEADER.SIZE)
    throw new FormatError(
      'TOO_SMALL',
      `decoded clip of ${size} bytes is smaller than the ${HEADER.SIZE}-byte header`,
      TRANSPORT_HEADER.RUNTIME_SIZE,
    );
  for (let i = 0; i < HEADER.SIZE; i++) bytes[i] = coder.tree(m.header, (i & 3) * 256, 8, bytes[i]);
  if (u32(bytes, HEADER.MAGIC) !== MAGIC)
    throw new FormatError('BAD_MAGIC', 'decoded clip is not a bonepress clip (bad magic)', HEADER.MAGIC);
  const version = u16(bytes, HEADER.VERSION);
  if (version !== VERSION)
    throw new FormatError(
      'UNSUPPORTED_VERSION',
      `decoded clip has format version ${version}; this build reads version ${VERSION}`,
      HEADER.VERSION,
    );
  const segmentsOffset = u32(bytes, HEADER.SEGMENTS_OFFSET);
  if (segmentsOffset < HEADER.SIZE || segmentsOffset > size || (segmentsOffset & 3) !== 0) {
    throw new FormatError(
      'BAD_OFFSET',
      `decoded clip's segments at ${segmentsOffset} (file of ${size} bytes)`,
      HEADER.SEGMENTS_OFFSET,
    );
  }
  for (let i = HEADER.SIZE; i < segmentsOffset; i++) bytes[i] = coder.tree(m.header, (i & 3) * 256, 8, bytes[i]);
  const layout = readLayout(bytes, segmentsOffset);
  // 2. The segments.
  const end = codeSegments(coder, m, bytes, size, layout);
  // 3. Everything after them (the names), by the previous byte's top 3 bits.
  let prev = 0;
  for (let i = end; i < size; i++) prev = bytes[i] = coder.tree(m.tail, (prev >>> 5) * 256, 8, enc ? bytes[i] : 0);
}

function codeSegments(coder: BinaryCoder, m: Models, bytes: Uint8Array, size: number, layout: ClipLayout): number {
  const { animated: count, segmentCount, sampleCount, rotation, clipRanges } = layout;
  let at = layout.segmentsOffset;
  if (count === 0) return at; // segments without animated tracks are empty
  const enc = coder.encoding;
  const headerBytes = align4(count * (1 + SEGMENT_RANGE_BYTES));
  // Every segment holds 7 bytes per animated track: checked before the per-track tables exist.
  if (at + headerBytes > size)
    throw new FormatError(
      'BAD_SECTION',
      `segment 0 (${count} animated tracks) runs past the end of the decoded clip`,
      at,
    );
  const words = new Uint32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength >>> 2);
  const comps = count * ANIMATED_COMPONENTS;
  const prevRate = new Uint8Array(count).fill(64);
  const prevDrop = new Uint8Array(count).fill(4);
  const prevRange = new Uint8Array(count * SEGMENT_RANGE_BYTES);
  const prevOrder = new Uint8Array(comps).fill(3);
  const prevClass = new Uint8Array(comps);
  const bits = new Uint8Array(comps);
  // Dequantisation of each stored component in the current segment.
  const offs = new Float64Array(comps),
    steps = new Float64Array(comps);
  // The last two decoded values of each component (x, y, z, w) in the previous segment.
  const histLast = new Float64Array(4 * count),
    histPrev = new Float64Array(4 * count);
  const histOk = new Uint8Array(4 * count),
    histDrop = new Uint8Array(count);
  const maxKeys = segmentSampleCount(segmentCount - 1, segmentCount, sampleCount) > 16 ? 23 : 16;
  const q = new Float64Array(maxKeys * comps); // component-major: q[(j·3 + c)·keys + k]
  for (let s = 0; s < segmentCount; s++) {
    const keys = segmentSampleCount(s, segmentCount, sampleCount);
    if (at + headerBytes > size)
      throw new FormatError('BAD_SECTION', `segment ${s} runs past the end of the decoded clip`, at);
    const rangesAt = at + count;
    // Rate bytes: rate by the previous segment's rate, drop by the previous drop.
    for (let j = 0; j < count; j++) {
      const rb = bytes[at + j];
      const rate = coder.tree(m.rate, prevRate[j] * 64, 6, rb & RATE_MASK);
      const drop = coder.tree(m.drop, (rotation[j] ? prevDrop[j] : 5) * 4, 2, rb >>> DROP_SHIFT);
      bytes[at + j] = rate | (drop << DROP_SHIFT);
    }
    // Range slots: the min from the path the previous segment's last two values
    // extrapolate, otherwise min and extent as a change from the previous segment's.
    for (let j = 0; j < count; j++) {
      const rb = bytes[at + j],
        rate = rb & RATE_MASK;
      const o = rangesAt + j * SEGMENT_RANGE_BYTES;
      const quantised = rate >= 1 && rate <= 24;
      const drop = rotation[j] ? rb >>> DROP_SHIFT : 3;
      const continued = quantised && (!rotation[j] || histDrop[j] === drop);
      const same = continued && prevRate[j] >= 1 && prevRate[j] <= 24;
      for (let i = 0; i < SEGMENT_RANGE_BYTES; i++) {
        const p = j * SEGMENT_RANGE_BYTES + i;
        let pred = -1,
          ctx = i & 1;
        if (continued && ctx === 0) {
          const c = i >>> 1 < drop ? i >>> 1 : (i >>> 1) + 1;
          const h = 4 * j + c,
            min = clipRanges[8 * j + 2 * c],
            ext = clipRanges[8 * j + 2 * c + 1];
          if (histOk[h] && ext > 0) {
            const last = histLast[h],
              slope = last - histPrev[h],
              a = last + slope,
              e = last + slope * keys;
            pred = Math.floor((((a < e ? a : e) - min) / ext) * 255);
            pred = pred < 0 ? 0 : pred > 255 ? 255 : pred;
            ctx = 2;
          }
        }
        if (pred < 0 && same) pred = prevRange[p];
        if (pred >= 0) {
          const d = coder.signed(m.rangeDelta, ctx * SIGNED_BLOCK, bytes[o + i] - pred, 0, o + i);
          const v = pred + d;
          if (v < 0 || v > 255) throw new FormatError('BAD_VALUE', `segment ${s}: range byte ${v}`, o + i);
          bytes[o + i] = v;
        } else {
          bytes[o + i] = coder.tree(m.rangeByte, (quantised ? i & 1 : rate === 0 ? 2 : 3) * 256, 8, bytes[o + i]);
        }
        prevRange[p] = bytes[o + i];
      }
    }
    codePadding(coder, m, bytes, at + count * (1 + SEGMENT_RANGE_BYTES), at + headerBytes);
    // Bits of each stored component, as the runtime computes them.
    let keyBits = 0;
    for (let j = 0; j < count; j++) {
      const rb = bytes[at + j],
        rate = rb & RATE_MASK;
      if (rate >= 1 && rate <= 24) {
        trackComponentBits(
          bytes,
          rangesAt + j * SEGMENT_RANGE_BYTES,
          rate,
          rotation[j] ? rb >>> DROP_SHIFT : 3,
          clipRanges,
          8 * j,
          bits,
          3 * j,
        );
      } else if (rate === 0 || rate === 32) {
        bits[3 * j] = bits[3 * j + 1] = bits[3 * j + 2] = rate;
      } else {
        throw new FormatError('BAD_VALUE', `segment ${s}: animated track ${j} has rate ${rate}`, at + j);
      }
      keyBits += bits[3 * j] + bits[3 * j + 1] + bits[3 * j + 2];
      if (rate >= 1 && rate <= 24) {
        const drop = rotation[j] ? rb >>> DROP_SHIFT : 3,
          o = rangesAt + j * SEGMENT_RANGE_BYTES;
        for (let i = 0; i < ANIMATED_COMPONENTS; i++) {
          const r = 8 * j + 2 * (i < drop ? i : i + 1);
          offs[3 * j + i] = segmentOffset(clipRanges[r], clipRanges[r + 1], bytes[o + 2 * i]);
          steps[3 * j + i] = segmentStep(clipRanges[r + 1], bytes[o + 2 * i + 1], bits[3 * j + i]);
        }
      }
      prevRate[j] = rate;
      prevDrop[j] = rotation[j] ? rb >>> DROP_SHIFT : 4;
    }
    const keysAt = at + headerBytes;
    const totalBits = keys * keyBits;
    const segEnd = keysAt + 4 * Math.ceil(totalBits / 32);
    if (segEnd > size)
      throw new FormatError('BAD_SECTION', `segment ${s}'s keys run past the end of the decoded clip`, keysAt);
    const bit0 = keysAt * 8;
    if (enc) unpackKeys(words, bit0, keys, count, keyBits, bits, q);
    for (let i = 0; i < comps; i++) {
      const b = bits[i];
      if (b === 0) continue;
      const base = i * keys;
      if (b === 32) {
        for (let k = 0; k < keys; k++) q[base + k] = direct(coder, q[base + k], 32);
        continue;
      }
      // Key 0 continues the previous segment's last two values, in this segment's steps.
      const j = (i / 3) | 0,
        rb = bytes[at + j],
        drop = rotation[j] ? rb >>> DROP_SHIFT : 3;
      const h = 4 * j + (i - 3 * j < drop ? i - 3 * j : i - 3 * j + 1);
      let qLast = NaN,
        qPrev = NaN;
      if (histOk[h] && (!rotation[j] || histDrop[j] === drop) && steps[i] > 0) {
        qLast = (histLast[h] - offs[i]) / steps[i];
        qPrev = (histPrev[h] - offs[i]) / steps[i];
      }
      codeComponent(coder, m, q, base, keys, b, i, prevOrder, prevClass, keysAt, qLast, qPrev);
    }
    updateHistory(
      bytes,
      at,
      count,
      keys,
      rotation,
      clipRanges,
      bits,
      offs,
      steps,
      q,
      histLast,
      histPrev,
      histOk,
      histDrop,
    );
    if (!enc) packKeys(words, bit0, keys, count, keyBits, bits, q);
    // Padding bits of the last word.
    const pad = (segEnd - keysAt) * 8 - totalBits;
    if (pad > 0) {
      const w = (segEnd >>> 2) - 1;
      const shift = 32 - pad;
      const padValue = enc ? words[w] >>> shift : 0;
      if (coder.bit(m.flag, 1, padValue === 0 ? 0 : 1)) {
        const v = direct(coder, padValue, pad);
        words[w] = (words[w] | (v << shift)) >>> 0;
      }
    }
    at = segEnd;
  }
  return at;
}

/** Codes bytes [from, to): a flag for all zero (the writer's padding), else each at one half. */
function codePadding(coder: BinaryCoder, m: Models, bytes: Uint8Array, from: number, to: number): void {
  if (from >= to) return;
  let zero = 1;
  for (let i = from; i < to; i++) if (bytes[i] !== 0) zero = 0;
  if (coder.bit(m.flag, 0, zero ? 0 : 1)) for (let i = from; i < to; i++) bytes[i] = coder.direct(bytes[i], 8);
}

/**
 * Codes one stored component's keys in a segment: its prediction order, then the
 * residuals. `qLast` and `qPrev` are the previous segment's last two values in this
 * segment's steps (NaN when it did not store the component alike); without them key 0 is
 * stored as it is.
 */
function codeComponent(
  coder: BinaryCoder,
  m: Models,
  q: Float64Array,
  base: number,
  keys: number,
  b: number,
  comp: number,
  prevOrder: Uint8Array,
  prevClass: Uint8Array,
  at: number,
  qLast: number,
  qPrev: number,
): void {
  const max = MAX_QUANT[b];
  const order = coder.tree(
    m.order,
    prevOrder[comp] * 4,
    2,
    coder.encoding ? chooseOrder(q, base, keys, b, qLast, qPrev) : 0,
  );
  if (order >= ORDERS) throw new FormatError('BAD_VALUE', `prediction order ${order}`, at);
  prevOrder[comp] = order;
  if (order === ORDER_RAW) {
    for (let k = 0; k < keys; k++) q[base + k] = direct(coder, q[base + k], b);
    return;
  }
  const linear = order === ORDER_LINEAR;
  const history = qLast === qLast;
  if (history) {
    let pred = Math.round(linear ? 2 * qLast - qPrev : qLast);
    pred = pred < 0 ? 0 : pred > max ? max : pred;
    const v =
      pred + coder.signed(m.first, ((order - 1) * BIT_CLASSES + BIT_CLASS[b]) * SIGNED_BLOCK, q[base] - pred, 0, at);
    if (v < 0 || v > max) throw new FormatError('BAD_VALUE', `key value ${v} outside 0..${max}`, at);
    q[base] = v;
  } else {
    q[base] = direct(coder, q[base], b);
  }
  const ctxBase = ((order - 1) * BIT_CLASSES + BIT_CLASS[b]) * PREV_CLASSES;
  if (coder instanceof RangeDecoder) {
    prevClass[comp] = coder.residuals(
      m.residual,
      ctxBase,
      PREV_CLASSES,
      q,
      base,
      keys,
      max,
      linear,
      qLast,
      prevClass[comp],
      at,
    );
    return;
  }
  // The decoder runs the same loop fused (RangeDecoder.residuals).
  let cls = prevClass[comp],
    sign = 0;
  for (let k = 1; k < keys; k++) {
    const q1 = q[base + k - 1];
    let pred = !linear ? q1 : k > 1 ? 2 * q1 - q[base + k - 2] : history ? Math.round(2 * q1 - qLast) : q1;
    pred = pred < 0 ? 0 : pred > max ? max : pred;
    const ctx = (ctxBase + (cls < PREV_CLASSES ? cls : PREV_CLASSES - 1)) * SIGNED_BLOCK;
    const r = coder.signed(m.residual, ctx, q[base + k] - pred, sign, at);
    const v = pred + r;
    if (v < 0 || v > max) throw new FormatError('BAD_VALUE', `key value ${v} outside 0..${max}`, at);
    q[base + k] = v;
    cls = bitLength(r < 0 ? -r : r);
    sign = r === 0 ? 0 : r > 0 ? 1 : 2;
  }
  prevClass[comp] = cls;
}

/**
 * Records the last two decoded values of every stored component of the segment just
 * coded (the runtime's dequantisation), for the next segment's predictions.
 */
function updateHistory(
  bytes: Uint8Array,
  at: number,
  count: number,
  keys: number,
  rotation: Uint8Array,
  clipRanges: Float64Array,
  bits: Uint8Array,
  offs: Float64Array,
  steps: Float64Array,
  q: Float64Array,
  histLast: Float64Array,
  histPrev: Float64Array,
  histOk: Uint8Array,
  histDrop: Uint8Array,
): void {
  const rangesAt = at + count;
  const k1 = keys - 1,
    k2 = keys > 1 ? keys - 2 : keys - 1;
  for (let j = 0; j < count; j++) {
    const rb = bytes[at + j],
      rate = rb & RATE_MASK,
      drop = rotation[j] ? rb >>> DROP_SHIFT : 3;
    histDrop[j] = drop;
    histOk[4 * j + 3] = 0; // w, or nothing for a translation or scale
    for (let i = 0; i < ANIMATED_COMPONENTS; i++) {
      const c = i < drop ? i : i + 1,
        h = 4 * j + c,
        idx = 3 * j + i,
        base = idx * keys;
      histOk[h] = 1;
      if (rate === 0) {
        const r = 8 * j + 2 * c,
          o = rangesAt + j * SEGMENT_RANGE_BYTES + 2 * i;
        histLast[h] = histPrev[h] = segmentConstant(clipRanges[r], clipRanges[r + 1], bytes[o] | (bytes[o + 1] << 8));
      } else if (rate === 32) {
        histLast[h] = floatFromBits(q[base + k1]);
        histPrev[h] = floatFromBits(q[base + k2]);
      } else if (bits[idx] === 0) {
        histLast[h] = histPrev[h] = offs[idx];
      } else {
        histLast[h] = offs[idx] + q[base + k1] * steps[idx];
        histPrev[h] = offs[idx] + q[base + k2] * steps[idx];
      }
    }
    if (drop !== 3) histOk[4 * j + drop] = 0;
  }
}

/** The order whose residuals look cheapest (about class + 2 bits each, 1 for a zero). */
function chooseOrder(q: Float64Array, base: number, keys: number, b: number, qLast: number, qPrev: number): number {
  const max = MAX_QUANT[b];
  const history = qLast === qLast;
  let c1 = history ? 0 : b,
    c2 = c1;
  if (history) {
    c1 += cost(q[base] - clamp(Math.round(qLast), max));
    c2 += cost(q[base] - clamp(Math.round(2 * qLast - qPrev), max));
  }
  for (let k = 1; k < keys; k++) {
    const v = q[base + k],
      q1 = q[base + k - 1];
    c1 += cost(v - q1);
    c2 += cost(v - clamp(k > 1 ? 2 * q1 - q[base + k - 2] : history ? Math.round(2 * q1 - qLast) : q1, max));
  }
  const c0 = keys * b;
  return c0 <= c1 && c0 <= c2 ? ORDER_RAW : c1 <= c2 ? ORDER_DELTA : ORDER_LINEAR;
}

function cost(r: number): number {
  return r === 0 ? 1 : bitLength(r < 0 ? -r : r) + 2;
}

function clamp(v: number, max: number): number {
  return v < 0 ? 0 : v > max ? max : v;
}

/** Reads a segment's packed keys (key-major) into `q` (component-major). */
function unpackKeys(
  words: Uint32Array,
  bit0: number,
  keys: number,
  count: number,
  keyBits: number,
  bits: Uint8Array,
  q: Float64Array,
): void {
  let bit = bit0;
  const comps = count * ANIMATED_COMPONENTS;
  for (let k = 0; k < keys; k++) {
    bit = bit0 + k * keyBits;
    for (let i = 0; i < comps; i++) {
      const b = bits[i];
      if (b === 0) continue;
      const w = bit >>> 5,
        shift = bit & 31;
      let v = words[w] >>> shift;
      if (shift + b > 32) v |= words[w + 1] << (32 - shift);
      q[i * keys + k] = b === 32 ? v >>> 0 : v & ((1 << b) - 1);
      bit += b;
    }
  }
}

/** Writes `q` (component-major) as a segment's packed keys (key-major) into zeroed words. */
function packKeys(
  words: Uint32Array,
  bit0: number,
  keys: number,
  count: number,
  keyBits: number,
  bits: Uint8Array,
  q: Float64Array,
): void {
  const comps = count * ANIMATED_COMPONENTS;
  for (let k = 0; k < keys; k++) {
    let bit = bit0 + k * keyBits;
    for (let i = 0; i < comps; i++) {
      const b = bits[i];
      if (b === 0) continue;
      const v = q[i * keys + k];
      const w = bit >>> 5,
        shift = bit & 31;
      words[w] |= v << shift;
      if (shift + b > 32) words[w + 1] |= v >>> (32 - shift);
      bit += b;
    }
  }
}

/** True when `bytes` starts with the transport magic. */
export function isTransport(bytes: Uint8Array): boolean {
  return bytes.length >= 4 && u32(bytes, 0) === TRANSPORT_MAGIC;
}

/**
 * Decodes a transport-form clip into the runtime `.bpk` bytes it was made from (the exact
 * bytes: `CompressedClip.open` then checks them, CRC-32 included). Throws
 * {@link FormatError} naming the problem and its place.
 */
export function decodeTransport(input: Uint8Array | ArrayBuffer): Uint8Array {
  const bytes = input instanceof ArrayBuffer ? new Uint8Array(input) : input;
  if (!(bytes instanceof Uint8Array)) throw new FormatError('BAD_ARGUMENT', 'expected a Uint8Array or ArrayBuffer');
  if (bytes.length < TRANSPORT_HEADER.SIZE)
    throw new FormatError(
      'TOO_SMALL',
      `${bytes.length} bytes is smaller than the ${TRANSPORT_HEADER.SIZE}-byte transport header`,
      0,
    );
  if (u32(bytes, TRANSPORT_HEADER.MAGIC) !== TRANSPORT_MAGIC)
    throw new FormatError('BAD_MAGIC', 'not a bonepress transport clip (bad magic)', 0);
  const version = u16(bytes, TRANSPORT_HEADER.VERSION);
  expectVersion('transport', version, TRANSPORT_VERSION, TRANSPORT_HEADER.VERSION);
  const flags = u16(bytes, TRANSPORT_HEADER.FLAGS);
  if (flags !== 0)
    throw new FormatError('BAD_HEADER', `unknown transport flags 0x${flags.toString(16)}`, TRANSPORT_HEADER.FLAGS);
  const size = u32(bytes, TRANSPORT_HEADER.RUNTIME_SIZE);
  const limit = Math.min(MAX_FILE_BYTES, MAX_EXPANSION * bytes.length + EXPANSION_SLACK);
  if (size > limit)
    throw new FormatError(
      'BAD_SIZE',
      `declared clip size ${size} is more than ${limit} for ${bytes.length} transport bytes`,
      TRANSPORT_HEADER.RUNTIME_SIZE,
    );
  const out = new Uint8Array(size);
  const decoder = new RangeDecoder(bytes, TRANSPORT_HEADER.SIZE, bytes.length);
  codeClip(decoder, out, size);
  const end = decoder.finish('transport stream');
  if (end !== bytes.length)
    throw new FormatError('BAD_SIZE', `${bytes.length - end} bytes after the end of the transport stream`, end);
  return out;
}

/**
 * Opens a clip in either form: transport bytes are decoded first ({@link decodeTransport}),
 * runtime `.bpk` bytes are opened as they are. Throws {@link FormatError}.
 */
export function openClip(bytes: Uint8Array | ArrayBuffer, options?: OpenOptions): CompressedClip {
  const u8 = bytes instanceof ArrayBuffer ? new Uint8Array(bytes) : bytes;
  return CompressedClip.open(u8 instanceof Uint8Array && isTransport(u8) ? decodeTransport(u8) : bytes, options);
}
