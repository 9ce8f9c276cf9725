/**
 * Hostile transport-form input (docs/transport.md). Every case ends in one of two ways:
 * `decodeTransport` throws a FormatError with a known code and a byte offset inside the
 * input, or it returns bytes no larger than the expansion bound allows, which
 * `CompressedClip.open` then opens or rejects with a FormatError. Any other exception, a
 * hang (the vitest timeout is the guard) or an oversized result fails the test.
 *
 * Deterministic: fast-check runs with a fixed seed. `FUZZ_RUNS` sets the number of cases of
 * each random property (default {@link DEFAULT_RUNS}; `npm run fuzz` runs 200,000), and
 * `FUZZ_SEED` replays another seed. The sweeps (every truncation, every bit flip of a small
 * clip) run in full either way.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { encodeTransport } from '../../src/compress/transport.js';
import { CompressedClip } from '../../src/runtime/compressed-clip.js';
import { FORMAT_ERROR, FormatError } from '../../src/runtime/errors.js';
import { MAX_QUANTIZED_BITS, RAW_BITS } from '../../src/runtime/format.js';
import { EXPANSION_SLACK, MAX_EXPANSION, TRANSPORT_HEADER, decodeTransport } from '../../src/runtime/transport.js';
import { encodeWithRates } from '../utils/clips.js';
import { makeSyntheticClip, mulberry32 } from '../utils/synthetic.js';

const DEFAULT_RUNS = 100; // `npm run fuzz` runs 200,000
const RUNS = positiveInt(process.env.FUZZ_RUNS, DEFAULT_RUNS);
const SEED = positiveInt(process.env.FUZZ_SEED, 0x62707431); // "bpt1"
const TIMEOUT_MS = 30_000 + RUNS * 5;

function positiveInt(text: string | undefined, fallback: number): number {
  if (text === undefined || text === '') return fallback;
  const n = Number(text);
  if (!Number.isSafeInteger(n) || n < 1) throw new Error(`expected a whole number ≥ 1, got "${text}"`);
  return n;
}

function params(index: number): fc.Parameters<unknown> {
  return { seed: (SEED + index * 0x9e3779b1) | 0, numRuns: RUNS, endOnFailure: true };
}

const KNOWN_CODES: ReadonlySet<string> = new Set(Object.values(FORMAT_ERROR));
const ALL_RATES = [0, ...Array.from({ length: MAX_QUANTIZED_BITS }, (_, i) => i + 1), RAW_BITS];

/** A small valid transport clip exercising every rate. */
function smallTransport(seed: number, sampleCount: number): Uint8Array {
  const clip = makeSyntheticClip({
    boneCount: 3,
    sampleCount,
    seed,
    animatedScale: true,
    maxAngleDeg: 175,
    animatedTranslationShare: 0.5,
  });
  const random = mulberry32(seed);
  return encodeTransport(
    encodeWithRates(clip, () => ALL_RATES[Math.floor(random() * ALL_RATES.length)], { reference: 'identity' }).bytes,
  );
}

/** Fails unless `bytes` decodes within the contract (see the file comment). */
function checkContract(bytes: Uint8Array, context: string): void {
  let out: Uint8Array;
  try {
    out = decodeTransport(bytes);
  } catch (e) {
    if (!(e instanceof FormatError))
      throw new Error(`${context}: threw ${e instanceof Error ? `${e.name}: ${e.message}` : String(e)}`);
    if (!KNOWN_CODES.has(e.code)) throw new Error(`${context}: unknown code ${e.code}`);
    if (e.byteOffset < -1 || e.byteOffset > Math.max(bytes.length, 1 << 28))
      throw new Error(`${context}: byte offset ${e.byteOffset}`);
    return;
  }
  if (out.length > MAX_EXPANSION * bytes.length + EXPANSION_SLACK)
    throw new Error(`${context}: ${out.length} bytes from ${bytes.length}`);
  try {
    CompressedClip.open(out);
  } catch (e) {
    if (!(e instanceof FormatError)) throw new Error(`${context}: open threw ${String(e)}`);
  }
}

describe('transport fuzz', () => {
  const samples = [smallTransport(1, 20), smallTransport(2, 40), smallTransport(3, 1)];

  it('every truncation of a small clip is rejected', () => {
    for (const t of samples) {
      for (let n = 0; n < t.length; n++) expect(() => decodeTransport(t.subarray(0, n))).toThrow(FormatError);
    }
  });

  it(
    'every single bit flip of a small clip keeps the contract',
    () => {
      const t = samples[0];
      for (let i = 0; i < t.length * 8; i++) {
        const bad = t.slice();
        bad[i >>> 3] ^= 1 << (i & 7);
        checkContract(bad, `bit ${i}`);
      }
    },
    TIMEOUT_MS,
  );

  it(
    'random byte edits keep the contract',
    () => {
      fc.assert(
        fc.property(
          fc.integer({ min: 0, max: samples.length - 1 }),
          fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 8 }),
          (which, edits) => {
            const bad = samples[which].slice();
            for (const [at, value] of edits) bad[at % bad.length] = value;
            checkContract(bad, `edits ${JSON.stringify(edits)}`);
          },
        ),
        params(1),
      );
    },
    TIMEOUT_MS,
  );

  it(
    'a valid header over random bytes keeps the contract',
    () => {
      fc.assert(
        fc.property(
          fc.uint8Array({ minLength: 0, maxLength: 600 }),
          fc.integer({ min: 0, max: 1 << 20 }),
          (body, size) => {
            const bytes = new Uint8Array(TRANSPORT_HEADER.SIZE + 1 + body.length);
            bytes.set(samples[0].subarray(0, TRANSPORT_HEADER.SIZE));
            new DataView(bytes.buffer).setUint32(TRANSPORT_HEADER.RUNTIME_SIZE, size, true);
            bytes.set(body, TRANSPORT_HEADER.SIZE + 1); // the stream's first byte is 0
            checkContract(bytes, `size ${size}`);
          },
        ),
        params(2),
      );
    },
    TIMEOUT_MS,
  );
});
