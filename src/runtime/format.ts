/**
 * The `.bpk` format as code: the single source of truth for the writer
 * (compress/write.ts) and the reader (runtime/clip-reader.ts, opened by runtime/clip.ts). docs/format.md
 * describes the same layout in prose.
 *
 * Every value here is serialized: never renumber; change the layout only with a VERSION bump.
 *
 * The field and flag tables are `const enum`s: the build (tsc) writes their values into the
 * JavaScript where they are used, so a web page's bundle carries numbers instead of an object
 * and a property lookup per use (0.5 kB of the runtime's gzip in a Vite build).
 */

/** "BPK" followed by 0x1A (stops `type`/`cat` on Windows, catches text-mode mangling). */
export const MAGIC = 0x1a4b5042; // little-endian bytes: 42 50 4B 1A
/**
 * Current format version; every other version is rejected with UNSUPPORTED_VERSION.
 * Version 3 added the time base (start time, duration), the channel and step bitsets and
 * the optional glTF node-index section; version 6 the optional key-times section.
 */
export const VERSION = 6;

/** Header flags. Serialized: never renumber. */
// biome-ignore lint/suspicious/noConstEnum: see the file's comment
export const enum FLAGS {
  /** The names section is present. */
  HAS_NAMES = 1 << 0,
  /** The checksum field holds CRC-32 of bytes [CHECKSUM_START, totalSize). */
  HAS_CHECKSUM = 1 << 1,
  /** The node-index section is present (the glTF node of every bone). */
  HAS_NODE_INDICES = 1 << 2,
  /**
   * The key-times section is present: sample k plays at its own time (f32 seconds on the
   * source's timeline, non-decreasing) instead of START_TIME + k / SAMPLE_RATE, for sources
   * whose keys lie on no uniform grid. SAMPLE_RATE is then the mean rate, for display.
   */
  HAS_KEY_TIMES = 1 << 3,
  /**
   * The clip is additive: its poses are deltas to apply to a base pose (see
   * {@link ADDITIVE_MODE}), and the additive record ({@link ADDITIVE}) says against what
   * reference they were taken. A file without the flag has the same layout as before the
   * flag existed; a build that does not know it refuses the file (unknown flag).
   */
  ADDITIVE = 1 << 4,
}
/** Flags this version understands; others make the file invalid. */
export const KNOWN_FLAGS =
  FLAGS.HAS_NAMES | FLAGS.HAS_CHECKSUM | FLAGS.HAS_NODE_INDICES | FLAGS.HAS_KEY_TIMES | FLAGS.ADDITIVE;

/**
 * How an additive clip's decoded pose applies to a base pose. Serialized: never renumber.
 * - LOCAL: bone by bone in local space, three.js's additive blending at weight 1:
 *   rotation base · delta, translation base + delta, scale base + (delta − 1). The scale delta is stored offset by one so that identity stays the
 *   identity pose (rotation (0,0,0,1), translation 0, scale 1) and a bone the layer does not
 *   move costs nothing; three.js's `makeClipAdditive` values are delta − 1.
 */
// biome-ignore lint/suspicious/noConstEnum: see the file's comment
export const enum ADDITIVE_MODE {
  LOCAL = 1,
}
/** What an additive clip's deltas were taken against. Serialized: never renumber. */
// biome-ignore lint/suspicious/noConstEnum: see the file's comment
export const enum ADDITIVE_REFERENCE {
  /** A frame of the source clip itself (three.js's `makeClipAdditive` default, frame 0). */
  FRAME = 0,
  /** A pose of another clip of the same skeleton, at a time on that clip's timeline. */
  POSE = 1,
}
/**
 * The additive record (present with {@link FLAGS.ADDITIVE}, right before the segments):
 * u8 mode ({@link ADDITIVE_MODE}), u8 reference kind ({@link ADDITIVE_REFERENCE}), u16 0,
 * u32 the reference frame (0 for a pose), f64 the reference time in seconds (the frame's
 * time on the source's timeline, or the pose's on its clip's).
 */
// biome-ignore lint/suspicious/noConstEnum: see the file's comment
export const enum ADDITIVE {
  MODE = 0,
  REFERENCE = 1,
  RESERVED = 2,
  FRAME = 4,
  TIME = 8,
  BYTES = 16,
}

/** How animated rotations are stored. Serialized: never renumber. */
// biome-ignore lint/suspicious/noConstEnum: see the file's comment
export const enum ROTATION_FORMAT {
  /**
   * Each animated rotation is stored as delta = conj(reference) · q with a per-track
   * reference quaternion (rotation references section). In each segment one component of
   * the delta is dropped (2 bits beside the track's bit rate; w unless w comes near 0 in
   * that segment), the segment's samples are signed so it is ≥ 0, the other three are
   * quantised and the dropped one is rebuilt as sqrt(1 − a² − b² − c²). With an identity
   * reference and w dropped everywhere this is plain drop-W; the reference (the track's
   * mean rotation) keeps w large, and the per-segment choice keeps the rebuilt component
   * away from 0, where rebuilding loses precision.
   */
  DROP_ONE = 0,
}
/** A {@link ROTATION_FORMAT} value. */
export type RotationFormat = ROTATION_FORMAT;

/** Length unit codes. Serialized: never renumber. */
export const UNIT_CODES = ['mm', 'cm', 'm', 'in', 'ft'] as const;

/** Header byte offsets. Serialized. */
// biome-ignore lint/suspicious/noConstEnum: see the file's comment
export const enum HEADER {
  MAGIC = 0, // u32
  VERSION = 4, // u16
  FLAGS = 6, // u16
  CHECKSUM = 8, // u32
  TOTAL_SIZE = 12, // u32
  BONE_COUNT = 16, // u16
  ROTATION_FORMAT = 18, // u8
  UNIT = 19, // u8
  SAMPLE_COUNT = 20, // u32
  SAMPLE_RATE = 24, // f64
  SEGMENT_COUNT = 32, // u32
  SEGMENT_SIZE = 36, // u16
  ANIMATED_TRACK_COUNT = 38, // u16
  START_TIME = 40, // f64: time of sample 0 on the source's timeline (s)
  DURATION = 48, // f64: the source's duration (s), the host's loop period
  PARENTS_OFFSET = 56, // u32 → i16 × boneCount
  BITSETS_OFFSET = 60, // u32 → default, constant, channel and step bitsets (u32 words each)
  CONSTANTS_OFFSET = 64, // u32 → f32 values of constant tracks
  CLIP_RANGES_OFFSET = 68, // u32 → per animated track: CLIP_RANGE_BYTES[kind]
  ROTATION_REFS_OFFSET = 72, // u32 → i16 x, y, z reference per animated rotation track
  NODE_INDICES_OFFSET = 76, // u32 → u32 × boneCount, 0 when absent; the key times (no offset field) follow
  SEGMENTS_OFFSET = 80, // u32 → first segment; segments follow each other, 4-byte aligned
  NAMES_OFFSET = 84, // u32 → names section, 0 when absent
  SIZE = 88,
}

/**
 * The bitsets over tracks, in file order. Serialized: never reorder.
 * - DEFAULT: the track is the identity for the whole clip.
 * - CONSTANT: one stored value for the whole clip.
 * - CHANNEL: the source animates the track (a host binds only these, as it would the source).
 * - STEP: an animated track held from one sample to the next (glTF STEP), never blended.
 */
// biome-ignore lint/suspicious/noConstEnum: see the file's comment
export const enum BITSET {
  DEFAULT = 0,
  CONSTANT = 1,
  CHANNEL = 2,
  STEP = 3,
}
/** Number of bitsets in the bitsets section. */
export const BITSET_COUNT = 4;

/** What fixes the position of every section but the segments and the names. */
export interface LayoutCounts {
  boneCount: number;
  constantFloats: number;
  /** Bytes of all clip ranges (CLIP_RANGE_BYTES summed over the animated tracks). */
  clipRangeBytes: number;
  animatedRotations: number;
  hasNodeIndices: boolean;
  /** Samples of the key-times section (f32 each), 0 when absent. */
  keyTimes: number;
  /** The additive record is present. */
  additive: boolean;
}

/** Byte offsets of the fixed sections; writer and reader both place sections with this. */
export interface SectionLayout {
  parents: number;
  bitsets: number;
  constants: number;
  clipRanges: number;
  rotationRefs: number;
  /** 0 when the clip has no node indices. */
  nodeIndices: number;
  /** 0 when the clip has no key times. */
  keyTimes: number;
  /** 0 when the clip is not additive. */
  additive: number;
  segments: number;
}

/** The single definition of where each section sits, given the counts. */
export function sectionLayout(c: LayoutCounts): SectionLayout {
  const parents = HEADER.SIZE;
  const bitsets = align4(parents + 2 * c.boneCount);
  const constants = bitsets + 4 * BITSET_COUNT * bitsetWords(c.boneCount * TRACKS_PER_BONE);
  const clipRanges = constants + 4 * c.constantFloats;
  const rotationRefs = clipRanges + c.clipRangeBytes;
  const refsEnd = align4(rotationRefs + ROTATION_REF_BYTES * c.animatedRotations);
  const nodeIndices = c.hasNodeIndices ? refsEnd : 0;
  const indicesEnd = c.hasNodeIndices ? refsEnd + 4 * c.boneCount : refsEnd;
  const keyTimes = c.keyTimes > 0 ? indicesEnd : 0;
  const timesEnd = indicesEnd + 4 * c.keyTimes;
  const additive = c.additive ? timesEnd : 0;
  const segments = timesEnd + (c.additive ? ADDITIVE.BYTES : 0);
  return { parents, bitsets, constants, clipRanges, rotationRefs, nodeIndices, keyTimes, additive, segments };
}

/** Where each track kind starts inside a bone's 10 pose floats: rotation 0, translation 4, scale 7. */
export const KIND_POSE_OFFSET = [0, 4, 7] as const;

/** The checksum covers everything after the checksum field. */
export const CHECKSUM_START = HEADER.TOTAL_SIZE;

/** Sections start on this byte alignment so typed-array views need no copy. */
export const SECTION_ALIGN = 4;

/** Samples per segment; a tail shorter than half a segment joins the previous one. */
export const SEGMENT_SIZE = 16;

/** Track kinds inside a bone; track index = bone × 3 + kind. Serialized. */
// biome-ignore lint/suspicious/noConstEnum: see the file's comment
export const enum TRACK_KIND {
  ROTATION = 0,
  TRANSLATION = 1,
  SCALE = 2,
}
/** Tracks per bone. */
export const TRACKS_PER_BONE = 3;
/** Quantised components per animated track and key (rotations drop one). */
export const ANIMATED_COMPONENTS = 3;
/** Clip-range components of an animated track: rotations keep a range for each of x, y, z, w. */
export const RANGE_COMPONENTS = [4, 3, 3] as const;
/**
 * Bytes of an animated track's clip range: rotations (components in [−1, 1]) as u16 min
 * and extent codes per component (value = code / 32767 − 1, extent = code / 32767);
 * translations and scales as f32 min and extent per component.
 */
export const CLIP_RANGE_BYTES = [16, 24, 24] as const;
/** Fixed-point scale of rotation clip ranges and references. */
export const ROTATION_CODE_SCALE = 32767;
/** Bytes of a rotation reference: i16 x, y, z (value = code / 32767); w ≥ 0 is rebuilt. */
export const ROTATION_REF_BYTES = 6;
/**
 * A segment's rate byte: the track's rate in the low 6 bits (0: constant in the segment,
 * 32: raw float32, else the bits of its widest component; the others get the fewest bits
 * whose step is no coarser — see `componentBits` in bits.ts)…
 */
export const RATE_MASK = 0x3f;
/** …and, for rotation tracks, the dropped component (0 x, 1 y, 2 z, 3 w) in the top 2 bits. */
export const DROP_SHIFT = 6;
/** Bytes per animated track in a segment's range block: (u8 min, u8 extent) × 3, or u16 × 3 at rate 0. */
export const SEGMENT_RANGE_BYTES = 6;
/** Floats per constant track: rotation xyzw, translation/scale xyz. */
export const CONSTANT_FLOATS = [4, 3, 3] as const;

/** Bit rates a segment may use per component; {@link RAW_BITS} stores the float32 itself. */
export const MAX_QUANTIZED_BITS = 24;
/** A rate of 32 bits means the component is the raw float32 bit pattern. */
export const RAW_BITS = 32;
/** True for a valid per-track bit rate: 0..24, or 32. */
export function isValidBitRate(bits: number): boolean {
  return (bits >= 0 && bits <= MAX_QUANTIZED_BITS) || bits === RAW_BITS;
}

/** Largest file in bytes: bit offsets must fit in an int32 for the decoder's arithmetic. */
export const MAX_FILE_BYTES = 1 << 28;

/** Bones per file at most (u16 counts, i16 parents), src/shared/pose-layout.ts. */
export { MAX_BONES } from '../shared/pose-layout.js';

/**
 * Most bone samples (bones × samples) a clip may declare, 2^26 (2.7 GB as raw float32
 * poses). A clip whose tracks are all constant stores nothing per sample, so without this
 * bound a 100-byte file could ask a tool to decode billions of poses.
 */
export const MAX_BONE_SAMPLES = 1 << 26;

/** Rounds `n` up to a multiple of {@link SECTION_ALIGN}. */
export function align4(n: number): number {
  return (n + 3) & ~3;
}

/** Number of segments for `sampleCount` samples. */
export function segmentCountFor(sampleCount: number): number {
  if (sampleCount <= SEGMENT_SIZE) return 1;
  const full = Math.floor(sampleCount / SEGMENT_SIZE);
  const tail = sampleCount - full * SEGMENT_SIZE;
  return tail >= SEGMENT_SIZE / 2 ? full + 1 : full;
}

/** Samples in segment `segment` of `segmentCount` (the last one takes the tail). */
export function segmentSampleCount(segment: number, segmentCount: number, sampleCount: number): number {
  return segment === segmentCount - 1 ? sampleCount - segment * SEGMENT_SIZE : SEGMENT_SIZE;
}

/** Words in one bitset over `trackCount` tracks. */
export function bitsetWords(trackCount: number): number {
  return (trackCount + 31) >>> 5;
}

/** CRC-32 (IEEE 802.3, reflected) of `bytes[start, end)`. */
export function crc32(bytes: Uint8Array, start = 0, end = bytes.length): number {
  // The loop has a function of its own: compiled mid-loop (on-stack replacement), the code
  // after it would run without type feedback and deoptimise on every call.
  return ~crc32Loop(bytes, start, end) >>> 0;
}

function crc32Loop(bytes: Uint8Array, start: number, end: number): number {
  let c = ~0;
  for (let i = start; i < end; i++) c = CRC_TABLE[(c ^ bytes[i]) & 0xff] ^ (c >>> 8);
  return c;
}

const CRC_TABLE = (() => {
  const t = new Int32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c;
  }
  return t;
})();
