import { describe, expect, it } from 'vitest';

import { validateRawClip } from '../../src/clip/raw-clip.js';
import { POSE_STRIDE } from '../../src/clip/skeleton.js';
import { makeSyntheticClip, makeSyntheticClipWithKinds, mulberry32 } from './synthetic.js';

describe('mulberry32', () => {
  it('repeats for a seed, differs across seeds and stays in [0, 1)', () => {
    const a = mulberry32(42),
      b = mulberry32(42),
      c = mulberry32(43);
    const xs = Array.from({ length: 1000 }, a);
    expect(Array.from({ length: 1000 }, b)).toEqual(xs);
    expect(Array.from({ length: 1000 }, c)).not.toEqual(xs);
    expect(xs.every((x) => x >= 0 && x < 1)).toBe(true);
    // A crude uniformity check: the mean of 1000 draws is near 0.5.
    expect(xs.reduce((s, x) => s + x, 0) / xs.length).toBeCloseTo(0.5, 1);
  });
});

describe('makeSyntheticClip', () => {
  it('is deterministic for a seed and different for another', () => {
    const a = makeSyntheticClip({ boneCount: 12, sampleCount: 40, seed: 5 });
    const b = makeSyntheticClip({ boneCount: 12, sampleCount: 40, seed: 5 });
    const c = makeSyntheticClip({ boneCount: 12, sampleCount: 40, seed: 6 });
    expect(b.rotations).toEqual(a.rotations);
    expect(b.translations).toEqual(a.translations);
    expect(b.skeleton.parents).toEqual(a.skeleton.parents);
    expect(c.rotations).not.toEqual(a.rotations);
  });

  it('builds a valid clip with the requested counts, rate and unit', () => {
    const clip = makeSyntheticClip({
      boneCount: 30,
      sampleCount: 64,
      seed: 9,
      sampleRate: 60,
      unit: 'm',
      animatedScale: true,
    });
    expect(() => validateRawClip(clip)).not.toThrow();
    expect(clip.skeleton.boneNames).toHaveLength(30);
    expect(clip.sampleCount).toBe(64);
    expect(clip.sampleRate).toBe(60);
    expect(clip.unit).toBe('m');
    for (let t = 0; t < 30 * 64; t++) {
      const r = clip.rotations;
      expect(Math.hypot(r[t * 4], r[t * 4 + 1], r[t * 4 + 2], r[t * 4 + 3])).toBeCloseTo(1, 5);
    }
  });

  it('makes a chain or a tree with parents before children', () => {
    const chain = makeSyntheticClip({ boneCount: 10, sampleCount: 2, shape: 'chain' });
    expect(Array.from(chain.skeleton.parents)).toEqual([-1, 0, 1, 2, 3, 4, 5, 6, 7, 8]);
    const tree = makeSyntheticClip({ boneCount: 50, sampleCount: 2, seed: 3 });
    const parents = Array.from(tree.skeleton.parents);
    expect(parents[0]).toBe(-1);
    for (let b = 1; b < 50; b++) {
      expect(parents[b]).toBeGreaterThanOrEqual(0);
      expect(parents[b]).toBeLessThan(b);
    }
    // A tree, not a chain: some bone has two children.
    expect(new Set(parents).size).toBeLessThan(parents.length);
  });

  it('honours every track kind and moves smoothly', () => {
    const { clip, rotationKinds, translationKinds, scaleKinds } = makeSyntheticClipWithKinds({
      boneCount: 60,
      sampleCount: 90,
      seed: 11,
      animatedScale: true,
    });
    const n = clip.sampleCount;
    const d = clip.skeleton.defaultPose;
    const kinds = new Set([...rotationKinds, ...translationKinds, ...scaleKinds]);
    expect(kinds).toEqual(new Set(['default', 'constant', 'animated']));
    for (let b = 0; b < 60; b++) {
      const rotationValues = new Set<string>();
      for (let s = 0; s < n; s++) {
        const i = (b * n + s) * 4;
        const q = Array.from(clip.rotations.subarray(i, i + 4));
        rotationValues.add(q.join(','));
        if (rotationKinds[b] === 'default') expect(q).toEqual([0, 0, 0, 1]);
        if (s > 0) {
          // Smooth: the angle between neighbouring samples stays under 15 degrees.
          const p = clip.rotations.subarray(i - 4, i);
          const dot = Math.abs(p[0] * q[0] + p[1] * q[1] + p[2] * q[2] + p[3] * q[3]);
          expect(2 * Math.acos(Math.min(1, dot))).toBeLessThan((15 * Math.PI) / 180);
        }
      }
      if (rotationKinds[b] === 'animated') expect(rotationValues.size).toBeGreaterThan(1);
      else expect(rotationValues.size).toBe(1);
      if (rotationKinds[b] === 'constant') expect([...rotationValues][0]).not.toBe('0,0,0,1');

      const translationValues = new Set<string>();
      for (let s = 0; s < n; s++) {
        const t = Array.from(clip.translations.subarray((b * n + s) * 3, (b * n + s) * 3 + 3));
        translationValues.add(t.join(','));
        if (translationKinds[b] === 'default')
          expect(t).toEqual(Array.from(d.subarray(b * POSE_STRIDE + 4, b * POSE_STRIDE + 7)));
      }
      expect(translationValues.size === 1).toBe(translationKinds[b] !== 'animated');

      const scaleValues = new Set<number>();
      for (let s = 0; s < n * 3; s++) scaleValues.add(clip.scales[b * n * 3 + s]);
      if (scaleKinds[b] === 'default') expect([...scaleValues]).toEqual([1]);
      if (scaleKinds[b] === 'constant') {
        expect(scaleValues.size).toBe(1);
        expect([...scaleValues][0]).not.toBe(1);
      }
      if (scaleKinds[b] === 'animated') expect(scaleValues.size).toBeGreaterThan(1);
    }
    // The root walks forward.
    expect(translationKinds[0]).toBe('animated');
    expect(clip.translations[(n - 1) * 3]).toBeGreaterThan(clip.translations[0]);
  });

  it('rejects non-positive counts', () => {
    expect(() => makeSyntheticClip({ boneCount: 0, sampleCount: 5 })).toThrow(/boneCount/);
    expect(() => makeSyntheticClip({ boneCount: 3, sampleCount: 1.5 })).toThrow(/sampleCount/);
  });
});
