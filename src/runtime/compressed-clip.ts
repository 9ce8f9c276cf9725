/**
 * A `.bpk` clip opened for sampling. `CompressedClip.open` validates every field once and
 * derives the decode tables (decode-tables.ts: one buffer in the order a pose decode reads
 * it); the clip is immutable after that and can be shared by any number of characters,
 * each sampling it through its own {@link ClipSampler} (`clip.createSampler()`), whose
 * per-instance state is a few numbers.
 */
import {
  ANIMATED_COMPONENTS, BITSET, BITSET_COUNT, CHECKSUM_START, CLIP_RANGE_BYTES, CONSTANT_FLOATS, DROP_SHIFT, FLAGS, HEADER, KIND_POSE_OFFSET,
  KNOWN_FLAGS, MAGIC, MAX_BONES, MAX_BONE_SAMPLES, MAX_FILE_BYTES, RANGE_COMPONENTS, RATE_MASK, RAW_BITS, ROTATION_FORMAT, ROTATION_REF_BYTES,
  SEGMENT_RANGE_BYTES, SEGMENT_SIZE, TRACKS_PER_BONE, TRACK_KIND, UNIT_CODES, VERSION,
  align4, bitsetWords, crc32, isValidBitRate, sectionLayout, segmentCountFor, segmentSampleCount, type RotationFormat,
} from './format.js';
import { FORMAT_ERROR, FormatError } from './errors.js';
import { decodeReference, floatFromBits, readBits, rotationRangeExtent, rotationRangeMin, trackComponentBits } from './bits.js';
import { buildTables, type ClipTables } from './decode-tables.js';
import { kernelPlace } from './wasm-kernel.js';
import { writeRotation } from './interpolate.js';
import { POSE_STRIDE } from './pose.js';
import { ClipSampler, type SampleOptions } from './sampler.js';

export type { Looping, Rounding, SampleOptions } from './sampler.js';
export type { ClipTables } from './decode-tables.js';

/** Options of {@link CompressedClip.open}. */
export interface OpenOptions {
  /** Check the CRC-32 when the file has one. Default true. */
  verifyChecksum?: boolean;
  /**
   * What is derived at open time:
   * - `'full'` (default): every segment's dequantisation records and a copy of the packed
   *   keys, in one buffer in the order a decode reads it (on the corpus about 1.8 × the
   *   file where the WebAssembly kernel decodes, 1.6 × otherwise), shared by
   *   every sampler: the fastest decode, cold or warm;
   * - `'compact'`: the base pose and references only; each sampler builds the records of
   *   the two segments it last read (32 bytes per animated track each) and reads packed keys
   *   from the file. Resident memory is about the file's size plus a few KB per sampler;
   *   moving to another segment costs one record build. Decoded values are identical.
   */
  tables?: 'full' | 'compact';
  /**
   * Which code decodes a pose (both give the same bits):
   * - `'auto'` (default): the WebAssembly SIMD kernel (wasm-kernel.ts) where the engine has
   *   WebAssembly SIMD and the tables are `'full'`, else TypeScript;
   * - `'typescript'`: always the TypeScript decoder.
   */
  decoder?: 'auto' | 'typescript';
}

/** Class of a track in a compressed clip. */
export type TrackClass = 'default' | 'constant' | 'animated';

const CLASS_DEFAULT = 0, CLASS_CONSTANT = 1, CLASS_ANIMATED = 2;
const TRACK_CLASS_NAMES: readonly TrackClass[] = ['default', 'constant', 'animated'];
const LITTLE_ENDIAN_HOST = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;
const F32_MAX = 3.4028234663852886e38;
/** Start times and durations beyond this (about 31 years) are corrupt, and keep time arithmetic exact enough. */
const MAX_SECONDS = 1e9;

/** Byte ranges of a clip's sections, for tools (`bonepress info`). */
export interface SectionSizes {
  header: number;
  parents: number;
  bitsets: number;
  constants: number;
  clipRanges: number;
  rotationRefs: number;
  nodeIndices: number;
  segments: number;
  names: number;
  total: number;
}

/** A validated `.bpk` clip with its decode tables, immutable once opened. */
export class CompressedClip {
  /** Number of bones. */
  readonly boneCount: number;
  /** Number of uniformly spaced samples. */
  readonly sampleCount: number;
  /** Samples per second (Hz). */
  readonly sampleRate: number;
  /** Time of sample 0 on the source's timeline, in seconds (a glTF animation's first key; 0 for BVH). */
  readonly startTime: number;
  /**
   * The source's duration in seconds, measured from time 0 as three.js does (a glTF
   * animation's last key time): the clip's length on the host's timeline and the period of
   * `'repeat'` looping. For sources without a time base, startTime + (sampleCount − 1) / sampleRate.
   */
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
  /** The glTF node index of every bone, when the clip came from a glTF asset. */
  readonly nodeIndices: Int32Array | undefined;
  /** Number of animated tracks. */
  readonly animatedTrackCount: number;
  /** Size of the file in bytes. */
  readonly byteLength: number;
  /** Whether the file carries a checksum. */
  readonly hasChecksum: boolean;
  /** @internal Decode tables for {@link ClipSampler}. */
  readonly tables: ClipTables;

  private readonly bytes: Uint8Array;
  private readonly trackClass: Uint8Array;
  private readonly channelMask: Uint8Array;
  private readonly sections: SectionSizes;
  private ownSampler: ClipSampler | undefined;

  private constructor(bytes: Uint8Array, verifyChecksum: boolean, compactTables: boolean, useKernel: boolean) {
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
    if (sampleCount * boneCount > MAX_BONE_SAMPLES) {
      throw new FormatError(FORMAT_ERROR.BAD_HEADER, `${sampleCount} samples × ${boneCount} bones is more than a clip may hold (${MAX_BONE_SAMPLES} bone samples)`, HEADER.SAMPLE_COUNT);
    }
    const sampleRate = view.getFloat64(HEADER.SAMPLE_RATE, true);
    if (!(sampleRate > 0) || !Number.isFinite(sampleRate)) throw new FormatError(FORMAT_ERROR.BAD_HEADER, `sample rate ${sampleRate}`, HEADER.SAMPLE_RATE);
    // The wrap period sampleCount / sampleRate (≥ the sampled span) must be finite, or time arithmetic overflows.
    if (!(sampleCount / sampleRate <= MAX_SECONDS)) throw new FormatError(FORMAT_ERROR.BAD_HEADER, `sample rate ${sampleRate} Hz is too small for ${sampleCount} samples (longer than ${MAX_SECONDS} s)`, HEADER.SAMPLE_RATE);
    const startTime = view.getFloat64(HEADER.START_TIME, true);
    if (!(startTime >= 0 && startTime <= MAX_SECONDS)) throw new FormatError(FORMAT_ERROR.BAD_HEADER, `start time ${startTime} s (need 0..${MAX_SECONDS})`, HEADER.START_TIME);
    const duration = view.getFloat64(HEADER.DURATION, true);
    if (!(duration >= startTime && duration <= MAX_SECONDS)) throw new FormatError(FORMAT_ERROR.BAD_HEADER, `duration ${duration} s (need ${startTime}..${MAX_SECONDS}, not before the start time)`, HEADER.DURATION);
    const segmentCount = view.getUint32(HEADER.SEGMENT_COUNT, true);
    if (segmentCount !== segmentCountFor(sampleCount)) {
      throw new FormatError(FORMAT_ERROR.BAD_HEADER, `segment count ${segmentCount}, expected ${segmentCountFor(sampleCount)} for ${sampleCount} samples`, HEADER.SEGMENT_COUNT);
    }
    const segmentSize = view.getUint16(HEADER.SEGMENT_SIZE, true);
    if (segmentSize !== SEGMENT_SIZE) throw new FormatError(FORMAT_ERROR.BAD_HEADER, `segment size ${segmentSize}, expected ${SEGMENT_SIZE}`, HEADER.SEGMENT_SIZE);
    const animatedCount = view.getUint16(HEADER.ANIMATED_TRACK_COUNT, true);
    const trackCount = boneCount * TRACKS_PER_BONE;
    const hasNodeIndices = (flags & FLAGS.HAS_NODE_INDICES) !== 0;

    // Sections sit at fixed places given the counts; any other offset is corruption.
    const expectOffset = (field: number, expected: number, what: string): number => {
      const got = view.getUint32(field, true);
      if (got !== expected) throw new FormatError(FORMAT_ERROR.BAD_OFFSET, `${what} section at ${got}, expected ${expected}`, field);
      return got;
    };
    const need = (end: number, what: string, at: number) => {
      if (end > size) throw new FormatError(FORMAT_ERROR.BAD_SECTION, `${what} runs past the end of the file (${end} > ${size})`, at);
    };
    // The bitsets fix the later sections' sizes, so the layout is computed in two steps.
    const early = sectionLayout({ boneCount, constantFloats: 0, clipRangeBytes: 0, animatedRotations: 0, hasNodeIndices });
    const parentsOffset = expectOffset(HEADER.PARENTS_OFFSET, early.parents, 'parents');
    need(parentsOffset + 2 * boneCount, 'parents', parentsOffset);
    const parents = new Int32Array(boneCount);
    for (let b = 0; b < boneCount; b++) {
      const p = view.getInt16(parentsOffset + 2 * b, true);
      if (p < -1 || p >= b) throw new FormatError(FORMAT_ERROR.BAD_VALUE, `bone ${b} has parent ${p}; parents must precede children`, parentsOffset + 2 * b);
      parents[b] = p;
    }
    const bitsetsOffset = expectOffset(HEADER.BITSETS_OFFSET, early.bitsets, 'bitsets');
    const words = bitsetWords(trackCount);
    need(bitsetsOffset + 4 * BITSET_COUNT * words, 'bitsets', bitsetsOffset);
    const bit = (set: number, t: number): number => (view.getUint32(bitsetsOffset + 4 * (set * words + (t >>> 5)), true) >>> (t & 31)) & 1;
    const trackClass = new Uint8Array(trackCount);
    const channelMask = new Uint8Array(trackCount);
    let constantFloats = 0, animated = 0, animatedRotations = 0, clipRangeBytes = 0, rangeFloats = 0;
    for (let t = 0; t < trackCount; t++) {
      const isDefault = bit(BITSET.DEFAULT, t), isConstant = bit(BITSET.CONSTANT, t);
      if (isDefault && isConstant) throw new FormatError(FORMAT_ERROR.BAD_VALUE, `track ${t} is marked both default and constant`, bitsetsOffset);
      if ((isDefault || isConstant) && bit(BITSET.STEP, t)) throw new FormatError(FORMAT_ERROR.BAD_VALUE, `track ${t} is marked step but is not animated`, bitsetsOffset);
      trackClass[t] = isDefault ? CLASS_DEFAULT : isConstant ? CLASS_CONSTANT : CLASS_ANIMATED;
      channelMask[t] = bit(BITSET.CHANNEL, t);
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
        if (bit(set, t)) throw new FormatError(FORMAT_ERROR.BAD_VALUE, `bitset ${set} has bit ${t} set past the last track`, bitsetsOffset);
      }
    }
    if (animated !== animatedCount) {
      throw new FormatError(FORMAT_ERROR.BAD_HEADER, `header says ${animatedCount} animated tracks, bitsets say ${animated}`, HEADER.ANIMATED_TRACK_COUNT);
    }
    const layout = sectionLayout({ boneCount, constantFloats, clipRangeBytes, animatedRotations, hasNodeIndices });
    const constantsOffset = expectOffset(HEADER.CONSTANTS_OFFSET, layout.constants, 'constants');
    need(constantsOffset + 4 * constantFloats, 'constants', constantsOffset);
    const clipRangesOffset = expectOffset(HEADER.CLIP_RANGES_OFFSET, layout.clipRanges, 'clip ranges');
    need(clipRangesOffset + clipRangeBytes, 'clip ranges', clipRangesOffset);
    const refsOffset = expectOffset(HEADER.ROTATION_REFS_OFFSET, layout.rotationRefs, 'rotation references');
    need(refsOffset + ROTATION_REF_BYTES * animatedRotations, 'rotation references', refsOffset);
    const nodeIndicesOffset = expectOffset(HEADER.NODE_INDICES_OFFSET, layout.nodeIndices, 'node indices');
    let nodeIndices: Int32Array | undefined;
    if (hasNodeIndices) {
      need(nodeIndicesOffset + 4 * boneCount, 'node indices', nodeIndicesOffset);
      nodeIndices = new Int32Array(boneCount);
      for (let b = 0; b < boneCount; b++) {
        const n = view.getUint32(nodeIndicesOffset + 4 * b, true);
        if (n > 0x7fffffff) throw new FormatError(FORMAT_ERROR.BAD_VALUE, `node index ${n} of bone ${b}`, nodeIndicesOffset + 4 * b);
        nodeIndices[b] = n;
      }
    }
    const segmentsOffset = expectOffset(HEADER.SEGMENTS_OFFSET, layout.segments, 'segments');

    // Base pose: identity for default tracks, stored values for constant ones.
    const basePose = new Float32Array(boneCount * POSE_STRIDE);
    const animBoneOffset = new Int32Array(animated);
    const animKind = new Uint8Array(animated);
    const animStep = new Uint8Array(animated);
    const animTrackOfTrack = new Int32Array(trackCount).fill(-1);
    const animRange = new Int32Array(animated);
    let cursor = constantsOffset, a = 0, rangeCursor = 0;
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
        animStep[a] = bit(BITSET.STEP, t);
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
    const segmentsEnd = expected;
    const namesOffset = view.getUint32(HEADER.NAMES_OFFSET, true);
    let boneNames: string[] | undefined;
    let name: string | undefined;
    if (flags & FLAGS.HAS_NAMES) {
      if (namesOffset !== expected) throw new FormatError(FORMAT_ERROR.BAD_OFFSET, `names section at ${namesOffset}, expected ${expected}`, HEADER.NAMES_OFFSET);
      const decoded = readNames(bytes, view, namesOffset, boneCount);
      boneNames = decoded.boneNames;
      name = decoded.name;
      expected = align4(decoded.end);
    } else if (namesOffset !== 0) {
      throw new FormatError(FORMAT_ERROR.BAD_OFFSET, `names offset ${namesOffset} without the names flag`, HEADER.NAMES_OFFSET);
    }
    if (expected !== size) throw new FormatError(FORMAT_ERROR.BAD_SIZE, `${size - expected} unexpected bytes after the last section`, expected);

    const words32 = new Uint32Array(bytes.buffer, bytes.byteOffset, size >>> 2);
    // Raw float32 components are checked once here so sampling never produces NaN: finite,
    // and within [−1, 1] for a rotation (components of a unit delta), so that the float32
    // rotation arithmetic cannot overflow.
    for (let s = 0; s < tableSegments; s++) {
      const keys = segmentSampleCount(s, segmentCount, sampleCount);
      let trackBit = 0;
      for (let j = 0; j < animated; j++) {
        const bits = bytes[segRates[s] + j] & RATE_MASK;
        const cb = (s * animated + j) * ANIMATED_COMPONENTS;
        if (bits === RAW_BITS) {
          for (let k = 0; k < keys; k++) {
            for (let c = 0; c < ANIMATED_COMPONENTS; c++) {
              const at = segBits[s] + k * segKeyBits[s] + trackBit + c * RAW_BITS;
              const v = floatFromBits(readBits(words32, at, RAW_BITS));
              if (!Number.isFinite(v) || (animKind[j] === TRACK_KIND.ROTATION && !(v >= -1 && v <= 1))) {
                throw new FormatError(FORMAT_ERROR.BAD_VALUE, `segment ${s} key ${k}: raw value of animated ${animKind[j] === TRACK_KIND.ROTATION ? 'rotation' : 'track'} ${j} is ${v}`, Math.floor(at / 8));
              }
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
    this.startTime = startTime;
    this.duration = duration;
    this.segmentCount = segmentCount;
    this.unit = UNIT_CODES[unitCode];
    this.rotationFormat = rotationFormat;
    this.parents = parents;
    this.boneNames = boneNames;
    this.name = name;
    this.nodeIndices = nodeIndices;
    this.animatedTrackCount = animated;
    this.byteLength = size;
    this.trackClass = trackClass;
    this.channelMask = channelMask;
    const segData = new Uint32Array(tableSegments), segKeys = new Uint32Array(tableSegments);
    for (let s = 0; s < tableSegments; s++) {
      segData[s] = segBits[s] / 8;
      segKeys[s] = segmentSampleCount(s, segmentCount, sampleCount);
    }
    this.bytes = bytes;
    this.tables = buildTables({
      bytes, basePose, animKind, animBoneOffset, animStep, animTrackOfTrack, clipRanges, animRange, refs, parents, segRates, segRanges, segData, segKeyBits, segKeys, compBits,
    }, compactTables, useKernel ? kernelPlace : undefined);
    this.sections = {
      header: HEADER.SIZE,
      parents: bitsetsOffset - parentsOffset,
      bitsets: constantsOffset - bitsetsOffset,
      constants: clipRangesOffset - constantsOffset,
      clipRanges: refsOffset - clipRangesOffset,
      rotationRefs: (hasNodeIndices ? nodeIndicesOffset : segmentsOffset) - refsOffset,
      nodeIndices: hasNodeIndices ? segmentsOffset - nodeIndicesOffset : 0,
      segments: segmentsEnd - segmentsOffset,
      names: flags & FLAGS.HAS_NAMES ? size - namesOffset : 0,
      total: size,
    };
  }

  /**
   * Validates `bytes` as a `.bpk` clip and wraps it. The bytes are kept (names, bit rates)
   * and copied only when they start at an offset that is not a multiple of 4 in their
   * ArrayBuffer; the decode tables copy the packed keys behind each segment's constants,
   * about 1.6–1.8 × the file size in all on the corpus. Work and memory are linear in the file
   * size. Throws {@link FormatError} naming the problem and its byte offset.
   */
  static open(bytes: Uint8Array | ArrayBuffer, options: OpenOptions = {}): CompressedClip {
    let u8: Uint8Array;
    if (bytes instanceof ArrayBuffer) u8 = new Uint8Array(bytes);
    else if (bytes instanceof Uint8Array) u8 = bytes;
    else throw new FormatError(FORMAT_ERROR.BAD_ARGUMENT, 'expected a Uint8Array or ArrayBuffer');
    if ((u8.byteOffset & 3) !== 0) u8 = u8.slice();
    const tables = options.tables ?? 'full';
    if (tables !== 'full' && tables !== 'compact') throw new FormatError(FORMAT_ERROR.BAD_ARGUMENT, `tables must be 'full' or 'compact', got ${String(tables)}`);
    const decoder = options.decoder ?? 'auto';
    if (decoder !== 'auto' && decoder !== 'typescript') throw new FormatError(FORMAT_ERROR.BAD_ARGUMENT, `decoder must be 'auto' or 'typescript', got ${String(decoder)}`);
    return new CompressedClip(u8, options.verifyChecksum ?? true, tables === 'compact', decoder === 'auto');
  }

  /**
   * A new per-instance sampler over this clip: one per character (or mixer action) that
   * plays it. The clip itself is shared and never changes.
   */
  createSampler(): ClipSampler {
    return new ClipSampler(this);
  }

  /** The code that decodes this clip's poses (see {@link OpenOptions.decoder}). */
  get decoder(): 'wasm' | 'typescript' {
    return this.tables.kernel ? 'wasm' : 'typescript';
  }

  /** Duration of the sampled span, (sampleCount − 1) / sampleRate seconds from {@link startTime}. */
  get sampledSpan(): number {
    return this.sampleCount > 1 ? (this.sampleCount - 1) / this.sampleRate : 0;
  }

  /** Byte size of each section. */
  sectionSizes(): SectionSizes {
    return { ...this.sections };
  }

  /** Class of track `kind` (0 rotation, 1 translation, 2 scale) of `bone`. */
  trackClassOf(bone: number, kind: number): TrackClass {
    return TRACK_CLASS_NAMES[this.trackClass[bone * TRACKS_PER_BONE + kind]];
  }

  /** Whether the source animates track `kind` of `bone` (a host binds only these). */
  hasChannel(bone: number, kind: number): boolean {
    return this.channelMask[bone * TRACKS_PER_BONE + kind] === 1;
  }

  /** Whether animated track `kind` of `bone` holds each sample until the next (STEP) instead of blending. */
  isStepTrack(bone: number, kind: number): boolean {
    const a = this.tables.animTrackOfTrack[bone * TRACKS_PER_BONE + kind];
    return a >= 0 && this.tables.animStep[a] === 1;
  }

  /** Bit rate (bits per component; 32 = raw float) of each animated track in `segment`. A copy. */
  segmentBitRates(segment: number): Uint8Array {
    const off = this.tables.segRates[segment];
    return this.bytes.slice(off, off + this.animatedTrackCount).map((r) => r & RATE_MASK);
  }

  /** Bone and kind of animated track `index`. */
  animatedTrack(index: number): { bone: number; kind: number } {
    return { bone: (this.tables.animBoneOffset[index] / POSE_STRIDE) | 0, kind: this.tables.animKind[index] };
  }

  /**
   * Samples every bone at `time` seconds into `outPose` with the clip's own sampler (see
   * {@link ClipSampler.sample}). Convenient for one user; characters sharing the clip
   * should each use their own {@link createSampler}.
   */
  sample(time: number, outPose: Float32Array, options?: SampleOptions): Float32Array {
    return this.sampler().sample(time, outPose, options);
  }

  /** Writes sample `keyIndex` exactly with the clip's own sampler (see {@link ClipSampler.sampleKey}). */
  sampleKey(keyIndex: number, outPose: Float32Array): Float32Array {
    return this.sampler().sampleKey(keyIndex, outPose);
  }

  /** Samples one bone with the clip's own sampler (see {@link ClipSampler.sampleBone}). */
  sampleBone(time: number, boneIndex: number, out: Float32Array, options?: SampleOptions): Float32Array {
    return this.sampler().sampleBone(time, boneIndex, out, options);
  }

  private sampler(): ClipSampler {
    return (this.ownSampler ??= new ClipSampler(this));
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
