/**
 * Reads and validates a `.bpk` file's sections for {@link CompressedClip.open}, stage by
 * stage in file order: each checks what docs/format.md's validation table lists for its
 * sections and throws a {@link FormatError} naming the problem and its byte offset; each
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
  MAX_QUANTIZED_BITS,
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
import { FormatError, expectVersion, type FormatErrorCode } from './errors.js';
import {
  decodeReference,
  floatFromBits,
  readBits,
  rotationRangeExtent,
  rotationRangeMin,
  trackComponentBits,
} from './bits.js';
import { writeRotation } from './quaternion.js';
import { POSE_STRIDE, identityFloat } from '../shared/pose-layout.js';

const LITTLE_ENDIAN_HOST = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;
const F32_MAX = 3.4028234663852886e38;
/** Start times and durations beyond this (about 31 years) are corrupt, and keep time arithmetic exact enough. */
const MAX_SECONDS = 1e9;

/**
 * The header's fields, checked, named as {@link CompressedClip} names them (it copies them
 * all); the flags' optional sections are where {@link layoutOf} puts them.
 */
export interface Header {
  readonly version: number;
  readonly flags: number;
  readonly hasChecksum: boolean;
  readonly boneCount: number;
  readonly rotationFormat: RotationFormat;
  readonly unit: (typeof UNIT_CODES)[number];
  readonly sampleCount: number;
  readonly sampleRate: number;
  readonly startTime: number;
  readonly duration: number;
  readonly segmentCount: number;
  readonly animatedTrackCount: number;
}

/** Throws a {@link FormatError} with code `code`: `problem`, found at byte `at`. */
function fail(code: FormatErrorCode, problem: string, at?: number): never {
  throw new FormatError(code, problem, at);
}

/** The message of every value out of its bounds: `what`, its `value`, and what it needs to be. */
function bad(code: FormatErrorCode, what: string, value: number, need: string, at: number): never {
  return fail(code, `${what} ${value} (need ${need})`, at);
}

/**
 * `value`, read at byte `at`, must lie in lo..hi (NaN never does), else a `code` error naming
 * it (`what`, then `index` when given: loops pass it so the name is built only on failure).
 */
function inRange(
  value: number,
  lo: number,
  hi: number,
  what: string,
  at: number,
  code: FormatErrorCode = 'BAD_HEADER',
  index?: number,
): number {
  return value >= lo && value <= hi
    ? value
    : bad(code, index === undefined ? what : `${what} ${index}:`, value, `${lo}..${hi}`, at);
}

/** `value`, read at byte `at`, must be `expected`, else a `code` error naming it (`what`). */
function expectValue(
  value: number,
  expected: number,
  what: string,
  at: number,
  code: FormatErrorCode = 'BAD_HEADER',
): number {
  return value === expected ? value : bad(code, what, value, `${expected}`, at);
}

/**
 * The header: platform, size, magic, version, flags, total size, checksum (with
 * `verifyChecksum`), then each count and the time base.
 */
export function readHeader(bytes: Uint8Array, view: DataView, verifyChecksum: boolean): Header {
  const size = bytes.byteLength;
  if (!LITTLE_ENDIAN_HOST) fail('UNSUPPORTED_PLATFORM', 'bonepress needs a little-endian host');
  if (size < HEADER.SIZE) fail('TOO_SMALL', `${size} bytes is smaller than the ${HEADER.SIZE}-byte header`, 0);
  if (view.getUint32(HEADER.MAGIC, true) !== MAGIC) fail('BAD_MAGIC', 'not a bonepress clip (bad magic)', HEADER.MAGIC);
  const version = view.getUint16(HEADER.VERSION, true);
  expectVersion('format', version, VERSION, HEADER.VERSION);
  const flags = view.getUint16(HEADER.FLAGS, true);
  expectValue(flags & ~KNOWN_FLAGS, 0, 'unknown flags', HEADER.FLAGS);
  inRange(size, 0, MAX_FILE_BYTES, 'file size', HEADER.TOTAL_SIZE, 'BAD_SIZE');
  const totalSize = view.getUint32(HEADER.TOTAL_SIZE, true);
  if (totalSize !== size)
    fail(
      'BAD_SIZE',
      `header says ${totalSize} bytes but the buffer holds ${size}${totalSize > size ? ' (truncated?)' : ''}`,
      HEADER.TOTAL_SIZE,
    );
  const hasChecksum = (flags & FLAGS.HAS_CHECKSUM) !== 0;
  const stored = view.getUint32(HEADER.CHECKSUM, true);
  // Without the flag the writer leaves the field 0; otherwise one flipped flag bit would switch the CRC off unnoticed.
  expectValue(
    stored,
    !hasChecksum ? 0 : verifyChecksum ? crc32(bytes, CHECKSUM_START, size) : stored,
    hasChecksum ? 'checksum mismatch' : 'checksum without the checksum flag',
    HEADER.CHECKSUM,
    hasChecksum ? 'BAD_CHECKSUM' : 'BAD_HEADER',
  );
  const boneCount = inRange(view.getUint16(HEADER.BONE_COUNT, true), 1, MAX_BONES, 'bone count', HEADER.BONE_COUNT);
  const rotationFormat = expectValue(
    view.getUint8(HEADER.ROTATION_FORMAT),
    ROTATION_FORMAT.DROP_ONE,
    'rotation format',
    HEADER.ROTATION_FORMAT,
  ) as RotationFormat;
  const unit = UNIT_CODES[inRange(view.getUint8(HEADER.UNIT), 0, UNIT_CODES.length - 1, 'unit code', HEADER.UNIT)];
  const sampleCount = view.getUint32(HEADER.SAMPLE_COUNT, true);
  // Samples × bones; with at least one bone, at least one sample.
  inRange(sampleCount * boneCount, 1, MAX_BONE_SAMPLES, 'bone samples', HEADER.SAMPLE_COUNT);
  // Finite, and the wrap period sampleCount / sampleRate (≥ the sampled span) at most
  // MAX_SECONDS, or time arithmetic overflows.
  const sampleRate = inRange(
    view.getFloat64(HEADER.SAMPLE_RATE, true),
    sampleCount / MAX_SECONDS,
    Number.MAX_VALUE,
    'sample rate',
    HEADER.SAMPLE_RATE,
  );
  const startTime = inRange(view.getFloat64(HEADER.START_TIME, true), 0, MAX_SECONDS, 'start time', HEADER.START_TIME);
  const duration = inRange(view.getFloat64(HEADER.DURATION, true), startTime, MAX_SECONDS, 'duration', HEADER.DURATION);
  const segmentCount = expectValue(
    view.getUint32(HEADER.SEGMENT_COUNT, true),
    segmentCountFor(sampleCount),
    'segment count',
    HEADER.SEGMENT_COUNT,
  );
  expectValue(view.getUint16(HEADER.SEGMENT_SIZE, true), SEGMENT_SIZE, 'segment size', HEADER.SEGMENT_SIZE);
  return {
    version,
    flags,
    hasChecksum,
    boneCount,
    rotationFormat,
    unit,
    sampleCount,
    sampleRate,
    startTime,
    duration,
    segmentCount,
    animatedTrackCount: view.getUint16(HEADER.ANIMATED_TRACK_COUNT, true),
  };
}

/** The section at header field `field` must start at `expected`: sections sit at fixed places given the counts, any other offset is corruption. */
function expectOffset(view: DataView, field: number, expected: number, what: string): number {
  return expectValue(view.getUint32(field, true), expected, `${what} offset`, field, 'BAD_OFFSET');
}

/** `what`, at byte `at`, must end by the end of the file. */
function need(view: DataView, end: number, what: string, at: number): void {
  if (end > view.byteLength)
    fail('BAD_SECTION', `${what} runs past the end of the file (${end} > ${view.byteLength})`, at);
}

/** The section `what` of `bytes` bytes, whose offset is header field `field`: where the counts put it (`at`), inside the file. */
function section(view: DataView, field: number, at: number, bytes: number, what: string): number {
  expectOffset(view, field, at, what);
  need(view, at + bytes, what, at);
  return at;
}

/**
 * Where the counts put each section (an optional one the flags leave out at 0); before the
 * bitsets are read (no `counts`) only the parents' and the bitsets' places are known.
 */
function layoutOf(
  header: Header,
  counts: Pick<LayoutCounts, 'constantFloats' | 'clipRangeBytes' | 'animatedRotations'> = {
    constantFloats: 0,
    clipRangeBytes: 0,
    animatedRotations: 0,
  },
): SectionLayout {
  const { flags } = header;
  return sectionLayout({
    ...header,
    ...counts,
    hasNodeIndices: (flags & FLAGS.HAS_NODE_INDICES) !== 0,
    keyTimes: flags & FLAGS.HAS_KEY_TIMES ? header.sampleCount : 0,
    additive: (flags & FLAGS.ADDITIVE) !== 0,
  });
}

/** The parents section: every bone's parent precedes it (-1 for a root). */
export function readParents(view: DataView, header: Header): Int32Array {
  const { boneCount } = header;
  const parentsOffset = section(view, HEADER.PARENTS_OFFSET, layoutOf(header).parents, 2 * boneCount, 'parents');
  const parents = new Int32Array(boneCount);
  for (let b = 0; b < boneCount; b++) {
    const at = parentsOffset + 2 * b;
    parents[b] = inRange(view.getInt16(at, true), -1, b - 1, 'parent of bone', at, 'BAD_VALUE', b);
  }
  return parents;
}

/**
 * Bit `track` of bitset `set` (format.ts's BITSET) of a validated clip's `bytes`, where its
 * header says the bitsets are: u32 words, least significant bit first, so track t is bit
 * t & 7 of byte t >> 3 of its bitset.
 */
export function trackBit(bytes: Uint8Array, boneCount: number, set: number, track: number): number {
  const bitsets = new DataView(bytes.buffer, bytes.byteOffset, HEADER.SIZE).getUint32(HEADER.BITSETS_OFFSET, true);
  return (bytes[bitsets + 4 * set * bitsetWords(boneCount * TRACKS_PER_BONE) + (track >>> 3)] >>> (track & 7)) & 1;
}

/** The base pose, where each animated track sits in it, and the animated tracks' clip ranges and rotation references. */
export interface AnimatedTracks {
  readonly count: number;
  /** Identity for default tracks, stored values for constant ones. */
  readonly basePose: Float32Array;
  /** Per animated track, in track order (so pose offsets increase): pose float offset, kind, STEP flag. */
  readonly poseOffset: Int32Array;
  readonly kind: Uint8Array;
  readonly step: Uint8Array;
  /** (min, extent) per range component of each animated track, animated track j's from float 8 · j. */
  readonly clipRanges: Float64Array;
  /** Each animated rotation's reference quaternion, xyzw, in track order (the decode tables' layout). */
  readonly refs: Float64Array;
  /** Animated rotations. */
  readonly rotations: number;
}

/** The animated tracks, and where the counts put the sections. */
export interface Tracks {
  readonly animated: AnimatedTracks;
  readonly layout: SectionLayout;
}

/**
 * The bitsets section: no track both default and constant, no step bit on a track that is
 * not animated, no bit past the last track, and as many animated tracks as the header says.
 * The counts fix the offsets of the sections after the bitsets up to the node indices,
 * each where the counts put it and each inside the file (readSegments checks the
 * segments'). Then the constants, clip ranges and rotation references sections, read in
 * track order: the constants (finite values; a constant rotation normalised) laid into the
 * base pose; each animated track's clip range, (min, extent) per range component: a
 * rotation's from its u16 codes, a vector's finite, with a non-negative extent that keeps
 * every reconstruction finite in float32; each animated rotation's reference.
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
  let constantFloats = 0,
    count = 0,
    rotations = 0;
  for (let t = 0; t < trackCount; t++) {
    const isDefault = bit(BITSET.DEFAULT, t),
      isConstant = bit(BITSET.CONSTANT, t);
    if (isDefault && isConstant) fail('BAD_VALUE', `track ${t}: both default and constant`, bitsetsOffset);
    if ((isDefault || isConstant) && bit(BITSET.STEP, t))
      fail('BAD_VALUE', `track ${t}: step but not animated`, bitsetsOffset);
    const kind = t % TRACKS_PER_BONE;
    if (isConstant) constantFloats += CONSTANT_FLOATS[kind];
    if (!isDefault && !isConstant) {
      count++;
      if (kind === TRACK_KIND.ROTATION) rotations++;
    }
  }
  // Bits past the last track can only be in each bitset's last word.
  const spare = trackCount & 31;
  for (let set = 0; set < BITSET_COUNT; set++) {
    if (spare !== 0 && view.getUint32(bitsetsOffset + 4 * (set * words + words - 1), true) >>> spare !== 0)
      fail('BAD_VALUE', `bitset ${set}: bits set past the last track`, bitsetsOffset);
  }
  expectValue(header.animatedTrackCount, count, 'animated track count', HEADER.ANIMATED_TRACK_COUNT);
  // A rotation's clip range is four (min, extent) u16 code pairs, a vector's three f32 pairs.
  const vectors = count - rotations;
  const clipRangeBytes =
    CLIP_RANGE_BYTES[TRACK_KIND.ROTATION] * rotations + CLIP_RANGE_BYTES[TRACK_KIND.TRANSLATION] * vectors;
  const layout = layoutOf(header, { constantFloats, clipRangeBytes, animatedRotations: rotations });
  section(view, HEADER.CONSTANTS_OFFSET, layout.constants, 4 * constantFloats, 'constants');
  section(view, HEADER.CLIP_RANGES_OFFSET, layout.clipRanges, clipRangeBytes, 'clip ranges');
  section(
    view,
    HEADER.ROTATION_REFS_OFFSET,
    layout.rotationRefs,
    ROTATION_REF_BYTES * rotations,
    'rotation references',
  );
  section(
    view,
    HEADER.NODE_INDICES_OFFSET,
    layout.nodeIndices,
    layout.nodeIndices ? 4 * header.boneCount : 0,
    'node indices',
  );

  const basePose = new Float32Array(header.boneCount * POSE_STRIDE);
  const poseOffset = new Int32Array(count);
  const kinds = new Uint8Array(count);
  const step = new Uint8Array(count);
  const clipRanges = new Float64Array(8 * count);
  const refs = new Float64Array(4 * rotations);
  let cursor = layout.constants,
    rangeAt = layout.clipRanges,
    refAt = layout.rotationRefs,
    a = 0,
    rf = 0;
  for (let t = 0; t < trackCount; t++) {
    const kind = t % TRACKS_PER_BONE;
    const o = ((t / TRACKS_PER_BONE) | 0) * POSE_STRIDE + KIND_POSE_OFFSET[kind];
    const n = CONSTANT_FLOATS[kind];
    if (bit(BITSET.DEFAULT, t)) {
      for (let c = 0; c < n; c++) basePose[o + c] = identityFloat(o + c);
    } else if (bit(BITSET.CONSTANT, t)) {
      for (let c = 0; c < n; c++, cursor += 4) {
        // Finite: a float32 NaN or infinity is no magnitude ≤ F32_MAX.
        basePose[o + c] = inRange(
          view.getFloat32(cursor, true),
          -F32_MAX,
          F32_MAX,
          'constant of track',
          cursor,
          'BAD_VALUE',
          t,
        );
      }
      if (kind === TRACK_KIND.ROTATION)
        writeRotation(basePose[o], basePose[o + 1], basePose[o + 2], basePose[o + 3], basePose, o);
    } else {
      poseOffset[a] = o;
      kinds[a] = kind;
      step[a] = bit(BITSET.STEP, t);
      let ro = 8 * a;
      if (kind === TRACK_KIND.ROTATION) {
        for (let c = 0; c < 4; c++, rangeAt += 4, ro += 2) {
          clipRanges[ro] = rotationRangeMin(view.getUint16(rangeAt, true));
          clipRanges[ro + 1] = rotationRangeExtent(view.getUint16(rangeAt + 2, true));
        }
        decodeReference(
          view.getInt16(refAt, true),
          view.getInt16(refAt + 2, true),
          view.getInt16(refAt + 4, true),
          refs,
          rf,
        );
        refAt += ROTATION_REF_BYTES;
        rf += 4;
      } else {
        for (let c = 0; c < 3; c++, rangeAt += 8, ro += 2) {
          const min = view.getFloat32(rangeAt, true),
            ext = view.getFloat32(rangeAt + 4, true);
          // Reconstruction reaches min + 2·extent at most (segment min and extent are each ≤ 255/255);
          // a NaN or infinite min or extent fails the bound too.
          if (!(ext >= 0 && Math.abs(min) + 2 * ext < F32_MAX))
            fail('BAD_VALUE', `animated track ${a}: clip range (${min}, ${ext})`, rangeAt);
          clipRanges[ro] = min;
          clipRanges[ro + 1] = ext;
        }
      }
      a++;
    }
  }
  const animated = { count, basePose, poseOffset, kind: kinds, step, clipRanges, refs, rotations };
  return { animated, layout };
}

/** The node-index section: every bone's glTF node, a non-negative int32. */
export function readNodeIndices(view: DataView, offset: number, boneCount: number): Int32Array {
  const nodeIndices = new Int32Array(boneCount);
  for (let b = 0; b < boneCount; b++) {
    const at = offset + 4 * b;
    nodeIndices[b] = inRange(view.getUint32(at, true), 0, 0x7fffffff, 'node index of bone', at, 'BAD_VALUE', b);
  }
  return nodeIndices;
}

/**
 * The key-times section: the time of every sample on the source's timeline, sample 0 at the
 * start time, never decreasing, within the clip's timeline; undefined when the flag is not set
 * (`offset` 0).
 */
export function readKeyTimes(view: DataView, header: Header, offset: number): Float32Array | undefined {
  if (offset === 0) return undefined;
  const count = header.sampleCount;
  need(view, offset + 4 * count, 'key times', offset);
  const keyTimes = new Float32Array(count);
  for (let k = 0; k < count; k++) {
    const at = offset + 4 * k;
    keyTimes[k] = inRange(
      view.getFloat32(at, true),
      k === 0 ? header.startTime : keyTimes[k - 1],
      k === 0 ? header.startTime : MAX_SECONDS,
      'key time',
      at,
      'BAD_VALUE',
      k,
    );
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

/**
 * The additive record, when the flag is set (else `offset` is 0): a known mode and
 * reference kind, zero padding, a time within the timeline's bounds.
 */
export function readAdditive(view: DataView, offset: number): AdditiveInfo | undefined {
  if (offset === 0) return undefined;
  need(view, offset + ADDITIVE.BYTES, 'additive record', offset);
  expectValue(
    view.getUint8(offset + ADDITIVE.MODE),
    ADDITIVE_MODE.LOCAL,
    'additive mode',
    offset + ADDITIVE.MODE,
    'BAD_VALUE',
  );
  const kind = inRange(
    view.getUint8(offset + ADDITIVE.REFERENCE),
    ADDITIVE_REFERENCE.FRAME,
    ADDITIVE_REFERENCE.POSE,
    'additive reference kind',
    offset + ADDITIVE.REFERENCE,
    'BAD_VALUE',
  );
  expectValue(
    view.getUint16(offset + ADDITIVE.RESERVED, true),
    0,
    'additive record reserved bytes',
    offset + ADDITIVE.RESERVED,
    'BAD_VALUE',
  );
  const frame = view.getUint32(offset + ADDITIVE.FRAME, true);
  if (kind === ADDITIVE_REFERENCE.POSE)
    expectValue(frame, 0, 'additive record pose reference frame', offset + ADDITIVE.FRAME, 'BAD_VALUE');
  const time = inRange(
    view.getFloat64(offset + ADDITIVE.TIME, true),
    0,
    MAX_SECONDS,
    'additive reference time',
    offset + ADDITIVE.TIME,
    'BAD_VALUE',
  );
  return {
    mode: 'local',
    reference: kind === ADDITIVE_REFERENCE.FRAME ? { kind: 'frame', frame, time } : { kind: 'pose', time },
  };
}

/** Where each segment's parts are, and the bits of its keys (decode-tables.ts's TableSources). */
export interface Segments {
  /** Byte offset of each segment's rate bytes (its range bytes follow them) and of its packed keys. */
  readonly rates: Uint32Array;
  readonly data: Uint32Array;
  /** Bits of each key of a segment. */
  readonly keyBits: Uint32Array;
  /** Bits of each (segment, animated track, stored component). */
  readonly compBits: Uint8Array;
  /** Bits of the widest key, and of the widest component of an animated rotation (decode-tables.ts's lane layout). */
  readonly widestKey: number;
  readonly widestRotation: number;
  /** Byte just past the last segment. */
  readonly end: number;
}

/**
 * The segments section, where the counts put it: segments follow each other in order, each 4-byte aligned, each
 * track's bit rate valid and only rotations dropping a component; the bits of each
 * component follow from the rate and the segment ranges, computed once here. Raw float32
 * components are checked once so sampling never produces NaN: finite, and within [−1, 1]
 * for a rotation (components of a unit delta), so that the float32 rotation arithmetic
 * cannot overflow. Every segment holds at least its rate and range bytes, so a sample count
 * the file cannot hold fails before per-segment tables are allocated. Without animated
 * tracks segments are empty and need no tables at all (memory must not follow a count).
 */
export function readSegments(
  bytes: Uint8Array,
  view: DataView,
  header: Header,
  animated: AnimatedTracks,
  layout: SectionLayout,
): Segments {
  const { segmentCount, sampleCount } = header;
  const count = animated.count;
  const offset = expectOffset(view, HEADER.SEGMENTS_OFFSET, layout.segments, 'segments');
  need(view, offset + segmentCount * align4(count * (1 + SEGMENT_RANGE_BYTES)), `${segmentCount} segments`, offset);
  const segments = count > 0 ? segmentCount : 0;
  const rates = new Uint32Array(segments),
    data = new Uint32Array(segments),
    keyBits = new Uint32Array(segments);
  const compBits = new Uint8Array(segments * count * ANIMATED_COMPONENTS);
  const words = new Uint32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength >>> 2);
  let expected = offset,
    widestKey = 0,
    widestRotation = 0;
  for (let s = 0; s < segments; s++) {
    const off = expected;
    need(view, off + count * (1 + SEGMENT_RANGE_BYTES), `segment ${s} header`, off);
    let bits = 0;
    for (let j = 0; j < count; j++) {
      const rate = bytes[off + j] & RATE_MASK;
      if (!isValidBitRate(rate))
        bad('BAD_VALUE', `segment ${s} track ${j}: bit rate`, rate, `0..${MAX_QUANTIZED_BITS} or ${RAW_BITS}`, off + j);
      const drop = bytes[off + j] >>> DROP_SHIFT;
      const kind = animated.kind[j];
      if (kind !== TRACK_KIND.ROTATION && drop !== 0)
        fail('BAD_VALUE', `segment ${s} track ${j}: a dropped component on a track that is not a rotation`, off + j);
      const cb = (s * count + j) * ANIMATED_COMPONENTS;
      if (rate === 0 || rate === RAW_BITS) {
        compBits[cb] = compBits[cb + 1] = compBits[cb + 2] = rate;
      } else {
        trackComponentBits(
          bytes,
          off + count + j * SEGMENT_RANGE_BYTES,
          rate,
          kind === TRACK_KIND.ROTATION ? drop : 3,
          animated.clipRanges,
          8 * j,
          compBits,
          cb,
        );
      }
      bits += compBits[cb] + compBits[cb + 1] + compBits[cb + 2];
      if (kind === TRACK_KIND.ROTATION)
        widestRotation = Math.max(widestRotation, compBits[cb], compBits[cb + 1], compBits[cb + 2]);
    }
    widestKey = Math.max(widestKey, bits);
    const keys = segmentSampleCount(s, segmentCount, sampleCount);
    const dataStart = align4(off + count * (1 + SEGMENT_RANGE_BYTES));
    const dataBytes = 4 * Math.ceil((keys * bits) / 32);
    need(view, dataStart + dataBytes, `segment ${s} data`, off);
    for (let j = 0, trackBit = 8 * dataStart; j < count; j++) {
      const cb = (s * count + j) * ANIMATED_COMPONENTS;
      const rotation = animated.kind[j] === TRACK_KIND.ROTATION;
      // Only raw tracks are checked; their components are all RAW_BITS wide.
      const rawKeys = compBits[cb] === RAW_BITS ? keys : 0;
      for (let k = 0; k < rawKeys; k++) {
        for (let c = 0; c < ANIMATED_COMPONENTS; c++) {
          const at = trackBit + k * bits + c * RAW_BITS;
          const v = floatFromBits(readBits(words, at, RAW_BITS));
          // Finite (a float32 NaN or infinity is no magnitude ≤ F32_MAX), and in [−1, 1] on a rotation.
          if (!(Math.abs(v) <= (rotation ? 1 : F32_MAX)))
            fail(
              'BAD_VALUE',
              `segment ${s} key ${k} track ${j}: raw ${rotation ? 'rotation' : 'value'} ${v}`,
              at >>> 3,
            );
        }
      }
      trackBit += compBits[cb] + compBits[cb + 1] + compBits[cb + 2];
    }
    rates[s] = off;
    data[s] = dataStart;
    keyBits[s] = bits;
    expected = dataStart + dataBytes;
  }
  return { rates, data, keyBits, compBits, widestKey, widestRotation, end: expected };
}

/** The names section's clip name and bone names (both undefined without the section). */
export interface Names {
  readonly name: string | undefined;
  readonly boneNames: string[] | undefined;
}

/**
 * The names section: right after the last segment when the flag is set (else its offset is
 * 0), the clip's name and every bone's, each a u16 byte length and valid UTF-8; the file
 * ends with it (or with the last segment).
 */
export function readNames(bytes: Uint8Array, view: DataView, header: Header, segmentsEnd: number): Names {
  const hasNames = (header.flags & FLAGS.HAS_NAMES) !== 0;
  expectOffset(view, HEADER.NAMES_OFFSET, hasNames ? segmentsEnd : 0, 'names');
  const decoder = new TextDecoder('utf-8', { fatal: true });
  let at = segmentsEnd;
  const readString = (what: string): string => {
    need(view, at + 2, what, at);
    const end = at + 2 + view.getUint16(at, true);
    need(view, end, what, at);
    let s: string;
    try {
      s = decoder.decode(bytes.subarray(at + 2, end));
    } catch {
      fail('BAD_VALUE', `${what}: not UTF-8`, at + 2);
    }
    at = end;
    return s;
  };
  let name: string | undefined, boneNames: string[] | undefined;
  if (hasNames) {
    name = readString('clip name');
    boneNames = [];
    for (let b = 0; b < header.boneCount; b++) boneNames.push(readString(`name of bone ${b}`));
    at = align4(at);
  }
  if (at !== bytes.byteLength) fail('BAD_SIZE', `${bytes.byteLength - at} bytes after the last section`, at);
  return { name, boneNames };
}
