/**
 * The additive bench behind `npm run bench:additive`: every clip of a corpus made additive
 * against its first frame and measured over the next clip of the corpus as its base (the
 * two played together from time 0, the base looping), against the same clip stored
 * absolute. Each additive clip's error is measured twice: by the compressor (the runtime
 * decoder's keys and interpolation applied to the base, at the samples and between them)
 * and independently here, in float64 at random times, with three.js's own quaternion
 * product and its additive arithmetic (makeClipAdditive's deltas, the mixer's blend at
 * weight 1) rather than the library's.
 *
 *   npm run bench:additive -- <corpus folder of .bvh> [--json] [--times 200]
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import { clipEndTime, clipStartTime, type RawClip } from '../clip/raw-clip.js';
import { POSE_STRIDE } from '../clip/skeleton.js';
import { compress } from '../compress/index.js';
import { AFFINE_STRIDE, poseToObject, virtualVertexError } from '../metric/error-metric.js';
import { Quaternion } from 'three';

import { readBvh } from '../readers/bvh.js';
import { CompressedClip } from '../runtime/compressed-clip.js';
import { mulberry32 } from '../clip/random.js';

/**
 * The source's local pose at `time` (seconds on its timeline), in float64: slerp and lerp
 * between its two samples around `time`, held outside them. For clips of samples only (BVH).
 */
function sourcePoseAt(clip: RawClip, time: number, out: Float64Array): void {
  const n = clip.sampleCount;
  const at = Math.min(n - 1, Math.max(0, (time - clipStartTime(clip)) * clip.sampleRate));
  const k = Math.min(n - 2, Math.floor(at));
  const alpha = n > 1 ? at - k : 0;
  const k1 = Math.min(n - 1, k + 1);
  for (let b = 0; b < clip.skeleton.parents.length; b++) {
    const o = b * POSE_STRIDE;
    const r0 = (b * n + Math.max(0, k)) * 4,
      r1 = (b * n + k1) * 4;
    let dot = 0;
    for (let c = 0; c < 4; c++) dot += clip.rotations[r0 + c] * clip.rotations[r1 + c];
    const sign = dot < 0 ? -1 : 1;
    const theta = Math.acos(Math.min(1, Math.abs(dot)));
    const w0 = theta < 1e-9 ? 1 - alpha : Math.sin((1 - alpha) * theta) / Math.sin(theta);
    const w1 = theta < 1e-9 ? alpha : Math.sin(alpha * theta) / Math.sin(theta);
    for (let c = 0; c < 4; c++) out[o + c] = w0 * clip.rotations[r0 + c] + sign * w1 * clip.rotations[r1 + c];
    const len = Math.hypot(out[o], out[o + 1], out[o + 2], out[o + 3]);
    for (let c = 0; c < 4; c++) out[o + c] /= len;
    for (const [values, at3] of [
      [clip.translations, 4],
      [clip.scales, 7],
    ] as const) {
      const v0 = (b * n + Math.max(0, k)) * 3,
        v1 = (b * n + k1) * 3;
      for (let c = 0; c < 3; c++) out[o + at3 + c] = values[v0 + c] + (values[v1 + c] - values[v0 + c]) * alpha;
    }
  }
}

/** three.js's quaternion product dst = a · b (typed for number[]; it reads and writes any indexable array). */
const multiplyFlat = Quaternion.multiplyQuaternionsFlat as unknown as (
  dst: Float64Array,
  dstOffset: number,
  a: ArrayLike<number>,
  aOffset: number,
  b: ArrayLike<number>,
  bOffset: number,
) => void;

/**
 * Writes three.js's additive blend at weight 1 of `delta` (three.js's values: rotation
 * conj(ref) · q, translation and scale differences) over `base` into `out`.
 */
function blendAdditive(base: Float64Array, delta: Float64Array, out: Float64Array): void {
  for (let o = 0; o < base.length; o += POSE_STRIDE) {
    multiplyFlat(out, o, base, o, delta, o);
    for (let c = 4; c < POSE_STRIDE; c++) out[o + c] = base[o + c] + delta[o + c];
  }
}

/** What {@link checkAdditive} measured. */
export interface AdditiveCheck {
  /** Largest virtual-vertex error of base ∘ decoded against base ∘ source delta over the times, clip units. */
  maxError: number;
  /** The time of that error (seconds on the clip's timeline). */
  worstTime: number;
}

/**
 * Measures an additive compressed clip at `times` random playback times over one period of
 * `source`, independently of the compressor: the source's delta against its frame
 * `referenceFrame` as three.js's makeClipAdditive takes it, and the decoded delta (scales
 * stored plus one), each blended over `base` (a clip played alongside from time 0, looping,
 * or undefined: the reference pose) as three.js's mixer blends at weight 1, compared in
 * object space with the virtual-vertex metric at `shellDistances` (default the source's).
 */
export function checkAdditive(
  source: RawClip,
  compressed: CompressedClip,
  referenceFrame: number,
  base: RawClip | undefined,
  times: number,
  seed = 1,
  shellDistances: Float32Array = source.skeleton.shellDistances,
): AdditiveCheck {
  const parents = source.skeleton.parents;
  const stride = parents.length * POSE_STRIDE;
  const reference = new Float64Array(stride);
  sourcePoseAt(source, clipStartTime(source) + referenceFrame / source.sampleRate, reference);
  const sourcePose = new Float64Array(stride),
    basePose = new Float64Array(stride),
    delta = new Float64Array(stride),
    expected = new Float64Array(stride),
    actual = new Float64Array(stride);
  const decoded = new Float32Array(stride);
  const expectedObject = new Float64Array(parents.length * AFFINE_STRIDE),
    actualObject = new Float64Array(parents.length * AFFINE_STRIDE);
  const sampler = compressed.createSampler();
  const random = mulberry32(seed);
  const start = clipStartTime(source),
    end = clipEndTime(source);
  const report: AdditiveCheck = { maxError: 0, worstTime: 0 };
  for (let i = 0; i < times; i++) {
    const time = start + random() * (end - start);
    sourcePoseAt(source, time, sourcePose);
    if (base) {
      const period = clipEndTime(base);
      sourcePoseAt(base, period > 0 ? time % period : 0, basePose);
    } else basePose.set(reference);
    // makeClipAdditive: conj(normalised reference) · q, and differences.
    for (let o = 0; o < stride; o += POSE_STRIDE) {
      const len = Math.hypot(reference[o], reference[o + 1], reference[o + 2], reference[o + 3]);
      const conj = [-reference[o] / len, -reference[o + 1] / len, -reference[o + 2] / len, reference[o + 3] / len];
      multiplyFlat(delta, o, conj, 0, sourcePose, o);
      for (let c = 4; c < POSE_STRIDE; c++) delta[o + c] = sourcePose[o + c] - reference[o + c];
    }
    blendAdditive(basePose, delta, expected);
    sampler.sample(time, decoded, { looping: 'clamp' });
    for (let o = 0; o < stride; o++) delta[o] = decoded[o] - (o % POSE_STRIDE >= 7 ? 1 : 0);
    blendAdditive(basePose, delta, actual);
    poseToObject(expected, parents, expectedObject);
    poseToObject(actual, parents, actualObject);
    for (let b = 0; b < parents.length; b++) {
      const e = virtualVertexError(
        expectedObject,
        b * AFFINE_STRIDE,
        actualObject,
        b * AFFINE_STRIDE,
        shellDistances[b],
      );
      if (e > report.maxError) {
        report.maxError = e;
        report.worstTime = time;
      }
    }
  }
  return report;
}

/** One corpus clip of the bench. */
export interface AdditiveBenchRow {
  clip: string;
  base: string;
  absoluteBytes: number;
  additiveBytes: number;
  /** additiveBytes / absoluteBytes. */
  sizeRatio: number;
  /** The compressor's figure for base ∘ additive (any time), clip units. */
  maxError: number;
  /** {@link checkAdditive} at random times. */
  checkedError: number;
  threshold: number;
}

/** Runs the bench over `clips` (each made additive against its first frame, over the next clip as base). */
export function runAdditiveBench(clips: readonly RawClip[], times: number): AdditiveBenchRow[] {
  return clips.map((clip, i) => {
    const base = clips[(i + 1) % clips.length];
    const absolute = compress(clip);
    const additive = compress(clip, { additive: { reference: 0, base } });
    const check = checkAdditive(clip, CompressedClip.open(additive.bytes), 0, base, times, i + 1);
    return {
      clip: clip.name,
      base: base.name,
      absoluteBytes: absolute.bytes.length,
      additiveBytes: additive.bytes.length,
      sizeRatio: additive.bytes.length / absolute.bytes.length,
      maxError: additive.stats.maxError,
      checkedError: check.maxError,
      threshold: additive.stats.threshold,
    };
  });
}

function main(): void {
  const args = process.argv.slice(2);
  const json = args.includes('--json');
  const timesAt = args.indexOf('--times');
  const times = timesAt >= 0 ? Number(args[timesAt + 1]) : 200;
  if (!(Number.isInteger(times) && times > 0)) throw new Error('--times needs a whole number > 0');
  const corpus = args.find((a, i) => !a.startsWith('--') && (timesAt < 0 || i !== timesAt + 1));
  if (corpus === undefined) throw new Error('usage: bench:additive -- <folder of .bvh> [--json] [--times 200]');
  const files = readdirSync(corpus)
    .filter((f) => f.toLowerCase().endsWith('.bvh'))
    .sort();
  if (files.length < 2) throw new Error(`${corpus}: needs two .bvh files or more (one is the other's base)`);
  const clips = files.map((f) => readBvh(readFileSync(join(corpus, f), 'utf8'), f));
  const rows = runAdditiveBench(clips, times);
  const sum = (f: (r: AdditiveBenchRow) => number) => rows.reduce((s, r) => s + f(r), 0);
  const summary = {
    clips: rows.length,
    absoluteBytes: sum((r) => r.absoluteBytes),
    additiveBytes: sum((r) => r.additiveBytes),
    maxError: Math.max(...rows.map((r) => r.maxError)),
    checkedError: Math.max(...rows.map((r) => r.checkedError)),
    overThreshold: rows.filter((r) => r.maxError > r.threshold || r.checkedError > r.threshold).length,
  };
  if (json) {
    process.stdout.write(`${JSON.stringify({ corpus, times, summary, rows }, null, 1)}\n`);
    return;
  }
  const lines = rows.map(
    (r) =>
      `${r.clip.padEnd(44)} ${String(r.additiveBytes).padStart(7)} B vs ${String(r.absoluteBytes).padStart(7)} B (${r.sizeRatio.toFixed(3)})  max ${r.maxError.toFixed(5)}  checked ${r.checkedError.toFixed(5)}`,
  );
  process.stdout.write(
    [
      `corpus ${corpus}: ${rows.length} clips, each additive against its first frame over the next clip as base`,
      ...lines,
      `total additive ${summary.additiveBytes} B vs absolute ${summary.absoluteBytes} B (${(summary.additiveBytes / summary.absoluteBytes).toFixed(3)})`,
      `max error of base ∘ additive: ${summary.maxError.toFixed(5)} (compressor, any time), ${summary.checkedError.toFixed(5)} (float64 check at ${times} random times per clip); clips over the threshold: ${summary.overThreshold}`,
      '',
    ].join('\n'),
  );
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main();
