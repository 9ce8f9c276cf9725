/**
 * Reads and validates a `.bpk` file's sections for {@link CompressedClip.open}, one stage
 * per section in file order: each checks what docs/format.md's validation table lists for
 * its section and throws a {@link FormatError} naming the problem and its byte offset; each
 * later stage relies on what the earlier ones checked. Work and memory are linear in the
 * file size.
 */
import {
  ADDITIVE,
  ADDITIVE_MODE,
  ADDITIVE_REFERENCE,
  ANIMATED_COMPONENTS,
  BITSET,
  BITSET_COUNT,
  CHECKSUM_START,
  CLIP_RANGE_BYTES,
  CONSTANT_FLOATS,
  DROP_SHIFT,
  FLAGS,
  HEADER,
  KIND_POSE_OFFSET,
  KNOWN_FLAGS,
  MAGIC,
  MAX_BONES,
  MAX_BONE_SAMPLES,
  MAX_FILE_BYTES,
  RANGE_COMPONENTS,
  RATE_MASK,
  RAW_BITS,
  ROTATION_FORMAT,
  ROTATION_REF_BYTES,
  SEGMENT_RANGE_BYTES,
  SEGMENT_SIZE,
  TRACKS_PER_BONE,
  TRACK_KIND,
  UNIT_CODES,
  VERSION,
  align4,
  bitsetWords,
  crc32,
  isValidBitRate,
  sectionLayout,
  segmentCountFor,
  segmentSampleCount,
  type RotationFormat,
  type LayoutCounts,
  type SectionLayout,
} from './format.js';
import { FORMAT_ERROR, FormatError, expectVersion, type FormatErrorCode } from './errors.js';
import {
  decodeReference,
  floatFromBits,
  readBits,
  rotationRangeExtent,
  rotationRangeMin,
  trackComponentBits,
} from './bits.js';
import { writeRotation } from './quaternion.js';
import { POSE_STRIDE } from '../shared/pose-layout.js';

/** A track's class, by the default and constant bitsets (clip-inspection.ts names them in this order). */
// biome-ignore lint/suspicious/noConstEnum: a number in the bundle, as format.ts's tables
const enum CLASS {
  DEFAULT = 0,
  CONSTANT = 1,
  ANIMATED = 2,
}
const LITTLE_ENDIAN_HOST = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;
const F32_MAX = 3.4028234663852886e38;
/** Start times and durations beyond this (about 31 years) are corrupt, and keep time arithmetic exact enough. */
const MAX_SECONDS = 1e9;

/** The header's fields, checked. */
export interface Header {
  readonly version: number;
  readonly flags: number;
  readonly hasChecksum: boolean;
  readonly hasNodeIndices: boolean;
  /** Samples in the key-times section: sampleCount when the flag is set, else 0. */
  readonly keyTimeCount: number;
  /** The additive flag: the additive record is present. */
  readonly additive: boolean;
  readonly boneCount: number;
  readonly rotationFormat: RotationFormat;
  readonly unitCode: number;
  readonly sampleCount: number;
  readonly sampleRate: number;
  readonly startTime: number;
  readonly duration: number;
  readonly segmentCount: number;
  readonly animatedCount: number;
}

/** `value`, read at byte `at`, must lie in lo..hi (NaN never does), else a `code` error naming it (`what`) and the range. */
function inRange(
  value: number,
  lo: number,
  hi: number,
  what: string,
  at: number,
  code: FormatErrorCode = FORMAT_ERROR.BAD_HEADER,
): number {
  if (!(value >= lo && value <= hi)) throw new FormatError(code, `${what} ${value} (need ${lo}..${hi})`, at);
  return value;
}

/** `value`, read at byte `at`, must be `expected`, else a `code` error naming it (`what`). */
function expectValue(
  value: number,
  expected: number,
  what: string,
  at: number,
  code: FormatErrorCode = FORMAT_ERROR.BAD_HEADER,
): number {
  if (value !== expected) throw new FormatError(code, `${what} ${value}, expected ${expected}`, at);
  return value;
}

/**
 * The header: platform, size, magic, version, flags, total size, checksum (with
 * `verifyChecksum`), then each count and the time base.
 */
export function readHeader(bytes: Uint8Array, view: DataView, verifyChecksum: boolean): Header {
  const size = bytes.byteLength;
  if (!LITTLE_ENDIAN_HOST)
    throw new FormatError(FORMAT_ERROR.UNSUPPORTED_PLATFORM, 'bonepress needs a little-endian host');
  if (size < HEADER.SIZE)
    throw new FormatError(FORMAT_ERROR.TOO_SMALL, `${size} bytes is smaller than the ${HEADER.SIZE}-byte header`, 0);
  if (view.getUint32(HEADER.MAGIC, true) !== MAGIC)
    throw new FormatError(FORMAT_ERROR.BAD_MAGIC, 'not a bonepress clip (bad magic)', HEADER.MAGIC);
  const version = view.getUint16(HEADER.VERSION, true);
  expectVersion('format', version, VERSION, HEADER.VERSION);
  const flags = view.getUint16(HEADER.FLAGS, true);
  if (flags & ~KNOWN_FLAGS)
    throw new FormatError(FORMAT_ERROR.BAD_HEADER, `unknown flags 0x${flags.toString(16)}`, HEADER.FLAGS);
  const totalSize = view.getUint32(HEADER.TOTAL_SIZE, true);
  if (size > MAX_FILE_BYTES)
    throw new FormatError(
      FORMAT_ERROR.BAD_SIZE,
      `${size} bytes is larger than a clip may be (${MAX_FILE_BYTES})`,
      HEADER.TOTAL_SIZE,
    );
  if (totalSize !== size) {
    throw new FormatError(
      FORMAT_ERROR.BAD_SIZE,
      `header says ${totalSize} bytes but the buffer holds ${size}${totalSize > size ? ' (truncated?)' : ''}`,
      HEADER.TOTAL_SIZE,
    );
  }
  const hasChecksum = (flags & FLAGS.HAS_CHECKSUM) !== 0;
  const stored = view.getUint32(HEADER.CHECKSUM, true);
  // Without the flag the writer leaves the field 0; otherwise one flipped flag bit would switch the CRC off unnoticed.
  const expected = !hasChecksum ? 0 : verifyChecksum ? crc32(bytes, CHECKSUM_START, size) : stored;
  if (stored !== expected)
    throw new FormatError(
      hasChecksum ? FORMAT_ERROR.BAD_CHECKSUM : FORMAT_ERROR.BAD_HEADER,
      `checksum mismatch (stored 0x${stored.toString(16)}, expected 0x${expected.toString(16)}${hasChecksum ? '): the file is corrupt' : ' without the checksum flag)'}`,
      HEADER.CHECKSUM,
    );
  const boneCount = inRange(view.getUint16(HEADER.BONE_COUNT, true), 1, MAX_BONES, 'bone count', HEADER.BONE_COUNT);
  const rotationFormat = expectValue(
    view.getUint8(HEADER.ROTATION_FORMAT),
    ROTATION_FORMAT.DROP_ONE,
    'rotation format',
    HEADER.ROTATION_FORMAT,
  ) as RotationFormat;
  const unitCode = inRange(view.getUint8(HEADER.UNIT), 0, UNIT_CODES.length - 1, 'length unit code', HEADER.UNIT);
  const sampleCount = view.getUint32(HEADER.SAMPLE_COUNT, true);
  if (!(sampleCount >= 1 && sampleCount * boneCount <= MAX_BONE_SAMPLES)) {
    throw new FormatError(
      FORMAT_ERROR.BAD_HEADER,
      `${sampleCount} samples × ${boneCount} bones (need 1..${MAX_BONE_SAMPLES} bone samples)`,
      HEADER.SAMPLE_COUNT,
    );
  }
  const sampleRate = view.getFloat64(HEADER.SAMPLE_RATE, true);
  // The wrap period sampleCount / sampleRate (≥ the sampled span) must be at most MAX_SECONDS, or time arithmetic overflows.
  if (!(sampleRate > 0 && sampleRate < Infinity && sampleCount / sampleRate <= MAX_SECONDS))
    throw new FormatError(
      FORMAT_ERROR.BAD_HEADER,
      `sample rate ${sampleRate} Hz (need a finite rate of at least ${sampleCount / MAX_SECONDS} Hz for ${sampleCount} samples)`,
      HEADER.SAMPLE_RATE,
    );
  const startTime = inRange(view.getFloat64(HEADER.START_TIME, true), 0, MAX_SECONDS, 'start time', HEADER.START_TIME);
  const duration = inRange(view.getFloat64(HEADER.DURATION, true), startTime, MAX_SECONDS, 'duration', HEADER.DURATION);
  const segmentCount = expectValue(
    view.getUint32(HEADER.SEGMENT_COUNT, true),
    segmentCountFor(sampleCount),
    `segment count for ${sampleCount} samples:`,
    HEADER.SEGMENT_COUNT,
  );
  expectValue(view.getUint16(HEADER.SEGMENT_SIZE, true), SEGMENT_SIZE, 'segment size', HEADER.SEGMENT_SIZE);
  return {
    version,
    flags,
    hasChecksum,
    hasNodeIndices: (flags & FLAGS.HAS_NODE_INDICES) !== 0,
    keyTimeCount: (flags & FLAGS.HAS_KEY_TIMES) !== 0 ? sampleCount : 0,
    additive: (flags & FLAGS.ADDITIVE) !== 0,
    boneCount,
    rotationFormat,
    unitCode,
    sampleCount,
    sampleRate,
    startTime,
    duration,
    segmentCount,
    animatedCount: view.getUint16(HEADER.ANIMATED_TRACK_COUNT, true),
  };
}

/** The section at header field `field` must start at `expected`: sections sit at fixed places given the counts, any other offset is corruption. */
function expectOffset(view: DataView, field: number, expected: number, what: string): number {
  return expectValue(view.getUint32(field, true), expected, `${what} section at`, field, FORMAT_ERROR.BAD_OFFSET);
}

/** `what`, at byte `at`, must end by the end of the file. */
function need(view: DataView, end: number, what: string, at: number): void {
  if (end > view.byteLength)
    throw new FormatError(
      FORMAT_ERROR.BAD_SECTION,
      `${what} runs past the end of the file (${end} > ${view.byteLength})`,
      at,
    );
}

/** The section `what` of `bytes` bytes, whose offset is header field `field`: where the counts put it (`at`), inside the file. */
function section(view: DataView, field: number, at: number, bytes: number, what: string): number {
  expectOffset(view, field, at, what);
  need(view, at + bytes, what, at);
  return at;
}

/** Where the counts put each section; before the bitsets are read (no `counts`) only the parents' and the bitsets' places are known. */
function layoutOf(
  header: Header,
  counts: Pick<LayoutCounts, 'constantFloats' | 'clipRangeBytes' | 'animatedRotations'> = {
    constantFloats: 0,
    clipRangeBytes: 0,
    animatedRotations: 0,
  },
): SectionLayout {
  return sectionLayout({ ...header, ...counts, keyTimes: header.keyTimeCount });
}

/** The parents section: every bone's parent precedes it (-1 for a root). */
export function readParents(view: DataView, header: Header): Int32Array {
  const { boneCount } = header;
  const parentsOffset = section(view, HEADER.PARENTS_OFFSET, layoutOf(header).parents, 2 * boneCount, 'parents');
  const parents = new Int32Array(boneCount);
  for (let b = 0; b < boneCount; b++) {
    const p = view.getInt16(parentsOffset + 2 * b, true);
    if (p < -1 || p >= b)
      throw new FormatError(
        FORMAT_ERROR.BAD_VALUE,
        `bone ${b} has parent ${p}; parents must precede children`,
        parentsOffset + 2 * b,
      );
    parents[b] = p;
  }
  return parents;
}

/** The bitsets, decoded: each track's class, channel and step bits, and the counts that fix the later sections' sizes. */
export interface Tracks {
  readonly trackClass: Uint8Array;
  readonly channelMask: Uint8Array;
  readonly step: Uint8Array;
  readonly constantFloats: number;
  readonly animatedRotations: number;
  readonly clipRangeBytes: number;
  readonly rangeFloats: number;
}

/**
 * The bitsets section: no track both default and constant, no step bit on a track that is
 * not animated, no bit past the last track, and as many animated tracks as the header says.
 */
export function readTracks(view: DataView, header: Header): Tracks {
  const trackCount = header.boneCount * TRACKS_PER_BONE;
  const words = bitsetWords(trackCount);
  const bitsetsOffset = section(
    view,
    HEADER.BITSETS_OFFSET,
    layoutOf(header).bitsets,
    4 * BITSET_COUNT * words,
    'bitsets',
  );
  const bit = (set: number, t: number): number =>
    (view.getUint32(bitsetsOffset + 4 * (set * words + (t >>> 5)), true) >>> (t & 31)) & 1;
  const trackClass = new Uint8Array(trackCount);
  const channelMask = new Uint8Array(trackCount);
  const step = new Uint8Array(trackCount);
  let constantFloats = 0,
    animated = 0,
    animatedRotations = 0,
    clipRangeBytes = 0,
    rangeFloats = 0;
  for (let t = 0; t < trackCount; t++) {
    const isDefault = bit(BITSET.DEFAULT, t),
      isConstant = bit(BITSET.CONSTANT, t);
    if (isDefault && isConstant)
      throw new FormatError(FORMAT_ERROR.BAD_VALUE, `track ${t} is marked both default and constant`, bitsetsOffset);
    if ((isDefault || isConstant) && bit(BITSET.STEP, t))
      throw new FormatError(FORMAT_ERROR.BAD_VALUE, `track ${t} is marked step but is not animated`, bitsetsOffset);
    trackClass[t] = isDefault ? CLASS.DEFAULT : isConstant ? CLASS.CONSTANT : CLASS.ANIMATED;
    channelMask[t] = bit(BITSET.CHANNEL, t);
    step[t] = bit(BITSET.STEP, t);
    const kind = t % TRACKS_PER_BONE;
    if (isConstant) constantFloats += CONSTANT_FLOATS[kind];
    if (!isDefault && !isConstant) {
      animated++;
      if (kind === TRACK_KIND.ROTATION) animatedRotations++;
      clipRangeBytes += CLIP_RANGE_BYTES[kind];
      rangeFloats += 2 * RANGE_COMPONENTS[kind];
    }
  }
  for (let t = trackCount; t < words * 32; t++) {
    for (let set = 0; set < BITSET_COUNT; set++) {
      if (bit(set, t))
        throw new FormatError(
          FORMAT_ERROR.BAD_VALUE,
          `bitset ${set} has bit ${t} set past the last track`,
          bitsetsOffset,
        );
    }
  }
  if (animated !== header.animatedCount) {
    throw new FormatError(
      FORMAT_ERROR.BAD_HEADER,
      `header says ${header.animatedCount} animated tracks, bitsets say ${animated}`,
      HEADER.ANIMATED_TRACK_COUNT,
    );
  }
  return { trackClass, channelMask, step, constantFloats, animatedRotations, clipRangeBytes, rangeFloats };
}

/**
 * The offsets of the sections after the bitsets up to the node indices, each where the
 * counts put it and each inside the file (readSegments checks the segments').
 */
export function readSectionOffsets(view: DataView, header: Header, tracks: Tracks): SectionLayout {
  const layout = layoutOf(header, tracks);
  section(view, HEADER.CONSTANTS_OFFSET, layout.constants, 4 * tracks.constantFloats, 'constants');
  section(view, HEADER.CLIP_RANGES_OFFSET, layout.clipRanges, tracks.clipRangeBytes, 'clip ranges');
  const refBytes = ROTATION_REF_BYTES * tracks.animatedRotations;
  section(view, HEADER.ROTATION_REFS_OFFSET, layout.rotationRefs, refBytes, 'rotation references');
  section(
    view,
    HEADER.NODE_INDICES_OFFSET,
    layout.nodeIndices,
    header.hasNodeIndices ? 4 * header.boneCount : 0,
    'node indices',
  );
  return layout;
}

/** The node-index section: every bone's glTF node, a non-negative int32. */
export function readNodeIndices(view: DataView, offset: number, boneCount: number): Int32Array {
  const nodeIndices = new Int32Array(boneCount);
  for (let b = 0; b < boneCount; b++) {
    const n = view.getUint32(offset + 4 * b, true);
    if (n > 0x7fffffff) throw new FormatError(FORMAT_ERROR.BAD_VALUE, `node index ${n} of bone ${b}`, offset + 4 * b);
    nodeIndices[b] = n;
  }
  return nodeIndices;
}

/**
 * The key-times section: the time of every sample on the source's timeline, sample 0 at the
 * start time, never decreasing, within the clip's timeline; undefined when the flag is not set.
 */
export function readKeyTimes(view: DataView, header: Header, offset: number): Float32Array | undefined {
  const count = header.keyTimeCount;
  if (count === 0) return undefined;
  need(view, offset + 4 * count, 'key times', offset);
  const keyTimes = new Float32Array(count);
  for (let k = 0; k < count; k++) {
    const at = offset + 4 * k;
    const t = view.getFloat32(at, true);
    if (k === 0 ? t !== header.startTime : !(t >= keyTimes[k - 1] && t <= MAX_SECONDS)) {
      throw new FormatError(
        FORMAT_ERROR.BAD_VALUE,
        `key time ${k} is ${t} s (need ${k === 0 ? `the start time ${header.startTime} s` : `${keyTimes[k - 1]}..${MAX_SECONDS} s`})`,
        at,
      );
    }
    keyTimes[k] = t;
  }
  return keyTimes;
}

/**
 * What an additive clip's poses mean: deltas applied to a base pose bone by bone in local
 * space (`mode`, see {@link ADDITIVE_MODE} in format.ts), taken against `reference`.
 */
export interface AdditiveInfo {
  /** How a delta applies to a base: `'local'`, three.js's additive blending at weight 1. */
  readonly mode: 'local';
  /**
   * What the deltas were taken against: a frame of the source clip (`frame`, the source's
   * sample index, at `time` on its timeline), or a pose of another clip of the same skeleton
   * at `time` on that clip's timeline.
   */
  readonly reference:
    | { readonly kind: 'frame'; readonly frame: number; readonly time: number }
    | { readonly kind: 'pose'; readonly time: number };
}

/** The additive record, when the flag is set: a known mode and reference kind, zero padding, a time within the timeline's bounds. */
export function readAdditive(view: DataView, header: Header, offset: number): AdditiveInfo | undefined {
  if (!header.additive) return undefined;
  need(view, offset + ADDITIVE.BYTES, 'additive record', offset);
  expectValue(
    view.getUint8(offset + ADDITIVE.MODE),
    ADDITIVE_MODE.LOCAL,
    'additive mode',
    offset + ADDITIVE.MODE,
    FORMAT_ERROR.BAD_VALUE,
  );
  const kind = inRange(
    view.getUint8(offset + ADDITIVE.REFERENCE),
    ADDITIVE_REFERENCE.FRAME,
    ADDITIVE_REFERENCE.POSE,
    'additive reference kind',
    offset + ADDITIVE.REFERENCE,
    FORMAT_ERROR.BAD_VALUE,
  );
  expectValue(
    view.getUint16(offset + ADDITIVE.RESERVED, true),
    0,
    'additive record: reserved bytes',
    offset + ADDITIVE.RESERVED,
    FORMAT_ERROR.BAD_VALUE,
  );
  const frame = view.getUint32(offset + ADDITIVE.FRAME, true);
  if (kind === ADDITIVE_REFERENCE.POSE)
    expectValue(frame, 0, 'additive record: pose reference frame', offset + ADDITIVE.FRAME, FORMAT_ERROR.BAD_VALUE);
  const time = inRange(
    view.getFloat64(offset + ADDITIVE.TIME, true),
    0,
    MAX_SECONDS,
    'additive reference time',
    offset + ADDITIVE.TIME,
    FORMAT_ERROR.BAD_VALUE,
  );
  return {
    mode: 'local',
    reference: kind === ADDITIVE_REFERENCE.FRAME ? { kind: 'frame', frame, time } : { kind: 'pose', time },
  };
}

/** The base pose and where each animated track sits in it, from the constants section and the bitsets. */
export interface AnimatedTracks {
  readonly count: number;
  /** Identity for default tracks, stored values for constant ones. */
  readonly basePose: Float32Array;
  /** Per animated track: pose float offset, kind, STEP flag, first float of its clip range. */
  readonly poseOffset: Int32Array;
  readonly kind: Uint8Array;
  readonly step: Uint8Array;
  readonly range: Int32Array;
  /** Track → animated index, or -1. */
  readonly ofTrack: Int32Array;
}

/** The constants section (finite values; a constant rotation normalised), laid into the base pose, and the animated tracks in track order. */
export function readAnimatedTracks(
  view: DataView,
  header: Header,
  tracks: Tracks,
  constantsOffset: number,
): AnimatedTracks {
  const { trackClass } = tracks;
  const count = header.animatedCount,
    trackCount = trackClass.length;
  const basePose = new Float32Array(header.boneCount * POSE_STRIDE);
  const poseOffset = new Int32Array(count);
  const kinds = new Uint8Array(count);
  const step = new Uint8Array(count);
  const ofTrack = new Int32Array(trackCount).fill(-1);
  const range = new Int32Array(count);
  let cursor = constantsOffset,
    a = 0,
    rangeCursor = 0;
  for (let t = 0; t < trackCount; t++) {
    const bone = (t / TRACKS_PER_BONE) | 0,
      kind = t % TRACKS_PER_BONE;
    const o = bone * POSE_STRIDE + KIND_POSE_OFFSET[kind];
    if (trackClass[t] === CLASS.DEFAULT) {
      if (kind === TRACK_KIND.ROTATION) {
        basePose[o + 3] = 1;
      } else if (kind === TRACK_KIND.SCALE) {
        basePose[o] = 1;
        basePose[o + 1] = 1;
        basePose[o + 2] = 1;
      }
    } else if (trackClass[t] === CLASS.CONSTANT) {
      const n = CONSTANT_FLOATS[kind];
      for (let c = 0; c < n; c++) {
        const v = view.getFloat32(cursor + 4 * c, true);
        if (!Number.isFinite(v))
          throw new FormatError(FORMAT_ERROR.BAD_VALUE, `constant value of track ${t} is ${v}`, cursor + 4 * c);
        basePose[o + c] = v;
      }
      if (kind === TRACK_KIND.ROTATION)
        writeRotation(basePose[o], basePose[o + 1], basePose[o + 2], basePose[o + 3], basePose, o);
      cursor += 4 * n;
    } else {
      poseOffset[a] = o;
      kinds[a] = kind;
      step[a] = tracks.step[t];
      ofTrack[t] = a;
      range[a] = rangeCursor;
      rangeCursor += 2 * RANGE_COMPONENTS[kind];
      a++;
    }
  }
  return { count, basePose, poseOffset, kind: kinds, step, range, ofTrack };
}

/**
 * The clip ranges section, as (min, extent) per range component of each animated track:
 * rotations' from their u16 codes; vectors' finite, with a non-negative extent that keeps
 * every reconstruction finite in float32.
 */
export function readClipRanges(
  view: DataView,
  animated: AnimatedTracks,
  rangeFloats: number,
  offset: number,
): Float64Array {
  const clipRanges = new Float64Array(rangeFloats);
  for (let j = 0, at = offset; j < animated.count; j++) {
    const ro = animated.range[j];
    if (animated.kind[j] === TRACK_KIND.ROTATION) {
      for (let c = 0; c < 4; c++, at += 4) {
        clipRanges[ro + 2 * c] = rotationRangeMin(view.getUint16(at, true));
        clipRanges[ro + 2 * c + 1] = rotationRangeExtent(view.getUint16(at + 2, true));
      }
      continue;
    }
    for (let c = 0; c < 3; c++, at += 8) {
      const min = view.getFloat32(at, true),
        ext = view.getFloat32(at + 4, true);
      // Reconstruction reaches min + 2·extent at most (segment min and extent are each ≤ 255/255);
      // a NaN or infinite min or extent fails the bound too.
      if (!(ext >= 0 && Math.abs(min) + 2 * ext < F32_MAX)) {
        throw new FormatError(
          FORMAT_ERROR.BAD_VALUE,
          `clip range (${min}, ${ext}) of animated track ${j} is not a usable range`,
          at,
        );
      }
      clipRanges[ro + 2 * c] = min;
      clipRanges[ro + 2 * c + 1] = ext;
    }
  }
  return clipRanges;
}

/** The rotation references section: each animated rotation's reference, xyzw at 4 × its animated index. */
export function readRotationReferences(view: DataView, animated: AnimatedTracks, offset: number): Float64Array {
  const refs = new Float64Array(4 * animated.count);
  for (let j = 0, at = offset; j < animated.count; j++) {
    if (animated.kind[j] !== TRACK_KIND.ROTATION) continue;
    decodeReference(view.getInt16(at, true), view.getInt16(at + 2, true), view.getInt16(at + 4, true), refs, 4 * j);
    at += ROTATION_REF_BYTES;
  }
  return refs;
}

/** Where each segment's parts are, and the bits of its keys (decode-tables.ts's TableSources). */
export interface Segments {
  /** Byte offset of each segment's rate bytes, range bytes and packed keys. */
  readonly rates: Uint32Array;
  readonly ranges: Uint32Array;
  readonly data: Uint32Array;
  /** Bits of each key of a segment, and its key count. */
  readonly keyBits: Uint32Array;
  readonly keys: Uint32Array;
  /** Bits of each (segment, animated track, stored component). */
  readonly compBits: Uint8Array;
  /** Byte just past the last segment. */
  readonly end: number;
}

/**
 * The segments section, where the counts put it: segments follow each other in order, each 4-byte aligned, each
 * track's bit rate valid and only rotations dropping a component; the bits of each
 * component follow from the rate and the segment ranges, computed once here. Every segment
 * holds at least its rate and range bytes, so a sample count the file cannot hold fails
 * before per-segment tables are allocated. Without animated tracks segments are empty and
 * need no tables at all (memory must not follow a count).
 */
export function readSegments(
  bytes: Uint8Array,
  view: DataView,
  header: Header,
  animated: AnimatedTracks,
  clipRanges: Float64Array,
  layout: SectionLayout,
): Segments {
  const { segmentCount, sampleCount } = header;
  const count = animated.count;
  const offset = expectOffset(view, HEADER.SEGMENTS_OFFSET, layout.segments, 'segments');
  need(view, offset + segmentCount * align4(count * (1 + SEGMENT_RANGE_BYTES)), `${segmentCount} segments`, offset);
  const segments = count > 0 ? segmentCount : 0;
  const rates = new Uint32Array(segments),
    ranges = new Uint32Array(segments),
    data = new Uint32Array(segments);
  const keyBits = new Uint32Array(segments),
    keys = new Uint32Array(segments);
  const compBits = new Uint8Array(segments * count * ANIMATED_COMPONENTS);
  let expected = offset;
  for (let s = 0; s < segments; s++) {
    const off = expected;
    need(view, off + count * (1 + SEGMENT_RANGE_BYTES), `segment ${s} header`, off);
    let bits = 0;
    for (let j = 0; j < count; j++) {
      const rate = bytes[off + j] & RATE_MASK;
      if (!isValidBitRate(rate))
        throw new FormatError(
          FORMAT_ERROR.BAD_VALUE,
          `segment ${s} track ${j}: bit rate ${rate} is not one of 0..24 or 32`,
          off + j,
        );
      const drop = bytes[off + j] >>> DROP_SHIFT;
      const kind = animated.kind[j];
      if (kind !== TRACK_KIND.ROTATION && drop !== 0) {
        throw new FormatError(
          FORMAT_ERROR.BAD_VALUE,
          `segment ${s} track ${j}: a dropped component on a ${kind === TRACK_KIND.TRANSLATION ? 'translation' : 'scale'} track`,
          off + j,
        );
      }
      const cb = (s * count + j) * ANIMATED_COMPONENTS;
      if (rate === 0 || rate === RAW_BITS) {
        compBits[cb] = compBits[cb + 1] = compBits[cb + 2] = rate;
      } else {
        trackComponentBits(
          bytes,
          off + count + j * SEGMENT_RANGE_BYTES,
          rate,
          kind === TRACK_KIND.ROTATION ? drop : 3,
          clipRanges,
          animated.range[j],
          compBits,
          cb,
        );
      }
      bits += compBits[cb] + compBits[cb + 1] + compBits[cb + 2];
    }
    keys[s] = segmentSampleCount(s, segmentCount, sampleCount);
    const dataStart = align4(off + count * (1 + SEGMENT_RANGE_BYTES));
    const dataBytes = 4 * Math.ceil((keys[s] * bits) / 32);
    need(view, dataStart + dataBytes, `segment ${s} data`, off);
    rates[s] = off;
    ranges[s] = off + count;
    data[s] = dataStart;
    keyBits[s] = bits;
    expected = dataStart + dataBytes;
  }
  return { rates, ranges, data, keyBits, keys, compBits, end: expected };
}

/** The names section, when the flag is set: where it starts, the clip's name and every bone's. */
export interface Names {
  readonly offset: number;
  readonly name: string | undefined;
  readonly boneNames: string[] | undefined;
}

/**
 * The names section: right after the last segment when the flag is set (else its offset is
 * 0), valid UTF-8, and the file ends with it (or with the last segment).
 */
export function readNamesSection(bytes: Uint8Array, view: DataView, header: Header, segmentsEnd: number): Names {
  const hasNames = (header.flags & FLAGS.HAS_NAMES) !== 0;
  const offset = expectValue(
    view.getUint32(HEADER.NAMES_OFFSET, true),
    hasNames ? segmentsEnd : 0,
    hasNames ? 'names section at' : 'names offset without the names flag:',
    HEADER.NAMES_OFFSET,
    FORMAT_ERROR.BAD_OFFSET,
  );
  const names = hasNames ? readNames(bytes, view, offset, header.boneCount) : undefined;
  const end = names ? align4(names.end) : segmentsEnd;
  if (end !== bytes.byteLength)
    throw new FormatError(
      FORMAT_ERROR.BAD_SIZE,
      `${bytes.byteLength - end} unexpected bytes after the last section`,
      end,
    );
  return { offset, name: names?.name, boneNames: names?.boneNames };
}

/**
 * Raw float32 components, checked once so sampling never produces NaN: finite, and within
 * [−1, 1] for a rotation (components of a unit delta), so that the float32 rotation
 * arithmetic cannot overflow.
 */
export function checkRawValues(bytes: Uint8Array, animated: AnimatedTracks, segments: Segments): void {
  const words = new Uint32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength >>> 2);
  const { compBits, keyBits } = segments;
  for (let s = 0, cb = 0; s < keyBits.length; s++) {
    for (let j = 0, trackBit = 8 * segments.data[s]; j < animated.count; j++, cb += ANIMATED_COMPONENTS) {
      const rotation = animated.kind[j] === TRACK_KIND.ROTATION;
      // Only raw tracks are checked; their components are all RAW_BITS wide (readSegments).
      const rawKeys = compBits[cb] === RAW_BITS ? segments.keys[s] : 0;
      for (let k = 0; k < rawKeys; k++) {
        for (let c = 0; c < ANIMATED_COMPONENTS; c++) {
          const at = trackBit + k * keyBits[s] + c * RAW_BITS;
          const v = floatFromBits(readBits(words, at, RAW_BITS));
          // Finite (a float32 NaN or infinity is no magnitude ≤ F32_MAX), and in [−1, 1] on a rotation.
          if (!(Math.abs(v) <= (rotation ? 1 : F32_MAX)))
            throw new FormatError(
              FORMAT_ERROR.BAD_VALUE,
              `segment ${s} key ${k}: raw value of animated ${rotation ? 'rotation' : 'track'} ${j} is ${v}`,
              at >>> 3,
            );
        }
      }
      trackBit += compBits[cb] + compBits[cb + 1] + compBits[cb + 2];
    }
  }
}

/** The clip's name and every bone's, each a u16 byte length and UTF-8 bytes, from `offset`; `end` is the byte after the last. */
function readNames(
  bytes: Uint8Array,
  view: DataView,
  offset: number,
  boneCount: number,
): { name: string; boneNames: string[]; end: number } {
  const decoder = new TextDecoder('utf-8', { fatal: true });
  let at = offset;
  const readString = (what: string): string => {
    need(view, at + 2, `names section: ${what}`, at);
    const end = at + 2 + view.getUint16(at, true);
    need(view, end, `names section: ${what}`, at);
    let s: string;
    try {
      s = decoder.decode(bytes.subarray(at + 2, end));
    } catch {
      throw new FormatError(FORMAT_ERROR.BAD_VALUE, `names section: ${what} is not valid UTF-8`, at + 2);
    }
    at = end;
    return s;
  };
  const name = readString('clip name');
  const boneNames: string[] = [];
  for (let b = 0; b < boneCount; b++) boneNames.push(readString(`name of bone ${b}`));
  return { name, boneNames, end: at };
}
