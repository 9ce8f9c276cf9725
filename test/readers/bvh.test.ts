import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { validateRawClip, type RawClip } from '../../src/clip/raw-clip.js';
import { POSE_STRIDE } from '../../src/clip/skeleton.js';
import { BVH_RATE_SNAP_TOLERANCE, readBvh, readBvhBytes } from '../../src/readers/bvh.js';
import { READ_LIMITS } from '../../src/readers/options.js';
import { ParseError, type ParseErrorCode } from '../../src/readers/errors.js';
import { thrownBy } from '../utils/errors.js';
import { sharedData } from '../utils/shared-data.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const fixturesDir = path.join(repoRoot, 'fixtures');
const corpusDir = sharedData('bandai-ds1');

// ---------------------------------------------------------------------------------------
// Independent reference math: rotation matrices composed in listed order, then converted to
// a quaternion (Shepperd's method). The reader multiplies quaternions instead, so agreement
// checks the composition order and the angle convention.

type Mat3 = number[]; // row-major 3×3

function axisMatrix(axis: 'X' | 'Y' | 'Z', degrees: number): Mat3 {
  const a = (degrees * Math.PI) / 180;
  const c = Math.cos(a),
    s = Math.sin(a);
  if (axis === 'X') return [1, 0, 0, 0, c, -s, 0, s, c];
  if (axis === 'Y') return [c, 0, s, 0, 1, 0, -s, 0, c];
  return [c, -s, 0, s, c, 0, 0, 0, 1];
}

function mul(a: Mat3, b: Mat3): Mat3 {
  const out = new Array<number>(9).fill(0);
  for (let r = 0; r < 3; r++)
    for (let c = 0; c < 3; c++) for (let k = 0; k < 3; k++) out[r * 3 + c] += a[r * 3 + k] * b[k * 3 + c];
  return out;
}

function matrixToQuat(m: Mat3): [number, number, number, number] {
  const [m00, m01, m02, m10, m11, m12, m20, m21, m22] = m;
  const trace = m00 + m11 + m22;
  if (trace > 0) {
    const s = Math.sqrt(trace + 1) * 2;
    return [(m21 - m12) / s, (m02 - m20) / s, (m10 - m01) / s, s / 4];
  }
  if (m00 > m11 && m00 > m22) {
    const s = Math.sqrt(1 + m00 - m11 - m22) * 2;
    return [s / 4, (m01 + m10) / s, (m02 + m20) / s, (m21 - m12) / s];
  }
  if (m11 > m22) {
    const s = Math.sqrt(1 + m11 - m00 - m22) * 2;
    return [(m01 + m10) / s, s / 4, (m12 + m21) / s, (m02 - m20) / s];
  }
  const s = Math.sqrt(1 + m22 - m00 - m11) * 2;
  return [(m02 + m20) / s, (m12 + m21) / s, s / 4, (m10 - m01) / s];
}

/** Quaternion of Euler angles (degrees) composed as R = R(axes[0]) · R(axes[1]) · … */
function expectedQuat(axes: string, degrees: number[]): [number, number, number, number] {
  let m: Mat3 = [1, 0, 0, 0, 1, 0, 0, 0, 1];
  for (let i = 0; i < axes.length; i++) m = mul(m, axisMatrix(axes[i] as 'X' | 'Y' | 'Z', degrees[i]));
  return matrixToQuat(m);
}

function rotationOf(clip: RawClip, bone: number, sample: number): number[] {
  const i = (bone * clip.sampleCount + sample) * 4;
  return Array.from(clip.rotations.subarray(i, i + 4));
}

function translationOf(clip: RawClip, bone: number, sample: number): number[] {
  const i = (bone * clip.sampleCount + sample) * 3;
  return Array.from(clip.translations.subarray(i, i + 3));
}

/** Asserts `actual` is the rotation `expected` (q and -q are the same rotation). */
function expectSameRotation(actual: number[], expected: number[], digits = 6): void {
  const dot = actual.reduce((s, v, i) => s + v * expected[i], 0);
  const sign = dot < 0 ? -1 : 1;
  for (let c = 0; c < 4; c++) expect(actual[c]).toBeCloseTo(sign * expected[c], digits);
}

// ---------------------------------------------------------------------------------------
// A slow, obvious reference reader for the fixtures: line based, Number() per token.

interface ReferenceClip {
  names: string[];
  parents: number[];
  channels: { bone: number; name: string }[];
  offsets: number[][];
  frames: number[][];
  frameTime: number;
}

function referenceRead(text: string): ReferenceClip {
  const lines = text.split(/\r?\n/);
  const names: string[] = [],
    parents: number[] = [],
    offsets: number[][] = [];
  const channels: { bone: number; name: string }[] = [];
  const stack: number[] = [];
  let i = 0,
    pendingBone = -1,
    inEndSite = 0;
  for (; i < lines.length; i++) {
    const t = lines[i].trim();
    if (t === 'MOTION') break;
    const words = t.split(/\s+/);
    if (words[0] === 'ROOT' || words[0] === 'JOINT') {
      names.push(words.slice(1).join(' '));
      parents.push(stack.length > 0 ? stack[stack.length - 1] : -1);
      offsets.push([0, 0, 0]);
      pendingBone = names.length - 1;
    } else if (words[0] === 'End') {
      pendingBone = -2;
    } else if (words[0] === '{') {
      if (pendingBone === -2) inEndSite++;
      else stack.push(pendingBone);
    } else if (words[0] === '}') {
      if (inEndSite > 0) inEndSite--;
      else stack.pop();
    } else if (words[0] === 'OFFSET' && inEndSite === 0) {
      offsets[stack[stack.length - 1]] = words.slice(1).map(Number);
    } else if (words[0] === 'CHANNELS') {
      for (const name of words.slice(2)) channels.push({ bone: stack[stack.length - 1], name });
    }
  }
  const frameTime = Number(lines[i + 2].split(':')[1]);
  const frames = lines
    .slice(i + 3)
    .filter((l) => l.trim() !== '')
    .map((l) => l.trim().split(/\s+/).map(Number));
  return { names, parents, channels, offsets, frames, frameTime };
}

function framesDeclared(text: string): number {
  return Number(/^Frames:\s*(\d+)/m.exec(text)![1]);
}

/** Runs `fn`, expects a ParseError and checks its file, line, code and message fragment. */
function expectParseError(
  fn: () => unknown,
  file: string,
  line: number,
  fragment: string | RegExp,
  code?: ParseErrorCode,
): ParseError {
  const error = thrownBy(fn, ParseError);
  expect(error.file).toBe(file);
  expect(error.line).toBe(line);
  if (typeof fragment === 'string') expect(error.message).toContain(fragment);
  else expect(error.message).toMatch(fragment);
  expect(error.message.startsWith(`${file}:${line}: `)).toBe(true);
  if (code) expect(error.code).toBe(code);
  return error;
}

/** 1-based number of the first line containing `marker`. */
function lineOf(text: string, marker: string): number {
  const index = text.indexOf(marker);
  if (index < 0) throw new Error(`marker "${marker}" not in text`);
  return text.slice(0, index).split('\n').length;
}

function lastLine(text: string): number {
  return text.replace(/\n$/, '').split('\n').length;
}

// A small valid file: a 6-channel root, a 3-channel (rotation only) joint and an End Site.
const TINY = `HIERARCHY
ROOT Hips
{
  OFFSET 0 0 0
  CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation
  JOINT Spine
  {
    OFFSET 0 10 0
    CHANNELS 3 Zrotation Xrotation Yrotation
    End Site
    {
      OFFSET 0 5 0
    }
  }
}
MOTION
Frames: 2
Frame Time: 0.04
1 2 3 10 20 30 0 0 0
4 5 6 0 0 90 1 2 3
`;

// ---------------------------------------------------------------------------------------

describe('readBvh: fixtures', () => {
  const fixtureFiles = readdirSync(fixturesDir).filter((n) => n.endsWith('.bvh'));

  it('finds the fixtures', () => {
    expect(fixtureFiles.length).toBe(8);
  });

  it.each(fixtureFiles)('%s: 22 bones, 30 Hz, cm, every frame, finite values', (name) => {
    const text = readFileSync(path.join(fixturesDir, name), 'utf8');
    const clip = readBvh(text, name);
    expect(clip.name).toBe(name.replace(/\.bvh$/, ''));
    expect(clip.skeleton.boneNames).toHaveLength(22);
    expect(clip.skeleton.boneNames[0]).toBe('joint_Root');
    expect(clip.sampleRate).toBe(30);
    expect(clip.unit).toBe('cm');
    expect(clip.sampleCount).toBe(framesDeclared(text));
    expect(() => validateRawClip(clip)).not.toThrow();
    // Shell distances default to 3 cm.
    expect(Array.from(clip.skeleton.shellDistances)).toEqual(new Array(22).fill(3));
  });

  it.each(fixtureFiles)('%s agrees with a slow reference reader', (name) => {
    const text = readFileSync(path.join(fixturesDir, name), 'utf8');
    const clip = readBvh(text, name);
    const ref = referenceRead(text);
    expect(clip.skeleton.boneNames).toEqual(ref.names);
    expect(Array.from(clip.skeleton.parents)).toEqual(ref.parents);
    expect(clip.sampleRate).toBe(Math.round(1 / ref.frameTime));
    expect(ref.frames).toHaveLength(clip.sampleCount);
    for (let b = 0; b < ref.names.length; b++) {
      const d = clip.skeleton.defaultPose.subarray(b * POSE_STRIDE, (b + 1) * POSE_STRIDE);
      expect(Array.from(d)).toEqual([0, 0, 0, 1, ...ref.offsets[b].map(Math.fround), 1, 1, 1]);
    }
    // Collect expectations in arrays and compare once: per-value expect() calls are slow.
    const expectedTranslations = new Float32Array(clip.translations.length);
    let worstRotation = 0;
    for (let s = 0; s < clip.sampleCount; s++) {
      const frame = ref.frames[s];
      expect(frame).toHaveLength(ref.channels.length);
      for (let b = 0; b < ref.names.length; b++) {
        const translation = [...ref.offsets[b]];
        let axes = '';
        const angles: number[] = [];
        ref.channels.forEach((ch, k) => {
          if (ch.bone !== b) return;
          if (ch.name.endsWith('position')) translation['XYZ'.indexOf(ch.name[0])] = frame[k];
          else {
            axes += ch.name[0];
            angles.push(frame[k]);
          }
        });
        expectedTranslations.set(translation, (b * clip.sampleCount + s) * 3);
        const q = expectedQuat(axes, angles);
        const actual = rotationOf(clip, b, s);
        const sign = actual.reduce((sum, v, i) => sum + v * q[i], 0) < 0 ? -1 : 1;
        for (let c = 0; c < 4; c++) worstRotation = Math.max(worstRotation, Math.abs(actual[c] - sign * q[c]));
      }
    }
    // Translations go through the same decimal → float64 → float32 path: exact.
    expect(clip.translations).toEqual(expectedTranslations);
    // Rotations: float32 storage of a float64 result, about 6e-8 per component.
    expect(worstRotation).toBeLessThan(3e-7);
  });
});

describe('readBvh: corpus', () => {
  // The full corpus when it is present (it is in CI), otherwise the fixtures: never skipped.
  const useCorpus = corpusDir !== undefined;
  const dir = corpusDir ?? fixturesDir;
  const expectedCount = useCorpus ? 174 : 8;

  it(`parses every clip of ${useCorpus ? 'the bandai-ds1 corpus' : 'fixtures/'}`, { timeout: 120_000 }, () => {
    const names = readdirSync(dir)
      .filter((n) => n.endsWith('.bvh'))
      .sort();
    expect(names).toHaveLength(expectedCount);
    let totalFrames = 0;
    for (const name of names) {
      const text = readFileSync(path.join(dir, name), 'utf8');
      const clip = readBvh(text, name);
      expect(clip.skeleton.boneNames).toHaveLength(22);
      expect(clip.sampleRate).toBe(30);
      expect(clip.unit).toBe('cm');
      expect(clip.sampleCount).toBe(framesDeclared(text));
      validateRawClip(clip);
      totalFrames += clip.sampleCount;
    }
    // The corpus README: 31,914 frames in all.
    if (useCorpus) expect(totalFrames).toBe(31914);
  });
});

describe('readBvh: channel semantics', () => {
  const ORDERS = `HIERARCHY
ROOT A
{
  OFFSET 1 2 3
  CHANNELS 6 Xposition Yposition Zposition Xrotation Yrotation Zrotation
  JOINT B
  {
    OFFSET 4 5 6
    CHANNELS 6 Zrotation Xrotation Yrotation Xposition Yposition Zposition
    JOINT C
    {
      OFFSET 7 8 9
      CHANNELS 3 Zrotation Xrotation Yrotation
      End Site
      {
        OFFSET 0 1 0
      }
    }
    JOINT D
    {
      OFFSET 1.5 2.5 3.5
      CHANNELS 2 Yposition Xrotation
    }
  }
}
MOTION
Frames: 2
Frame Time: 0.0333333
10 20 30 30 45 60 30 45 60 -1 -2 -3 0 0 0 -7 15
0 0 0 90 0 0 0 0 0 0 0 0 0 0 0 0 0
`;

  const clip = readBvh(ORDERS, 'orders.bvh');

  it('makes ROOT and each JOINT a bone, parents first, and skips End Site', () => {
    expect(clip.skeleton.boneNames).toEqual(['A', 'B', 'C', 'D']);
    expect(Array.from(clip.skeleton.parents)).toEqual([-1, 0, 1, 1]);
    expect(clip.sampleCount).toBe(2);
    expect(clip.sampleRate).toBe(30);
    expect(clip.name).toBe('orders');
  });

  it('composes rotations in the listed order as intrinsic rotations', () => {
    // A lists X Y Z with (30, 45, 60): R = Rx(30)·Ry(45)·Rz(60).
    const a = rotationOf(clip, 0, 0);
    expectSameRotation(a, expectedQuat('XYZ', [30, 45, 60]));
    // B lists Z X Y with the same numbers in channel order: R = Rz(30)·Rx(45)·Ry(60).
    const b = rotationOf(clip, 1, 0);
    expectSameRotation(b, expectedQuat('ZXY', [30, 45, 60]));
    // The two orders really differ, so the check above can tell them apart.
    const dot = Math.abs(a.reduce((s, v, i) => s + v * b[i], 0));
    expect(dot).toBeLessThan(0.99);
    // A single 90° X rotation: (sin 45°, 0, 0, cos 45°).
    expectSameRotation(rotationOf(clip, 0, 1), [Math.SQRT1_2, 0, 0, Math.SQRT1_2]);
    // All-zero angles give the identity.
    expect(rotationOf(clip, 1, 1)).toEqual([0, 0, 0, 1]);
  });

  it('lets position channels replace the OFFSET, in any channel position', () => {
    expect(translationOf(clip, 0, 0)).toEqual([10, 20, 30]);
    expect(translationOf(clip, 1, 0)).toEqual([-1, -2, -3]);
    expect(translationOf(clip, 1, 1)).toEqual([0, 0, 0]);
  });

  it('keeps the OFFSET for a rotation-only joint and for components without a channel', () => {
    expect(translationOf(clip, 2, 0)).toEqual([7, 8, 9]);
    expect(translationOf(clip, 2, 1)).toEqual([7, 8, 9]);
    // D has only Yposition: x and z stay 1.5 and 3.5.
    expect(translationOf(clip, 3, 0)).toEqual([1.5, -7, 3.5]);
    expectSameRotation(rotationOf(clip, 3, 0), expectedQuat('X', [15]));
  });

  it('sets the default pose from OFFSET with identity rotation and unit scale', () => {
    expect(Array.from(clip.skeleton.defaultPose.subarray(POSE_STRIDE, 2 * POSE_STRIDE))).toEqual([
      0, 0, 0, 1, 4, 5, 6, 1, 1, 1,
    ]);
    expect(Array.from(clip.scales).every((s) => s === 1)).toBe(true);
  });

  it('stores normalised quaternions for arbitrary angles in any order', () => {
    fc.assert(
      fc.property(
        fc.constantFrom('X', 'Y', 'Z', 'XY', 'ZXY', 'XYZ', 'YZX', 'ZYX', 'XZY', 'YXZ', 'ZXZ'),
        fc.array(fc.double({ min: -720, max: 720, noNaN: true }), { minLength: 3, maxLength: 3 }),
        (axes, angles) => {
          const channels = [...axes].map((a) => `${a}rotation`).join(' ');
          const values = angles
            .slice(0, axes.length)
            .map((v) => String(v))
            .join(' ');
          const text = `HIERARCHY\nROOT r\n{\n OFFSET 0 0 0\n CHANNELS ${axes.length} ${channels}\n}\nMOTION\nFrames: 1\nFrame Time: 0.1\n${values}\n`;
          const q = rotationOf(readBvh(text, 'p.bvh'), 0, 0);
          expect(Math.hypot(...q)).toBeCloseTo(1, 6);
          expectSameRotation(q, expectedQuat(axes, angles.slice(0, axes.length).map(Number)));
        },
      ),
      { seed: 7, numRuns: 300 },
    );
  });

  it('reads decimal numbers exactly as Number() does (then float32)', () => {
    const formats = (v: number): string[] => {
      const out = [String(v), v.toExponential(), v.toExponential(3), v.toPrecision(9)];
      if (Math.abs(v) < 1e21) out.push(v.toFixed(4), v.toFixed(0));
      return out;
    };
    fc.assert(
      fc.property(fc.double({ min: -3e38, max: 3e38, noNaN: true }), (v) => {
        const strings = formats(v);
        const text = `HIERARCHY\nROOT r\n{\n OFFSET 0 0 0\n CHANNELS 1 Xposition\n}\nMOTION\nFrames: ${strings.length}\nFrame Time: 0.1\n${strings.join('\n')}\n`;
        const clip = readBvh(text, 'n.bvh');
        strings.forEach((str, s) => expect(clip.translations[s * 3]).toBe(Math.fround(Number(str))));
      }),
      { seed: 11, numRuns: 500 },
    );
    // Forms the property may not generate: leading '+', '.5', '5.', long mantissas, tiny values.
    const edge = [
      '+1.5',
      '.5',
      '-.25',
      '5.',
      '-0',
      '12345678901234567890.5',
      '0.000000000000000000000000123',
      '1E3',
      '2e+2',
      '7e-1',
    ];
    const text = `HIERARCHY\nROOT r\n{\n OFFSET 0 0 0\n CHANNELS 1 Yposition\n}\nMOTION\nFrames: ${edge.length}\nFrame Time: 0.1\n${edge.join('\n')}\n`;
    const clip = readBvh(text, 'e.bvh');
    edge.forEach((str, s) => expect(clip.translations[s * 3 + 1]).toBe(Math.fround(Number(str))));
  });

  it('reads a number to the very double Number() gives, 16-digit mantissas included (seen through the frame rate)', () => {
    // The frame rate is 1 / Frame Time in float64 (off whole rates), so a value off by one
    // ulp shows. 9007199254740993 = 2^53 + 1 rounds to 2^53 while it is read digit by digit.
    const rateOf = (frameTime: string): number =>
      readBvh(
        `HIERARCHY\nROOT r\n{\n OFFSET 0 0 0\n CHANNELS 1 Xposition\n}\nMOTION\nFrames: 1\nFrame Time: ${frameTime}\n0\n`,
        't.bvh',
      ).sampleRate;
    const offWholeRate = (text: string): boolean => {
      const rate = 1 / Number(text);
      return Math.abs(rate - Math.round(rate)) > BVH_RATE_SNAP_TOLERANCE * rate;
    };
    for (const text of ['0.9007199254740993', '0.09007199254740993', '0.07', '3e-1', '7.5E-2']) {
      expect(offWholeRate(text)).toBe(true);
      expect(rateOf(text)).toBe(1 / Number(text));
    }
    fc.assert(
      fc.property(fc.double({ min: 0.0011, max: 0.9, noNaN: true }), (t) => {
        for (const text of [String(t), t.toExponential(), t.toPrecision(16), t.toFixed(17)])
          if (offWholeRate(text)) expect(rateOf(text)).toBe(1 / Number(text));
      }),
      { seed: 13, numRuns: 500 },
    );
  });

  it('allows several ROOTs', () => {
    const text = `HIERARCHY
ROOT a
{
  OFFSET 0 0 0
  CHANNELS 1 Zrotation
  JOINT a1
  {
    OFFSET 1 0 0
  }
}
ROOT b
{
  OFFSET 5 0 0
  CHANNELS 1 Xposition
}
MOTION
Frames: 1
Frame Time: 0.5
90 7
`;
    const c = readBvh(text, 'two.bvh');
    expect(c.skeleton.boneNames).toEqual(['a', 'a1', 'b']);
    expect(Array.from(c.skeleton.parents)).toEqual([-1, 0, -1]);
    expect(c.sampleRate).toBe(2);
    expectSameRotation(rotationOf(c, 0, 0), [0, 0, Math.SQRT1_2, Math.SQRT1_2]);
    expect(translationOf(c, 2, 0)).toEqual([7, 0, 0]);
  });

  it('snaps a sample rate near a whole number and keeps others', () => {
    const rateOf = (frameTime: string) =>
      readBvh(TINY.replace('Frame Time: 0.04', `Frame Time: ${frameTime}`), 'r.bvh').sampleRate;
    expect(rateOf('0.0333333')).toBe(30);
    expect(rateOf('0.0416667')).toBe(24);
    expect(rateOf('0.00833333')).toBe(120);
    expect(rateOf('0.04')).toBe(25);
    expect(rateOf('0.03')).toBeCloseTo(33.3333333, 6);
    expect(rateOf('0.03')).not.toBe(33);
  });

  it('uses options.unit, default cm, for the clip and its shell distances', () => {
    expect(readBvh(TINY, 'u.bvh').unit).toBe('cm');
    const m = readBvh(TINY, 'u.bvh', { unit: 'm' });
    expect(m.unit).toBe('m');
    expect(m.skeleton.shellDistances[0]).toBeCloseTo(0.03, 7);
  });

  it('names the clip after the base name of the file', () => {
    expect(readBvh(TINY, 'some/dir/walk.fast.bvh').name).toBe('walk.fast');
    expect(readBvh(TINY, 'C:\\clips\\Run.BVH').name).toBe('Run');
  });

  it('reads CRLF files, tabs, glued labels, braces on the name line and a BOM', () => {
    const variant =
      '\uFEFF' +
      TINY.replace('ROOT Hips\n{', 'ROOT Hips {')
        .replace('Frames: 2', 'Frames:2')
        .replace(/ /g, '\t')
        .replace(/\n/g, '\r\n');
    const a = readBvh(TINY, 't.bvh');
    const b = readBvh(variant, 't.bvh');
    expect(b.skeleton.boneNames).toEqual(['Hips', 'Spine']);
    expect(b.rotations).toEqual(a.rotations);
    expect(b.translations).toEqual(a.translations);
    // Lines still count right with CRLF.
    const bad = variant.replace('4\t5\t6', '4\tx\t6');
    expectParseError(() => readBvh(bad, 't.bvh'), 't.bvh', 19, 'frame 2: value 2 "x" is not a number');
  });

  it('accepts joint names with spaces', () => {
    const c = readBvh(TINY.replace('JOINT Spine', 'JOINT Lower Spine'), 's.bvh');
    expect(c.skeleton.boneNames).toEqual(['Hips', 'Lower Spine']);
  });

  it('parses a hierarchy nested 20,000 deep without recursion', () => {
    const depth = 20000;
    const parts = ['HIERARCHY\nROOT j0\n{\n OFFSET 0 0 0\n CHANNELS 1 Zrotation\n'];
    for (let i = 1; i < depth; i++) parts.push(`JOINT j${i}\n{\nOFFSET 0 1 0\n`);
    parts.push('}\n'.repeat(depth), 'MOTION\nFrames: 1\nFrame Time: 0.1\n45\n');
    const c = readBvh(parts.join(''), 'deep.bvh');
    expect(c.skeleton.boneNames).toHaveLength(depth);
    expect(c.skeleton.parents[depth - 1]).toBe(depth - 2);
    expect(translationOf(c, depth - 1, 0)).toEqual([0, 1, 0]);
  });
});

describe('readBvh: errors', () => {
  const F = 'bad.bvh';
  const read = (text: string) => () => readBvh(text, F);

  it('rejects a file that ends inside HIERARCHY', () => {
    const text = TINY.slice(0, TINY.indexOf('    CHANNELS 3'));
    expectParseError(
      read(text),
      F,
      lastLine(text),
      'file ends inside HIERARCHY: the "{" of joint "Spine" at line 7 is not closed',
      'TRUNCATED',
    );
  });

  it('rejects a file that ends before all frames', () => {
    const text = TINY.replace('Frames: 2', 'Frames: 3');
    expectParseError(read(text), F, lastLine(text), 'file ends after 2 of 3 frames', 'TRUNCATED');
  });

  it('rejects a file that ends inside the last frame', () => {
    const text = TINY.slice(0, TINY.indexOf(' 1 2 3\n'));
    expectParseError(
      read(text),
      F,
      lastLine(text),
      'frame 2: expected 9 channel values, got 6 (file ends inside the frame)',
      'TRUNCATED',
    );
  });

  it('fails fast on Frames: 2000000000 with two frame lines', () => {
    const text = TINY.replace('Frames: 2', 'Frames: 2000000000');
    // A RangeError from a huge allocation would fail this: the reader must check first.
    expectParseError(read(text), F, lastLine(text), 'file ends after 2 of 2000000000 frames', 'TRUNCATED');
  });

  it('rejects a clip over the size limit before allocating', () => {
    const boneCount = 3000;
    const frameCount = Math.ceil(READ_LIMITS.maxBoneSamples / boneCount) + 1;
    const joints = Array.from({ length: boneCount - 1 }, (_, i) => `JOINT j${i}\n{\nOFFSET 0 0 0\n}\n`).join('');
    const text = `HIERARCHY\nROOT r\n{\nOFFSET 0 0 0\nCHANNELS 1 Xrotation\n${joints}}\nMOTION\nFrames: ${frameCount}\nFrame Time: 0.1\n${'0\n'.repeat(frameCount)}`;
    expectParseError(read(text), F, lineOf(text, 'Frames:'), "over the reader's limit", 'LIMIT');
  });

  it('rejects an unclosed "{"', () => {
    const text = TINY.replace('    }\n  }\n}\n', '    }\n  }\n');
    expectParseError(
      read(text),
      F,
      lineOf(text, 'MOTION'),
      'MOTION inside an open block: the "{" of joint "Hips" at line 3 is not closed',
    );
  });

  it('rejects an unexpected "}"', () => {
    const text = TINY.replace('}\nMOTION', '}\n}\nMOTION');
    expectParseError(read(text), F, lineOf(text, 'MOTION') - 1, 'unexpected "}"');
  });

  it('rejects an unexpected "{"', () => {
    const text = TINY.replace('  OFFSET 0 10 0', '  {');
    expectParseError(read(text), F, 8, 'unexpected "{"');
  });

  it('rejects an unknown channel name', () => {
    const text = TINY.replace('CHANNELS 3 Zrotation Xrotation Yrotation', 'CHANNELS 3 Zrotation Xrotatoin Yrotation');
    expectParseError(read(text), F, 9, 'unknown channel name "Xrotatoin"');
  });

  it('rejects a frame with too many values', () => {
    const text = TINY.replace('4 5 6 0 0 90 1 2 3', '4 5 6 0 0 90 1 2 3 4');
    expectParseError(read(text), F, 20, 'frame 2: expected 9 channel values, got 10');
  });

  it('rejects a frame with too few values', () => {
    const text = TINY.replace('1 2 3 10 20 30 0 0 0', '1 2 3 10 20 30 0 0');
    expectParseError(read(text), F, 19, 'frame 1: expected 9 channel values, got 8', 'SYNTAX');
  });

  it('rejects more frame lines than Frames declares', () => {
    const text = TINY.replace('Frames: 2', 'Frames: 1');
    expectParseError(read(text), F, 20, 'more frame lines than Frames: 1 declares');
  });

  it.each([
    ['nan', 'is not a number'],
    ['NaN', 'is not a number'],
    ['inf', 'is not a number'],
    ['-Infinity', 'is not a number'],
    ['1.#INF', 'is not a number'],
    ['-nan(ind)', 'is not a number'],
    ['1.2.3', 'is not a number'],
    ['1e', 'is not a number'],
    ['0x10', 'is not a number'],
    ['--1', 'is not a number'],
    ['1e999', 'is not finite'],
    ['-1e400', 'is not finite'],
  ])('rejects %s in a frame', (bad, fragment) => {
    const text = TINY.replace('4 5 6 0 0 90', `4 5 6 ${bad} 0 90`);
    expectParseError(read(text), F, 20, `frame 2: value 4 "${bad}" ${fragment}`, 'BAD_VALUE');
  });

  it('rejects a translation outside float32 range', () => {
    const text = TINY.replace('4 5 6 0 0 90', '4 5e38 6 0 0 90');
    expectParseError(read(text), F, 20, 'frame 2: value 2 (5e+38) is out of float32 range', 'BAD_VALUE');
  });

  it.each(['nan', 'inf', '1e999', 'abc', '1,5'])('rejects %s in an OFFSET', (bad) => {
    const text = TINY.replace('OFFSET 0 10 0', `OFFSET 0 ${bad} 0`);
    expectParseError(read(text), F, 8, `OFFSET of joint "Spine": "${bad}" is not a finite number`, 'BAD_VALUE');
  });

  it('rejects an OFFSET with too few numbers', () => {
    const text = TINY.replace('OFFSET 0 10 0', 'OFFSET 0 10');
    expectParseError(read(text), F, 8, 'OFFSET needs 3 numbers, found 2');
  });

  it('rejects Frames: 0', () => {
    const text = TINY.replace('Frames: 2', 'Frames: 0');
    expectParseError(read(text), F, 17, 'Frames: 0: a clip needs at least one frame', 'BAD_VALUE');
  });

  it.each(['-3', '2.5', 'many'])('rejects Frames: %s', (bad) => {
    const text = TINY.replace('Frames: 2', `Frames: ${bad}`);
    expectParseError(read(text), F, 17, `Frames: "${bad}" is not a whole number`, 'BAD_VALUE');
  });

  it('rejects a missing Frame Time', () => {
    const text = TINY.replace('Frame Time: 0.04\n', '');
    expectParseError(read(text), F, 18, 'missing "Frame Time:" after Frames (found "1")');
  });

  it.each(['-0.04', '0', '-0'])('rejects Frame Time: %s', (bad) => {
    const text = TINY.replace('Frame Time: 0.04', `Frame Time: ${bad}`);
    expectParseError(read(text), F, 18, `Frame Time ${bad} must be greater than 0 seconds`, 'BAD_VALUE');
  });

  it('rejects a non-numeric Frame Time', () => {
    const text = TINY.replace('Frame Time: 0.04', 'Frame Time: soon');
    expectParseError(read(text), F, 18, 'Frame Time: "soon" is not a finite number', 'BAD_VALUE');
  });

  it('rejects a file without MOTION', () => {
    const text = TINY.slice(0, TINY.indexOf('MOTION'));
    expectParseError(read(text), F, lastLine(text), 'missing MOTION section', 'TRUNCATED');
    const other = TINY.replace('MOTION', 'MOVEMENT');
    expectParseError(read(other), F, 16, 'unexpected "MOVEMENT" in HIERARCHY');
  });

  it.each([
    ['CHANNELS 7 Xposition Yposition Zposition Zrotation Xrotation Yrotation', 'CHANNELS 7 lists 6 channel names'],
    [
      'CHANNELS 2 Xposition Yposition Zposition Zrotation Xrotation Yrotation',
      'CHANNELS 2 lists more than 2 channel names',
    ],
    ['CHANNELS six Xposition Yposition Zposition Zrotation Xrotation Yrotation', 'bad CHANNELS count "six"'],
    ['CHANNELS 12 Xposition Yposition Zposition Zrotation Xrotation Yrotation', 'bad CHANNELS count "12"'],
    ['CHANNELS -1 Xposition Yposition Zposition Zrotation Xrotation Yrotation', 'bad CHANNELS count "-1"'],
    ['CHANNELS', 'bad CHANNELS count ""'],
  ])('rejects a bad CHANNELS line: %s', (line, fragment) => {
    const text = TINY.replace('CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation', line);
    expectParseError(read(text), F, 5, fragment, 'SYNTAX');
  });

  it('rejects a position channel listed twice', () => {
    const text = TINY.replace('CHANNELS 3 Zrotation Xrotation Yrotation', 'CHANNELS 3 Xposition Xposition Yrotation');
    expectParseError(read(text), F, 9, 'channel "Xposition" listed twice');
  });

  it('rejects duplicate bone names', () => {
    const text = TINY.replace('JOINT Spine', 'JOINT Hips');
    expectParseError(read(text), F, 6, 'duplicate bone name "Hips" (first at line 2)');
  });

  it('rejects structure errors with their line', () => {
    expectParseError(read(''), F, 1, 'empty file', 'TRUNCATED');
    expectParseError(read('{"not": "bvh"}'), F, 1, 'expected HIERARCHY, found "{"');
    expectParseError(read('HIERARCHY\nJOINT x\n{\n}\n'), F, 2, 'JOINT outside any ROOT');
    expectParseError(read(TINY.replace('JOINT Spine', 'ROOT Spine')), F, 6, 'ROOT inside joint "Hips"');
    expectParseError(
      read(TINY.replace('      OFFSET 0 5 0', '      CHANNELS 1 Xrotation')),
      F,
      12,
      'CHANNELS inside an End Site',
    );
    expectParseError(read(TINY.replace('  OFFSET 0 10 0\n', '')), F, 13, 'joint "Spine" has no OFFSET');
    expectParseError(read(TINY.replace('    End Site', '    End Point')), F, 10, 'expected "End Site"');
    expectParseError(read(TINY.replace('JOINT Spine', 'JOINT')), F, 6, 'JOINT without a name');
    expectParseError(
      read(TINY.replace('ROOT Hips\n{', 'ROOT Hips\nOFFSET')),
      F,
      3,
      'expected "{" after ROOT Hips, found "OFFSET"',
    );
    expectParseError(read('HIERARCHY\nMOTION\nFrames: 1\nFrame Time: 1\n0\n'), F, 2, 'MOTION before any ROOT');
    expectParseError(
      read(TINY.replace('Frame Time: 0.04', 'Frame Time: 0.04 1 2 3')),
      F,
      18,
      'unexpected "1" after Frame Time',
    );
  });

  it('rejects a file without any channel', () => {
    const text = TINY.replace(/CHANNELS [^\n]*/g, 'CHANNELS 0');
    expectParseError(read(text), F, 16, 'no joint has CHANNELS', 'UNSUPPORTED');
  });
});

describe('readBvhBytes (what readClips reads BVH with)', () => {
  const encoder = new TextEncoder();
  const concat = (...parts: Uint8Array[]): Uint8Array => {
    const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
    let at = 0;
    for (const p of parts) {
      out.set(p, at);
      at += p.length;
    }
    return out;
  };
  /** The clip's content, or the error's code and message. */
  const outcomeOf = (read: () => RawClip): unknown => {
    try {
      const clip = read();
      return {
        name: clip.name,
        bones: clip.skeleton.boneNames,
        parents: clip.skeleton.parents,
        defaultPose: Array.from(clip.skeleton.defaultPose),
        sampleRate: clip.sampleRate,
        sampleCount: clip.sampleCount,
        rotations: Array.from(new Uint32Array(clip.rotations.buffer)),
        translations: Array.from(new Uint32Array(clip.translations.buffer)),
        scales: Array.from(clip.scales),
        channelMask: Array.from(clip.channelMask ?? []),
      };
    } catch (error) {
      if (!(error instanceof ParseError)) throw error;
      return { code: error.code, line: error.line, message: error.message };
    }
  };
  // readClips decoded the whole file (dropping a BOM) and gave the text to readBvh.
  const expectSameAsText = (bytes: Uint8Array): unknown => {
    const fromBytes = outcomeOf(() => readBvhBytes(bytes, 'b.bvh'));
    expect(fromBytes).toEqual(outcomeOf(() => readBvh(new TextDecoder().decode(bytes), 'b.bvh')));
    return fromBytes;
  };

  it('reads the clip, or fails with the error, that readBvh gives for the decoded text', () => {
    const lastFrame = '4 5 6 0 0 90 1 2 3\n';
    const texts = [
      TINY,
      TINY.slice(0, -1),
      `${TINY}\n \n`,
      TINY.replaceAll('\n', '\r\n'),
      TINY.replace('JOINT Spine', 'JOINT Time: spine'),
      TINY.replace('Frame Time: 0.04', 'Frame\nTime: 0.04'),
      TINY.replace('Frame Time: 0.04', 'Frame Time:0.04'),
      TINY.replace('JOINT Spine', 'JOINT Épine 😀'),
      TINY.replace('Frames: 2', 'Frames: 3'),
      TINY.replace('Frames: 2', 'Frames: 1'),
      TINY.replace('Frames: 2', 'Frames: 2000000000'),
      TINY.replace('Frame Time: 0.04', 'Frame Time: 0.04 1'),
      TINY.replace('Frame Time: 0.04', 'Frame Time: x'),
      TINY.replace('  OFFSET 0 10 0\n', ''),
      TINY.slice(0, TINY.indexOf('MOTION')),
      TINY.slice(0, TINY.indexOf('Frame Time')),
      TINY.slice(0, TINY.indexOf(' 1 2 3\n')),
      TINY.replace(lastFrame, '4 5 6 0 0 90 1 2'),
      TINY.replace(lastFrame, '4 5 6 0 0 90 1 2 3 4'),
      TINY.replace(lastFrame, '4 5 6 0 0 90 1 2 3e'),
      TINY.replace(lastFrame, '4 5 6 0 0 90 1 2 3\n7\n'),
      TINY.replace('1 2 3 10', '1 2 é 10'),
      TINY.replace('1 2 3 10', `1 2 ${'é😀'.repeat(100)} 10`),
      TINY.replace('1 2 3 10', '1 2 1e999 10'),
      TINY.replace('1 2 3 10', '1 2 1e39 10'),
      TINY.replace('1 2 3 10', '1 2 nan 10'),
      TINY.replace('1 2 3 10', '1 2 - 10'),
      TINY.replace('1 2 3 10', '1 2 3x 10'),
      TINY.replace('1 2 3 10', '+1 -0 .5e1 5.'),
      TINY.replace('1 2 3 10', '0.000000001234 12345678901234567890 1e-30 -0.0000000000000000000000001'),
      TINY.replace('1 2 3 10', '123456789.5 1234567.891 0.1234567891 -9.87654321e-7'),
    ];
    const outcomes = texts.map((text) => expectSameAsText(encoder.encode(text)));
    // The list holds both kinds.
    expect(outcomes.filter((o) => 'code' in (o as object)).length).toBeGreaterThan(10);
    expect(outcomes.filter((o) => 'rotations' in (o as object)).length).toBeGreaterThan(5);
  });

  it('drops a BOM as decoding did, and reads bytes that are not UTF-8 as their decoded text', () => {
    const bom = new Uint8Array([0xef, 0xbb, 0xbf]);
    const tiny = encoder.encode(TINY);
    expect(expectSameAsText(concat(bom, tiny))).toEqual(outcomeOf(() => readBvh(TINY, 'b.bvh')));
    expectSameAsText(concat(bom, bom, tiny));
    expectSameAsText(concat(bom, bom, bom, tiny));
    const at = TINY.indexOf('1 2 3 10') + 4;
    for (const bad of [[0xff], [0xe2, 0x82], [0xc3]])
      expectSameAsText(concat(tiny.subarray(0, at), new Uint8Array(bad), tiny.subarray(at)));
    expectSameAsText(concat(tiny, new Uint8Array([0xe2])));
  });

  it('agrees with readBvh on random edits of a file', () => {
    const tokens = TINY.split(/(\s+)/);
    const hostile = [
      '1e999',
      '0.000000000001',
      '12345678901',
      'é',
      '\u0000',
      'Time:',
      'Frame',
      '{',
      '}',
      '\n',
      '-',
      '.',
    ];
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.nat(), fc.constantFrom(...hostile, ...tokens), fc.boolean()), {
          minLength: 1,
          maxLength: 4,
        }),
        (edits) => {
          const out = [...tokens];
          for (const [at, token, cut] of edits) {
            if (cut) out.length = at % (out.length + 1);
            else out[at % out.length] = token;
            if (out.length === 0) break;
          }
          expectSameAsText(encoder.encode(out.join('')));
        },
      ),
      { seed: 17, numRuns: 400 },
    );
  });
});
