/**
 * The compressor's measure kernel (src/compress/measure-kernel.wat) against the JavaScript
 * it stands for: each of its functions gives the same float64s, and compress() gives the
 * same bytes and report with it as without it (the compressor loaded a second time with the
 * kernel's bytes replaced by an invalid module, as where WebAssembly is missing).
 */
import { describe, expect, it, vi } from 'vitest';

import { bodyFaceFingersClip, chainClip } from '../../src/bench/big-rigs.js';
import type { RawClip } from '../../src/clip/raw-clip.js';
import { POSE_STRIDE } from '../../src/clip/skeleton.js';
import { SampleReference, roundingTerm, sampleReferenceSpecs } from '../../src/compress/between.js';
import { BIT_RATE_LADDERS } from '../../src/compress/bitrate.js';
import { compress } from '../../src/compress/index.js';
import { measureKernel } from '../../src/compress/measure-kernel.js';
import { sharedSampleObjects } from '../../src/compress/verify.js';
import type { CompressOptions } from '../../src/compress/options.js';
import { preprocessRotations } from '../../src/compress/preprocess.js';
import {
  DEQUANTIZATION_STRIDE,
  constantComponent,
  dequantization,
  reconstructTrackSegment,
  type TrackSlot,
} from '../../src/compress/quantize.js';
import { extractClipRanges, extractSegmentRanges, gatherAnimatedTracks } from '../../src/compress/range.js';
import { segmentClip } from '../../src/compress/segment.js';
import { RAW_BITS, TRACKS_PER_BONE } from '../../src/runtime/format.js';
import {
  AFFINE_STRIDE,
  BONE_ERRORS,
  clipToObject,
  composeAffine,
  measureBoneErrors,
  poseToAffine,
  poseToObject,
  shellBoundError,
  virtualVertexError,
} from '../../src/metric/error-metric.js';
import { readGltf } from '../../src/readers/gltf.js';
import { fixtureNames, loadFixture } from '../utils/clips.js';
import { makeRigs } from '../utils/gltf-rigs.js';
import { makeSyntheticClip, mulberry32 } from '../utils/synthetic.js';

const TIMEOUT = 120_000;

/** compress() and measureKernel of a second copy of the compressor whose kernel does not compile. */
async function withoutKernel(): Promise<{
  compress: typeof compress;
  measureKernel: typeof measureKernel;
  roundingTerm: typeof roundingTerm;
}> {
  vi.resetModules();
  vi.doMock('../../src/compress/measure-kernel-wasm.js', () => ({ MEASURE_KERNEL_WASM: '', MEASURE_KERNEL_SHIFT: 0 }));
  const plain = {
    compress: (await import('../../src/compress/index.js')).compress,
    measureKernel: (await import('../../src/compress/measure-kernel.js')).measureKernel,
    roundingTerm: (await import('../../src/compress/between.js')).roundingTerm,
  };
  vi.doUnmock('../../src/compress/measure-kernel-wasm.js');
  vi.resetModules();
  return plain;
}

/** Count of the numbers of `a` and `b` not the same float64 (NaN as NaN). */
function differing(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let count = 0;
  for (let i = 0; i < a.length; i++) if (!Object.is(a[i], b[i])) count++;
  return count + Math.abs(a.length - b.length);
}

/** Object transforms of random local transforms (rotations of length near 1, scales near 1) of a random tree. */
function randomPose(boneCount: number, seed: number): { pose: Float64Array; parents: Int32Array } {
  const random = mulberry32(seed);
  const parents = Int32Array.from({ length: boneCount }, (_, b) => (b === 0 ? -1 : Math.floor(random() * b)));
  const pose = new Float64Array(boneCount * POSE_STRIDE);
  for (let b = 0; b < boneCount; b++) {
    const q = [random() - 0.5, random() - 0.5, random() - 0.5, random() - 0.5];
    const length = Math.hypot(...q) * (1 + (random() - 0.5) * 1e-6);
    const p = b * POSE_STRIDE;
    for (let i = 0; i < 4; i++) pose[p + i] = q[i] / length;
    for (let i = 4; i < 7; i++) pose[p + i] = (random() - 0.5) * 40;
    for (let i = 7; i < 10; i++) pose[p + i] = 1 + (random() - 0.5) * 0.2;
  }
  return { pose, parents };
}

describe('the compressor measure kernel', () => {
  it('compiles here, and the compressor loaded without it measures in JavaScript', async () => {
    expect(measureKernel('search', { m: ['f64', 12] })).toBeDefined();
    expect((await withoutKernel()).measureKernel('search', { m: ['f64', 12] })).toBeUndefined();
  });

  it("replaces a user's memory that is too small, leaving views on the old one whole, and zeroes what it hands out but copies", () => {
    const small = measureKernel('between', { a: ['f64', 16] })!;
    small.buffers.a.fill(7);
    const again = measureKernel('between', { a: ['f64', 16] })!;
    // The same memory, the buffer handed out again zeroed.
    expect(again.buffers.a.buffer).toBe(small.buffers.a.buffer);
    expect(Array.from(again.buffers.a)).toEqual(new Array(16).fill(0));
    again.buffers.a.fill(7);
    // One its user overwrites whole ('copied') is handed out as the memory holds it.
    expect(Array.from(measureKernel('between', { a: ['f64', 16, 'copied'] })!.buffers.a)).toEqual(
      new Array(16).fill(7),
    );
    // Above any memory kept (16 MiB at most): a memory of its own, a power of two, not kept.
    const large = measureKernel('between', { a: ['f64', 16], big: ['u8', 40 << 20] })!;
    expect(large.buffers.big.buffer).not.toBe(small.buffers.a.buffer);
    expect(large.buffers.big.buffer.byteLength).toBe(64 << 20);
    expect(small.buffers.a.length).toBe(16);
    expect(Array.from(small.buffers.a)).toEqual(new Array(16).fill(7));
    expect(measureKernel('between', { a: ['f64', 16] })!.buffers.a.buffer).toBe(small.buffers.a.buffer);
  });

  it(
    'compress() gives the same bytes and report with the kernel and without it: fixtures, every effort, the shell metric, additive clips, a chain, a big rig, glTF keys',
    async () => {
      const plain = await withoutKernel();
      const cases: [string, RawClip, CompressOptions][] = fixtureNames().map((f) => [f, loadFixture(f), {}]);
      const first = loadFixture(fixtureNames()[0]);
      const second = loadFixture(fixtureNames()[1]);
      cases.push(
        ['fast', first, { effort: 'fast' }],
        ['best', second, { effort: 'best' }],
        ['shell metric', first, { metric: 'shell' }],
        ['additive', second, { additive: { base: first } }],
        ['60-joint chain', chainClip(60, 40), {}],
        ['300-bone rig', bodyFaceFingersClip(24), {}],
        ['animated scales', makeSyntheticClip({ boneCount: 30, sampleCount: 50, animatedScale: true, seed: 4 }), {}],
      );
      for (const rig of await makeRigs())
        for (const clip of await readGltf(rig.glb, `${rig.name}.glb`))
          cases.push([`${rig.name}/${clip.name}`, clip, {}]);
      for (const [label, clip, options] of cases) {
        const a = compress(clip, options),
          b = plain.compress(clip, options);
        expect(differing(a.bytes, b.bytes), label).toBe(0);
        expect({ ...a.stats, seconds: 0 }, label).toEqual({ ...b.stats, seconds: 0 });
      }
    },
    TIMEOUT,
  );

  it('measure: a bone over the keys, as composeAffine and virtualVertexError, stopping at the first key over the threshold', () => {
    const B = 5,
      keys = 16,
      stride = B * AFFINE_STRIDE;
    const size = ['f64', keys * stride] as const;
    const kernel = measureKernel('search', { object: size, local: size, raw: size, out: size })!;
    const { object, local, raw, out } = kernel.buffers;
    const random = mulberry32(3);
    for (const buffer of [object, local, raw]) for (let i = 0; i < buffer.length; i++) buffer[i] = (random() - 0.5) * 3;
    const expected = new Float64Array(out.length);
    const d = 2.5;
    for (const [b, p] of [
      [3, 1],
      [0, -1],
    ]) {
      const errors: number[] = [];
      for (let k = 0; k < keys; k++) {
        const m = (k * B + b) * AFFINE_STRIDE;
        if (p >= 0) composeAffine(object, (k * B + p) * AFFINE_STRIDE, local, m, expected, m);
        else expected.set(local.subarray(m, m + AFFINE_STRIDE), m);
        errors.push(virtualVertexError(raw, m, expected, m, d));
      }
      const call = (threshold: number): number =>
        kernel.exports.measure(
          p >= 0 ? object.byteOffset + p * AFFINE_STRIDE * 8 : 0,
          local.byteOffset + b * AFFINE_STRIDE * 8,
          out.byteOffset + b * AFFINE_STRIDE * 8,
          raw.byteOffset + b * AFFINE_STRIDE * 8,
          stride * 8,
          keys,
          d,
          threshold,
        );
      expect(call(Number.POSITIVE_INFINITY)).toBe(-1);
      expect(differing(out, expected)).toBe(0);
      const peak = Math.max(...errors);
      expect(kernel.peak[0]).toBe(peak);
      expect(kernel.peakKey[0]).toBe(errors.indexOf(peak));
      // Just below the seventh key's error: the first key above it.
      const threshold = [...errors].sort((x, y) => x - y)[6] * (1 - 1e-12);
      expect(call(threshold)).toBe(errors.findIndex((e) => e > threshold));
    }
  });

  it('poseToObject and measureBones: the same float64s as poseToObject and measureBoneErrors, every mode, the eigenvalue branches too', () => {
    const B = 40;
    const perBone = ['f64', B] as const;
    const kernel = measureKernel('between', {
      pose: ['f64', B * POSE_STRIDE],
      ref: ['f64', B * AFFINE_STRIDE],
      dec: ['f64', B * AFFINE_STRIDE],
      parentsAt: ['i32', B],
      needed: ['u8', B],
      shells: perBone,
      worst: perBone,
      worstShell: perBone,
      fraction: perBone,
      grow: perBone,
    })!;
    const { pose, ref, dec, parentsAt, needed, shells, worst, worstShell, fraction, grow } = kernel.buffers;
    const random = mulberry32(11);
    const source = randomPose(B, 5);
    pose.set(source.pose);
    parentsAt.set(source.parents);
    needed.set(Array.from({ length: B }, (_, b) => Number(b % 3 !== 1)));
    for (let b = B - 1; b > 0; b--) if (needed[b] === 1) needed[source.parents[b]] = 1;
    const expected = new Float64Array(B * AFFINE_STRIDE);
    for (const mask of [undefined, needed]) {
      dec.fill(Number.NaN);
      expected.fill(Number.NaN);
      kernel.exports.poseToObject(pose.byteOffset, dec.byteOffset, parentsAt.byteOffset, mask ? mask.byteOffset : 0, B);
      poseToObject(pose, source.parents, expected, 0, mask);
      expect(differing(dec, expected)).toBe(0);
    }
    // The reference: the decoded transforms moved a little, and bones whose difference takes
    // each branch: none (D = 0), diagonal (no off-diagonal terms), rank one, the rest general.
    kernel.exports.poseToObject(pose.byteOffset, dec.byteOffset, parentsAt.byteOffset, 0, B);
    for (let i = 0; i < ref.length; i++) ref[i] = dec[i] + (random() - 0.5) * 1e-3;
    ref.set(dec.subarray(0, AFFINE_STRIDE), 0);
    for (let i = 0; i < 9; i++) ref[AFFINE_STRIDE + i] = dec[AFFINE_STRIDE + i] + (i % 4 === 0 ? 1e-4 * (i + 1) : 0);
    for (let c = 0; c < 3; c++)
      for (let r = 0; r < 3; r++)
        ref[2 * AFFINE_STRIDE + c * 3 + r] = dec[2 * AFFINE_STRIDE + c * 3 + r] + 1e-4 * (r + 1) * (c + 2);
    for (let b = 0; b < B; b++) {
      shells[b] = 2 + random() * 10;
      grow[b] = 1 + random() * 0.3;
    }
    const live = needed;
    for (const [mode, shellFloor] of [
      [0, 0],
      [0, 0.01],
      [0, Number.POSITIVE_INFINITY],
      [1, 0],
      [2, 0],
    ]) {
      for (const mask of [undefined, live]) {
        const w = Float64Array.from({ length: B }, () => random() * 0.02);
        const ws = Float64Array.from({ length: B }, () => random() * 0.02);
        worst.set(w);
        worstShell.set(ws);
        fraction.fill(0.5);
        const wf = new Float64Array(B).fill(0.5);
        const alpha = 0.25;
        kernel.exports.measureBones(
          ref.byteOffset,
          dec.byteOffset,
          B,
          mask ? mask.byteOffset : 0,
          shells.byteOffset,
          worst.byteOffset,
          worstShell.byteOffset,
          fraction.byteOffset,
          grow.byteOffset,
          shellFloor,
          alpha,
          mode,
        );
        const io = new Float64Array(BONE_ERRORS.COUNT);
        for (let b = 0; b < B; b++) {
          if (mask && mask[b] === 0) continue;
          const o = b * AFFINE_STRIDE;
          let e: number;
          if (mode === 1) e = virtualVertexError(ref, o, dec, o, shells[b]);
          else if (mode === 2) e = shellBoundError(ref, o, dec, o, shells[b]);
          else {
            io[BONE_ERRORS.DISTANCE] = shells[b];
            io[BONE_ERRORS.FLOOR] = Math.max(ws[b], shellFloor / grow[b]);
            measureBoneErrors(ref, o, dec, o, io);
            e = io[BONE_ERRORS.VERTEX];
            if (io[BONE_ERRORS.SHELL] > ws[b]) ws[b] = io[BONE_ERRORS.SHELL];
          }
          if (e > w[b]) {
            w[b] = e;
            wf[b] = alpha;
          }
        }
        const label = `mode ${mode}, floor ${shellFloor}, ${mask ? 'some bones' : 'every bone'}`;
        expect(differing(worst, w), label).toBe(0);
        expect(differing(worstShell, ws), label).toBe(0);
        expect(differing(fraction, wf), label).toBe(0);
      }
    }
  });

  it("referenceObjects: a clip's own samples as SampleReference works them out in JavaScript, to the bit", () => {
    const clip = makeSyntheticClip({ boneCount: 24, sampleCount: 12, animatedScale: true, seed: 9 });
    const boneCount = clip.skeleton.parents.length,
      n = clip.sampleCount;
    // STEP tracks, and two bones turning 1.2 and 3.6 rad per interval (weights from Math.acos and Math.sin).
    const stepMask = new Uint8Array(boneCount * 3).map((_, t) => Number(t % 4 === 1 || t % 7 === 0));
    const rotations = Float32Array.from(clip.rotations);
    for (const [b, half] of [
      [0, 0.6],
      [1, 1.8],
    ])
      for (let s = 0; s < n; s++) rotations.set([Math.sin(s * half), 0, 0, Math.cos(s * half)], (b * n + s) * 4);
    for (const source of [clip, { ...clip, stepMask, rotations }]) {
      const inJs = new SampleReference(source),
        inKernel = new SampleReference(source);
      const kernel = measureKernel('between', {
        out: ['f64', boneCount * AFFINE_STRIDE],
        needed: ['u8', boneCount],
        parents: ['i32', boneCount],
        ...sampleReferenceSpecs(source),
      })!;
      const { out, needed, parents } = kernel.buffers;
      parents.set(source.skeleton.parents);
      inKernel.place(kernel.exports, kernel.buffers, parents.byteOffset);
      needed.set(Array.from({ length: boneCount }, (_, b) => Number(b % 3 === 2)));
      for (let b = boneCount - 1; b >= 0; b--)
        if (needed[b] === 1 && source.skeleton.parents[b] >= 0) needed[source.skeleton.parents[b]] = 1;
      const expected = new Float64Array(boneCount * AFFINE_STRIDE);
      let differ = 0;
      for (let j = 0; j + 1 < n; j++) {
        const k = (j * 5) % (n - 1);
        for (const alpha of [0.5, 0.25, 0.75, 0, 1, 1 / 32, 0.3]) {
          for (const mask of [needed, undefined]) {
            out.fill(Number.NaN);
            expected.fill(Number.NaN);
            inKernel.objectAt(k, alpha, out, mask);
            inJs.objectAt(k, alpha, expected, mask && Uint8Array.from(mask));
            differ += differing(out, expected);
          }
        }
      }
      expect(differ).toBe(0);
    }
  });

  it("rebuild: reconstructTrackSegment's floats to the bit, at every rate, dropped component, first key and key count", () => {
    const clip = loadFixture(fixtureNames()[0]);
    const boneCount = clip.skeleton.parents.length;
    // Every track as animated; a short last segment besides the full ones.
    const layout = segmentClip(Math.min(clip.sampleCount, 16 * 3 + 5));
    const animated = Int32Array.from({ length: boneCount * TRACKS_PER_BONE }, (_, t) => t);
    const tracks = gatherAnimatedTracks(clip, preprocessRotations(clip), animated, 'mean', layout);
    const clipRanges = extractClipRanges(tracks, layout);
    const ranges = extractSegmentRanges(tracks, clipRanges, layout);
    const maxKeys = layout.maxSize,
      stride = 5;
    const kernel = measureKernel('search', {
      values: ['f32', maxKeys * 4],
      planes: ['f32', 3 * (maxKeys + 3)],
      dq: ['f64', 3 * DEQUANTIZATION_STRIDE],
      out: ['f32', maxKeys * stride],
    })!;
    const { values, planes, dq, out } = kernel.buffers;
    const expected = new Float32Array(out.length);
    const bits = new Uint8Array(3);
    let differ = 0,
      cases = 0;
    for (let j = 0; j < tracks.length; j += 5) {
      const t = tracks[j];
      for (let segment = 0; segment < layout.count; segment++) {
        const size = layout.sizes[segment];
        const kept = t.drop[segment];
        for (const drop of t.width === 4 ? [0, 1, 2, 3] : [3]) {
          t.drop[segment] = drop;
          for (const rate of BIT_RATE_LADDERS.acl21)
            for (const [first, count] of [
              [0, size],
              [3, 1],
              [1, size - 2],
            ]) {
              const at: TrackSlot = {
                j,
                trackCount: tracks.length,
                segment,
                start: layout.starts[segment] + first,
                size: count,
              };
              expected.fill(Number.NaN);
              out.fill(Number.NaN);
              reconstructTrackSegment(t, at, rate, clipRanges, ranges, expected, 1, stride);
              values.set(t.values.subarray(at.start * t.width, (at.start + count) * t.width));
              const mode = rate === RAW_BITS ? 1 : rate === 0 ? 2 : 0;
              if (mode === 2)
                for (let slot = 0; slot < 3; slot++) dq[slot] = constantComponent(t, at, slot, clipRanges, ranges);
              if (mode === 0) dequantization(t, at, rate, clipRanges, ranges, dq, 0, bits);
              const [rx, ry, rz, rw] = t.ref;
              kernel.exports.rebuild(
                values.byteOffset,
                t.width,
                count,
                drop,
                mode,
                dq.byteOffset,
                rx,
                ry,
                rz,
                rw,
                planes.byteOffset,
                out.byteOffset + 4,
                stride * 4,
              );
              differ += differing(out, expected);
              cases++;
            }
        }
        t.drop[segment] = kept;
      }
    }
    expect(cases).toBeGreaterThan(1000);
    expect(differ).toBe(0);
  });

  it("leverSums: roundingTerm's float64 as JavaScript works it out, a chain deeper than its exact walk too", async () => {
    const plain = await withoutKernel();
    const clips = [
      ...fixtureNames().map((name) => loadFixture(name)),
      chainClip(100, 12),
      // More samples than a chunk of the kernel's.
      bodyFaceFingersClip(150),
      makeSyntheticClip({ boneCount: 30, sampleCount: 20, animatedScale: true, seed: 4 }),
    ];
    for (const clip of clips) {
      const shells = clip.skeleton.shellDistances;
      const object = clipToObject(clip);
      const term = roundingTerm(clip, shells, object);
      expect(term).toBeGreaterThan(0);
      expect(Object.is(term, plain.roundingTerm(clip, shells, object)), clip.name).toBe(true);
      // Without the transforms the kernel works them out, a chunk of samples at a time: the same figure.
      expect(Object.is(term, roundingTerm(clip, shells)), clip.name).toBe(true);
      expect(Object.is(term, plain.roundingTerm(clip, shells)), clip.name).toBe(true);
    }
  });

  it('localAffines: poseToAffine of float32 poses, every number the same, at any stride', () => {
    const { pose } = randomPose(9, 17);
    const count = 9;
    const kernel = measureKernel('search', { poses: ['f32', count * 12], out: ['f64', count * 14] })!;
    const { poses, out } = kernel.buffers;
    // Poses 12 floats apart, matrices 14 numbers apart: strides other than one pose's and one matrix's.
    for (let i = 0; i < count; i++) for (let c = 0; c < POSE_STRIDE; c++) poses[i * 12 + c] = pose[i * POSE_STRIDE + c];
    out.fill(Number.NaN);
    kernel.exports.localAffines(poses.byteOffset, 48, out.byteOffset, 112, count);
    const expected = new Float64Array(out.length).fill(Number.NaN);
    for (let i = 0; i < count; i++) poseToAffine(poses, i * 12, expected, i * 14);
    expect(differing(out, expected)).toBe(0);
  });

  it("sampleObjects: a clip's object transforms at every sample as clipToObject works them out", () => {
    for (const clip of [
      loadFixture(fixtureNames()[0]),
      makeSyntheticClip({ boneCount: 30, sampleCount: 20, animatedScale: true, seed: 6 }),
    ]) {
      const shared = sharedSampleObjects(clip)!;
      expect(differing(shared, clipToObject(clip)), clip.name).toBe(0);
    }
  });
});
