import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { describe, expect, it } from 'vitest';

import {
  clipToPoseDump,
  PoseDumpError,
  readPoseDump,
  writePoseDump,
  type PoseDump,
} from '../../src/readers/pose-dump.js';
import { createRawClip } from '../../src/clip/raw-clip.js';
import { createSkeleton, POSE_STRIDE, setIdentity } from '../../src/clip/skeleton.js';
import { readBvh } from '../../src/readers/bvh.js';
import { thrownBy } from '../utils/errors.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const fixture = 'dataset-1_dash_normal_001.bvh';
const source = readBvh(readFileSync(path.join(repoRoot, 'fixtures', fixture), 'utf8'), fixture);

/** A small valid dump (2 bones, 2 samples) to break one field at a time. */
function smallDump(): PoseDump {
  const pose = new Float32Array(2 * POSE_STRIDE);
  setIdentity(pose, 0);
  setIdentity(pose, 1);
  const skeleton = createSkeleton(['a', 'b'], [-1, 0], pose, 'cm');
  const clip = createRawClip('small', skeleton, 30, 2, 'cm');
  clip.translations[3] = 5; // bone 0, sample 1, x
  return clipToPoseDump(clip);
}

function rejectionOf(text: string): PoseDumpError {
  const error = thrownBy(() => readPoseDump(text, 'dump.json'), PoseDumpError);
  expect(error.file).toBe('dump.json');
  expect(error.code).toBe('BAD_POSE_DUMP');
  return error;
}

describe('pose dump', () => {
  it('round-trips a fixture clip through write and read exactly', () => {
    const back = readPoseDump(writePoseDump(source), 'dash.json');
    expect(back.skeleton.boneNames).toEqual(source.skeleton.boneNames);
    expect(back.skeleton.parents).toEqual(source.skeleton.parents);
    expect(back.sampleRate).toBe(source.sampleRate);
    expect(back.sampleCount).toBe(source.sampleCount);
    expect(back.unit).toBe('cm');
    // float32 → JSON double → float32 is lossless.
    expect(back.rotations).toEqual(source.rotations);
    expect(back.translations).toEqual(source.translations);
    expect(back.scales).toEqual(source.scales);
  });

  it('lays samples out sample-major, then bone', () => {
    const dump = clipToPoseDump(source);
    const n = source.sampleCount;
    const boneCount = dump.bones.length;
    const s = 17,
      b = 5;
    for (let c = 0; c < 4; c++)
      expect(dump.rotations[(s * boneCount + b) * 4 + c]).toBe(source.rotations[(b * n + s) * 4 + c]);
    for (let c = 0; c < 3; c++)
      expect(dump.translations[(s * boneCount + b) * 3 + c]).toBe(source.translations[(b * n + s) * 3 + c]);
    expect(dump.numSamples).toBe(n);
  });

  it('takes the hierarchy from a reference when the dump has no parents', () => {
    const dump = clipToPoseDump(source);
    delete dump.parents;
    delete dump.unit;
    const back = readPoseDump(JSON.stringify(dump), 'x.json', source.skeleton, 'm');
    expect(back.skeleton.parents).toEqual(source.skeleton.parents);
    expect(back.unit).toBe('m');
    // Without parents or a reference every bone is a root.
    const flat = readPoseDump(JSON.stringify(dump), 'x.json');
    expect(Array.from(flat.skeleton.parents).every((p) => p === -1)).toBe(true);
  });

  it('checks the reference bone count', () => {
    const dump = smallDump();
    delete dump.parents;
    const error = thrownBy(() => readPoseDump(JSON.stringify(dump), 'dump.json', source.skeleton), PoseDumpError);
    expect(error.message).toBe('dump.json: 2 bones, but the reference has 22');
  });

  it('reads the small dump it breaks below', () => {
    const clip = readPoseDump(JSON.stringify(smallDump()), 'dump.json');
    expect(clip.translations[3]).toBe(5);
  });

  it.each<[string, (d: Record<string, unknown>) => void, string | RegExp]>([
    ['bones missing', (d) => delete d.bones, '"bones" must be a non-empty array of names'],
    ['bones not strings', (d) => (d.bones = [1, 2]), '"bones" must be a non-empty array of names'],
    ['sampleRate a string', (d) => (d.sampleRate = '30'), '"sampleRate" must be a number'],
    ['sampleRate negative', (d) => (d.sampleRate = -30), '"sampleRate" must be > 0, got -30'],
    ['numSamples fractional', (d) => (d.numSamples = 1.5), '"numSamples" must be a whole number >= 1, got 1.5'],
    ['numSamples zero', (d) => (d.numSamples = 0), '"numSamples" must be a whole number >= 1, got 0'],
    ['unit unknown', (d) => (d.unit = 'parsec'), '"unit" is not a length unit: parsec'],
    ['parents too short', (d) => (d.parents = [-1]), '"parents" must hold 2 whole numbers'],
    ['parents out of order', (d) => (d.parents = [1, -1]), /bone 0 \(a\) has parent 1/],
    [
      'rotations short',
      (d) => (d.rotations = (d.rotations as number[]).slice(1)),
      '"rotations" holds 15 numbers, expected 16 (2 samples × 2 bones × 4)',
    ],
    [
      'translations with a string',
      (d) => ((d.translations as unknown[])[4] = 'x'),
      '"translations"[4] is not a finite number',
    ],
    ['scales with null', (d) => ((d.scales as unknown[])[0] = null), '"scales"[0] is not a finite number'],
    ['scales not an array', (d) => (d.scales = {}), '"scales" must be an array'],
  ])('rejects a dump with %s, naming the field', (_what, breakIt, message) => {
    const dump = smallDump() as unknown as Record<string, unknown>;
    breakIt(dump);
    const error = rejectionOf(JSON.stringify(dump));
    if (typeof message === 'string') expect(error.problem).toBe(message);
    else expect(error.problem).toMatch(message);
  });

  it('(regression R4) rejects zero-length quaternions as a PoseDumpError naming the field, sample and bone', () => {
    const dump = smallDump();
    // Sample 1, bone 0: rotations[(1 * 2 + 0) * 4 …].
    dump.rotations.splice(8, 4, 0, 0, 0, 0);
    expect(rejectionOf(JSON.stringify(dump)).problem).toBe(
      '"rotations"[8..11] is a zero-length quaternion (sample 1, bone 0 "a")',
    );
    // Tiny but not zero in float64: zero as the float32 the clip holds.
    dump.rotations.splice(8, 4, 1e-46, 0, 0, 0);
    expect(rejectionOf(JSON.stringify(dump)).problem).toMatch(/^"rotations"\[8\.\.11\] is a zero-length quaternion/);
  });

  it('(regression R4) rejects values finite in JSON but not as float32, naming the field, sample and bone', () => {
    const dump = smallDump();
    dump.translations[10] = 1e39; // sample 1, bone 1, y
    expect(rejectionOf(JSON.stringify(dump)).problem).toBe(
      '"translations"[10] is 1e+39, beyond ±1e+30 (sample 1, bone 1 "b")',
    );
  });

  it('(regression R5) rejects duplicate bone names, naming the duplicate', () => {
    const dump = smallDump();
    dump.bones = ['a', 'a'];
    expect(rejectionOf(JSON.stringify(dump)).problem).toBe(
      '"bones" names "a" twice (bones 0 and 1); bone names must be unique',
    );
  });

  it("(regression R5) names the clip after the file's base name without its extension", () => {
    const text = JSON.stringify(smallDump());
    expect(readPoseDump(text, 'out/dir/walk.json').name).toBe('walk');
    expect(readPoseDump(text, 'C:\\dumps\\run.pose.json').name).toBe('run.pose');
    expect(readPoseDump(text, 'plain').name).toBe('plain');
  });

  it("(regression R5) takes a reference's hierarchy by position, not by name", () => {
    const dump = smallDump();
    delete dump.parents;
    dump.bones = ['x', 'y'];
    const pose = new Float32Array(2 * POSE_STRIDE);
    setIdentity(pose, 0);
    setIdentity(pose, 1);
    const reference = createSkeleton(['a', 'b'], [-1, 0], pose, 'cm');
    const clip = readPoseDump(JSON.stringify(dump), 'dump.json', reference);
    expect(clip.skeleton.boneNames).toEqual(['x', 'y']);
    expect(Array.from(clip.skeleton.parents)).toEqual([-1, 0]);
  });

  it('rejects text that is not a JSON object', () => {
    expect(rejectionOf('{"bones": [').problem).toMatch(/^not JSON/);
    expect(rejectionOf('[1, 2]').problem).toBe('expected a JSON object');
    expect(rejectionOf('null').problem).toBe('expected a JSON object');
  });
});
