import { describe, expect, it } from 'vitest';

import { POSE_STRIDE } from '../../src/clip/skeleton.js';
import { measureClipError } from '../../src/metric/error-metric.js';
import { createRawClip } from '../../src/clip/raw-clip.js';
import { NetError } from '../../src/net/bit-stream.js';
import { receivedPosesToClip, sampleClipAt, simulateNetwork, tickCount } from '../../src/net/netsim.js';
import { createSnapshotSchema } from '../../src/net/schema.js';
import { fixtureNames, loadFixture } from './helpers.js';

describe('simulateNetwork', () => {
  const walk = loadFixture('dataset-1_walk_happy_002');

  it("reports the interpolated view's error at render times: small behind a playout delay, larger without one", () => {
    const delayed = simulateNetwork(walk, { hz: 60, loss: 0.05, rttMs: 100, entropy: false });
    expect(delayed.interpolatedMaxError).toBeGreaterThan(delayed.maxError); // lost ticks are bridged, not decoded
    expect(delayed.interpolatedMaxError).toBeLessThan(2); // cm: bridging a lost tick of the walk costs about 1.2 cm at a 3 cm shell
    expect(delayed.plain.extrapolatedFrames).toBeLessThan(10);
    const none = simulateNetwork(walk, { hz: 60, loss: 0.05, rttMs: 100, entropy: false, playoutDelayMs: 0 });
    expect(none.plain.extrapolatedFrames).toBeGreaterThan(100); // the newest pose is always 50 ms old
    expect(none.interpolatedMaxError).toBeGreaterThan(delayed.interpolatedMaxError);
  });

  it('keeps every received pose within 0.1 cm at 60 Hz, 5 % loss, 100 ms RTT on every fixture clip', () => {
    expect(fixtureNames().length).toBeGreaterThan(0);
    for (const name of fixtureNames()) {
      const clip = loadFixture(name);
      const r = simulateNetwork(clip, {
        hz: 60,
        loss: 0.05,
        rttMs: 100,
        error: '0.1cm',
        shell: '3cm',
        keepPoses: true,
      });
      expect(r.threshold).toBeCloseTo(0.1, 6);
      expect(r.maxError).toBeLessThanOrEqual(r.threshold);
      // Plain bodies carry the bound's codes; entropy-coded deltas are verified against the threshold instead.
      expect(r.plain.maxError).toBeLessThanOrEqual(r.errorBound);
      expect(r.entropy!.maxError).toBeLessThanOrEqual(r.threshold);
      expect(r.lost).toBeGreaterThan(0);
      expect(r.received).toBe(r.sent - r.lost);
      expect(r.plain.rejected).toBe(0);
      expect(r.entropy!.rejected).toBe(0);
      expect(r.rawBitsPerSnapshot).toBe(22 * 10 * 32);
      expect(r.deltaBitsPerSnapshot).toBeLessThan(r.absoluteBitsPerSnapshot);
      expect(r.entropyBitsPerSnapshot!).toBeLessThan(r.deltaBitsPerSnapshot);
      expect(r.plain.meanBaselineAge).toBeGreaterThanOrEqual(6);
      // Cross-check with the project's clip metric: received poses against the source at the same ticks.
      const received = receivedPosesToClip(r, clip);
      const source = createRawClip('source', clip.skeleton, 60, received.sampleCount, clip.unit);
      const pose = new Float32Array(clip.skeleton.boneNames.length * POSE_STRIDE);
      const n = received.sampleCount;
      r.receivedTicks!.forEach((tick, s) => {
        sampleClipAt(clip, tick / 60, pose);
        for (let b = 0; b < clip.skeleton.boneNames.length; b++) {
          for (let c = 0; c < 4; c++) source.rotations[(b * n + s) * 4 + c] = pose[b * POSE_STRIDE + c];
          for (let c = 0; c < 3; c++) source.translations[(b * n + s) * 3 + c] = pose[b * POSE_STRIDE + 4 + c];
          for (let c = 0; c < 3; c++) source.scales[(b * n + s) * 3 + c] = pose[b * POSE_STRIDE + 7 + c];
        }
      });
      const shells = new Float32Array(clip.skeleton.boneNames.length).fill(3);
      expect(measureClipError(source, received, shells).maxError).toBeCloseTo(r.maxError, 6);
    }
  });

  it('receives every tick without loss, and handles reordering by jitter', () => {
    const clean = simulateNetwork(walk, { hz: 60, loss: 0, rttMs: 100, keepPoses: true });
    expect(clean.received).toBe(clean.ticks);
    expect(clean.receivedTicks!.length).toBe(clean.ticks);
    const jittery = simulateNetwork(walk, { hz: 60, loss: 0.1, rttMs: 80, jitterMs: 60, seed: 4 });
    expect(jittery.plain.rejected).toBe(0);
    expect(jittery.maxError).toBeLessThanOrEqual(jittery.threshold);
    expect(jittery.received).toBe(jittery.sent - jittery.lost);
  });

  it('is deterministic for a seed, and the seed changes the losses', () => {
    const a = simulateNetwork(walk, { loss: 0.2, seed: 9, entropy: false });
    const b = simulateNetwork(walk, { loss: 0.2, seed: 9, entropy: false });
    const c = simulateNetwork(walk, { loss: 0.2, seed: 10, entropy: false });
    expect(b).toEqual(a);
    expect(c.lost === a.lost && c.deltaBitsPerSnapshot === a.deltaBitsPerSnapshot).toBe(false);
  });

  it('samples at the send rate by interpolating the clip', () => {
    expect(tickCount(walk, 60)).toBe(2 * (walk.sampleCount - 1) + 1);
    expect(tickCount(walk, walk.sampleRate)).toBe(walk.sampleCount);
    const a = sampleClipAt(walk, 1 / walk.sampleRate, new Float32Array(220));
    const b = sampleClipAt(walk, 2 / walk.sampleRate, new Float32Array(220));
    const mid = sampleClipAt(walk, 1.5 / walk.sampleRate, new Float32Array(220));
    const hips = walk.skeleton.boneNames.indexOf('Hips') * POSE_STRIDE;
    expect(mid[hips + 6]).toBeCloseTo((a[hips + 6] + b[hips + 6]) / 2, 3);
  });

  it('takes a schema built elsewhere, and rejects bad options with NetError', () => {
    const schema = createSnapshotSchema(walk, { error: '0.5cm' });
    const r = simulateNetwork(walk, { schema, entropy: false });
    expect(r.threshold).toBeCloseTo(0.5, 6);
    expect(r.entropy).toBeUndefined();
    expect(() => simulateNetwork(walk, { loss: 1 })).toThrow(NetError);
    expect(() => simulateNetwork(walk, { hz: 0 })).toThrow(NetError);
    expect(() => simulateNetwork(walk, { rttMs: -1 })).toThrow(NetError);
    expect(() => receivedPosesToClip(r, walk)).toThrow(NetError);
  });
});
