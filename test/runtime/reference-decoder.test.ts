import { describe, expect, it } from 'vitest';

import { compress } from '../../src/compress/index.js';
import { CompressedClip } from '../../src/runtime/compressed-clip.js';
import { sectionSizes, segmentBitRates, trackClassOf } from '../../src/runtime/clip-inspection.js';
import { MAX_QUANTIZED_BITS, RAW_BITS } from '../../src/runtime/format.js';
import { POSE_STRIDE } from '../../src/runtime/pose.js';
import { referenceDecode } from '../reference-decoder.js';
import { encodeWithRates, fixtureNames, loadFixture } from '../utils/clips.js';
import { makeSyntheticClip, mulberry32 } from '../utils/synthetic.js';
import { makeRigs } from '../utils/gltf-rigs.js';
import { readGltf } from '../../src/readers/gltf.js';
import { isStepTrack } from '../../src/runtime/clip-inspection.js';
import { sampleKey } from '../../src/runtime/sampler.js';

const TIMEOUT = 60_000;

/**
 * The first key and float where the fast decoder's bits differ from the reference
 * decoder's, or '' when every float of every key is the same: format 5 defines every
 * operation of the decode (the rotation arithmetic is float32 step by step), so two
 * readers written from docs/format.md agree to the bit.
 */
function firstBitDifference(bytes: Uint8Array): string {
  const fast = CompressedClip.open(bytes);
  const ref = referenceDecode(bytes);
  const pose = new Float32Array(fast.boneCount * POSE_STRIDE);
  for (let k = 0; k < fast.sampleCount; k++) {
    sampleKey(fast.createSampler(), k, pose);
    for (let i = 0; i < pose.length; i++)
      if (!Object.is(pose[i], ref.keys[k][i])) return `key ${k} float ${i}: ${pose[i]} against ${ref.keys[k][i]}`;
  }
  return '';
}

/** Checks the header-level facts both decoders read. */
function expectSameMetadata(bytes: Uint8Array): void {
  const fast = CompressedClip.open(bytes);
  const ref = referenceDecode(bytes);
  expect(ref.boneCount).toBe(fast.boneCount);
  expect(ref.sampleCount).toBe(fast.sampleCount);
  expect(ref.sampleRate).toBe(fast.sampleRate);
  expect(ref.startTime).toBe(fast.startTime);
  expect(ref.duration).toBe(fast.duration);
  expect(ref.nodeIndices).toEqual(fast.nodeIndices ? Array.from(fast.nodeIndices) : undefined);
  expect(ref.keyTimes).toEqual(fast.keyTimes ? Array.from(fast.keyTimes) : undefined);
  expect(ref.additive !== undefined).toBe(fast.additive !== undefined);
  expect(ref.unit).toBe(fast.unit);
  expect(ref.version).toBe(fast.version);
  expect(ref.parents).toEqual(Array.from(fast.parents));
  expect(ref.name).toBe(fast.name);
  expect(ref.boneNames).toEqual(fast.boneNames);
  expect(ref.keys.length).toBe(fast.sampleCount);
  for (let b = 0; b < fast.boneCount; b++) {
    for (let kind = 0; kind < 3; kind++) {
      expect(ref.trackClasses[b * 3 + kind]).toBe(trackClassOf(fast, b, kind));
      expect(ref.channels[b * 3 + kind]).toBe(fast.hasChannel(b, kind));
      expect(ref.steps[b * 3 + kind]).toBe(isStepTrack(fast, b, kind));
    }
  }
  expect(ref.rates.length).toBe(fast.segmentCount);
  ref.rates.forEach((rates, s) => expect(rates).toEqual(Array.from(segmentBitRates(fast, s))));
}

describe('the fast decoder agrees with the reference decoder', () => {
  it.each(fixtureNames())(
    '%s, compressed at defaults: every key to the bit',
    (file) => {
      const bytes = compress(loadFixture(file)).bytes;
      expectSameMetadata(bytes);
      expect(firstBitDifference(bytes)).toBe('');
    },
    TIMEOUT,
  );

  it.each(fixtureNames().slice(0, 3))(
    '%s, at 0.1 cm with names stripped and identity references',
    (file) => {
      const bytes = compress(loadFixture(file), {
        error: '0.1cm',
        stripNames: true,
        checksum: false,
        rotationReference: 'identity',
        ladder: 'acl21',
      }).bytes;
      expectSameMetadata(bytes);
      expect(firstBitDifference(bytes)).toBe('');
    },
    TIMEOUT,
  );

  it('an additive clip (the additive record before the segments): its record and every key to the bit', () => {
    const clip = makeSyntheticClip({ boneCount: 9, sampleCount: 40, seed: 5, animatedScale: true });
    const bytes = compress(clip, { additive: { reference: 4 } }).bytes;
    expectSameMetadata(bytes);
    expect(referenceDecode(bytes).additive).toEqual({ mode: 1, reference: 0, frame: 4, time: 4 / 30 });
    expect(CompressedClip.open(bytes).additive?.reference).toEqual({ kind: 'frame', frame: 4, time: 4 / 30 });
    expect(firstBitDifference(bytes)).toBe('');
  });

  const RATES = [0, ...Array.from({ length: MAX_QUANTIZED_BITS }, (_, i) => i + 1), RAW_BITS];
  it.each([1, 2, 17, 24, 40, 57])('synthetic, %i samples, every rate and dropped component', (n) => {
    const clip = makeSyntheticClip({
      boneCount: 9,
      sampleCount: n,
      seed: n,
      animatedScale: true,
      maxAngleDeg: 178,
      animatedTranslationShare: 0.6,
    });
    for (const reference of ['mean', 'identity'] as const) {
      const random = mulberry32(n * 7 + (reference === 'mean' ? 1 : 2));
      const enc = encodeWithRates(clip, () => RATES[Math.floor(random() * RATES.length)], { reference });
      expectSameMetadata(enc.bytes);
      expect(firstBitDifference(enc.bytes)).toBe('');
    }
  });

  it('the synthetic files exercise every dropped component and rate 0, 1..24 and raw', () => {
    const seen = new Set<number>();
    const drops = new Set<number>();
    for (const n of [17, 40, 57]) {
      const clip = makeSyntheticClip({
        boneCount: 9,
        sampleCount: n,
        seed: n,
        animatedScale: true,
        maxAngleDeg: 178,
        animatedTranslationShare: 0.6,
      });
      const random = mulberry32(n * 7 + 2);
      const enc = encodeWithRates(clip, () => RATES[Math.floor(random() * RATES.length)], { reference: 'identity' });
      enc.rates.forEach((r) => seen.add(r));
      enc.tracks.forEach((t) => {
        if (t.kind === 0) t.drop.forEach((d) => drops.add(d));
      });
    }
    expect([...seen].sort((a, b) => a - b)).toEqual(RATES);
    expect([...drops].sort()).toEqual([0, 1, 2, 3]);
  });

  it('the reference decoder is not trivially agreeable: it notices a changed bit', () => {
    const bytes = compress(loadFixture(fixtureNames()[0]), { checksum: false }).bytes;
    const fast = CompressedClip.open(bytes);
    const changed = bytes.slice();
    // Flip a bit inside the last segment's packed keys (before the names).
    changed[bytes.length - sectionSizes(fast).names - 5] ^= 0x10;
    const a = referenceDecode(bytes).keys,
      b = referenceDecode(changed).keys;
    expect(a.some((key, k) => key.some((v, i) => v !== b[k][i]))).toBe(true);
  });
});

describe('the reference decoder on glTF sources (node indices, channel and step bitsets, start time)', () => {
  it(
    'agrees with the fast decoder on every rig of test/utils/gltf-rigs.ts',
    async () => {
      for (const rig of await makeRigs()) {
        for (const clip of await readGltf(rig.glb, `${rig.name}.glb`)) {
          const bytes = compress(clip).bytes;
          expectSameMetadata(bytes);
          expect(firstBitDifference(bytes), `${rig.name} ${clip.name}`).toBe('');
        }
      }
      const step = referenceDecode(
        compress((await readGltf((await makeRigs()).find((r) => r.name === 'step')!.glb, 'step.glb'))[0]).bytes,
      );
      expect(step.nodeIndices).toBeDefined();
      expect(step.steps.some(Boolean)).toBe(true);
      expect(step.startTime).toBeCloseTo(0.2, 6);
    },
    TIMEOUT,
  );
});
