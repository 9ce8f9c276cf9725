import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import * as THREE from 'three';
import { describe, expect, it } from 'vitest';

import {
  buildThreeHarness,
  copyRawPose,
  measureClipDecode,
  median,
  randomTimes,
} from '../../src/bench/decode-timing.js';
import { BenchError, listCorpus, runBench } from '../../src/bench/run.js';
import { POSE_STRIDE } from '../../src/clip/skeleton.js';
import { compress } from '../../src/compress/index.js';
import { readBvh } from '../../src/readers/bvh.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const fixturesDir = path.join(repoRoot, 'fixtures');
const DASH = path.join(fixturesDir, 'dataset-1_dash_normal_001.bvh');
const RUN = path.join(fixturesDir, 'dataset-1_run_active_001.bvh');

function fixtureClip(file: string) {
  return readBvh(readFileSync(file, 'utf8'), file);
}

describe('listCorpus', () => {
  it('finds the clip files of a folder, sorted, with ids relative to it', async () => {
    const files = await listCorpus([fixturesDir]);
    expect(files.length).toBeGreaterThanOrEqual(2);
    const ids = files.map((f) => f.id);
    expect(ids).toEqual([...ids].sort());
    expect(ids).not.toContain('README.md');
    expect(ids).not.toContain('LICENSE');
    expect(ids).toContain('dataset-1_dash_normal_001.bvh');
  });

  it('takes named files as they are and lists a file reached twice once', async () => {
    const files = await listCorpus([DASH, fixturesDir]);
    expect(files[0]).toEqual({ path: DASH, id: 'dataset-1_dash_normal_001.bvh' });
    expect(files.filter((f) => f.id.endsWith('dash_normal_001.bvh'))).toHaveLength(1);
  });

  it('rejects a missing path with a BenchError', async () => {
    await expect(listCorpus([path.join(fixturesDir, 'no-such.bvh')])).rejects.toBeInstanceOf(BenchError);
    await expect(listCorpus([path.join(fixturesDir, 'no-such.bvh')])).rejects.toMatchObject({ code: 'BAD_CORPUS' });
  });
});

describe('runBench', () => {
  it('compresses two fixtures with consistent totals and deterministic bytes', { timeout: 180_000 }, async () => {
    const stages = new Set<string>();
    const result = await runBench({
      corpus: [DASH, RUN],
      jobs: 1,
      decode: false,
      poolCheck: false,
      onProgress: (p) => stages.add(p.stage),
    });
    expect(result.clips.map((c) => c.id)).toEqual(['dataset-1_dash_normal_001.bvh', 'dataset-1_run_active_001.bvh']);
    expect(result.failures).toEqual([]);
    const t = result.totals;
    expect(t.clips).toBe(2);
    expect(t.files).toBe(2);
    expect(t.rawBytes).toBe(result.clips.reduce((s, c) => s + c.rawBytes, 0));
    expect(t.compressedBytes).toBe(result.clips.reduce((s, c) => s + c.compressedBytes, 0));
    expect(t.ratio).toBeCloseTo(t.rawBytes / t.compressedBytes, 12);
    expect(t.compressedBytesWithoutNames).toBe(t.compressedBytes - result.clips.reduce((s, c) => s + c.namesBytes, 0));
    expect(t.samples).toBe(result.clips.reduce((s, c) => s + c.sampleCount, 0));
    for (const c of result.clips) {
      expect(c.rawBytes).toBe(40 * c.boneCount * c.sampleCount);
      expect(c.ratio).toBeCloseTo(c.rawBytes / c.compressedBytes, 12);
      expect(c.withinThreshold).toBe(c.maxError <= c.threshold);
      expect(c.p99Error).toBeLessThanOrEqual(c.maxError);
    }
    expect(t.maxError).toBe(Math.max(...result.clips.map((c) => c.maxError)));
    expect(t.withinThresholdShare).toBe(t.withinThreshold / 2);

    // The bench's bytes are compress()'s bytes.
    const direct = compress(fixtureClip(DASH), { error: '0.01cm', shell: '3cm' });
    expect(result.clips[0].compressedBytes).toBe(direct.bytes.length);

    expect(result.determinism).toMatchObject({ ok: true, repeatIdentical: true, poolCompared: 0, mismatches: [] });
    expect(result.throughput.singleWorker.rawBytes).toBe(t.rawBytes);
    expect(result.throughput.singleWorker.rawMBps).toBeGreaterThan(0);
    expect(result.throughput.pool).toBeNull();
    expect(result.decode).toBeNull();

    // Every bone × sample error lands in the histogram; every clip max too.
    const samples = result.clips.reduce((s, c) => s + c.boneCount * c.sampleCount, 0);
    expect(result.errorHistogram.total).toBe(samples);
    expect(result.errorHistogram.counts.reduce((s, n) => s + n, 0) + result.errorHistogram.over).toBe(samples);
    expect(result.clipErrorHistogram.total).toBe(2);
    const bitRatePairs = Object.values(result.bitRateHistogram).reduce((s, n) => s + n, 0);
    expect(bitRatePairs).toBe(
      result.clips.reduce((s, c) => s + Object.values(c.bitRateHistogram).reduce((a, n) => a + n, 0), 0),
    );
    expect([...stages]).toEqual(['compress', 'speed', 'errors']);

    // Each effort level over the same clips; default's bytes are the run's.
    const efforts = result.speed?.efforts ?? [];
    expect(efforts.map((e) => e.effort)).toEqual(['fast', 'default', 'best']);
    expect(efforts[1].compressedBytes).toBe(t.compressedBytes);
    for (const e of efforts) {
      expect(e.clips).toBe(2);
      expect(e.withinThreshold).toBe(2);
      expect(e.ratio).toBeCloseTo(t.rawBytes / e.compressedBytes, 12);
    }
    // The big skeletons hold the threshold too.
    expect(result.speed?.scaling?.map((g) => [g.name, g.boneCount, g.withinThreshold])).toEqual([
      ['chain-1000', 1000, true],
      ['body-face-fingers-300', 300, true],
    ]);
    expect(result.speed?.acl).toBeNull();
  });

  it('reports a file that fails and goes on with the others', async () => {
    const result = await runBench({
      corpus: [DASH, path.join(fixturesDir, 'README.md')],
      jobs: 1,
      decode: false,
      poolCheck: false,
      speed: false,
    });
    expect(result.clips).toHaveLength(1);
    expect(result.failures).toHaveLength(1);
    expect(result.failures[0].file).toMatch(/README\.md$/);
    expect(result.totals.failures).toBe(1);
  });

  it('rejects a corpus without clip files', async () => {
    const empty = await mkdtemp(path.join(tmpdir(), 'bonepress-empty-'));
    try {
      await writeFile(path.join(empty, 'notes.txt'), 'not a clip');
      await expect(runBench({ corpus: [empty], decode: false })).rejects.toMatchObject({ code: 'EMPTY_CORPUS' });
    } finally {
      await rm(empty, { recursive: true, force: true });
    }
  });

  it('times the decoders on a small clip (figures only, no timing assertions)', async () => {
    const result = await runBench({
      corpus: [DASH],
      jobs: 1,
      decode: true,
      poolCheck: false,
      measureMs: 1,
      repeats: 1,
      speed: false,
    });
    const d = result.decode;
    expect(d).not.toBeNull();
    expect(d!.clips).toBe(1);
    for (const timing of [d!.bonepress, d!.rawCopy, d!.three!]) {
      expect(Number.isFinite(timing.sequentialUs) && timing.sequentialUs > 0).toBe(true);
      expect(Number.isFinite(timing.randomUs) && timing.randomUs > 0).toBe(true);
      expect(Number.isFinite(timing.sequentialCpuUs) && timing.sequentialCpuUs >= 0).toBe(true);
      expect(Number.isFinite(timing.randomCpuUs) && timing.randomCpuUs >= 0).toBe(true);
    }
    expect(d!.speedupVsThree!.sequential).toBeCloseTo(d!.three!.sequentialUs / d!.bonepress.sequentialUs, 12);
    expect(result.clips[0].decode?.threeClipBytes).toBe(d!.threeClipBytes);
    expect(result.environment.three).toBe(THREE.REVISION);
  });
});

describe('decoder timing pieces', () => {
  it('builds the three.js clip like the reference one (bench/references.json): a quaternion and a position track per bone, shared key times', () => {
    const clip = fixtureClip(RUN);
    const n = clip.sampleCount;
    const harness = buildThreeHarness(THREE, clip);
    // 22 × 2 tracks; bytes = shared key times (4n) + 22 × (16n + 12n) = 620n: 1,178,620 for 1901 samples, as bench/references.json records.
    expect(harness.trackCount).toBe(44);
    expect(harness.clipBytes).toBe(620 * n);
    expect(harness.skeleton.bones).toHaveLength(22);
  });

  it('poses the three.js bones as the raw clip at sample times', () => {
    const clip = fixtureClip(RUN);
    const harness = buildThreeHarness(THREE, clip);
    const pose = new Float32Array(22 * POSE_STRIDE);
    // Not the last sample: LoopRepeat wraps a time equal to the duration back to 0.
    for (const key of [0, 7, clip.sampleCount - 2]) {
      harness.mixer.setTime(key / clip.sampleRate);
      copyRawPose(clip, (key + 0.25) / clip.sampleRate, pose);
      for (let b = 0; b < 22; b++) {
        const bone = harness.skeleton.bones[b];
        const dot =
          bone.quaternion.x * pose[b * 10] +
          bone.quaternion.y * pose[b * 10 + 1] +
          bone.quaternion.z * pose[b * 10 + 2] +
          bone.quaternion.w * pose[b * 10 + 3];
        expect(Math.abs(dot)).toBeCloseTo(1, 5);
        expect(bone.position.x).toBeCloseTo(pose[b * 10 + 4], 3);
      }
    }
  });

  it('copyRawPose clamps times outside the clip', () => {
    const clip = fixtureClip(DASH);
    const a = new Float32Array(22 * POSE_STRIDE),
      b = new Float32Array(22 * POSE_STRIDE);
    copyRawPose(clip, -5, a);
    copyRawPose(clip, Number.NaN, b);
    expect(b).toEqual(a);
    copyRawPose(clip, 1e9, a);
    copyRawPose(clip, (clip.sampleCount - 1) / clip.sampleRate, b);
    expect(a).toEqual(b);
  });

  it('draws the same random times for the same seed, inside the clip', () => {
    const a = randomTimes(64, 2.5, 7),
      b = randomTimes(64, 2.5, 7);
    expect(a).toEqual(b);
    expect(randomTimes(64, 2.5, 8)).not.toEqual(a);
    expect(Math.min(...a)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...a)).toBeLessThan(2.5);
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 2, 3])).toBe(2.5);
  });

  it('measureClipDecode without three.js gives bonepress and raw-copy figures only', () => {
    const clip = fixtureClip(DASH);
    const { bytes } = compress(clip);
    const timings = measureClipDecode(clip, bytes, {
      playbackHz: 60,
      randomTimes: 64,
      seed: 1,
      measureMs: 0.5,
      repeats: 1,
    });
    expect(timings.three).toBeUndefined();
    expect(timings.bonepress.sequentialUs).toBeGreaterThan(0);
    expect(timings.rawCopy.randomUs).toBeGreaterThan(0);
  });
});
