/**
 * Decoder timings for the bench: whole-pose sampling of a compressed clip, next to three.js
 * `AnimationMixer` sampling the raw clip and a raw-copy floor (ACL's memcpy baseline), all
 * measured in this process so that the ratios hold on any machine.
 */
import type * as Three from 'three';

import type { RawClip } from '../clip/raw-clip.js';
import { CompressedClip } from '../runtime/compressed-clip.js';
import { POSE_STRIDE } from '../runtime/pose.js';
import { mulberry32 } from '../clip/random.js';

/** Microseconds per whole pose, sequential playback and random times. */
export interface DecodeTiming {
  /** Playback forward in steps of 1/playbackHz seconds, wrapping at the clip's end. Wall µs per pose. */
  readonly sequentialUs: number;
  /** Seeded uniform random times over the clip. Wall µs per pose. */
  readonly randomUs: number;
  /**
   * The same in process CPU time (`process.cpuUsage()`): on a machine busy with other
   * processes, wall time includes the time this thread waited for a core; CPU time does not.
   */
  readonly sequentialCpuUs: number;
  readonly randomCpuUs: number;
}

/** One measurement: µs per call in wall time and in process CPU time. */
export interface Micros {
  readonly wallUs: number;
  readonly cpuUs: number;
}

function timingOf(sequential: Micros, random: Micros): DecodeTiming {
  return {
    sequentialUs: sequential.wallUs,
    randomUs: random.wallUs,
    sequentialCpuUs: sequential.cpuUs,
    randomCpuUs: random.cpuUs,
  };
}

/** Timings of one clip. */
export interface ClipDecodeTimings {
  /** `CompressedClip.sample` into a caller-owned pose. */
  readonly bonepress: DecodeTiming;
  /** Copying the sample at or before the time out of the raw float arrays; no interpolation. */
  readonly rawCopy: DecodeTiming;
  /** three.js `AnimationMixer` on the raw clip; absent when three.js could not be loaded. */
  readonly three?: DecodeTiming;
  /** Bytes of the three.js clip's typed arrays (key times shared by every track, values). */
  readonly threeClipBytes?: number;
}

/** How {@link measureClipDecode} measures. */
export interface DecodeTimingOptions {
  /** Step rate of sequential playback (Hz). */
  readonly playbackHz: number;
  /** Random times per clip, drawn from {@link mulberry32}(`seed`). */
  readonly randomTimes: number;
  readonly seed: number;
  /** Least wall time of one measurement (ms); the iteration count is calibrated to it. */
  readonly measureMs: number;
  /** Timed measurements per figure; the figure is the fastest. */
  readonly repeats: number;
}

/** The three.js module, as `import('three')` gives it. */
export type ThreeModule = typeof Three;

/**
 * Loads three.js (a dev dependency: the bench runs from the repo). Returns the module, or the
 * reason it could not be loaded, so the bench can go on without three.js figures.
 */
export async function loadThree(): Promise<{ three: ThreeModule } | { error: string }> {
  try {
    return { three: await import('three') };
  } catch (error) {
    return { error: `three.js could not be loaded: ${error instanceof Error ? error.message : String(error)}` };
  }
}

/** Median of `values` (sorts a copy); NaN when empty. */
export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

// Results of timed loops land in this module variable so that no loop can be optimised away.
// biome-ignore lint/correctness/noUnusedVariables: written only, on purpose (see above)
let sink = 0;

/**
 * Microseconds per call of the work `run(iterations)` does, in wall and in CPU time: the
 * iteration count is calibrated until one run lasts `measureMs`, then `repeats` runs are
 * timed and the fastest of each kind is returned (the run least disturbed by other
 * processes). The calibration runs double as the warm-up.
 */
export function measureMicros(run: (iterations: number) => void, measureMs: number, repeats: number): Micros {
  let iterations = 16;
  for (;;) {
    const started = performance.now();
    run(iterations);
    const ms = performance.now() - started;
    // A quarter of the target is long enough to extrapolate from, and keeps calibration cheap.
    if (ms >= measureMs / 4) {
      iterations = Math.max(iterations, Math.ceil((iterations * measureMs) / Math.max(ms, 1e-3)));
      break;
    }
    iterations *= ms < measureMs / 64 ? 8 : 2;
  }
  let wallUs = Infinity,
    cpuUs = Infinity;
  for (let r = 0; r < repeats; r++) {
    const cpuStarted = process.cpuUsage();
    const started = performance.now();
    run(iterations);
    const ms = performance.now() - started;
    const cpu = process.cpuUsage(cpuStarted);
    wallUs = Math.min(wallUs, (ms * 1000) / iterations);
    cpuUs = Math.min(cpuUs, (cpu.user + cpu.system) / iterations);
  }
  return { wallUs, cpuUs };
}

/** `count` seeded random times in [0, duration) seconds. */
export function randomTimes(count: number, duration: number, seed: number): Float64Array {
  const random = mulberry32(seed);
  const times = new Float64Array(count);
  for (let i = 0; i < count; i++) times[i] = random() * duration;
  return times;
}

/**
 * Times the decoders on one clip: bonepress on `bytes`, the raw-copy floor and (when `three`
 * is given) three.js on `clip`. The clip needs at least 2 samples. Allocates the pose, the
 * times and the three.js scene once per call; the timed loops allocate nothing of their own.
 */
export function measureClipDecode(
  clip: RawClip,
  bytes: Uint8Array,
  options: DecodeTimingOptions,
  three?: ThreeModule,
): ClipDecodeTimings {
  const { measureMs, repeats } = options;
  const duration = (clip.sampleCount - 1) / clip.sampleRate;
  const step = 1 / options.playbackHz;
  // A power of two, so the random loops wrap with a mask.
  const timeCount = 2 ** Math.max(4, Math.round(Math.log2(Math.max(16, options.randomTimes))));
  const times = randomTimes(timeCount, duration, options.seed);
  const mask = timeCount - 1;

  const compressed = CompressedClip.open(bytes);
  const sampler = compressed.createSampler();
  const pose = new Float32Array(compressed.boneCount * POSE_STRIDE);
  const bonepress = timingOf(
    measureMicros(
      (n) => {
        let t = 0;
        for (let i = 0; i < n; i++) {
          sampler.sample(t, pose);
          t += step;
          if (t > duration) t -= duration;
        }
        sink += pose[0];
      },
      measureMs,
      repeats,
    ),
    measureMicros(
      (n) => {
        for (let i = 0; i < n; i++) sampler.sample(times[i & mask], pose);
        sink += pose[0];
      },
      measureMs,
      repeats,
    ),
  );

  const rawCopy = timingOf(
    measureMicros(
      (n) => {
        let t = 0;
        for (let i = 0; i < n; i++) {
          copyRawPose(clip, t, pose);
          t += step;
          if (t > duration) t -= duration;
        }
        sink += pose[0];
      },
      measureMs,
      repeats,
    ),
    measureMicros(
      (n) => {
        for (let i = 0; i < n; i++) copyRawPose(clip, times[i & mask], pose);
        sink += pose[0];
      },
      measureMs,
      repeats,
    ),
  );

  if (!three) return { bonepress, rawCopy };
  const harness = buildThreeHarness(three, clip);
  const { mixer, probe } = harness;
  const threeTiming = timingOf(
    measureMicros(
      (n) => {
        mixer.setTime(0);
        for (let i = 0; i < n; i++) mixer.update(step);
        sink += probe.quaternion.x;
      },
      measureMs,
      repeats,
    ),
    measureMicros(
      (n) => {
        for (let i = 0; i < n; i++) mixer.setTime(times[i & mask]);
        sink += probe.quaternion.x;
      },
      measureMs,
      repeats,
    ),
  );
  mixer.stopAllAction();
  return { bonepress, rawCopy, three: threeTiming, threeClipBytes: harness.clipBytes };
}

/**
 * The raw-copy floor: copies every bone's sample at or before `time` (seconds) out of the
 * clip's float arrays into `outPose`, as a decoder with nothing to decode would.
 */
export function copyRawPose(clip: RawClip, time: number, outPose: Float32Array): void {
  const n = clip.sampleCount;
  let key = Math.floor(time * clip.sampleRate);
  if (key > n - 1) key = n - 1;
  else if (!(key >= 0)) key = 0;
  const boneCount = clip.skeleton.parents.length;
  const r = clip.rotations,
    tr = clip.translations,
    sc = clip.scales;
  for (let b = 0; b < boneCount; b++) {
    const i = b * n + key;
    const o = b * POSE_STRIDE;
    outPose[o] = r[i * 4];
    outPose[o + 1] = r[i * 4 + 1];
    outPose[o + 2] = r[i * 4 + 2];
    outPose[o + 3] = r[i * 4 + 3];
    outPose[o + 4] = tr[i * 3];
    outPose[o + 5] = tr[i * 3 + 1];
    outPose[o + 6] = tr[i * 3 + 2];
    outPose[o + 7] = sc[i * 3];
    outPose[o + 8] = sc[i * 3 + 1];
    outPose[o + 9] = sc[i * 3 + 2];
  }
}

/** A three.js scene playing a raw clip. */
export interface ThreeHarness {
  readonly mixer: Three.AnimationMixer;
  readonly skeleton: Three.Skeleton;
  /** The last bone, read after timed loops. */
  readonly probe: Three.Bone;
  /** Tracks in the three.js clip. */
  readonly trackCount: number;
  /** Bytes of the clip's typed arrays: the shared key times plus every track's values. */
  readonly clipBytes: number;
}

/**
 * Builds a three.js `Skeleton` of `Bone`s for `clip` and an `AnimationMixer` playing it:
 * every bone gets a `QuaternionKeyframeTrack` and a `VectorKeyframeTrack` for its position
 * (plus one for its scale when that varies), all sharing one Float32Array of key times —
 * what a BVH file gives (every joint carries rotation channels), and the clip of the three.js
 * reference figure in bench/references.json (1,178,620 bytes for 22 bones × 1901 samples). Bones are named `b<index>`, so
 * that no clip bone name needs three.js's name sanitising.
 */
export function buildThreeHarness(three: ThreeModule, clip: RawClip): ThreeHarness {
  const n = clip.sampleCount;
  const parents = clip.skeleton.parents;
  const boneCount = parents.length;
  const root = new three.Object3D();
  const bones: Three.Bone[] = [];
  for (let b = 0; b < boneCount; b++) {
    const bone = new three.Bone();
    bone.name = `b${b}`;
    const i = b * n;
    bone.quaternion.set(
      clip.rotations[i * 4],
      clip.rotations[i * 4 + 1],
      clip.rotations[i * 4 + 2],
      clip.rotations[i * 4 + 3],
    );
    bone.position.set(clip.translations[i * 3], clip.translations[i * 3 + 1], clip.translations[i * 3 + 2]);
    bone.scale.set(clip.scales[i * 3], clip.scales[i * 3 + 1], clip.scales[i * 3 + 2]);
    (parents[b] >= 0 ? bones[parents[b]] : root).add(bone);
    bones.push(bone);
  }
  const skeleton = new three.Skeleton(bones);

  const keyTimes = new Float32Array(n);
  for (let s = 0; s < n; s++) keyTimes[s] = s / clip.sampleRate;
  let clipBytes = keyTimes.byteLength;
  const tracks: Three.KeyframeTrack[] = [];
  for (let b = 0; b < boneCount; b++) {
    const rotation = clip.rotations.slice(b * n * 4, (b + 1) * n * 4);
    const position = clip.translations.slice(b * n * 3, (b + 1) * n * 3);
    const scale = clip.scales.slice(b * n * 3, (b + 1) * n * 3);
    const scaleVaries = varies(scale, 3);
    tracks.push(new three.QuaternionKeyframeTrack(`b${b}.quaternion`, keyTimes, rotation));
    tracks.push(new three.VectorKeyframeTrack(`b${b}.position`, keyTimes, position));
    clipBytes += rotation.byteLength + position.byteLength;
    if (scaleVaries) {
      tracks.push(new three.VectorKeyframeTrack(`b${b}.scale`, keyTimes, scale));
      clipBytes += scale.byteLength;
    }
  }
  const animation = new three.AnimationClip('bench', (n - 1) / clip.sampleRate, tracks);
  const mixer = new three.AnimationMixer(root);
  mixer.clipAction(animation).play();
  mixer.setTime(0);
  return { mixer, skeleton, probe: bones[boneCount - 1], trackCount: tracks.length, clipBytes };
}

/** True when some sample of a track of `width`-float values differs from the first. */
function varies(values: Float32Array, width: number): boolean {
  for (let i = width; i < values.length; i++) if (values[i] !== values[i % width]) return true;
  return false;
}

/**
 * What {@link measureColdDecode} needs of a clip: an opened clip that hands out samplers.
 * Structural, so the bench can time any build of the runtime (a copy of an older dist/ to
 * get "before" figures in the same conditions).
 */
export interface TimedClip {
  readonly sampleCount: number;
  readonly sampleRate: number;
  readonly startTime: number;
  readonly boneCount: number;
  createSampler(): { sample(time: number, outPose: Float32Array): Float32Array };
}

/** How {@link measureColdDecode} measures: ACL's `acl_decompressor` cold-cache method. */
export interface ColdDecodeOptions {
  /** Copies of the clip, each opened on its own bytes with its own sampler (ACL: 220). */
  readonly copies: number;
  /** Bytes written between batches so no copy is left in any cache (ACL: 32 MiB). */
  readonly flushBytes: number;
  /** Decodes per repetition and time (ACL: 10,000). */
  readonly iterations: number;
  /** Repetitions per time; the median counts (ACL: 3). */
  readonly repetitions: number;
  /** Evenly spaced times over the sampled span, first and last sample included (ACL: 100). */
  readonly times: number;
}

/** ACL's method (its decompression benchmark's cold and warm loops). */
export const COLD_DECODE_DEFAULTS: ColdDecodeOptions = {
  copies: 220,
  flushBytes: 32 * 1024 * 1024,
  iterations: 10_000,
  repetitions: 3,
  times: 100,
};

/** Nanoseconds per whole pose of one clip, cold and warm. */
export interface ColdDecodeTiming {
  /** Median over the times of the median over repetitions of the mean wall ns per decode, cache flushed between batches. */
  readonly coldNs: number;
  /** The same loop on one copy, never flushed. */
  readonly warmNs: number;
  /**
   * The same two figures in process CPU time: on a machine shared with other processes,
   * wall time also counts the time this thread waited for a core.
   */
  readonly coldCpuNs: number;
  readonly warmCpuNs: number;
}

/** Process CPU time in µs (user + system). */
function cpuMicros(): number {
  const u = process.cpuUsage();
  return u.user + u.system;
}

let flushBuffer: Int32Array | undefined;

/** Writes then reads `bytes` bytes, evicting everything else from the caches. */
function flushCaches(bytes: number, round: number): void {
  if (!flushBuffer || flushBuffer.byteLength !== bytes) flushBuffer = new Int32Array(bytes >>> 2);
  const b = flushBuffer;
  b.fill(round);
  let s = 0;
  for (let i = 0; i < b.length; i += 16) s += b[i];
  sink += s;
}

/**
 * Whole-pose decode time of one clip with ACL's cold-cache method: `copies` copies of the
 * clip (bytes and open-time tables each, then a sampler each, made one after another as
 * ACL's array of contexts is), for each of `times` evenly spaced
 * times and each repetition, `iterations` decodes that go round the copies, the caches
 * flushed before each round (outside the timed region) so every decode starts cold. Each
 * round of `copies` decodes is timed as one batch. The warm figure runs the same loop on
 * the first copy without flushing. Both are ns per pose.
 */
export function measureColdDecode(
  bytes: Uint8Array,
  open: (bytes: Uint8Array) => TimedClip,
  options: ColdDecodeOptions = COLD_DECODE_DEFAULTS,
): ColdDecodeTiming {
  const { copies, iterations, repetitions } = options;
  const clips: TimedClip[] = [];
  const samplers: { sample(time: number, outPose: Float32Array): Float32Array }[] = [];
  for (let c = 0; c < copies; c++) clips.push(open(bytes.slice()));
  // The samplers are made together after the copies, as ACL's harness allocates its
  // decompression contexts as one array: each copy's state is then where a crowd's would be.
  for (let c = 0; c < copies; c++) samplers.push(clips[c].createSampler());
  const first = clips[0];
  const span = first.sampleCount > 1 ? (first.sampleCount - 1) / first.sampleRate : 0;
  const times = new Float64Array(options.times);
  for (let i = 0; i < times.length; i++)
    times[i] = first.startTime + (times.length > 1 ? (span * i) / (times.length - 1) : 0);
  const pose = new Float32Array(first.boneCount * POSE_STRIDE);
  // Warm-up: every copy at every time, so each sampler has touched what it will touch and
  // the decoder is optimised before anything is timed.
  for (let i = 0; i < times.length; i++) for (let c = 0; c < copies; c++) samplers[c].sample(times[i], pose);

  const cold: number[] = [],
    warm: number[] = [],
    coldCpu: number[] = [],
    warmCpu: number[] = [];
  const reps: number[] = [],
    repsCpu: number[] = [];
  let round = 0;
  for (let i = 0; i < times.length; i++) {
    const t = times[i];
    reps.length = 0;
    repsCpu.length = 0;
    for (let r = 0; r < repetitions; r++) {
      let ms = 0,
        us = 0;
      for (let done = 0; done < iterations; ) {
        const batch = Math.min(copies, iterations - done);
        flushCaches(options.flushBytes, ++round);
        const cpuStarted = cpuMicros();
        const started = performance.now();
        for (let c = 0; c < batch; c++) samplers[c].sample(t, pose);
        ms += performance.now() - started;
        us += cpuMicros() - cpuStarted;
        done += batch;
      }
      reps.push((ms * 1e6) / iterations);
      repsCpu.push((us * 1e3) / iterations);
    }
    cold.push(median(reps));
    coldCpu.push(median(repsCpu));
    reps.length = 0;
    repsCpu.length = 0;
    const s0 = samplers[0];
    for (let r = 0; r < repetitions; r++) {
      const cpuStarted = cpuMicros();
      const started = performance.now();
      for (let k = 0; k < iterations; k++) s0.sample(t, pose);
      reps.push(((performance.now() - started) * 1e6) / iterations);
      repsCpu.push(((cpuMicros() - cpuStarted) * 1e3) / iterations);
    }
    warm.push(median(reps));
    warmCpu.push(median(repsCpu));
  }
  sink += pose[0];
  return { coldNs: median(cold), warmNs: median(warm), coldCpuNs: median(coldCpu), warmCpuNs: median(warmCpu) };
}

/** The five corpus clips compared with ACL's decoder (short and long, walks, runs and a dance). */
export const COLD_DECODE_CLIPS = [
  'dash_normal_001',
  'run_old_001',
  'walk_tired_002',
  'walk-back_sad_001',
  'dance-short_normal_001',
] as const;

/**
 * ACL's method shortened for the median over a whole corpus (10 times, 2,200 decodes = 10
 * rounds of the 220 copies, 1 repetition), so that 174 clips take minutes, not hours.
 */
export const COLD_CORPUS_DEFAULTS: ColdDecodeOptions = {
  ...COLD_DECODE_DEFAULTS,
  times: 10,
  iterations: 2_200,
  repetitions: 1,
};

/** Cold and warm figures of the named clips and the corpus median. */
export interface ColdDecodeReport {
  /** Method of the named clips. */
  readonly method: ColdDecodeOptions;
  /** Method of each clip of the corpus median. */
  readonly corpusMethod: ColdDecodeOptions;
  /** The named clips found in the corpus, in the order named. */
  readonly clips: readonly ({ readonly name: string; readonly id: string } & ColdDecodeTiming)[];
  /** Median over every clip with at least 2 samples; null when there is none. */
  readonly corpus: ({ readonly clips: number } & ColdDecodeTiming) | null;
}

/** True when corpus id `id` (a relative path) is clip `name`: its base name without extension is `name` or ends with `_name`. */
export function isClipNamed(id: string, name: string): boolean {
  const base = id.slice(id.lastIndexOf('/') + 1).replace(/\.[^.]*$/, '');
  return base === name || base.endsWith(`_${name}`);
}

/**
 * {@link measureColdDecode} on each clip of `entries` named in `names` with `method`, and on
 * every clip with at least 2 samples with `corpusMethod` for the corpus median.
 * `onClip` is called after each clip measured for the median.
 */
export function measureColdCorpus(
  entries: readonly { readonly id: string; readonly bytes: Uint8Array }[],
  open: (bytes: Uint8Array) => TimedClip,
  names: readonly string[] = COLD_DECODE_CLIPS,
  method: ColdDecodeOptions = COLD_DECODE_DEFAULTS,
  corpusMethod: ColdDecodeOptions = COLD_CORPUS_DEFAULTS,
  onClip?: (done: number, total: number) => void,
): ColdDecodeReport {
  const clips: ({ name: string; id: string } & ColdDecodeTiming)[] = [];
  for (const name of names) {
    const entry = entries.find((e) => isClipNamed(e.id, name));
    if (entry && open(entry.bytes).sampleCount >= 2)
      clips.push({ name, id: entry.id, ...measureColdDecode(entry.bytes, open, method) });
  }
  const all: ColdDecodeTiming[] = [];
  entries.forEach((entry, i) => {
    if (open(entry.bytes).sampleCount >= 2) all.push(measureColdDecode(entry.bytes, open, corpusMethod));
    onClip?.(i + 1, entries.length);
  });
  const med = (pick: (t: ColdDecodeTiming) => number): number => median(all.map(pick));
  const corpus =
    all.length === 0
      ? null
      : {
          clips: all.length,
          coldNs: med((t) => t.coldNs),
          warmNs: med((t) => t.warmNs),
          coldCpuNs: med((t) => t.coldCpuNs),
          warmCpuNs: med((t) => t.warmCpuNs),
        };
  return { method, corpusMethod, clips, corpus };
}
