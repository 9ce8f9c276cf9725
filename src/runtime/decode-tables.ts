/**
 * The decode tables a {@link CompressedClip} derives at open time: one buffer laid out in
 * the order a pose decode reads it, shared by every {@link ClipSampler} of the clip.
 */
import { ANIMATED_COMPONENTS, DROP_SHIFT, RATE_MASK, RAW_BITS, SEGMENT_RANGE_BYTES, TRACK_KIND } from './format.js';
import { segmentConstant, segmentOffset, segmentStep } from './bits.js';
import type { CompressedClip } from './compressed-clip.js';
import type { ClipSampler } from './sampler.js';
import { KERNEL_CLIP, KERNEL_MAX_ROTATIONS, KERNEL_QUAD, KERNEL_SINK, WINDOW_BITS, type KernelDecode, type KernelPlace } from './wasm-kernel.js';

/**
 * The decode tables derived at open time, read by {@link ClipSampler}. Immutable after
 * {@link CompressedClip.open}. Internal: the layout may change without notice.
 *
 * Everything a pose decode reads sits in one buffer, in the order the decode reads it
 * (see {@link TABLE}): the base pose, the rotation references, then per segment a header
 * record and one 32-byte record per animated track (the track's pose offset, kind and
 * step flag, its components' bits and dropped component, the dequantisation offset and
 * step of each stored component), and last the packed keys of every segment, copied from
 * the file. A pose therefore reads three sequential runs of one buffer and prepares
 * nothing per segment, so a clip that no cache holds costs few misses.
 */
export interface ClipTables {
  /** Float32 view of the decode buffer. */
  readonly f32: Float32Array;
  /** Int32 view of the same buffer. */
  readonly i32: Int32Array;
  /** Uint32 view of the same buffer (packed keys). */
  readonly u32: Uint32Array;
  /** Float64 view of the same buffer. */
  readonly f64: Float64Array;
  /** Floats of the base pose, at f32[0..poseFloats): identity for default tracks, stored values for constant ones. */
  readonly poseFloats: number;
  /** f64 index of the first rotation reference (xyzw per animated rotation, in track order). */
  readonly refsAt: number;
  /** i32 index of segment 0's header record. */
  readonly segAt: number;
  /** i32 words per segment: a header record and one record per animated track. */
  readonly segStride: number;
  /** The base pose as its own view. */
  readonly basePose: Float32Array;
  /** Pose float offset of each animated track. */
  readonly animBoneOffset: Int32Array;
  readonly animKind: Uint8Array;
  /** 1 for an animated track held between samples (STEP). */
  readonly animStep: Uint8Array;
  /** Track → animated index, or -1. */
  readonly animTrackOfTrack: Int32Array;
  /** Byte offset of each segment's rate bytes in the file. */
  readonly segRates: Uint32Array;
  /**
   * Set when the clip was opened with compact tables: the buffer holds the base pose and
   * the references only, and each sampler builds the records of the segments it reads
   * from these sources into slots of its own (see {@link writeSegmentRecords}); packed keys
   * are read from the file's own words.
   */
  readonly compact?: { readonly src: TableSources; readonly words: Uint32Array };
  /**
   * Set when the buffer was placed in a WebAssembly kernel's memory (wasm-kernel.ts): the
   * kernel's decode, the byte address of the clip's {@link KERNEL_CLIP} record in that
   * memory, and the clip's kernel pose there, holding the base pose, into which the kernel
   * writes the animated tracks.
   */
  readonly kernel?: { readonly decode: KernelDecode; readonly clipAt: number; readonly pose: Float32Array };
}

/**
 * The decode buffer's records, in 32-bit words. A track record is
 * [meta, bits, offset0, step0, offset1, step1, offset2, step2]: `meta` holds the pose
 * offset (low {@link TABLE.POSE_BITS} bits), the kind, the STEP flag, whether the
 * components are raw floats, and WINDOW for a quantised track whose three fields fit one
 * 64-bit read ({@link WINDOW_BITS}); `bits` holds the bits of the three stored components (a byte
 * each) and the dropped component (top byte); a segment constant (rate 0) has 0 bits and
 * step 0. A segment header record is [u32 index of its packed keys, bits per key, 1 when
 * every animated rotation of the segment drops w (else 0), 0 × 5]; each segment's packed
 * keys are followed by one zero word and the buffer ends with one more, so a read of two
 * words never leaves the buffer.
 */
export const TABLE = {
  RECORD: 8,
  POSE_BITS: 20,
  POSE_MASK: 0xfffff,
  KIND_SHIFT: 20,
  STEP: 1 << 22,
  RAW: 1 << 24,
  WINDOW: 1 << 25,
} as const;

/** The validated sections {@link buildTables} lays out. */
export interface TableSources {
  readonly bytes: Uint8Array;
  readonly basePose: Float32Array;
  readonly animKind: Uint8Array;
  readonly animBoneOffset: Int32Array;
  readonly animStep: Uint8Array;
  readonly animTrackOfTrack: Int32Array;
  /** Per animated track: (min, extent) per range component, from animRange. */
  readonly clipRanges: Float64Array;
  readonly animRange: Int32Array;
  /** Per animated track: reference quaternion xyzw at 4 × track. */
  readonly refs: Float64Array;
  readonly segRates: Uint32Array;
  readonly segRanges: Uint32Array;
  /** Byte offset of each segment's packed keys. */
  readonly segData: Uint32Array;
  readonly segKeyBits: Uint32Array;
  /** Samples of each segment. */
  readonly segKeys: Uint32Array;
  /** Bits of each (segment, animated track, stored component). */
  readonly compBits: Uint8Array;
}

/**
 * Lays out the decode buffer (see {@link ClipTables}) from the validated sections: each
 * segment's dequantisation offsets and steps are computed here once, with the arithmetic
 * of bits.ts, so sampling prepares nothing. Memory is linear in the file size. With
 * `compact`, only the base pose and the references are laid out (see
 * {@link ClipTables.compact}).
 */
export function buildTables(src: TableSources, compact = false, place?: (bytes: number) => KernelPlace | undefined): ClipTables {
  const { bytes, basePose, animKind, animBoneOffset, animStep, refs, segRates, segData, segKeyBits, segKeys } = src;
  const animated = animKind.length;
  const segments = compact ? 0 : segRates.length;
  let rotations = 0;
  for (let j = 0; j < animated; j++) if (animKind[j] === TRACK_KIND.ROTATION) rotations++;
  const poseFloats = basePose.length;
  // Float64 references need an 8-byte aligned start; records start on a 32-byte boundary.
  const refsAt = Math.ceil(poseFloats / 2);
  const segAt = Math.ceil((2 * (refsAt + 4 * rotations)) / TABLE.RECORD) * TABLE.RECORD;
  const segStride = TABLE.RECORD * (1 + animated);
  const dataAt = segAt + segments * segStride;
  let dataWords = 0;
  for (let s = 0; s < segments; s++) dataWords += Math.ceil((segKeys[s] * segKeyBits[s]) / 32) + 1;
  // One more zero word at the end: the last segment's pad word may be read as a field's first word.
  const bytesLength = 8 * Math.ceil((dataAt + dataWords + 1) / 2);
  // In a kernel's memory the clip's own pose, its kernel record and its quad table follow
  // the tables (a clip with nothing animated has nothing for the kernel to do; one with more
  // rotations than the kernel's scratch holds decodes in TypeScript).
  const poseBytes = 16 * Math.ceil(poseFloats / 4);
  const quadsBytes = KERNEL_QUAD.BYTES * Math.ceil(rotations / 4);
  const kernelPlace = compact || animated === 0 || segments === 0 || rotations > KERNEL_MAX_ROTATIONS
    ? undefined
    : place?.(16 * Math.ceil(bytesLength / 16) + poseBytes + 16 * Math.ceil(KERNEL_CLIP.WORDS / 4) + quadsBytes);
  const buffer = kernelPlace ? kernelPlace.buffer : new ArrayBuffer(bytesLength);
  const at = kernelPlace ? kernelPlace.byteOffset : 0;
  const f32 = new Float32Array(buffer, at, bytesLength >>> 2), i32 = new Int32Array(buffer, at, bytesLength >>> 2);
  const u32 = new Uint32Array(buffer, at, bytesLength >>> 2), f64 = new Float64Array(buffer, at, bytesLength >>> 3);
  f32.set(basePose);
  let kernel: ClipTables['kernel'];
  if (kernelPlace) {
    // Every part 16-byte aligned (places are).
    const poseAt = at + 16 * Math.ceil(bytesLength / 16);
    const pose = new Float32Array(buffer, poseAt, poseFloats);
    pose.set(basePose);
    const clipAt = poseAt + poseBytes;
    const quadsAt = clipAt + 16 * Math.ceil(KERNEL_CLIP.WORDS / 4);
    const record = new Int32Array(buffer, clipAt, KERNEL_CLIP.WORDS);
    record[KERNEL_CLIP.SEGMENTS] = at + 4 * segAt;
    record[KERNEL_CLIP.TABLE] = at;
    record[KERNEL_CLIP.QUADS] = quadsAt;
    record[KERNEL_CLIP.POSE] = poseAt;
    record[KERNEL_CLIP.STRIDE] = 4 * segStride;
    record[KERNEL_CLIP.COUNT] = animated;
    record[KERNEL_CLIP.LAST_SEGMENT] = segments - 1;
    record[KERNEL_CLIP.STEPS] = writeQuadTable(src, new DataView(buffer, quadsAt, quadsBytes), poseAt) ? 1 : 0;
    record[KERNEL_CLIP.QUAD_BYTES] = quadsBytes;
    record[KERNEL_CLIP.POSE_BYTES] = 4 * poseFloats;
    kernel = { decode: kernelPlace.decode, clipAt, pose };
  }
  for (let j = 0, r = refsAt; j < animated; j++) {
    if (animKind[j] !== TRACK_KIND.ROTATION) continue;
    for (let c = 0; c < 4; c++) f64[r + c] = refs[4 * j + c];
    r += 4;
  }
  const u8 = new Uint8Array(buffer, at, bytesLength);
  for (let s = 0, data = dataAt; s < segments; s++) {
    const words = Math.ceil((segKeys[s] * segKeyBits[s]) / 32);
    u8.set(bytes.subarray(segData[s], segData[s] + 4 * words), 4 * data);
    writeSegmentRecords(src, s, i32, f32, segAt + s * segStride, data);
    data += words + 1;
  }
  return {
    f32, i32, u32, f64, poseFloats, refsAt, segAt, segStride,
    basePose: f32.subarray(0, poseFloats), animBoneOffset, animKind, animStep, animTrackOfTrack: src.animTrackOfTrack, segRates,
    ...(compact ? { compact: { src, words: new Uint32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength >>> 2) } } : {}),
    ...(kernel ? { kernel } : {}),
  };
}

/**
 * Writes the kernel's quad table (see {@link KERNEL_QUAD}) into `view`, for a kernel pose at
 * byte address `poseAt`: rotation i's reference, STEP mask and pose address in lane i & 3
 * of row i >> 2; the last row's lanes past the last rotation keep zeros and write to
 * {@link KERNEL_SINK}. Returns whether a rotation is a STEP track.
 */
function writeQuadTable(src: TableSources, view: DataView, poseAt: number): boolean {
  const { animKind, animBoneOffset, animStep, refs } = src;
  let i = 0, steps = false;
  for (let j = 0; j < animKind.length; j++) {
    if (animKind[j] !== TRACK_KIND.ROTATION) continue;
    const row = KERNEL_QUAD.BYTES * (i >> 2), lane = 4 * (i & 3);
    for (let c = 0; c < 4; c++) view.setFloat32(row + KERNEL_QUAD.REFS + 16 * c + lane, refs[4 * j + c], true);
    view.setInt32(row + KERNEL_QUAD.STEP + lane, animStep[j] ? -1 : 0, true);
    if (animStep[j]) steps = true;
    view.setInt32(row + KERNEL_QUAD.POSE + lane, poseAt + 4 * animBoneOffset[j], true);
    i++;
  }
  for (; i & 3; i++) view.setInt32(KERNEL_QUAD.BYTES * (i >> 2) + KERNEL_QUAD.POSE + 4 * (i & 3), KERNEL_SINK, true);
  return steps;
}

/**
 * Writes segment `s`'s header record (`keyWord`: the word index of its packed keys in the
 * words the sampler reads them from) and one record per animated track at `head` of
 * `i32`/`f32`.
 */
export function writeSegmentRecords(src: TableSources, s: number, i32: Int32Array, f32: Float32Array, head: number, keyWord: number): void {
  const { bytes, animKind, animBoneOffset, animStep, clipRanges, animRange, segRates, segRanges, segKeyBits, compBits } = src;
  const animated = animKind.length;
  i32[head] = keyWord;
  i32[head + 1] = segKeyBits[s];
  const rates = segRates[s], rng = segRanges[s];
  let dropsW = 1;
  for (let j = 0; j < animated; j++) {
    const at = head + TABLE.RECORD * (1 + j);
    const kind = animKind[j];
    const rb = bytes[rates + j];
    const rate = rb & RATE_MASK;
    const drop = kind === TRACK_KIND.ROTATION ? rb >>> DROP_SHIFT : 3;
    if (drop !== 3) dropsW = 0;
    const cb = (s * animated + j) * ANIMATED_COMPONENTS;
    let meta = animBoneOffset[j] | (kind << TABLE.KIND_SHIFT) | (animStep[j] ? TABLE.STEP : 0);
    if (rate === RAW_BITS) meta |= TABLE.RAW;
    else if (compBits[cb] + compBits[cb + 1] + compBits[cb + 2] <= WINDOW_BITS) meta |= TABLE.WINDOW;
    i32[at] = meta;
    i32[at + 1] = compBits[cb] | (compBits[cb + 1] << 8) | (compBits[cb + 2] << 16) | ((kind === TRACK_KIND.ROTATION ? drop : 0) << 24);
    if (rate === RAW_BITS) continue;
    const ro = animRange[j];
    const rangeAt = rng + j * SEGMENT_RANGE_BYTES;
    for (let c = 0; c < ANIMATED_COMPONENTS; c++) {
      // Stored slot c holds component c, or c + 1 at and after the dropped one.
      const r = ro + 2 * (c < drop ? c : c + 1);
      if (rate === 0) {
        // Constant in the segment: 0 bits, step 0, value = offset + 0 · 0 (as the writer's arithmetic).
        f32[at + 2 + 2 * c] = segmentConstant(clipRanges[r], clipRanges[r + 1], bytes[rangeAt + 2 * c] | (bytes[rangeAt + 2 * c + 1] << 8));
        f32[at + 3 + 2 * c] = 0;
      } else {
        f32[at + 2 + 2 * c] = segmentOffset(clipRanges[r], clipRanges[r + 1], bytes[rangeAt + 2 * c]);
        f32[at + 3 + 2 * c] = segmentStep(clipRanges[r + 1], bytes[rangeAt + 2 * c + 1], compBits[cb + c]);
      }
    }
  }
  i32[head + 2] = dropsW;
}
