/**
 * Hostile `.bpk` input for the runtime decoder (opening validates every field;
 * it never reads out of bounds, never loops forever and never returns NaN).
 *
 * Every case here ends in one of two ways: `CompressedClip.open` throws a FormatError with
 * a known code, or the clip opens and then decodes every key, and samples at hostile times
 * (NaN, ±0, negative, huge, ±Infinity) with both loopings and all roundings, to finite
 * values with unit rotations. Any other exception, a NaN, a hang (the vitest timeout is the
 * guard) or a write into the caller's bytes fails the test.
 *
 * Deterministic: fast-check runs with a fixed seed. `FUZZ_RUNS` sets the number of cases of
 * each random property (default {@link DEFAULT_RUNS}; `npm run fuzz` runs 200,000), and
 * `FUZZ_SEED` replays another seed. The exhaustive sweeps (every bit flip, every truncation,
 * every extreme header value) run in full either way.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { createRawClip, type RawClip } from '../../src/clip/raw-clip.js';
import { createSkeleton } from '../../src/clip/skeleton.js';
import { compress } from '../../src/compress/index.js';
import { CompressedClip, type Looping, type OpenOptions, type Rounding } from '../../src/runtime/compressed-clip.js';
import { sectionSizes, segmentBitRates, trackClassOf } from '../../src/runtime/clip-inspection.js';
import { FORMAT_ERROR, FormatError, type FormatErrorCode } from '../../src/runtime/errors.js';
import {
  CHECKSUM_START,
  FLAGS,
  HEADER,
  KNOWN_FLAGS,
  MAGIC,
  MAX_BONES,
  RAW_BITS,
  VERSION,
  crc32,
  segmentCountFor,
} from '../../src/runtime/format.js';
import { POSE_STRIDE } from '../../src/runtime/pose.js';
import { encodeWithRates } from '../utils/clips.js';
import { makeSyntheticClip } from '../utils/synthetic.js';
import { sampleBone, sampleKey } from '../../src/runtime/sampler.js';

// ---------------------------------------------------------------------------------------
// Run counts and seeds.

/** Cases per random property in a plain `npm test` (`npm run fuzz` runs 200,000). */
const DEFAULT_RUNS = 300;
const RUNS = positiveInt(process.env.FUZZ_RUNS, DEFAULT_RUNS);
const SEED = positiveInt(process.env.FUZZ_SEED, 0x62706b31); // "bpk1"
/** Generous per-test budget that grows with the run count; the guard against hangs. */
const TIMEOUT_MS = 30_000 + RUNS * 5;

function positiveInt(text: string | undefined, fallback: number): number {
  if (text === undefined || text === '') return fallback;
  const n = Number(text);
  if (!Number.isSafeInteger(n) || n < 1) throw new Error(`expected a whole number ≥ 1, got "${text}"`);
  return n;
}

/** fast-check parameters of property `index` (each property gets its own seed). */
function params(index: number, numRuns = RUNS): fc.Parameters<unknown> {
  return { seed: (SEED + index * 0x9e3779b1) | 0, numRuns, endOnFailure: true };
}

// ---------------------------------------------------------------------------------------
// Outcome checks.

const KNOWN_CODES: ReadonlySet<string> = new Set(Object.values(FORMAT_ERROR));
/** Open options beyond the checksum: the decode tables, full (every segment's records) or compact (two segments per sampler). */
const CACHE_VARIANTS: readonly OpenOptions[] = [{}, { tables: 'compact' }];
const ROUNDINGS: readonly Rounding[] = ['none', 'floor', 'ceil', 'nearest'];
const LOOPINGS: readonly Looping[] = ['clamp', 'wrap'];

/** A violation of the decoder's contract, with what led to it. */
class ContractViolation extends Error {
  override readonly name = 'ContractViolation';
}

/** Checks `error` is a well-formed FormatError; anything else is a contract violation. */
function checkFormatError(error: unknown, size: number, context: string): FormatError {
  if (!(error instanceof FormatError)) {
    const what = error instanceof Error ? `${error.name}: ${error.message}\n${error.stack}` : String(error);
    throw new ContractViolation(`${context}: open threw something other than a FormatError: ${what}`);
  }
  if (!KNOWN_CODES.has(error.code)) throw new ContractViolation(`${context}: unknown FormatError code ${error.code}`);
  if (!Number.isInteger(error.byteOffset) || error.byteOffset < -1 || error.byteOffset > size + 3) {
    throw new ContractViolation(
      `${context}: byteOffset ${error.byteOffset} outside the ${size}-byte buffer (${error.message})`,
    );
  }
  if (error.message.length === 0 || error.message.includes('undefined'))
    throw new ContractViolation(`${context}: unhelpful message "${error.message}"`);
  return error;
}

/** How much decoding to do once a clip opens: every check, or a lighter pass for exhaustive sweeps. */
type Depth = 'full' | 'light';

/** Times that stress locate(): special values, the ends, between keys and far outside. */
function hostileTimes(clip: CompressedClip, depth: Depth): number[] {
  const d = clip.duration,
    step = 1 / clip.sampleRate;
  const light = [Number.NaN, -Infinity, -1, 0, d / 3, d, d + step / 2, 1e308, Infinity];
  if (depth === 'light') return light;
  return [
    ...light,
    -1e308,
    -Number.MIN_VALUE,
    -0,
    Number.MIN_VALUE,
    step / 2,
    step * (1 - 1e-9),
    d / 2,
    d - 1e-9,
    d + 1e-9,
    d + step,
    d + step * (1 - 1e-7),
    -step / 2,
    1e9,
    4294967296 / clip.sampleRate,
  ];
}

/** Asserts every float of `pose` (bones `[0, boneCount)`) is finite and every rotation is unit length. */
function checkPose(pose: Float32Array, boneCount: number, context: string): void {
  for (let b = 0; b < boneCount; b++) {
    const o = b * POSE_STRIDE;
    for (let i = 0; i < POSE_STRIDE; i++) {
      if (!Number.isFinite(pose[o + i]))
        throw new ContractViolation(`${context}: bone ${b} value ${i} is ${pose[o + i]}`);
    }
    const len2 = pose[o] ** 2 + pose[o + 1] ** 2 + pose[o + 2] ** 2 + pose[o + 3] ** 2;
    if (!(Math.abs(len2 - 1) < 1e-4)) throw new ContractViolation(`${context}: bone ${b} rotation has length² ${len2}`);
  }
}

/** Checks the public fields of an opened clip against each other. */
function checkHeaderFields(clip: CompressedClip, size: number, context: string): void {
  const fail = (what: string) => {
    throw new ContractViolation(`${context}: ${what}`);
  };
  if (!(clip.boneCount >= 1 && clip.boneCount <= MAX_BONES)) fail(`bone count ${clip.boneCount}`);
  if (!(clip.sampleCount >= 1)) fail(`sample count ${clip.sampleCount}`);
  if (!(clip.sampleRate > 0 && Number.isFinite(clip.sampleRate))) fail(`sample rate ${clip.sampleRate}`);
  if (!(clip.duration >= 0 && Number.isFinite(clip.duration))) fail(`duration ${clip.duration}`);
  if (clip.segmentCount !== segmentCountFor(clip.sampleCount)) fail(`segment count ${clip.segmentCount}`);
  if (clip.byteLength !== size) fail(`byteLength ${clip.byteLength} of a ${size}-byte buffer`);
  if (clip.parents.length !== clip.boneCount) fail(`${clip.parents.length} parents`);
  for (let b = 0; b < clip.boneCount; b++)
    if (!(clip.parents[b] >= -1 && clip.parents[b] < b)) fail(`bone ${b} parent ${clip.parents[b]}`);
  if (clip.boneNames !== undefined && clip.boneNames.length !== clip.boneCount)
    fail(`${clip.boneNames.length} bone names`);
  const s = sectionSizes(clip);
  const parts = [s.header, s.parents, s.bitsets, s.constants, s.clipRanges, s.rotationRefs, s.segments, s.names];
  if (parts.some((p) => !(Number.isInteger(p) && p >= 0))) fail(`negative section size ${JSON.stringify(s)}`);
  if (parts.reduce((a, b) => a + b, 0) !== size || s.total !== size)
    fail(`sections ${JSON.stringify(s)} do not add up to ${size}`);
  let animated = 0;
  for (let b = 0; b < clip.boneCount; b++) {
    for (let kind = 0; kind < 3; kind++) if (trackClassOf(clip, b, kind) === 'animated') animated++;
  }
  if (animated !== clip.animatedTrackCount)
    fail(`${animated} animated tracks by class, header ${clip.animatedTrackCount}`);
  for (let seg = 0; seg < Math.min(clip.segmentCount, 4); seg++) {
    const rates = segmentBitRates(clip, seg);
    if (rates.length !== clip.animatedTrackCount || rates.some((r) => !((r >= 0 && r <= 24) || r === RAW_BITS)))
      fail(`segment ${seg} rates ${rates}`);
  }
}

/**
 * Decodes an opened clip everywhere it can be asked to: every key (up to 4096, or 64 in the
 * light pass, evenly spread beyond that, plus the last), hostile times with every looping
 * and rounding, and single bones (which must equal the same bone of the whole pose, bit
 * for bit).
 */
function checkDecodes(
  clip: CompressedClip,
  size: number,
  depth: Depth,
  extraTimes: readonly number[],
  context: string,
): void {
  checkHeaderFields(clip, size, context);
  const boneCount = clip.boneCount;
  const pose = new Float32Array(boneCount * POSE_STRIDE);
  const bone = new Float32Array(POSE_STRIDE);
  // Every key (a corrupt count can claim billions of keys: then an even spread of them).
  const keyStep = Math.max(1, Math.ceil(clip.sampleCount / (depth === 'full' ? 4096 : 64)));
  for (let k = 0; k < clip.sampleCount; k += keyStep) {
    sampleKey(clip.createSampler(), k, pose);
    checkPose(pose, boneCount, `${context}, key ${k}`);
  }
  for (const k of depth === 'full'
    ? [clip.sampleCount - 1, Number.NaN, -5, 0.5, 1e300, Infinity]
    : [clip.sampleCount - 1, Number.NaN, Infinity]) {
    sampleKey(clip.createSampler(), k, pose);
    checkPose(pose, boneCount, `${context}, sampleKey(${k})`);
  }
  if (depth === 'full') checkBlends(clip, pose, context);
  const times = [...hostileTimes(clip, depth), ...extraTimes];
  // The light pass takes one rounding per (time, looping), rotating through all four.
  let pick = 0;
  for (const time of times) {
    for (const looping of LOOPINGS) {
      for (const rounding of depth === 'full' ? ROUNDINGS : [ROUNDINGS[pick % ROUNDINGS.length]]) {
        const options = { looping, rounding };
        clip.createSampler().sample(time, pose, options);
        checkPose(pose, boneCount, `${context}, sample(${time}, ${looping}, ${rounding})`);
        const b = pick++ % boneCount;
        sampleBone(clip.createSampler(), time, b, bone, options);
        for (let i = 0; i < POSE_STRIDE; i++) {
          if (!Object.is(bone[i], pose[b * POSE_STRIDE + i]) && bone[i] !== pose[b * POSE_STRIDE + i]) {
            throw new ContractViolation(
              `${context}: sampleBone(${time}, ${b}, ${looping}, ${rounding})[${i}] = ${bone[i]}, sample() gave ${pose[b * POSE_STRIDE + i]}`,
            );
          }
        }
      }
    }
  }
}

/**
 * Between two keys, translations and scales are the lerp of the two keys, also
 * across segment boundaries and, with wrap, from the last key back to the first: this
 * catches a decoder that mixes up the two segments it reads.
 */
function checkBlends(clip: CompressedClip, scratch: Float32Array, context: string): void {
  const n = clip.sampleCount;
  if (n < 2) return;
  const a = new Float32Array(scratch.length),
    b = new Float32Array(scratch.length);
  const pairs: [number, number, Looping][] = [[n - 1, 0, 'wrap']];
  for (const k of [0, 15, 16, 31, 32, n >> 1, n - 2]) if (k >= 0 && k + 1 < n) pairs.push([k, k + 1, 'clamp']);
  for (const [k0, k1, looping] of pairs) {
    sampleKey(clip.createSampler(), k0, a);
    sampleKey(clip.createSampler(), k1, b);
    for (const fraction of [0.25, 0.5, 0.75]) {
      const time = (k0 + fraction) / clip.sampleRate;
      const pos = time * clip.sampleRate;
      const alpha = pos - Math.floor(pos);
      clip.createSampler().sample(time, scratch, { looping });
      for (let bone = 0; bone < clip.boneCount; bone++) {
        for (let i = 4; i < POSE_STRIDE; i++) {
          const o = bone * POSE_STRIDE + i;
          const expected = a[o] + (b[o] - a[o]) * alpha;
          const tolerance = 1e-5 * Math.max(1, Math.abs(a[o]), Math.abs(b[o]));
          if (!(Math.abs(scratch[o] - expected) <= tolerance)) {
            throw new ContractViolation(
              `${context}: sample(${time}, ${looping}) bone ${bone} value ${i} = ${scratch[o]}, but keys ${k0} and ${k1} blend to ${expected}`,
            );
          }
        }
      }
    }
  }
}

/** What happened to one hostile buffer. */
type Outcome = { opened: false; error: FormatError } | { opened: true; clip: CompressedClip };

/**
 * Opens `bytes` and, when it opens, decodes it everywhere. Throws a ContractViolation for
 * anything but a FormatError or a clean decode, and when the decoder wrote into `bytes`.
 */
function probe(
  bytes: Uint8Array,
  options: OpenOptions,
  context: string,
  depth: Depth = 'full',
  extraTimes: readonly number[] = [],
): Outcome {
  const before = crc32(bytes);
  let clip: CompressedClip;
  try {
    clip = CompressedClip.open(bytes, options);
  } catch (error) {
    return { opened: false, error: checkFormatError(error, bytes.byteLength, context) };
  }
  try {
    checkDecodes(clip, bytes.byteLength, depth, extraTimes, context);
  } catch (error) {
    if (error instanceof ContractViolation) throw error;
    const what = error instanceof Error ? `${error.name}: ${error.message}\n${error.stack}` : String(error);
    throw new ContractViolation(`${context}: decoding an opened clip threw ${what}`);
  }
  if (crc32(bytes) !== before) throw new ContractViolation(`${context}: open or sample wrote into the caller's bytes`);
  return { opened: true, clip };
}

/** Rewrites the CRC-32 when the flags ask for one (so the checks behind the CRC are reached). */
function reseal(bytes: Uint8Array): Uint8Array {
  if (bytes.byteLength >= HEADER.SIZE) {
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    if (view.getUint16(HEADER.FLAGS, true) & FLAGS.HAS_CHECKSUM)
      view.setUint32(HEADER.CHECKSUM, crc32(bytes, CHECKSUM_START, bytes.byteLength), true);
  }
  return bytes;
}

function setTotalSize(bytes: Uint8Array): Uint8Array {
  if (bytes.byteLength >= HEADER.TOTAL_SIZE + 4)
    new DataView(bytes.buffer, bytes.byteOffset).setUint32(HEADER.TOTAL_SIZE, bytes.byteLength, true);
  return bytes;
}

function hex(n: number): string {
  return `0x${(n >>> 0).toString(16)}`;
}

// ---------------------------------------------------------------------------------------
// Valid files to corrupt: small, so that exhaustive sweeps stay fast, and together covering
// every track class, rate 0, low and high rates, raw floats, several segments and a merged
// tail, one sample, no animated track at all, with and without names and checksum.

interface Base {
  readonly name: string;
  readonly bytes: Uint8Array;
}

/** A clip whose every track is its bind value: no animated track, so segments hold no bytes. */
function staticClip(sampleCount: number): RawClip {
  const pose = new Float32Array(2 * POSE_STRIDE);
  for (const o of [0, POSE_STRIDE]) {
    pose[o + 3] = 1;
    pose[o + 7] = 1;
    pose[o + 8] = 1;
    pose[o + 9] = 1;
  }
  pose[POSE_STRIDE + 5] = 10;
  const skeleton = createSkeleton(['root', 'child'], [-1, 0], pose, 'cm');
  return createRawClip('static', skeleton, 30, sampleCount, 'cm');
}

function makeBases(): Base[] {
  const small = makeSyntheticClip({
    boneCount: 4,
    sampleCount: 41,
    seed: 7,
    animatedScale: true,
    maxAngleDeg: 120,
    animatedTranslationShare: 0.5,
  });
  const tail = makeSyntheticClip({ boneCount: 3, sampleCount: 23, seed: 11, shape: 'chain', name: 'tail ✓ ünïcode' });
  const single = makeSyntheticClip({ boneCount: 3, sampleCount: 1, seed: 5 });
  // Rates cycle through the whole ladder, so every rate meets every track kind somewhere.
  const everyRate = [0, ...Array.from({ length: 24 }, (_, i) => i + 1), RAW_BITS];
  let next = 0;
  const forced = encodeWithRates(
    makeSyntheticClip({
      boneCount: 5,
      sampleCount: 80,
      seed: 3,
      animatedScale: true,
      maxAngleDeg: 175,
      animatedTranslationShare: 0.6,
    }),
    () => everyRate[next++ % everyRate.length],
    { checksum: true, includeNames: true },
  );
  return [
    { name: 'coarse (1cm: rate 0 and low rates), checksum, names', bytes: compress(small, { error: '1cm' }).bytes },
    { name: 'default error, checksum, no names', bytes: compress(small, { stripNames: true }).bytes },
    { name: 'raw floats, no checksum, names', bytes: compress(small, { error: '0.0000001cm', checksum: false }).bytes },
    { name: 'merged tail (23 samples), unicode names', bytes: compress(tail, { error: '0.1cm' }).bytes },
    { name: 'one sample', bytes: compress(single).bytes },
    { name: 'no animated track (40 samples)', bytes: compress(staticClip(40)).bytes },
    { name: 'every rate 0..24 and raw, forced', bytes: forced.bytes },
  ];
}

/** Built once at import, so that the sweeps can have one test per base. */
const bases: Base[] = makeBases();
const BASE_COUNT = bases.length;

function base(index: number): Base {
  return bases[index];
}

// ---------------------------------------------------------------------------------------

describe('decoder fuzz: the valid bases', () => {
  it('open and decode cleanly, with and without checksum verification', () => {
    expect(bases).toHaveLength(BASE_COUNT);
    for (const { name, bytes } of bases) {
      for (const verifyChecksum of [true, false]) {
        for (const variant of CACHE_VARIANTS) {
          const outcome = probe(bytes, { ...variant, verifyChecksum }, `${name} ${JSON.stringify(variant)}`);
          expect(outcome.opened, `${name}: ${outcome.opened ? '' : outcome.error.message}`).toBe(true);
        }
      }
    }
    // Every cache variant decodes every base to the same values as the default.
    for (const { name, bytes } of bases) {
      const reference = CompressedClip.open(bytes);
      const expected = new Float32Array(reference.boneCount * POSE_STRIDE),
        actual = new Float32Array(expected.length);
      for (const variant of CACHE_VARIANTS) {
        const clip = CompressedClip.open(bytes, variant);
        // Random access order: backwards, then across the wrap.
        for (const time of [
          reference.duration,
          reference.duration / 2,
          0,
          reference.duration + 0.5 / reference.sampleRate,
          1 / reference.sampleRate,
        ]) {
          for (const looping of LOOPINGS) {
            reference.createSampler().sample(time, expected, { looping });
            clip.createSampler().sample(time, actual, { looping });
            expect(Array.from(actual), `${name} ${JSON.stringify(variant)} at ${time} (${looping})`).toEqual(
              Array.from(expected),
            );
          }
        }
      }
    }
    // The bases cover what the sweeps need.
    const opened = bases.map((b) => CompressedClip.open(b.bytes));
    expect(opened.some((c) => c.hasChecksum && c.boneNames !== undefined)).toBe(true);
    expect(opened.some((c) => !c.hasChecksum)).toBe(true);
    expect(opened.some((c) => c.boneNames === undefined)).toBe(true);
    expect(opened.some((c) => c.segmentCount >= 3)).toBe(true);
    expect(opened.some((c) => c.sampleCount === 1)).toBe(true);
    expect(opened.some((c) => c.animatedTrackCount === 0 && c.sampleCount > 1)).toBe(true);
    const rates = new Set<number>();
    for (const c of opened)
      for (let s = 0; s < c.segmentCount; s++) for (const r of segmentBitRates(c, s)) rates.add(r);
    for (const r of [0, 1, 12, 24, RAW_BITS]) expect(rates.has(r), `some base uses rate ${r}`).toBe(true);
  });

  it('rejects bad arguments with FormatError BAD_ARGUMENT, never another error', () => {
    for (const { name, bytes } of bases) {
      const clip = CompressedClip.open(bytes);
      const expectBadArgument = (what: string, call: () => unknown) => {
        let thrown: unknown;
        try {
          call();
        } catch (error) {
          thrown = error;
        }
        expect(thrown, `${name}: ${what}`).toBeInstanceOf(FormatError);
        expect((thrown as FormatError).code, `${name}: ${what}`).toBe(FORMAT_ERROR.BAD_ARGUMENT);
      };
      const one = new Float32Array(POSE_STRIDE);
      for (const b of [-1, clip.boneCount, 0.5, Number.NaN, Infinity, 2 ** 32])
        expectBadArgument(`sampleBone index ${b}`, () => sampleBone(clip.createSampler(), 0, b, one));
      expectBadArgument('short sampleBone output', () =>
        sampleBone(clip.createSampler(), 0, 0, new Float32Array(POSE_STRIDE - 1)),
      );
      expectBadArgument('short pose', () =>
        clip.createSampler().sample(0, new Float32Array(clip.boneCount * POSE_STRIDE - 1)),
      );
      expectBadArgument('short key pose', () => sampleKey(clip.createSampler(), 0, new Float32Array(0)));
      expectBadArgument('not bytes', () => CompressedClip.open('bpk' as unknown as Uint8Array));
      expectBadArgument('null', () => CompressedClip.open(null as unknown as Uint8Array));
    }
  });

  it('reads only its own bytes: the same values wherever the bytes sit in a larger buffer, whatever surrounds them', () => {
    for (const { name, bytes } of bases) {
      const reference = CompressedClip.open(bytes);
      const expected = new Float32Array(reference.boneCount * POSE_STRIDE);
      const actual = new Float32Array(expected.length);
      for (const [offset, fill] of [
        [0, 0xff],
        [4, 0x00],
        [8, 0xaa],
        [1, 0x55],
        [3, 0xff],
      ] as const) {
        const buffer = new Uint8Array(offset + bytes.byteLength + 64).fill(fill);
        buffer.set(bytes, offset);
        const clip = CompressedClip.open(buffer.subarray(offset, offset + bytes.byteLength));
        for (const time of hostileTimes(reference, 'full')) {
          for (const looping of LOOPINGS) {
            reference.createSampler().sample(time, expected, { looping });
            clip.createSampler().sample(time, actual, { looping });
            expect(Array.from(actual), `${name} at +${offset} fill ${hex(fill)}, t=${time}`).toEqual(
              Array.from(expected),
            );
          }
        }
      }
      // An ArrayBuffer works as well as a view of it.
      const copy = bytes.slice();
      const fromBuffer = CompressedClip.open(copy.buffer);
      sampleKey(fromBuffer.createSampler(), 0, actual);
      sampleKey(reference.createSampler(), 0, expected);
      expect(Array.from(actual)).toEqual(Array.from(expected));
    }
  });
});

describe('decoder fuzz: random bytes', () => {
  it('pure random buffers are rejected with a FormatError', { timeout: TIMEOUT_MS }, () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 0, maxLength: 2048 }), (bytes) => {
        const outcome = probe(bytes, {}, `random ${bytes.byteLength} bytes`);
        return !outcome.opened;
      }),
      params(1),
    );
  });

  it('random bodies behind a plausible header (magic, version, size, CRC right) give a FormatError or a clean decode', {
    timeout: TIMEOUT_MS,
  }, () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: BASE_COUNT - 1 }),
        fc.nat(),
        fc.uint8Array({ minLength: 0, maxLength: 1024 }),
        fc.boolean(),
        (b, cutAt, tail, verifyChecksum) => {
          // Keep a valid prefix (at least the header), then random bytes.
          const { bytes } = base(b);
          const keep = HEADER.SIZE + (cutAt % (bytes.byteLength - HEADER.SIZE + 1));
          const out = new Uint8Array(keep + tail.byteLength);
          out.set(bytes.subarray(0, keep));
          out.set(tail, keep);
          reseal(setTotalSize(out));
          probe(out, { verifyChecksum }, `${base(b).name}: first ${keep} bytes + ${tail.byteLength} random`);
        },
      ),
      params(2),
    );
  });

  it('random header fields with a valid magic and version give a FormatError or a clean decode', {
    timeout: TIMEOUT_MS,
  }, () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: BASE_COUNT - 1 }),
        fc.uint8Array({ minLength: HEADER.SIZE - 8, maxLength: HEADER.SIZE - 8 }),
        fc.uint32Array({ minLength: 0, maxLength: 8 }),
        (b, header, keepFields) => {
          // A random header (after magic and version), except for a few fields kept from the base.
          const out = base(b).bytes.slice();
          const original = out.slice(0, HEADER.SIZE);
          out.set(header, 8);
          for (const k of keepFields) {
            const at = 8 + 4 * (k % ((HEADER.SIZE - 8) / 4));
            out.set(original.subarray(at, at + 4), at);
          }
          reseal(setTotalSize(out));
          probe(out, { verifyChecksum: true }, `${base(b).name}: random header`);
        },
      ),
      params(3),
    );
  });
});

describe('decoder fuzz: mutations of valid files', () => {
  /** One edit: set a byte, xor a byte, or flip one bit, at a position anywhere or in the first 128 bytes. */
  const edit = fc.record({
    at: fc.oneof(fc.nat({ max: 127 }), fc.nat()),
    value: fc.integer({ min: 0, max: 255 }),
    how: fc.constantFrom('set', 'xor', 'bit'),
  });

  it('1–8 random byte edits, a resize, CRC resealed or not: a FormatError or a clean decode', {
    timeout: TIMEOUT_MS,
  }, () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: BASE_COUNT - 1 }),
        fc.array(edit, { minLength: 1, maxLength: 8 }),
        fc.option(fc.integer({ min: -64, max: 64 }), { nil: undefined }),
        fc.boolean(),
        fc.boolean(),
        fc.array(fc.double(), { maxLength: 3 }),
        fc.nat({ max: CACHE_VARIANTS.length - 1 }),
        (b, edits, resize, fixSize, fixCrc, times, variant) => {
          const original = base(b).bytes;
          const size = Math.max(0, original.byteLength + (resize ?? 0));
          const out = new Uint8Array(size);
          out.set(original.subarray(0, Math.min(size, original.byteLength)));
          for (const e of edits) {
            if (size === 0) break;
            const at = e.at % size;
            if (e.how === 'set') out[at] = e.value;
            else if (e.how === 'xor') out[at] ^= e.value || 1;
            else out[at] ^= 1 << (e.value & 7);
          }
          if (fixSize) setTotalSize(out);
          if (fixCrc) reseal(out);
          const context = `${base(b).name}: edits ${JSON.stringify(edits)}, resize ${resize}, fixSize ${fixSize}, fixCrc ${fixCrc}`;
          probe(
            out,
            { ...CACHE_VARIANTS[variant], verifyChecksum: fixCrc },
            `${context}, cache variant ${variant}`,
            'full',
            times,
          );
        },
      ),
      params(4),
    );
  });

  for (const { name, bytes } of bases.filter((b) => b.bytes.byteLength <= 2048)) {
    it(`every single bit flip of ${name}, checksum not verified: a FormatError or a clean decode`, {
      timeout: TIMEOUT_MS,
    }, () => {
      let opened = 0,
        rejected = 0;
      const out = bytes.slice();
      for (let bit = 0; bit < bytes.byteLength * 8; bit++) {
        const at = bit >>> 3,
          mask = 1 << (bit & 7);
        out[at] ^= mask;
        const variant = bit % CACHE_VARIANTS.length;
        const outcome = probe(
          out,
          { ...CACHE_VARIANTS[variant], verifyChecksum: false },
          `${name}: bit ${bit} (byte ${at}) flipped, cache variant ${variant}`,
          'light',
        );
        if (outcome.opened) opened++;
        else rejected++;
        out[at] ^= mask;
      }
      // Both branches are exercised: flips in packed samples still open, flips in the layout do not.
      expect(opened).toBeGreaterThan(0);
      expect(rejected).toBeGreaterThan(0);
    });
  }

  it('random single bit flips in the larger bases, checksum not verified', { timeout: TIMEOUT_MS }, () => {
    const large = () => bases.filter((b) => b.bytes.byteLength > 2048);
    fc.assert(
      fc.property(fc.nat(), fc.nat(), fc.nat({ max: CACHE_VARIANTS.length - 1 }), (which, bit, variant) => {
        const list = large();
        if (list.length === 0) return;
        const { name, bytes } = list[which % list.length];
        const out = bytes.slice();
        const b = bit % (bytes.byteLength * 8);
        out[b >>> 3] ^= 1 << (b & 7);
        probe(
          out,
          { ...CACHE_VARIANTS[variant], verifyChecksum: false },
          `${name}: bit ${b} flipped, cache variant ${variant}`,
        );
      }),
      params(5),
    );
  });

  it('with the checksum verified, every single bit flip of a checksummed file is caught', {
    timeout: TIMEOUT_MS,
  }, () => {
    const seen = new Set<FormatErrorCode>();
    let files = 0;
    for (const { name, bytes } of bases) {
      if (!CompressedClip.open(bytes).hasChecksum) continue;
      files++;
      const out = bytes.slice();
      for (let bit = 0; bit < bytes.byteLength * 8; bit++) {
        const at = bit >>> 3,
          mask = 1 << (bit & 7);
        out[at] ^= mask;
        const outcome = probe(out, { verifyChecksum: true }, `${name}: bit ${bit} (byte ${at}) flipped`, 'light');
        if (outcome.opened) {
          throw new ContractViolation(
            `${name}: flipping bit ${bit & 7} of byte ${at} (${fieldAt(at)}) went unnoticed with the checksum verified`,
          );
        }
        seen.add(outcome.error.code);
        out[at] ^= mask;
      }
    }
    expect(files).toBeGreaterThanOrEqual(3);
    // The header fields outside the CRC have their own checks; everything else is the CRC's.
    expect([...seen].sort()).toEqual(
      expect.arrayContaining([
        FORMAT_ERROR.BAD_MAGIC,
        FORMAT_ERROR.UNSUPPORTED_VERSION,
        FORMAT_ERROR.BAD_CHECKSUM,
        FORMAT_ERROR.BAD_SIZE,
      ]),
    );
  });

  it('with the checksum verified and not resealed, random multi-byte damage is always caught', {
    timeout: TIMEOUT_MS,
  }, () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: BASE_COUNT - 1 }),
        fc.array(edit, { minLength: 1, maxLength: 8 }),
        (b, edits) => {
          const { name, bytes } = base(b);
          if (!CompressedClip.open(bytes).hasChecksum) return;
          const out = bytes.slice();
          for (const e of edits) {
            const at = e.at % out.byteLength;
            if (e.how === 'set') out[at] = e.value;
            else if (e.how === 'xor') out[at] ^= e.value || 1;
            else out[at] ^= 1 << (e.value & 7);
          }
          if (crc32(out) === crc32(bytes)) return; // the edits cancelled out
          const outcome = probe(out, { verifyChecksum: true }, `${name}: edits ${JSON.stringify(edits)}`, 'light');
          if (outcome.opened)
            throw new ContractViolation(
              `${name}: edits ${JSON.stringify(edits)} went unnoticed with the checksum verified`,
            );
        },
      ),
      params(6),
    );
  });
});

describe('decoder fuzz: truncation and extension', () => {
  it('every truncation (each header byte, each section boundary, each byte) is a FormatError: TOO_SMALL or BAD_SIZE', {
    timeout: TIMEOUT_MS,
  }, () => {
    for (const { name, bytes } of bases) {
      for (let length = 0; length < bytes.byteLength; length++) {
        const outcome = probe(bytes.slice(0, length), {}, `${name}: first ${length} bytes`);
        if (outcome.opened) throw new ContractViolation(`${name}: truncated to ${length} bytes but opened`);
        expect(outcome.error.code, `${name} truncated to ${length}`).toBe(
          length < HEADER.SIZE ? FORMAT_ERROR.TOO_SMALL : FORMAT_ERROR.BAD_SIZE,
        );
      }
    }
  });

  it('a truncation whose size field and CRC are patched to match is still caught by the section checks', {
    timeout: TIMEOUT_MS,
  }, () => {
    for (const { name, bytes } of bases) {
      for (let length = HEADER.SIZE; length < bytes.byteLength; length++) {
        const out = reseal(setTotalSize(bytes.slice(0, length)));
        const outcome = probe(out, { verifyChecksum: true }, `${name}: first ${length} bytes, size and CRC patched`);
        if (outcome.opened)
          throw new ContractViolation(`${name}: truncated to ${length} bytes (size and CRC patched) but opened`);
      }
    }
  });

  it('cutting exactly at each section boundary names the missing section', () => {
    for (const { name, bytes } of bases) {
      const sections = sectionSizes(CompressedClip.open(bytes));
      let at = 0;
      for (const [section, length] of Object.entries(sections)) {
        if (section === 'total') continue;
        at += length;
        if (length === 0 || at >= bytes.byteLength) continue;
        for (const cut of [at - 1, at, at + 1]) {
          if (cut < HEADER.SIZE || cut >= bytes.byteLength) continue;
          const outcome = probe(
            reseal(setTotalSize(bytes.slice(0, cut))),
            {},
            `${name}: cut at ${cut} (end of ${section})`,
          );
          expect(outcome.opened, `${name}: cut at ${cut}`).toBe(false);
          if (!outcome.opened) {
            expect([FORMAT_ERROR.BAD_SECTION, FORMAT_ERROR.BAD_SIZE, FORMAT_ERROR.BAD_OFFSET]).toContain(
              outcome.error.code,
            );
          }
        }
      }
    }
  });

  it('bytes appended after the last section are a FormatError BAD_SIZE', () => {
    for (const { name, bytes } of bases) {
      for (const extra of [1, 2, 3, 4, 8, 64]) {
        const out = new Uint8Array(bytes.byteLength + extra);
        out.set(bytes);
        const plain = probe(out.slice(), {}, `${name}: +${extra} bytes`);
        expect(plain.opened ? undefined : plain.error.code).toBe(FORMAT_ERROR.BAD_SIZE);
        const patched = probe(reseal(setTotalSize(out)), {}, `${name}: +${extra} bytes, size patched`);
        expect(patched.opened ? undefined : patched.error.code, `${name} +${extra}`).toBe(FORMAT_ERROR.BAD_SIZE);
      }
    }
  });
});

// ---------------------------------------------------------------------------------------
// Extreme values in every header field, the parents, segment 0's rates and ranges, and the
// string lengths of the names section.

type FieldName = Exclude<keyof typeof HEADER, 'SIZE'>;

/** Offset and width in bytes of each header field (format.ts gives the widths in comments only). */
const FIELDS: Readonly<Record<FieldName, readonly [offset: number, width: 1 | 2 | 4 | 8]>> = {
  MAGIC: [HEADER.MAGIC, 4],
  VERSION: [HEADER.VERSION, 2],
  FLAGS: [HEADER.FLAGS, 2],
  CHECKSUM: [HEADER.CHECKSUM, 4],
  TOTAL_SIZE: [HEADER.TOTAL_SIZE, 4],
  BONE_COUNT: [HEADER.BONE_COUNT, 2],
  ROTATION_FORMAT: [HEADER.ROTATION_FORMAT, 1],
  UNIT: [HEADER.UNIT, 1],
  SAMPLE_COUNT: [HEADER.SAMPLE_COUNT, 4],
  SAMPLE_RATE: [HEADER.SAMPLE_RATE, 8],
  SEGMENT_COUNT: [HEADER.SEGMENT_COUNT, 4],
  SEGMENT_SIZE: [HEADER.SEGMENT_SIZE, 2],
  ANIMATED_TRACK_COUNT: [HEADER.ANIMATED_TRACK_COUNT, 2],
  START_TIME: [HEADER.START_TIME, 8],
  DURATION: [HEADER.DURATION, 8],
  NODE_INDICES_OFFSET: [HEADER.NODE_INDICES_OFFSET, 4],
  PARENTS_OFFSET: [HEADER.PARENTS_OFFSET, 4],
  BITSETS_OFFSET: [HEADER.BITSETS_OFFSET, 4],
  CONSTANTS_OFFSET: [HEADER.CONSTANTS_OFFSET, 4],
  CLIP_RANGES_OFFSET: [HEADER.CLIP_RANGES_OFFSET, 4],
  SEGMENTS_OFFSET: [HEADER.SEGMENTS_OFFSET, 4],
  NAMES_OFFSET: [HEADER.NAMES_OFFSET, 4],
  ROTATION_REFS_OFFSET: [HEADER.ROTATION_REFS_OFFSET, 4],
};

function headerFields(): [FieldName, number][] {
  return (Object.keys(FIELDS) as FieldName[]).map((name) => [name, FIELDS[name][0]]);
}

/** Name of the header field holding byte `at`, for messages. */
function fieldAt(at: number): string {
  for (const [name, offset] of headerFields())
    if (at >= offset && at < offset + FIELDS[name][1]) return `header ${name}`;
  return at < HEADER.SIZE ? 'header padding' : 'body';
}

function readField(view: DataView, at: number, width: number): number {
  return width === 1
    ? view.getUint8(at)
    : width === 2
      ? view.getUint16(at, true)
      : width === 4
        ? view.getUint32(at, true)
        : view.getFloat64(at, true);
}

function writeField(view: DataView, at: number, width: number, value: number): void {
  if (width === 1) view.setUint8(at, value);
  else if (width === 2) view.setUint16(at, value, true);
  else if (width === 4) view.setUint32(at, value, true);
  else view.setFloat64(at, value, true);
}

/** 0, 1, the maxima, the file size ± 1 and the original ± 1, ± 4, masked to `width` bytes. */
function extremeValues(width: 1 | 2 | 4, original: number, size: number): number[] {
  const max = width === 4 ? 0xffffffff : width === 2 ? 0xffff : 0xff;
  const raw = [
    0,
    1,
    2,
    3,
    4,
    0x7f,
    0x80,
    0xff,
    0x100,
    0x7fff,
    0x8000,
    0xffff,
    0x10000,
    0x7fffffff,
    0x80000000,
    0xffffffff,
    size - 1,
    size,
    size + 1,
    original - 1,
    original + 1,
    original - 4,
    original + 4,
    original * 2,
    max,
  ];
  const values = raw
    .map((v) => (v < 0 ? v + max + 1 : v > max ? v % (max + 1) : v))
    .map((v) => Math.min(max, Math.max(0, v)));
  return [...new Set(values)].filter((v) => v !== original);
}

const RATE_VALUES = [
  0,
  -0,
  -1,
  Number.NaN,
  Infinity,
  -Infinity,
  Number.MIN_VALUE,
  1e-300,
  1e-10,
  0.5,
  1,
  29.97,
  1e10,
  1e300,
  Number.MAX_VALUE,
];

describe('decoder fuzz: extreme values', () => {
  /** Probes `out` twice: resealed with the CRC verified, and as it is with the CRC not verified. */
  const probeBoth = (out: Uint8Array, context: string): Outcome[] => [
    probe(reseal(out.slice()), { verifyChecksum: true }, `${context} (CRC resealed)`, 'light'),
    probe(out, { verifyChecksum: false }, `${context} (CRC not verified)`, 'light'),
  ];

  it('every header field set to 0, 1, 0xFFFF, 0xFFFFFFFF, size ± 1, original ± 1 …', { timeout: TIMEOUT_MS }, () => {
    const codes = new Map<string, Set<string>>();
    for (const { name, bytes } of bases) {
      const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
      for (const [field, at] of headerFields()) {
        const width = FIELDS[field][1];
        const original = readField(view, at, width);
        const values = width === 8 ? RATE_VALUES : extremeValues(width, original, bytes.byteLength);
        for (const value of values) {
          const out = bytes.slice();
          writeField(new DataView(out.buffer), at, width, value);
          const [sealed] = probeBoth(out, `${name}: ${field} = ${width === 8 ? value : hex(value)} (was ${original})`);
          if (!sealed.opened) {
            if (!codes.has(field)) codes.set(field, new Set());
            codes.get(field)!.add(sealed.error.code);
          }
        }
      }
    }
    // Fields with one obvious verdict get it.
    expect([...codes.get('MAGIC')!]).toEqual([FORMAT_ERROR.BAD_MAGIC]);
    expect([...codes.get('VERSION')!]).toEqual([FORMAT_ERROR.UNSUPPORTED_VERSION]);
    expect([...codes.get('TOTAL_SIZE')!]).toEqual([FORMAT_ERROR.BAD_SIZE]);
    expect([...codes.get('SEGMENT_SIZE')!]).toEqual([FORMAT_ERROR.BAD_HEADER]);
    expect([...codes.get('SAMPLE_RATE')!]).toEqual([FORMAT_ERROR.BAD_HEADER]);
    for (const field of [
      'PARENTS_OFFSET',
      'BITSETS_OFFSET',
      'CONSTANTS_OFFSET',
      'CLIP_RANGES_OFFSET',
      'SEGMENTS_OFFSET',
      'ROTATION_REFS_OFFSET',
    ] as const) {
      expect([...codes.get(field)!], field).toEqual([FORMAT_ERROR.BAD_OFFSET]);
    }
  });

  it('sample rates from denormal to MAX_VALUE either fail or keep the duration and every sample finite', () => {
    for (const { name, bytes } of bases) {
      for (const rate of [Number.MIN_VALUE, 1e-320, 1e-300, 1e-30, 1e-6, 1e6, 1e30, 1e300, Number.MAX_VALUE]) {
        const out = bytes.slice();
        new DataView(out.buffer).setFloat64(HEADER.SAMPLE_RATE, rate, true);
        probe(reseal(out), {}, `${name}: sample rate ${rate}`);
      }
    }
  });

  it('sample and segment counts set together to consistent extremes (1 … 0xFFFFFFFF) fail fast or decode', {
    timeout: TIMEOUT_MS,
  }, () => {
    for (const { name, bytes } of bases) {
      const view = new DataView(bytes.buffer, bytes.byteOffset);
      const original = view.getUint32(HEADER.SAMPLE_COUNT, true);
      const counts = [
        1,
        2,
        8,
        15,
        16,
        17,
        23,
        24,
        31,
        32,
        33,
        0xffff,
        0x10000,
        0xfffff,
        0x7fffffff,
        0x80000000,
        0xfffffff0,
        0xffffffff,
        original - 1,
        original + 1,
        original + 7,
        original + 8,
        original + 16,
        original * 16,
      ];
      for (const count of counts) {
        if (count < 1 || count > 0xffffffff || count === original) continue;
        const out = bytes.slice();
        const v = new DataView(out.buffer);
        v.setUint32(HEADER.SAMPLE_COUNT, count, true);
        v.setUint32(HEADER.SEGMENT_COUNT, segmentCountFor(count), true);
        probeBoth(out, `${name}: sample count ${count}, segment count ${segmentCountFor(count)}`);
      }
    }
  });

  it('every parent index set to −32768, −2, −1, 0, b − 1, b, b + 1, 32767', () => {
    for (const { name, bytes } of bases) {
      const clip = CompressedClip.open(bytes);
      const at0 = new DataView(bytes.buffer, bytes.byteOffset).getUint32(HEADER.PARENTS_OFFSET, true);
      for (let b = 0; b < clip.boneCount; b++) {
        for (const p of [-32768, -2, -1, 0, b - 1, b, b + 1, 32767]) {
          const out = bytes.slice();
          new DataView(out.buffer).setInt16(at0 + 2 * b, p, true);
          const [sealed] = probeBoth(out, `${name}: parent of bone ${b} = ${p}`);
          const valid = p >= -1 && p < b;
          expect(sealed.opened, `${name}: parent of bone ${b} = ${p}`).toBe(valid);
          if (!sealed.opened) expect(sealed.error.code).toBe(FORMAT_ERROR.BAD_VALUE);
        }
      }
    }
  });

  it('every rate byte and range byte of the first segment set to extremes', { timeout: TIMEOUT_MS }, () => {
    const rateBytes = [0, 1, 2, 12, 23, 24, 25, 31, 32, 33, 63, 64, 64 + 32, 128, 128 + 24, 192, 192 + 32, 255];
    const rangeBytes = [0, 1, 127, 128, 254, 255];
    for (const { name, bytes } of bases) {
      const clip = CompressedClip.open(bytes);
      const animated = clip.animatedTrackCount;
      const at0 = new DataView(bytes.buffer, bytes.byteOffset).getUint32(HEADER.SEGMENTS_OFFSET, true);
      for (let j = 0; j < animated; j++) {
        for (const v of rateBytes) {
          const out = bytes.slice();
          out[at0 + j] = v;
          probeBoth(out, `${name}: segment 0 rate byte of track ${j} = ${v}`);
        }
        for (let r = 0; r < 6; r++) {
          for (const v of rangeBytes) {
            const out = bytes.slice();
            out[at0 + animated + 6 * j + r] = v;
            probeBoth(out, `${name}: segment 0 range byte ${r} of track ${j} = ${v}`);
          }
        }
      }
    }
  });

  it('every string length of the names section set to 0, ± 1, 0xFFFF and the bytes left ± 1; invalid UTF-8', () => {
    for (const { name, bytes } of bases) {
      const clip = CompressedClip.open(bytes);
      if (clip.boneNames === undefined) continue;
      const view = new DataView(bytes.buffer, bytes.byteOffset);
      let at = view.getUint32(HEADER.NAMES_OFFSET, true);
      for (let s = 0; s <= clip.boneCount; s++) {
        const length = view.getUint16(at, true);
        const left = bytes.byteLength - at - 2;
        for (const v of [0, 1, length - 1, length + 1, length + 4, left - 1, left, left + 1, 0x7fff, 0xffff]) {
          if (v < 0 || v > 0xffff || v === length) continue;
          const out = bytes.slice();
          new DataView(out.buffer).setUint16(at, v, true);
          probeBoth(out, `${name}: string ${s} length ${v} (was ${length})`);
        }
        if (length > 0) {
          for (const bad of [0xff, 0xc0, 0x80, 0xed]) {
            const out = bytes.slice();
            out[at + 2] = bad;
            const [sealed] = probeBoth(out, `${name}: string ${s} starts with byte ${hex(bad)}`);
            expect(sealed.opened ? undefined : sealed.error.code, `${name}: string ${s} byte ${hex(bad)}`).toBe(
              FORMAT_ERROR.BAD_VALUE,
            );
          }
        }
        at += 2 + length;
      }
    }
  });

  it('the flags: every unknown bit is a BAD_HEADER; toggling a known one never opens a checksummed file unnoticed', () => {
    for (const { name, bytes } of bases) {
      const flags = new DataView(bytes.buffer, bytes.byteOffset).getUint16(HEADER.FLAGS, true);
      for (let bit = 0; bit < 16; bit++) {
        const out = bytes.slice();
        new DataView(out.buffer).setUint16(HEADER.FLAGS, flags ^ (1 << bit), true);
        const known = KNOWN_FLAGS & (1 << bit);
        const outcome = probe(out, { verifyChecksum: true }, `${name}: flag bit ${bit} toggled`);
        if (!known)
          expect(outcome.opened ? undefined : outcome.error.code, `${name}: unknown flag bit ${bit}`).toBe(
            FORMAT_ERROR.BAD_HEADER,
          );
        else if (flags & FLAGS.HAS_CHECKSUM)
          expect(outcome.opened, `${name}: flag bit ${bit} toggled on a checksummed file`).toBe(false);
      }
    }
  });
});

describe('decoder fuzz: the format version', () => {
  it('every other version is UNSUPPORTED_VERSION with the message for older or newer files', () => {
    const { bytes } = bases[0];
    for (let version = 0; version <= 0xffff; version += version < 16 ? 1 : 251) {
      if (version === VERSION) continue;
      const out = bytes.slice();
      new DataView(out.buffer).setUint16(HEADER.VERSION, version, true);
      const outcome = probe(out, {}, `version ${version}`);
      expect(outcome.opened).toBe(false);
      if (outcome.opened) continue;
      expect(outcome.error.code).toBe(FORMAT_ERROR.UNSUPPORTED_VERSION);
      expect(outcome.error.message).toContain(version < VERSION ? 'no longer supported' : 'newer than this build');
    }
    expect(new DataView(bytes.buffer, bytes.byteOffset).getUint32(HEADER.MAGIC, true)).toBe(MAGIC);
  });
});
