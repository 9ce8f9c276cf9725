/**
 * The compressor's measure kernel (measure-kernel.wat): the search's per-bone measures over a
 * segment's keys and its trial keys' rebuild, the checks between samples' object transforms
 * and per-bone errors, a clip's object transforms at its samples and the rounding term's
 * lever sums: the same numbers as the TypeScript each stands for. The search's measure took
 * 2.0× as long in optimised JavaScript (docs/design.md, "Compression speed").
 */
import type { RawClip } from '../clip/raw-clip.js';
import { MEASURE_KERNEL_SHIFT, MEASURE_KERNEL_WASM } from './measure-kernel-wasm.js';

/** The module's functions; addresses are byte addresses in the kernel's memory. */
export interface MeasureExports {
  /**
   * One bone over `keys` keys, `stride` bytes apart in every buffer: its object transforms
   * (its parent's at `parent`, 0 for a root, composed with its local matrices at `local`)
   * into `out`, each measured against the raw clip's at `raw` (virtualVertexError at shell
   * distance `d`). Returns the first key over `threshold`, or -1 with the largest error in
   * {@link MeasureKernel.peak} and its key in {@link MeasureKernel.peakKey}.
   */
  measure(
    parent: number,
    local: number,
    out: number,
    raw: number,
    stride: number,
    keys: number,
    d: number,
    threshold: number,
  ): number;
  /** poseToAffine of `count` float32 poses from `pose`, `poseStride` bytes apart, into `out`, `outStride` bytes apart. */
  localAffines(pose: number, poseStride: number, out: number, outStride: number, count: number): void;
  /**
   * sampleToObject of `count` samples from `first` of a clip of `n` samples (float32
   * rotations, translations and scales, bone-major, at `rot`, `trans`, `scale`; `parents` an
   * i32 per bone) into `out`, sample-major.
   */
  sampleObjects(
    rot: number,
    trans: number,
    scale: number,
    n: number,
    first: number,
    count: number,
    parents: number,
    bones: number,
    out: number,
  ): void;
  /** poseToObject of the float64 pose at `pose` into `out`; `parents` an i32 per bone; `needed` 0 or a byte per bone. */
  poseToObject(pose: number, out: number, parents: number, needed: number, bones: number): void;
  /**
   * compress/bitrate.ts `SegmentSearch.measureSubtree` after its root: {@link measure} of the
   * bones at preorder[first .. end) in turn (`preorder` and `parents` an i32 per bone), each
   * into the buffer its `current` byte does not name (0 `object`, 1 `trial`), from its
   * parent's just measured into the buffer the parent's byte does not name and its local
   * matrices in the one its `side` byte names (`local0`, `local1`), its peak kept at
   * (1 − current) · bones + b of `peakError` and `peakKey`. Returns the first failing bone's
   * failing key, or -1.
   */
  measureSubtree(
    first: number,
    end: number,
    preorder: number,
    parents: number,
    current: number,
    side: number,
    object: number,
    trial: number,
    local0: number,
    local1: number,
    raw: number,
    shells: number,
    peakError: number,
    peakKey: number,
    bones: number,
    keys: number,
    threshold: number,
  ): number;
  /**
   * compress/bitrate.ts `SegmentSearch.failsAtKey` after its root: the bones at
   * preorder[first .. end) at one key, each composed from its parent's transform in `spot`
   * and its local matrix in `local0` or `local1` (as its `side` byte says, at the key) into
   * `spot`, and measured against `raw` (at the key). 1 at the first bone over `threshold`,
   * else 0.
   */
  spotSubtree(
    first: number,
    end: number,
    preorder: number,
    parents: number,
    side: number,
    spot: number,
    local0: number,
    local1: number,
    raw: number,
    shells: number,
    threshold: number,
  ): number;
  /**
   * compress/between.ts `SampleReference.objectAt`: the reference's object transforms at
   * fraction `alpha` of sample interval k of a clip of `n` samples per bone (float32
   * rotations, translations and scales, bone-major, at `rot`, `trans`, `scale`) into `out`,
   * with the slerp weights at `wa` and `wb` and signs at `sign` (a float64 per bone), `held`
   * a byte per bone (1 rotation, 2 translation, 4 scale held), `parents` and `needed` as in
   * {@link poseToObject}.
   */
  referenceObjects(
    rot: number,
    trans: number,
    scale: number,
    n: number,
    k: number,
    alpha: number,
    wa: number,
    wb: number,
    sign: number,
    held: number,
    parents: number,
    needed: number,
    out: number,
    bones: number,
  ): void;
  /**
   * Each bone's error between the object transforms at `ref` and `dec`, raised into `worst`
   * (and `alpha` into `fraction`, unless 0); `live` 0 or a byte per bone; `shells` and `grow`
   * a float64 per bone. `mode` 0: the vertex error, and the whole-shell error raised into
   * `worstShell` from the floor max(worstShell, shellFloor / grow); 1: the vertex error
   * alone; 2: the whole-shell error alone, no floor.
   */
  measureBones(
    ref: number,
    dec: number,
    bones: number,
    live: number,
    shells: number,
    worst: number,
    worstShell: number,
    fraction: number,
    grow: number,
    shellFloor: number,
    alpha: number,
    mode: number,
  ): void;
  /**
   * compress/quantize.ts `reconstructTrackSegment` of `count` keys of a track, its values at
   * `values` (float32, `width` a key: 4 a rotation, 3 a vector), the components but `drop`
   * stored by `mode` 0: quantised with the float64 offset, step, 1 / step and largest code of
   * each slot at `dq` (32 bytes a slot); 1: raw; 2: constant, the float64s at `dq`. Rotations
   * are rebuilt with the float32 reference (rx, ry, rz, rw), through three planes of scratch
   * at `planes` (count rounded up to 4 floats each). Into `out` (float32), `stride` bytes a key.
   */
  rebuild(
    values: number,
    width: number,
    count: number,
    drop: number,
    mode: number,
    dq: number,
    rx: number,
    ry: number,
    rz: number,
    rw: number,
    planes: number,
    out: number,
    stride: number,
  ): void;
  /**
   * compress/between.ts `roundingTerm`'s largest lever sum over `samples` samples whose
   * object transforms are at `object` (sample-major): `parents` an i32 per bone, `turns` and
   * `moves` a byte per bone, `shells` a float64 per bone, `turning`, `turnSums` and
   * `moveSums` a float64 per bone of scratch.
   */
  leverSums(
    object: number,
    samples: number,
    bones: number,
    parents: number,
    turns: number,
    moves: number,
    shells: number,
    turning: number,
    turnSums: number,
    moveSums: number,
  ): number;
}

/**
 * A buffer to place in the kernel's memory: float64s, float32s, int32s or bytes, and how many;
 * `'copied'` when its user writes every element before reading any (a copy of a clip's
 * arrays), so that it is handed out as the memory holds it, not zeroed.
 */
export type BufferSpec =
  | readonly ['f64' | 'f32' | 'i32' | 'u8', number]
  | readonly ['f64' | 'f32' | 'i32' | 'u8', number, 'copied'];

/** Buffers by name. */
export type BufferSpecs = Readonly<Record<string, BufferSpec>>;

/**
 * The buffers of a clip's samples as the kernel reads them (`sampleObjects`,
 * `referenceObjects`): float32 rotations, translations and scales, bone-major, for `values`
 * bone-samples (0 where the kernel does not read them), filled by {@link placeClipSamples}.
 */
export function clipSampleSpecs(values: number) {
  return {
    rotations: ['f32', values * 4, 'copied'],
    translations: ['f32', values * 3, 'copied'],
    scales: ['f32', values * 3, 'copied'],
  } as const;
}

/** The buffers of {@link clipSampleSpecs}. */
export type ClipSamples = Buffers<ReturnType<typeof clipSampleSpecs>>;

/** Copies `clip`'s samples into the buffers of {@link clipSampleSpecs}. */
export function placeClipSamples(samples: ClipSamples, clip: RawClip): void {
  samples.rotations.set(clip.rotations);
  samples.translations.set(clip.translations);
  samples.scales.set(clip.scales);
}

/**
 * The kernel's `sampleObjects` over the samples {@link placeClipSamples} put in `samples`: the
 * object transforms of `clip`'s samples `first` .. `first + count` − 1 into `out`
 * (sample-major); the parents an i32 per bone at byte `parentsAt` of the kernel's memory.
 */
export function clipSampleObjects(
  kernel: MeasureExports,
  samples: ClipSamples,
  clip: RawClip,
  first: number,
  count: number,
  parentsAt: number,
  out: Float64Array,
): void {
  kernel.sampleObjects(
    samples.rotations.byteOffset,
    samples.translations.byteOffset,
    samples.scales.byteOffset,
    clip.sampleCount,
    first,
    count,
    parentsAt,
    clip.skeleton.parents.length,
    out.byteOffset,
  );
}

const VIEWS = { f64: Float64Array, f32: Float32Array, i32: Int32Array, u8: Uint8Array } as const;

/** The typed arrays of `S`, by name. */
export type Buffers<S extends BufferSpecs> = { [K in keyof S]: InstanceType<(typeof VIEWS)[S[K][0]]> };

/** The kernel on a memory holding one user's buffers. */
export interface MeasureKernel<S extends BufferSpecs = BufferSpecs> {
  readonly exports: MeasureExports;
  /** The buffers asked for, zeroed (but those `'copied'`), in the order named, each at a multiple of 16 bytes of the memory. */
  readonly buffers: Buffers<S>;
  /** Index 0: the largest error of the last `measure` that returned -1. */
  readonly peak: Float64Array;
  /** Index 0: that error's key. */
  readonly peakKey: Int32Array;
}

/** Who holds a memory: the search, or the checks between samples. */
export type KernelUser = 'search' | 'between';

/** `measure`'s peak and its key, at bytes 0 and 8 (measure-kernel.wat). */
const BUFFERS_START = 16;
const PAGE = 65536;
/**
 * The largest memory kept for the next call: the checks between samples of the bench
 * corpus's longest clip take 2.3 MiB, the search of a 1,000-joint chain 7.4 MiB; a clip of
 * hours gets a memory of its own, freed with its user.
 */
const KEPT_BYTES = 1 << 24;
const FIRST_BYTES = 1 << 20;
/** 4 GiB, a 32-bit memory's most. */
const MAX_PAGES = 65536;
const BYTES = { f64: 8, f32: 4, i32: 4, u8: 1 } as const;

let compiled: WebAssembly.Module | null | undefined;
const memories = new Map<KernelUser, { memory: WebAssembly.Memory; exports: MeasureExports }>();

/** The module, compiled once; null where WebAssembly or its SIMD is missing. */
function measureModule(): WebAssembly.Module | null {
  if (compiled === undefined) {
    compiled = null;
    try {
      const bytes = new Uint8Array(MEASURE_KERNEL_WASM.length);
      for (let i = 0; i < bytes.length; i++) bytes[i] = MEASURE_KERNEL_WASM.charCodeAt(i) - MEASURE_KERNEL_SHIFT;
      if (WebAssembly.validate(bytes)) compiled = new WebAssembly.Module(bytes);
    } catch {
      /* no WebAssembly (a ReferenceError), or a policy refusing it */
    }
  }
  return compiled;
}

/**
 * Pages of a memory holding `bytes`: a power of two from 1 MiB, so that a run of ever longer
 * clips replaces a user's memory a few times rather than once a clip (pages never touched
 * cost no memory); the bytes alone above 2 GiB, the most a power of two can be.
 */
function pagesFor(bytes: number): number {
  const needed = Math.ceil(bytes / PAGE);
  const rounded = 2 ** Math.ceil(Math.log2(Math.max(bytes, FIRST_BYTES) / PAGE));
  return rounded <= MAX_PAGES / 2 ? rounded : needed;
}

/** `specs`' buffers as plain typed arrays, for a user measuring without the kernel. */
export function plainBuffers<S extends BufferSpecs>(specs: S): Buffers<S> {
  const buffers: Record<string, ArrayBufferView> = {};
  for (const [name, [type, length]] of Object.entries(specs)) buffers[name] = new VIEWS[type](length);
  return buffers as Buffers<S>;
}

/**
 * The kernel with `specs`' buffers in `user`'s memory, or undefined where it cannot be made
 * (the caller then measures in JavaScript). The buffers are valid until `user`'s next call:
 * compress() is synchronous, and runs one search and one pass of checks at a time, each
 * taking its buffers as it starts. A memory too small is replaced, never grown, so views
 * taken from an earlier call are never detached.
 */
export function measureKernel<S extends BufferSpecs>(user: KernelUser, specs: S): MeasureKernel<S> | undefined {
  const module = measureModule();
  if (!module) return undefined;
  let bytes = BUFFERS_START;
  for (const [type, length] of Object.values(specs)) bytes += Math.ceil((length * BYTES[type]) / 16) * 16;
  let held = memories.get(user);
  if (!held || held.memory.buffer.byteLength < bytes) {
    try {
      const memory = new WebAssembly.Memory({ initial: pagesFor(bytes) });
      const env = { mem: memory, acos: Math.acos, cos: Math.cos };
      held = { memory, exports: new WebAssembly.Instance(module, { env }).exports as unknown as MeasureExports };
      // A long clip's memory goes when its user is done with it.
      if (memory.buffer.byteLength <= KEPT_BYTES) memories.set(user, held);
    } catch {
      return undefined;
    }
  }
  const buffer = held.memory.buffer;
  const buffers: Record<string, ArrayBufferView> = {};
  let at = BUFFERS_START;
  for (const [name, [type, length, copied]] of Object.entries(specs)) {
    const view = new VIEWS[type](buffer, at, length);
    buffers[name] = copied === 'copied' ? view : view.fill(0);
    at += Math.ceil((length * BYTES[type]) / 16) * 16;
  }
  return {
    exports: held.exports,
    buffers: buffers as Buffers<S>,
    peak: new Float64Array(buffer, 0, 1),
    peakKey: new Int32Array(buffer, 8, 1),
  };
}
