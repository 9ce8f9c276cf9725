/**
 * A decompression bomb: a valid, checksummed .bpk of a few dozen bytes per
 * bone whose tracks are all constant, declaring billions of samples. Every command that
 * opens it must refuse it at open time (the format's bone-sample limit), not start decoding.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { createRawClip } from '../../src/clip/raw-clip.js';
import { createSkeleton, POSE_STRIDE } from '../../src/clip/skeleton.js';
import { compress } from '../../src/compress/index.js';
import { CHECKSUM_START, HEADER, MAX_BONE_SAMPLES, crc32, segmentCountFor } from '../../src/runtime/format.js';
import { fixture, makeTempDir, runCli } from './run-cli.js';

const temp = makeTempDir('bonepress-bomb-');
afterAll(() => temp.remove());

/** A one-bone clip with nothing animated, re-declared with `sampleCount` samples (CRC fixed). */
function bomb(sampleCount: number): string {
  const pose = new Float32Array(POSE_STRIDE);
  pose[3] = 1;
  pose[7] = 1;
  pose[8] = 1;
  pose[9] = 1;
  const clip = createRawClip('still', createSkeleton(['root'], [-1], pose, 'cm'), 30, 2, 'cm');
  const bytes = compress(clip, { stripNames: true }).bytes.slice();
  const view = new DataView(bytes.buffer);
  view.setUint32(HEADER.SAMPLE_COUNT, sampleCount, true);
  view.setUint32(HEADER.SEGMENT_COUNT, segmentCountFor(sampleCount), true);
  view.setFloat64(HEADER.DURATION, 0, true);
  view.setUint32(HEADER.CHECKSUM, crc32(bytes, CHECKSUM_START, bytes.length), true);
  const path = join(temp.dir, `bomb-${sampleCount}.bpk`);
  writeFileSync(path, bytes);
  return path;
}

describe('a tiny .bpk declaring billions of samples', () => {
  for (const samples of [2 ** 32 - 1, 1e8, MAX_BONE_SAMPLES + 1]) {
    it(`${samples} samples: info, sample, decompress and verify refuse it at open with exit 2`, () => {
      const path = bomb(samples);
      const runs = [
        runCli(['info', path]),
        runCli(['sample', path, '--time', '1']),
        runCli(['decompress', path, '-o', join(temp.dir, `out-${samples}.json`)]),
        runCli(['verify', fixture('dataset-1_dash_normal_001.bvh'), path]),
      ];
      for (const run of runs) {
        expect(run.code, run.stderr).toBe(2);
        expect(run.stderr).toContain(`bone samples`);
        expect(run.stderr.split('\n').filter(Boolean)).toHaveLength(1);
      }
    });
  }
});
