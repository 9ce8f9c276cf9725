/**
 * Per-instance sampling state over a shared {@link CompressedClip}: the key cursor, the
 * dequantisation cache of the segments last touched and the decode scratch. One sampler
 * per character (or mixer action); the clip stays immutable and shared.
 */
import { SEGMENT_SIZE, TRACKS_PER_BONE, TRACK_KIND } from './format.js';
import { FORMAT_ERROR, FormatError } from './errors.js';
import { floatFromBits } from './bits.js';
import { ROTATION_ENTRY, ROTATION_SLOT, decodeRotations, lerp } from './interpolate.js';
import { POSE_STRIDE } from './pose.js';
import type { CompressedClip } from './compressed-clip.js';
import { writeSegmentRecords, type ClipTables } from './decode-tables.js';
import { KERNEL_KEY1, TABLE } from './decode-layout.js';
import type { KernelDecode } from './wasm-kernel.js';
import { keyPosition } from './key-times.js';

/** How a time between two samples is resolved. */
export type Rounding = 'none' | 'floor' | 'ceil' | 'nearest';
/**
 * What happens outside the clip:
 * - `'clamp'`: hold the first pose before {@link CompressedClip.startTime} and the last after the last sample;
 * - `'repeat'`: time repeats with period {@link CompressedClip.duration}, as three.js's `LoopRepeat` does;
 * - `'wrap'`: the samples repeat with period sampleCount / sampleRate from the start time,
 *   interpolating from the last sample back to the first (for cyclic motion capture).
 */
export type Looping = 'clamp' | 'repeat' | 'wrap';

/** Options of {@link ClipSampler.sample}. */
export interface SampleOptions {
  /** Default `'none'`: interpolate between the two nearest samples. */
  rounding?: Rounding;
  /** Default `'clamp'`. */
  looping?: Looping;
}

/** A fraction of a sample this close to a whole sample is that sample. */
const SNAP = 1e-6;
/** log2 of {@link SEGMENT_SIZE}. */
const SEGMENT_SHIFT = Math.log2(SEGMENT_SIZE);
const RECORD = TABLE.RECORD;

/**
 * Samples one {@link CompressedClip}; allocates nothing per call. Its own state is a few
 * numbers (and, where TypeScript decodes, a list of a pose's rotations): the clip's shared
 * tables hold everything else.
 */
export class ClipSampler {
  // Declared in the order a pose decode reads them, the kernel path's first: fields are laid
  // out in declaration order, so a cold decode reads one or two of this object's lines.
  /** The WebAssembly kernel's decode, or undefined (wasm-kernel.ts). */
  private readonly kernel: KernelDecode | undefined;
  /** Byte address of the clip's record in the kernel's memory. */
  private readonly kernelClip: number;
  /**
   * The kernel memory's staging pose, as long as the clip's pose, where the kernel writes it
   * (wasm-kernel.ts): one view shared by the memory's clips of this length, so it is in cache.
   */
  private readonly kernelPose: Float32Array;
  private readonly poseFloats: number;
  private readonly n: number;
  private readonly rate: number;
  private readonly start: number;
  /** The clip's key times, or undefined on a uniform grid (key-times.ts). */
  private readonly times: Float32Array | undefined;
  // Keys found by locate(), whose blend fraction is returned instead: a double kept in a
  // field would be a separate heap number, one more object for a cold decode to reach.
  private k0 = 0;
  private k1 = 0;
  // Where the kernel's segments are (ClipTables.kernel), and the last segment key 0 was in:
  // the byte address of its packed keys and its bits per key, read from its header when key
  // 0 moves to another segment. The sampler computes the addresses of key 0's header and
  // first bit, so the kernel reads no table to find them.
  private readonly kernelSegments: number;
  private readonly kernelSegmentBytes: number;
  private readonly kernelLast: number;
  private kernelSegment = -1;
  private kernelKeys = 0;
  private kernelKeyBits = 0;
  private readonly period: number;
  /** The kernel's object-space pass for this clip, or undefined (decode-tables.ts). */
  private readonly world: NonNullable<ClipTables['kernel']>['world'];
  /** The clip this sampler reads. */
  readonly clip: CompressedClip;
  // The clip's tables and scalars, copied in so a decode reads this object and the clip's
  // buffer only (no chain of objects to miss in a cold cache).
  private readonly i32: Int32Array;
  private readonly f32: Float32Array;
  private readonly u32: Uint32Array;
  private readonly f64: Float64Array;
  private readonly base: Float32Array;
  private readonly t: ClipTables;
  private readonly count: number;
  private readonly segCount: number;
  private readonly refsAt: number;
  private readonly segAt: number;
  private readonly segStride: number;
  private readonly segTable: number;
  /** With compact tables: the segment whose records each of the two slots holds (-1: none). */
  private readonly slotSegment: Int32Array | undefined;
  /**
   * The TypeScript decoder's rotations of a pose, for interpolate.ts's decodeRotations:
   * their keys' components and their list (empty where the kernel decodes).
   */
  private readonly rotationKeys: Float64Array;
  private readonly rotationList: Int32Array;

  /** Prefer {@link CompressedClip.createSampler}. */
  constructor(clip: CompressedClip) {
    this.clip = clip;
    const t = clip.tables;
    this.t = t;
    if (t.compact) {
      // Compact tables: a buffer of its own holding the clip's base pose and references and
      // two segment slots; packed keys come straight from the file.
      const buffer = new ArrayBuffer(8 * Math.ceil((t.segAt + 2 * t.segStride) / 2));
      this.i32 = new Int32Array(buffer);
      this.f32 = new Float32Array(buffer);
      this.f64 = new Float64Array(buffer);
      this.i32.set(t.i32.subarray(0, t.segAt));
      this.u32 = t.compact.words;
      this.slotSegment = Int32Array.of(-1, -1);
    } else {
      this.i32 = t.i32;
      this.f32 = t.f32;
      this.u32 = t.u32;
      this.f64 = t.f64;
    }
    this.base = t.basePose;
    const k = t.compact ? undefined : t.kernel;
    this.kernel = k?.decode;
    this.kernelClip = k ? k.clipAt : 0;
    this.kernelPose = k ? k.pose : t.basePose;
    this.kernelSegments = k ? k.segments : 0;
    this.kernelSegmentBytes = k ? k.segmentBytes : 0;
    this.kernelLast = k ? k.lastSegment : 0;
    this.world = k?.world;
    this.count = clip.animatedTrackCount;
    this.n = clip.sampleCount;
    this.rate = clip.sampleRate;
    this.start = clip.startTime;
    this.times = clip.keyTimes;
    this.period = clip.duration;
    this.segCount = clip.segmentCount;
    this.refsAt = t.refsAt;
    this.segAt = t.segAt;
    this.segStride = t.segStride;
    this.segTable = t.segTable;
    this.poseFloats = t.poseFloats;
    let rotations = 0;
    if (this.kernel === undefined) for (const kind of t.animKind) if (kind === TRACK_KIND.ROTATION) rotations++;
    this.rotationKeys = new Float64Array(ROTATION_SLOT * rotations);
    this.rotationList = new Int32Array(ROTATION_ENTRY * rotations);
  }

  /**
   * Bytes this sampler holds beyond the clip, for memory reports: none where the kernel
   * decodes (its state is a few numbers); where TypeScript does, its list of a pose's
   * rotations (80 bytes a rotation) and, with compact tables, its two segment slots.
   */
  get byteLength(): number {
    const lists = this.rotationKeys.byteLength + this.rotationList.byteLength;
    return this.slotSegment ? lists + this.i32.byteLength + this.slotSegment.byteLength : lists;
  }

  /**
   * Samples every bone at `time` seconds (on the source's timeline, see
   * {@link CompressedClip.startTime}) into `outPose`, {@link POSE_STRIDE} floats per bone
   * (rotation xyzw, translation xyz, scale xyz). Allocates nothing. A NaN time counts as 0.
   * Throws only when `outPose` is too short.
   */
  sample(time: number, outPose: Float32Array, options?: SampleOptions): Float32Array {
    this.sampleInto(time, outPose, 0, options);
    return outPose;
  }

  /**
   * {@link sample} into `out` starting at float `offset` (bone b at offset + b ×
   * {@link POSE_STRIDE}): many characters' poses can share one buffer. Returns the offset
   * just past the pose. Throws only when `out` is too short.
   */
  sampleInto(time: number, out: Float32Array, offset: number, options?: SampleOptions): number {
    const end = offset + this.poseFloats;
    if (!(offset >= 0) || out.length < end)
      throw new FormatError(
        FORMAT_ERROR.BAD_ARGUMENT,
        `out holds ${out.length} floats, needs ${this.poseFloats} from ${offset}`,
      );
    this.pose(out, offset, this.locate(time, options));
    return end;
  }

  /** Decodes the whole pose at (k0, k1, alpha) into `out` at `offset`. */
  private pose(out: Float32Array, offset: number, alpha: number): void {
    if (this.kernel !== undefined) {
      this.kernelDecode(alpha);
      out.set(this.kernelPose, offset);
    } else {
      out.set(this.base, offset);
      this.decode(out, -offset, -1, alpha);
    }
  }

  /**
   * The kernel's decode at (k0, k1, alpha) into its staging pose, or with `world` its
   * object-space pass after it (`rows`: 1 for three rows per bone). Key k lies in segment
   * min(k / SEGMENT_SIZE, last), at a fixed stride of segments (decode-tables.ts); key 1 is
   * k0 itself, the next key (in k0's segment or the next one) or, wrapping, key 0.
   */
  private kernelDecode(alpha: number, world?: ClipSampler['world'], rows = 0): void {
    const k0 = this.k0,
      k1 = this.k1,
      last = this.kernelLast;
    let s0 = k0 >> SEGMENT_SHIFT;
    if (s0 > last) s0 = last;
    const head = this.kernelSegments + s0 * this.kernelSegmentBytes;
    if (s0 !== this.kernelSegment) {
      const at = this.segAt + s0 * (this.kernelSegmentBytes >> 2);
      this.kernelSegment = s0;
      this.kernelKeys = this.i32[at];
      this.kernelKeyBits = this.i32[at + 1];
    }
    const bit = (k0 - (s0 << SEGMENT_SHIFT)) * this.kernelKeyBits;
    const key1 =
      k1 === k0
        ? KERNEL_KEY1.SAME
        : k1 === 0
          ? KERNEL_KEY1.FIRST
          : k1 >> SEGMENT_SHIFT === s0 || s0 === last
            ? KERNEL_KEY1.NEXT
            : KERNEL_KEY1.NEXT_SEGMENT;
    // Key 0's first bit within its first byte in the address's bits 2..4 (KERNEL_KEY1).
    const where = head | ((bit & 7) << 2) | key1,
      key = this.kernelKeys + (bit >>> 3);
    if (world === undefined) this.kernel!(this.kernelClip, where, key, alpha);
    else world.run(this.kernelClip, where, key, alpha, world.parentsAt, world.bones, rows);
  }

  /**
   * For {@link CrowdSampler}: samples at `time` and writes the pose's object-space matrices
   * into `out` at `offset` (three rows of four floats per bone with `rows`, else a
   * column-major 4×4), computed by the kernel's object-space pass right after the decode,
   * in the kernel's memory. Returns false, writing nothing, where this clip has no such
   * pass (it decodes in TypeScript or has too many bones); crowd.ts then walks the pose itself.
   * @internal
   */
  sampleObjectInto(time: number, out: Float32Array, offset: number, rows: boolean, options?: SampleOptions): boolean {
    const world = this.world;
    if (world === undefined) return false;
    const alpha = this.locate(time, options);
    this.kernelDecode(alpha, world, rows ? 1 : 0);
    out.set(rows ? world.rows : world.matrices, offset);
    return true;
  }

  /** Writes sample `keyIndex` (clamped to 0..sampleCount − 1) exactly, without interpolation. */
  sampleKey(keyIndex: number, outPose: Float32Array): Float32Array {
    const base = this.base;
    if (outPose.length < base.length)
      throw new FormatError(FORMAT_ERROR.BAD_ARGUMENT, `outPose holds ${outPose.length} floats, needs ${base.length}`);
    const k = keyIndex > 0 ? Math.min(this.n - 1, Math.floor(keyIndex)) : 0;
    this.k0 = k;
    this.k1 = k;
    this.pose(outPose, 0, 0);
    return outPose;
  }

  /**
   * Decodes the pose a fraction `alpha` (0..1) of the way from sample `keyIndex` to the next
   * one, exactly as {@link sample} does at that time (the compressor measures between
   * samples with this). `keyIndex` is clamped to 0..sampleCount − 2.
   */
  sampleBetween(keyIndex: number, alpha: number, outPose: Float32Array): Float32Array {
    const base = this.base;
    if (outPose.length < base.length)
      throw new FormatError(FORMAT_ERROR.BAD_ARGUMENT, `outPose holds ${outPose.length} floats, needs ${base.length}`);
    const n = this.n;
    const k = keyIndex > 0 ? Math.min(n - 2, Math.floor(keyIndex)) : 0;
    if (n < 2 || !(alpha > 0)) {
      this.k0 = this.k1 = Math.max(0, k);
      alpha = 0;
    } else if (alpha >= 1) {
      this.k0 = this.k1 = k + 1;
      alpha = 0;
    } else {
      this.k0 = k;
      this.k1 = k + 1;
    }
    this.pose(outPose, 0, alpha);
    return outPose;
  }

  /**
   * Samples one bone at `time` into `out[0..9]` (the same 10-float layout as a pose), the
   * floats {@link sample} gives it. The TypeScript decoder decodes that bone alone; the
   * WebAssembly kernel decodes the whole pose and copies the bone out. Throws only on a bad
   * bone index or a short `out`.
   */
  sampleBone(time: number, boneIndex: number, out: Float32Array, options?: SampleOptions): Float32Array {
    if (!(boneIndex >= 0 && boneIndex < this.clip.boneCount) || (boneIndex | 0) !== boneIndex) {
      throw new FormatError(
        FORMAT_ERROR.BAD_ARGUMENT,
        `bone index ${boneIndex} (clip has ${this.clip.boneCount} bones)`,
      );
    }
    if (out.length < POSE_STRIDE)
      throw new FormatError(FORMAT_ERROR.BAD_ARGUMENT, `out holds ${out.length} floats, needs ${POSE_STRIDE}`);
    const alpha = this.locate(time, options);
    const base = boneIndex * POSE_STRIDE;
    if (this.kernel !== undefined) {
      // The kernel's segments may hold no records for rotations (their lane rows instead,
      // kernel.wat): the bone comes from the kernel's whole pose.
      this.kernelDecode(alpha);
      const pose = this.kernelPose;
      for (let i = 0; i < POSE_STRIDE; i++) out[i] = pose[base + i];
      return out;
    }
    const pose = this.base;
    for (let i = 0; i < POSE_STRIDE; i++) out[i] = pose[base + i];
    this.decode(out, base, boneIndex, alpha);
    return out;
  }

  /** Resolves time to keys k0, k1 and returns the blend alpha (0 means k0 alone). */
  private locate(time: number, options: SampleOptions | undefined): number {
    const n = this.n;
    const rate = this.rate;
    const looping = options?.looping;
    let t = time === time ? time : 0;
    let k0: number, k1: number, alpha: number;
    if (n === 1) {
      this.k0 = 0;
      this.k1 = 0;
      return 0;
    }
    if (looping === 'repeat') {
      const period = this.period;
      t = period > 0 ? t % period : 0;
      if (t < 0) t += period;
      if (t !== t) t = 0; // ±Infinity
    }
    const wrap = looping === 'wrap';
    const pos = keyPosition(this.times, this.start, rate, n, t, wrap);
    if (wrap) {
      k0 = Math.floor(pos);
      if (k0 >= n) k0 = n - 1;
      alpha = pos - k0;
      k1 = k0 + 1 === n ? 0 : k0 + 1;
    } else if (!(pos > 0)) {
      k0 = 0;
      k1 = 0;
      alpha = 0;
    } else if (pos >= n - 1) {
      k0 = n - 1;
      k1 = n - 1;
      alpha = 0;
    } else {
      k0 = Math.floor(pos);
      alpha = pos - k0;
      k1 = k0 + 1;
    }
    if (alpha < SNAP) alpha = 0;
    else if (alpha > 1 - SNAP) {
      k0 = k1;
      alpha = 0;
    }
    switch (options?.rounding) {
      case 'floor':
        alpha = 0;
        break;
      case 'ceil':
        if (alpha > 0) {
          k0 = k1;
          alpha = 0;
        }
        break;
      case 'nearest':
        if (alpha >= 0.5) k0 = k1;
        alpha = 0;
        break;
      default:
        break;
    }
    if (alpha === 0) k1 = k0;
    this.k0 = k0;
    this.k1 = k1;
    return alpha;
  }

  /** With compact tables: builds segment `s`'s records in `slot` unless they are there; returns the slot's head. */
  private prepareSlot(s: number, slot: number): number {
    const head = this.segAt + slot * this.segStride;
    const held = this.slotSegment!;
    if (held[slot] !== s) {
      const src = this.t.compact!.src;
      writeSegmentRecords(src, s, this.i32, this.f32, head, src.segData[s] >>> 2);
      held[slot] = s;
    }
    return head;
  }

  /**
   * Decodes the animated tracks at (k0, k1, alpha) into `out`: a track of pose offset o
   * lands at out[o − base]. `onlyBone` ≥ 0 limits the work to that bone. Reads the records
   * of the keys' segments in order, then their packed keys (decode-tables.ts), writes the
   * other tracks and lists the rotations' keys for interpolate.ts's decodeRotations, the
   * arithmetic the compressor measures with.
   */
  private decode(out: Float32Array, base: number, onlyBone: number, alpha: number): void {
    const count = this.count;
    if (count === 0) return;
    const segCount = this.segCount;
    const k0 = this.k0,
      k1 = this.k1;
    const single = k0 === k1;
    let s0 = (k0 / SEGMENT_SIZE) | 0;
    if (s0 >= segCount) s0 = segCount - 1;
    let s1 = (k1 / SEGMENT_SIZE) | 0;
    if (s1 >= segCount) s1 = segCount - 1;
    const i32 = this.i32,
      f32 = this.f32,
      f64 = this.f64,
      u32 = this.u32;
    const keys = this.rotationKeys,
      list = this.rotationList;
    let n = 0;
    let h0: number, h1: number;
    if (this.slotSegment === undefined) {
      h0 = i32[this.segTable - 2 * (s0 + 1)];
      h1 = i32[this.segTable - 2 * (s1 + 1)];
    } else {
      // Two slots, and the keys' segments never share one (wrapping pairs the last with the first).
      h0 = this.prepareSlot(s0, s0 & 1);
      h1 = s1 === s0 ? h0 : this.prepareSlot(s1, (s0 & 1) ^ 1);
    }
    // Packed keys: word index of the segment's first word, and the key's bit inside the segment.
    const d0 = i32[h0],
      d1 = i32[h1];
    let bit0 = (k0 - s0 * SEGMENT_SIZE) * i32[h0 + 1];
    let bit1 = (k1 - s1 * SEGMENT_SIZE) * i32[h1 + 1];
    let ref = this.refsAt;
    let first = 0,
      last = count;
    if (onlyBone >= 0) {
      // Skip to the bone's first animated track, summing the bits of the tracks before it
      // (a track's components need not share its rate) and counting their references.
      first = count;
      last = count;
      for (let kind = 0; kind < TRACKS_PER_BONE; kind++) {
        const a = this.t.animTrackOfTrack[onlyBone * TRACKS_PER_BONE + kind];
        if (a >= 0) {
          if (first === count) first = a;
          last = a + 1;
        }
      }
      for (let j = 0; j < first; j++) {
        bit0 += keyBits(i32[h0 + RECORD * (1 + j) + 1]);
        bit1 += keyBits(i32[h1 + RECORD * (1 + j) + 1]);
        if (((i32[h0 + RECORD * (1 + j)] >>> TABLE.KIND_SHIFT) & 3) === TRACK_KIND.ROTATION) ref += 4;
      }
    }
    for (
      let j = first, r0 = h0 + RECORD * (1 + first), r1 = h1 + RECORD * (1 + first);
      j < last;
      j++, r0 += RECORD, r1 += RECORD
    ) {
      const meta = i32[r0],
        bits0 = i32[r0 + 1],
        bits1 = i32[r1 + 1];
      // Key 0's three stored components, then key 1's unless key 0 alone is read.
      const raw0 = (meta & TABLE.RAW) !== 0;
      const a0 = bits0 & 0xff,
        a1 = (bits0 >>> 8) & 0xff;
      const c0 = component(u32, d0, bit0, a0, f32, r0 + 2, raw0),
        c1 = component(u32, d0, bit0 + a0, a1, f32, r0 + 4, raw0),
        c2 = component(u32, d0, bit0 + a0 + a1, (bits0 >>> 16) & 0xff, f32, r0 + 6, raw0);
      bit0 += keyBits(bits0);
      const at = bit1;
      bit1 += keyBits(bits1);
      const o = (meta & TABLE.POSE_MASK) - base;
      const rotation = ((meta >>> TABLE.KIND_SHIFT) & 3) === TRACK_KIND.ROTATION;
      if (single || (meta & TABLE.STEP) !== 0) {
        // A STEP track holds key 0 until the next sample; key 1's bits are skipped.
        if (rotation) {
          listRotation(keys, list, n++, c0, c1, c2, bits0 >>> 24, -1, ref, o);
          ref += 4;
        } else {
          out[o] = c0;
          out[o + 1] = c1;
          out[o + 2] = c2;
        }
        continue;
      }
      const raw1 = (i32[r1] & TABLE.RAW) !== 0;
      const e0 = bits1 & 0xff,
        e1 = (bits1 >>> 8) & 0xff;
      const g0 = component(u32, d1, at, e0, f32, r1 + 2, raw1),
        g1 = component(u32, d1, at + e0, e1, f32, r1 + 4, raw1),
        g2 = component(u32, d1, at + e0 + e1, (bits1 >>> 16) & 0xff, f32, r1 + 6, raw1);
      if (rotation) {
        const k = ROTATION_SLOT * n + 4;
        keys[k] = g0;
        keys[k + 1] = g1;
        keys[k + 2] = g2;
        listRotation(keys, list, n++, c0, c1, c2, bits0 >>> 24, bits1 >>> 24, ref, o);
        ref += 4;
      } else {
        out[o] = lerp(c0, g0, alpha);
        out[o + 1] = lerp(c1, g1, alpha);
        out[o + 2] = lerp(c2, g2, alpha);
      }
    }
    decodeRotations(keys, list, n, alpha, f64, out);
  }
}

/**
 * Lists rotation `n` for decodeRotations (interpolate.ts): key 0's components (`c0`, `c1`,
 * `c2`) into its slot of `keys`, and its entry: the keys' dropped components (`drop1` -1
 * for key 0 alone), its reference index and its pose offset.
 */
function listRotation(
  keys: Float64Array,
  list: Int32Array,
  n: number,
  c0: number,
  c1: number,
  c2: number,
  drop0: number,
  drop1: number,
  ref: number,
  o: number,
): void {
  const k = ROTATION_SLOT * n,
    e = ROTATION_ENTRY * n;
  keys[k] = c0;
  keys[k + 1] = c1;
  keys[k + 2] = c2;
  list[e] = drop0;
  list[e + 1] = drop1;
  list[e + 2] = ref;
  list[e + 3] = o;
}

/** Bits of a key's three stored components, from a track record's `bits` word (decode-layout.ts). */
function keyBits(bits: number): number {
  return (bits & 0xff) + ((bits >>> 8) & 0xff) + ((bits >>> 16) & 0xff);
}

/**
 * A stored component of `width` bits at bit `at` of the packed keys from word `d`:
 * offset + q · step with the record's offset and step at `f32[r]`, `f32[r + 1]`, or the
 * raw float. Two words cover any field of ≤ 32 bits; the second word's shift is split so a
 * field starting on a word boundary takes none of it.
 */
function component(
  u32: Uint32Array,
  d: number,
  at: number,
  width: number,
  f32: Float32Array,
  r: number,
  raw: boolean,
): number {
  const w = d + (at >>> 5),
    sh = at & 31;
  const q = (u32[w] >>> sh) | ((u32[w + 1] << 1) << (31 - sh));
  return raw ? floatFromBits(q >>> 0) : f32[r] + (q & ((1 << width) - 1)) * f32[r + 1];
}
