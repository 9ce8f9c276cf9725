/**
 * Stage 8: the deterministic `.bpk` writer, built on runtime/format.ts (the layout the
 * decoder validates). docs/format.md describes the same bytes.
 */
import type { RawClip } from '../clip/raw-clip.js';
import { ClipError } from '../clip/skeleton.js';
import {
  ADDITIVE,
  ADDITIVE_MODE,
  ADDITIVE_REFERENCE,
  ANIMATED_COMPONENTS,
  BITSET,
  CHECKSUM_START,
  CLIP_RANGE_BYTES,
  CONSTANT_FLOATS,
  DROP_SHIFT,
  FLAGS,
  ROTATION_REF_BYTES,
  HEADER,
  MAGIC,
  RAW_BITS,
  ROTATION_FORMAT,
  MAX_FILE_BYTES,
  SEGMENT_RANGE_BYTES,
  SEGMENT_SIZE,
  TRACKS_PER_BONE,
  TRACK_KIND,
  UNIT_CODES,
  VERSION,
  align4,
  bitsetWords,
  crc32,
  sectionLayout,
} from '../runtime/format.js';
import { clipStartTime, clipEndTime } from '../clip/raw-clip.js';
import { BitWriter, bitsFromFloat } from '../runtime/bits.js';
import { TRACK_CLASS, type TrackClasses } from './classify.js';
import { quantizeTrackSegment } from './quantize.js';
import { storedComponent, type AnimatedTrack, type ClipRanges, type SegmentRanges } from './range.js';
import type { SegmentLayout } from './segment.js';
import type { AdditiveInfo } from '../runtime/clip-reader.js';

/** Everything that goes into the file. */
export interface ClipEncoding {
  readonly clip: RawClip;
  readonly classes: TrackClasses;
  readonly tracks: readonly AnimatedTrack[];
  readonly clipRanges: ClipRanges;
  readonly ranges: SegmentRanges;
  readonly layout: SegmentLayout;
  readonly rates: Uint8Array;
  readonly includeNames: boolean;
  readonly checksum: boolean;
  /** Set for an additive clip: the additive record's contents. */
  readonly additive?: AdditiveInfo | undefined;
}

const MAX_NAME_BYTES = 0xffff;

/** Serialises an encoded clip. The same encoding always gives the same bytes. */
export function writeClip(enc: ClipEncoding): Uint8Array {
  const { clip, classes, tracks, clipRanges, layout } = enc;
  const boneCount = clip.skeleton.parents.length;
  const trackCount = boneCount * TRACKS_PER_BONE;
  const animated = tracks.length;
  const words = bitsetWords(trackCount);
  const unitCode = UNIT_CODES.indexOf(clip.unit);
  if (unitCode < 0) throw new ClipError('BAD_CLIP', `clip "${clip.name}": unit ${clip.unit} cannot be stored`);

  let constantFloats = 0;
  for (let t = 0; t < trackCount; t++)
    if (classes.classes[t] === TRACK_CLASS.CONSTANT) constantFloats += CONSTANT_FLOATS[t % TRACKS_PER_BONE];
  const rotationTracks = tracks.filter((t) => t.kind === TRACK_KIND.ROTATION);

  const nodeIndices = clip.skeleton.nodeIndices;
  const layout0 = sectionLayout({
    boneCount,
    constantFloats,
    clipRangeBytes: tracks.reduce((sum, t) => sum + CLIP_RANGE_BYTES[t.kind], 0),
    animatedRotations: rotationTracks.length,
    hasNodeIndices: nodeIndices !== undefined,
    keyTimes: clip.sampleTimes ? clip.sampleCount : 0,
    additive: enc.additive !== undefined,
  });
  const {
    parents: parentsOffset,
    bitsets: bitsetsOffset,
    constants: constantsOffset,
    clipRanges: clipRangesOffset,
  } = layout0;
  const { rotationRefs: refsOffset, nodeIndices: nodeIndicesOffset, segments: segmentsOffset } = layout0;

  // Bit-pack every segment first: their sizes fix the layout.
  const segments: Uint8Array[] = [];
  const codes = new Uint32Array(layout.maxSize * 3 * Math.max(1, animated));
  const bitsOf = new Uint8Array(3 * Math.max(1, animated));
  for (let s = 0; s < layout.count; s++) segments.push(packSegment(enc, s, codes, bitsOf));

  const encoder = new TextEncoder();
  let names: Uint8Array[] = [];
  if (enc.includeNames) {
    names = [clip.name, ...clip.skeleton.boneNames].map((n) => encoder.encode(n));
    for (const n of names)
      if (n.length > MAX_NAME_BYTES)
        throw new ClipError(
          'BAD_CLIP',
          `clip "${clip.name}": a name longer than ${MAX_NAME_BYTES} bytes cannot be stored`,
        );
  }
  let cursor = segmentsOffset;
  const segmentOffsets = segments.map((seg) => {
    const at = cursor;
    cursor += seg.length;
    return at;
  });
  const namesOffset = enc.includeNames ? cursor : 0;
  if (enc.includeNames) cursor = align4(cursor + names.reduce((sum, n) => sum + 2 + n.length, 0));
  const size = cursor;
  if (size > MAX_FILE_BYTES)
    throw new ClipError(
      'BAD_CLIP',
      `clip "${clip.name}": the compressed clip would take ${size} bytes, more than a file may hold (${MAX_FILE_BYTES})`,
    );

  const out = new Uint8Array(size);
  const view = new DataView(out.buffer);
  view.setUint32(HEADER.MAGIC, MAGIC, true);
  view.setUint16(HEADER.VERSION, VERSION, true);
  view.setUint16(
    HEADER.FLAGS,
    (enc.includeNames ? FLAGS.HAS_NAMES : 0) |
      (enc.checksum ? FLAGS.HAS_CHECKSUM : 0) |
      (nodeIndices ? FLAGS.HAS_NODE_INDICES : 0) |
      (clip.sampleTimes ? FLAGS.HAS_KEY_TIMES : 0) |
      (enc.additive ? FLAGS.ADDITIVE : 0),
    true,
  );
  view.setUint32(HEADER.TOTAL_SIZE, size, true);
  view.setUint16(HEADER.BONE_COUNT, boneCount, true);
  view.setUint8(HEADER.ROTATION_FORMAT, ROTATION_FORMAT.DROP_ONE);
  view.setUint8(HEADER.UNIT, unitCode);
  view.setUint32(HEADER.SAMPLE_COUNT, clip.sampleCount, true);
  view.setFloat64(HEADER.SAMPLE_RATE, clip.sampleRate, true);
  view.setUint32(HEADER.SEGMENT_COUNT, layout.count, true);
  view.setUint16(HEADER.SEGMENT_SIZE, SEGMENT_SIZE, true);
  view.setUint16(HEADER.ANIMATED_TRACK_COUNT, animated, true);
  view.setFloat64(HEADER.START_TIME, clipStartTime(clip), true);
  view.setFloat64(HEADER.DURATION, clipEndTime(clip), true);
  view.setUint32(HEADER.PARENTS_OFFSET, parentsOffset, true);
  view.setUint32(HEADER.BITSETS_OFFSET, bitsetsOffset, true);
  view.setUint32(HEADER.CONSTANTS_OFFSET, constantsOffset, true);
  view.setUint32(HEADER.CLIP_RANGES_OFFSET, clipRangesOffset, true);
  view.setUint32(HEADER.SEGMENTS_OFFSET, segmentsOffset, true);
  view.setUint32(HEADER.NAMES_OFFSET, namesOffset, true);
  view.setUint32(HEADER.ROTATION_REFS_OFFSET, refsOffset, true);
  view.setUint32(HEADER.NODE_INDICES_OFFSET, nodeIndicesOffset, true);
  if (nodeIndices) for (let b = 0; b < boneCount; b++) view.setUint32(nodeIndicesOffset + 4 * b, nodeIndices[b], true);
  if (clip.sampleTimes)
    for (let k = 0; k < clip.sampleCount; k++) view.setFloat32(layout0.keyTimes + 4 * k, clip.sampleTimes[k], true);
  if (enc.additive) {
    const at = layout0.additive,
      reference = enc.additive.reference;
    view.setUint8(at + ADDITIVE.MODE, ADDITIVE_MODE.LOCAL);
    view.setUint8(
      at + ADDITIVE.REFERENCE,
      reference.kind === 'frame' ? ADDITIVE_REFERENCE.FRAME : ADDITIVE_REFERENCE.POSE,
    );
    view.setUint32(at + ADDITIVE.FRAME, reference.kind === 'frame' ? reference.frame : 0, true);
    view.setFloat64(at + ADDITIVE.TIME, reference.time, true);
  }

  for (let b = 0; b < boneCount; b++) view.setInt16(parentsOffset + 2 * b, clip.skeleton.parents[b], true);
  let constantAt = constantsOffset;
  const setBit = (set: number, t: number) => {
    const at = bitsetsOffset + 4 * (set * words + (t >>> 5));
    view.setUint32(at, view.getUint32(at, true) | (1 << (t & 31)), true);
  };
  for (let t = 0; t < trackCount; t++) {
    const cls = classes.classes[t];
    if (!clip.channelMask || clip.channelMask[t]) setBit(BITSET.CHANNEL, t);
    if (cls === TRACK_CLASS.ANIMATED && clip.stepMask?.[t]) setBit(BITSET.STEP, t);
    if (cls === TRACK_CLASS.DEFAULT) setBit(BITSET.DEFAULT, t);
    if (cls === TRACK_CLASS.CONSTANT) {
      setBit(BITSET.CONSTANT, t);
      for (let c = 0; c < CONSTANT_FLOATS[t % TRACKS_PER_BONE]; c++) {
        view.setFloat32(constantAt, classes.constants[t * 4 + c], true);
        constantAt += 4;
      }
    }
  }
  let rangeAt = clipRangesOffset;
  tracks.forEach((t, j) => {
    const base = clipRanges.offsets[j];
    for (let c = 0; c < t.width; c++) {
      if (t.kind === TRACK_KIND.ROTATION) {
        view.setUint16(rangeAt, clipRanges.codes[base + 2 * c], true);
        view.setUint16(rangeAt + 2, clipRanges.codes[base + 2 * c + 1], true);
        rangeAt += 4;
      } else {
        view.setFloat32(rangeAt, clipRanges.values[base + 2 * c], true);
        view.setFloat32(rangeAt + 4, clipRanges.values[base + 2 * c + 1], true);
        rangeAt += 8;
      }
    }
  });
  rotationTracks.forEach((t, r) => {
    for (let c = 0; c < 3; c++) view.setInt16(refsOffset + ROTATION_REF_BYTES * r + 2 * c, t.refCodes[c], true);
  });
  segmentOffsets.forEach((at, s) => out.set(segments[s], at));
  if (enc.includeNames) {
    let at = namesOffset;
    for (const n of names) {
      view.setUint16(at, n.length, true);
      out.set(n, at + 2);
      at += 2 + n.length;
    }
  }
  if (enc.checksum) view.setUint32(HEADER.CHECKSUM, crc32(out, CHECKSUM_START, size), true);
  return out;
}

/**
 * Segment `s` as stored: its rate and dropped-component bytes, its range bytes, then its
 * keys bit-packed key by key. `codes` and `bitsOf` are scratch.
 */
function packSegment(enc: ClipEncoding, s: number, codes: Uint32Array, bitsOf: Uint8Array): Uint8Array {
  const { tracks, clipRanges, ranges, layout, rates } = enc;
  const animated = tracks.length;
  const keys = layout.sizes[s];
  const segRates = rates.subarray(s * animated, (s + 1) * animated);
  for (let j = 0; j < animated; j++) {
    const bits = segRates[j];
    if (bits > 0 && bits !== RAW_BITS) {
      const at = { j, trackCount: animated, segment: s, start: layout.starts[s], size: keys };
      quantizeTrackSegment(
        tracks[j],
        at,
        bits,
        clipRanges,
        ranges,
        codes.subarray(j * layout.maxSize * 3),
        bitsOf.subarray(3 * j, 3 * j + 3),
      );
    }
  }
  const writer = new BitWriter(64);
  for (let k = 0; k < keys; k++) {
    for (let j = 0; j < animated; j++) {
      const bits = segRates[j];
      if (bits === 0) continue;
      for (let c = 0; c < ANIMATED_COMPONENTS; c++) {
        const t = tracks[j];
        if (bits === RAW_BITS)
          writer.write(
            bitsFromFloat(t.values[(layout.starts[s] + k) * t.width + storedComponent(c, t.drop[s])]),
            RAW_BITS,
          );
        else writer.write(codes[j * layout.maxSize * 3 + k * 3 + c], bitsOf[3 * j + c]);
      }
    }
  }
  writer.align(32);
  const header = align4(animated * (1 + SEGMENT_RANGE_BYTES));
  const packed = writer.finishBytes();
  const seg = new Uint8Array(header + packed.length);
  for (let j = 0; j < animated; j++)
    seg[j] = segRates[j] | (tracks[j].kind === TRACK_KIND.ROTATION ? tracks[j].drop[s] << DROP_SHIFT : 0);
  for (let j = 0; j < animated; j++) {
    const at = animated + j * SEGMENT_RANGE_BYTES;
    for (let c = 0; c < ANIMATED_COMPONENTS; c++) {
      const slot = (s * animated + j) * 3 + c;
      if (segRates[j] === 0) {
        seg[at + 2 * c] = ranges.constant[slot] & 0xff;
        seg[at + 2 * c + 1] = ranges.constant[slot] >>> 8;
      } else if (segRates[j] !== RAW_BITS) {
        seg[at + 2 * c] = ranges.minMax[slot * 2];
        seg[at + 2 * c + 1] = ranges.minMax[slot * 2 + 1];
      }
    }
  }
  seg.set(packed, header);
  return seg;
}
