import { describe, expect, it } from 'vitest';

import {
  MIN_DROPPED_MAGNITUDE,
  chooseDroppedComponents,
  preprocessRotations,
  rotationDeltas,
  rotationReference,
} from '../../src/compress/preprocess.js';
import { segmentClip } from '../../src/compress/segment.js';
import { createRawClip } from '../../src/clip/raw-clip.js';
import { createSkeleton, POSE_STRIDE } from '../../src/clip/skeleton.js';
import { decodeReference } from '../../src/runtime/bits.js';
import { emitRotation } from '../../src/runtime/interpolate.js';
import { makeSyntheticClip, mulberry32 } from '../utils/synthetic.js';

/** A seeded random unit quaternion (uniform on the sphere via normalised Gaussians-ish uniforms). */
function randomQuat(random: () => number): [number, number, number, number] {
  for (;;) {
    const q = [random() * 2 - 1, random() * 2 - 1, random() * 2 - 1, random() * 2 - 1];
    const len = Math.hypot(...q);
    if (len > 0.1 && len <= 1) return q.map((v) => v / len) as [number, number, number, number];
  }
}

/** Largest |a_i − s·b_i| over the components, for the better sign s = ±1 (q and −q are one rotation). */
function quatDistance(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let plus = 0,
    minus = 0;
  for (let i = 0; i < 4; i++) {
    plus = Math.max(plus, Math.abs(a[i] - b[i]));
    minus = Math.max(minus, Math.abs(a[i] + b[i]));
  }
  return Math.min(plus, minus);
}

/** A one-bone clip whose rotations are `quats` (any length, any sign). */
function rotationClip(quats: number[][]): ReturnType<typeof createRawClip> {
  const pose = new Float32Array(POSE_STRIDE);
  pose[3] = 1;
  pose[7] = 1;
  pose[8] = 1;
  pose[9] = 1;
  const skeleton = createSkeleton(['bone'], [-1], pose, 'cm');
  const clip = createRawClip('rotations', skeleton, 30, quats.length, 'cm');
  quats.forEach((q, s) => clip.rotations.set(q, s * 4));
  return clip;
}

describe('preprocessRotations', () => {
  it('normalises, puts every sample on the w ≥ 0 hemisphere and keeps the rotation', () => {
    const random = mulberry32(11);
    const quats: number[][] = [];
    for (let i = 0; i < 200; i++) {
      const scale = 0.2 + random() * 3;
      quats.push(randomQuat(random).map((v) => v * scale));
    }
    quats.push([0, 0, 0, -2], [0.5, 0.5, 0.5, 0.5], [-1, 0, 0, 0]);
    const clip = rotationClip(quats);
    const out = preprocessRotations(clip);
    quats.forEach((q, s) => {
      const o = Array.from(out.subarray(s * 4, s * 4 + 4));
      expect(o[3]).toBeGreaterThanOrEqual(0);
      expect(Math.hypot(...o)).toBeCloseTo(1, 6);
      const len = Math.hypot(...q);
      expect(
        quatDistance(
          o,
          q.map((v) => v / len),
        ),
      ).toBeLessThan(1e-6);
    });
  });

  it('turns a zero quaternion into identity', () => {
    const clip = rotationClip([[0, 0, 0, 1]]);
    clip.rotations.fill(0);
    expect(Array.from(preprocessRotations(clip))).toEqual([0, 0, 0, 1]);
  });
});

describe('rotationReference and rotationDeltas', () => {
  it.each(['mean', 'identity'] as const)('ref · delta reproduces the input rotation (%s reference)', (mode) => {
    for (const seed of [1, 2, 3]) {
      const clip = makeSyntheticClip({ boneCount: 8, sampleCount: 50, seed, maxAngleDeg: 170 });
      const rotations = preprocessRotations(clip);
      const n = clip.sampleCount;
      const ref = new Float64Array(4);
      const codes = new Int16Array(3);
      const decoded = new Float64Array(4);
      const deltas = new Float32Array(n * 4);
      const rebuilt = new Float32Array(4);
      for (let b = 0; b < 8; b++) {
        rotationReference(rotations, b, n, mode, ref, codes);
        // The file stores i16 codes: the reference is exactly what the decoder rebuilds from them.
        decodeReference(codes[0], codes[1], codes[2], decoded, 0);
        expect(Array.from(ref)).toEqual(Array.from(decoded));
        expect(ref[3]).toBeGreaterThanOrEqual(0);
        expect(Math.hypot(...ref)).toBeCloseTo(1, 6); // float32 components
        if (mode === 'identity') expect(Array.from(ref)).toEqual([0, 0, 0, 1]);
        rotationDeltas(rotations, b, n, ref, deltas);
        for (let s = 0; s < n; s++) {
          const d = deltas.subarray(s * 4, s * 4 + 4);
          expect(d[3]).toBeGreaterThanOrEqual(0);
          expect(Math.hypot(...d)).toBeCloseTo(1, 6);
          // Rebuild the largest component, as the compressor's per-segment choice would:
          // rebuilding a component near 0 from float32 values is ill-conditioned by design.
          let drop = 0;
          for (let c = 1; c < 4; c++) if (Math.abs(d[c]) > Math.abs(d[drop])) drop = c;
          const sign = d[drop] < 0 ? -1 : 1;
          const kept = [0, 1, 2, 3].filter((c) => c !== drop).map((c) => sign * d[c]);
          emitRotation(Float64Array.of(...kept, 0), drop, ref, 0, rebuilt, 0);
          expect(quatDistance(rebuilt, rotations.subarray((b * n + s) * 4, (b * n + s) * 4 + 4))).toBeLessThan(1e-6);
        }
      }
    }
  });

  it('the identity reference gives the rotations themselves as deltas', () => {
    const clip = makeSyntheticClip({ boneCount: 3, sampleCount: 20, seed: 4 });
    const rotations = preprocessRotations(clip);
    const deltas = new Float32Array(20 * 4);
    rotationDeltas(rotations, 1, 20, Float64Array.of(0, 0, 0, 1), deltas);
    for (let i = 0; i < deltas.length; i++) expect(deltas[i]).toBeCloseTo(rotations[20 * 4 + i], 7);
  });

  it('the mean reference keeps deltas near identity, far from w = 0', () => {
    const clip = makeSyntheticClip({ boneCount: 6, sampleCount: 60, seed: 21, maxAngleDeg: 30 });
    const rotations = preprocessRotations(clip);
    const ref = new Float64Array(4);
    const deltas = new Float32Array(60 * 4);
    for (let b = 0; b < 6; b++) {
      rotationReference(rotations, b, 60, 'mean', ref, new Int16Array(3));
      rotationDeltas(rotations, b, 60, ref, deltas);
      for (let s = 0; s < 60; s++) expect(deltas[s * 4 + 3]).toBeGreaterThan(0.9);
    }
  });

  it('the mean of a constant track is that rotation', () => {
    const q = [0.1, -0.7, 0.2, 0.6];
    const len = Math.hypot(...q);
    const clip = rotationClip(Array.from({ length: 10 }, (_, i) => (i % 2 ? q.map((v) => -v) : q)));
    const rotations = preprocessRotations(clip);
    const ref = new Float64Array(4);
    const codes = new Int16Array(3);
    rotationReference(rotations, 0, 10, 'mean', ref, codes);
    // i16 codes: within half a code (1/65534) per component, w rebuilt from them.
    expect(
      quatDistance(
        ref,
        q.map((v) => v / len),
      ),
    ).toBeLessThan(1e-4);
    expect(Array.from(codes)).toEqual(q.slice(0, 3).map((v) => Math.round((v / len) * 32767)));
  });
});

describe('chooseDroppedComponents', () => {
  /** Runs the choice on one segment holding `quats`. */
  function choose(quats: number[][]): { drop: number; out: Float32Array } {
    const deltas = Float32Array.from(quats.flat());
    const drop = new Uint8Array(1);
    chooseDroppedComponents(deltas, Int32Array.of(0), Int32Array.of(quats.length), drop);
    return { drop: drop[0], out: deltas };
  }

  it('drops w when |w| ≥ 0.5 in every sample of the segment, including exactly 0.5', () => {
    expect(
      choose([
        [0, 0, 0, 1],
        [0.6, 0, 0, 0.8],
      ]).drop,
    ).toBe(3);
    expect(choose([[0.5, 0.5, 0.5, 0.5]]).drop).toBe(3);
    expect(
      choose([
        [0.8, 0, 0, -0.6],
        [0, 0.6, 0, 0.8],
      ]).drop,
    ).toBe(3);
    expect(MIN_DROPPED_MAGNITUDE).toBe(0.5);
  });

  it('drops another component when |w| < 0.5 somewhere, the one whose smallest magnitude is largest', () => {
    expect(choose([[0.9, 0.1, 0.1, Math.sqrt(1 - 0.83)]]).drop).toBe(0);
    expect(choose([[0, 1, 0, 0]]).drop).toBe(1);
    expect(
      choose([
        [0.1, 0.2, -0.95, 0.1],
        [0.1, 0.1, 0.9, 0.3],
      ]).drop,
    ).toBe(2);
  });

  it('keeps w when, below 0.5, it still has the largest smallest magnitude of the segment', () => {
    // x, y and z each pass through 0 in the segment, so none of them is a better choice.
    expect(
      choose([
        [0, 0, 0, 1],
        [0.9, 0.1, 0.1, 0.4],
        [0, 0.9, 0, 0.44],
      ]).drop,
    ).toBe(3);
  });

  it('signs each sample so the dropped component is ≥ 0, negating whole quaternions only', () => {
    const random = mulberry32(5);
    const layout = segmentClip(200);
    const quats: number[][] = [];
    for (let s = 0; s < 200; s++) quats.push(randomQuat(random).map(Math.fround));
    // Make some segments w-friendly so both branches are exercised.
    for (let s = 0; s < 48; s++) {
      const [x, y, z] = quats[s].map((v) => v * 0.3);
      const w = Math.sqrt(1 - x * x - y * y - z * z) * (s % 3 === 0 ? -1 : 1);
      quats[s] = [x, y, z, w].map(Math.fround);
    }
    const deltas = Float32Array.from(quats.flat());
    const drop = new Uint8Array(layout.count);
    chooseDroppedComponents(deltas, layout.starts, layout.sizes, drop);
    let droppedW = 0,
      droppedOther = 0;
    for (let seg = 0; seg < layout.count; seg++) {
      const start = layout.starts[seg],
        end = start + layout.sizes[seg];
      const minAbs = [0, 1, 2, 3].map((c) => Math.min(...quats.slice(start, end).map((q) => Math.abs(q[c]))));
      if (minAbs[3] >= 0.5) {
        expect(drop[seg]).toBe(3);
        droppedW++;
      } else {
        // Documented choice: the component whose smallest magnitude over the segment is largest.
        expect(minAbs[drop[seg]]).toBe(Math.max(...minAbs));
        if (drop[seg] !== 3) droppedOther++;
      }
      for (let s = start; s < end; s++) {
        const out = Array.from(deltas.subarray(s * 4, s * 4 + 4));
        expect(out[drop[seg]]).toBeGreaterThanOrEqual(0);
        const q = quats[s];
        const same = out.every((v, c) => v === q[c]);
        const negated = out.every((v, c) => v === -q[c]);
        expect(same || negated).toBe(true);
        // The decoder rebuilds the dropped component from the other three.
        const others = out.filter((_, c) => c !== drop[seg]);
        expect(Math.sqrt(Math.max(0, 1 - others.reduce((sum, v) => sum + v * v, 0)))).toBeCloseTo(out[drop[seg]], 3);
      }
    }
    expect(droppedW).toBeGreaterThan(0);
    expect(droppedOther).toBeGreaterThan(0);
  });

  it('never drops w for a single sample with |w| < 0.5 (some other component is ≥ 0.5)', () => {
    const random = mulberry32(8);
    let tested = 0;
    for (let i = 0; i < 2000; i++) {
      const q = randomQuat(random);
      if (Math.abs(q[3]) >= 0.5) continue;
      tested++;
      const { drop, out } = choose([q]);
      expect(drop).not.toBe(3);
      expect(Math.abs(out[drop])).toBeGreaterThanOrEqual(0.5 - 1e-7);
      expect(out[drop]).toBeGreaterThanOrEqual(0);
    }
    expect(tested).toBeGreaterThan(500);
  });
});
