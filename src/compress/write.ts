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
  type SectionLayout,
} from '../runtime/format.js';
import { clipStartTime, clipEndTime } from '../clip/raw-clip.js';
import { BitWriter, bitsFromFloat } from '../runtime/bits.js';
import { TRACK_CLASS, type TrackClasses } from './classify.js';
import { quantizeTrackSegment, type TrackSlot } from './quantize.js';
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

// The writer runs once per clip. Its loops live in small functions of their own so the
// engine optimises those alone; the one-shot code around them (header, layout, checks)
// never runs often enough to be compiled, where writeClip with every loop inlined was one
// of the largest compilations of a compression worker (twice: once more after a deopt).

/** Serialises an encoded clip. The same encoding always gives the same bytes. */
export function writeClip(enc: ClipEncoding): Uint8Array {
  const { clip, classes, tracks } = enc;
  const boneCount = clip.skeleton.parents.length;
  const unitCode = UNIT_CODES.indexOf(clip.unit);
  if (unitCode < 0) throw new ClipError('BAD_CLIP', `clip "${clip.name}": unit ${clip.unit} cannot be stored`);

  const sections = sectionLayout({
    boneCount,
    constantFloats: constantFloatCount(classes.classes, boneCount * TRACKS_PER_BONE),
    clipRangeBytes: clipRangeBytes(tracks),
    animatedRotations: rotationCount(tracks),
    hasNodeIndices: clip.skeleton.nodeIndices !== undefined,
    keyTimes: clip.sampleTimes ? clip.sampleCount : 0,
    additive: enc.additive !== undefined,
  });

  // Bit-pack every segment first: their sizes fix the layout.
  const segments = packSegments(enc);
  const names = enc.includeNames ? encodeNames(clip) : [];
  const namesOffset = enc.includeNames ? sections.segments + totalLength(segments) : 0;
  const size = enc.includeNames
    ? align4(namesOffset + totalLength(names) + 2 * names.length)
    : sections.segments + totalLength(segments);
  if (size > MAX_FILE_BYTES)
    throw new ClipError(
      'BAD_CLIP',
      `clip "${clip.name}": the compressed clip would take ${size} bytes, more than a file may hold (${MAX_FILE_BYTES})`,
    );

  const out = new Uint8Array(size);
  const view = new DataView(out.buffer);
  writeHeader(view, enc, sections, size, unitCode, namesOffset);
  writeSkeleton(view, clip, sections);
  if (enc.additive) writeAdditive(view, enc.additive, sections.additive);
  writeTrackBitsets(view, clip, classes, sections);
  writeClipRanges(view, tracks, enc.clipRanges, sections.clipRanges);
  writeRotationRefs(view, tracks, sections.rotationRefs);
  let at = sections.segments;
  for (const seg of segments) {
    out.set(seg, at);
    at += seg.length;
  }
  if (enc.includeNames) writeNames(view, out, names, namesOffset);
  if (enc.checksum) view.setUint32(HEADER.CHECKSUM, crc32(out, CHECKSUM_START, size), true);
  return out;
}

/** Floats of the constants section: those of each constant track. */
function constantFloatCount(classes: Uint8Array, trackCount: number): number {
  let floats = 0;
  for (let t = 0; t < trackCount; t++)
    if (classes[t] === TRACK_CLASS.CONSTANT) floats += CONSTANT_FLOATS[t % TRACKS_PER_BONE];
  return floats;
}

/** Bytes of the clip ranges section. */
function clipRangeBytes(tracks: readonly AnimatedTrack[]): number {
  let bytes = 0;
  for (let j = 0; j < tracks.length; j++) bytes += CLIP_RANGE_BYTES[tracks[j].kind];
  return bytes;
}

/** Animated rotation tracks, each with a rotation reference. */
function rotationCount(tracks: readonly AnimatedTrack[]): number {
  let count = 0;
  for (let j = 0; j < tracks.length; j++) if (tracks[j].kind === TRACK_KIND.ROTATION) count++;
  return count;
}

function totalLength(arrays: readonly Uint8Array[]): number {
  let sum = 0;
  for (let i = 0; i < arrays.length; i++) sum += arrays[i].length;
  return sum;
}

/** The names section's strings, UTF-8: the clip's, then each bone's. */
function encodeNames(clip: RawClip): Uint8Array[] {
  const encoder = new TextEncoder();
  const boneNames = clip.skeleton.boneNames;
  const names = new Array<Uint8Array>(boneNames.length + 1);
  names[0] = encoder.encode(clip.name);
  for (let b = 0; b < boneNames.length; b++) names[b + 1] = encoder.encode(boneNames[b]);
  for (const n of names)
    if (n.length > MAX_NAME_BYTES)
      throw new ClipError(
        'BAD_CLIP',
        `clip "${clip.name}": a name longer than ${MAX_NAME_BYTES} bytes cannot be stored`,
      );
  return names;
}

function writeHeader(
  view: DataView,
  enc: ClipEncoding,
  sections: SectionLayout,
  size: number,
  unitCode: number,
  namesOffset: number,
): void {
  const { clip, layout } = enc;
  view.setUint32(HEADER.MAGIC, MAGIC, true);
  view.setUint16(HEADER.VERSION, VERSION, true);
  view.setUint16(
    HEADER.FLAGS,
    (enc.includeNames ? FLAGS.HAS_NAMES : 0) |
      (enc.checksum ? FLAGS.HAS_CHECKSUM : 0) |
      (clip.skeleton.nodeIndices ? FLAGS.HAS_NODE_INDICES : 0) |
      (clip.sampleTimes ? FLAGS.HAS_KEY_TIMES : 0) |
      (enc.additive ? FLAGS.ADDITIVE : 0),
    true,
  );
  view.setUint32(HEADER.TOTAL_SIZE, size, true);
  view.setUint16(HEADER.BONE_COUNT, clip.skeleton.parents.length, true);
  view.setUint8(HEADER.ROTATION_FORMAT, ROTATION_FORMAT.DROP_ONE);
  view.setUint8(HEADER.UNIT, unitCode);
  view.setUint32(HEADER.SAMPLE_COUNT, clip.sampleCount, true);
  view.setFloat64(HEADER.SAMPLE_RATE, clip.sampleRate, true);
  view.setUint32(HEADER.SEGMENT_COUNT, layout.count, true);
  view.setUint16(HEADER.SEGMENT_SIZE, SEGMENT_SIZE, true);
  view.setUint16(HEADER.ANIMATED_TRACK_COUNT, enc.tracks.length, true);
  view.setFloat64(HEADER.START_TIME, clipStartTime(clip), true);
  view.setFloat64(HEADER.DURATION, clipEndTime(clip), true);
  view.setUint32(HEADER.PARENTS_OFFSET, sections.parents, true);
  view.setUint32(HEADER.BITSETS_OFFSET, sections.bitsets, true);
  view.setUint32(HEADER.CONSTANTS_OFFSET, sections.constants, true);
  view.setUint32(HEADER.CLIP_RANGES_OFFSET, sections.clipRanges, true);
  view.setUint32(HEADER.SEGMENTS_OFFSET, sections.segments, true);
  view.setUint32(HEADER.NAMES_OFFSET, namesOffset, true);
  view.setUint32(HEADER.ROTATION_REFS_OFFSET, sections.rotationRefs, true);
  view.setUint32(HEADER.NODE_INDICES_OFFSET, sections.nodeIndices, true);
}

/** Parents, node indices and key times. */
function writeSkeleton(view: DataView, clip: RawClip, sections: SectionLayout): void {
  const { parents, nodeIndices } = clip.skeleton;
  for (let b = 0; b < parents.length; b++) view.setInt16(sections.parents + 2 * b, parents[b], true);
  if (nodeIndices)
    for (let b = 0; b < parents.length; b++) view.setUint32(sections.nodeIndices + 4 * b, nodeIndices[b], true);
  const times = clip.sampleTimes;
  if (times) for (let k = 0; k < clip.sampleCount; k++) view.setFloat32(sections.keyTimes + 4 * k, times[k], true);
}

function writeAdditive(view: DataView, additive: AdditiveInfo, at: number): void {
  const reference = additive.reference;
  view.setUint8(at + ADDITIVE.MODE, ADDITIVE_MODE.LOCAL);
  view.setUint8(
    at + ADDITIVE.REFERENCE,
    reference.kind === 'frame' ? ADDITIVE_REFERENCE.FRAME : ADDITIVE_REFERENCE.POSE,
  );
  view.setUint32(at + ADDITIVE.FRAME, reference.kind === 'frame' ? reference.frame : 0, true);
  view.setFloat64(at + ADDITIVE.TIME, reference.time, true);
}

/** The four track bitsets and the constant tracks' values. */
function writeTrackBitsets(view: DataView, clip: RawClip, classes: TrackClasses, sections: SectionLayout): void {
  const trackCount = clip.skeleton.parents.length * TRACKS_PER_BONE;
  const words = bitsetWords(trackCount);
  const { channelMask, stepMask } = clip;
  let constantAt = sections.constants;
  for (let t = 0; t < trackCount; t++) {
    const cls = classes.classes[t];
    if (!channelMask || channelMask[t]) setBit(view, sections.bitsets, words, BITSET.CHANNEL, t);
    if (cls === TRACK_CLASS.ANIMATED && stepMask?.[t]) setBit(view, sections.bitsets, words, BITSET.STEP, t);
    if (cls === TRACK_CLASS.DEFAULT) setBit(view, sections.bitsets, words, BITSET.DEFAULT, t);
    if (cls === TRACK_CLASS.CONSTANT) {
      setBit(view, sections.bitsets, words, BITSET.CONSTANT, t);
      for (let c = 0; c < CONSTANT_FLOATS[t % TRACKS_PER_BONE]; c++) {
        view.setFloat32(constantAt, classes.constants[t * 4 + c], true);
        constantAt += 4;
      }
    }
  }
}

function setBit(view: DataView, bitsets: number, words: number, set: number, t: number): void {
  const at = bitsets + 4 * (set * words + (t >>> 5));
  view.setUint32(at, view.getUint32(at, true) | (1 << (t & 31)), true);
}

/** Each animated track's clip range: u16 codes for rotations, float32 otherwise. */
function writeClipRanges(
  view: DataView,
  tracks: readonly AnimatedTrack[],
  clipRanges: ClipRanges,
  start: number,
): void {
  let at = start;
  for (let j = 0; j < tracks.length; j++) {
    const t = tracks[j];
    const base = clipRanges.offsets[j];
    for (let c = 0; c < t.width; c++) {
      if (t.kind === TRACK_KIND.ROTATION) {
        view.setUint16(at, clipRanges.codes[base + 2 * c], true);
        view.setUint16(at + 2, clipRanges.codes[base + 2 * c + 1], true);
        at += 4;
      } else {
        view.setFloat32(at, clipRanges.values[base + 2 * c], true);
        view.setFloat32(at + 4, clipRanges.values[base + 2 * c + 1], true);
        at += 8;
      }
    }
  }
}

function writeRotationRefs(view: DataView, tracks: readonly AnimatedTrack[], start: number): void {
  let at = start;
  for (let j = 0; j < tracks.length; j++) {
    const t = tracks[j];
    if (t.kind !== TRACK_KIND.ROTATION) continue;
    for (let c = 0; c < 3; c++) view.setInt16(at + 2 * c, t.refCodes[c], true);
    at += ROTATION_REF_BYTES;
  }
}

function writeNames(view: DataView, out: Uint8Array, names: readonly Uint8Array[], start: number): void {
  let at = start;
  for (const n of names) {
    view.setUint16(at, n.length, true);
    out.set(n, at + 2);
    at += 2 + n.length;
  }
}

/** Every segment as stored ({@link packSegment}). */
function packSegments(enc: ClipEncoding): Uint8Array[] {
  const { layout } = enc;
  const animated = Math.max(1, enc.tracks.length);
  const codes = new Uint32Array(layout.maxSize * 3 * animated);
  const bitsOf = new Uint8Array(3 * animated);
  const segments: Uint8Array[] = [];
  for (let s = 0; s < layout.count; s++) segments.push(packSegment(enc, s, codes, bitsOf));
  return segments;
}

/**
 * Segment `s` as stored: its rate and dropped-component bytes, its range bytes, then its
 * keys bit-packed key by key. `codes` and `bitsOf` are scratch.
 */
function packSegment(enc: ClipEncoding, s: number, codes: Uint32Array, bitsOf: Uint8Array): Uint8Array {
  const animated = enc.tracks.length;
  quantizeSegment(enc, s, codes, bitsOf);
  const writer = new BitWriter(64);
  writeSegmentKeys(writer, enc, s, codes, bitsOf);
  writer.align(32);
  const header = align4(animated * (1 + SEGMENT_RANGE_BYTES));
  const packed = writer.finishBytes();
  const seg = new Uint8Array(header + packed.length);
  writeSegmentHeader(seg, enc, s);
  seg.set(packed, header);
  return seg;
}

/** The codes of every quantised track of segment `s` (`codes`, `bitsOf` as in {@link packSegment}). */
function quantizeSegment(enc: ClipEncoding, s: number, codes: Uint32Array, bitsOf: Uint8Array): void {
  const { tracks, clipRanges, ranges, layout, rates } = enc;
  const animated = tracks.length;
  const at: TrackSlot = { j: 0, trackCount: animated, segment: s, start: layout.starts[s], size: layout.sizes[s] };
  for (let j = 0; j < animated; j++) {
    const bits = rates[s * animated + j];
    if (bits > 0 && bits !== RAW_BITS) {
      at.j = j;
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
}

/** The keys of segment `s`, key by key, each track's stored components at its rate. */
function writeSegmentKeys(
  writer: BitWriter,
  enc: ClipEncoding,
  s: number,
  codes: Uint32Array,
  bitsOf: Uint8Array,
): void {
  const { tracks, layout, rates } = enc;
  const animated = tracks.length;
  const keys = layout.sizes[s];
  const start = layout.starts[s];
  const stride = layout.maxSize * 3;
  for (let k = 0; k < keys; k++) {
    for (let j = 0; j < animated; j++) {
      const bits = rates[s * animated + j];
      if (bits === 0) continue;
      if (bits === RAW_BITS) writeRawKey(writer, tracks[j], start + k, tracks[j].drop[s]);
      else for (let c = 0; c < ANIMATED_COMPONENTS; c++) writer.write(codes[j * stride + k * 3 + c], bitsOf[3 * j + c]);
    }
  }
}

/** Sample `s` of a track stored raw: its stored components' float32 bits. */
function writeRawKey(writer: BitWriter, t: AnimatedTrack, s: number, drop: number): void {
  for (let c = 0; c < ANIMATED_COMPONENTS; c++)
    writer.write(bitsFromFloat(t.values[s * t.width + storedComponent(c, drop)]), RAW_BITS);
}

/** A segment's per-track rate and dropped-component bytes, then its range bytes. */
function writeSegmentHeader(seg: Uint8Array, enc: ClipEncoding, s: number): void {
  const { tracks, ranges, rates } = enc;
  const animated = tracks.length;
  for (let j = 0; j < animated; j++)
    seg[j] = rates[s * animated + j] | (tracks[j].kind === TRACK_KIND.ROTATION ? tracks[j].drop[s] << DROP_SHIFT : 0);
  for (let j = 0; j < animated; j++) {
    const bits = rates[s * animated + j];
    const at = animated + j * SEGMENT_RANGE_BYTES;
    for (let c = 0; c < ANIMATED_COMPONENTS; c++) {
      const slot = (s * animated + j) * 3 + c;
      if (bits === 0) {
        seg[at + 2 * c] = ranges.constant[slot] & 0xff;
        seg[at + 2 * c + 1] = ranges.constant[slot] >>> 8;
      } else if (bits !== RAW_BITS) {
        seg[at + 2 * c] = ranges.minMax[slot * 2];
        seg[at + 2 * c + 1] = ranges.minMax[slot * 2 + 1];
      }
    }
  }
}
