import { describe, expect, it } from 'vitest';

import { createRawClip, type RawClip } from '../../src/clip/raw-clip.js';
import { createSkeleton, POSE_STRIDE, resolveShellDistances, setIdentity } from '../../src/clip/skeleton.js';
import { measureClipError, MetricError, percentile } from '../../src/metric/error-metric.js';
import { mulberry32 } from '../utils/synthetic.js';

type Vec3 = [number, number, number];
type Quat = [number, number, number, number];

// root ─ spine ─ neck ─ head
//    └── leg
const NAMES = ['root', 'spine', 'neck', 'head', 'leg'];
const PARENTS = [-1, 0, 1, 2, 0];
const ROOT = 0,
  SPINE = 1,
  NECK = 2,
  HEAD = 3,
  LEG = 4;
const SAMPLES = 8;

/** A clip on the tree above with random unit quaternions and translations; scale 1. */
function makeTreeClip(seed: number): RawClip {
  const random = mulberry32(seed);
  const pose = new Float32Array(NAMES.length * POSE_STRIDE);
  for (let b = 0; b < NAMES.length; b++) setIdentity(pose, b);
  const clip = createRawClip('tree', createSkeleton(NAMES, PARENTS, pose, 'cm'), 30, SAMPLES, 'cm');
  for (let i = 0; i < NAMES.length * SAMPLES; i++) {
    const q = [random() - 0.5, random() - 0.5, random() - 0.5, random() - 0.5];
    const len = Math.hypot(...q);
    for (let c = 0; c < 4; c++) clip.rotations[i * 4 + c] = q[c] / len;
    for (let c = 0; c < 3; c++) clip.translations[i * 3 + c] = (random() - 0.5) * 40;
  }
  return clip;
}

function copyClip(clip: RawClip): RawClip {
  return {
    ...clip,
    rotations: clip.rotations.slice(),
    translations: clip.translations.slice(),
    scales: clip.scales.slice(),
  };
}

function quatAt(clip: RawClip, bone: number, s: number): Quat {
  const i = (bone * clip.sampleCount + s) * 4;
  return [clip.rotations[i], clip.rotations[i + 1], clip.rotations[i + 2], clip.rotations[i + 3]];
}

function translationAt(clip: RawClip, bone: number, s: number): Vec3 {
  const i = (bone * clip.sampleCount + s) * 3;
  return [clip.translations[i], clip.translations[i + 1], clip.translations[i + 2]];
}

/** Hamilton product a·b (b applied first). */
function quatMul(a: Quat, b: Quat): Quat {
  const [ax, ay, az, aw] = a,
    [bx, by, bz, bw] = b;
  return [
    aw * bx + ax * bw + ay * bz - az * by,
    aw * by - ax * bz + ay * bw + az * bx,
    aw * bz + ax * by - ay * bx + az * bw,
    aw * bw - ax * bx - ay * by - az * bz,
  ];
}

/** Rotates v by the unit quaternion q: v + 2w(u×v) + 2u×(u×v). */
function rotate(q: Quat, v: Vec3): Vec3 {
  const len = Math.hypot(...q);
  const [x, y, z, w] = q.map((c) => c / len);
  const cx = y * v[2] - z * v[1],
    cy = z * v[0] - x * v[2],
    cz = x * v[1] - y * v[0];
  return [
    v[0] + 2 * (w * cx + y * cz - z * cy),
    v[1] + 2 * (w * cy + z * cx - x * cz),
    v[2] + 2 * (w * cz + x * cy - y * cx),
  ];
}

/** (R(n, δ) − I)·v by Rodrigues' formula: sin δ (n×v) + (1 − cos δ)(n(n·v) − v). */
function rodriguesDelta(n: Vec3, delta: number, v: Vec3): Vec3 {
  const cross: Vec3 = [n[1] * v[2] - n[2] * v[1], n[2] * v[0] - n[0] * v[2], n[0] * v[1] - n[1] * v[0]];
  const dot = n[0] * v[0] + n[1] * v[1] + n[2] * v[2];
  const s = Math.sin(delta),
    k = 1 - Math.cos(delta);
  return [0, 1, 2].map((i) => s * cross[i] + k * (n[i] * dot - v[i])) as Vec3;
}

const AXIS: Vec3 = (() => {
  const v = [1, -2, 0.5];
  const len = Math.hypot(...v);
  return v.map((c) => c / len) as Vec3;
})();
const DELTA = 0.3; // radians

/** The reference with `bone`'s local rotation followed by δ about AXIS (in the bone's frame). */
function rotateBone(reference: RawClip, bone: number): RawClip {
  const decoded = copyClip(reference);
  const h = Math.sin(DELTA / 2);
  const qDelta: Quat = [AXIS[0] * h, AXIS[1] * h, AXIS[2] * h, Math.cos(DELTA / 2)];
  for (let s = 0; s < SAMPLES; s++) {
    const q = quatMul(quatAt(reference, bone, s), qDelta);
    decoded.rotations.set(q, (bone * SAMPLES + s) * 4);
  }
  return decoded;
}

/** Largest per-sample error of `bone` (the report only keeps each bone's max). */
function boneError(reference: RawClip, decoded: RawClip, bone: number, shells?: Float32Array): number {
  return measureClipError(reference, decoded, shells).boneMaxError[bone];
}

function expectRelative(actual: number, expected: number, tolerance = 1e-5): void {
  expect(Math.abs(actual - expected)).toBeLessThanOrEqual(tolerance * Math.abs(expected));
}

describe('measureClipError', () => {
  it('gives exactly 0 for a clip against itself', () => {
    const clip = makeTreeClip(1);
    const report = measureClipError(clip, copyClip(clip));
    expect(report.maxError).toBe(0);
    expect(report.p99Error).toBe(0);
    expect(report.meanError).toBe(0);
    expect(Array.from(report.boneMaxError)).toEqual([0, 0, 0, 0, 0]);
    expect(report.boneCount).toBe(5);
    expect(report.sampleCount).toBe(SAMPLES);
    expect(report.unit).toBe('cm');
  });

  it('shows a rotation by δ as 2·d·sin(δ/2) on the rotated bone', () => {
    const reference = makeTreeClip(2);
    const decoded = rotateBone(reference, SPINE);
    const d = 3; // default shell, cm
    // The vertex d·e_k moves by d·2·sin(δ/2)·|e_k's part perpendicular to the axis|, and
    // that part is largest, sqrt(1 − n_k²), for the axis component n_k nearest 0.
    const perpendicular = Math.sqrt(1 - Math.min(...AXIS.map((c) => c * c)));
    const expected = 2 * d * Math.sin(DELTA / 2) * perpendicular;
    // Every sample shows the same error: check each one through a one-sample clip.
    for (let s = 0; s < SAMPLES; s++) {
      const one = (c: RawClip) => sliceSample(c, s);
      expectRelative(boneError(one(reference), one(decoded), SPINE), expected);
    }
  });

  it('shows the displaced child of a rotated bone, and nothing on other bones', () => {
    const reference = makeTreeClip(3);
    const decoded = rotateBone(reference, SPINE);
    const d = 3;
    for (let s = 0; s < SAMPLES; s++) {
      // The neck's vertices sit at t_neck + R_neck·d·e_k in the spine's frame; δ moves each
      // by |(R(δ) − I)·v|, and the rigid transforms above the spine keep that length.
      const t = translationAt(reference, NECK, s);
      const q = quatAt(reference, NECK, s);
      let expected = 0;
      for (let k = 0; k < 3; k++) {
        const e: Vec3 = [0, 0, 0];
        e[k] = d;
        const r = rotate(q, e);
        const v: Vec3 = [t[0] + r[0], t[1] + r[1], t[2] + r[2]];
        expected = Math.max(expected, Math.hypot(...rodriguesDelta(AXIS, DELTA, v)));
      }
      const report = measureClipError(sliceSample(reference, s), sliceSample(decoded, s));
      expectRelative(report.boneMaxError[NECK], expected);
      expect(report.boneMaxError[HEAD]).toBeGreaterThan(0);
      expect(report.boneMaxError[ROOT]).toBe(0);
      expect(report.boneMaxError[LEG]).toBe(0);
    }
  });

  it('shows a translation offset on the bone and every descendant with its length', () => {
    const reference = makeTreeClip(4);
    const decoded = copyClip(reference);
    const offset: Vec3 = [0.3, -0.4, 1.2]; // length 1.3
    for (let s = 0; s < SAMPLES; s++) {
      for (let c = 0; c < 3; c++) decoded.translations[(SPINE * SAMPLES + s) * 3 + c] += offset[c];
    }
    const report = measureClipError(reference, decoded);
    for (const bone of [SPINE, NECK, HEAD]) expectRelative(report.boneMaxError[bone], 1.3);
    expect(report.boneMaxError[ROOT]).toBe(0);
    expect(report.boneMaxError[LEG]).toBe(0);
  });

  it('uses a per-bone shell distance override for that bone only', () => {
    const reference = makeTreeClip(5);
    const decoded = rotateBone(reference, SPINE);
    const shells = resolveShellDistances(
      reference.skeleton,
      'cm',
      { value: 3, unit: 'cm' },
      { spine: { value: 1, unit: 'm' } },
    );
    expect(Array.from(shells)).toEqual([3, 100, 3, 3, 3]);
    const perpendicular = Math.sqrt(1 - Math.min(...AXIS.map((c) => c * c)));
    expectRelative(boneError(reference, decoded, SPINE, shells), 2 * 100 * Math.sin(DELTA / 2) * perpendicular);
    expectRelative(boneError(reference, decoded, SPINE), 2 * 3 * Math.sin(DELTA / 2) * perpendicular);
    // The neck's own shell is unchanged, so its error is the same number either way.
    expect(boneError(reference, decoded, NECK, shells)).toBe(boneError(reference, decoded, NECK));
  });

  it('reports max, p99, mean, worst bone and worst sample on a constructed case', () => {
    // Two roots, identity rotations, zero translations; the decoded "mover" is shifted by
    // ((37·s) mod 100) + 1 along x at sample s, so its errors are 1..100 in a shuffled order.
    const pose = new Float32Array(2 * POSE_STRIDE);
    setIdentity(pose, 0);
    setIdentity(pose, 1);
    const reference = createRawClip('c', createSkeleton(['still', 'mover'], [-1, -1], pose, 'cm'), 30, 100, 'cm');
    const decoded = copyClip(reference);
    for (let s = 0; s < 100; s++) decoded.translations[(100 + s) * 3] = ((37 * s) % 100) + 1;
    const report = measureClipError(reference, decoded);
    expect(report.maxError).toBe(100);
    expect(report.worstBone).toBe(1);
    expect(report.worstBoneName).toBe('mover');
    // 37·27 = 999 ≡ 99 (mod 100): sample 27 carries the 100.
    expect(report.worstSample).toBe(27);
    // 200 values: 100 zeros then 1..100. Nearest rank for p99 is the 198th smallest: 98.
    expect(report.p99Error).toBe(98);
    expect(report.meanError).toBe(5050 / 200);
    expect(Array.from(report.boneMaxError)).toEqual([0, 100]);
  });

  it('refuses clips that cannot be compared', () => {
    const a = makeTreeClip(6);
    expect(() => measureClipError(a, sliceSample(a, 0))).toThrow(MetricError);
    expect(() => measureClipError(a, a, new Float32Array(2))).toThrow(/2 shell distances for 5 bones/);
    const otherTree = { ...a, skeleton: { ...a.skeleton, parents: Int32Array.from([-1, 0, 1, 2, 1]) } };
    expect(() => measureClipError(a, otherTree)).toThrow(/hierarchies differ at bone 4 \(leg\)/);
  });
});

/** A one-sample clip holding sample `s` of `clip`. */
function sliceSample(clip: RawClip, s: number): RawClip {
  const boneCount = clip.skeleton.parents.length;
  const out = createRawClip(clip.name, clip.skeleton, clip.sampleRate, 1, clip.unit);
  for (let b = 0; b < boneCount; b++) {
    out.rotations.set(
      clip.rotations.subarray((b * clip.sampleCount + s) * 4, (b * clip.sampleCount + s + 1) * 4),
      b * 4,
    );
    out.translations.set(
      clip.translations.subarray((b * clip.sampleCount + s) * 3, (b * clip.sampleCount + s + 1) * 3),
      b * 3,
    );
    out.scales.set(clip.scales.subarray((b * clip.sampleCount + s) * 3, (b * clip.sampleCount + s + 1) * 3), b * 3);
  }
  return out;
}

describe('percentile', () => {
  it('is the value sorting puts at the nearest rank, with ties, zeros and NaN', () => {
    const random = mulberry32(11);
    for (let i = 0; i < 300; i++) {
      const n = 1 + Math.floor(random() * 400);
      // Few distinct values in some arrays: runs of ties around the rank.
      const distinct = i % 3 === 0 ? 3 : 1e9;
      const values = Float64Array.from({ length: n }, () => Math.floor(random() * distinct) / 7);
      if (i % 10 === 0) values[Math.floor(random() * n)] = Number.NaN;
      for (const q of [0, 0.5, 0.9, 0.99, 1]) {
        const sorted = Float64Array.from(values).sort();
        const rank = Math.min(n - 1, Math.max(0, Math.ceil(q * n) - 1));
        expect(percentile(values, q)).toBe(sorted[rank]);
      }
    }
    expect(percentile(new Float64Array(0), 0.99)).toBe(0);
  });
});
