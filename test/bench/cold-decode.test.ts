import { describe, expect, it } from 'vitest';

import { measureCrowd } from '../../src/bench/crowd-timing.js';
import {
  COLD_DECODE_CLIPS,
  COLD_DECODE_DEFAULTS,
  isClipNamed,
  measureColdCorpus,
  measureColdDecode,
  type TimedClip,
} from '../../src/bench/decode-timing.js';
import { compress } from '../../src/compress/index.js';
import { CompressedClip } from '../../src/runtime/compressed-clip.js';
import { makeSyntheticClip } from '../utils/synthetic.js';

describe('measureColdDecode (ACL cold-cache method)', () => {
  const bytes = compress(makeSyntheticClip({ boneCount: 5, sampleCount: 40, seed: 2 })).bytes;

  it('defaults are the method the issue quotes: 220 copies, 32 MiB, 10,000 × 3, 100 times', () => {
    expect(COLD_DECODE_DEFAULTS).toEqual({
      copies: 220,
      flushBytes: 32 * 1024 * 1024,
      iterations: 10_000,
      repetitions: 3,
      times: 100,
    });
  });

  it('opens every copy on its own bytes and samples the evenly spaced times on each', () => {
    const opened: Uint8Array[] = [];
    const sampled = new Map<number, number>();
    const open = (copy: Uint8Array): TimedClip => {
      opened.push(copy);
      const clip = CompressedClip.open(copy);
      return {
        sampleCount: clip.sampleCount,
        sampleRate: clip.sampleRate,
        startTime: clip.startTime,
        boneCount: clip.boneCount,
        createSampler: () => {
          const sampler = clip.createSampler();
          return {
            sample: (time: number, pose: Float32Array) => {
              sampled.set(time, (sampled.get(time) ?? 0) + 1);
              return sampler.sample(time, pose);
            },
          };
        },
      };
    };
    const timing = measureColdDecode(bytes, open, {
      copies: 3,
      flushBytes: 4096,
      iterations: 7,
      repetitions: 2,
      times: 4,
    });
    expect(opened).toHaveLength(3);
    expect(new Set(opened.map((b) => b.buffer)).size).toBe(3);
    for (const b of opened) expect(Array.from(b)).toEqual(Array.from(bytes));
    const span = 39 / 30;
    expect([...sampled.keys()].sort((a, b) => a - b)).toEqual([0, span / 3, (2 * span) / 3, span]);
    // Per time: warm-up 3, cold 2 × 7, warm 2 × 7.
    for (const count of sampled.values()) expect(count).toBe(3 + 14 + 14);
    for (const v of [timing.coldNs, timing.warmNs, timing.coldCpuNs, timing.warmCpuNs])
      expect(Number.isFinite(v) && v >= 0).toBe(true);
  });
});

describe('measureColdCorpus (bench --decode-cold)', () => {
  it('names the five cold-decode clips and finds them by corpus id', () => {
    expect(COLD_DECODE_CLIPS).toEqual([
      'dash_normal_001',
      'run_old_001',
      'walk_tired_002',
      'walk-back_sad_001',
      'dance-short_normal_001',
    ]);
    expect(isClipNamed('dataset-1_dash_normal_001.bvh', 'dash_normal_001')).toBe(true);
    expect(isClipNamed('sub/dash_normal_001.bvh', 'dash_normal_001')).toBe(true);
    expect(isClipNamed('dataset-1_dash_normal_0011.bvh', 'dash_normal_001')).toBe(false);
    expect(isClipNamed('walk-back_sad_001.bvh', 'back_sad_001')).toBe(false);
    expect(isClipNamed('xdash_normal_001.bvh', 'dash_normal_001')).toBe(false);
  });

  it('times the named clips found with the full method and every clip of 2+ samples for the median', () => {
    const entries = [
      {
        id: 'set_dash_normal_001.bvh',
        bytes: compress(makeSyntheticClip({ boneCount: 3, sampleCount: 20, seed: 1 })).bytes,
      },
      { id: 'other.bvh', bytes: compress(makeSyntheticClip({ boneCount: 4, sampleCount: 25, seed: 3 })).bytes },
      { id: 'still.bvh', bytes: compress(makeSyntheticClip({ boneCount: 2, sampleCount: 1, seed: 4 })).bytes },
    ];
    const opens = new Map<Uint8Array, number>();
    const open = (b: Uint8Array): TimedClip => {
      opens.set(b, (opens.get(b) ?? 0) + 1);
      return CompressedClip.open(b);
    };
    const method = { copies: 2, flushBytes: 1024, iterations: 3, repetitions: 1, times: 2 };
    const done: number[] = [];
    const report = measureColdCorpus(
      entries,
      open,
      ['dash_normal_001', 'run_old_001'],
      method,
      { ...method, copies: 1 },
      (d) => done.push(d),
    );
    expect(report.clips.map((c) => [c.name, c.id])).toEqual([['dash_normal_001', 'set_dash_normal_001.bvh']]);
    expect(report.corpus?.clips).toBe(2);
    expect(done).toEqual([1, 2, 3]);
    expect(report.method).toBe(method);
    for (const v of [report.clips[0].coldNs, report.corpus!.warmNs, report.corpus!.coldCpuNs])
      expect(Number.isFinite(v) && v >= 0).toBe(true);
  });
});

describe('measureCrowd', () => {
  it('plays every character and reports ordered frame times', () => {
    const clips = [1, 2].map((seed) =>
      CompressedClip.open(compress(makeSyntheticClip({ boneCount: 4, sampleCount: 30, seed })).bytes),
    );
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
