import { describe, expect, it } from 'vitest';

import { compress } from '../../src/compress/index.js';
import { RangeEncoder } from '../../src/compress/entropy-encoder.js';
import { encodeTransport } from '../../src/compress/transport.js';
import { CompressedClip } from '../../src/runtime/compressed-clip.js';
import { FORMAT_ERROR, FormatError, type FormatErrorCode } from '../../src/runtime/errors.js';
import { HEADER, MAX_QUANTIZED_BITS, RAW_BITS } from '../../src/runtime/format.js';
import { POSE_STRIDE } from '../../src/runtime/pose.js';
import {
  EXPANSION_SLACK,
  MAX_EXPANSION,
  TRANSPORT_HEADER,
  TRANSPORT_MAGIC,
  TRANSPORT_VERSION,
  codeClip,
  decodeTransport,
  isTransport,
  openClip,
} from '../../src/runtime/transport.js';
import { encodeWithRates, fixtureNames, loadFixture } from '../utils/clips.js';
import { makeSyntheticClip, mulberry32 } from '../utils/synthetic.js';
import { sampleKey } from '../../src/runtime/sampler.js';

const ALL_RATES = [0, ...Array.from({ length: MAX_QUANTIZED_BITS }, (_, i) => i + 1), RAW_BITS];

function expectFormatError(run: () => unknown, code: FormatErrorCode): FormatError {
  try {
    run();
  } catch (e) {
    expect(e).toBeInstanceOf(FormatError);
    expect((e as FormatError).code).toBe(code);
    return e as FormatError;
  }
  throw new Error(`expected a FormatError ${code}`);
}

function keyPoses(clip: CompressedClip): Float32Array {
  const out = new Float32Array(clip.sampleCount * clip.boneCount * POSE_STRIDE);
  const pose = new Float32Array(clip.boneCount * POSE_STRIDE);
  for (let k = 0; k < clip.sampleCount; k++) out.set(sampleKey(clip.createSampler(), k, pose), k * pose.length);
  return out;
}

/** Synthetic clips with every rate (0, 1 … 24, raw), dropped components other than w, animated scales. */
function forcedClip(
  seed: number,
  sampleCount: number,
  options: { includeNames?: boolean; checksum?: boolean } = {},
): Uint8Array {
  const clip = makeSyntheticClip({
    boneCount: 6,
    sampleCount,
    seed,
    animatedScale: true,
    maxAngleDeg: 175,
    animatedTranslationShare: 0.5,
  });
  const random = mulberry32(seed * 7 + 1);
  return encodeWithRates(clip, () => ALL_RATES[Math.floor(random() * ALL_RATES.length)], {
    reference: 'identity',
    ...options,
  }).bytes;
}

describe('transport form', () => {
  const fixtures = fixtureNames()
    .slice(0, 4)
    .map((f) => compress(loadFixture(f)).bytes);

  it('decodes to the exact runtime bytes of every fixture, smaller than them', () => {
    for (const bpk of fixtures) {
      const transport = encodeTransport(bpk);
      expect(isTransport(transport)).toBe(true);
      expect(isTransport(bpk)).toBe(false);
      expect(transport.length).toBeLessThan(bpk.length * 0.97);
      expect(decodeTransport(transport)).toEqual(bpk);
    }
  });

  it('round-trips every rate, raw values, rate-0 constants, short clips, with and without names and checksum', () => {
    const cases: Uint8Array[] = [];
    for (let seed = 1; seed <= 12; seed++) {
      const samples = [1, 2, 9, 16, 17, 23, 24, 40, 61][seed % 9];
      cases.push(forcedClip(seed, samples, { includeNames: seed % 2 === 0, checksum: seed % 3 !== 0 }));
    }
    for (const bpk of cases) expect(decodeTransport(encodeTransport(bpk))).toEqual(bpk);
  });

  it('is deterministic', () => {
    expect(encodeTransport(fixtures[0])).toEqual(encodeTransport(fixtures[0]));
  });

  it('opens either form to the same clip', () => {
    const bpk = fixtures[1];
    const transport = encodeTransport(bpk);
    const direct = CompressedClip.open(bpk);
    const viaTransport = openClip(transport);
    expect(viaTransport.byteLength).toBe(bpk.length);
    expect(keyPoses(viaTransport)).toEqual(keyPoses(direct));
    expect(keyPoses(openClip(bpk))).toEqual(keyPoses(direct));
    // An ArrayBuffer and a view at an odd offset work too.
    const shifted = new Uint8Array(transport.length + 1);
    shifted.set(transport, 1);
    expect(keyPoses(openClip(shifted.subarray(1)))).toEqual(keyPoses(direct));
    expect(keyPoses(openClip(transport.slice().buffer))).toEqual(keyPoses(direct));
  });

  it('validates the clip it encodes', () => {
    const bad = fixtures[0].slice();
    bad[0] ^= 0xff;
    expectFormatError(() => encodeTransport(bad), FORMAT_ERROR.BAD_MAGIC);
  });
});

describe('transport validation', () => {
  const bpk = compress(loadFixture(fixtureNames()[0])).bytes;
  const good = encodeTransport(bpk);
  const edit = (change: (view: DataView, bytes: Uint8Array) => void): Uint8Array => {
    const out = good.slice();
    change(new DataView(out.buffer), out);
    return out;
  };

  it('rejects a non-buffer, a short buffer and a bad magic', () => {
    expectFormatError(() => decodeTransport('x' as unknown as Uint8Array), FORMAT_ERROR.BAD_ARGUMENT);
    expectFormatError(() => decodeTransport(good.subarray(0, TRANSPORT_HEADER.SIZE - 1)), FORMAT_ERROR.TOO_SMALL);
    expectFormatError(
      () => decodeTransport(edit((v) => v.setUint32(0, TRANSPORT_MAGIC ^ 1, true))),
      FORMAT_ERROR.BAD_MAGIC,
    );
  });

  it('rejects other versions with what to do, and unknown flags', () => {
    const older = expectFormatError(
      () => decodeTransport(edit((v) => v.setUint16(TRANSPORT_HEADER.VERSION, 0, true))),
      FORMAT_ERROR.UNSUPPORTED_VERSION,
    );
    expect(older.message).toMatch(/compress the source clip again/);
    const newer = expectFormatError(
      () => decodeTransport(edit((v) => v.setUint16(TRANSPORT_HEADER.VERSION, TRANSPORT_VERSION + 1, true))),
      FORMAT_ERROR.UNSUPPORTED_VERSION,
    );
    expect(newer.message).toMatch(/upgrade bonepress/);
    expectFormatError(
      () => decodeTransport(edit((v) => v.setUint16(TRANSPORT_HEADER.FLAGS, 1, true))),
      FORMAT_ERROR.BAD_HEADER,
    );
  });

  it('rejects a declared size beyond the expansion bound before allocating it', () => {
    const limit = MAX_EXPANSION * good.length + EXPANSION_SLACK;
    const e = expectFormatError(
      () => decodeTransport(edit((v) => v.setUint32(TRANSPORT_HEADER.RUNTIME_SIZE, limit + 1, true))),
      FORMAT_ERROR.BAD_SIZE,
    );
    expect(e.byteOffset).toBe(TRANSPORT_HEADER.RUNTIME_SIZE);
  });

  it('rejects tables that declare more animated tracks than the declared size can hold, before building per-track tables', () => {
    // The layout walk is shared, so the encoder side shows the decoder's check on a cut file.
    const segmentsOffset = new DataView(bpk.buffer, bpk.byteOffset).getUint32(HEADER.SEGMENTS_OFFSET, true);
    const cut = bpk.slice(0, segmentsOffset + 4);
    const e = expectFormatError(() => codeClip(new RangeEncoder(), cut, cut.length), FORMAT_ERROR.BAD_SECTION);
    expect(e.byteOffset).toBe(segmentsOffset);
  });

  it('rejects truncated streams and trailing bytes', () => {
    for (const cut of [1, 2, 5, 50, good.length >> 1]) {
      expect(() => decodeTransport(good.subarray(0, good.length - cut))).toThrow(FormatError);
    }
    const longer = new Uint8Array(good.length + 3);
    longer.set(good);
    expectFormatError(() => decodeTransport(longer), FORMAT_ERROR.BAD_SIZE);
  });

  it('turns a corrupted stream into a FormatError (the runtime checksum catches what decodes)', () => {
    const random = mulberry32(5);
    for (let i = 0; i < 200; i++) {
      const at = TRANSPORT_HEADER.SIZE + Math.floor(random() * (good.length - TRANSPORT_HEADER.SIZE));
      const bad = edit((_, b) => {
        b[at] ^= 1 << Math.floor(random() * 8);
      });
      expect(() => openClip(bad)).toThrow(FormatError);
    }
  });
});
