/**
 * Golden files per format version (test/golden/v<N>/*.bpk with the expected *.json).
 *
 * - The current version's files decode to the stored header fields and poses (values stored
 *   at 1e-6; the tolerance adds two float32 steps, so a reordered float operation in the
 *   decoder passes and a misread field does not).
 * - Files of older versions are rejected with UNSUPPORTED_VERSION and the exact
 *   "no longer supported" message; a copy with the version set to 0 or VERSION + 1 too.
 *
 * This test only reads. `npm run golden` regenerates the current version's files, on
 * purpose, when the format changes with a VERSION bump.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { describe, expect, it } from 'vitest';

import { CompressedClip, type Looping, type Rounding } from '../../src/runtime/compressed-clip.js';
import { sectionSizes, trackClassOf } from '../../src/runtime/clip-inspection.js';
import { FORMAT_ERROR, FormatError } from '../../src/runtime/errors.js';
import { HEADER, VERSION } from '../../src/runtime/format.js';
import { POSE_STRIDE } from '../../src/runtime/pose.js';
import { sampleKey } from '../../src/runtime/sampler.js';

const GOLDEN = fileURLToPath(new URL('./', import.meta.url));

/** The expected values written by scripts/golden.mjs. */
interface Golden {
  source: string;
  sha256: string;
  header: {
    version: number;
    hasChecksum: boolean;
    name: string | null;
    boneCount: number;
    sampleCount: number;
    sampleRate: number;
    startTime: number;
    duration: number;
    segmentCount: number;
    unit: string;
    rotationFormat: number;
    animatedTrackCount: number;
    byteLength: number;
    parents: number[];
    boneNames: string[] | null;
    sections: Record<string, number>;
    trackClasses: string[];
  };
  keys: { key: number; pose: number[] }[];
  samples: { time: number; looping: Looping; rounding: Rounding; pose: number[] }[];
}

/** Format versions with a golden folder, ascending. */
function goldenVersions(): number[] {
  return readdirSync(GOLDEN, { withFileTypes: true })
    .filter((e) => e.isDirectory() && /^v\d+$/.test(e.name))
    .map((e) => Number(e.name.slice(1)))
    .sort((a, b) => a - b);
}

/** The `.bpk` files of version `v`, by stem. */
function goldenFiles(v: number): string[] {
  return readdirSync(join(GOLDEN, `v${v}`)).filter((f) => f.endsWith('.bpk')).map((f) => f.slice(0, -4)).sort();
}

function readBytes(path: string): Uint8Array {
  const data = readFileSync(path);
  return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
}

/** The exact message (FormatError appends the byte offset) for a file of version `v`. */
function versionMessage(v: number): string {
  const problem = v < VERSION
    ? `format version ${v} is no longer supported (this build reads version ${VERSION}); compress the source clip again`
    : `format version ${v} is newer than this build reads (version ${VERSION}); upgrade bonepress`;
  return `${problem} (at byte ${HEADER.VERSION})`;
}

function expectUnsupported(bytes: Uint8Array, v: number, what: string): void {
  let thrown: unknown;
  try {
    CompressedClip.open(bytes);
  } catch (error) {
    thrown = error;
  }
  expect(thrown, `${what} opened`).toBeInstanceOf(FormatError);
  const error = thrown as FormatError;
  expect(error.code, what).toBe(FORMAT_ERROR.UNSUPPORTED_VERSION);
  expect(error.byteOffset, what).toBe(HEADER.VERSION);
  expect(error.message, what).toBe(versionMessage(v));
}

/** `actual` within 1e-6 plus two float32 steps of each stored value. */
function expectPose(actual: Float32Array, expected: number[], what: string): void {
  expect(actual.length, what).toBe(expected.length);
  for (let i = 0; i < expected.length; i++) {
    const tolerance = 1e-6 + 2.4e-7 * Math.abs(expected[i]);
    if (!(Math.abs(actual[i] - expected[i]) <= tolerance)) {
      const bone = Math.floor(i / POSE_STRIDE);
      throw new Error(`${what}: bone ${bone} value ${i % POSE_STRIDE} is ${actual[i]}, the golden file says ${expected[i]}`);
    }
  }
}

describe('golden files', () => {
  it(`test/golden/v${VERSION} holds the current version's files (npm run golden writes them)`, () => {
    const dir = join(GOLDEN, `v${VERSION}`);
    expect(existsSync(dir), `${dir} is missing: after a VERSION bump, run npm run golden`).toBe(true);
    const stems = goldenFiles(VERSION);
    expect(stems.length).toBeGreaterThanOrEqual(2);
    for (const stem of stems) expect(existsSync(join(dir, `${stem}.json`)), `${stem}.json`).toBe(true);
    expect(goldenVersions().filter((v) => v > VERSION), 'golden files newer than this build').toEqual([]);
  });

  for (const stem of existsSync(join(GOLDEN, `v${VERSION}`)) ? goldenFiles(VERSION) : []) {
    describe(`v${VERSION}/${stem}`, () => {
      const bytes = readBytes(join(GOLDEN, `v${VERSION}`, `${stem}.bpk`));
      const golden = JSON.parse(readFileSync(join(GOLDEN, `v${VERSION}`, `${stem}.json`), 'utf8')) as Golden;

      it('is the file the expectations were made from, with a valid checksum', () => {
        expect(createHash('sha256').update(bytes).digest('hex')).toBe(golden.sha256);
        expect(CompressedClip.open(bytes, { verifyChecksum: true }).hasChecksum).toBe(true);
      });

      it('reads to the stored header fields', () => {
        const clip = CompressedClip.open(bytes, { verifyChecksum: true });
        const h = golden.header;
        expect({
          version: clip.version,
          hasChecksum: clip.hasChecksum,
          name: clip.name ?? null,
          boneCount: clip.boneCount,
          sampleCount: clip.sampleCount,
          sampleRate: clip.sampleRate,
          segmentCount: clip.segmentCount,
          unit: clip.unit,
          rotationFormat: clip.rotationFormat,
          animatedTrackCount: clip.animatedTrackCount,
          byteLength: clip.byteLength,
          parents: Array.from(clip.parents),
          boneNames: clip.boneNames ?? null,
          sections: sectionSizes(clip),
        }).toEqual({
          version: h.version,
          hasChecksum: h.hasChecksum,
          name: h.name,
          boneCount: h.boneCount,
          sampleCount: h.sampleCount,
          sampleRate: h.sampleRate,
          segmentCount: h.segmentCount,
          unit: h.unit,
          rotationFormat: h.rotationFormat,
          animatedTrackCount: h.animatedTrackCount,
          byteLength: h.byteLength,
          parents: h.parents,
          boneNames: h.boneNames,
          sections: h.sections,
        });
        expect(clip.duration).toBeCloseTo(h.duration, 12);
        expect(clip.startTime).toBe(h.startTime);
        const classes = Array.from({ length: clip.boneCount }, (_, b) => [0, 1, 2].map((kind) => trackClassOf(clip, b, kind)[0]).join(''));
        expect(classes).toEqual(h.trackClasses);
      });

      it('decodes every stored key and sample time to the stored pose', () => {
        const clip = CompressedClip.open(bytes, { verifyChecksum: true });
        const pose = new Float32Array(clip.boneCount * POSE_STRIDE);
        expect(golden.keys.length).toBeGreaterThan(0);
        for (const { key, pose: expected } of golden.keys) expectPose(sampleKey(clip.createSampler(), key, pose), expected, `${stem} key ${key}`);
        expect(golden.samples.length).toBeGreaterThan(0);
        for (const { time, looping, rounding, pose: expected } of golden.samples) {
          expectPose(clip.createSampler().sample(time, pose, { looping, rounding }), expected, `${stem} at ${time} s (${looping}, ${rounding})`);
        }
      });

      it('with the version set to 0 or VERSION + 1, fails with UNSUPPORTED_VERSION and the exact message', () => {
        for (const v of [0, VERSION + 1]) {
          const copy = bytes.slice();
          new DataView(copy.buffer).setUint16(HEADER.VERSION, v, true);
          expectUnsupported(copy, v, `${stem} as version ${v}`);
        }
      });
    });
  }

  it('every golden file of an older version is rejected with the "no longer supported" message', () => {
    for (const v of goldenVersions().filter((n) => n < VERSION)) {
      for (const stem of goldenFiles(v)) expectUnsupported(readBytes(join(GOLDEN, `v${v}`, `${stem}.bpk`)), v, `v${v}/${stem}`);
    }
  });
});
