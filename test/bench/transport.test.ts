import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

import { checkBvhFloat64, parseBvhFloat64 } from '../../src/bench/float64-check.js';
import { formatTransportReport, runTransportBench } from '../../src/bench/transport.js';
import { compress } from '../../src/compress/index.js';
import { encodeTransport } from '../../src/compress/transport.js';
import { CompressedClip } from '../../src/runtime/compressed-clip.js';
import { FIXTURES_DIR, fixtureNames, loadFixture } from '../utils/clips.js';

describe('float64 check', () => {
  const file = fixtureNames()[2];
  const text = readFileSync(FIXTURES_DIR + file, 'utf8');

  it('parses the BVH as the reader does', () => {
    const bvh = parseBvhFloat64(text);
    const clip = loadFixture(file);
    expect(bvh.names).toEqual(clip.skeleton.boneNames);
    expect(bvh.parents).toEqual([...clip.skeleton.parents]);
    expect(bvh.frameCount).toBe(clip.sampleCount);
  });

  it('holds the default threshold on either form, and the whole-shell bound covers the three vertices', () => {
    const bpk = compress(loadFixture(file)).bytes;
    for (const form of [bpk, encodeTransport(bpk)]) {
      const r = checkBvhFloat64(text, form, 3);
      expect(r.vertexError).toBeGreaterThan(0.001);
      expect(r.vertexError).toBeLessThanOrEqual(0.01);
      expect(r.shellError).toBeGreaterThanOrEqual(r.vertexError);
    }
  });

  it('follows the threshold down and sees a broken clip', () => {
    const clip = loadFixture(file);
    const fine = checkBvhFloat64(text, compress(clip, { error: '0.001cm' }).bytes, 3);
    expect(fine.vertexError).toBeLessThanOrEqual(0.001);
    // Another clip's motion on the same skeleton is far off.
    const other = CompressedClip.open(compress(loadFixture(fixtureNames()[3])).bytes);
    if (other.boneCount === clip.skeleton.parents.length) {
      expect(checkBvhFloat64(text, other, 3).vertexError).toBeGreaterThan(1);
    }
  });
});

describe('transport bench', () => {
  it('reports both forms, their brotli sizes, decode speed and the float64 check', async () => {
    const files = fixtureNames()
      .slice(0, 2)
      .map((f) => FIXTURES_DIR + f);
    const r = await runTransportBench({ corpus: files, measureMs: 5, repeats: 1 });
    expect(r.clips).toHaveLength(2);
    expect(r.transportBytes).toBeLessThan(r.runtimeBytes);
    expect(r.transportRatio).toBeCloseTo(r.rawBytes / r.transportBytes, 10);
    expect(r.runtimeBrotliBytes).toBeGreaterThan(0);
    expect(r.decodeRawMBps).toBeGreaterThan(0);
    expect(r.overThreshold64).toBe(0);
    expect(r.maxShellError64).toBeGreaterThanOrEqual(r.maxVertexError64);
    expect(formatTransportReport(r)).toMatch(/transport .* 0 clips over 0.01 cm/s);
  });
});
