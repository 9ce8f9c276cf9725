import { describe, expect, it } from 'vitest';

import { NET_ERROR, NetError } from '../../src/net/bit-stream.js';
import { CODE_STRIDE } from '../../src/net/quantize.js';
import { measurePoseRanges, mergePoseRanges } from '../../src/net/pose-ranges.js';
import { buildSnapshotSchema, createSnapshotSchema, type SnapshotSchema } from '../../src/net/schema.js';
import { decodeSnapshotSchema, encodeSnapshotSchema } from '../../src/net/schema-wire.js';
import { PoseQuantizer, createSnapshotCodes, dequantizePose } from '../../src/net/quantize.js';
import { makeSyntheticClip } from '../utils/synthetic.js';
import type { RawClip } from '../../src/clip/raw-clip.js';
import { clipPoses, loadFixture, poseError } from './helpers.js';

/** Largest error of every sample of `clip` quantised and decoded with `schema`. */
function measuredError(clip: RawClip, schema: SnapshotSchema): number {
  const quantizer = new PoseQuantizer(schema);
  const codes = createSnapshotCodes(schema);
  const decoded = new Float32Array(schema.boneCount * 10);
  let worst = 0;
  for (const pose of clipPoses(clip)) {
    quantizer.quantize(pose, codes);
    dequantizePose(schema, codes, decoded);
    worst = Math.max(worst, poseError(pose, decoded, clip.skeleton.parents, schema.shellDistances));
  }
  return worst;
}

function totalBits(schema: SnapshotSchema): number {
  return schema.codeBits.reduce((a, b) => a + b, 0);
}

describe('snapshot schema', () => {
  const walk = loadFixture('dataset-1_walk_happy_002');

  it('derives bit counts whose bound meets the threshold, and the measured error stays under the bound', () => {
    for (const compensate of [true, false]) {
      for (const error of ['0.1cm', '0.01cm', '1cm']) {
        const schema = createSnapshotSchema(walk, { error, compensate });
        expect(schema.errorBound).toBeLessThanOrEqual(schema.threshold);
        for (const e of schema.boneErrorBounds) expect(e).toBeLessThanOrEqual(schema.threshold);
        expect(measuredError(walk, schema)).toBeLessThanOrEqual(schema.errorBound);
      }
    }
  });

  it('spends fewer bits for a looser threshold and with compensation', () => {
    const fine = createSnapshotSchema(walk, { error: '0.01cm' });
    const coarse = createSnapshotSchema(walk, { error: '1cm' });
    const plain = createSnapshotSchema(walk, { error: '0.1cm', compensate: false });
    const compensated = createSnapshotSchema(walk, { error: '0.1cm' });
    expect(totalBits(coarse)).toBeLessThan(totalBits(compensated));
    expect(totalBits(compensated)).toBeLessThan(totalBits(fine));
    expect(totalBits(compensated)).toBeLessThan(totalBits(plain));
    expect(compensated.compensate).toBe(true);
  });

  it('gives longer lever arms more rotation bits', () => {
    const schema = createSnapshotSchema(walk, { compensate: false });
    const names = walk.skeleton.boneNames;
    const bits = (name: string) => schema.codeBits[names.indexOf(name) * CODE_STRIDE + 1];
    // Upper arm carries forearm and hand (~50 cm); the hand only its shell.
    expect(bits('UpperArm_L')).toBeGreaterThan(bits('Hand_L'));
    expect(bits('UpperLeg_R')).toBeGreaterThan(bits('Toes_R'));
  });

  it('sends only animated tracks: a BVH translation channel that never moves is left out', () => {
    const schema = createSnapshotSchema(walk);
    const names = walk.skeleton.boneNames;
    const hips = names.indexOf('Hips'),
      spine = names.indexOf('Spine'),
      root = names.indexOf('joint_Root');
    for (let c = 0; c < 3; c++) expect(schema.codeBits[hips * CODE_STRIDE + 4 + c]).toBeGreaterThan(0);
    for (let c = 0; c < 3; c++) expect(schema.codeBits[spine * CODE_STRIDE + 4 + c]).toBe(0);
    for (let i = 0; i < CODE_STRIDE; i++) expect(schema.codeBits[root * CODE_STRIDE + i]).toBe(0);
    expect(Array.from(schema.sentBones)).not.toContain(root);
    // Scale is 1 everywhere: never sent.
    for (let b = 0; b < schema.boneCount; b++)
      for (let c = 7; c < 10; c++) expect(schema.codeBits[b * CODE_STRIDE + c]).toBe(0);
  });

  it('handles animated scale and translation (no compensation) within its bound', () => {
    for (const seed of [1, 2, 3]) {
      const clip = makeSyntheticClip({
        boneCount: 12,
        sampleCount: 60,
        seed,
        animatedScale: true,
        animatedTranslationShare: 0.5,
      });
      const schema = createSnapshotSchema(clip);
      expect(schema.compensate).toBe(false);
      expect(schema.codeBits.some((bits, i) => i % CODE_STRIDE >= 7 && bits > 0)).toBe(true);
      expect(schema.errorBound).toBeLessThanOrEqual(schema.threshold);
      expect(measuredError(clip, schema)).toBeLessThanOrEqual(schema.errorBound);
    }
  });

  it('round-trips through its wire form with the same hash', () => {
    for (const clip of [walk, makeSyntheticClip({ boneCount: 9, sampleCount: 20, seed: 4, animatedScale: true })]) {
      const schema = createSnapshotSchema(clip);
      const back = decodeSnapshotSchema(encodeSnapshotSchema(schema));
      expect(back.hash).toBe(schema.hash);
      expect(Array.from(back.codeBits)).toEqual(Array.from(schema.codeBits));
      expect(Array.from(back.basePose)).toEqual(Array.from(schema.basePose));
      expect(Array.from(back.defaultCodes)).toEqual(Array.from(schema.defaultCodes));
      expect(back.threshold).toBe(schema.threshold);
      expect(back.compensate).toBe(schema.compensate);
    }
  });

  it('a different threshold or clip gives a different hash', () => {
    const a = createSnapshotSchema(walk).hash;
    expect(createSnapshotSchema(walk, { error: '0.05cm' }).hash).not.toBe(a);
    expect(createSnapshotSchema(loadFixture('dataset-1_run_active_001')).hash).not.toBe(a);
  });

  it('rejects a damaged wire form with NetError only', () => {
    const bytes = encodeSnapshotSchema(createSnapshotSchema(walk));
    for (let cut = 0; cut < bytes.length; cut += 7) {
      expect(() => decodeSnapshotSchema(bytes.subarray(0, cut))).toThrow(NetError);
    }
    const wrongVersion = bytes.slice();
    wrongVersion[0] ^= 0xff;
    expect(() => decodeSnapshotSchema(wrongVersion)).toThrow(expect.objectContaining({ code: NET_ERROR.BAD_VALUE }));
  });

  it('merges ranges of several clips into a schema that covers both', () => {
    const run = loadFixture('dataset-1_run_active_001');
    const ranges = mergePoseRanges(measurePoseRanges(walk), measurePoseRanges(run));
    const schema = buildSnapshotSchema(walk.skeleton, ranges, walk.unit);
    expect(measuredError(walk, schema)).toBeLessThanOrEqual(schema.threshold);
    expect(measuredError(run, schema)).toBeLessThanOrEqual(schema.threshold);
    expect(() =>
      mergePoseRanges(ranges, measurePoseRanges(makeSyntheticClip({ boneCount: 3, sampleCount: 2 }))),
    ).toThrow(NetError);
  });

  it('rejects bad options with BAD_ARGUMENT', () => {
    expect(() => createSnapshotSchema(walk, { error: 'soon' })).toThrow(
      expect.objectContaining({ code: NET_ERROR.BAD_ARGUMENT }),
    );
    expect(() => createSnapshotSchema(walk, { shell: '0cm' })).toThrow(
      expect.objectContaining({ code: NET_ERROR.BAD_ARGUMENT }),
    );
    expect(() => createSnapshotSchema(walk, { deltaSmallOffset: 1, deltaLargeOffset: 3 })).toThrow(NetError);
  });
});
