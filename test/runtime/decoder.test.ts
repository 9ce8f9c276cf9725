import { describe, expect, it } from 'vitest';

import type { RawClip } from '../../src/clip/raw-clip.js';
import { TRACK_CLASS } from '../../src/compress/classify.js';
import { compress } from '../../src/compress/index.js';
import { reconstructTrackSegment } from '../../src/compress/quantize.js';
import { CompressedClip } from '../../src/runtime/compressed-clip.js';
import { sampledSpan, segmentBitRates } from '../../src/runtime/clip-inspection.js';
import { FORMAT_ERROR, FormatError } from '../../src/runtime/errors.js';
import {
  MAX_QUANTIZED_BITS,
  RAW_BITS,
  SEGMENT_SIZE,
  TRACKS_PER_BONE,
  TRACK_KIND,
  segmentCountFor,
  segmentSampleCount,
} from '../../src/runtime/format.js';
import { POSE_STRIDE } from '../../src/runtime/pose.js';
import type { SampleOptions } from '../../src/runtime/sampler.js';
import { encodeWithRates, fixtureNames, loadFixture, type ForcedEncoding } from '../utils/clips.js';
import { makeSyntheticClip, mulberry32 } from '../utils/synthetic.js';
import { sampleBone, sampleKey } from '../../src/runtime/sampler.js';

const KIND_OFFSET = [0, 4, 7] as const;

/** Every rate the format allows, for forced encodings. */
const ALL_RATES = [0, ...Array.from({ length: MAX_QUANTIZED_BITS }, (_, i) => i + 1), RAW_BITS];

/** A synthetic clip with animated scales and big rotations (so deltas drop components other than w). */
function clipOf(sampleCount: number, seed: number, sampleRate = 30): RawClip {
  return makeSyntheticClip({
    boneCount: 7,
    sampleCount,
    seed,
    sampleRate,
    animatedScale: true,
    maxAngleDeg: 175,
    animatedTranslationShare: 0.5,
    constantShare: 0.15,
    defaultShare: 0.15,
  });
}

/** Encodes `clip` with seeded random rates from every allowed rate, identity rotation references. */
function randomRates(clip: RawClip, seed: number): ForcedEncoding {
  const random = mulberry32(seed);
  return encodeWithRates(clip, () => ALL_RATES[Math.floor(random() * ALL_RATES.length)], { reference: 'identity' });
}

function keyPose(c: CompressedClip, k: number): Float32Array {
  return sampleKey(c.createSampler(), k, new Float32Array(c.boneCount * POSE_STRIDE));
}

function samplePose(c: CompressedClip, time: number, options?: SampleOptions): Float32Array {
  return c.createSampler().sample(time, new Float32Array(c.boneCount * POSE_STRIDE), options);
}

/**
 * The blend of two keys as documented: lerp, and slerp on the shortest path for rotations,
 * written with Math.acos and Math.sin (the decoder uses series for small angles).
 */
function blend(a: Float32Array, b: Float32Array, alpha: number, boneCount: number): Float64Array {
  const out = new Float64Array(boneCount * POSE_STRIDE);
  for (let bone = 0; bone < boneCount; bone++) {
    const o = bone * POSE_STRIDE;
    const dot = a[o] * b[o] + a[o + 1] * b[o + 1] + a[o + 2] * b[o + 2] + a[o + 3] * b[o + 3];
    const la = Math.hypot(a[o], a[o + 1], a[o + 2], a[o + 3]),
      lb = Math.hypot(b[o], b[o + 1], b[o + 2], b[o + 3]);
    const theta = Math.acos(Math.min(1, Math.abs(dot) / (la * lb)));
    const wa = theta < 1e-9 ? 1 - alpha : Math.sin((1 - alpha) * theta) / Math.sin(theta);
    const wb = (theta < 1e-9 ? alpha : Math.sin(alpha * theta) / Math.sin(theta)) * (dot < 0 ? -1 : 1);
    const q = [0, 1, 2, 3].map((c) => (a[o + c] / la) * wa + (b[o + c] / lb) * wb);
    const len = Math.hypot(...q);
    for (let c = 0; c < 4; c++) out[o + c] = q[c] / len;
    for (let c = 4; c < POSE_STRIDE; c++) out[o + c] = a[o + c] + (b[o + c] - a[o + c]) * alpha;
  }
  return out;
}

/**
 * Every value within `tolerance` plus one float32 step of its magnitude: a 90 cm root height
 * has float32 steps of 7.6e-6, so the decoder's rounding of its float64 blend shows there.
 */
function expectClose(actual: Float32Array, expected: ArrayLike<number>, tolerance: number): void {
  let worst = 0,
    at = -1;
  for (let i = 0; i < expected.length; i++) {
    const d = Math.abs(actual[i] - expected[i]) - Math.abs(expected[i]) * 2 ** -23;
    if (!(d <= worst)) {
      worst = d;
      at = i;
    }
  }
  expect({ worst: worst <= tolerance ? 'ok' : worst, at: worst <= tolerance ? -1 : at }).toEqual({
    worst: 'ok',
    at: -1,
  });
}

function expectSameBits(actual: Float32Array, expected: Float32Array): void {
  expect(new Uint32Array(actual.buffer, actual.byteOffset, actual.length)).toEqual(
    new Uint32Array(expected.buffer, expected.byteOffset, expected.length),
  );
}

const SAMPLE_COUNTS = [1, 2, 15, 16, 17, 23, 24, 25, 40];
const EXPECTED_SEGMENTS: Record<number, number[]> = {
  1: [1],
  2: [2],
  15: [15],
  16: [16],
  17: [17],
  23: [23],
  24: [16, 8],
  25: [16, 9],
  40: [16, 16, 8],
};

describe('segment layout', () => {
  it.each(SAMPLE_COUNTS)('%i samples: segmentCountFor / segmentSampleCount merge a short tail', (n) => {
    const count = segmentCountFor(n);
    const sizes = Array.from({ length: count }, (_, s) => segmentSampleCount(s, count, n));
    expect(sizes).toEqual(EXPECTED_SEGMENTS[n]);
    expect(sizes.reduce((a, b) => a + b, 0)).toBe(n);
    expect(SEGMENT_SIZE).toBe(16);
  });

  it('counts segments for longer clips: a tail of 8 or more samples is its own segment', () => {
    expect(segmentCountFor(16 * 5 + 7)).toBe(5);
    expect(segmentCountFor(16 * 5 + 8)).toBe(6);
    expect(segmentSampleCount(4, 5, 16 * 5 + 7)).toBe(23);
    expect(segmentSampleCount(5, 6, 16 * 5 + 8)).toBe(8);
  });
});

describe('keys: seeking every sample', { timeout: 30_000 }, () => {
  it.each(SAMPLE_COUNTS)(
    "%i samples, random rates: sampleKey(k) is the compressor's decoded value at every key",
    (n) => {
      const clip = clipOf(n, 100 + n);
      const enc = randomRates(clip, n);
      const c = CompressedClip.open(enc.bytes);
      expect(c.segmentCount).toBe(EXPECTED_SEGMENTS[n].length);
      expect(c.sampleCount).toBe(n);
      expect(c.animatedTrackCount).toBe(enc.tracks.length);
      for (let s = 0; s < c.segmentCount; s++) {
        expect(Array.from(segmentBitRates(c, s))).toEqual(
          Array.from(enc.rates.subarray(s * enc.tracks.length, (s + 1) * enc.tracks.length)),
        );
      }
      // What the compressor rebuilds for every key of every animated track (its error metric sees this).
      const expected = new Float32Array(n * clip.skeleton.parents.length * POSE_STRIDE);
      const stride = clip.skeleton.parents.length * POSE_STRIDE;
      enc.tracks.forEach((t, j) => {
        for (let s = 0; s < enc.layout.count; s++) {
          const at = {
            j,
            trackCount: enc.tracks.length,
            segment: s,
            start: enc.layout.starts[s],
            size: enc.layout.sizes[s],
          };
          const o = enc.layout.starts[s] * stride + t.bone * POSE_STRIDE + KIND_OFFSET[t.kind];
          reconstructTrackSegment(
            t,
            at,
            enc.rates[s * enc.tracks.length + j],
            enc.clipRanges,
            enc.ranges,
            expected,
            o,
            stride,
          );
        }
      });
      const pose = new Float32Array(stride);
      for (let k = 0; k < n; k++) {
        sampleKey(c.createSampler(), k, pose);
        for (let bone = 0; bone < clip.skeleton.parents.length; bone++) {
          for (let kind = 0; kind < TRACKS_PER_BONE; kind++) {
            const track = bone * TRACKS_PER_BONE + kind;
            const o = bone * POSE_STRIDE + KIND_OFFSET[kind];
            const width = kind === TRACK_KIND.ROTATION ? 4 : 3;
            const got = Array.from(pose.subarray(o, o + width));
            const cls = enc.classes.classes[track];
            if (cls === TRACK_CLASS.ANIMATED) {
              expect(got).toEqual(Array.from(expected.subarray(k * stride + o, k * stride + o + width)));
            } else if (cls === TRACK_CLASS.DEFAULT) {
              expect(got).toEqual(
                kind === TRACK_KIND.ROTATION ? [0, 0, 0, 1] : kind === TRACK_KIND.SCALE ? [1, 1, 1] : [0, 0, 0],
              );
            } else {
              const v = Array.from(enc.classes.constants.subarray(track * 4, track * 4 + width));
              const len = kind === TRACK_KIND.ROTATION ? Math.hypot(...v) : 1;
              v.forEach((x, i) => expect(got[i]).toBeCloseTo(x / len, 6));
            }
          }
        }
      }
    },
  );

  it.each(SAMPLE_COUNTS)('%i samples: sample(k / rate) equals sampleKey(k) bit for bit, in both looping modes', (n) => {
    for (const c of [
      CompressedClip.open(randomRates(clipOf(n, 7 * n), n + 1).bytes),
      CompressedClip.open(compress(clipOf(n, 3 * n)).bytes),
    ]) {
      for (let k = 0; k < n; k++) {
        const key = keyPose(c, k);
        expectSameBits(samplePose(c, k / c.sampleRate), key);
        expectSameBits(samplePose(c, k / c.sampleRate, { looping: 'wrap' }), key);
        for (const rounding of ['floor', 'ceil', 'nearest', 'none'] as const)
          expectSameBits(samplePose(c, k / c.sampleRate, { rounding }), key);
      }
    }
  });

  it('the keys around segment boundaries (15, 16, 17, 31, 32) and the merged tail decode independently of each other', () => {
    // Two files that differ only in segment 1's rates: keys of segments 0 and 2 must not move.
    const clip = clipOf(40, 5);
    const a = encodeWithRates(clip, () => 9, { reference: 'identity' });
    const b = encodeWithRates(clip, (s) => (s === 1 ? RAW_BITS : 9), { reference: 'identity' });
    const ca = CompressedClip.open(a.bytes),
      cb = CompressedClip.open(b.bytes);
    for (const k of [0, 15, 32, 39]) expectSameBits(keyPose(ca, k), keyPose(cb, k));
    let moved = 0;
    for (const k of [16, 17, 31]) if (keyPose(ca, k).some((v, i) => v !== keyPose(cb, k)[i])) moved++;
    expect(moved).toBe(3);
    // Keys past the end clamp to the last key; negative and fractional ones to 0 and floor.
    expectSameBits(keyPose(ca, 400), keyPose(ca, 39));
    expectSameBits(keyPose(ca, -3), keyPose(ca, 0));
    expectSameBits(keyPose(ca, 16.9), keyPose(ca, 16));
  });
});

describe('sample between keys', { timeout: 30_000 }, () => {
  const n = 40;
  const cases = [
    ['random rates', () => CompressedClip.open(randomRates(clipOf(n, 11), 12).bytes)],
    ['compressed at defaults', () => CompressedClip.open(compress(clipOf(n, 13)).bytes)],
  ] as const;

  it.each(cases)(
    '%s: equals the slerp/lerp of the two keys within 1e-6, across segment boundaries too',
    (_name, make) => {
      const c = make();
      for (let k = 0; k < n - 1; k++) {
        const a = keyPose(c, k),
          b = keyPose(c, k + 1);
        for (const alpha of [0.125, 0.25, 0.5, 0.75, 0.9]) {
          expectClose(samplePose(c, (k + alpha) / c.sampleRate), blend(a, b, alpha, c.boneCount), 1e-6);
        }
      }
    },
  );

  it.each(cases)(
    '%s: wrap looping interpolates from the last sample back to sample 0 and repeats every period',
    (_name, make) => {
      const c = make();
      const period = n / c.sampleRate;
      const last = keyPose(c, n - 1),
        first = keyPose(c, 0);
      for (const alpha of [0.25, 0.5, 0.75]) {
        const expected = blend(last, first, alpha, c.boneCount);
        expectClose(samplePose(c, (n - 1 + alpha) / c.sampleRate, { looping: 'wrap' }), expected, 1e-6);
        // Negative time: the same place one period earlier.
        expectClose(samplePose(c, (n - 1 + alpha) / c.sampleRate - period, { looping: 'wrap' }), expected, 1e-6);
        expectClose(samplePose(c, -(1 - alpha) / c.sampleRate, { looping: 'wrap' }), expected, 1e-6);
      }
      for (const k of [0, 7, 15, 16, 31, 38]) {
        const inside = blend(keyPose(c, k), keyPose(c, k + 1), 0.25, c.boneCount);
        for (const periods of [1, 3, 17, -1, -4]) {
          expectClose(samplePose(c, (k + 0.25) / c.sampleRate + periods * period, { looping: 'wrap' }), inside, 1e-5);
        }
        // Whole periods away from a key land on the key.
        expectSameBits(
          samplePose(c, k / c.sampleRate + 2 * period, { looping: 'wrap', rounding: 'nearest' }),
          keyPose(c, k),
        );
      }
    },
  );

  it.each(cases)('%s: clamp looping holds the first key before 0 and the last after the duration', (_name, make) => {
    const c = make();
    const first = keyPose(c, 0),
      last = keyPose(c, n - 1);
    expect(c.duration).toBeCloseTo((n - 1) / c.sampleRate, 12);
    for (const t of [-0.001, -1, -1e9]) expectSameBits(samplePose(c, t), first);
    for (const t of [c.duration, c.duration + 1e-9, c.duration + 0.5 / c.sampleRate, c.duration + 3, 1e12]) {
      expectSameBits(samplePose(c, t), last);
      expectSameBits(samplePose(c, t, { looping: 'clamp' }), last);
    }
  });
});

describe('rounding policies', () => {
  // 32 Hz: k / 32 and (k + 0.5) / 32 are exact, so "exactly half-way" really is.
  const n = 40;
  const c = CompressedClip.open(randomRates(clipOf(n, 21, 32), 22).bytes);

  it('floor, ceil and nearest pick the documented key; none interpolates', () => {
    for (let k = 0; k < n - 1; k++) {
      const a = keyPose(c, k),
        b = keyPose(c, k + 1);
      for (const alpha of [0.25, 0.5, 0.75]) {
        const t = (k + alpha) / 32;
        expectSameBits(samplePose(c, t, { rounding: 'floor' }), a);
        expectSameBits(samplePose(c, t, { rounding: 'ceil' }), b);
        // Exactly half-way rounds up to the later key.
        expectSameBits(samplePose(c, t, { rounding: 'nearest' }), alpha >= 0.5 ? b : a);
        expectClose(samplePose(c, t, { rounding: 'none' }), blend(a, b, alpha, c.boneCount), 1e-6);
        expectClose(samplePose(c, t), blend(a, b, alpha, c.boneCount), 1e-6);
      }
    }
  });

  it('combine with wrap: in the last interval ceil and nearest reach key 0, floor stays on the last key', () => {
    const last = keyPose(c, n - 1),
      first = keyPose(c, 0);
    const t = (n - 1 + 0.75) / 32;
    expectSameBits(samplePose(c, t, { looping: 'wrap', rounding: 'floor' }), last);
    expectSameBits(samplePose(c, t, { looping: 'wrap', rounding: 'ceil' }), first);
    expectSameBits(samplePose(c, t, { looping: 'wrap', rounding: 'nearest' }), first);
    expectSameBits(samplePose(c, (n - 1 + 0.25) / 32, { looping: 'wrap', rounding: 'nearest' }), last);
    // With clamp the same times hold the last key whatever the rounding.
    for (const rounding of ['floor', 'ceil', 'nearest', 'none'] as const)
      expectSameBits(samplePose(c, t, { rounding }), last);
  });
});

describe('sampleBone', { timeout: 30_000 }, () => {
  it.each([2, 17, 40])('%i samples: equals the matching slice of sample() for every bone, bit for bit', (n) => {
    const files = [
      randomRates(clipOf(n, 31 + n), 32 + n).bytes,
      compress(clipOf(n, 33 + n)).bytes,
      compress(makeSyntheticClip({ boneCount: 30, sampleCount: n, seed: n, animatedScale: true })).bytes,
    ];
    for (const bytes of files) {
      const c = CompressedClip.open(bytes);
      const out = new Float32Array(POSE_STRIDE);
      const times = [
        0,
        0.3 / c.sampleRate,
        15.5 / c.sampleRate,
        16 / c.sampleRate,
        c.duration * 0.77,
        c.duration,
        c.duration + 0.4 / c.sampleRate,
        -2,
      ];
      const optionSets = [
        undefined,
        { looping: 'wrap' as const },
        { rounding: 'nearest' as const },
        { rounding: 'ceil' as const, looping: 'wrap' as const },
      ];
      for (const t of times) {
        for (const options of optionSets) {
          const pose = samplePose(c, t, options);
          for (let bone = 0; bone < c.boneCount; bone++) {
            out.fill(NaN);
            sampleBone(c.createSampler(), t, bone, out, options);
            expectSameBits(out, pose.slice(bone * POSE_STRIDE, (bone + 1) * POSE_STRIDE));
          }
        }
      }
    }
  });
});

describe('robustness', () => {
  const c = CompressedClip.open(randomRates(clipOf(40, 41), 42).bytes);

  it('NaN and ±Infinity times never give NaN', () => {
    for (const t of [NaN, Infinity, -Infinity, Number.MAX_VALUE, -Number.MAX_VALUE, Number.MIN_VALUE]) {
      for (const looping of ['clamp', 'wrap'] as const) {
        for (const rounding of ['none', 'floor', 'ceil', 'nearest'] as const) {
          const pose = samplePose(c, t, { looping, rounding });
          expect(pose.every(Number.isFinite)).toBe(true);
          const out = sampleBone(c.createSampler(), t, 3, new Float32Array(POSE_STRIDE), { looping, rounding });
          expect(out.every(Number.isFinite)).toBe(true);
        }
      }
    }
    // Documented: NaN counts as 0; with clamp, −∞ is the first key and +∞ the last.
    expectSameBits(samplePose(c, NaN), keyPose(c, 0));
    expectSameBits(samplePose(c, -Infinity), keyPose(c, 0));
    expectSameBits(samplePose(c, Infinity), keyPose(c, 39));
  });

  it('an outPose that is too short is a FormatError BAD_ARGUMENT, as are a bad bone index and a short bone output', () => {
    const short = new Float32Array(c.boneCount * POSE_STRIDE - 1);
    const code = (f: () => unknown): string | undefined => {
      try {
        f();
      } catch (e) {
        return e instanceof FormatError ? e.code : `not a FormatError: ${String(e)}`;
      }
      return undefined;
    };
    expect(code(() => c.createSampler().sample(0, short))).toBe(FORMAT_ERROR.BAD_ARGUMENT);
    expect(code(() => sampleKey(c.createSampler(), 0, short))).toBe(FORMAT_ERROR.BAD_ARGUMENT);
    expect(code(() => sampleBone(c.createSampler(), 0, 0, new Float32Array(POSE_STRIDE - 1)))).toBe(
      FORMAT_ERROR.BAD_ARGUMENT,
    );
    for (const bone of [-1, c.boneCount, 1.5, NaN])
      expect(code(() => sampleBone(c.createSampler(), 0, bone, new Float32Array(POSE_STRIDE)))).toBe(
        FORMAT_ERROR.BAD_ARGUMENT,
      );
    // A longer pose is fine and its tail is left alone.
    const long = new Float32Array(c.boneCount * POSE_STRIDE + 3).fill(7);
    c.createSampler().sample(0.1, long);
    expect(Array.from(long.subarray(c.boneCount * POSE_STRIDE))).toEqual([7, 7, 7]);
  });

  it('a single-sample clip returns its only key at every time', () => {
    const one = CompressedClip.open(randomRates(clipOf(1, 43), 44).bytes);
    expect(one.duration).toBe(0);
    const key = keyPose(one, 0);
    for (const t of [-1, 0, 0.5, 100, NaN, Infinity]) {
      for (const looping of ['clamp', 'wrap'] as const) expectSameBits(samplePose(one, t, { looping }), key);
    }
  });

  it('decoded rotations are unit quaternions', () => {
    for (const t of [0, 0.13, 0.5, 1.01, 1.3]) {
      const pose = samplePose(c, t, { looping: 'wrap' });
      for (let bone = 0; bone < c.boneCount; bone++) {
        const o = bone * POSE_STRIDE;
        expect(Math.hypot(pose[o], pose[o + 1], pose[o + 2], pose[o + 3])).toBeCloseTo(1, 6);
      }
    }
  });
});

describe('compact and full tables', { timeout: 60_000 }, () => {
  /** Seeded Fisher–Yates shuffle of a copy of `items`. */
  function shuffled<T>(items: readonly T[], random: () => number): T[] {
    const out = items.slice();
    for (let i = out.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      [out[i], out[j]] = [out[j], out[i]];
    }
    return out;
  }

  // 1, 2, 3 and 4 segments (odd and even counts: with two slots, wrapping pairs the last segment with the first).
  const files = [1, 17, 24, 40, 57].flatMap(
    (n) =>
      [
        [`${n} samples, random rates`, randomRates(clipOf(n, 60 + n), 61 + n).bytes],
        [`${n} samples, compressed at defaults`, compress(clipOf(n, 62 + n)).bytes],
      ] as const,
  );

  it.each(files)(
    '%s: compact tables (two segment slots per sampler), full tables and the default decoder decode identically, bit for bit, whatever the order of access',
    (_name, bytes) => {
      const two = CompressedClip.open(bytes, { tables: 'compact' });
      const all = CompressedClip.open(bytes, { decoder: 'typescript' });
      const byDefault = CompressedClip.open(bytes);
      const n = two.sampleCount,
        rate = two.sampleRate,
        period = n / rate;
      expect(all.segmentCount).toBe(two.segmentCount);
      const random = mulberry32(n * 13 + bytes.length);

      type Query = { what: string; run: (c: CompressedClip) => Float32Array };
      const queries: Query[] = [];
      // Every key, as a key and as a time.
      for (let k = 0; k < n; k++) {
        queries.push({ what: `sampleKey(${k})`, run: (c) => keyPose(c, k) });
        queries.push({ what: `sample(${k} / rate)`, run: (c) => samplePose(c, k / rate) });
      }
      // Random times inside the clip, before it, after it and in the wrap interval from the last key back to key 0.
      for (let i = 0; i < 60; i++) {
        const t = (random() * 1.4 - 0.2) * period;
        const wrapTail = (n - 1 + random()) / rate + Math.floor(random() * 5 - 2) * period;
        queries.push({ what: `sample(${t})`, run: (c) => samplePose(c, t) });
        queries.push({ what: `sample(${t}, wrap)`, run: (c) => samplePose(c, t, { looping: 'wrap' }) });
        queries.push({ what: `sample(${wrapTail}, wrap)`, run: (c) => samplePose(c, wrapTail, { looping: 'wrap' }) });
        queries.push({
          what: `sample(${t}, nearest)`,
          run: (c) => samplePose(c, t, { rounding: 'nearest', looping: 'wrap' }),
        });
        const bone = Math.floor(random() * two.boneCount);
        queries.push({
          what: `sampleBone(${t}, ${bone}, wrap)`,
          run: (c) => sampleBone(c.createSampler(), t, bone, new Float32Array(POSE_STRIDE), { looping: 'wrap' }),
        });
        queries.push({
          what: `sampleBone(${wrapTail}, ${bone}, wrap)`,
          run: (c) => sampleBone(c.createSampler(), wrapTail, bone, new Float32Array(POSE_STRIDE), { looping: 'wrap' }),
        });
      }
      if (n > 1) {
        // The wrap interval itself: last segment blended into the first.
        for (const alpha of [0.25, 0.5, 0.75]) {
          const t = (n - 1 + alpha) / rate;
          queries.push({ what: `sample(last + ${alpha}, wrap)`, run: (c) => samplePose(c, t, { looping: 'wrap' }) });
          queries.push({
            what: `sample(-${1 - alpha} / rate, wrap)`,
            run: (c) => samplePose(c, -(1 - alpha) / rate, { looping: 'wrap' }),
          });
        }
      }

      // Each decoder answers in its own random order, so the caches hold different segments at each query.
      const answers = (c: CompressedClip): Float32Array[] => {
        const out: Float32Array[] = new Array(queries.length);
        for (const i of shuffled(
          queries.map((_, i) => i),
          random,
        ))
          out[i] = queries[i].run(c);
        return out;
      };
      const fromTwo = answers(two),
        fromAll = answers(all),
        fromDefault = answers(byDefault);
      // Playing forward, then backward, through the same decoders changes nothing either.
      const forward = queries.map((q) => q.run(two));
      const backward = queries.map((_, i) => queries[queries.length - 1 - i].run(all)).reverse();
      queries.forEach((q, i) => {
        const bits = (a: Float32Array) => Array.from(new Uint32Array(a.buffer, a.byteOffset, a.length));
        expect(bits(fromTwo[i]), q.what).toEqual(bits(fromAll[i]));
        expect(bits(fromDefault[i]), q.what).toEqual(bits(fromAll[i]));
        expect(bits(forward[i]), q.what).toEqual(bits(fromAll[i]));
        expect(bits(backward[i]), q.what).toEqual(bits(fromAll[i]));
      });
    },
  );

  it('the files above exercise clips of 1 to 4 segments and a wrap from the last segment to the first', () => {
    // Segment count → most animated tracks among its files (a 1-sample clip compressed at
    // defaults has none: every track is constant), so each count is decoded, not just opened.
    const animated = new Map<number, number>();
    for (const [, bytes] of files) {
      const c = CompressedClip.open(bytes);
      animated.set(c.segmentCount, Math.max(animated.get(c.segmentCount) ?? 0, c.animatedTrackCount));
    }
    expect([...animated.keys()].sort()).toEqual([1, 2, 3, 4]);
    expect([...animated.values()].every((count) => count > 0)).toBe(true);
  });
});

describe('time base and per-instance samplers', () => {
  /** A clip whose samples start at 0.5 s on the source's timeline and whose source lasts 0.1 s past the last sample. */
  function shifted(): { c: CompressedClip; start: number; span: number } {
    const raw = makeSyntheticClip({ boneCount: 4, sampleCount: 40, seed: 11 });
    const start = 0.5,
      span = (raw.sampleCount - 1) / raw.sampleRate;
    const c = CompressedClip.open(compress({ ...raw, startTime: start, duration: start + span + 0.1 }).bytes);
    return { c, start, span };
  }

  it('keeps the start time and duration; before the start the first sample holds', () => {
    const { c, start, span } = shifted();
    expect(c.startTime).toBe(start);
    expect(c.duration).toBeCloseTo(start + span + 0.1, 12);
    expect(sampledSpan(c)).toBeCloseTo(span, 12);
    expectClose(samplePose(c, 0), keyPose(c, 0), 0);
    expectClose(samplePose(c, start + 3 / c.sampleRate), keyPose(c, 3), 0);
    expectClose(samplePose(c, start + span + 0.05), keyPose(c, c.sampleCount - 1), 0);
  });

  it("'repeat' repeats with the duration as its period, as three.js LoopRepeat", () => {
    const { c, start } = shifted();
    const t = start + 5.5 / c.sampleRate;
    expectClose(samplePose(c, t + c.duration, { looping: 'repeat' }), samplePose(c, t), 1e-6);
    expectClose(samplePose(c, t - 2 * c.duration, { looping: 'repeat' }), samplePose(c, t), 1e-6);
    expectClose(samplePose(c, c.duration + 0.01, { looping: 'repeat' }), keyPose(c, 0), 0);
  });

  it('samplers of one clip keep separate state and agree with each other', () => {
    const { c, start } = shifted();
    const a = c.createSampler(),
      b = c.createSampler();
    const pa = new Float32Array(c.boneCount * POSE_STRIDE),
      pb = new Float32Array(c.boneCount * POSE_STRIDE);
    for (let i = 0; i < 50; i++) {
      const t = start + ((i * 7) % 39) / c.sampleRate + 0.013;
      a.sample(t, pa);
      b.sample(start + sampledSpan(c) - t + start, pb); // b walks backwards meanwhile
      expectClose(b.sample(t, pb), Float64Array.from(pa), 0);
    }
  });
});

describe('compact tables', () => {
  it('decode to the same bits as the full tables at every key, between keys and at random times in every looping mode', () => {
    for (const n of [1, 17, 40, 57, 130]) {
      const raw = makeSyntheticClip({
        boneCount: 6,
        sampleCount: n,
        seed: 300 + n,
        animatedScale: true,
        maxAngleDeg: 170,
      });
      const bytes = compress(raw).bytes;
      const full = CompressedClip.open(bytes),
        compact = CompressedClip.open(bytes, { tables: 'compact' });
      const a = full.createSampler(),
        b = compact.createSampler(),
        c = compact.createSampler();
      const pa = new Float32Array(full.boneCount * POSE_STRIDE),
        pb = new Float32Array(pa.length),
        pc = new Float32Array(pa.length);
      for (let k = 0; k < n; k++) expect(Array.from(sampleKey(b, k, pb))).toEqual(Array.from(sampleKey(a, k, pa)));
      const random = mulberry32(n);
      for (const looping of ['clamp', 'repeat', 'wrap'] as const) {
        for (let i = 0; i < 200; i++) {
          const t = (random() * 1.3 - 0.1) * (n / full.sampleRate);
          a.sample(t, pa, { looping });
          b.sample(t, pb, { looping });
          c.sample(-t, pc, { looping }); // another instance elsewhere in the clip, sharing nothing
          expect(Array.from(pb), `${n} samples, ${looping} at ${t}`).toEqual(Array.from(pa));
        }
      }
      expect(b.byteLength).toBeGreaterThan(0);
      expect(a.byteLength).toBe(0);
    }
  });

  it("hold the base pose and the rotation references only, whatever the clip's length", () => {
    const bytes = compress(loadFixture(fixtureNames()[0])).bytes;
    const compact = CompressedClip.open(bytes, { tables: 'compact' }),
      full = CompressedClip.open(bytes);
    expect(compact.segmentCount).toBeGreaterThan(4);
    // Base pose floats, then four float64 references per animated track at most, aligned.
    const bound = 4 * compact.boneCount * POSE_STRIDE + 32 * compact.animatedTrackCount + 64;
    expect(compact.tables.i32.byteLength).toBeLessThanOrEqual(bound);
    expect(full.tables.i32.byteLength).toBeGreaterThan(bytes.length);
  });

  it('rejects an unknown tables option', () => {
    const bytes = compress(makeSyntheticClip({ boneCount: 2, sampleCount: 5, seed: 1 })).bytes;
    expect(() => CompressedClip.open(bytes, { tables: 'lazy' as 'compact' })).toThrow(
      /tables must be 'full' or 'compact'/,
    );
  });
});
