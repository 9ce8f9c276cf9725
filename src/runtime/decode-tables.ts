/**
 * The decode tables a CompressedClip derives at open time: one buffer laid out in
 * the order a pose decode reads it, shared by every ClipSampler of the clip.
 */
import { ANIMATED_COMPONENTS, DROP_SHIFT, RATE_MASK, RAW_BITS, SEGMENT_RANGE_BYTES, TRACK_KIND } from './format.js';
import { segmentConstant, segmentOffset, segmentStep } from './bits.js';
import {
  KERNEL_CLIP,
  KERNEL_LANES,
  KERNEL_MAX_POSE_FLOATS,
  KERNEL_MAX_ROTATIONS,
  KERNEL_QUAD,
  KERNEL_SINK,
  KERNEL_STAGING,
  KERNEL_WINDOW_BYTES,
  LANE_MAX_BITS,
  TABLE,
} from './decode-layout.js';
import type { KernelDecode, KernelPlace } from './wasm-kernel.js';
import type { AnimatedTracks, Segments } from './clip-reader.js';
import { identityFloat } from '../shared/pose-layout.js';

/**
 * The decode tables derived at open time, read by ClipSampler. Immutable after
 * CompressedClip.open. Internal: the layout may change without notice.
 *
 * Everything a pose decode reads sits in one buffer (records: decode-layout.ts's TABLE): the base pose and
 * the rotation references; the clip's kernel record, pose windows and
 * quad table (decode-layout.ts), together; then per segment a header record, one 32-byte
 * record per animated track (the track's pose offset, kind and step flag, its components'
 * bits and dropped component, the dequantisation offset and step of each stored
 * component). The TypeScript decoder reads the packed keys from the file's own bytes, so
 * the tables hold no second copy of them. Where the kernel decodes, the file itself is
 * copied into the kernel memory after the tables (the clip keeps that copy, not the
 * caller's bytes) and the kernel reads the packed keys there, each field at its bit; the
 * segments lie at a fixed stride (see buildTables), and the rotations' records are
 * replaced by lane rows, four rotations to a row (see laneLayout; only the kernel reads such
 * segments). A kernel pose therefore reads the clip's few lines, one segment's run (two
 * when its keys straddle segments) and its keys, and prepares nothing per segment, so a
 * clip that no cache or TLB holds costs few misses.
 */
export interface ClipTables {
  /** Float32 view of the decode buffer. */
  readonly f32: Float32Array;
  /** Int32 view of the same buffer. */
  readonly i32: Int32Array;
  /** Index of the first rotation reference (xyzw per animated rotation, in track order) in a float64 view of the buffer. */
  readonly refsAt: number;
  /** i32 index of segment 0's header record (compact tables: of the sampler's first slot). */
  readonly segAt: number;
  /**
   * i32 words of a segment's header record and its records, one per animated track: where
   * TypeScript decodes, segment s's header is at segAt + s · segStride (the kernel's
   * segments may lie at a longer stride: see `kernel`).
   */
  readonly segStride: number;
  /** The base pose as its own view, at f32[0..basePose.length): identity for default tracks, stored values for constant ones. */
  readonly basePose: Float32Array;
  /** The animated tracks (clip-reader.ts): their count and rotations, each one's pose offset, kind and STEP flag. */
  readonly animated: Pick<AnimatedTracks, 'count' | 'poseOffset' | 'kind' | 'step' | 'rotations'>;
  /** Byte offset of each segment's rate bytes in the file. */
  readonly segRates: Uint32Array;
  /**
   * Set when the clip was opened with compact tables: the buffer holds the base pose and
   * the references only, and each sampler builds the records of the segments it reads
   * from these sources into slots of its own (see {@link writeSegmentRecords}); packed keys
   * are read from the file's own words.
   */
  readonly compact?: TableSources;
  /**
   * Set when the buffer was placed in a WebAssembly kernel's memory (wasm-kernel.ts): the
   * kernel's decode, the byte address of the clip's KERNEL_CLIP record in that
   * memory, and a view of the memory's staging pose as long as the clip's pose, where the
   * kernel writes it.
   */
  readonly kernel?: {
    readonly decode: KernelDecode;
    readonly clipAt: number;
    readonly pose: Float32Array;
    /**
     * Where the kernel's segments are (see buildTables): segment s's header at byte
     * `segments + s · segmentBytes` of the memory (i32 index `segAt + s · segmentBytes / 4`
     * of the tables), holding the byte address of the segment's packed keys in the file's
     * copy and its bits per key; the last segment, `lastSegment`, holds the keys past it.
     */
    readonly segments: number;
    readonly segmentBytes: number;
    readonly lastSegment: number;
    /** The file's copy in the kernel memory, which the clip keeps instead of the caller's bytes. */
    readonly file: Uint8Array;
    /** Where the clip is in the kernel memory (crowd.ts runs the world pass there), and the byte address of its parents (an i32 per bone) in that memory. */
    readonly place: KernelPlace;
    readonly parentsAt: number;
  };
}

/** The validated sections {@link buildTables} lays out (clip-reader.ts). */
export interface TableSources {
  readonly bytes: Uint8Array;
  readonly animated: AnimatedTracks;
  readonly segments: Segments;
  /** Parent index of every bone (-1 for roots). */
  readonly parents: Int32Array;
}

/**
 * Lays out the decode buffer (see {@link ClipTables}) from the validated sections: each
 * segment's dequantisation offsets and steps are computed here once, with the arithmetic
 * of bits.ts, so sampling prepares nothing. Memory is linear in the file size. With
 * `compact`, only the base pose and the references are laid out (see
 * {@link ClipTables.compact}).
 */
export function buildTables(
  src: TableSources,
  compact = false,
  place?: (bytes: number) => KernelPlace | undefined,
): ClipTables {
  const { bytes, parents, animated: tracks } = src;
  const { basePose, refs, rotations } = tracks;
  const { rates: segRates, data: segData, widestKey } = src.segments;
  const animated = tracks.count;
  const segments = compact ? 0 : segRates.length;
  const poseFloats = basePose.length;
  const refsAt = Math.ceil(poseFloats / 2); // float64 references need an 8-byte aligned start
  const refsEnd = 2 * (refsAt + 4 * rotations);
  const recordsWords = TABLE.RECORD * (1 + animated);
  // A clip with nothing animated has nothing for the kernel to do; one with more rotations
  // or pose floats than the kernel's scratch and staging pose hold decodes in TypeScript.
  const forKernel =
    segments > 0 && place !== undefined && rotations <= KERNEL_MAX_ROTATIONS && poseFloats <= KERNEL_MAX_POSE_FLOATS;
  // After the base pose and references, where the kernel decodes: the clip's kernel record,
  // its pose windows, quad table and the parents; then the segments, at a fixed stride.
  // Compact tables: the base pose and references, then (in each sampler's copy) two slots
  // of records.
  const windows = forKernel ? poseWindows(src) : [];
  const clipAt = 4 * Math.ceil(refsEnd / 4);
  const windowsAt = clipAt + KERNEL_CLIP.WORDS;
  const quadsAt = windowsAt + 4 * Math.ceil(((KERNEL_WINDOW_BYTES / 4) * windows.length) / 4);
  const quadWords = (KERNEL_QUAD.BYTES / 4) * Math.ceil(rotations / 4);
  // The parents, for the kernel's object-space pass: after the clip's run, which a cold
  // decode loads whole.
  const parentsAt = quadsAt + quadWords;
  const segAt = Math.ceil((forKernel ? parentsAt + parents.length : refsEnd) / TABLE.RECORD) * TABLE.RECORD;
  // Where the kernel decodes, its segments are laid out for its lane pass when they can be
  // (see laneLayout).
  const lanes = forKernel ? laneLayout(src.segments, animated, rotations) : undefined;
  // Segment headers lie at a fixed stride (see ClipTables.kernel): a segment's header and
  // records (or lane layout) on 32-byte boundaries, so the sampler computes a segment's
  // header from its index alone (and passes the kernel where key 1 is and key 0's first bit
  // in the address's low five bits, KERNEL_KEY1).
  const stride = Math.ceil((lanes ? lanes.headWords : recordsWords) / TABLE.RECORD) * TABLE.RECORD;
  const bytesLength = 8 * Math.ceil((segAt + segments * stride) / 2);
  // The file's copy after the tables, on a line of its own, and eight zero bytes after it for
  // the kernel's reads of eight bytes from a field's first byte.
  const fileAt = 64 * Math.ceil(bytesLength / 64);
  const kernelPlace = forKernel ? place(fileAt + bytes.byteLength + 8) : undefined;
  // Without a kernel memory after all, the clip decodes in TypeScript, laid out for it.
  if (forKernel && kernelPlace === undefined) return buildTables(src);
  const buffer = kernelPlace ? kernelPlace.memory.buffer : new ArrayBuffer(bytesLength);
  const at = kernelPlace ? kernelPlace.byteOffset : 0;
  const f32 = new Float32Array(buffer, at, bytesLength >>> 2),
    i32 = new Int32Array(buffer, at, bytesLength >>> 2);
  f32.set(basePose);
  new Float64Array(buffer, at, bytesLength >>> 3).set(refs, refsAt);
  // The TypeScript decoder reads packed keys in the file's words (open() keeps the bytes
  // 4-aligned: packed keys start on words); the kernel reads them in its copy, by byte address.
  const file = kernelPlace ? new Uint8Array(buffer, at + fileAt, bytes.byteLength) : bytes;
  if (kernelPlace) file.set(bytes);
  for (let s = 0; s < segments; s++) {
    const keysAt = kernelPlace ? file.byteOffset + segData[s] : segData[s] >>> 2;
    writeSegmentRecords(src, s, i32, f32, segAt + s * stride, keysAt, lanes);
  }
  let kernel: ClipTables['kernel'];
  if (kernelPlace) {
    // Where the segments start, and the bytes of a segment's header and records.
    const segmentsAt = at + 4 * segAt,
      headBytes = 4 * (lanes ? lanes.headWords : recordsWords);
    // The bytes a key's fields span from its first byte, however its first bit falls.
    i32[clipAt + KERNEL_CLIP.KEY_BYTES] = Math.ceil((widestKey + 7) / 8);
    i32[clipAt + KERNEL_CLIP.SEGMENTS] = segmentsAt;
    i32[clipAt + KERNEL_CLIP.SEGMENT_BYTES] = 4 * stride;
    i32[clipAt + KERNEL_CLIP.QUADS] = at + 4 * quadsAt;
    i32[clipAt + KERNEL_CLIP.WINDOWS] = at + 4 * windowsAt;
    i32[clipAt + KERNEL_CLIP.RECORDS_BYTES] = headBytes;
    i32[clipAt + KERNEL_CLIP.COUNT] = lanes ? animated - rotations : animated;
    i32[clipAt + KERNEL_CLIP.LANE_ROTATIONS] = lanes ? rotations : 0;
    i32[clipAt + KERNEL_CLIP.LANE_ROWS] = lanes ? 4 * lanes.rowsWord : 0;
    i32[clipAt + KERNEL_CLIP.STEPS] = writeQuadTable(src, i32, f32, quadsAt) ? 1 : 0;
    i32[clipAt + KERNEL_CLIP.CLIP_BYTES] = 4 * (quadsAt + quadWords - clipAt);
    i32[clipAt + KERNEL_CLIP.POSE_BYTES] = 4 * poseFloats;
    i32[clipAt + KERNEL_CLIP.WINDOW_COUNT] = windows.length;
    windows.forEach((first, w) => {
      const word = windowsAt + (KERNEL_WINDOW_BYTES / 4) * w;
      i32[word] = KERNEL_STAGING + 4 * first;
      // A window at the pose's end holds zeros past it.
      for (let i = 0; i < 4; i++) f32[word + 1 + i] = first + i < poseFloats ? basePose[first + i] : 0;
    });
    i32.set(parents, parentsAt);
    kernel = {
      decode: kernelPlace.decode,
      clipAt: at + 4 * clipAt,
      pose: kernelPlace.view(KERNEL_STAGING, poseFloats),
      segments: segmentsAt,
      segmentBytes: 4 * stride,
      lastSegment: segments - 1,
      file,
      place: kernelPlace,
      parentsAt: at + 4 * parentsAt,
    };
  }
  return {
    f32,
    i32,
    refsAt,
    segAt,
    segStride: recordsWords,
    basePose: f32.subarray(0, poseFloats),
    // The tracks' list, without the reader's base pose, clip ranges and references (laid out above).
    animated: { count: animated, poseOffset: tracks.poseOffset, kind: tracks.kind, step: tracks.step, rotations },
    segRates,
    compact: compact ? src : undefined,
    kernel,
  };
}

/**
 * The first pose float of each of the clip's kernel windows (see KERNEL_CLIP): four
 * floats from each, taken from the base pose, cover every float that no animated track
 * writes and that is not identity.
 */
function poseWindows(src: TableSources): number[] {
  const { basePose, kind: animKind, poseOffset: animBoneOffset } = src.animated;
  const animatedFloat = new Uint8Array(basePose.length);
  for (let j = 0; j < animKind.length; j++)
    animatedFloat.fill(1, animBoneOffset[j], animBoneOffset[j] + (animKind[j] === TRACK_KIND.ROTATION ? 4 : 3));
  const firsts: number[] = [];
  for (let i = 0; i < basePose.length; ) {
    // Object.is: a constant −0 is not identity's 0.
    if (animatedFloat[i] === 0 && !Object.is(basePose[i], identityFloat(i))) {
      firsts.push(i);
      i += 4;
    } else i++;
  }
  return firsts;
}

/**
 * Writes the kernel's quad table (see KERNEL_QUAD) into `view`: rotation i's
 * reference, STEP mask and staging pose address in lane i & 3 of row i >> 2; the last row's
 * lanes past the last rotation keep zeros and write to KERNEL_SINK. Returns whether
 * a rotation is a STEP track.
 */
function writeQuadTable(src: TableSources, i32: Int32Array, f32: Float32Array, at: number): boolean {
  const { kind: animKind, poseOffset: animBoneOffset, step: animStep, refs } = src.animated;
  // Row i >> 2's words from `at`, and lane i & 3's word in each of its vectors.
  const row = (i: number): number => at + (KERNEL_QUAD.BYTES / 4) * (i >> 2) + (i & 3);
  let i = 0,
    steps = false;
  for (let j = 0; j < animKind.length; j++) {
    if (animKind[j] !== TRACK_KIND.ROTATION) continue;
    for (let c = 0; c < 4; c++) f32[row(i) + KERNEL_QUAD.REFS / 4 + 4 * c] = refs[4 * i + c];
    i32[row(i) + KERNEL_QUAD.STEP / 4] = animStep[j] ? -1 : 0;
    if (animStep[j]) steps = true;
    i32[row(i) + KERNEL_QUAD.POSE / 4] = KERNEL_STAGING + 4 * animBoneOffset[j];
    i++;
  }
  for (; i & 3; i++) i32[row(i) + KERNEL_QUAD.POSE / 4] = KERNEL_SINK;
  return steps;
}

/** How a kernel clip's segments are laid out for the kernel's lane pass (see {@link laneLayout}). */
interface LaneLayout {
  /** Animated tracks that are not rotations: the first pass's records. */
  readonly others: number;
  /** i32 words from a segment's header to its lane rows, and past them. */
  readonly rowsWord: number;
  readonly headWords: number;
}

/**
 * The lane layout of a clip the kernel decodes, or undefined where a segment stores a
 * rotation's raw floats or one wider than LANE_MAX_BITS, or a key spans more bytes than a
 * lane row's 16-bit byte index.
 * Each segment is then its header, the records of the tracks that are not rotations, their
 * fields' first bits in a key (an i32 each, to a 16-byte boundary), and the rotations' lane
 * rows (KERNEL_LANES, which replace their records).
 */
function laneLayout(segments: Segments, animated: number, rotations: number): LaneLayout | undefined {
  // A raw rotation's components are RAW_BITS wide, wider than LANE_MAX_BITS.
  if (rotations === 0 || Math.ceil(segments.widestKey / 8) > 0xffff || segments.widestRotation > LANE_MAX_BITS)
    return undefined;
  const others = animated - rotations;
  const rowsWord = TABLE.RECORD * (1 + others) + 4 * Math.ceil(others / 4);
  return { others, rowsWord, headWords: rowsWord + (KERNEL_LANES.BYTES / 4) * Math.ceil(rotations / 4) };
}

/**
 * Writes segment `s`'s header record (`keys`: where its packed keys are, the word index in
 * the words the sampler reads them from, or for the kernel their byte address in its
 * memory) and one record per animated track at `head` of `i32`/`f32`; with `lanes`, in its
 * lane layout (see {@link laneLayout}): the header, the other tracks' records and first
 * bits, and rotation i's offsets, steps, fields' bytes, widths, 7 − first bits and dropped
 * component in lane i & 3 of row i >> 2. Lanes past the last rotation keep zeros (they
 * decode to zeros) and drop w.
 */
export function writeSegmentRecords(
  src: TableSources,
  s: number,
  i32: Int32Array,
  f32: Float32Array,
  head: number,
  keys: number,
  lanes?: LaneLayout,
): void {
  const { bytes } = src;
  const { kind: animKind, poseOffset: animBoneOffset, step: animStep, clipRanges } = src.animated;
  const { rates: segRates, keyBits: segKeyBits, compBits } = src.segments;
  const animated = animKind.length;
  // The lane rows' fields, by byte from the segment's header.
  const view = lanes ? new DataView(i32.buffer, i32.byteOffset + 4 * head) : undefined;
  i32[head] = keys;
  i32[head + 1] = segKeyBits[s];
  const rates = segRates[s],
    rng = rates + animated;
  let dropsW = 1,
    bit = 0,
    records = 0,
    rotations = 0;
  for (let j = 0; j < animated; j++) {
    const kind = animKind[j];
    const rb = bytes[rates + j];
    const rate = rb & RATE_MASK;
    const drop = kind === TRACK_KIND.ROTATION ? rb >>> DROP_SHIFT : 3;
    if (drop !== 3) dropsW = 0;
    const cb = (s * animated + j) * ANIMATED_COMPONENTS;
    // Byte of the track's lane row from the header, or -1 for a record.
    const row = lanes && kind === TRACK_KIND.ROTATION ? 4 * lanes.rowsWord + KERNEL_LANES.BYTES * (rotations >> 2) : -1;
    const lane = rotations & 3;
    const at = head + TABLE.RECORD * (1 + records);
    if (row < 0) {
      let meta = animBoneOffset[j] | (kind << TABLE.KIND_SHIFT) | (animStep[j] ? TABLE.STEP : 0);
      if (rate === RAW_BITS) meta |= TABLE.RAW;
      i32[at] = meta;
      i32[at + 1] =
        compBits[cb] |
        (compBits[cb + 1] << 8) |
        (compBits[cb + 2] << 16) |
        ((kind === TRACK_KIND.ROTATION ? drop : 0) << 24);
      if (lanes) i32[head + TABLE.RECORD * (1 + lanes.others) + records] = bit;
      records++;
    } else if (view) {
      view.setUint8(row + KERNEL_LANES.DROP + lane, drop);
      rotations++;
    }
    const ro = 8 * j;
    const rangeAt = rng + j * SEGMENT_RANGE_BYTES;
    for (let c = 0; c < ANIMATED_COMPONENTS && rate !== RAW_BITS; c++) {
      // Stored slot c holds component c, or c + 1 at and after the dropped one.
      const r = ro + 2 * (c < drop ? c : c + 1);
      // Constant in the segment (rate 0): 0 bits, step 0, value = offset + 0 · 0 (as the writer's arithmetic).
      const offset =
        rate === 0
          ? segmentConstant(
              clipRanges[r],
              clipRanges[r + 1],
              bytes[rangeAt + 2 * c] | (bytes[rangeAt + 2 * c + 1] << 8),
            )
          : segmentOffset(clipRanges[r], clipRanges[r + 1], bytes[rangeAt + 2 * c]);
      const step = rate === 0 ? 0 : segmentStep(clipRanges[r + 1], bytes[rangeAt + 2 * c + 1], compBits[cb + c]);
      if (row < 0) {
        f32[at + 2 + 2 * c] = offset;
        f32[at + 3 + 2 * c] = step;
      } else if (view) {
        const part = row + KERNEL_LANES.COMPONENT * c;
        view.setFloat32(part + KERNEL_LANES.OFFSET + 4 * lane, offset, true);
        view.setFloat32(part + KERNEL_LANES.STEP + 4 * lane, step, true);
        view.setUint16(part + KERNEL_LANES.BYTE + 2 * lane, bit >>> 3, true);
        view.setUint8(part + KERNEL_LANES.WIDTH + lane, compBits[cb + c]);
        view.setUint8(part + KERNEL_LANES.WIDTH + 4 + lane, 128 >> (bit & 7));
        bit += compBits[cb + c];
      }
    }
    if (row < 0) bit += compBits[cb] + compBits[cb + 1] + compBits[cb + 2];
  }
  for (; view && lanes && rotations & 3; rotations++)
    view.setUint8(4 * lanes.rowsWord + KERNEL_LANES.BYTES * (rotations >> 2) + KERNEL_LANES.DROP + (rotations & 3), 3);
  i32[head + 2] = dropsW;
}
