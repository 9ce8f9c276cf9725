import { describe, expect, it } from 'vitest';

import { compress } from '../../src/compress/index.js';
import { CompressedClip } from '../../src/runtime/compressed-clip.js';
import { animatedTrack, sectionSizes, segmentBitRates } from '../../src/runtime/clip-inspection.js';
import { FORMAT_ERROR, FormatError, type FormatErrorCode } from '../../src/runtime/errors.js';
import {
  CLIP_RANGE_BYTES,
  DROP_SHIFT,
  FLAGS,
  HEADER,
  MAGIC,
  RAW_BITS,
  SEGMENT_RANGE_BYTES,
  TRACK_KIND,
  VERSION,
  align4,
} from '../../src/runtime/format.js';
import { POSE_STRIDE } from '../../src/runtime/pose.js';
import { encodeWithRates, patched, resealChecksum } from '../utils/clips.js';
import { makeSyntheticClip, mulberry32 } from '../utils/synthetic.js';
import { sampleBone, sampleKey } from '../../src/runtime/sampler.js';

/** 7 bones (21 tracks: the bitsets' last word has unused bits), 40 samples (3 segments), every track class. */
const clip = makeSyntheticClip({
  boneCount: 7,
  sampleCount: 40,
  seed: 2,
  animatedScale: true,
  animatedTranslationShare: 0.5,
  constantShare: 0.3,
  defaultShare: 0.2,
});
const BASE = compress(clip).bytes;
const NO_CHECKSUM = compress(clip, { checksum: false }).bytes;
/** Every animated track raw in every segment (checksum off, so value checks are reachable). */
const RAW = encodeWithRates(clip, () => RAW_BITS, { checksum: false }).bytes;

const base = CompressedClip.open(BASE);
const u32 = (bytes: Uint8Array, at: number) => new DataView(bytes.buffer, bytes.byteOffset).getUint32(at, true);

/** The FormatError code `open` throws (undefined when it opens); any other exception fails the test. */
function openError(
  bytes: Uint8Array,
  options?: Parameters<typeof CompressedClip.open>[1],
): FormatErrorCode | undefined {
  try {
    CompressedClip.open(bytes, options);
    return undefined;
  } catch (e) {
    if (e instanceof FormatError) return e.code;
    throw e;
  }
}

function openMessage(bytes: Uint8Array): string {
  try {
    CompressedClip.open(bytes);
  } catch (e) {
    if (e instanceof FormatError) return e.message;
    throw e;
  }
  return '';
}

/** Index and kind of the first animated track of `kind` in `c`. */
function firstAnimated(c: CompressedClip, kind: number): number {
  for (let j = 0; j < c.animatedTrackCount; j++) if (animatedTrack(c, j).kind === kind) return j;
  throw new Error(`no animated track of kind ${kind}`);
}

describe('the test file', () => {
  it('has every section and track class the corruptions below need', () => {
    const sizes = sectionSizes(base);
    for (const key of ['parents', 'bitsets', 'constants', 'clipRanges', 'rotationRefs', 'segments', 'names'] as const)
      expect(sizes[key]).toBeGreaterThan(0);
    expect(base.segmentCount).toBe(3);
    for (const kind of [TRACK_KIND.ROTATION, TRACK_KIND.TRANSLATION, TRACK_KIND.SCALE])
      expect(firstAnimated(base, kind)).toBeGreaterThanOrEqual(0);
    expect(base.hasChecksum).toBe(true);
    expect(
      Object.values(sizes)
        .slice(0, -1)
        .reduce((a, b) => a + b, 0),
    ).toBe(sizes.total);
    expect(sizes.total).toBe(BASE.length);
  });
});

describe('header', () => {
  it('rejects a buffer smaller than the header', () => {
    expect(openError(new Uint8Array(0))).toBe(FORMAT_ERROR.TOO_SMALL);
    expect(openError(BASE.slice(0, HEADER.SIZE - 1))).toBe(FORMAT_ERROR.TOO_SMALL);
  });

  it('rejects a wrong magic', () => {
    expect(u32(BASE, HEADER.MAGIC)).toBe(MAGIC);
    expect(Array.from(BASE.subarray(0, 4))).toEqual([0x42, 0x50, 0x4b, 0x1a]);
    for (const at of [0, 1, 2, 3])
      expect(
        openError(
          patched(BASE, (_v, b) => {
            b[at] ^= 0x20;
          }),
        ),
      ).toBe(FORMAT_ERROR.BAD_MAGIC);
  });

  it('rejects older and newer versions with a message saying what to do', () => {
    const withVersion = (v: number) => patched(BASE, (view) => view.setUint16(HEADER.VERSION, v, true));
    expect(openError(withVersion(0))).toBe(FORMAT_ERROR.UNSUPPORTED_VERSION);
    expect(openMessage(withVersion(0))).toBe(
      `format version 0 is no longer supported (this build reads version ${VERSION}); compress the source clip again (at byte ${HEADER.VERSION})`,
    );
    expect(openError(withVersion(VERSION + 1))).toBe(FORMAT_ERROR.UNSUPPORTED_VERSION);
    expect(openMessage(withVersion(VERSION + 1))).toBe(
      `format version ${VERSION + 1} is newer than this build reads (version ${VERSION}); upgrade bonepress (at byte ${HEADER.VERSION})`,
    );
    expect(openMessage(withVersion(0xffff))).toContain('newer than this build');
    expect(openMessage(withVersion(VERSION - 1))).toContain(`format version ${VERSION - 1} is no longer supported`);
  });

  it('rejects unknown flags', () => {
    for (const bit of [5, 8, 15]) {
      expect(
        openError(
          patched(BASE, (view) => view.setUint16(HEADER.FLAGS, view.getUint16(HEADER.FLAGS, true) | (1 << bit), true)),
        ),
      ).toBe(FORMAT_ERROR.BAD_HEADER);
    }
  });

  it('rejects a size field that does not match the buffer', () => {
    for (const delta of [-4, -1, 1, 4, 1 << 20]) {
      expect(openError(patched(BASE, (view) => view.setUint32(HEADER.TOTAL_SIZE, BASE.length + delta, true)))).toBe(
        FORMAT_ERROR.BAD_SIZE,
      );
    }
  });

  it('rejects a buffer over 256 MiB (2^28 bytes) whatever its size field says, and accepts that size at the limit', () => {
    const ofSize = (size: number) => {
      const big = new Uint8Array(size);
      big.set(NO_CHECKSUM);
      new DataView(big.buffer).setUint32(HEADER.TOTAL_SIZE, size, true);
      return big;
    };
    const over = ofSize(2 ** 28 + 4);
    expect(openError(over)).toBe(FORMAT_ERROR.BAD_SIZE);
    expect(openMessage(over)).toBe(`file size ${2 ** 28 + 4} (need 0..${2 ** 28}) (at byte ${HEADER.TOTAL_SIZE})`);
    new DataView(over.buffer).setUint32(HEADER.TOTAL_SIZE, NO_CHECKSUM.length, true);
    expect(openMessage(over)).toContain(`file size ${2 ** 28 + 4}`);
    // At the limit the size passes; this one fails later, on the bytes after its last section.
    expect(openMessage(ofSize(2 ** 28))).toMatch(/^\d+ bytes after the last section/);
  });

  it('detects a checksum mismatch anywhere after the checksum field, and can be told not to check', () => {
    const flipped = BASE.slice();
    flipped[HEADER.CHECKSUM] ^= 1;
    expect(openError(flipped)).toBe(FORMAT_ERROR.BAD_CHECKSUM);
    const random = mulberry32(3);
    for (let i = 0; i < 50; i++) {
      const bad = BASE.slice();
      const at = HEADER.TOTAL_SIZE + 4 + Math.floor(random() * (BASE.length - HEADER.TOTAL_SIZE - 4));
      bad[at] ^= 1 << Math.floor(random() * 8);
      expect(openError(bad)).toBe(FORMAT_ERROR.BAD_CHECKSUM);
    }
    // verifyChecksum: false skips only the CRC.
    expect(openError(flipped, { verifyChecksum: false })).toBeUndefined();
  });

  it('rejects a checksum field without the checksum flag (a flipped flag bit must not switch the CRC off)', () => {
    expect(u32(NO_CHECKSUM, HEADER.CHECKSUM)).toBe(0);
    expect(openError(patched(NO_CHECKSUM, (v) => v.setUint32(HEADER.CHECKSUM, 1, true)))).toBe(FORMAT_ERROR.BAD_HEADER);
    const flagCleared = BASE.slice();
    new DataView(flagCleared.buffer).setUint16(HEADER.FLAGS, FLAGS.HAS_NAMES, true);
    expect(openError(flagCleared)).toBe(FORMAT_ERROR.BAD_HEADER);
  });

  it.each([
    ['bone count 0', (v: DataView) => v.setUint16(HEADER.BONE_COUNT, 0, true), FORMAT_ERROR.BAD_HEADER],
    [
      'bone count 9 of 7 (parents then run into the bitsets)',
      (v: DataView) => v.setUint16(HEADER.BONE_COUNT, 9, true),
      FORMAT_ERROR.BAD_VALUE,
    ],
    ['bone count 6 of 7', (v: DataView) => v.setUint16(HEADER.BONE_COUNT, 6, true), FORMAT_ERROR.BAD_OFFSET],
    ['sample count 0', (v: DataView) => v.setUint32(HEADER.SAMPLE_COUNT, 0, true), FORMAT_ERROR.BAD_HEADER],
    [
      'sample count 2³² − 1 (more bone samples than a clip may hold)',
      (v: DataView) => v.setUint32(HEADER.SAMPLE_COUNT, 0xffffffff, true),
      FORMAT_ERROR.BAD_HEADER,
    ],
    ['start time −1', (v: DataView) => v.setFloat64(HEADER.START_TIME, -1, true), FORMAT_ERROR.BAD_HEADER],
    ['start time NaN', (v: DataView) => v.setFloat64(HEADER.START_TIME, NaN, true), FORMAT_ERROR.BAD_HEADER],
    [
      'duration before the start time',
      (v: DataView) => {
        v.setFloat64(HEADER.START_TIME, 2, true);
        v.setFloat64(HEADER.DURATION, 1, true);
      },
      FORMAT_ERROR.BAD_HEADER,
    ],
    ['duration +∞', (v: DataView) => v.setFloat64(HEADER.DURATION, Infinity, true), FORMAT_ERROR.BAD_HEADER],
    [
      'the node-index flag without the section',
      (v: DataView) => v.setUint16(HEADER.FLAGS, v.getUint16(HEADER.FLAGS, true) | FLAGS.HAS_NODE_INDICES, true),
      FORMAT_ERROR.BAD_OFFSET,
    ],
    ['sample rate 0', (v: DataView) => v.setFloat64(HEADER.SAMPLE_RATE, 0, true), FORMAT_ERROR.BAD_HEADER],
    ['sample rate −30', (v: DataView) => v.setFloat64(HEADER.SAMPLE_RATE, -30, true), FORMAT_ERROR.BAD_HEADER],
    ['sample rate NaN', (v: DataView) => v.setFloat64(HEADER.SAMPLE_RATE, NaN, true), FORMAT_ERROR.BAD_HEADER],
    ['sample rate +∞', (v: DataView) => v.setFloat64(HEADER.SAMPLE_RATE, Infinity, true), FORMAT_ERROR.BAD_HEADER],
    [
      'a sample rate so small the duration is infinite',
      (v: DataView) => v.setFloat64(HEADER.SAMPLE_RATE, 1e-320, true),
      FORMAT_ERROR.BAD_HEADER,
    ],
    ['segment count + 1', (v: DataView) => v.setUint32(HEADER.SEGMENT_COUNT, 4, true), FORMAT_ERROR.BAD_HEADER],
    ['segment count − 1', (v: DataView) => v.setUint32(HEADER.SEGMENT_COUNT, 2, true), FORMAT_ERROR.BAD_HEADER],
    [
      'sample count of another segment count',
      (v: DataView) => v.setUint32(HEADER.SAMPLE_COUNT, 56, true),
      FORMAT_ERROR.BAD_HEADER,
    ],
    ['segment size 15', (v: DataView) => v.setUint16(HEADER.SEGMENT_SIZE, 15, true), FORMAT_ERROR.BAD_HEADER],
    ['rotation format 1', (v: DataView) => v.setUint8(HEADER.ROTATION_FORMAT, 1), FORMAT_ERROR.BAD_HEADER],
    ['unit code 5', (v: DataView) => v.setUint8(HEADER.UNIT, 5), FORMAT_ERROR.BAD_HEADER],
    [
      'animated track count + 1',
      (v: DataView) => v.setUint16(HEADER.ANIMATED_TRACK_COUNT, base.animatedTrackCount + 1, true),
      FORMAT_ERROR.BAD_HEADER,
    ],
  ] as const)('rejects %s', (_name, edit, code) => {
    expect(openError(patched(BASE, edit))).toBe(code);
  });
});

describe('sections', { timeout: 30_000 }, () => {
  const OFFSET_FIELDS = [
    ['parents', HEADER.PARENTS_OFFSET],
    ['bitsets', HEADER.BITSETS_OFFSET],
    ['constants', HEADER.CONSTANTS_OFFSET],
    ['clip ranges', HEADER.CLIP_RANGES_OFFSET],
    ['rotation references', HEADER.ROTATION_REFS_OFFSET],
    ['segments', HEADER.SEGMENTS_OFFSET],
    ['names', HEADER.NAMES_OFFSET],
  ] as const;

  it.each(OFFSET_FIELDS)('rejects a moved %s offset', (_name, field) => {
    for (const delta of [4, -4, 1]) {
      expect(openError(patched(BASE, (v) => v.setUint32(field, v.getUint32(field, true) + delta, true)))).toBe(
        FORMAT_ERROR.BAD_OFFSET,
      );
    }
    expect(openError(patched(BASE, (v) => v.setUint32(field, 0xfffffff0, true)))).toBe(FORMAT_ERROR.BAD_OFFSET);
  });

  it('rejects a names offset without the names flag', () => {
    const stripped = compress(clip, { stripNames: true }).bytes;
    expect(u32(stripped, HEADER.NAMES_OFFSET)).toBe(0);
    expect(openError(patched(stripped, (v) => v.setUint32(HEADER.NAMES_OFFSET, stripped.length, true)))).toBe(
      FORMAT_ERROR.BAD_OFFSET,
    );
    // Dropping the flag from a file that has names leaves the names as trailing bytes.
    expect(openError(patched(BASE, (v) => v.setUint16(HEADER.FLAGS, FLAGS.HAS_CHECKSUM, true)))).toBe(
      FORMAT_ERROR.BAD_OFFSET,
    );
  });

  it('starts every section on a 4-byte boundary', () => {
    for (const [, field] of OFFSET_FIELDS) expect(u32(BASE, field) % 4).toBe(0);
    expect(BASE.length % 4).toBe(0);
  });

  /** Byte offsets where sections start (and the end of the file), from sectionSizes. */
  function boundaries(c: CompressedClip): number[] {
    const s = sectionSizes(c);
    const parts = [s.header, s.parents, s.bitsets, s.constants, s.clipRanges, s.rotationRefs, s.segments, s.names];
    const out: number[] = [];
    let at = 0;
    for (const p of parts) {
      at += p;
      out.push(at);
    }
    return out;
  }

  it('rejects a file truncated at every section boundary', () => {
    const ends = boundaries(base);
    expect(ends[ends.length - 1]).toBe(BASE.length);
    for (const end of ends.slice(0, -1)) {
      for (const cut of [end - 1, end, end + 1]) {
        const truncated = BASE.slice(0, cut);
        expect(openError(truncated)).toBe(cut < HEADER.SIZE ? FORMAT_ERROR.TOO_SMALL : FORMAT_ERROR.BAD_SIZE);
        // With the size field (and checksum) made to agree, the section checks must catch it.
        if (cut >= HEADER.SIZE) {
          const resized = patched(truncated, (v) => v.setUint32(HEADER.TOTAL_SIZE, cut, true));
          expect(openError(resized)).toBe(FORMAT_ERROR.BAD_SECTION);
        }
      }
    }
  });

  it('rejects a file truncated at any byte, even with a matching size field, and never with another exception', () => {
    for (const bytes of [BASE, RAW, compress(clip, { stripNames: true }).bytes]) {
      for (let cut = HEADER.SIZE; cut < bytes.length; cut++) {
        const resized = patched(bytes.slice(0, cut), (v) => v.setUint32(HEADER.TOTAL_SIZE, cut, true));
        expect(openError(resized)).toMatch(/^BAD_(SECTION|SIZE|OFFSET)$/);
      }
    }
  });

  it('rejects trailing bytes', () => {
    for (const extra of [1, 4, 8]) {
      const longer = new Uint8Array(BASE.length + extra);
      longer.set(BASE);
      expect(openError(longer)).toBe(FORMAT_ERROR.BAD_SIZE);
      const resized = patched(longer, (v) => v.setUint32(HEADER.TOTAL_SIZE, longer.length, true));
      expect(openError(resized)).toBe(FORMAT_ERROR.BAD_SIZE);
    }
  });
});

describe('key times', () => {
  const timed = compress({
    ...clip,
    sampleTimes: Float32Array.from({ length: 40 }, (_, k) => k / 30 + (k >= 25 ? 0.2 : 0)),
    startTime: 0,
    duration: 39 / 30 + 0.2,
  }).bytes;
  const at = sectionSizes(CompressedClip.open(timed));
  // The key times sit right before the segments.
  const keyTimesAt = u32(timed, HEADER.SEGMENTS_OFFSET) - at.keyTimes;

  it('opens, and rejects a first time other than the start, a time that goes back, and a time past 1e9 s', () => {
    expect(openError(timed)).toBeUndefined();
    expect(at.keyTimes).toBe(160);
    const setTime = (k: number, t: number) => patched(timed, (view) => view.setFloat32(keyTimesAt + 4 * k, t, true));
    expect(openError(setTime(0, 0.01))).toBe(FORMAT_ERROR.BAD_VALUE);
    expect(openError(setTime(10, 0.1))).toBe(FORMAT_ERROR.BAD_VALUE);
    expect(openError(setTime(39, 2e9))).toBe(FORMAT_ERROR.BAD_VALUE);
    expect(openError(setTime(39, NaN))).toBe(FORMAT_ERROR.BAD_VALUE);
    // Equal neighbours are a jump, which is valid.
    expect(openError(setTime(25, Math.fround(24 / 30)))).toBeUndefined();
  });

  it('a cleared or set key-times flag moves where the segments must start', () => {
    const cleared = patched(timed, (view) =>
      view.setUint16(HEADER.FLAGS, view.getUint16(HEADER.FLAGS, true) & ~FLAGS.HAS_KEY_TIMES, true),
    );
    expect(openError(cleared)).toBe(FORMAT_ERROR.BAD_OFFSET);
    const set = patched(BASE, (view) =>
      view.setUint16(HEADER.FLAGS, view.getUint16(HEADER.FLAGS, true) | FLAGS.HAS_KEY_TIMES, true),
    );
    // Read as key times, the first segment's bytes are no valid times (or, if they were, the segments would not start there).
    expect([FORMAT_ERROR.BAD_VALUE, FORMAT_ERROR.BAD_OFFSET]).toContain(openError(set));
  });
});

describe('values', { timeout: 30_000 }, () => {
  const parentsAt = u32(BASE, HEADER.PARENTS_OFFSET);

  it('rejects a parent index that does not precede its bone', () => {
    for (const [bone, parent] of [
      [3, 3],
      [3, 4],
      [1, 6],
      [0, 0],
      [2, -2],
      [5, 32767],
    ]) {
      expect(openError(patched(BASE, (v) => v.setInt16(parentsAt + 2 * bone, parent, true)))).toBe(
        FORMAT_ERROR.BAD_VALUE,
      );
    }
    expect(openError(patched(BASE, (v) => v.setInt16(parentsAt + 2 * 4, -1, true)))).toBeUndefined(); // a second root is fine
  });

  it('rejects a track marked both default and constant, and bits past the last track', () => {
    const bitsetsAt = u32(BASE, HEADER.BITSETS_OFFSET);
    // 21 tracks: one word per bitset. Track 1 of the default bitset also in the constant one.
    const words = 1;
    const both = patched(BASE, (v) => {
      const def = v.getUint32(bitsetsAt, true),
        con = v.getUint32(bitsetsAt + 4 * words, true);
      const t = [...Array(21).keys()].find((i) => (def >>> i) & 1)!;
      v.setUint32(bitsetsAt + 4 * words, con | (1 << t), true);
    });
    expect(openError(both)).toBe(FORMAT_ERROR.BAD_VALUE);
    for (const bit of [21, 31]) {
      expect(
        openError(patched(BASE, (v) => v.setUint32(bitsetsAt, v.getUint32(bitsetsAt, true) | (1 << bit), true))),
      ).toBe(FORMAT_ERROR.BAD_VALUE);
    }
  });

  it('rejects rate bytes 25..31 and 33..63 on every kind of track', () => {
    const segAt = u32(BASE, HEADER.SEGMENTS_OFFSET);
    for (const kind of [TRACK_KIND.ROTATION, TRACK_KIND.TRANSLATION, TRACK_KIND.SCALE]) {
      const j = firstAnimated(base, kind);
      for (let rate = 25; rate < 64; rate++) {
        if (rate === RAW_BITS) continue;
        const bad = patched(BASE, (_v, b) => {
          b[segAt + j] = (b[segAt + j] & ~0x3f) | rate;
        });
        expect(openError(bad), `kind ${kind} rate ${rate}`).toBe(FORMAT_ERROR.BAD_VALUE);
        // The message names the segment, the track, the rate and the rates allowed.
        if (rate === 30)
          expect(() => CompressedClip.open(bad)).toThrow(`segment 0 track ${j}: bit rate 30 (need 0..24 or 32)`);
      }
    }
  });

  it('rejects dropped-component bits on a translation or scale track', () => {
    const segAt = u32(BASE, HEADER.SEGMENTS_OFFSET);
    for (const kind of [TRACK_KIND.TRANSLATION, TRACK_KIND.SCALE]) {
      const j = firstAnimated(base, kind);
      for (const drop of [1, 2, 3]) {
        expect(
          openError(
            patched(BASE, (_v, b) => {
              b[segAt + j] |= drop << DROP_SHIFT;
            }),
          ),
        ).toBe(FORMAT_ERROR.BAD_VALUE);
      }
    }
    // On a rotation track the same bits choose the dropped component; the original choice opens.
    const r = firstAnimated(base, TRACK_KIND.ROTATION);
    const original = BASE[segAt + r] >>> DROP_SHIFT;
    const c = CompressedClip.open(
      patched(BASE, (_v, b) => {
        b[segAt + r] = (b[segAt + r] & 0x3f) | (original << DROP_SHIFT);
      }),
    );
    expect(
      c
        .createSampler()
        .sample(0.2, new Float32Array(c.boneCount * POSE_STRIDE))
        .every(Number.isFinite),
    ).toBe(true);
  });

  it('rejects NaN and infinite constants (checksum off, so the value check is what fires)', () => {
    const c = CompressedClip.open(NO_CHECKSUM);
    expect(c.hasChecksum).toBe(false);
    const at = u32(NO_CHECKSUM, HEADER.CONSTANTS_OFFSET);
    expect(sectionSizes(c).constants).toBeGreaterThan(0);
    for (const value of [NaN, Infinity, -Infinity]) {
      for (const offset of [0, sectionSizes(c).constants - 4]) {
        expect(openError(patched(NO_CHECKSUM, (v) => v.setFloat32(at + offset, value, true)))).toBe(
          FORMAT_ERROR.BAD_VALUE,
        );
      }
    }
  });

  it('rejects a NaN, infinite, negative or overflowing clip range of a translation or scale track', () => {
    const c = CompressedClip.open(NO_CHECKSUM);
    const rangesAt = u32(NO_CHECKSUM, HEADER.CLIP_RANGES_OFFSET);
    for (const kind of [TRACK_KIND.TRANSLATION, TRACK_KIND.SCALE]) {
      const j = firstAnimated(c, kind);
      let at = rangesAt;
      for (let i = 0; i < j; i++) at += CLIP_RANGE_BYTES[animatedTrack(c, i).kind];
      for (const component of [0, 2]) {
        const minAt = at + 8 * component,
          extAt = minAt + 4;
        for (const [field, value] of [
          [minAt, NaN],
          [minAt, Infinity],
          [extAt, NaN],
          [extAt, -1],
          [extAt, Infinity],
          [minAt, -3.4028234663852886e38],
          [extAt, 2e38],
        ] as const) {
          expect(openError(patched(NO_CHECKSUM, (v) => v.setFloat32(field, value, true))), `${field}=${value}`).toBe(
            FORMAT_ERROR.BAD_VALUE,
          );
        }
      }
    }
  });

  it('rejects a NaN or infinite raw value', () => {
    const c = CompressedClip.open(RAW);
    expect(Array.from(segmentBitRates(c, 0)).every((r) => r === RAW_BITS)).toBe(true);
    const segAt = u32(RAW, HEADER.SEGMENTS_OFFSET);
    const dataAt = segAt + align4(c.animatedTrackCount * (1 + SEGMENT_RANGE_BYTES));
    const keyBytes = c.animatedTrackCount * 3 * 4;
    // First value of key 0, a middle one, and the last value of segment 0's last key.
    for (const offset of [0, 4 * 7, 16 * keyBytes - 4]) {
      for (const bits of [0x7fc00000, 0x7f800000, 0xff800000, 0x7f800001]) {
        expect(openError(patched(RAW, (v) => v.setUint32(dataAt + offset, bits, true)))).toBe(FORMAT_ERROR.BAD_VALUE);
      }
    }
  });

  it('rejects a raw rotation component outside [−1, 1] (the float32 rotation arithmetic could overflow) and keeps ±1 and large raw translations', () => {
    const c = CompressedClip.open(RAW);
    const segAt = u32(RAW, HEADER.SEGMENTS_OFFSET);
    const dataAt = segAt + align4(c.animatedTrackCount * (1 + SEGMENT_RANGE_BYTES));
    // Every track is raw: track j's components of key 0 start 12 · j bytes into the keys.
    const rotation = dataAt + 12 * firstAnimated(c, TRACK_KIND.ROTATION);
    const translation = dataAt + 12 * firstAnimated(c, TRACK_KIND.TRANSLATION);
    for (const value of [1.0000001, -1.5, 1e30]) {
      const bad = patched(RAW, (v) => v.setFloat32(rotation + 4, value, true));
      expect(openError(bad), `${value}`).toBe(FORMAT_ERROR.BAD_VALUE);
      expect(openMessage(bad)).toMatch(/^segment \d+ key \d+ track \d+: raw rotation /);
    }
    const pose = new Float32Array(c.boneCount * POSE_STRIDE);
    for (const [at, value] of [
      [rotation, 1],
      [rotation + 8, -1],
      [translation, 1e30],
    ] as const) {
      const opened = CompressedClip.open(patched(RAW, (v) => v.setFloat32(at, value, true)));
      opened.createSampler().sample(0, pose);
      expect(pose.every(Number.isFinite), `${value}`).toBe(true);
    }
  });

  it('rejects bone names that are not UTF-8', () => {
    const namesAt = u32(BASE, HEADER.NAMES_OFFSET);
    expect(
      openError(
        patched(BASE, (_v, b) => {
          b[namesAt + 2] = 0xff;
        }),
      ),
    ).toBe(FORMAT_ERROR.BAD_VALUE);
    // A name length running past the end.
    expect(openError(patched(BASE, (v) => v.setUint16(namesAt, 0xffff, true)))).toBe(FORMAT_ERROR.BAD_SECTION);
  });

  it('survives random corruption: every buffer either opens and samples finite values, or throws a FormatError', () => {
    const random = mulberry32(99);
    const sources = [
      NO_CHECKSUM,
      RAW,
      encodeWithRates(clip, (s, _t, j) => [0, 3, 11, 24, RAW_BITS][(s + j) % 5], { checksum: false }).bytes,
    ];
    const pose = new Float32Array(clip.skeleton.parents.length * POSE_STRIDE + 64);
    const out = new Float32Array(POSE_STRIDE);
    let opened = 0,
      rejected = 0;
    for (let i = 0; i < 1500; i++) {
      const src = sources[i % sources.length];
      const bad = src.slice();
      const flips = 1 + Math.floor(random() * 3);
      for (let f = 0; f < flips; f++) bad[Math.floor(random() * bad.length)] ^= 1 << Math.floor(random() * 8);
      const code = openError(bad);
      if (code !== undefined) {
        rejected++;
        continue;
      }
      opened++;
      const c = CompressedClip.open(bad);
      for (const t of [0, 0.31, 0.77, c.duration, 5]) {
        for (const looping of ['clamp', 'wrap'] as const) {
          c.createSampler().sample(t, pose, { looping });
          expect(pose.subarray(0, c.boneCount * POSE_STRIDE).every(Number.isFinite)).toBe(true);
          sampleBone(c.createSampler(), t, c.boneCount - 1, out, { looping });
          expect(out.every(Number.isFinite)).toBe(true);
        }
      }
    }
    expect(opened).toBeGreaterThan(0);
    expect(rejected).toBeGreaterThan(0);
  });
});

describe('buffers', () => {
  function allKeys(c: CompressedClip): Float32Array[] {
    return Array.from({ length: c.sampleCount }, (_, k) =>
      sampleKey(c.createSampler(), k, new Float32Array(c.boneCount * POSE_STRIDE)),
    );
  }

  it('an unaligned Uint8Array (byteOffset 1) opens and decodes identically', () => {
    for (const bytes of [BASE, RAW]) {
      for (const shift of [1, 2, 3, 4]) {
        const backing = new Uint8Array(bytes.length + shift);
        backing.set(bytes, shift);
        const view = backing.subarray(shift);
        expect(view.byteOffset).toBe(shift);
        const c = CompressedClip.open(view);
        const ref = CompressedClip.open(bytes);
        expect(allKeys(c)).toEqual(allKeys(ref));
        expect(c.createSampler().sample(0.55, new Float32Array(c.boneCount * POSE_STRIDE))).toEqual(
          ref.createSampler().sample(0.55, new Float32Array(c.boneCount * POSE_STRIDE)),
        );
      }
    }
  });

  it('opens an ArrayBuffer and rejects anything else with BAD_ARGUMENT', () => {
    const c = CompressedClip.open(BASE.slice().buffer);
    expect(allKeys(c)).toEqual(allKeys(base));
    expect(openError([...BASE] as unknown as Uint8Array)).toBe(FORMAT_ERROR.BAD_ARGUMENT);
    expect(openError(new Uint16Array(BASE.buffer.slice(0)) as unknown as Uint8Array)).toBe(FORMAT_ERROR.BAD_ARGUMENT);
  });

  it('resealing the checksum of an unmodified file changes nothing', () => {
    const copy = BASE.slice();
    resealChecksum(copy);
    expect(copy).toEqual(BASE);
  });
});
