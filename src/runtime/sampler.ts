/**
 * Per-instance sampling state over a shared {@link CompressedClip}: the key cursor, the
 * dequantisation cache of the segments last touched and the decode scratch. One sampler
 * per character (or mixer action); the clip stays immutable and shared.
 */
import { SEGMENT_SIZE } from './format.js';
import { FormatError } from './errors.js';
import { POSE_STRIDE } from './pose.js';
import type { CompressedClip } from './clip.js';
import { KERNEL_KEY1 } from './decode-layout.js';
import type { KernelDecode, KernelWorld } from './wasm-kernel.js';
import { keyPosition } from './key-times.js';
import type { TypeScriptDecoder } from './typescript-decoder.js';

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

/**
 * What a sampler of a clip that needs the TypeScript decoder says where none is installed
 * (code UNSUPPORTED_PLATFORM: the kernel does not decode the clip here). The glTF plugins
 * make a sampler when they load a clip, so a load fails with these words.
 */
const NO_TYPESCRIPT_DECODER =
  "the WebAssembly kernel cannot run here and the TypeScript decoder is not installed: importing 'bonepress/runtime' once in the app installs it";

/** A fraction of a sample this close to a whole sample is that sample. */
const SNAP = 1e-6;
/** log2 of {@link SEGMENT_SIZE}. */
const SEGMENT_SHIFT = Math.log2(SEGMENT_SIZE);

/**
 * The TypeScript decoder (typescript-decoder.ts), once installed: compressed-clip.ts installs
 * it when it is imported, so `CompressedClip.open` is complete; the glTF plugins import the
 * clip without it, so a page carries it only where the app imports `bonepress/runtime`
 * (gltf-extension-def.ts refuses a clip the kernel does not decode otherwise).
 */
let typescriptDecoder: typeof TypeScriptDecoder | undefined;

/** Installs the TypeScript decoder for every sampler made after (compressed-clip.ts). @internal */
export function useTypeScriptDecoder(decoder: typeof TypeScriptDecoder): void {
  typescriptDecoder = decoder;
}

/**
 * Samples one {@link CompressedClip}; allocates nothing per call. Its own state is a few
 * numbers (and, where TypeScript decodes, a list of a pose's rotations): the clip's shared
 * tables hold everything else.
 */
export class ClipSampler {
  // Assigned in the order a pose decode reads them, the kernel path's first: fields are laid
  // out in the order the constructor assigns them, so a cold decode reads one or two of this
  // object's lines. They are `declare`d, so the build emits no list of them beside the
  // constructor's assignments.
  /** The WebAssembly kernel's decode, or undefined (wasm-kernel.ts). */
  declare private readonly kernel: KernelDecode | undefined;
  /** Byte address of the clip's record in the kernel's memory. */
  declare private readonly kernelClip: number;
  /**
   * The pose a decode starts from, as long as the clip's pose: the kernel memory's staging
   * pose, where the kernel writes it (wasm-kernel.ts: one view shared by the memory's clips
   * of this length, so it is in cache), copied out after the decode; or the clip's base pose,
   * copied out before the TypeScript decode writes the animated tracks over it.
   */
  declare private readonly source: Float32Array;
  declare private readonly poseFloats: number;
  declare private readonly n: number;
  declare private readonly rate: number;
  declare private readonly start: number;
  /** The clip's key times, or undefined on a uniform grid (key-times.ts). */
  declare private readonly times: Float32Array | undefined;
  // Keys found by locate(), whose blend fraction is returned instead: a double kept in a
  // field would be a separate heap number, one more object for a cold decode to reach.
  /** @internal The keys {@link pose} decodes, set by {@link locate} (or sampleKey, sampleBetween). */
  declare k0: number;
  /** @internal The second of the keys {@link pose} decodes. */
  declare k1: number;
  // Where the kernel's segments are (ClipTables.kernel), and the last segment key 0 was in:
  // the byte address of its packed keys and its bits per key, read from its header when key
  // 0 moves to another segment. The sampler computes the addresses of key 0's header and
  // first bit, so the kernel reads no table to find them.
  declare private readonly kernelSegments: number;
  declare private readonly kernelSegmentBytes: number;
  declare private readonly kernelLast: number;
  declare private kernelSegment: number;
  declare private kernelKeys: number;
  declare private kernelKeyBits: number;
  declare private readonly period: number;
  /** The clip this sampler reads. */
  declare readonly clip: CompressedClip;
  // The clip's tables (the kernel path reads segment headers there), copied in so a decode
  // reads this object and the clip's buffer only.
  declare private readonly i32: Int32Array;
  declare private readonly segAt: number;
  /** The TypeScript decode, where the kernel does not decode this clip (typescript-decoder.ts). */
  declare private readonly typescript: TypeScriptDecoder | undefined;

  /** Prefer {@link CompressedClip.createSampler}. */
  constructor(clip: CompressedClip) {
    const t = clip.tables;
    // Compact tables never have a kernel (decode-tables.ts).
    const k = t.kernel;
    if (k === undefined && typescriptDecoder === undefined)
      throw new FormatError('UNSUPPORTED_PLATFORM', NO_TYPESCRIPT_DECODER);
    this.kernel = k?.decode;
    this.kernelClip = k ? k.clipAt : 0;
    this.source = k ? k.pose : t.basePose;
    this.poseFloats = t.basePose.length;
    this.n = clip.sampleCount;
    this.rate = clip.sampleRate;
    this.start = clip.startTime;
    this.times = clip.keyTimes;
    this.k0 = 0;
    this.k1 = 0;
    this.kernelSegments = k ? k.segments : 0;
    this.kernelSegmentBytes = k ? k.segmentBytes : 0;
    this.kernelLast = k ? k.lastSegment : 0;
    this.kernelSegment = -1;
    this.kernelKeys = 0;
    this.kernelKeyBits = 0;
    this.period = clip.duration;
    this.clip = clip;
    this.i32 = t.i32;
    this.segAt = t.segAt;
    this.typescript = k ? undefined : new typescriptDecoder!(t, clip.bytes);
  }

  /**
   * Bytes this sampler holds beyond the clip, for memory reports: none where the kernel
   * decodes (its state is a few numbers); where TypeScript does, its list of a pose's
   * rotations (80 bytes a rotation) and, with compact tables, its two segment slots.
   */
  get byteLength(): number {
    return this.typescript?.byteLength ?? 0;
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
    checkOut(out, offset, this.poseFloats);
    this.pose(out, offset, this.locate(time, options));
    return offset + this.poseFloats;
  }

  /**
   * Decodes the pose at keys (k0, k1), `alpha` of the way, into `out` at `offset`.
   * @internal
   */
  pose(out: Float32Array, offset: number, alpha: number): void {
    if (this.kernel !== undefined) this.kernelDecode(alpha);
    out.set(this.source, offset);
    this.typescript?.decode(out, offset, this.k0, this.k1, alpha);
  }

  /**
   * The kernel's decode at (k0, k1, alpha) into its staging pose, or with the world pass
   * `world` the object-space pass after it, for the `bones` bones whose parents are at byte
   * `parentsAt` of the kernel memory (`rows`: 1 for three rows per bone). Key k lies in segment
   * min(k / SEGMENT_SIZE, last), at a fixed stride of segments (decode-tables.ts); key 1 is
   * k0 itself, the next key (in k0's segment or the next one) or, wrapping, key 0.
   * @internal
   */
  kernelDecode(alpha: number, world?: KernelWorld, parentsAt = 0, bones = 0, rows = 0): void {
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
    else world(this.kernelClip, where, key, alpha, parentsAt, bones, rows);
  }

  /**
   * Resolves `time` to the keys (k0, k1) the next {@link pose} decodes and returns the blend
   * fraction (0 means k0 alone).
   * @internal
   */
  locate(time: number, options: SampleOptions | undefined): number {
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
    let pos = keyPosition(this.times, this.start, rate, n, t, wrap);
    // Clamped to the samples, unless wrapping (then in [0, n) already); the key after the
    // last is the first when wrapping, else the last itself.
    if (!wrap) pos = pos > 0 ? Math.min(pos, n - 1) : 0;
    k0 = Math.min(Math.floor(pos), n - 1);
    alpha = pos - k0;
    k1 = k0 + 1 < n ? k0 + 1 : wrap ? 0 : k0;
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
}

/** Throws unless `out` holds `floats` floats from `offset` (a non-negative offset). */
function checkOut(out: Float32Array, offset: number, floats: number): void {
  if (!(offset >= 0) || out.length < offset + floats)
    throw new FormatError('BAD_ARGUMENT', `out holds ${out.length} floats, needs ${floats} from ${offset}`);
}

/**
 * Writes sample `keyIndex` of `sampler`'s clip (clamped to 0..sampleCount − 1) into
 * `outPose` exactly, without interpolation. A free function, as {@link sampleBetween} and
 * {@link sampleBone}: a page that only plays clips does not download them.
 */
export function sampleKey(sampler: ClipSampler, keyIndex: number, outPose: Float32Array): Float32Array {
  const k = keyIndex > 0 ? Math.min(sampler.clip.sampleCount - 1, Math.floor(keyIndex)) : 0;
  return poseAt(sampler, k, k, 0, outPose);
}

/**
 * Decodes the pose a fraction `alpha` (0..1) of the way from sample `keyIndex` to the next
 * one, exactly as {@link ClipSampler.sample} does at that time (the compressor measures
 * between samples with this). `keyIndex` is clamped to 0..sampleCount − 2.
 */
export function sampleBetween(
  sampler: ClipSampler,
  keyIndex: number,
  alpha: number,
  outPose: Float32Array,
): Float32Array {
  const n = sampler.clip.sampleCount;
  const k = keyIndex > 0 ? Math.min(n - 2, Math.floor(keyIndex)) : 0;
  if (n < 2 || !(alpha > 0)) return poseAt(sampler, Math.max(0, k), Math.max(0, k), 0, outPose);
  if (alpha >= 1) return poseAt(sampler, k + 1, k + 1, 0, outPose);
  return poseAt(sampler, k, k + 1, alpha, outPose);
}

/** Decodes the pose `alpha` of the way from key `k0` to key `k1` into `outPose`. */
function poseAt(sampler: ClipSampler, k0: number, k1: number, alpha: number, outPose: Float32Array): Float32Array {
  checkOut(outPose, 0, sampler.clip.boneCount * POSE_STRIDE);
  sampler.k0 = k0;
  sampler.k1 = k1;
  sampler.pose(outPose, 0, alpha);
  return outPose;
}

/** sampleBone's whole pose, grown to the largest clip it has sampled. */
let bonePose = new Float32Array(0);

/**
 * Samples one bone at `time` into `out[0..9]` (the same 10-float layout as a pose), the
 * floats {@link ClipSampler.sample} gives it: it decodes the whole pose (into a scratch it
 * keeps) and copies the bone out. Throws only on a bad bone index or a short `out`.
 */
export function sampleBone(
  sampler: ClipSampler,
  time: number,
  boneIndex: number,
  out: Float32Array,
  options?: SampleOptions,
): Float32Array {
  const bones = sampler.clip.boneCount;
  if (!(boneIndex >= 0 && boneIndex < bones) || (boneIndex | 0) !== boneIndex)
    throw new FormatError('BAD_ARGUMENT', `bone index ${boneIndex} (clip has ${bones} bones)`);
  checkOut(out, 0, POSE_STRIDE);
  if (bonePose.length < bones * POSE_STRIDE) bonePose = new Float32Array(bones * POSE_STRIDE);
  sampler.pose(bonePose, 0, sampler.locate(time, options));
  for (let i = 0, from = boneIndex * POSE_STRIDE; i < POSE_STRIDE; i++) out[i] = bonePose[from + i];
  return out;
}
