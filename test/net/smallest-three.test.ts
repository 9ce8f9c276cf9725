import { describe, expect, it } from 'vitest';

import {
  SMALLEST_THREE_MAX_BITS,
  SMALLEST_THREE_MIN_BITS,
  SMALLEST_THREE_RANGE,
  decodeSmallestThree,
  encodeSmallestThree,
  smallestThreeMaxAngle,
} from '../../src/net/smallest-three.js';
import { mulberry32 } from './helpers.js';

/** Angle (radians) between the rotations of two quaternions. */
function angleBetween(a: ArrayLike<number>, b: ArrayLike<number>): number {
  const la = Math.hypot(a[0], a[1], a[2], a[3]),
    lb = Math.hypot(b[0], b[1], b[2], b[3]);
  const dot = Math.abs(a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3]) / (la * lb);
  return 2 * Math.acos(Math.min(1, dot));
}

function roundTrip(q: number[], bits: number): { codes: Int32Array; out: Float32Array } {
  const codes = new Int32Array(4);
  encodeSmallestThree(q[0], q[1], q[2], q[3], bits, codes, 0);
  const out = new Float32Array(4);
  decodeSmallestThree(codes, 0, bits, out, 0);
  return { codes, out };
}

function randomQuat(random: () => number): number[] {
  // Uniform on the sphere (Shoemake).
  const u1 = random(),
    u2 = random() * 2 * Math.PI,
    u3 = random() * 2 * Math.PI;
  const a = Math.sqrt(1 - u1),
    b = Math.sqrt(u1);
  return [a * Math.sin(u2), a * Math.cos(u2), b * Math.sin(u3), b * Math.cos(u3)];
}

describe('smallest-three', () => {
  it('picks each of the four components as the largest and makes it positive', () => {
    const cases: [number[], number][] = [
      [[0.9, 0.1, -0.3, 0.2], 0],
      [[0.1, -0.95, 0.2, 0.1], 1],
      [[0.2, 0.1, 0.9, -0.3], 2],
      [[-0.1, 0.2, 0.3, -0.9], 3],
    ];
    for (const [q, index] of cases) {
      for (const sign of [1, -1]) {
        const { codes, out } = roundTrip(
          q.map((v) => v * sign),
          16,
        );
        expect(codes[0]).toBe(index);
        expect(out[index]).toBeGreaterThan(0);
        expect(angleBetween(q, out)).toBeLessThanOrEqual(smallestThreeMaxAngle(16));
      }
    }
  });

  it('q and -q give the same codes', () => {
    const random = mulberry32(3);
    for (let i = 0; i < 200; i++) {
      const q = randomQuat(random);
      const a = roundTrip(q, 12).codes,
        b = roundTrip(
          q.map((v) => -v),
          12,
        ).codes;
      expect(Array.from(a)).toEqual(Array.from(b));
    }
  });

  it('stays within the analytic bound at every width, near the ±1/√2 edges too', () => {
    const random = mulberry32(11);
    const r = SMALLEST_THREE_RANGE;
    for (let bits = SMALLEST_THREE_MIN_BITS; bits <= SMALLEST_THREE_MAX_BITS; bits++) {
      const bound = smallestThreeMaxAngle(bits);
      let worst = 0;
      const check = (q: number[]) => {
        const { codes, out } = roundTrip(q, bits);
        for (let c = 1; c <= 3; c++) expect(codes[c]).toBeGreaterThanOrEqual(0);
        for (let c = 1; c <= 3; c++) expect(codes[c]).toBeLessThanOrEqual(2 ** bits - 1);
        worst = Math.max(worst, angleBetween(q, out));
      };
      for (let i = 0; i < 300; i++) check(randomQuat(random));
      for (let i = 0; i < 100; i++) {
        // Two components tied near ±1/√2 (the largest is ambiguous), and all four at ±1/2.
        const e = (random() - 0.5) * 1e-6;
        const s = random() < 0.5 ? -1 : 1;
        const pair = [r + e, s * (r - e), 0, 0];
        const k = Math.floor(random() * 4);
        check([pair[k % 4], pair[(k + 1) % 4], pair[(k + 2) % 4], pair[(k + 3) % 4]]);
        check([0.5 + e, -0.5, 0.5 - e, s * 0.5]);
      }
      expect(worst).toBeLessThanOrEqual(bound);
    }
  });

  it('bounds rotations near one axis tighter when told the smaller components stay small', () => {
    const random = mulberry32(5);
    const bits = 10;
    const smallNorm = Math.sin(0.4); // rotations up to 0.8 rad
    const tight = smallestThreeMaxAngle(bits, smallNorm);
    expect(tight).toBeLessThan(smallestThreeMaxAngle(bits));
    for (let i = 0; i < 2000; i++) {
      const axis = [random() - 0.5, random() - 0.5, random() - 0.5];
      const len = Math.hypot(axis[0], axis[1], axis[2]);
      const half = random() * 0.4;
      const q = [...axis.map((v) => (v / len) * Math.sin(half)), Math.cos(half)];
      expect(angleBetween(q, roundTrip(q, bits).out)).toBeLessThanOrEqual(tight);
    }
  });

  it('encodes a zero or non-finite quaternion as identity', () => {
    for (const q of [
      [0, 0, 0, 0],
      [NaN, 0, 0, 1],
    ]) {
      const { out } = roundTrip(q, 8);
      expect(angleBetween([0, 0, 0, 1], out)).toBeLessThanOrEqual(smallestThreeMaxAngle(8));
    }
  });
});
