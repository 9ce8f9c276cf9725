import { describe, expect, it } from 'vitest';

import { compress } from '../../src/compress/index.js';
import { CompressedClip } from '../../src/runtime/compressed-clip.js';
import { CROWD_FLOATS_PER_BONE, CrowdSampler, clipWorld, type CrowdOutput } from '../../src/runtime/crowd.js';
import { FORMAT_ERROR, FormatError } from '../../src/runtime/errors.js';
import { POSE_STRIDE, localToObject } from '../../src/runtime/pose.js';
import type { ClipSampler } from '../../src/runtime/sampler.js';
import { KERNEL_MAX_WORLD_BONES } from '../../src/runtime/decode-layout.js';
import { loadFixture } from '../utils/clips.js';
import { makeSyntheticClip, mulberry32 } from '../utils/synthetic.js';

const TIMEOUT = 60_000;

/** Three clips of different skeletons: a corpus clip (22 bones), a scaled tree and a short chain. */
const crowdBytes = [
  compress(loadFixture('dataset-1_walk_happy_002.bvh')).bytes,
  compress(
    makeSyntheticClip({ boneCount: 9, sampleCount: 50, seed: 3, animatedScale: true, animatedTranslationShare: 0.5 }),
  ).bytes,
  compress(makeSyntheticClip({ boneCount: 4, sampleCount: 20, seed: 4, shape: 'chain' })).bytes,
];
function crowdClips(decoder: 'auto' | 'typescript' = 'auto'): CompressedClip[] {
  return crowdBytes.map((bytes) => CompressedClip.open(bytes, { decoder }));
}

/** A crowd of `count` characters over `clips`, with seeded times, some outside the clips. */
function crowdOf(
  clips: CompressedClip[],
  count: number,
  seed: number,
): { samplers: ClipSampler[]; times: Float64Array } {
  const random = mulberry32(seed);
  const samplers: ClipSampler[] = [];
  const times = new Float64Array(count);
  for (let i = 0; i < count; i++) {
    const clip = clips[i % clips.length];
    samplers.push(clip.createSampler());
    times[i] = (random() * 1.5 - 0.25) * clip.duration;
  }
  return { samplers, times };
}

describe('CrowdSampler', { timeout: TIMEOUT }, () => {
  const clips = crowdClips();

  it('local output is every character sampled on its own, back to back, bit for bit', () => {
    const { samplers, times } = crowdOf(clips, 11, 1);
    const crowd = new CrowdSampler();
    const out = new Float32Array(crowd.floatsFor(samplers) + 5).fill(7);
    for (const looping of ['clamp', 'repeat', 'wrap'] as const) {
      expect(crowd.sample(samplers, times, out, { looping })).toBe(out.length - 5);
      let at = 0;
      for (let i = 0; i < samplers.length; i++) {
        const clip = samplers[i].clip;
        const pose = clips[i % clips.length]
          .createSampler()
          .sample(times[i], new Float32Array(clip.boneCount * POSE_STRIDE), { looping });
        expect(Array.from(out.subarray(at, at + pose.length)), `character ${i} (${looping})`).toEqual(Array.from(pose));
        at += pose.length;
      }
      expect(Array.from(out.subarray(at))).toEqual([7, 7, 7, 7, 7]);
    }
  });

  it('plans the crowd again when the samplers change in place, and lets one sampler play two characters', () => {
    const { samplers, times: first } = crowdOf(clips, 9, 5);
    let times = first;
    const crowd = new CrowdSampler();
    const expectCrowd = (what: string): void => {
      const out = new Float32Array(crowd.floatsFor(samplers));
      expect(crowd.sample(samplers, times, out)).toBe(out.length);
      let at = 0;
      for (let i = 0; i < samplers.length; i++) {
        const clip = samplers[i].clip;
        const pose = clip.createSampler().sample(times[i], new Float32Array(clip.boneCount * POSE_STRIDE));
        expect(Array.from(out.subarray(at, at + pose.length)), `${what}: character ${i}`).toEqual(Array.from(pose));
        at += pose.length;
      }
    };
    expectCrowd('first crowd');
    // Same length, other skeletons at other places: every character's first float moves.
    samplers[1] = clips[2].createSampler();
    [samplers[3], samplers[7]] = [samplers[7], samplers[3]];
    samplers[8] = samplers[0];
    expectCrowd('changed in place');
    samplers.push(clips[1].createSampler());
    times = Float64Array.of(...first, 0.25);
    expectCrowd('one more character');
  });

  it('object16 is localToObject of each local pose to the bit, and object12 holds its top three rows', () => {
    const { samplers, times } = crowdOf(clips, 7, 2);
    const local = new CrowdSampler({ output: 'local' });
    const o16 = new CrowdSampler({ output: 'object16' });
    const o12 = new CrowdSampler({ output: 'object12' });
    const poses = new Float32Array(local.floatsFor(samplers));
    const m16 = new Float32Array(o16.floatsFor(samplers));
    const m12 = new Float32Array(o12.floatsFor(samplers));
    local.sample(samplers, times, poses);
    expect(o16.sample(samplers, times, m16)).toBe(m16.length);
    expect(o12.sample(samplers, times, m12)).toBe(m12.length);
    let atPose = 0,
      at16 = 0,
      at12 = 0,
      worst = 0;
    for (const sampler of samplers) {
      const { boneCount, parents } = sampler.clip;
      const expected = localToObject(
        poses.subarray(atPose, atPose + boneCount * POSE_STRIDE),
        parents,
        new Float32Array(16 * boneCount),
      );
      for (let i = 0; i < 16 * boneCount; i++) {
        const scale = Math.max(1, Math.abs(expected[i]));
        worst = Math.max(worst, Math.abs(m16[at16 + i] - expected[i]) / scale);
      }
      for (let b = 0; b < boneCount; b++) {
        for (let row = 0; row < 3; row++) {
          for (let col = 0; col < 4; col++)
            expect(m12[at12 + 12 * b + 4 * row + col]).toBe(m16[at16 + 16 * b + 4 * col + row]);
        }
        expect([
          m16[at16 + 16 * b + 3],
          m16[at16 + 16 * b + 7],
          m16[at16 + 16 * b + 11],
          m16[at16 + 16 * b + 15],
        ]).toEqual([0, 0, 0, 1]);
      }
      atPose += boneCount * POSE_STRIDE;
      at16 += 16 * boneCount;
      at12 += 12 * boneCount;
    }
    // One object-space walk (pose.ts) serves both: the same floats.
    expect(worst).toBe(0);
  });

  it("object output from the kernel's object-space pass is crowd.ts's own walk to the bit", () => {
    const ts = crowdClips('typescript');
    expect(clips.map((c) => c.decoder)).toEqual(['wasm', 'wasm', 'wasm']);
    expect(ts.map((c) => c.decoder)).toEqual(['typescript', 'typescript', 'typescript']);
    const random = mulberry32(6);
    const count = 12;
    const wasmSamplers = Array.from({ length: count }, (_, i) => clips[i % 3].createSampler());
    const tsSamplers = Array.from({ length: count }, (_, i) => ts[i % 3].createSampler());
    const times = Float64Array.from({ length: count }, (_, i) => (random() * 1.5 - 0.25) * clips[i % 3].duration);
    for (const output of ['object16', 'object12'] as CrowdOutput[]) {
      const crowd = new CrowdSampler({ output });
      const fromKernel = new Float32Array(crowd.floatsFor(wasmSamplers)).fill(NaN);
      const fromWalk = new Float32Array(fromKernel.length).fill(NaN);
      for (const looping of ['clamp', 'repeat'] as const) {
        crowd.sample(wasmSamplers, times, fromKernel, { looping });
        crowd.sample(tsSamplers, times, fromWalk, { looping });
        expect(new Uint32Array(fromKernel.buffer), `${output} (${looping})`).toEqual(new Uint32Array(fromWalk.buffer));
      }
    }
  });

  it("skeletons up to the kernel pass's bone limit are walked by the kernel, larger ones by crowd.ts, to the same floats", () => {
    for (const bones of [KERNEL_MAX_WORLD_BONES, KERNEL_MAX_WORLD_BONES + 1]) {
      const bytes = compress(
        makeSyntheticClip({ boneCount: bones, sampleCount: 4, seed: bones, shape: 'chain' }),
      ).bytes;
      const wasm = CompressedClip.open(bytes),
        ts = CompressedClip.open(bytes, { decoder: 'typescript' });
      expect(wasm.decoder).toBe('wasm');
      const crowd = new CrowdSampler({ output: 'object16' });
      // The crowd's kernel pass for the clip, or none: crowd.ts walks the pose itself.
      expect(clipWorld(wasm) !== undefined, `${bones} bones`).toBe(bones <= KERNEL_MAX_WORLD_BONES);
      const samplers = [wasm.createSampler(), clips[0].createSampler(), wasm.createSampler()];
      const tsSamplers = [ts.createSampler(), crowdClips('typescript')[0].createSampler(), ts.createSampler()];
      const times = [0.3 * wasm.duration, 0.5 * clips[0].duration, 0.9 * wasm.duration];
      const fromKernel = new Float32Array(crowd.floatsFor(samplers)),
        fromWalk = new Float32Array(fromKernel.length);
      crowd.sample(samplers, times, fromKernel);
      crowd.sample(tsSamplers, times, fromWalk);
      expect(new Uint32Array(fromKernel.buffer), `${bones} bones`).toEqual(new Uint32Array(fromWalk.buffer));
    }
  });

  it('an empty crowd writes nothing; floatsFor sums the skeletons', () => {
    const crowd = new CrowdSampler({ output: 'object12' });
    expect(crowd.sample([], [], new Float32Array(0))).toBe(0);
    const { samplers } = crowdOf(clips, 3, 3);
    expect(crowd.floatsFor(samplers)).toBe(12 * (clips[0].boneCount + clips[1].boneCount + clips[2].boneCount));
    expect(CROWD_FLOATS_PER_BONE).toEqual({ local: POSE_STRIDE, object16: 16, object12: 12 });
  });

  it('bad arguments are FormatError BAD_ARGUMENT naming the problem', () => {
    const { samplers, times } = crowdOf(clips, 4, 4);
    const expectBad = (run: () => unknown, text: string) => {
      let error: unknown;
      try {
        run();
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(FormatError);
      expect((error as FormatError).code).toBe(FORMAT_ERROR.BAD_ARGUMENT);
      expect((error as FormatError).message).toContain(text);
    };
    for (const output of ['local', 'object16', 'object12'] as CrowdOutput[]) {
      const crowd = new CrowdSampler({ output });
      expectBad(
        () => crowd.sample(samplers, times, new Float32Array(crowd.floatsFor(samplers) - 1)),
        'the crowd needs',
      );
      expectBad(
        () => crowd.sample(samplers, times.subarray(0, 3), new Float32Array(crowd.floatsFor(samplers))),
        '3 times for 4 characters',
      );
    }
    expectBad(() => new CrowdSampler({ output: 'world' as CrowdOutput }), 'output must be');
    expectBad(() => samplers[0].sampleInto(0, new Float32Array(10 * clips[0].boneCount), 1), 'needs');
    expectBad(() => samplers[0].sampleInto(0, new Float32Array(10 * clips[0].boneCount), -1), 'needs');
  });
});
