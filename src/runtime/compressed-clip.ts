/**
 * A `.bpk` clip opened for sampling. `CompressedClip.open` validates every field once;
 * after that `sample` never throws for a valid clip, never allocates and never reads out
 * of bounds.
 */
import {
  ANIMATED_COMPONENTS, CHECKSUM_START, CLIP_RANGE_BYTES, CONSTANT_FLOATS, DROP_SHIFT, FLAGS, RANGE_COMPONENTS, RATE_MASK, ROTATION_REF_BYTES, HEADER, KNOWN_FLAGS, MAGIC, MAX_BONES,
  RAW_BITS, ROTATION_FORMAT, SEGMENT_RANGE_BYTES, SEGMENT_SIZE, TRACKS_PER_BONE, TRACK_KIND, UNIT_CODES, VERSION,
  MAX_FILE_BYTES, align4, bitsetWords, crc32, isValidBitRate, segmentCountFor, segmentSampleCount, type RotationFormat,
} from './format.js';
import { FORMAT_ERROR, FormatError } from './errors.js';
import {
  decodeReference, floatFromBits, readBits, rotationRangeExtent, rotationRangeMin, segmentConstant, trackComponentBits,
  segmentOffset, segmentStep,
} from './bits.js';
import { blendRotations, emitRotation, writeRotation } from './interpolate.js';
import { POSE_STRIDE } from './pose.js';

/** How a time between two samples is resolved. */
export type Rounding = 'none' | 'floor' | 'ceil' | 'nearest';
/** What happens outside [0, duration]: clamp to the ends, or wrap from the last sample back to the first. */
export type Looping = 'clamp' | 'wrap';

/** Options of {@link CompressedClip.sample}. */
export interface SampleOptions {
  /** Default `'none'`: interpolate between the two nearest samples. */
  rounding?: Rounding;
  /**
   * Default `'clamp'`. With `'wrap'` the clip repeats with period sampleCount / sampleRate:
   * between the last sample and the period's end it interpolates back to the first sample.
   */
  looping?: Looping;
}

/** Options of {@link CompressedClip.open}. */
export interface OpenOptions {
  /** Check the CRC-32 when the file has one. Default true. */
  verifyChecksum?: boolean;
  /**
   * Dequantisation constants (an offset and a step per stored component) cached per
   * segment: `'all'` (default) keeps every segment's once it has been sampled, 8 bytes per
   * animated component per segment (roughly 0.4 × the file size when every segment is
   * touched) — random access then costs little more than playback; `'two'` keeps the
   * last two segments only (48 bytes per animated track): as fast for forward playback, slower at
   * random times.
   */
  segmentCache?: 'all' | 'two';
}

/** Class of a track in a compressed clip. */
export type TrackClass = 'default' | 'constant' | 'animated';

const CLASS_DEFAULT = 0, CLASS_CONSTANT = 1, CLASS_ANIMATED = 2;
const TRACK_CLASS_NAMES: readonly TrackClass[] = ['default', 'constant', 'animated'];
const KIND_POSE_OFFSET = [0, 4, 7] as const;
/** A fraction of a sample this close to a whole sample is that sample. */
const SNAP = 1e-6;
const LITTLE_ENDIAN_HOST = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

/** Byte ranges of a clip's sections, for tools (`bonepress info`). */
export interface SectionSizes {
  header: number;
  parents: number;
  bitsets: number;
  constants: number;
  clipRanges: number;
  rotationRefs: number;
  segments: number;
  names: number;
  total: number;
}

/** A validated, zero-copy view of a `.bpk` clip. */
export class CompressedClip {
  /** Number of bones. */
  readonly boneCount: number;
  /** Number of uniformly spaced samples. */
  readonly sampleCount: number;
  /** Samples per second (Hz). */
  readonly sampleRate: number;
  /** (sampleCount − 1) / sampleRate, in seconds. */
  readonly duration: number;
  /** Number of segments of up to {@link SEGMENT_SIZE} samples (the last takes a short tail). */
  readonly segmentCount: number;
  /** Length unit of translations. */
  readonly unit: (typeof UNIT_CODES)[number];
  /** Format version of the file. */
  readonly version: number;
  /** How animated rotations are stored. */
  readonly rotationFormat: RotationFormat;
  /** Parent index of every bone (-1 for roots); parents precede children. */
  readonly parents: Int32Array;
  /** Bone names, when the file has the names section. */
  readonly boneNames: readonly string[] | undefined;
  /** Clip name, when the file has the names section. */
  readonly name: string | undefined;
  /** Number of animated tracks. */
  readonly animatedTrackCount: number;
  /** Size of the file in bytes. */
  readonly byteLength: number;
  /** Whether the file carries a checksum. */
  readonly hasChecksum: boolean;

  private readonly bytes: Uint8Array;
  private readonly words: Uint32Array;
  private readonly trackClass: Uint8Array;
  private readonly basePose: Float32Array;
  private readonly animBoneOffset: Int32Array; // pose float offset of each animated track
  private readonly animKind: Uint8Array;
  private readonly animTrackOfTrack: Int32Array; // track → animated index or -1
  private readonly clipRanges: Float64Array; // per animated track: min, extent × 3
  private readonly animRange: Int32Array; // first clip-range float of each animated track
  private readonly compBits: Uint8Array; // bits of each (segment, animated track, component)
  private readonly refs: Float64Array; // per animated track: reference xyzw (rotations only)
  private readonly vals = new Float64Array(8); // decode() scratch: key 0 components, key 1 components, alpha
  // Dequantisation cache of two segments (see prepareSegment).
  private readonly segOffset: Float32Array;
  private readonly segStep: Float32Array;
  private readonly cachedSegment: Int32Array; // segment held by each cache slot, -1 none
  private readonly cacheAll: boolean;
  private readonly segRates: Uint32Array; // byte offset of each segment's rates
  private readonly segRanges: Uint32Array;
  private readonly segBits: Int32Array; // bit offset of each segment's packed keys (files < 256 MiB)
  private readonly segKeyBits: Uint32Array; // bits per key in each segment
  private readonly sections: SectionSizes;
  // Scratch of locate(): no allocation per sample.
  private k0 = 0;
  private k1 = 0;
  private alpha = 0;

  private constructor(bytes: Uint8Array, verifyChecksum: boolean, segmentCache: 'all' | 'two') {
    const size = bytes.byteLength;
    if (!LITTLE_ENDIAN_HOST) throw new FormatError(FORMAT_ERROR.UNSUPPORTED_PLATFORM, 'bonepress needs a little-endian host');
    if (size < HEADER.SIZE) throw new FormatError(FORMAT_ERROR.TOO_SMALL, `${size} bytes is smaller than the ${HEADER.SIZE}-byte header`, 0);
    const view = new DataView(bytes.buffer, bytes.byteOffset, size);
    if (view.getUint32(HEADER.MAGIC, true) !== MAGIC) throw new FormatError(FORMAT_ERROR.BAD_MAGIC, 'not a bonepress clip (bad magic)', HEADER.MAGIC);
    const version = view.getUint16(HEADER.VERSION, true);
    if (version !== VERSION) {
      throw new FormatError(
        FORMAT_ERROR.UNSUPPORTED_VERSION,
        version < VERSION
          ? `format version ${version} is no longer supported (this build reads version ${VERSION}); compress the source clip again`
          : `format version ${version} is newer than this build reads (version ${VERSION}); upgrade bonepress`,
        HEADER.VERSION,
      );
    }
    const flags = view.getUint16(HEADER.FLAGS, true);
    if (flags & ~KNOWN_FLAGS) throw new FormatError(FORMAT_ERROR.BAD_HEADER, `unknown flags 0x${flags.toString(16)}`, HEADER.FLAGS);
    const totalSize = view.getUint32(HEADER.TOTAL_SIZE, true);
    if (size > MAX_FILE_BYTES) throw new FormatError(FORMAT_ERROR.BAD_SIZE, `${size} bytes is larger than a clip may be (${MAX_FILE_BYTES})`, HEADER.TOTAL_SIZE);
    if (totalSize !== size) {
      throw new FormatError(FORMAT_ERROR.BAD_SIZE, `header says ${totalSize} bytes but the buffer holds ${size}${totalSize > size ? ' (truncated?)' : ''}`, HEADER.TOTAL_SIZE);
    }
    this.hasChecksum = (flags & FLAGS.HAS_CHECKSUM) !== 0;
    if (this.hasChecksum && verifyChecksum) {
      const stored = view.getUint32(HEADER.CHECKSUM, true);
      const actual = crc32(bytes, CHECKSUM_START, size);
      if (stored !== actual) throw new FormatError(FORMAT_ERROR.BAD_CHECKSUM, `checksum mismatch (stored 0x${stored.toString(16)}, computed 0x${actual.toString(16)}): the file is corrupt`, HEADER.CHECKSUM);
    } else if (!this.hasChecksum && view.getUint32(HEADER.CHECKSUM, true) !== 0) {
      // The writer leaves the field 0 without the flag; otherwise one flipped flag bit would switch the CRC off unnoticed.
      throw new FormatError(FORMAT_ERROR.BAD_HEADER, `checksum field is 0x${view.getUint32(HEADER.CHECKSUM, true).toString(16)} but the checksum flag is not set`, HEADER.CHECKSUM);
    }
    const boneCount = view.getUint16(HEADER.BONE_COUNT, true);
    if (boneCount < 1 || boneCount > MAX_BONES) throw new FormatError(FORMAT_ERROR.BAD_HEADER, `bone count ${boneCount} (need 1..${MAX_BONES})`, HEADER.BONE_COUNT);
    const rotationFormat = view.getUint8(HEADER.ROTATION_FORMAT);
    if (rotationFormat !== ROTATION_FORMAT.DROP_ONE) throw new FormatError(FORMAT_ERROR.BAD_HEADER, `unknown rotation format ${rotationFormat}`, HEADER.ROTATION_FORMAT);
    const unitCode = view.getUint8(HEADER.UNIT);
    if (unitCode >= UNIT_CODES.length) throw new FormatError(FORMAT_ERROR.BAD_HEADER, `unknown length unit code ${unitCode}`, HEADER.UNIT);
    const sampleCount = view.getUint32(HEADER.SAMPLE_COUNT, true);
    if (sampleCount < 1) throw new FormatError(FORMAT_ERROR.BAD_HEADER, 'sample count 0', HEADER.SAMPLE_COUNT);
    const sampleRate = view.getFloat64(HEADER.SAMPLE_RATE, true);
    if (!(sampleRate > 0) || !Number.isFinite(sampleRate)) throw new FormatError(FORMAT_ERROR.BAD_HEADER, `sample rate ${sampleRate}`, HEADER.SAMPLE_RATE);
    // The wrap period sampleCount / sampleRate (≥ duration) must be finite, or time arithmetic overflows.
    if (!Number.isFinite(sampleCount / sampleRate)) throw new FormatError(FORMAT_ERROR.BAD_HEADER, `sample rate ${sampleRate} Hz is too small for ${sampleCount} samples (infinite duration)`, HEADER.SAMPLE_RATE);
    const segmentCount = view.getUint32(HEADER.SEGMENT_COUNT, true);
    if (segmentCount !== segmentCountFor(sampleCount)) {
      throw new FormatError(FORMAT_ERROR.BAD_HEADER, `segment count ${segmentCount}, expected ${segmentCountFor(sampleCount)} for ${sampleCount} samples`, HEADER.SEGMENT_COUNT);
    }
    const segmentSize = view.getUint16(HEADER.SEGMENT_SIZE, true);
    if (segmentSize !== SEGMENT_SIZE) throw new FormatError(FORMAT_ERROR.BAD_HEADER, `segment size ${segmentSize}, expected ${SEGMENT_SIZE}`, HEADER.SEGMENT_SIZE);
    const animatedCount = view.getUint16(HEADER.ANIMATED_TRACK_COUNT, true);
    const trackCount = boneCount * TRACKS_PER_BONE;

    // Sections sit at fixed places given the counts; any other offset is corruption.
    const expectOffset = (field: number, expected: number, what: string): number => {
      const got = view.getUint32(field, true);
      if (got !== expected) throw new FormatError(FORMAT_ERROR.BAD_OFFSET, `${what} section at ${got}, expected ${expected}`, field);
      return got;
    };
    const need = (end: number, what: string, at: number) => {
      if (end > size) throw new FormatError(FORMAT_ERROR.BAD_SECTION, `${what} runs past the end of the file (${end} > ${size})`, at);
    };
    const parentsOffset = expectOffset(HEADER.PARENTS_OFFSET, HEADER.SIZE, 'parents');
    need(parentsOffset + 2 * boneCount, 'parents', parentsOffset);
    const parents = new Int32Array(boneCount);
    for (let b = 0; b < boneCount; b++) {
      const p = view.getInt16(parentsOffset + 2 * b, true);
      if (p < -1 || p >= b) throw new FormatError(FORMAT_ERROR.BAD_VALUE, `bone ${b} has parent ${p}; parents must precede children`, parentsOffset + 2 * b);
      parents[b] = p;
    }
    const bitsetsOffset = expectOffset(HEADER.BITSETS_OFFSET, align4(parentsOffset + 2 * boneCount), 'bitsets');
    const words = bitsetWords(trackCount);
    need(bitsetsOffset + 8 * words, 'bitsets', bitsetsOffset);
    const trackClass = new Uint8Array(trackCount);
    let constantFloats = 0, animated = 0;
    for (let t = 0; t < trackCount; t++) {
      const isDefault = (view.getUint32(bitsetsOffset + 4 * (t >>> 5), true) >>> (t & 31)) & 1;
      const isConstant = (view.getUint32(bitsetsOffset + 4 * words + 4 * (t >>> 5), true) >>> (t & 31)) & 1;
      if (isDefault && isConstant) throw new FormatError(FORMAT_ERROR.BAD_VALUE, `track ${t} is marked both default and constant`, bitsetsOffset);
      trackClass[t] = isDefault ? CLASS_DEFAULT : isConstant ? CLASS_CONSTANT : CLASS_ANIMATED;
      if (isConstant) constantFloats += CONSTANT_FLOATS[t % TRACKS_PER_BONE];
      if (!isDefault && !isConstant) animated++;
    }
    for (let t = trackCount; t < words * 32; t++) {
      if (((view.getUint32(bitsetsOffset + 4 * (t >>> 5), true) | view.getUint32(bitsetsOffset + 4 * words + 4 * (t >>> 5), true)) >>> (t & 31)) & 1) {
        throw new FormatError(FORMAT_ERROR.BAD_VALUE, `bitset bit ${t} set past the last track`, bitsetsOffset);
      }
    }
    if (animated !== animatedCount) {
      throw new FormatError(FORMAT_ERROR.BAD_HEADER, `header says ${animatedCount} animated tracks, bitsets say ${animated}`, HEADER.ANIMATED_TRACK_COUNT);
    }
    const constantsOffset = expectOffset(HEADER.CONSTANTS_OFFSET, bitsetsOffset + 8 * words, 'constants');
    need(constantsOffset + 4 * constantFloats, 'constants', constantsOffset);
    const clipRangesOffset = expectOffset(HEADER.CLIP_RANGES_OFFSET, constantsOffset + 4 * constantFloats, 'clip ranges');
    let animatedRotations = 0, rangeFloats = 0, rangeBytes = 0;
    for (let t = 0; t < trackCount; t++) {
      if (trackClass[t] !== CLASS_ANIMATED) continue;
      if (t % TRACKS_PER_BONE === TRACK_KIND.ROTATION) animatedRotations++;
      rangeFloats += 2 * RANGE_COMPONENTS[t % TRACKS_PER_BONE];
      rangeBytes += CLIP_RANGE_BYTES[t % TRACKS_PER_BONE];
    }
    need(clipRangesOffset + rangeBytes, 'clip ranges', clipRangesOffset);
    const refsOffset = expectOffset(HEADER.ROTATION_REFS_OFFSET, clipRangesOffset + rangeBytes, 'rotation references');
    const refsEnd = align4(refsOffset + ROTATION_REF_BYTES * animatedRotations);
    need(refsEnd, 'rotation references', refsOffset);
    const segmentsOffset = expectOffset(HEADER.SEGMENTS_OFFSET, refsEnd, 'segments');

    // Base pose: identity for default tracks, stored values for constant ones.
    const basePose = new Float32Array(boneCount * POSE_STRIDE);
    const animBoneOffset = new Int32Array(animated);
    const animKind = new Uint8Array(animated);
    const animTrackOfTrack = new Int32Array(trackCount).fill(-1);
    const animRange = new Int32Array(animated);
    let cursor = constantsOffset, a = 0, rangeCursor = 0;
    const F32_MAX = 3.4028234663852886e38;
    for (let t = 0; t < trackCount; t++) {
      const bone = (t / TRACKS_PER_BONE) | 0, kind = t % TRACKS_PER_BONE;
      const o = bone * POSE_STRIDE + KIND_POSE_OFFSET[kind];
      if (trackClass[t] === CLASS_DEFAULT) {
        if (kind === TRACK_KIND.ROTATION) { basePose[o + 3] = 1; } else if (kind === TRACK_KIND.SCALE) { basePose[o] = 1; basePose[o + 1] = 1; basePose[o + 2] = 1; }
      } else if (trackClass[t] === CLASS_CONSTANT) {
        const n = CONSTANT_FLOATS[kind];
        for (let c = 0; c < n; c++) {
          const v = view.getFloat32(cursor + 4 * c, true);
          if (!Number.isFinite(v)) throw new FormatError(FORMAT_ERROR.BAD_VALUE, `constant value of track ${t} is ${v}`, cursor + 4 * c);
          basePose[o + c] = v;
        }
        if (kind === TRACK_KIND.ROTATION) writeRotation(basePose[o], basePose[o + 1], basePose[o + 2], basePose[o + 3], basePose, o);
        cursor += 4 * n;
      } else {
        animBoneOffset[a] = o;
        animKind[a] = kind;
        animTrackOfTrack[t] = a;
        animRange[a] = rangeCursor;
        rangeCursor += 2 * RANGE_COMPONENTS[kind];
        a++;
      }
    }
    const clipRanges = new Float64Array(rangeFloats);
    for (let j = 0, at = clipRangesOffset; j < animated; j++) {
      const ro = animRange[j];
      if (animKind[j] === TRACK_KIND.ROTATION) {
        for (let c = 0; c < 4; c++, at += 4) {
          clipRanges[ro + 2 * c] = rotationRangeMin(view.getUint16(at, true));
          clipRanges[ro + 2 * c + 1] = rotationRangeExtent(view.getUint16(at + 2, true));
        }
        continue;
      }
      for (let c = 0; c < 3; c++, at += 8) {
        const min = view.getFloat32(at, true), ext = view.getFloat32(at + 4, true);
        // Reconstruction reaches min + 2·extent at most (segment min and extent are each ≤ 255/255).
        if (!Number.isFinite(min) || !(ext >= 0) || !(Math.abs(min) + 2 * ext < F32_MAX)) {
          throw new FormatError(FORMAT_ERROR.BAD_VALUE, `clip range (${min}, ${ext}) of animated track ${j} is not a usable range`, at);
        }
        clipRanges[ro + 2 * c] = min;
        clipRanges[ro + 2 * c + 1] = ext;
      }
    }
    const refs = new Float64Array(4 * animated);
    for (let j = 0, at = refsOffset; j < animated; j++) {
      if (animKind[j] !== TRACK_KIND.ROTATION) continue;
      decodeReference(view.getInt16(at, true), view.getInt16(at + 2, true), view.getInt16(at + 4, true), refs, 4 * j);
      at += ROTATION_REF_BYTES;
    }

    // Segments follow each other in order, each 4-byte aligned; the bits of each
    // component follow from the rate and the segment ranges, computed once here.
    // Every segment holds at least its rate and range bytes, so a sample count the file
    // cannot hold fails here, before per-segment tables are allocated. Without animated
    // tracks segments are empty and need no tables at all (memory must not follow a count).
    need(segmentsOffset + segmentCount * align4(animated * (1 + SEGMENT_RANGE_BYTES)), `${segmentCount} segments`, segmentsOffset);
    const tableSegments = animated > 0 ? segmentCount : 0;
    const segRates = new Uint32Array(tableSegments);
    const segRanges = new Uint32Array(tableSegments);
    const segBits = new Int32Array(tableSegments);
    const segKeyBits = new Uint32Array(tableSegments);
    const compBits = new Uint8Array(tableSegments * animated * ANIMATED_COMPONENTS);
    let expected = segmentsOffset;
    for (let s = 0; s < tableSegments; s++) {
      const off = expected;
      need(off + animated * (1 + SEGMENT_RANGE_BYTES), `segment ${s} header`, off);
      let keyBits = 0;
      for (let j = 0; j < animated; j++) {
        const rate = bytes[off + j] & RATE_MASK;
        if (!isValidBitRate(rate)) throw new FormatError(FORMAT_ERROR.BAD_VALUE, `segment ${s} track ${j}: bit rate ${rate} is not one of 0..24 or 32`, off + j);
        const drop = bytes[off + j] >>> DROP_SHIFT;
        if (animKind[j] !== TRACK_KIND.ROTATION && drop !== 0) {
          throw new FormatError(FORMAT_ERROR.BAD_VALUE, `segment ${s} track ${j}: a dropped component on a ${animKind[j] === TRACK_KIND.TRANSLATION ? 'translation' : 'scale'} track`, off + j);
        }
        const cb = (s * animated + j) * ANIMATED_COMPONENTS;
        if (rate === 0 || rate === RAW_BITS) {
          compBits[cb] = compBits[cb + 1] = compBits[cb + 2] = rate;
        } else {
          trackComponentBits(bytes, off + animated + j * SEGMENT_RANGE_BYTES, rate, animKind[j] === TRACK_KIND.ROTATION ? drop : 3, clipRanges, animRange[j], compBits, cb);
        }
        keyBits += compBits[cb] + compBits[cb + 1] + compBits[cb + 2];
      }
      const keys = segmentSampleCount(s, segmentCount, sampleCount);
      const dataStart = align4(off + animated * (1 + SEGMENT_RANGE_BYTES));
      const dataBytes = 4 * Math.ceil((keys * keyBits) / 32);
      need(dataStart + dataBytes, `segment ${s} data`, off);
      segRates[s] = off;
      segRanges[s] = off + animated;
      segBits[s] = dataStart * 8;
      segKeyBits[s] = keyBits;
      expected = dataStart + dataBytes;
    }
    let namesSize = 0;
    const namesOffset = view.getUint32(HEADER.NAMES_OFFSET, true);
    let boneNames: string[] | undefined;
    let name: string | undefined;
    if (flags & FLAGS.HAS_NAMES) {
      if (namesOffset !== expected) throw new FormatError(FORMAT_ERROR.BAD_OFFSET, `names section at ${namesOffset}, expected ${expected}`, HEADER.NAMES_OFFSET);
      const decoded = readNames(bytes, view, namesOffset, boneCount);
      boneNames = decoded.boneNames;
      name = decoded.name;
      namesSize = decoded.end - namesOffset;
      expected = align4(decoded.end);
    } else if (namesOffset !== 0) {
      throw new FormatError(FORMAT_ERROR.BAD_OFFSET, `names offset ${namesOffset} without the names flag`, HEADER.NAMES_OFFSET);
    }
    if (expected !== size) throw new FormatError(FORMAT_ERROR.BAD_SIZE, `${size - expected} unexpected bytes after the last section`, expected);

    this.bytes = bytes;
    this.words = new Uint32Array(bytes.buffer, bytes.byteOffset, size >>> 2);
    // Raw float32 components are checked once here so sample() never produces NaN.
    for (let s = 0; s < tableSegments; s++) {
      const keys = segmentSampleCount(s, segmentCount, sampleCount);
      let trackBit = 0;
      for (let j = 0; j < animated; j++) {
        const bits = bytes[segRates[s] + j] & RATE_MASK;
        const cb = (s * animated + j) * ANIMATED_COMPONENTS;
        if (bits === RAW_BITS) {
          for (let k = 0; k < keys; k++) {
            for (let c = 0; c < ANIMATED_COMPONENTS; c++) {
              const bit = segBits[s] + k * segKeyBits[s] + trackBit + c * RAW_BITS;
              const v = floatFromBits(readBits(this.words, bit, RAW_BITS));
              if (!Number.isFinite(v)) throw new FormatError(FORMAT_ERROR.BAD_VALUE, `segment ${s} key ${k}: raw value of animated track ${j} is ${v}`, Math.floor(bit / 8));
            }
          }
        }
        trackBit += compBits[cb] + compBits[cb + 1] + compBits[cb + 2];
      }
    }

    this.version = version;
    this.boneCount = boneCount;
    this.sampleCount = sampleCount;
    this.sampleRate = sampleRate;
    this.duration = sampleCount > 1 ? (sampleCount - 1) / sampleRate : 0;
    this.segmentCount = segmentCount;
    this.unit = UNIT_CODES[unitCode];
    this.rotationFormat = rotationFormat;
    this.parents = parents;
    this.boneNames = boneNames;
    this.name = name;
    this.animatedTrackCount = animated;
    this.byteLength = size;
    this.trackClass = trackClass;
    this.basePose = basePose;
    this.animBoneOffset = animBoneOffset;
    this.animKind = animKind;
    this.animTrackOfTrack = animTrackOfTrack;
    this.clipRanges = clipRanges;
    this.compBits = compBits;
    this.cacheAll = segmentCache === 'all';
    const slots = this.cacheAll ? tableSegments : Math.min(2, tableSegments);
    this.cachedSegment = new Int32Array(slots).fill(-1);
    this.segOffset = new Float32Array(slots * animated * ANIMATED_COMPONENTS);
    this.segStep = new Float32Array(slots * animated * ANIMATED_COMPONENTS);
    this.animRange = animRange;
    this.refs = refs;
    this.segRates = segRates;
    this.segRanges = segRanges;
    this.segBits = segBits;
    this.segKeyBits = segKeyBits;
    this.sections = {
      header: HEADER.SIZE,
      parents: bitsetsOffset - parentsOffset,
      bitsets: constantsOffset - bitsetsOffset,
      constants: clipRangesOffset - constantsOffset,
      clipRanges: refsOffset - clipRangesOffset,
      rotationRefs: segmentsOffset - refsOffset,
      segments: (flags & FLAGS.HAS_NAMES ? namesOffset : size) - segmentsOffset,
      names: flags & FLAGS.HAS_NAMES ? size - namesOffset : 0,
      total: size,
    };
    void namesSize;
  }

  /**
   * Validates `bytes` as a `.bpk` clip and wraps it. The bytes are not copied unless they
   * start at an offset that is not a multiple of 4 in their ArrayBuffer. Throws
   * {@link FormatError} naming the problem and its byte offset.
   */
  static open(bytes: Uint8Array | ArrayBuffer, options: OpenOptions = {}): CompressedClip {
    let u8: Uint8Array;
    if (bytes instanceof ArrayBuffer) u8 = new Uint8Array(bytes);
    else if (bytes instanceof Uint8Array) u8 = bytes;
    else throw new FormatError(FORMAT_ERROR.BAD_ARGUMENT, 'expected a Uint8Array or ArrayBuffer');
    if ((u8.byteOffset & 3) !== 0) u8 = u8.slice();
    const cache = options.segmentCache ?? 'all';
    if (cache !== 'all' && cache !== 'two') throw new FormatError(FORMAT_ERROR.BAD_ARGUMENT, `segmentCache must be 'all' or 'two', got ${String(cache)}`);
    return new CompressedClip(u8, options.verifyChecksum ?? true, cache);
  }

  /** Byte size of each section. */
  sectionSizes(): SectionSizes {
    return { ...this.sections };
  }

  /** Class of track `kind` (0 rotation, 1 translation, 2 scale) of `bone`. */
  trackClassOf(bone: number, kind: number): TrackClass {
    return TRACK_CLASS_NAMES[this.trackClass[bone * TRACKS_PER_BONE + kind]];
  }

  /** Bit rate (bits per component; 32 = raw float) of each animated track in `segment`. A copy. */
  segmentBitRates(segment: number): Uint8Array {
    const off = this.segRates[segment];
    return this.bytes.slice(off, off + this.animatedTrackCount).map((r) => r & RATE_MASK);
  }

  /** Bone and kind of animated track `index`. */
  animatedTrack(index: number): { bone: number; kind: number } {
    return { bone: (this.animBoneOffset[index] / POSE_STRIDE) | 0, kind: this.animKind[index] };
  }

  /**
   * Samples every bone at `time` seconds into `outPose`, {@link POSE_STRIDE} floats per
   * bone (rotation xyzw, translation xyz, scale xyz). Allocates nothing. A NaN time counts
   * as 0. Throws only when `outPose` is too short.
   */
  sample(time: number, outPose: Float32Array, options?: SampleOptions): Float32Array {
    if (outPose.length < this.basePose.length) throw new FormatError(FORMAT_ERROR.BAD_ARGUMENT, `outPose holds ${outPose.length} floats, needs ${this.basePose.length}`);
    this.locate(time, options);
    outPose.set(this.basePose);
    this.decode(outPose, 0, -1);
    return outPose;
  }

  /** Writes sample `keyIndex` (clamped to 0..sampleCount − 1) exactly, without interpolation. */
  sampleKey(keyIndex: number, outPose: Float32Array): Float32Array {
    if (outPose.length < this.basePose.length) throw new FormatError(FORMAT_ERROR.BAD_ARGUMENT, `outPose holds ${outPose.length} floats, needs ${this.basePose.length}`);
    const k = keyIndex > 0 ? Math.min(this.sampleCount - 1, Math.floor(keyIndex)) : 0;
    this.k0 = k; this.k1 = k; this.alpha = 0;
    outPose.set(this.basePose);
    this.decode(outPose, 0, -1);
    return outPose;
  }

  /**
   * Samples one bone at `time` into `out[0..9]` (the same 10-float layout as a pose).
   * Throws only on a bad bone index or a short `out`.
   */
  sampleBone(time: number, boneIndex: number, out: Float32Array, options?: SampleOptions): Float32Array {
    if (!(boneIndex >= 0 && boneIndex < this.boneCount) || (boneIndex | 0) !== boneIndex) {
      throw new FormatError(FORMAT_ERROR.BAD_ARGUMENT, `bone index ${boneIndex} (clip has ${this.boneCount} bones)`);
    }
    if (out.length < POSE_STRIDE) throw new FormatError(FORMAT_ERROR.BAD_ARGUMENT, `out holds ${out.length} floats, needs ${POSE_STRIDE}`);
    this.locate(time, options);
    const base = boneIndex * POSE_STRIDE;
    for (let i = 0; i < POSE_STRIDE; i++) out[i] = this.basePose[base + i];
    this.decode(out, base, boneIndex);
    return out;
  }

  /** Resolves time to keys k0, k1 and a blend alpha (0 means k0 alone). */
  private locate(time: number, options: SampleOptions | undefined): void {
    const n = this.sampleCount;
    const rate = this.sampleRate;
    const wrap = options?.looping === 'wrap';
    let t = time === time ? time : 0;
    let k0: number, k1: number, alpha: number;
    if (n === 1) {
      this.k0 = 0; this.k1 = 0; this.alpha = 0;
      return;
    }
    if (wrap) {
      const period = n / rate;
      t = t % period;
      if (t < 0) t += period;
      if (t !== t) t = 0; // ±Infinity
      const pos = t * rate;
      k0 = Math.floor(pos);
      if (k0 >= n) k0 = n - 1;
      alpha = pos - k0;
      k1 = k0 + 1 === n ? 0 : k0 + 1;
    } else {
      const pos = t <= 0 ? 0 : t * rate;
      if (pos >= n - 1) { k0 = n - 1; k1 = n - 1; alpha = 0; }
      else {
        k0 = Math.floor(pos);
        alpha = pos - k0;
        k1 = k0 + 1;
      }
    }
    if (alpha < SNAP) alpha = 0;
    else if (alpha > 1 - SNAP) { k0 = k1; alpha = 0; }
    switch (options?.rounding) {
      case 'floor': alpha = 0; break;
      case 'ceil': if (alpha > 0) { k0 = k1; alpha = 0; } break;
      case 'nearest': if (alpha >= 0.5) k0 = k1; alpha = 0; break;
      default: break;
    }
    if (alpha === 0) k1 = k0;
    this.k0 = k0; this.k1 = k1; this.alpha = alpha;
  }

  /**
   * Decodes the animated tracks at (k0, k1, alpha) into `out`, whose bone 0 starts at
   * `-base`… i.e. a track of pose offset o lands at out[o − base]. `onlyBone` ≥ 0 limits
   * the work to that bone.
   */
  private decode(out: Float32Array, base: number, onlyBone: number): void {
    const segCount = this.segmentCount;
    const k0 = this.k0, k1 = this.k1, alpha = this.alpha;
    const single = k0 === k1;
    let s0 = (k0 / SEGMENT_SIZE) | 0; if (s0 >= segCount) s0 = segCount - 1;
    let s1 = (k1 / SEGMENT_SIZE) | 0; if (s1 >= segCount) s1 = segCount - 1;
    const bytes = this.bytes, words = this.words, ranges = this.clipRanges, refs = this.refs;
    const rates0 = this.segRates[s0], rates1 = this.segRates[s1];
    const rng0 = this.segRanges[s0], rng1 = this.segRanges[s1];
    let bit0 = this.segBits[s0] + (k0 - s0 * SEGMENT_SIZE) * this.segKeyBits[s0];
    let bit1 = this.segBits[s1] + (k1 - s1 * SEGMENT_SIZE) * this.segKeyBits[s1];
    const count = this.animatedTrackCount;
    const cbits = this.compBits;
    const cb0 = s0 * count * ANIMATED_COMPONENTS, cb1 = s1 * count * ANIMATED_COMPONENTS;
    let first = 0, last = count;
    if (onlyBone >= 0) {
      // Skip to the bone's first animated track, summing the bits of the tracks before it
      // (per component: a track's components need not share its rate).
      first = count; last = count;
      for (let kind = 0; kind < TRACKS_PER_BONE; kind++) {
        const a = this.animTrackOfTrack[onlyBone * TRACKS_PER_BONE + kind];
        if (a >= 0) { if (first === count) first = a; last = a + 1; }
      }
      for (let i = 0; i < ANIMATED_COMPONENTS * first; i++) {
        bit0 += cbits[cb0 + i];
        bit1 += cbits[cb1 + i];
      }
    }
    // With two slots, the keys' segments never share one (wrapping pairs the last with the first).
    const slot0 = this.prepareSegment(s0, this.cacheAll ? s0 : s0 & 1);
    const slot1 = s1 === s0 ? slot0 : this.prepareSegment(s1, this.cacheAll ? s1 : (s0 & 1) ^ 1);
    const offs = this.segOffset, steps = this.segStep;
    const v = this.vals, boneOffset = this.animBoneOffset, kinds = this.animKind;
    v[6] = alpha;
    for (let j = first; j < last; j++) {
      // Components go through a scratch array so no double crosses a call boundary (boxing).
      const i0 = slot0 + 3 * j;
      const a0 = cbits[cb0 + 3 * j], a1 = cbits[cb0 + 3 * j + 1], a2 = cbits[cb0 + 3 * j + 2];
      v[0] = a0 === RAW_BITS ? floatFromBits(readBits(words, bit0, RAW_BITS)) : offs[i0] + readBits(words, bit0, a0) * steps[i0];
      bit0 += a0;
      v[1] = a1 === RAW_BITS ? floatFromBits(readBits(words, bit0, RAW_BITS)) : offs[i0 + 1] + readBits(words, bit0, a1) * steps[i0 + 1];
      bit0 += a1;
      v[2] = a2 === RAW_BITS ? floatFromBits(readBits(words, bit0, RAW_BITS)) : offs[i0 + 2] + readBits(words, bit0, a2) * steps[i0 + 2];
      bit0 += a2;
      const o = boneOffset[j] - base;
      const rotation = kinds[j] === TRACK_KIND.ROTATION;
      if (single) {
        if (rotation) emitRotation(v, bytes[rates0 + j] >>> DROP_SHIFT, refs, 4 * j, out, o);
        else { out[o] = v[0]; out[o + 1] = v[1]; out[o + 2] = v[2]; }
        continue;
      }
      const i1 = slot1 + 3 * j;
      const e0 = cbits[cb1 + 3 * j], e1 = cbits[cb1 + 3 * j + 1], e2 = cbits[cb1 + 3 * j + 2];
      v[3] = e0 === RAW_BITS ? floatFromBits(readBits(words, bit1, RAW_BITS)) : offs[i1] + readBits(words, bit1, e0) * steps[i1];
      bit1 += e0;
      v[4] = e1 === RAW_BITS ? floatFromBits(readBits(words, bit1, RAW_BITS)) : offs[i1 + 1] + readBits(words, bit1, e1) * steps[i1 + 1];
      bit1 += e1;
      v[5] = e2 === RAW_BITS ? floatFromBits(readBits(words, bit1, RAW_BITS)) : offs[i1 + 2] + readBits(words, bit1, e2) * steps[i1 + 2];
      bit1 += e2;
      if (rotation) {
        blendRotations(v, bytes[rates0 + j] >>> DROP_SHIFT, bytes[rates1 + j] >>> DROP_SHIFT, refs, 4 * j, out, o);
      } else {
        out[o] = v[0] + (v[3] - v[0]) * alpha;
        out[o + 1] = v[1] + (v[4] - v[1]) * alpha;
        out[o + 2] = v[2] + (v[5] - v[2]) * alpha;
      }
    }
  }

  /**
   * Fills the dequantisation cache (offset and step of every stored component) for
   * segment `s` in `slot`, unless it is there already; returns the slot's base index.
   * Offsets and steps are float32 by definition of the format (bits.ts), so the cache
   * holds them exactly.
   */
  private prepareSegment(s: number, slot: number): number {
    const count = this.animatedTrackCount;
    const base = slot * count * ANIMATED_COMPONENTS;
    if (this.cachedSegment[slot] === s) return base;
    this.cachedSegment[slot] = s;
    const bytes = this.bytes, ranges = this.clipRanges, cbits = this.compBits;
    const kinds = this.animKind, rangeAt = this.animRange;
    const rates = this.segRates[s], rng = this.segRanges[s];
    const offs = this.segOffset, steps = this.segStep;
    const cbBase = s * count * ANIMATED_COMPONENTS;
    for (let j = 0; j < count; j++) {
      const rb = bytes[rates + j];
      const rate = rb & RATE_MASK;
      const drop = kinds[j] === TRACK_KIND.ROTATION ? rb >>> DROP_SHIFT : 3;
      const ro = rangeAt[j];
      const at = rng + j * SEGMENT_RANGE_BYTES;
      const i = base + 3 * j;
      if (rate === 0) {
        // Constant in the segment: its components have 0 bits, so value = offset.
        for (let c = 0; c < ANIMATED_COMPONENTS; c++) {
          const r = ro + 2 * (c < drop ? c : c + 1);
          offs[i + c] = segmentConstant(ranges[r], ranges[r + 1], bytes[at + 2 * c] | (bytes[at + 2 * c + 1] << 8));
          steps[i + c] = 0;
        }
        continue;
      }
      // Stored slot c holds component c, or c + 1 at and after the dropped one.
      const r0 = ro + (drop === 0 ? 2 : 0), r1 = ro + (drop <= 1 ? 4 : 2), r2 = ro + (drop <= 2 ? 6 : 4);
      const cb = cbBase + 3 * j;
      offs[i] = segmentOffset(ranges[r0], ranges[r0 + 1], bytes[at]);
      steps[i] = segmentStep(ranges[r0 + 1], bytes[at + 1], cbits[cb]);
      offs[i + 1] = segmentOffset(ranges[r1], ranges[r1 + 1], bytes[at + 2]);
      steps[i + 1] = segmentStep(ranges[r1 + 1], bytes[at + 3], cbits[cb + 1]);
      offs[i + 2] = segmentOffset(ranges[r2], ranges[r2 + 1], bytes[at + 4]);
      steps[i + 2] = segmentStep(ranges[r2 + 1], bytes[at + 5], cbits[cb + 2]);
    }
    return base;
  }
}

function readNames(bytes: Uint8Array, view: DataView, offset: number, boneCount: number): { name: string; boneNames: string[]; end: number } {
  const decoder = new TextDecoder('utf-8', { fatal: true });
  let at = offset;
  const readString = (what: string): string => {
    if (at + 2 > bytes.length) throw new FormatError(FORMAT_ERROR.BAD_SECTION, `names section: ${what} runs past the end of the file`, at);
    const len = view.getUint16(at, true);
    if (at + 2 + len > bytes.length) throw new FormatError(FORMAT_ERROR.BAD_SECTION, `names section: ${what} (${len} bytes) runs past the end of the file`, at);
    let s: string;
    try {
      s = decoder.decode(bytes.subarray(at + 2, at + 2 + len));
    } catch {
      throw new FormatError(FORMAT_ERROR.BAD_VALUE, `names section: ${what} is not valid UTF-8`, at + 2);
    }
    at += 2 + len;
    return s;
  };
  const name = readString('clip name');
  const boneNames: string[] = [];
  for (let b = 0; b < boneCount; b++) boneNames.push(readString(`name of bone ${b}`));
  return { name, boneNames, end: at };
}
