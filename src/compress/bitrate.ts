/**
 * Stage 7: the bit rate of every animated track in every segment, chosen against the
 * object-space error metric. Values are rebuilt exactly as the decoder rebuilds them
 * (compress/quantize.ts, or the measure kernel's `rebuild`, the same floats), so the error
 * measured here is the error users see.
 *
 * Per segment: every track starts one ladder step above the previous segment's, when
 * those steps fit together; otherwise it starts raw, and pass 1 lowers all tracks together
 * (roots held raw) to the lowest ladder step whose error fits. Pass 2 visits tracks children
 * first and lowers them while the threshold allows (four steps, or two, or one, per track
 * per round by default; the effort level chooses, see `EFFORT_SEARCHES`). A trial
 * re-measures only the changed bone and its descendants; parent object transforms and local
 * matrices are cached. A trial first measures a few keys alone, each from that key rebuilt
 * (where the tried bone's subtree errs most now, where the track's last trial failed, where
 * the segment's last failing trial did), and most failing trials stop there.
 */
import type { RawClip } from '../clip/raw-clip.js';
import { POSE_STRIDE, applyAdditiveBone } from '../runtime/pose.js';
import { KIND_POSE_OFFSET, RAW_BITS } from '../runtime/format.js';
import {
  AFFINE_STRIDE,
  boneErrorFunction,
  composeAffine,
  poseToAffine,
  sampleToObject,
  type BoneErrorFunction,
  type ErrorMetric,
} from '../metric/error-metric.js';
import {
  DEQUANTIZATION_STRIDE,
  componentBitsOf,
  constantComponent,
  dequantization,
  reconstructTrackSegment,
  type TrackSlot,
} from './quantize.js';
import type { Effort } from './options.js';
import {
  clipSampleObjects,
  clipSampleSpecs,
  measureKernel,
  placeClipSamples,
  plainBuffers,
  type ClipSamples,
  type MeasureKernel,
} from './measure-kernel.js';
import type { AnimatedTrack, ClipRanges, SegmentRanges } from './range.js';
import type { SegmentLayout } from './segment.js';

/** Bit-rate ladders (bits per component). Each ends with the raw float32 rate. */
export const BIT_RATE_LADDERS = {
  /** ACL 2.0: {0, 3, 4, …, 19, float}. */
  acl20: [0, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, RAW_BITS],
  /** ACL 2.1: {0, 1, 2, …, 23, float}. */
  acl21: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, RAW_BITS],
} as const;
/** A key of {@link BIT_RATE_LADDERS}. */
export type BitRateLadder = keyof typeof BIT_RATE_LADDERS;

/** Everything the search reads. */
export interface BitRateInput {
  readonly clip: RawClip;
  readonly tracks: readonly AnimatedTrack[];
  readonly clipRanges: ClipRanges;
  readonly ranges: SegmentRanges;
  readonly layout: SegmentLayout;
  /** Local pose of default and constant tracks, as the decoder rebuilds it. */
  readonly basePose: Float32Array;
  readonly threshold: number;
  readonly shellDistances: Float32Array;
  /** What `threshold` bounds. Default 'vertices'. */
  readonly metric?: ErrorMetric;
  readonly ladder: readonly number[];
  /** Pass 2 strategy one step at a time (experiments), when given; otherwise `effort`'s search. */
  readonly strategy?: SearchStrategy;
  /** Default 'default'. */
  readonly effort?: Effort;
  /**
   * For an additive clip: the base's local pose at every sample of `clip` (sample-major),
   * which every decoded pose is applied to before it is measured (`clip` then holds the
   * applied source, compress/additive.ts).
   */
  readonly additiveBase?: Float64Array;
  /** The object transforms of every sample of `clip` (metric/error-metric.ts `clipToObject`), when known. */
  readonly clipObject?: Float64Array;
}

/**
 * Pass 2 strategies: 'descend' lowers each track as far as it goes before the next
 * (children first); 'round-robin' lowers every track a few steps per round, in the same
 * order, so the error budget of a chain is shared instead of spent by its leaves.
 */
export type SearchStrategy = 'descend' | 'round-robin';

/** How pass 2 runs. */
interface Pass2 {
  readonly strategy: SearchStrategy;
  /**
   * Round-robin: ladder steps a track tries to go down per round. Larger strides leave
   * the budget to more tracks before the first ones reach their floor (smaller files on
   * bandai-ds1, bench/notes.md) for about as many trials.
   */
  readonly stride: number;
  /** Round-robin: where `stride` steps fail, try half as many, down to one; otherwise the track is done. */
  readonly halve: boolean;
  /**
   * Start from the previous result's steps (the previous segment's, or this segment's
   * previous search), each one higher, measured together in one trial: where they fit (most
   * segments: neighbours move alike), pass 2 starts there and pass 1 is skipped; otherwise
   * the segment is searched from raw.
   */
  readonly fromPrevious: boolean;
}

/**
 * The pass 2 searches each effort runs on a segment: each after the first starts from the
 * segment's smallest result so far, one step up, and the smallest is kept, which the next
 * segment starts from. `fast` gives up on a track as soon as two steps fail (fewer trials,
 * a track may stay one step above its floor); `best` follows default's search by four
 * steps with one by two and one by one. Sizes and times on bandai-ds1: docs/design.md.
 */
const EFFORT_SEARCHES: Record<Effort, readonly Pass2[]> = {
  fast: [{ strategy: 'round-robin', stride: 2, halve: false, fromPrevious: true }],
  default: [{ strategy: 'round-robin', stride: 4, halve: true, fromPrevious: true }],
  best: [
    { strategy: 'round-robin', stride: 4, halve: true, fromPrevious: true },
    { strategy: 'round-robin', stride: 2, halve: true, fromPrevious: true },
    { strategy: 'round-robin', stride: 1, halve: true, fromPrevious: true },
  ],
};

/** What the search decided and what it cost. */
export interface BitRateResult {
  /** `rates[s * trackCount + j]`: bits per component of track j in segment s. */
  readonly rates: Uint8Array;
  /** Error trials run (each re-measures one bone chain or the whole segment). */
  readonly trials: number;
}

/** Chooses the bit rates of every segment. */
export function searchBitRates(input: BitRateInput): BitRateResult {
  const { tracks, layout } = input;
  const trackCount = tracks.length;
  const rates = new Uint8Array(layout.count * trackCount);
  const searches = input.strategy
    ? [{ strategy: input.strategy, stride: 1, halve: true, fromPrevious: false }]
    : EFFORT_SEARCHES[input.effort ?? 'default'];
  const search = new SegmentSearch(input, searches.length > 1);
  const other = new Uint8Array(searches.length > 1 ? trackCount : 0);
  let trials = 0;
  for (let s = 0; s < layout.count; s++) {
    const own = rates.subarray(s * trackCount, (s + 1) * trackCount);
    trials += search.run(s, own, searches[0]);
    for (let i = 1; i < searches.length; i++) {
      search.startFrom(own);
      trials += search.run(s, other, searches[i]);
      if (search.segmentBits(other) < search.segmentBits(own)) own.set(other);
    }
    search.startFrom(own);
  }
  return { rates, trials };
}

/** Scratch and state of the search over one segment, reused for every segment of a clip. */
class SegmentSearch {
  private readonly boneCount: number;
  private readonly parents: Int32Array;
  // Bones in depth-first pre-order: bone b's subtree is preorder[at[b] .. at[b] + size[b]),
  // linear memory whatever the depth (a list per bone would be O(bones · depth)).
  private readonly preorder: Int32Array;
  private readonly preorderAt: Int32Array;
  private readonly subtreeSize: Int32Array;
  private readonly local: Float32Array;
  /** The clip's samples in the kernel's memory, where it works out each segment's raw transforms (else empty). */
  private readonly samples: ClipSamples;
  /**
   * Where the kernel rebuilds keys ({@link rebuild}, when `kernelRebuilds`; otherwise
   * quantize.ts does): each track's values over the segment (`maxKeys` · 4 floats a track),
   * the three planes its rotations take, one stored component's constant; `kernelRebuilds`
   * needs every rotation reference float32 (the kernel's arithmetic takes them so).
   */
  private readonly segmentValues: Float32Array;
  private readonly planes: Float32Array;
  private readonly constants: Float64Array;
  private readonly kernelRebuilds: boolean;
  // Object transforms live in two buffers; `current[b]` says which holds bone b's (1: trial).
  // A trial writes its subtree into the other buffer, and keeping it flips the subtree's
  // entries instead of copying 12 numbers per bone and key back.
  private readonly object: Float64Array;
  private readonly current: Uint8Array;
  /**
   * measure-kernel.ts's kernel, holding the matrices, `current`, `localSide`, the peaks and
   * the spot's transforms, where it measures (the `vertices` metric); the byte addresses of
   * its copies of the pre-order, the parents and the shell distances.
   */
  private readonly kernel: MeasureKernel | undefined;
  private readonly kernelTree: readonly [number, number, number];
  private rawObject: Float64Array; // the raw clip's object transforms for this segment's keys
  // Local transforms as affine matrices, per key and bone, in two buffers like the object
  // transforms: `localSide[b]` says which holds bone b's (1: otherLocal). A trial writes the
  // tried bone's into the other one, and keeping it flips the bone's side.
  private readonly localAffine: Float64Array;
  private readonly otherLocal: Float64Array;
  private readonly localSide: Uint8Array;
  private readonly trial: Float64Array;
  private readonly applied = new Float64Array(POSE_STRIDE);
  private readonly saved: Float32Array;
  // The key where a trial of each track last failed (-1: none yet), and where the segment's
  // last failing trial did: a trial first measures such keys alone, each from one rebuilt
  // key, and most failing trials stop there (see failsAtSpot).
  private readonly failKey: Int32Array;
  private lastFailKey = -1;
  // Per bone and buffer (`peakError[side * boneCount + b]`, side as in `current`): its largest
  // error over the segment's keys and that key, the first spot a trial of its subtree measures.
  private readonly peakError: Float64Array;
  private readonly peakKey: Int32Array;
  private readonly spotPose: Float32Array;
  private readonly spotObject: Float64Array;
  /** The key where {@link fitsAt} last failed (-1: none yet), measured first the next time. */
  private fitsFailKey = -1;
  private readonly spotLocal: Float64Array;
  private readonly componentBits = new Uint8Array(3);
  /**
   * {@link dequantization} per track and ladder step (three components each), derived once
   * per segment, valid where `dequantizedSegment` is the segment + 1.
   */
  private readonly dequantized: Float64Array;
  private readonly dequantizedSegment: Int32Array;
  /**
   * Where a segment is searched more than once (`best`), a track's values rebuilt over the
   * whole segment at a ladder step, kept for the later searches (on bandai-ds1, 42 % of the
   * keys `best` rebuilds; within one search, 6 %, not worth the copy): at
   * `rebuilt[rebuiltAt[j * steps + level] ..]`, `width` floats per key, valid where
   * `rebuiltSegment` is the segment + 1; `rebuiltUsed` floats are taken.
   */
  private readonly keepsRebuilt: boolean;
  private rebuilt: Float32Array;
  private readonly rebuiltAt: Int32Array;
  private readonly rebuiltSegment: Int32Array;
  private rebuiltUsed = 0;
  private readonly level: Int32Array;
  private readonly floor: Int32Array;
  /** Ladder steps of the result the next search starts from, per track (valid when `hasPrevious`). */
  private readonly previous: Int32Array;
  private hasPrevious = false;
  /**
   * False when pass 2 leaves the upper bones at pass 1's step ({@link PASS2_SUBTREE_BUDGET_PER_BONE}):
   * started one step above the previous result they would stay there, so such a skeleton is
   * always searched from raw.
   */
  private readonly everyTrackInPassTwo: boolean;
  private readonly slot: TrackSlot = { j: 0, trackCount: 0, segment: 0, start: 0, size: 0 };
  private readonly order: Int32Array;
  // Tracks of each bone: boneTracks[boneTrackStart[b] .. boneTrackStart[b + 1]).
  private readonly boneTrackStart: Int32Array;
  private readonly boneTracks: Int32Array;
  // One function for the whole search, so every call site sees a single target.
  private readonly boneError: BoneErrorFunction;
  private start = 0;
  private size = 0;
  /** The segment whose raw object transforms `rawObject` holds (-1: none yet). */
  private rawSegment = -1;
  /** Pass 1's step on the segment searched last (-1: none yet). */
  private pass1Level = -1;
  private segment = 0;
  /** Trials of the segment being searched. */
  private trials = 0;

  constructor(
    private readonly input: BitRateInput,
    keepsRebuilt: boolean,
  ) {
    const parents = input.clip.skeleton.parents;
    this.parents = parents;
    this.boneCount = parents.length;
    const metric = input.metric ?? 'vertices';
    this.boneError = boneErrorFunction(metric);
    const maxKeys = input.layout.maxSize;
    const tree = subtreeRanges(parents);
    // What the measures read and write, in the kernel's memory where it measures.
    const B = this.boneCount,
      matrices = maxKeys * B * AFFINE_STRIDE;
    const steps = input.tracks.length * input.ladder.length;
    // The clip's samples, from which the kernel works out the raw transforms of each segment
    // where the clip's are not known.
    const values = input.clipObject ? 0 : B * input.clip.sampleCount;
    const specs = {
      ...clipSampleSpecs(values),
      local: ['f32', maxKeys * B * POSE_STRIDE],
      spotPose: ['f32', POSE_STRIDE],
      spotLocal: ['f64', AFFINE_STRIDE],
      segmentValues: ['f32', input.tracks.length * maxKeys * 4],
      planes: ['f32', 3 * (maxKeys + 3)],
      constants: ['f64', 3],
      dequantized: ['f64', steps * 3 * DEQUANTIZATION_STRIDE],
      object: ['f64', matrices],
      trial: ['f64', matrices],
      rawObject: ['f64', matrices],
      localAffine: ['f64', matrices],
      otherLocal: ['f64', matrices],
      spotObject: ['f64', B * AFFINE_STRIDE],
      peakError: ['f64', 2 * B],
      peakKey: ['i32', 2 * B],
      current: ['u8', B],
      localSide: ['u8', B],
      preorder: ['i32', B],
      parents: ['i32', B],
      shells: ['f64', B],
    } as const;
    const kernel = metric === 'vertices' ? measureKernel('search', specs) : undefined;
    this.kernel = kernel;
    // Without the kernel the clip's samples are read where they are: no copy.
    const buffers = kernel?.buffers ?? plainBuffers({ ...specs, ...clipSampleSpecs(0) });
    this.samples = buffers;
    ({
      local: this.local,
      spotPose: this.spotPose,
      spotLocal: this.spotLocal,
      segmentValues: this.segmentValues,
      planes: this.planes,
      constants: this.constants,
      dequantized: this.dequantized,
      object: this.object,
      trial: this.trial,
      rawObject: this.rawObject,
      localAffine: this.localAffine,
      otherLocal: this.otherLocal,
      spotObject: this.spotObject,
      peakError: this.peakError,
      peakKey: this.peakKey,
      current: this.current,
      localSide: this.localSide,
    } = buffers);
    // The kernel's copies of the pre-order, the parents and the shell distances.
    buffers.preorder.set(tree.preorder);
    buffers.parents.set(parents);
    buffers.shells.set(input.shellDistances);
    this.kernelTree = [buffers.preorder.byteOffset, buffers.parents.byteOffset, buffers.shells.byteOffset];
    if (kernel !== undefined && values > 0) placeClipSamples(buffers, input.clip);
    this.saved = new Float32Array(maxKeys * 4);
    this.failKey = new Int32Array(input.tracks.length).fill(-1);
    this.dequantizedSegment = new Int32Array(steps);
    this.kernelRebuilds = kernel !== undefined && input.tracks.every((t) => t.ref.every((v) => v === Math.fround(v)));
    this.rebuiltAt = new Int32Array(steps);
    this.rebuiltSegment = new Int32Array(steps);
    this.keepsRebuilt = keepsRebuilt;
    this.rebuilt = new Float32Array(keepsRebuilt ? input.tracks.length * maxKeys * 4 : 0);
    this.level = new Int32Array(input.tracks.length);
    this.floor = new Int32Array(input.tracks.length);
    this.previous = new Int32Array(input.tracks.length);
    this.preorder = tree.preorder;
    this.preorderAt = tree.at;
    this.subtreeSize = tree.size;
    // Pass 2 order: children before parents (reverse bone order), rotation first within a bone.
    const order = input.tracks.map((t, j) => ({ j, bone: t.bone, kind: t.kind }));
    order.sort((a, b) => b.bone - a.bone || a.kind - b.kind);
    this.order = Int32Array.from(pass2Tracks(order, tree.size));
    this.everyTrackInPassTwo = this.order.length === input.tracks.length;
    this.boneTrackStart = new Int32Array(this.boneCount + 1);
    for (const t of input.tracks) this.boneTrackStart[t.bone + 1]++;
    for (let b = 0; b < this.boneCount; b++) this.boneTrackStart[b + 1] += this.boneTrackStart[b];
    const fill = this.boneTrackStart.slice(0, this.boneCount);
    this.boneTracks = new Int32Array(input.tracks.length);
    input.tracks.forEach((t, j) => {
      this.boneTracks[fill[t.bone]++] = j;
    });
  }

  /** Searches segment `s` with `pass2`, writing its rates; returns the number of trials. */
  run(s: number, outRates: Uint8Array, pass2: Pass2): number {
    const { layout, tracks, ladder, basePose } = this.input;
    this.segment = s;
    this.start = layout.starts[s];
    this.size = layout.sizes[s];
    const keys = this.size;
    const stride = this.boneCount * POSE_STRIDE;
    // Raw object transforms (and the tracks' values the kernel rebuilds from) per segment, not
    // per clip: the working set stays small (once for the searches `best` runs on one
    // segment); the segment's part of the clip's when given.
    if (this.rawSegment !== s) {
      this.rebuiltUsed = 0;
      if (this.kernelRebuilds) this.placeSegmentValues();
      const perKey = this.boneCount * AFFINE_STRIDE;
      const known = this.input.clipObject;
      const part = known?.subarray(this.start * perKey, (this.start + keys) * perKey);
      // The kernel reads its own memory only.
      const kernel = this.kernel;
      if (part && kernel) this.rawObject.set(part);
      else if (part) this.rawObject = part;
      else if (kernel)
        clipSampleObjects(
          kernel.exports,
          this.samples,
          this.input.clip,
          this.start,
          keys,
          this.kernelTree[1],
          this.rawObject,
        );
      else for (let k = 0; k < keys; k++) sampleToObject(this.input.clip, this.start + k, this.rawObject, k * perKey);
    }
    this.rawSegment = s;
    for (let k = 0; k < keys; k++) this.local.set(basePose, k * stride);
    this.trials = 0;
    this.lastFailKey = -1;
    const fromPrevious = pass2.fromPrevious && this.hasPrevious && this.everyTrackInPassTwo && this.fitsAt(-1);
    // A segment that misses the threshold even raw (collapsed tracks, rounding near w = 0)
    // keeps every track raw: the error is reported, never hidden.
    if (!fromPrevious && !this.passOne()) {
      outRates.fill(RAW_BITS);
      return this.trials;
    }
    this.passTwo(pass2);
    for (let j = 0; j < tracks.length; j++) outRates[j] = ladder[this.level[j]];
    return this.trials;
  }

  /** Every track raw, then pass 1; false when the segment misses the threshold even raw. */
  private passOne(): boolean {
    const { tracks, ladder, threshold } = this.input;
    const top = ladder.length - 1;
    for (let j = 0; j < tracks.length; j++) this.setLevel(j, top);
    this.computeObjects();
    this.trials++;
    if (this.segmentError() > threshold) return false;

    // Pass 1: lower everything but the roots together; binary search over ladder steps,
    // first bracketing the previous segment's step (neighbours mostly share it: two
    // trials instead of four or five). The step below it goes first, so that where the
    // bracket holds the last trial is the one kept and nothing is rebuilt after it.
    let lo = 0,
      hi = top; // hi: known to fit
    let lastFits = false;
    const probe = (level: number): void => {
      lastFits = this.fitsAt(level);
      if (lastFits) hi = level;
      else lo = level + 1;
    };
    const guess = this.pass1Level;
    if (guess >= 0 && guess < top) {
      if (guess > 0) probe(guess - 1);
      if (!lastFits) probe(guess);
    }
    while (lo < hi) probe((lo + hi) >>> 1);
    this.pass1Level = hi;
    // A failed step stopped part-way: rebuild the kept one.
    if (!lastFits) {
      for (let j = 0; j < tracks.length; j++) if (this.parents[tracks[j].bone] >= 0) this.setLevel(j, hi);
      this.computeObjects();
      this.segmentError();
    }
    return true;
  }

  /** Pass 2, from the steps the segment holds. */
  private passTwo(pass2: Pass2): void {
    // Children first. A track that cannot go lower is done: lowering others only adds error.
    if (pass2.strategy === 'descend') {
      for (let i = 0; i < this.order.length; i++) {
        const j = this.order[i];
        while (this.level[j] > 0) {
          this.trials++;
          if (!this.tryLevel(j, this.level[j] - 1)) break;
        }
      }
    } else {
      // A level that failed is not tried again: lowering other tracks only adds error, so
      // each track's floor rises to just above its last failure, and it is done there.
      const { stride, halve } = pass2;
      const floor = this.floor;
      floor.fill(0);
      let changed = true;
      while (changed) {
        changed = false;
        for (let i = 0; i < this.order.length; i++) {
          const j = this.order[i];
          const room = this.level[j] - floor[j];
          if (room <= 0) continue;
          for (let step = Math.min(stride, room); step >= (halve ? 1 : stride); step >>= 1) {
            this.trials++;
            const to = this.level[j] - step;
            if (this.tryLevel(j, to)) {
              changed = true;
              break;
            }
            floor[j] = to + 1;
          }
          if (!halve && this.level[j] - floor[j] < stride) floor[j] = this.level[j];
        }
      }
    }
  }

  /** The next search (of this segment or the next) starts from `rates` (see `Pass2.fromPrevious`). */
  startFrom(rates: Uint8Array): void {
    const ladder = this.input.ladder;
    for (let j = 0; j < rates.length; j++) this.previous[j] = ladder.indexOf(rates[j]);
    this.hasPrevious = true;
  }

  /** Bits the keys of the segment last run take at `rates` (raw counted as three float32 components). */
  segmentBits(rates: Uint8Array): number {
    const { tracks, clipRanges, ranges } = this.input;
    const at = this.slot,
      bits = this.componentBits;
    let total = 0;
    for (let j = 0; j < tracks.length; j++) {
      const rate = rates[j];
      if (rate === 0) continue;
      if (rate === RAW_BITS) {
        total += 32 * 3;
        continue;
      }
      at.j = j;
      at.trackCount = tracks.length;
      at.segment = this.segment;
      componentBitsOf(tracks[j], at, rate, clipRanges, ranges, bits);
      total += bits[0] + bits[1] + bits[2];
    }
    return total * this.size;
  }

  /** Rebuilds track j at ladder step `level` into the local poses. */
  private setLevel(j: number, level: number): void {
    const t = this.input.tracks[j];
    this.level[j] = level;
    this.rebuild(
      j,
      level,
      0,
      this.size,
      this.local,
      t.bone * POSE_STRIDE + KIND_POSE_OFFSET[t.kind],
      this.boneCount * POSE_STRIDE,
    );
  }

  /** Writes keys `first .. first + count` of track j at ladder step `level` to `out[o + i * stride]`. */
  private rebuild(
    j: number,
    level: number,
    first: number,
    count: number,
    out: Float32Array,
    o: number,
    stride: number,
  ): void {
    const { tracks, ladder, clipRanges, ranges } = this.input;
    const at = this.slot;
    at.j = j;
    at.trackCount = tracks.length;
    at.segment = this.segment;
    at.start = this.start + first;
    at.size = count;
    const rate = ladder[level];
    const cached = j * ladder.length + level;
    const width = tracks[j].width;
    if (this.rebuiltSegment[cached] === this.segment + 1) {
      const rebuilt = this.rebuilt;
      for (let i = 0, from = this.rebuiltAt[cached] + first * width; i < count; i++, from += width)
        for (let c = 0; c < width; c++) out[o + i * stride + c] = rebuilt[from + c];
      return;
    }
    const d = cached * 3 * DEQUANTIZATION_STRIDE;
    if (this.dequantizedSegment[cached] !== this.segment + 1 && rate > 0 && rate !== RAW_BITS) {
      dequantization(tracks[j], at, rate, clipRanges, ranges, this.dequantized, d, this.componentBits);
      this.dequantizedSegment[cached] = this.segment + 1;
    }
    if (this.kernelRebuilds) this.rebuildInKernel(j, rate, first, count, out, o, stride, d);
    else reconstructTrackSegment(tracks[j], at, rate, clipRanges, ranges, out, o, stride, this.dequantized, d);
    if (count === this.size && this.keepsRebuilt) this.keepRebuilt(cached, width, out, o, stride);
  }

  /**
   * {@link rebuild} by the kernel (measure-kernel.wat `rebuild`, reconstructTrackSegment's
   * floats): the {@link dequantization} at `dequantized[d]` for a quantised rate.
   */
  private rebuildInKernel(
    j: number,
    rate: number,
    first: number,
    count: number,
    out: Float32Array,
    o: number,
    stride: number,
    d: number,
  ): void {
    const t = this.input.tracks[j];
    let mode = 0,
      dq = this.dequantized.byteOffset + d * 8;
    if (rate === RAW_BITS) mode = 1;
    else if (rate === 0) {
      mode = 2;
      for (let slot = 0; slot < 3; slot++)
        this.constants[slot] = constantComponent(t, this.slot, slot, this.input.clipRanges, this.input.ranges);
      dq = this.constants.byteOffset;
    }
    const ref = t.ref;
    this.kernel!.exports.rebuild(
      this.segmentValues.byteOffset + (j * this.input.layout.maxSize * 4 + first * t.width) * 4,
      t.width,
      count,
      t.drop[this.segment],
      mode,
      dq,
      ref[0],
      ref[1],
      ref[2],
      ref[3],
      this.planes.byteOffset,
      out.byteOffset + o * 4,
      stride * 4,
    );
  }

  /** Each track's values over the segment, in the kernel's memory, where it rebuilds keys. */
  private placeSegmentValues(): void {
    const tracks = this.input.tracks,
      perTrack = this.input.layout.maxSize * 4;
    for (let j = 0; j < tracks.length; j++) {
      const { values, width } = tracks[j];
      const from = this.start * width;
      this.segmentValues.set(values.subarray(from, from + this.size * width), j * perTrack);
    }
  }

  /** Keeps the whole segment's values just rebuilt at `out[o + k * stride]` as entry `cached` of `rebuilt`. */
  private keepRebuilt(cached: number, width: number, out: Float32Array, o: number, stride: number): void {
    const keys = this.size;
    if (this.rebuiltUsed + keys * width > this.rebuilt.length) {
      const grown = new Float32Array(2 * this.rebuilt.length + keys * width);
      grown.set(this.rebuilt.subarray(0, this.rebuiltUsed));
      this.rebuilt = grown;
    }
    const rebuilt = this.rebuilt,
      at = this.rebuiltUsed;
    for (let k = 0; k < keys; k++)
      for (let c = 0; c < width; c++) rebuilt[at + k * width + c] = out[o + k * stride + c];
    this.rebuiltAt[cached] = at;
    this.rebuiltSegment[cached] = this.segment + 1;
    this.rebuiltUsed = at + keys * width;
  }

  /** Tries track j at `level`; keeps it when the chain below stays within the threshold. */
  private tryLevel(j: number, level: number): boolean {
    if (this.failsAtSpot(j, level)) return false;
    const t = this.input.tracks[j];
    const width = t.width;
    const o = t.bone * POSE_STRIDE + KIND_POSE_OFFSET[t.kind];
    const stride = this.boneCount * POSE_STRIDE;
    const keys = this.size;
    for (let k = 0; k < keys; k++)
      for (let c = 0; c < width; c++) this.saved[k * 4 + c] = this.local[k * stride + o + c];
    const previous = this.level[j];
    this.setLevel(j, level);
    if (this.measureSubtree(t.bone, j)) {
      this.commitSubtree(t.bone);
      return true;
    }
    this.level[j] = previous;
    for (let k = 0; k < keys; k++)
      for (let c = 0; c < width; c++) this.local[k * stride + o + c] = this.saved[k * 4 + c];
    return false;
  }

  /**
   * Over the threshold with track j at `level` at the key where the tried bone's subtree errs
   * most now (a small error added there fails first: caught so, the failing trials measured in
   * full on bandai-ds1 fall from 36,556 to 20,352), where its last trial failed, or where the
   * segment's last failing trial did ({@link failsAtKey})?
   */
  private failsAtSpot(j: number, level: number): boolean {
    const own = this.failKey[j],
      last = this.lastFailKey,
      peak = this.peakKeyOf(this.input.tracks[j].bone);
    if (this.failsAtKey(j, level, peak)) return true;
    if (own >= 0 && own < this.size && own !== peak && this.failsAtKey(j, level, own)) return true;
    return last >= 0 && last !== own && last !== peak && this.failsAtKey(j, level, last);
  }

  /** The key of the largest error in bone `root`'s subtree, as the buffers hold it. */
  private peakKeyOf(root: number): number {
    const preorder = this.preorder,
      end = this.preorderAt[root] + this.subtreeSize[root],
      B = this.boneCount,
      current = this.current,
      peakError = this.peakError;
    let best = -1,
      key = 0;
    for (let i = this.preorderAt[root]; i < end; i++) {
      const b = preorder[i];
      const at = current[b] * B + b;
      if (peakError[at] > best) {
        best = peakError[at];
        key = this.peakKey[at];
      }
    }
    return key;
  }

  /**
   * Over the threshold with track j at `level` at key k? The tried bone's subtree at that key
   * alone, from that one key rebuilt, with {@link measureSubtree}'s arithmetic: where this
   * says so the full measure fails too (at this key or before), and nothing was changed.
   */
  private failsAtKey(j: number, level: number, k: number): boolean {
    const B = this.boneCount,
      t = this.input.tracks[j],
      root = t.bone,
      parents = this.parents,
      raw = this.rawObject,
      shell = this.input.shellDistances,
      threshold = this.input.threshold,
      boneError = this.boneError;
    const pose = this.spotPose,
      spot = this.spotObject;
    const l = (k * B + root) * POSE_STRIDE;
    for (let c = 0; c < POSE_STRIDE; c++) pose[c] = this.local[l + c];
    this.rebuild(j, level, k, 1, pose, KIND_POSE_OFFSET[t.kind], POSE_STRIDE);
    // spot[b * 12 ..]: bone b's object transform at key k, the tried bone's from its rebuilt local matrix.
    const km = k * B * AFFINE_STRIDE;
    const rootParent = parents[root];
    const parentObj = rootParent >= 0 && this.current[rootParent] ? this.trial : this.object;
    this.posesToAffine(this.spotPose, 0, 0, k, root, this.spotLocal, 0, 0, 1);
    const parentIndex = (k * B + rootParent) * AFFINE_STRIDE;
    if (this.spotFails(rootParent >= 0 ? parentObj : undefined, parentIndex, this.spotLocal, 0, root, km)) return true;
    const kernel = this.kernel;
    const preorder = this.preorder,
      end = this.preorderAt[root] + this.subtreeSize[root];
    if (kernel !== undefined) {
      const [preorderAt, parentsAt, shellsAt] = this.kernelTree;
      return (
        kernel.exports.spotSubtree(
          this.preorderAt[root] + 1,
          end,
          preorderAt,
          parentsAt,
          this.localSide.byteOffset,
          spot.byteOffset,
          this.localAffine.byteOffset + km * 8,
          this.otherLocal.byteOffset + km * 8,
          raw.byteOffset + km * 8,
          shellsAt,
          threshold,
        ) === 1
      );
    }
    for (let i = this.preorderAt[root] + 1; i < end; i++) {
      const b = preorder[i];
      const m = b * AFFINE_STRIDE;
      composeAffine(spot, parents[b] * AFFINE_STRIDE, this.localOf(b), km + m, spot, m);
      if (boneError(raw, km + m, spot, m, shell[b]) > threshold) return true;
    }
    return false;
  }

  /**
   * Within the threshold with every track of a non-root bone at ladder step `level` (pass 1),
   * or, for `level` = -1, every track one step above the previous result's (see
   * `Pass2.fromPrevious`)? Bones are rebuilt and measured parents first, each over all keys,
   * so a step that fails stops at the first bone over the threshold without rebuilding the
   * rest (the buffers are then partly updated). In pass 1, roots keep their raw tracks,
   * transforms and errors, all within the threshold since the segment's first measure, and a
   * bone without tracks its local matrices; from the previous result, every bone is rebuilt.
   */
  private fitsAt(level: number): boolean {
    const B = this.boneCount,
      obj = this.object,
      parents = this.parents;
    const trackStart = this.boneTrackStart,
      boneTracks = this.boneTracks;
    const fromPrevious = level < 0,
      previous = this.previous,
      top = this.input.ladder.length - 1;
    this.trials++;
    const spot = this.fitsFailKey;
    if (spot >= 0 && spot < this.size && this.failsAtKeyAll(level, spot)) return false;
    this.current.fill(0);
    for (let b = 0; b < B; b++) {
      const p = parents[b];
      if (p < 0 && !fromPrevious) continue;
      const rebuilt = fromPrevious || trackStart[b] < trackStart[b + 1];
      for (let i = trackStart[b]; i < trackStart[b + 1]; i++) {
        const j = boneTracks[i];
        this.setLevel(j, fromPrevious ? Math.min(top, previous[j] + 1) : level);
      }
      const la = this.localOf(b);
      if (rebuilt) this.segmentAffines(b, la);
      const failed = this.measureBone(b, obj, la, b * AFFINE_STRIDE, B * AFFINE_STRIDE, obj, 0);
      if (failed >= 0) {
        this.fitsFailKey = failed;
        return false;
      }
    }
    return true;
  }

  /**
   * Over the threshold at key k with the steps {@link fitsAt} would set? Every bone at that
   * key alone, parents first, each track's one key rebuilt, with fitsAt's arithmetic: where
   * this says so fitsAt fails too, and nothing was changed (a state fitsAt's callers allow).
   */
  private failsAtKeyAll(level: number, k: number): boolean {
    const B = this.boneCount,
      parents = this.parents;
    const trackStart = this.boneTrackStart,
      boneTracks = this.boneTracks,
      tracks = this.input.tracks;
    const fromPrevious = level < 0,
      top = this.input.ladder.length - 1;
    const pose = this.spotPose,
      spot = this.spotObject,
      m = this.spotLocal,
      obj = this.object;
    const km = k * B * AFFINE_STRIDE;
    for (let b = 0; b < B; b++) {
      const p = parents[b];
      const sb = b * AFFINE_STRIDE;
      if (p < 0 && !fromPrevious) {
        // A root keeps its raw transform in pass 1 (see fitsAt).
        for (let c = 0; c < AFFINE_STRIDE; c++) spot[sb + c] = obj[km + sb + c];
        continue;
      }
      let local = this.localOf(b),
        lo = km + sb;
      if (fromPrevious || trackStart[b] < trackStart[b + 1]) {
        const l = (k * B + b) * POSE_STRIDE;
        for (let c = 0; c < POSE_STRIDE; c++) pose[c] = this.local[l + c];
        for (let i = trackStart[b]; i < trackStart[b + 1]; i++) {
          const j = boneTracks[i];
          const to = fromPrevious ? Math.min(top, this.previous[j] + 1) : level;
          this.rebuild(j, to, k, 1, pose, KIND_POSE_OFFSET[tracks[j].kind], POSE_STRIDE);
        }
        this.posesToAffine(pose, 0, 0, k, b, m, 0, 0, 1);
        local = m;
        lo = 0;
      }
      if (this.spotFails(p >= 0 ? spot : undefined, p * AFFINE_STRIDE, local, lo, b, km)) return true;
    }
    return false;
  }

  /**
   * {@link poseToAffine} of the decoded local transform at `local[l]`, applied to the
   * additive base at `base` ({@link baseAt}) when there is one.
   */
  private localToAffine(local: Float32Array, l: number, base: number, out: Float64Array, o: number): void {
    const bases = this.input.additiveBase;
    if (bases === undefined) {
      poseToAffine(local, l, out, o);
      return;
    }
    applyAdditiveBone(bases, base, local, l, this.applied, 0);
    poseToAffine(this.applied, 0, out, o);
  }

  /**
   * Over the threshold at key k (`km`: its first matrix's index) for bone b, its object
   * transform (its parent's at `parent[po]`, none for a root, composed with its local matrix
   * at `local[lo]`) written into its slot of `spotObject`? In the measure kernel where it runs.
   */
  private spotFails(
    parent: Float64Array | undefined,
    po: number,
    local: Float64Array,
    lo: number,
    b: number,
    km: number,
  ): boolean {
    const spot = this.spotObject,
      raw = this.rawObject,
      sb = b * AFFINE_STRIDE,
      d = this.input.shellDistances[b],
      threshold = this.input.threshold;
    const kernel = this.kernel;
    if (kernel !== undefined) {
      const parentAt = parent ? parent.byteOffset + po * 8 : 0;
      const failed = kernel.exports.measure(
        parentAt,
        local.byteOffset + lo * 8,
        spot.byteOffset + sb * 8,
        raw.byteOffset + (km + sb) * 8,
        0,
        1,
        d,
        threshold,
      );
      return failed === 0;
    }
    if (parent) composeAffine(parent, po, local, lo, spot, sb);
    else for (let c = 0; c < AFFINE_STRIDE; c++) spot[sb + c] = local[lo + c];
    return this.boneError(raw, km + sb, spot, sb, d) > threshold;
  }

  /**
   * {@link localToAffine} of `count` decoded local transforms of bone b at keys k, k + 1, …:
   * from `pose[p]`, `ps` floats apart, into `out[o]`, `os` numbers apart; in the measure
   * kernel where there is no additive base to apply.
   */
  private posesToAffine(
    pose: Float32Array,
    p: number,
    ps: number,
    k: number,
    b: number,
    out: Float64Array,
    o: number,
    os: number,
    count: number,
  ): void {
    const kernel = this.kernel;
    if (kernel !== undefined && this.input.additiveBase === undefined) {
      kernel.exports.localAffines(pose.byteOffset + p * 4, ps * 4, out.byteOffset + o * 8, os * 8, count);
      return;
    }
    for (let i = 0; i < count; i++) this.localToAffine(pose, p + i * ps, this.baseAt(k + i, b), out, o + i * os);
  }

  /** Bone b's local matrices at every key of the segment, from its rebuilt poses in `local`, into its slots of `out`. */
  private segmentAffines(b: number, out: Float64Array): void {
    const B = this.boneCount;
    this.posesToAffine(
      this.local,
      b * POSE_STRIDE,
      B * POSE_STRIDE,
      0,
      b,
      out,
      b * AFFINE_STRIDE,
      B * AFFINE_STRIDE,
      this.size,
    );
  }

  /** The buffer holding bone b's local matrices (see `localSide`). */
  private localOf(b: number): Float64Array {
    return this.localSide[b] ? this.otherLocal : this.localAffine;
  }

  /** Where bone b's additive base pose at key k of the segment is. */
  private baseAt(k: number, b: number): number {
    return ((this.start + k) * this.boneCount + b) * POSE_STRIDE;
  }

  /** Object transforms of every bone at every key of the segment, into `object`. */
  private computeObjects(): void {
    const B = this.boneCount,
      local = this.local,
      obj = this.object,
      la = this.localAffine,
      parents = this.parents;
    this.current.fill(0);
    this.localSide.fill(0);
    for (let k = 0; k < this.size; k++) {
      for (let b = 0; b < B; b++) {
        const l = (k * B + b) * POSE_STRIDE;
        const m = (k * B + b) * AFFINE_STRIDE;
        this.localToAffine(local, l, this.baseAt(k, b), la, m);
        const p = parents[b];
        if (p >= 0) composeAffine(obj, (k * B + p) * AFFINE_STRIDE, la, m, obj, m);
        else for (let c = 0; c < AFFINE_STRIDE; c++) obj[m + c] = la[m + c];
      }
    }
  }

  /** Largest error over the segment for the object transforms of {@link computeObjects}. */
  private segmentError(): number {
    const B = this.boneCount,
      raw = this.rawObject,
      shell = this.input.shellDistances,
      boneError = this.boneError;
    let worst = 0;
    this.peakError.fill(-1, 0, B);
    for (let k = 0; k < this.size; k++) {
      const rawBase = k * B * AFFINE_STRIDE;
      for (let b = 0; b < B; b++) {
        const e = boneError(raw, rawBase + b * AFFINE_STRIDE, this.object, (k * B + b) * AFFINE_STRIDE, shell[b]);
        if (e > worst) worst = e;
        if (e > this.peakError[b]) {
          this.peakError[b] = e;
          this.peakKey[b] = k;
        }
      }
    }
    return worst;
  }

  /**
   * Recomputes bone `root`'s subtree into the buffers not holding it (see `current`); false
   * as soon as one error exceeds the threshold, kept as track j's failing spot.
   */
  private measureSubtree(root: number, j: number): boolean {
    const B = this.boneCount,
      current = this.current,
      parents = this.parents;
    const preorder = this.preorder,
      first = this.preorderAt[root],
      end = first + this.subtreeSize[root];
    const rootParent = parents[root];
    const parentObj = rootParent >= 0 && current[rootParent] ? this.trial : this.object;
    const rootOut = current[root] ? this.object : this.trial;
    // Bone by bone (the tried one first, over all keys): a trial that fails mostly fails there.
    // The tried bone's local matrices changed (into its other buffer); its descendants' did not.
    const rootLocal = this.localSide[root] ? this.localAffine : this.otherLocal;
    this.segmentAffines(root, rootLocal);
    const ls = B * AFFINE_STRIDE;
    let failed = this.measureBone(root, parentObj, rootLocal, root * AFFINE_STRIDE, ls, rootOut, 1 - current[root]);
    if (failed >= 0) return this.failedAt(j, failed);
    const kernel = this.kernel;
    if (kernel !== undefined) {
      const [preorderAt, parentsAt, shellsAt] = this.kernelTree;
      failed = kernel.exports.measureSubtree(
        first + 1,
        end,
        preorderAt,
        parentsAt,
        current.byteOffset,
        this.localSide.byteOffset,
        this.object.byteOffset,
        this.trial.byteOffset,
        this.localAffine.byteOffset,
        this.otherLocal.byteOffset,
        this.rawObject.byteOffset,
        shellsAt,
        this.peakError.byteOffset,
        this.peakKey.byteOffset,
        B,
        this.size,
        this.input.threshold,
      );
      return failed >= 0 ? this.failedAt(j, failed) : true;
    }
    for (let i = first + 1; i < end; i++) {
      const b = preorder[i],
        p = parents[b];
      // The parent is in the subtree too: its new transform is in its other buffer.
      const out = current[b] ? this.object : this.trial;
      const parentOut = current[p] ? this.object : this.trial;
      failed = this.measureBone(b, parentOut, this.localOf(b), b * AFFINE_STRIDE, ls, out, 1 - current[b]);
      if (failed >= 0) return this.failedAt(j, failed);
    }
    return true;
  }

  /**
   * Bone b's object transforms at the segment's keys into `out`: its parent's in `parentObj`
   * composed with its local matrices at `local[lo + k * ls]` (a root's are its local ones),
   * each measured against the raw clip's. Returns the first key over the threshold, or -1
   * with the bone's largest error and its key kept for buffer `side`.
   */
  private measureBone(
    b: number,
    parentObj: Float64Array,
    local: Float64Array,
    lo: number,
    ls: number,
    out: Float64Array,
    side: number,
  ): number {
    const B = this.boneCount,
      p = this.parents[b],
      raw = this.rawObject,
      d = this.input.shellDistances[b],
      threshold = this.input.threshold,
      boneError = this.boneError,
      keys = this.size;
    const kernel = this.kernel;
    if (kernel !== undefined) {
      const bo = b * AFFINE_STRIDE * 8;
      const failed = kernel.exports.measure(
        p >= 0 ? parentObj.byteOffset + p * AFFINE_STRIDE * 8 : 0,
        local.byteOffset + lo * 8,
        out.byteOffset + bo,
        raw.byteOffset + bo,
        B * AFFINE_STRIDE * 8,
        keys,
        d,
        threshold,
      );
      if (failed < 0) {
        this.peakError[side * B + b] = kernel.peak[0];
        this.peakKey[side * B + b] = kernel.peakKey[0];
      }
      return failed;
    }
    let peak = -1,
      peakKey = 0;
    for (let k = 0; k < keys; k++) {
      const m = (k * B + b) * AFFINE_STRIDE,
        l = lo + k * ls;
      if (p >= 0) composeAffine(parentObj, (k * B + p) * AFFINE_STRIDE, local, l, out, m);
      else for (let c = 0; c < AFFINE_STRIDE; c++) out[m + c] = local[l + c];
      const e = boneError(raw, m, out, m, d);
      if (e > threshold) return k;
      if (e > peak) {
        peak = e;
        peakKey = k;
      }
    }
    this.peakError[side * B + b] = peak;
    this.peakKey[side * B + b] = peakKey;
    return -1;
  }

  /** Keeps key k as where track j's trial failed; false. */
  private failedAt(j: number, k: number): false {
    this.failKey[j] = k;
    this.lastFailKey = k;
    return false;
  }

  /** Keeps the trial measured last: the root's local matrices and the subtree's object transforms flip buffers. */
  private commitSubtree(root: number): void {
    this.localSide[root] ^= 1;
    const preorder = this.preorder,
      end = this.preorderAt[root] + this.subtreeSize[root];
    for (let i = this.preorderAt[root]; i < end; i++) this.current[preorder[i]] ^= 1;
  }
}

/**
 * Pass 2 re-measures the tried bone's whole subtree on every trial, so its cost is the sum
 * of the tried bones' subtree sizes (the sum of depths for a chain: quadratic). Tracks take
 * part, in pass 2 order, while that sum stays within this many bones per bone of the
 * skeleton (an average depth of 15): real rigs are below it and get every track searched
 * (bandai-ds1's 22 bones sum to 5 per bone), while a hierarchy thousands deep keeps
 * its upper bones at their pass 1 rate, which pass 1 already measured within the threshold
 * (a 2,000-joint chain: 1.8 % larger, 2.5 times faster than with 64).
 */
export const PASS2_SUBTREE_BUDGET_PER_BONE = 16;

/** The tracks of `order` pass 2 tries (a prefix by bone, see {@link PASS2_SUBTREE_BUDGET_PER_BONE}). */
function pass2Tracks(order: readonly { j: number; bone: number }[], subtreeSize: Int32Array): number[] {
  const budget = PASS2_SUBTREE_BUDGET_PER_BONE * subtreeSize.length;
  const kept: number[] = [];
  let spent = 0,
    lastBone = -1;
  for (const { j, bone } of order) {
    if (bone !== lastBone) {
      spent += subtreeSize[bone];
      if (spent > budget) break;
      lastBone = bone;
    }
    kept.push(j);
  }
  return kept;
}

/**
 * Depth-first pre-order of a parents-first hierarchy with children in bone order, each
 * bone's position in it and its subtree size: the subtree of b is
 * `preorder[at[b] .. at[b] + size[b])`. Iterative and linear in time and memory.
 */
export function subtreeRanges(parents: Int32Array): { preorder: Int32Array; at: Int32Array; size: Int32Array } {
  const boneCount = parents.length;
  const size = new Int32Array(boneCount).fill(1);
  // Children come after parents, so one backward pass adds every subtree into its parent.
  for (let b = boneCount - 1; b >= 0; b--) if (parents[b] >= 0) size[parents[b]] += size[b];
  // A bone's subtree starts right after its parent's position plus the subtrees of its
  // earlier siblings; `next[p]` is where p's next child goes. Parents precede children, so
  // one forward pass places every bone.
  const at = new Int32Array(boneCount);
  const next = new Int32Array(boneCount);
  let rootNext = 0;
  for (let b = 0; b < boneCount; b++) {
    const p = parents[b];
    if (p < 0) {
      at[b] = rootNext;
      rootNext += size[b];
    } else {
      at[b] = next[p];
      next[p] += size[b];
    }
    next[b] = at[b] + 1;
  }
  const preorder = new Int32Array(boneCount);
  for (let b = 0; b < boneCount; b++) preorder[at[b]] = b;
  return { preorder, at, size };
}
