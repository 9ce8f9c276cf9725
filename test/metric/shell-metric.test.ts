import { describe, expect, it } from 'vitest';

import {
  AFFINE_STRIDE,
  hypot3,
  localToAffine,
  shellBoundError,
  BONE_ERRORS,
  measureBoneErrors,
  virtualVertexError,
} from '../../src/metric/error-metric.js';
import { mulberry32 } from '../utils/synthetic.js';

/** A random affine transform (rotation, translation, scale 1 unless `scaled`). */
function randomAffine(random: () => number, scaled: boolean): Float64Array {
  const out = new Float64Array(AFFINE_STRIDE);
  const q = [random() - 0.5, random() - 0.5, random() - 0.5, random() - 0.5];
  const s = scaled ? [0.5 + random(), 0.5 + random(), 0.5 + random()] : [1, 1, 1];
  localToAffine(q[0], q[1], q[2], q[3], random() * 10, random() * 10, random() * 10, s[0], s[1], s[2], out, 0);
  return out;
}

/** Largest |(A − B)p + Δt| over `n` points p on the sphere of radius d (Fibonacci lattice). */
function sampledShellError(a: Float64Array, b: Float64Array, d: number, n: number): number {
  let worst = 0;
  for (let i = 0; i < n; i++) {
    const z = 1 - (2 * i + 1) / n,
      r = Math.sqrt(1 - z * z),
      phi = i * Math.PI * (3 - Math.sqrt(5));
    const p = [d * r * Math.cos(phi), d * r * Math.sin(phi), d * z];
    let e = 0;
    for (let row = 0; row < 3; row++) {
      const v =
        (a[row] - b[row]) * p[0] +
        (a[3 + row] - b[3 + row]) * p[1] +
        (a[6 + row] - b[6 + row]) * p[2] +
        (a[9 + row] - b[9 + row]);
      e += v * v;
    }
    worst = Math.max(worst, Math.sqrt(e));
  }
  return worst;
}

describe('shellBoundError', () => {
  it('is 2·d·sin(θ/2) for two rotations θ apart about one point', () => {
    for (const theta of [1e-9, 1e-7, 1e-3, 0.3, 1, 2, Math.PI]) {
      const a = new Float64Array(AFFINE_STRIDE),
        b = new Float64Array(AFFINE_STRIDE);
      localToAffine(0, 0, 0, 1, 0, 0, 0, 1, 1, 1, a, 0);
      localToAffine(
        0.6 * Math.sin(theta / 2),
        0.8 * Math.sin(theta / 2),
        0,
        Math.cos(theta / 2),
        0,
        0,
        0,
        1,
        1,
        1,
        b,
        0,
      );
      // The closed-form eigenvalue is exact to about 1e-9 relative (a double eigenvalue here).
      expect(Math.abs(shellBoundError(a, 0, b, 0, 3) / (6 * Math.sin(theta / 2)) - 1)).toBeLessThan(1e-8);
    }
  });

  it('bounds every point of the shell, is reached without translation, and covers the three vertices', () => {
    const random = mulberry32(3);
    for (let i = 0; i < 200; i++) {
      const scaled = i % 2 === 1;
      const a = randomAffine(random, scaled),
        b = randomAffine(random, scaled);
      const bound = shellBoundError(a, 0, b, 0, 3);
      expect(bound).toBeGreaterThanOrEqual(sampledShellError(a, b, 3, 2000) * (1 - 1e-12));
      expect(bound).toBeGreaterThanOrEqual(virtualVertexError(a, 0, b, 0, 3));
      // Same translation: the bound is the sphere's largest displacement (the sampling is within 1 %).
      b.set(a.subarray(9, 12), 9);
      const rotationOnly = shellBoundError(a, 0, b, 0, 3);
      expect(sampledShellError(a, b, 3, 20000)).toBeGreaterThan(rotationOnly * 0.99);
    }
  });
});

describe('measureBoneErrors', () => {
  it('gives virtualVertexError to the bit, and the whole-shell bound: d·‖D‖ + |Δt| up to the floor, the eigenvalue above', () => {
    const random = mulberry32(5);
    const io = new Float64Array(BONE_ERRORS.COUNT);
    for (let i = 0; i < 500; i++) {
      const a = randomAffine(random, i % 2 === 1);
      const b = i % 5 === 0 ? a.slice() : randomAffine(random, i % 3 === 1);
      // Nearly the same transforms too, as the compressor's checks measure.
      if (i % 4 === 0) for (let c = 0; c < AFFINE_STRIDE; c++) b[c] = a[c] + (random() - 0.5) * 1e-6;
      const d = 0.5 + random() * 3;
      let frobenius = 0;
      for (let c = 0; c < 9; c++) frobenius += (a[c] - b[c]) ** 2;
      const cheap = d * Math.sqrt(frobenius) + Math.hypot(a[9] - b[9], a[10] - b[10], a[11] - b[11]);
      const vertex = virtualVertexError(a, 0, b, 0, d);
      for (const floor of [-1, cheap * 0.5, cheap * 2]) {
        io[BONE_ERRORS.DISTANCE] = d;
        io[BONE_ERRORS.FLOOR] = floor;
        measureBoneErrors(a, 0, b, 0, io);
        expect(Object.is(io[BONE_ERRORS.VERTEX], vertex)).toBe(true);
        if (floor > cheap) expect(io[BONE_ERRORS.SHELL]).toBeCloseTo(cheap, 12);
        else {
          expect(io[BONE_ERRORS.SHELL]).toBeLessThanOrEqual(cheap * (1 + 1e-12));
          expect(io[BONE_ERRORS.SHELL]).toBeGreaterThanOrEqual(vertex * (1 - 1e-12));
        }
      }
    }
  });
});

describe('hypot3', () => {
  it('is Math.hypot to the bit', () => {
    const random = mulberry32(7);
    const value = () => (random() - 0.5) * 10 ** (random() * 8 - 4);
    for (let i = 0; i < 20_000; i++) {
      // Columns of rotation matrices too (near unit length), and zeros.
      const column = randomAffine(random, false).subarray(0, 3);
      const v = [
        [value(), value(), value()],
        [value(), 0, value()],
        [column[0], column[1], column[2]],
        [0, 0, 0],
      ][i % 4];
      expect(Object.is(hypot3(v[0], v[1], v[2]), Math.hypot(v[0], v[1], v[2]))).toBe(true);
    }
  });
});

describe('localToAffine', () => {
  it('composes the quaternion as it is, as three.js and Babylon.js do: length k gives k²R + (1 − k²)I', () => {
    const h = 0.4;
    const unit = new Float64Array(AFFINE_STRIDE),
      m = new Float64Array(AFFINE_STRIDE);
    localToAffine(0, Math.sin(h), 0, Math.cos(h), 5, 0, 0, 1, 1, 1, unit, 0);
    for (const eps of [1e-7, -3e-6]) {
      const k = 1 + eps;
      localToAffine(0, Math.sin(h) * k, 0, Math.cos(h) * k, 5, 0, 0, 1, 1, 1, m, 0);
      for (let c = 0; c < 3; c++)
        for (let r = 0; r < 3; r++)
          expect(m[c * 3 + r]).toBeCloseTo(k * k * unit[c * 3 + r] + (c === r ? 1 - k * k : 0), 15);
      // Seen at 50 units, a length 1e-7 off moves a point by about 1e-5 · |R − I|: 50 · |k² − 1| · |R − I|.
      const moved = 50 * Math.hypot(m[0] - unit[0], m[1] - unit[1], m[2] - unit[2]);
      const turn = Math.hypot(unit[0] - 1, unit[1], unit[2]);
      expect(moved / (50 * Math.abs(k * k - 1) * turn)).toBeCloseTo(1, 6);
    }
  });
});
