/**
 * The library side of `info`, `verify` and `decompress`: work bounded by what a clip
 * stores, shapes compared before anything is decoded, and the streamed pose dump equal to
 * the whole one.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { describe, expect, it } from 'vitest';

import { writePoseDump } from '../../src/readers/pose-dump.js';
import { compress } from '../../src/compress/index.js';
import { MetricError } from '../../src/metric/error-metric.js';
import { decompressClip } from '../../src/compress/verify.js';
import { compareCompressed, shapeOfCompressed } from '../../src/inspect/compare.js';
import { describeCompressedClip } from '../../src/inspect/describe.js';
import { poseDumpChunks } from '../../src/inspect/pose-dump-stream.js';
import { readClips } from '../../src/readers/index.js';
import { CompressedClip } from '../../src/runtime/index.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const DASH = 'fixtures/dataset-1_dash_normal_001.bvh';

async function dash() {
  const [clip] = await readClips(DASH, new Uint8Array(readFileSync(join(ROOT, DASH))));
  return { clip, compressed: CompressedClip.open(compress(clip).bytes) };
}

/** `clip` with every decoding and segment method throwing, and other counts as given. */
function trap(clip: CompressedClip, overrides: Record<string, unknown>): CompressedClip {
  const fail = (): never => {
    throw new Error('decoded or visited a segment');
  };
  return new Proxy(clip, {
    get(target, key, receiver) {
      if (key in overrides) return overrides[key as string];
      if (
        key === 'segmentBitRates' ||
        key === 'sampleKey' ||
        key === 'sample' ||
        key === 'sampleBone' ||
        key === 'createSampler'
      )
        return fail;
      const value = Reflect.get(target, key, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

describe('describeCompressedClip', () => {
  it('visits no segment of a clip without animated tracks, however many it declares', async () => {
    const { compressed } = await dash();
    const bomb = trap(compressed, { animatedTrackCount: 0, segmentCount: 2 ** 28, sampleCount: 2 ** 32 - 1 });
    const info = describeCompressedClip(bomb);
    expect(info.bitRateHistogram).toEqual({});
    expect(info.segmentCount).toBe(2 ** 28);
  });

  it('counts every (segment, animated track) pair of a real clip', async () => {
    const { compressed } = await dash();
    const info = describeCompressedClip(compressed);
    const pairs = Object.values(info.bitRateHistogram).reduce((a, b) => a + b, 0);
    expect(pairs).toBe(compressed.animatedTrackCount * compressed.segmentCount);
  });
});

describe('compareCompressed', () => {
  it('compares shapes before decoding: a sample-count mismatch is a MetricError, nothing decoded', async () => {
    const { clip, compressed } = await dash();
    const huge = trap(compressed, { sampleCount: 100_000_000 });
    expect(shapeOfCompressed(huge).sampleCount).toBe(100_000_000);
    expect(() => compareCompressed(clip, huge, {}, DASH)).toThrow(MetricError);
    expect(() => compareCompressed(clip, huge, {}, DASH)).toThrow(
      /100000000 samples .* but fixtures\/dataset-1_dash_normal_001.bvh has 20/,
    );
  });

  it('measures a matching clip within the threshold', async () => {
    const { clip, compressed } = await dash();
    const result = compareCompressed(clip, compressed, {}, DASH);
    expect(result.pass).toBe(true);
    expect(result.maxError).toBeLessThanOrEqual(result.threshold);
  });
});

describe('poseDumpChunks', () => {
  it('streams the same text as the whole pose dump, in pieces of one sample', async () => {
    const { compressed } = await dash();
    const chunks = [...poseDumpChunks(compressed)];
    expect(chunks.length).toBeGreaterThan(3 * compressed.sampleCount);
    expect(chunks.join('')).toBe(writePoseDump(decompressClip(compressed)));
  });
});
