import { describe, expect, it } from 'vitest';

import { measureCrowd } from '../../src/bench/crowd-timing.js';
import { COLD_DECODE_DEFAULTS, measureColdDecode, type TimedClip } from '../../src/bench/decode-timing.js';
import { compress } from '../../src/compress/index.js';
import { CompressedClip } from '../../src/runtime/compressed-clip.js';
import { makeSyntheticClip } from '../utils/synthetic.js';

describe('measureColdDecode (ACL cold-cache method)', () => {
  const bytes = compress(makeSyntheticClip({ boneCount: 5, sampleCount: 40, seed: 2 })).bytes;

  it('defaults are the method the issue quotes: 220 copies, 32 MiB, 10,000 × 3, 100 times', () => {
    expect(COLD_DECODE_DEFAULTS).toEqual({ copies: 220, flushBytes: 32 * 1024 * 1024, iterations: 10_000, repetitions: 3, times: 100 });
  });

  it('opens every copy on its own bytes and samples the evenly spaced times on each', () => {
    const opened: Uint8Array[] = [];
    const sampled = new Map<number, number>();
    const open = (copy: Uint8Array): TimedClip => {
      opened.push(copy);
      const clip = CompressedClip.open(copy);
      return {
        sampleCount: clip.sampleCount, sampleRate: clip.sampleRate, startTime: clip.startTime, boneCount: clip.boneCount,
        createSampler: () => {
          const sampler = clip.createSampler();
          return { sample: (time: number, pose: Float32Array) => { sampled.set(time, (sampled.get(time) ?? 0) + 1); return sampler.sample(time, pose); } };
        },
      };
    };
    const timing = measureColdDecode(bytes, open, { copies: 3, flushBytes: 4096, iterations: 7, repetitions: 2, times: 4 });
    expect(opened).toHaveLength(3);
    expect(new Set(opened.map((b) => b.buffer)).size).toBe(3);
    for (const b of opened) expect(Array.from(b)).toEqual(Array.from(bytes));
    const span = 39 / 30;
    expect([...sampled.keys()].sort((a, b) => a - b)).toEqual([0, span / 3, (2 * span) / 3, span]);
    // Per time: warm-up 3, cold 2 × 7, warm 2 × 7.
    for (const count of sampled.values()) expect(count).toBe(3 + 14 + 14);
    for (const v of [timing.coldNs, timing.warmNs, timing.coldCpuNs, timing.warmCpuNs]) expect(Number.isFinite(v) && v >= 0).toBe(true);
  });
});

describe('measureCrowd', () => {
  it('plays every character and reports ordered frame times', () => {
    const clips = [1, 2].map((seed) => CompressedClip.open(compress(makeSyntheticClip({ boneCount: 4, sampleCount: 30, seed })).bytes));
    for (const output of ['local', 'object16', 'object12'] as const) {
      const t = measureCrowd(clips, { characters: 5, frames: 6, warmupFrames: 1, output });
      expect(t).toMatchObject({ characters: 5, output, clips: 2 });
      expect(t.minMs).toBeLessThanOrEqual(t.medianMs);
      expect(t.medianMs).toBeLessThanOrEqual(t.maxMs);
      expect(t.meanMs).toBeLessThanOrEqual(t.maxMs);
    }
    expect(() => measureCrowd([], { characters: 1 })).toThrow('at least one clip');
  });
});
