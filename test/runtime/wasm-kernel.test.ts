import { readFileSync } from 'node:fs';

import binaryen from 'binaryen';
import { describe, expect, it, vi } from 'vitest';
import wabt from 'wabt';

import { compress } from '../../src/compress/index.js';
import { CompressedClip } from '../../src/runtime/compressed-clip.js';
import { animatedTrack } from '../../src/runtime/clip-inspection.js';
import { FormatError } from '../../src/runtime/errors.js';
import { MAX_QUANTIZED_BITS, RAW_BITS, TRACK_KIND } from '../../src/runtime/format.js';
import { POSE_STRIDE } from '../../src/runtime/pose.js';
import type { Looping, Rounding } from '../../src/runtime/sampler.js';
import {
  KERNEL_CLIP,
  KERNEL_KEY1,
  KERNEL_LANES,
  KERNEL_MASKS,
  KERNEL_MAX_POSE_FLOATS,
  KERNEL_OWNER,
  KERNEL_QUAD,
  KERNEL_SINK,
  KERNEL_STAGING,
  KERNEL_WORLD,
  KERNEL_WORLD_OUT,
  LANE_MAX_BITS,
  PLANE_BYTES,
  TABLE,
} from '../../src/runtime/decode-layout.js';
import { kernelBytes, kernelModule } from '../../src/runtime/wasm-kernel.js';
import { KERNEL_WASM, KERNEL_WORLD_WASM } from '../../src/runtime/kernel-wasm.js';
import { encodeWithRates, fixtureNames, loadFixture } from '../utils/clips.js';
import { makeSyntheticClip, mulberry32 } from '../utils/synthetic.js';
import { sampleBetween, sampleBone, sampleKey } from '../../src/runtime/sampler.js';

const TIMEOUT = 120_000;

/** Index of the first float whose bits differ, or -1. */
function firstDifference(a: Float32Array, b: Float32Array): number {
  const ua = new Uint32Array(a.buffer, a.byteOffset, a.length),
    ub = new Uint32Array(b.buffer, b.byteOffset, b.length);
  for (let i = 0; i < ua.length; i++) if (ua[i] !== ub[i]) return i;
  return -1;
}

/**
 * The kernel and the TypeScript decoder give the same bits at every key, at fractions
 * between every pair of keys and at random times with every looping and rounding.
 * Returns the poses compared.
 */
function expectKernelMatches(bytes: Uint8Array, seed: number): number {
  const wasm = CompressedClip.open(bytes);
  const ts = CompressedClip.open(bytes, { decoder: 'typescript' });
  expect(wasm.decoder).toBe(wasm.animatedTrackCount > 0 ? 'wasm' : 'typescript');
  expect(ts.decoder).toBe('typescript');
  const a = wasm.createSampler(),
    b = ts.createSampler();
  const floats = wasm.boneCount * POSE_STRIDE;
  const pa = new Float32Array(floats),
    pb = new Float32Array(floats);
  const random = mulberry32(seed);
  let compared = 0;
  const check = (what: string): void => {
    expect(firstDifference(pa, pb), what).toBe(-1);
    compared++;
  };
  for (let k = 0; k < wasm.sampleCount; k++) {
    sampleKey(a, k, pa);
    sampleKey(b, k, pb);
    check(`key ${k}`);
    if (k + 1 === wasm.sampleCount) continue;
    for (const alpha of [0.25, 0.5, random(), 1e-3 + 0.998 * random()]) {
      sampleBetween(a, k, alpha, pa);
      sampleBetween(b, k, alpha, pb);
      check(`key ${k} + ${alpha}`);
    }
  }
  const loopings: Looping[] = ['clamp', 'repeat', 'wrap'];
  const roundings: Rounding[] = ['none', 'floor', 'ceil', 'nearest'];
  for (let i = 0; i < 200; i++) {
    const time = wasm.startTime + (random() * 1.4 - 0.2) * wasm.duration;
    const options = { looping: loopings[i % 3], rounding: roundings[(i >> 2) % 4] };
    a.sample(time, pa, options);
    b.sample(time, pb, options);
    check(`${time} s ${JSON.stringify(options)}`);
  }
  return compared;
}

const WAT = new URL('../../src/runtime/kernel.wat', import.meta.url);
const WORLD_WAT = new URL('../../src/runtime/kernel-world.wat', import.meta.url);

describe('WebAssembly SIMD kernel (kernel.wat, wasm-kernel.ts)', { timeout: TIMEOUT }, () => {
  it("is assembled from this repository's source, validates and compiles where SIMD exists (Node 20)", () => {
    const bytes = kernelBytes();
    expect(Array.from(bytes.subarray(0, 8))).toEqual([0, 0x61, 0x73, 0x6d, 1, 0, 0, 0]);
    expect(WebAssembly.validate(bytes)).toBe(true);
    expect(kernelModule()).toBeInstanceOf(WebAssembly.Module);
    expect(Array.from(kernelBytes())).toEqual(Array.from(bytes));
  });

  it('is kernel.wat and kernel-world.wat as they are now (the generated modules are not stale)', async () => {
    for (const [wat, text] of [
      [WAT, KERNEL_WASM],
      [WORLD_WAT, KERNEL_WORLD_WASM],
    ] as const) {
      // As scripts/assemble-kernel.mjs makes them: wabt, then binaryen's coalesce-locals.
      const module = (await wabt()).parseWat('kernel.wat', readFileSync(wat, 'utf8'), { simd: true });
      const coalesced = binaryen.readBinary(module.toBinary({}).buffer);
      module.destroy();
      coalesced.setFeatures(binaryen.Features.SIMD128 | binaryen.Features.MutableGlobals);
      coalesced.runPasses(['coalesce-locals']);
      const assembled = coalesced.emitBinary();
      coalesced.dispose();
      expect(Buffer.compare(Buffer.from(assembled), Buffer.from(kernelBytes(text))), String(wat)).toBe(0);
    }
  });

  it('kernel.wat names the numbers of decode-layout.ts it uses, with their values', () => {
    const header = [WAT, WORLD_WAT]
      .flatMap((wat) => readFileSync(wat, 'utf8').split('\n'))
      .filter((l) => l.startsWith(';;'))
      .join(' ');
    const named = {
      KERNEL_MASKS,
      KERNEL_OWNER,
      KERNEL_SINK,
      KERNEL_STAGING,
      KERNEL_WORLD,
      KERNEL_WORLD_OUT,
      PLANE_BYTES,
    };
    for (const [name, value] of Object.entries(named))
      expect(header, name).toMatch(new RegExp(`${name} = ${value}|${name} ${value}\\b`));
    // The records' fields, each by name (a const enum has no object to list; a Record over
    // its keys cannot leave one out).
    const clip: Record<Exclude<keyof typeof KERNEL_CLIP, 'WORDS'>, number> = {
      KEY_BYTES: KERNEL_CLIP.KEY_BYTES,
      QUADS: KERNEL_CLIP.QUADS,
      WINDOWS: KERNEL_CLIP.WINDOWS,
      RECORDS_BYTES: KERNEL_CLIP.RECORDS_BYTES,
      COUNT: KERNEL_CLIP.COUNT,
      STEPS: KERNEL_CLIP.STEPS,
      CLIP_BYTES: KERNEL_CLIP.CLIP_BYTES,
      POSE_BYTES: KERNEL_CLIP.POSE_BYTES,
      WINDOW_COUNT: KERNEL_CLIP.WINDOW_COUNT,
      LANE_ROTATIONS: KERNEL_CLIP.LANE_ROTATIONS,
      LANE_ROWS: KERNEL_CLIP.LANE_ROWS,
      SEGMENTS: KERNEL_CLIP.SEGMENTS,
      SEGMENT_BYTES: KERNEL_CLIP.SEGMENT_BYTES,
    };
    const quad: Record<Exclude<keyof typeof KERNEL_QUAD, 'BYTES'>, number> = {
      REFS: KERNEL_QUAD.REFS,
      STEP: KERNEL_QUAD.STEP,
      POSE: KERNEL_QUAD.POSE,
    };
    const lanes: Record<Exclude<keyof typeof KERNEL_LANES, 'BYTES'>, number> = {
      OFFSET: KERNEL_LANES.OFFSET,
      STEP: KERNEL_LANES.STEP,
      BYTE: KERNEL_LANES.BYTE,
      WIDTH: KERNEL_LANES.WIDTH,
      COMPONENT: KERNEL_LANES.COMPONENT,
      DROP: KERNEL_LANES.DROP,
    };
    const key1: Record<keyof typeof KERNEL_KEY1, number> = {
      SAME: KERNEL_KEY1.SAME,
      NEXT: KERNEL_KEY1.NEXT,
      NEXT_SEGMENT: KERNEL_KEY1.NEXT_SEGMENT,
      FIRST: KERNEL_KEY1.FIRST,
    };
    for (const [name, word] of Object.entries(clip))
      expect(header, name).toMatch(new RegExp(`\\b${4 * word} ${name}\\b`));
    for (const [name, byte] of [...Object.entries(quad), ...Object.entries(lanes)])
      expect(header, name).toMatch(new RegExp(`\\b${name} ${byte}\\b`));
    expect(header).toContain(`KERNEL_QUAD rows (${KERNEL_QUAD.BYTES} bytes)`);
    expect(header).toContain(`KERNEL_LANES rows (${KERNEL_LANES.BYTES} bytes)`);
    for (const [name, value] of Object.entries(key1))
      expect(header, name).toMatch(new RegExp(`\\b${value} ${name}\\b`));
    expect(header).toContain(`STEP 0x${TABLE.STEP.toString(16)}; RAW 0x${TABLE.RAW.toString(16)}`);
  });

  it('decodes every fixture clip to the bits of the TypeScript decoder', () => {
    const names = fixtureNames();
    expect(names.length).toBeGreaterThan(0);
    let poses = 0;
    names.forEach((name, i) => {
      poses += expectKernelMatches(compress(loadFixture(name)).bytes, 10 + i);
    });
    expect(poses).toBeGreaterThan(1000);
  });

  it('matches on constant segments, every quantised width, raw floats, large angles (acos/sin weights) and STEP tracks', () => {
    const clip = makeSyntheticClip({
      boneCount: 9,
      sampleCount: 70,
      seed: 21,
      sampleRate: 4,
      animatedScale: true,
      maxAngleDeg: 175,
      animatedTranslationShare: 0.6,
      shape: 'chain',
    });
    const random = mulberry32(5);
    const { bytes } = encodeWithRates(clip, () => {
      const r = random();
      return r < 0.15 ? 0 : r < 0.3 ? RAW_BITS : 1 + Math.floor(random() * MAX_QUANTIZED_BITS);
    });
    expectKernelMatches(bytes, 6);
    const stepped = makeSyntheticClip({ boneCount: 6, sampleCount: 40, seed: 11, animatedTranslationShare: 1 });
    const stepMask = new Uint8Array(stepped.skeleton.parents.length * 3);
    for (let t = 0; t < stepMask.length; t += 2) stepMask[t] = 1;
    expectKernelMatches(compress({ ...stepped, stepMask }).bytes, 7);
    expectKernelMatches(compress(makeSyntheticClip({ boneCount: 3, sampleCount: 1, seed: 2 })).bytes, 8);
  });

  it("reads rotations four at a time from lane rows wherever no segment stores a rotation's raw floats or wider fields, to the same bits", () => {
    const laneRotations = (bytes: Uint8Array): number => {
      const { kernel, i32 } = CompressedClip.open(bytes).tables;
      return new Int32Array(i32.buffer)[(kernel!.clipAt >> 2) + KERNEL_CLIP.LANE_ROTATIONS];
    };
    const rotations = (bytes: Uint8Array): number => {
      const clip = CompressedClip.open(bytes);
      return Array.from({ length: clip.animatedTrackCount }, (_, j) => animatedTrack(clip, j).kind).filter(
        (k) => k === TRACK_KIND.ROTATION,
      ).length;
    };
    // Every quantised width a lane row reads on rotations (so every first bit within a byte,
    // keys starting at every bit of a byte), large angles, keys straddling segments; then the
    // same clip with wider rotations, and with raw rotations, in places.
    const clip = makeSyntheticClip({
      boneCount: 11,
      sampleCount: 75,
      seed: 31,
      sampleRate: 5,
      animatedScale: true,
      maxAngleDeg: 175,
      animatedTranslationShare: 0.5,
      shape: 'chain',
    });
    const random = mulberry32(9);
    const quantised = encodeWithRates(clip, () => Math.floor(random() * (LANE_MAX_BITS + 1))).bytes;
    expect(rotations(quantised)).toBeGreaterThan(4);
    expect(laneRotations(quantised)).toBe(rotations(quantised));
    expectKernelMatches(quantised, 12);
    // Every field at the widest a lane reads: multiplied up to bit 14, each ends at bit 31.
    const widest = encodeWithRates(clip, () => LANE_MAX_BITS).bytes;
    expect(laneRotations(widest)).toBe(rotations(widest));
    expectKernelMatches(widest, 12);
    const wide = encodeWithRates(clip, () =>
      random() < 0.1 ? LANE_MAX_BITS + 1 + Math.floor(random() * (MAX_QUANTIZED_BITS - LANE_MAX_BITS)) : 9,
    ).bytes;
    expect(laneRotations(wide)).toBe(0);
    expectKernelMatches(wide, 16);
    const withRaw = encodeWithRates(clip, () =>
      random() < 0.1 ? RAW_BITS : Math.floor(random() * (MAX_QUANTIZED_BITS + 1)),
    ).bytes;
    expect(laneRotations(withRaw)).toBe(0);
    expectKernelMatches(withRaw, 13);
    // The corpus clips use lane rows.
    expect(laneRotations(compress(loadFixture(fixtureNames()[0])).bytes)).toBeGreaterThan(0);
  });

  it("finds every key at its bit in the file's copy, whatever each segment's bits per key (constant to raw segments)", () => {
    // Segment by segment: all constant (0 bits), 1-bit fields, the widest quantised fields,
    // then random widths with and without raw floats, so keys range from 0 to hundreds of bits;
    // 85 samples: the last segment takes a tail of 5 (21 keys).
    const clip = makeSyntheticClip({
      boneCount: 7,
      sampleCount: 85,
      seed: 41,
      sampleRate: 6,
      maxAngleDeg: 120,
      animatedTranslationShare: 0.5,
    });
    for (const raw of [false, true]) {
      const random = mulberry32(raw ? 3 : 4);
      const rateOf = (s: number): number => {
        if (s === 0) return 0;
        if (s === 1) return 1;
        if (s === 2) return MAX_QUANTIZED_BITS;
        return raw && random() < 0.2 ? RAW_BITS : Math.floor(random() * (MAX_QUANTIZED_BITS + 1));
      };
      const bytes = encodeWithRates(clip, rateOf).bytes;
      const opened = CompressedClip.open(bytes);
      expect(opened.segmentCount).toBeGreaterThan(4);
      const kernel = opened.tables.kernel!;
      // The kernel reads the packed keys in the file's copy in its memory.
      expect(Array.from(kernel.file)).toEqual(Array.from(bytes));
      // Headers on 32 bytes, every segment at one stride from the first: the sampler passes
      // where key 1 is and key 0's first bit in an address's low five bits.
      expect(kernel.segments % 32).toBe(0);
      expect(kernel.segmentBytes % 32).toBe(0);
      expect(kernel.lastSegment).toBe(opened.segmentCount - 1);
      // Each header: the address of its segment's keys in the copy, after the last segment's,
      // and its bits per key; keys that start mid-byte among them.
      const { i32, segAt } = opened.tables;
      let keysAt = kernel.file.byteOffset,
        midByte = 0;
      for (let s = 0; s < opened.segmentCount; s++) {
        const head = segAt + s * (kernel.segmentBytes >> 2);
        expect(i32[head]).toBeGreaterThan(keysAt);
        expect(i32[head]).toBeLessThan(kernel.file.byteOffset + kernel.file.byteLength);
        keysAt = i32[head];
        if (i32[head + 1] % 8 !== 0) midByte++;
      }
      expect(midByte).toBeGreaterThan(0);
      expectKernelMatches(bytes, raw ? 14 : 15);
    }
  });

  it('samples one bone as the whole pose has it', () => {
    const bytes = compress(loadFixture(fixtureNames()[1])).bytes;
    for (const decoder of ['auto', 'typescript'] as const) {
      const clip = CompressedClip.open(bytes, { decoder });
      const pose = new Float32Array(clip.boneCount * POSE_STRIDE),
        bone = new Float32Array(POSE_STRIDE);
      for (const time of [0, 0.37, clip.duration * 0.61]) {
        clip.createSampler().sample(time, pose);
        for (let b = 0; b < clip.boneCount; b += 5) {
          sampleBone(clip.createSampler(), time, b, bone);
          expect(
            firstDifference(bone, pose.subarray(b * POSE_STRIDE, (b + 1) * POSE_STRIDE)),
            `${decoder} bone ${b} at ${time}`,
          ).toBe(-1);
        }
      }
    }
  });

  it('keeps every clip decodable when clips fill more than one kernel memory', () => {
    const { bytes } = compress(loadFixture(fixtureNames()[0]));
    const reference = CompressedClip.open(bytes, { decoder: 'typescript' });
    const floats = reference.boneCount * POSE_STRIDE;
    const expected = reference.createSampler().sample(0.3, new Float32Array(floats));
    const clips: CompressedClip[] = [];
    // Each opened copy takes about 1.5 × the file in a 1 MiB memory: enough copies to need several.
    const copies = Math.ceil((3 * (1 << 20)) / bytes.length);
    for (let c = 0; c < copies; c++) clips.push(CompressedClip.open(bytes.slice()));
    for (const clip of clips)
      expect(firstDifference(clip.createSampler().sample(0.3, new Float32Array(floats)), expected)).toBe(-1);
  });

  it('gives each clip its own constants when clips sharing a kernel memory take turns', () => {
    // Different skeletons, constant translations, animated and constant scales, one sample:
    // each decode must first clear what the previous clip left in the shared staging pose.
    const sources = [
      compress(loadFixture(fixtureNames()[0])).bytes,
      compress(
        makeSyntheticClip({
          boneCount: 7,
          sampleCount: 30,
          seed: 4,
          animatedScale: true,
          animatedTranslationShare: 0.3,
        }),
      ).bytes,
      fixtureNames().length > 1
        ? compress(loadFixture(fixtureNames()[1])).bytes
        : compress(makeSyntheticClip({ boneCount: 30, sampleCount: 50, seed: 9 })).bytes,
      compress(makeSyntheticClip({ boneCount: 4, sampleCount: 1, seed: 5 })).bytes,
    ];
    const wasm = sources.map((bytes) => CompressedClip.open(bytes));
    const ts = sources.map((bytes) => CompressedClip.open(bytes, { decoder: 'typescript' }));
    expect(wasm.filter((c) => c.decoder === 'wasm').length).toBeGreaterThanOrEqual(3);
    const random = mulberry32(12);
    const samplers = wasm.map((c) => c.createSampler()),
      references = ts.map((c) => c.createSampler());
    for (let i = 0; i < 400; i++) {
      const c = Math.floor(random() * wasm.length);
      const clip = wasm[c],
        floats = clip.boneCount * POSE_STRIDE;
      const time = clip.startTime + random() * clip.duration;
      const got = samplers[c].sample(time, new Float32Array(floats)),
        want = references[c].sample(time, new Float32Array(floats));
      expect(firstDifference(got, want), `clip ${c} at ${time} s`).toBe(-1);
    }
  });

  it('lays a clip out for the TypeScript decoder, to the same poses, when no kernel memory can be had', async () => {
    const { bytes } = compress(loadFixture(fixtureNames()[0]));
    const reference = CompressedClip.open(bytes, { decoder: 'typescript' }).createSampler();
    const floats = reference.clip.boneCount * POSE_STRIDE;
    // A fresh runtime, whose first kernel memory cannot be made (as on a page out of memory).
    vi.resetModules();
    const memory = vi.spyOn(WebAssembly, 'Memory').mockImplementation(() => {
      throw new RangeError('WebAssembly.Memory(): could not allocate memory');
    });
    try {
      const fresh = await import('../../src/runtime/compressed-clip.js');
      const clip = fresh.CompressedClip.open(bytes);
      expect(memory).toHaveBeenCalled();
      expect(clip.decoder).toBe('typescript');
      const sampler = clip.createSampler();
      const random = mulberry32(21);
      for (let i = 0; i < 50; i++) {
        const time = clip.startTime + (random() * 1.2 - 0.1) * clip.duration;
        const got = sampler.sample(time, new Float32Array(floats)),
          want = reference.sample(time, new Float32Array(floats));
        expect(firstDifference(got, want), `at ${time} s`).toBe(-1);
      }
    } finally {
      memory.mockRestore();
      vi.resetModules();
    }
  });

  it('leaves a pose longer than the staging pose to the TypeScript decoder', () => {
    const { bytes } = compress(
      makeSyntheticClip({ boneCount: KERNEL_MAX_POSE_FLOATS / POSE_STRIDE + 1, sampleCount: 3, seed: 6 }),
    );
    const clip = CompressedClip.open(bytes);
    expect(clip.decoder).toBe('typescript');
    const small = CompressedClip.open(compress(makeSyntheticClip({ boneCount: 3, sampleCount: 3, seed: 6 })).bytes);
    expect(small.decoder).toBe('wasm');
  });

  it('is not used with compact tables or when the TypeScript decoder is asked for; a bad decoder option is refused', () => {
    const { bytes } = compress(makeSyntheticClip({ boneCount: 3, sampleCount: 20, seed: 3 }));
    expect(CompressedClip.open(bytes, { tables: 'compact' }).decoder).toBe('typescript');
    expect(CompressedClip.open(bytes, { decoder: 'typescript' }).decoder).toBe('typescript');
    expect(() => CompressedClip.open(bytes, { decoder: 'fast' as never })).toThrow(FormatError);
  });
});
