import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import {
  SIZE_GROWTH_TOLERANCE,
  baselineFromResult,
  compareToBaseline,
  parseBaseline,
  readBaseline,
  renderBaseline,
  writeBaseline,
  type Baseline,
  type ComparableClip,
} from '../../src/bench/compare.js';
import { BenchError, totalsOf, type BenchClip, type BenchSettings } from '../../src/bench/run.js';

const SETTINGS = { error: '0.01cm', shell: '3cm', ladder: 'default', rotationReference: 'default' } as const;

function clip(id: string, compressedBytes: number, maxError = 0.005, threshold = 0.01): ComparableClip {
  return { id, rawBytes: compressedBytes * 10, compressedBytes, maxError, threshold, unit: 'cm' };
}

function baselineOf(clips: readonly ComparableClip[]): Baseline {
  const record: Baseline['clips'] = {};
  for (const c of clips)
    record[c.id] = { rawBytes: c.rawBytes, compressedBytes: c.compressedBytes, maxError: c.maxError };
  const compressed = clips.reduce((s, c) => s + c.compressedBytes, 0);
  const raw = clips.reduce((s, c) => s + c.rawBytes, 0);
  return {
    version: 1,
    settings: { ...SETTINGS },
    total: {
      clips: clips.length,
      rawBytes: raw,
      compressedBytes: compressed,
      ratio: raw / compressed,
      maxError: 0.005,
      unit: 'cm',
    },
    clips: record,
  };
}

describe('compareToBaseline', () => {
  const base = baselineOf([clip('a.bvh', 10_000), clip('b.bvh', 30_000)]);

  it('passes an identical run', () => {
    const result = compareToBaseline({ clips: [clip('a.bvh', 10_000), clip('b.bvh', 30_000)] }, base);
    expect(result.ok).toBe(true);
    expect(result.compared).toBe(2);
    expect(result.growth).toBe(0);
    expect(result.problems).toEqual([]);
  });

  it('fails when the total grows by more than 0.5 %', () => {
    // 40,000 → 40,201 bytes: +0.5025 %.
    const result = compareToBaseline({ clips: [clip('a.bvh', 10_201), clip('b.bvh', 30_000)] }, base);
    expect(result.sizeRegressed).toBe(true);
    expect(result.ok).toBe(false);
    expect(result.problems.join('\n')).toMatch(/grew by \+0\.50%/);
    expect(result.grown).toEqual([{ id: 'a.bvh', before: 10_000, after: 10_201, growth: 0.0201 }]);
  });

  it('passes growth of exactly 0.5 %, and reports the clips that grew', () => {
    // 40,000 → 40,200 bytes: +0.5 % exactly; one clip grew, the other shrank.
    const result = compareToBaseline({ clips: [clip('a.bvh', 10_400), clip('b.bvh', 29_800)] }, base);
    expect(result.growth).toBeCloseTo(SIZE_GROWTH_TOLERANCE, 12);
    expect(result.ok).toBe(true);
    expect(result.grown.map((c) => c.id)).toEqual(['a.bvh']);
    expect(result.shrunk.map((c) => c.id)).toEqual(['b.bvh']);
  });

  it('passes a smaller run', () => {
    const result = compareToBaseline({ clips: [clip('a.bvh', 9_000), clip('b.bvh', 29_000)] }, base);
    expect(result.ok).toBe(true);
    expect(result.growth).toBeLessThan(0);
  });

  it('fails when any clip is above its threshold, whatever the size', () => {
    const result = compareToBaseline({ clips: [clip('a.bvh', 9_000, 0.0101), clip('b.bvh', 30_000)] }, base);
    expect(result.ok).toBe(false);
    expect(result.overThreshold).toEqual([{ id: 'a.bvh', maxError: 0.0101, threshold: 0.01, unit: 'cm' }]);
    expect(result.problems).toHaveLength(1);
    expect(result.problems[0]).toMatch(/^a\.bvh: max error 0\.0101cm is above the threshold 0\.01cm/);
    expect(result.errorRaised).toEqual([{ id: 'a.bvh', before: 0.005, after: 0.0101 }]);
  });

  it('treats a NaN error as above the threshold', () => {
    const result = compareToBaseline({ clips: [clip('a.bvh', 10_000, Number.NaN), clip('b.bvh', 30_000)] }, base);
    expect(result.ok).toBe(false);
    expect(result.overThreshold.map((c) => c.id)).toEqual(['a.bvh']);
  });

  it('reports missing and new clips and compares only the clips both have', () => {
    const result = compareToBaseline({ clips: [clip('a.bvh', 10_000), clip('c.bvh', 99_999)] }, base);
    expect(result.missing).toEqual(['b.bvh']);
    expect(result.added).toEqual(['c.bvh']);
    expect(result.compared).toBe(1);
    expect(result.before).toBe(10_000);
    expect(result.after).toBe(10_000);
    expect(result.ok).toBe(true);
  });

  it('fails when no clip of the run is in the baseline', () => {
    const result = compareToBaseline({ clips: [clip('x.bvh', 1_000)] }, base);
    expect(result.ok).toBe(false);
    expect(result.compared).toBe(0);
    expect(Number.isNaN(result.growth)).toBe(true);
    expect(result.problems[0]).toMatch(/no clip of this run is in the baseline/);
  });

  it('reports settings that differ without failing', () => {
    const result = compareToBaseline(
      { clips: [clip('a.bvh', 10_000), clip('b.bvh', 30_000)], settings: { ladder: 'acl21' } },
      base,
    );
    expect(result.ok).toBe(true);
    expect(result.settingsDiffer).toEqual(['ladder: default → acl21']);
    // A baseline without a metric was made with the default one.
    expect(
      compareToBaseline({ clips: [clip('a.bvh', 10_000)], settings: { metric: 'vertices' } }, base).settingsDiffer,
    ).toEqual([]);
    expect(
      compareToBaseline({ clips: [clip('a.bvh', 10_000)], settings: { metric: 'shell' } }, base).settingsDiffer,
    ).toEqual(['metric: vertices → shell']);
  });

  it('honours a custom tolerance', () => {
    const run = { clips: [clip('a.bvh', 10_100), clip('b.bvh', 30_000)] }; // +0.25 %
    expect(compareToBaseline(run, base, { tolerance: 0.001 }).ok).toBe(false);
    expect(compareToBaseline(run, base).ok).toBe(true);
  });

  it('does not treat prototype keys as baseline clips', () => {
    const result = compareToBaseline({ clips: [clip('toString', 10), clip('a.bvh', 10_000)] }, base);
    expect(result.added).toEqual(['toString']);
    expect(result.compared).toBe(1);
  });
});

describe('baseline files', () => {
  const settings: BenchSettings = {
    error: '0.01cm',
    shell: '3cm',
    metric: 'vertices',
    ladder: 'default',
    rotationReference: 'default',
    jobs: 1,
    decode: false,
    seed: 1,
    measureMs: 20,
    repeats: 3,
    playbackHz: 60,
    randomTimes: 4096,
  };
  const clips: BenchClip[] = ['b.bvh', 'a.bvh'].map((id, i) => ({
    id,
    file: id,
    name: id,
    boneCount: 2,
    sampleCount: 10,
    rawBytes: 800,
    compressedBytes: 100 + i,
    namesBytes: 10,
    ratio: 800 / (100 + i),
    maxError: 0.004,
    shellMaxError: 0.005,
    p99Error: 0.003,
    threshold: 0.01,
    unit: 'cm',
    withinThreshold: true,
    worstBone: 'root',
    worstSample: 0,
    compressSeconds: 0.1,
    bitRateHistogram: { 4: 2 },
  }));

  it('round-trips a run through a file, sorted by clip id', async () => {
    const baseline = baselineFromResult({ clips, settings, totals: totalsOf(clips, 2, 0) });
    expect(Object.keys(baseline.clips)).toEqual(['a.bvh', 'b.bvh']);
    expect(baseline.total).toEqual({
      clips: 2,
      rawBytes: 1600,
      compressedBytes: 201,
      ratio: 1600 / 201,
      maxError: 0.004,
      unit: 'cm',
    });
    const dir = await mkdtemp(join(tmpdir(), 'bonepress-baseline-'));
    try {
      const path = join(dir, 'nested', 'baseline.json');
      await writeBaseline(path, baseline);
      expect(await readBaseline(path)).toEqual(baseline);
      expect(compareToBaseline({ clips, settings }, await readBaseline(path)).ok).toBe(true);
      // Deterministic text: the same run writes the same file.
      expect(
        renderBaseline(baselineFromResult({ clips: [...clips].reverse(), settings, totals: totalsOf(clips, 2, 0) })),
      ).toBe(renderBaseline(baseline));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('says when there is no baseline file', async () => {
    const error = await readBaseline(join(tmpdir(), 'no-such-bonepress-baseline.json')).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BenchError);
    expect((error as BenchError).code).toBe('NO_BASELINE');
  });

  it('rejects files that are not baselines, naming the problem', async () => {
    const bad = (text: string): BenchError => {
      try {
        parseBaseline(text, 'b.json');
      } catch (e) {
        return e as BenchError;
      }
      throw new Error('expected a BenchError');
    };
    expect(bad('{').message).toMatch(/^b\.json: not JSON/);
    expect(bad('[]').message).toBe('b.json: expected a JSON object');
    expect(bad('{"version":2,"settings":{},"total":{},"clips":{}}').message).toMatch(
      /version 2 is not the supported 1/,
    );
    expect(
      bad('{"version":1,"settings":{},"total":{},"clips":{"a":{"rawBytes":1,"compressedBytes":"x","maxError":0}}}')
        .message,
    ).toBe('b.json: clip "a": "compressedBytes" must be a number ≥ 0');
    expect(
      bad('{"version":1,"settings":{},"total":{},"clips":{"a":{"rawBytes":1,"compressedBytes":0,"maxError":0}}}').code,
    ).toBe('BAD_BASELINE');
    const dir = await mkdtemp(join(tmpdir(), 'bonepress-baseline-'));
    try {
      await writeFile(join(dir, 'b.json'), 'nope');
      await expect(readBaseline(join(dir, 'b.json'))).rejects.toMatchObject({ code: 'BAD_BASELINE' });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
