import { describe, expect, it } from 'vitest';

import { evaluateTrack, INTERPOLATION, type KeyframeTrack, type PlayerSlerp } from '../../src/clip/keyframes.js';

/** A LINEAR rotation track of two keys about z, `degrees` apart, at 0 s and 1 s. */
function turn(degrees: number, lengths: [number, number] = [1, 1]): KeyframeTrack {
  const h = (degrees * Math.PI) / 360;
  return {
    times: [0, 1],
    values: [0, 0, 0, lengths[0], 0, 0, Math.sin(h) * lengths[1], Math.cos(h) * lengths[1]],
    width: 4,
    interpolation: INTERPOLATION.LINEAR,
    rotation: true,
  };
}

function at(track: KeyframeTrack, time: number, player?: PlayerSlerp): number[] {
  const out = new Float64Array(4);
  evaluateTrack(track, time, out, 0, 0, player);
  return Array.from(out);
}

/** Angle about z of a quaternion (0, 0, z, w), whatever its length. */
const angleOf = (q: number[]): number => 2 * Math.atan2(q[2], q[3]);

describe('evaluateTrack as players slerp', () => {
  it('three.js blends keys under about 3.6° apart with a normalised lerp, Babylon.js and the exact reference slerp', () => {
    const track = turn(3);
    const slerp = angleOf(at(track, 0.25));
    expect(slerp).toBeCloseTo((0.25 * 3 * Math.PI) / 180, 14);
    expect(angleOf(at(track, 0.25, 'babylon'))).toBeCloseTo(slerp, 14);
    const three = at(track, 0.25, 'three');
    expect(Math.hypot(...three)).toBeCloseTo(1, 15);
    // A normalised lerp lags the slerp in the first half: atan(α sin θ / (1 − α + α cos θ)), 5.6e-7 rad here.
    const h = (3 * Math.PI) / 360;
    expect(angleOf(three)).toBeCloseTo(2 * Math.atan2(0.25 * Math.sin(h), 0.75 + 0.25 * Math.cos(h)), 14);
    expect(slerp - angleOf(three)).toBeGreaterThan(5e-7);
  });

  it('above 3.6° both players slerp', () => {
    const track = turn(90);
    for (const player of ['three', 'babylon'] as const)
      expect(angleOf(at(track, 0.3, player))).toBeCloseTo((0.3 * Math.PI) / 2, 14);
  });

  it('keeps the keys as stored, off unit length, where the exact reference normalises them', () => {
    const track = turn(40, [1 + 1e-5, 1 - 1e-5]);
    expect(at(track, 0, 'three')).toEqual([0, 0, 0, 1 + 1e-5]);
    expect(Math.hypot(...at(track, 1, 'babylon'))).toBeCloseTo(1 - 1e-5, 14);
    expect(at(track, 0)).toEqual([0, 0, 0, 1]);
    // Babylon's slerp leaves the length between the keys too.
    expect(Math.hypot(...at(track, 0.25, 'babylon')) - 1).toBeGreaterThan(4e-6);
  });
});
