/**
 * The `effort` option of compress() and `compress --effort`: every level holds the
 * threshold, checked by an independent float64 measurement of the decoded file against the
 * BVH source; the levels differ only in the bit rates the search settles on; a bad level
 * is refused with the accepted ones named.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { checkBvhFloat64 } from '../../src/bench/float64-check.js';
import { compress } from '../../src/compress/index.js';
import { EFFORTS, OptionsError, type Effort } from '../../src/compress/options.js';
import { CompressedClip } from '../../src/runtime/compressed-clip.js';
import { FIXTURES, makeTempDir, runCli } from '../cli/run-cli.js';
import { FIXTURES_DIR, loadFixture } from '../utils/clips.js';

const TIMEOUT = { timeout: 60_000 };
/** Two short fixtures and a long one (358 samples, many segments). */
const CLIPS = ['dataset-1_dash_normal_001.bvh', 'dataset-1_byebye_angry_001.bvh', 'dataset-1_kick_normal_001.bvh'];

describe('compress() effort levels', () => {
  for (const file of CLIPS) {
    it(`${file}: every level within 0.01 cm in float64, same shape, deterministic`, TIMEOUT, () => {
      const clip = loadFixture(file);
      const text = readFileSync(FIXTURES_DIR + file, 'utf8');
      const sizes = new Map<Effort, number>();
      for (const effort of EFFORTS) {
        const { bytes, stats } = compress(clip, { effort });
        expect(stats.maxError).toBeLessThanOrEqual(stats.threshold);
        const check = checkBvhFloat64(text, bytes, 3);
        expect(check.vertexError).toBeLessThanOrEqual(0.01);
        const opened = CompressedClip.open(bytes);
        expect(opened.boneCount).toBe(clip.skeleton.parents.length);
        expect(opened.sampleCount).toBe(clip.sampleCount);
        expect(compress(clip, { effort }).bytes).toEqual(bytes);
        sizes.set(effort, bytes.length);
      }
      // The levels search differently: not all three files can be the same size on a real clip.
      expect(new Set(sizes.values()).size).toBeGreaterThan(1);
    });
  }

  it('default is the level when none is given', TIMEOUT, () => {
    const clip = loadFixture(CLIPS[0]);
    expect(compress(clip).bytes).toEqual(compress(clip, { effort: 'default' }).bytes);
  });

  it('refuses an unknown level, naming the accepted ones', () => {
    const clip = loadFixture(CLIPS[0]);
    expect(() => compress(clip, { effort: 'quick' as Effort })).toThrow(
      new OptionsError('effort: expected fast, default, best, got "quick"'),
    );
  });
});

describe('compress --effort', () => {
  const temp = makeTempDir();
  afterAll(() => temp.remove());
  const input = join(FIXTURES, CLIPS[0]);

  it('writes the bytes compress() writes at that level', TIMEOUT, () => {
    const out = join(temp.dir, 'fast');
    const run = runCli(['compress', input, '-o', out, '--effort', 'fast', '--json']);
    expect(run.code).toBe(0);
    const written = readFileSync(join(out, CLIPS[0].replace(/\.bvh$/, '.bpk')));
    expect(new Uint8Array(written)).toEqual(compress(loadFixture(CLIPS[0]), { effort: 'fast' }).bytes);
  });

  it('refuses an unknown level as a usage error', TIMEOUT, () => {
    const run = runCli(['compress', input, '-o', join(temp.dir, 'bad'), '--effort', 'quick']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('fast, default, best');
  });
});
