import { describe, expect, it } from 'vitest';

import { NetError, ReadStream, WriteStream, bitsRequired } from '../../src/net/bit-stream.js';
import { createSnapshotSchema } from '../../src/net/schema.js';
import { CODE_STRIDE, PoseQuantizer, createSnapshotCodes, dequantizePose } from '../../src/net/quantize.js';
import { DELTA_SHIFT_BITS, SnapshotCodec } from '../../src/net/snapshot.js';
import { makeSyntheticClip } from '../utils/synthetic.js';
import { clipPoses, loadFixture, mulberry32 } from './helpers.js';

describe('snapshot codes', () => {
  const clip = loadFixture('dataset-1_kick_normal_001');
  const schema = createSnapshotSchema(clip);
  const quantizer = new PoseQuantizer(schema);
  const codec = new SnapshotCodec(schema);
  const codes = clipPoses(clip).map((pose) => quantizer.quantize(pose, createSnapshotCodes(schema)).slice());

  /** The codes of sent slots (the others mean nothing and decoders leave them alone). */
  const sent = (c: Int32Array): number[] => Array.from(c).filter((_, i) => schema.codeBits[i] > 0);

  function absolute(c: Int32Array): { bytes: Uint8Array; bits: number } {
    const w = new WriteStream();
    codec.serializeAbsolute(w, c.slice());
    return { bits: w.bitOffset, bytes: w.finish() };
  }

  function delta(c: Int32Array, base: Int32Array): { bytes: Uint8Array; bits: number } {
    const w = new WriteStream();
    codec.serializeDelta(w, c.slice(), base);
    return { bits: w.bitOffset, bytes: w.finish() };
  }

  function readDelta(bytes: Uint8Array, base: Int32Array): Int32Array {
    const out = createSnapshotCodes(schema).fill(-7);
    const r = new ReadStream(bytes);
    codec.serializeDelta(r, out, base);
    r.finish();
    return out;
  }

  it('absolute snapshots round-trip every sample and cost at most the schema bits', () => {
    for (const c of codes) {
      const { bytes, bits } = absolute(c);
      expect(bits).toBeLessThanOrEqual(schema.absoluteBits);
      const out = createSnapshotCodes(schema).fill(-7);
      const r = new ReadStream(bytes);
      codec.serializeAbsolute(r, out);
      r.finish();
      expect(sent(out)).toEqual(sent(c));
    }
  });

  it('a bone at its default pose costs one bit in an absolute snapshot', () => {
    const pose = new Float32Array(schema.defaultPose);
    const c = quantizer.quantize(pose, createSnapshotCodes(schema));
    expect(Array.from(c)).toEqual(Array.from(schema.defaultCodes));
    expect(absolute(c).bits).toBe(schema.sentBones.length);
  });

  it('delta snapshots round-trip against every baseline in a 64-snapshot window', () => {
    for (let t = 64; t < codes.length; t += 9) {
      for (let back = 1; back < 64; back++) {
        const { bytes } = delta(codes[t], codes[t - back]);
        expect(sent(readDelta(bytes, codes[t - back]))).toEqual(sent(codes[t]));
      }
    }
  });

  it('an unchanged snapshot costs about a bit per sent bone, and few changes list their indices', () => {
    const base = codes[10];
    // "Not all changed", "by index", a count of 0, "no new smallest-three index", the width shift.
    expect(delta(base, base).bits).toBe(3 + bitsRequired(schema.sentBones.length) + DELTA_SHIFT_BITS);
    const changed = base.slice();
    const b = schema.sentBones[schema.sentBones.length - 1] * CODE_STRIDE;
    changed[b + 1] = changed[b + 1] === 0 ? 1 : changed[b + 1] - 1;
    const { bytes, bits } = delta(changed, base);
    // Cheaper than one flag per bone would be.
    expect(bits).toBeLessThan(3 + schema.sentBones.length + DELTA_SHIFT_BITS + 3 * (2 + schema.codeBits[b + 1]));
    expect(sent(readDelta(bytes, base))).toEqual(sent(changed));
  });

  it('round-trips codes at the edges of their range and a new smallest-three index', () => {
    const random = mulberry32(9);
    for (let i = 0; i < 300; i++) {
      const base = codes[Math.floor(random() * codes.length)];
      const c = base.slice();
      for (let k = 0; k < c.length; k++) {
        const bits = schema.codeBits[k];
        if (bits === 0) continue;
        const max = 2 ** bits - 1;
        const pick = random();
        c[k] = pick < 0.2 ? 0 : pick < 0.4 ? max : pick < 0.7 ? Math.floor(random() * (max + 1)) : c[k];
        if (k % CODE_STRIDE === 0) c[k] = Math.floor(random() * 4);
      }
      expect(sent(readDelta(delta(c, base).bytes, base))).toEqual(sent(c));
    }
  });

  it('decodes poses within the schema bound', () => {
    const pose = new Float32Array(schema.boneCount * 10);
    dequantizePose(schema, codes[0], pose);
    for (let b = 0; b < schema.boneCount; b++) {
      const q = pose.subarray(b * 10, b * 10 + 4);
      expect(Math.hypot(q[0], q[1], q[2], q[3])).toBeCloseTo(1, 5);
    }
  });

  it('rejects damaged deltas with NetError only', () => {
    const random = mulberry32(21);
    let rejected = 0;
    for (let i = 0; i < 400; i++) {
      const t = 20 + Math.floor(random() * (codes.length - 20));
      const { bytes } = delta(codes[t], codes[t - 6]);
      const bad = bytes.slice();
      bad[Math.floor(random() * bad.length)] ^= 1 << Math.floor(random() * 8);
      try {
        readDelta(bad.subarray(0, random() < 0.3 ? Math.floor(random() * bad.length) : bad.length), codes[t - 6]);
      } catch (e) {
        expect(e).toBeInstanceOf(NetError);
        rejected++;
      }
    }
    // Without a packet check some flips decode to other valid codes; many do not.
    expect(rejected).toBeGreaterThan(100);
  });

  it('works for a skeleton with scale tracks', () => {
    const synthetic = makeSyntheticClip({
      boneCount: 10,
      sampleCount: 40,
      seed: 8,
      animatedScale: true,
      animatedTranslationShare: 0.4,
    });
    const s = createSnapshotSchema(synthetic);
    const q = new PoseQuantizer(s),
      c = new SnapshotCodec(s);
    const all = clipPoses(synthetic).map((p) => q.quantize(p, createSnapshotCodes(s)).slice());
    for (let t = 1; t < all.length; t++) {
      const w = new WriteStream();
      c.serializeDelta(w, all[t].slice(), all[t - 1]);
      const out = createSnapshotCodes(s);
      const r = new ReadStream(w.finish());
      c.serializeDelta(r, out, all[t - 1]);
      r.finish();
      expect(Array.from(out)).toEqual(Array.from(all[t]));
    }
  });
});
