import { describe, expect, it } from 'vitest';

import { NetError } from '../../src/net/bit-stream.js';
import {
  EntropyCodec,
  SnapshotRangeDecoder,
  SnapshotRangeEncoder,
  UNKNOWN_CLASS,
  deltaClass,
} from '../../src/net/entropy.js';
import { PoseQuantizer, createSnapshotCodes } from '../../src/net/quantize.js';
import { createSnapshotSchema } from '../../src/net/schema.js';
import { clipPoses, loadFixture, mulberry32 } from './helpers.js';

describe('range coder', () => {
  it('round-trips modelled and flat bits with skewed, adapting probabilities', () => {
    const random = mulberry32(13);
    for (let trial = 0; trial < 50; trial++) {
      const count = Math.floor(random() * 400);
      const ops: { kind: 'bit' | 'flat'; value: number; bits: number; model: number }[] = [];
      const skew = random();
      for (let i = 0; i < count; i++) {
        if (random() < 0.7)
          ops.push({ kind: 'bit', value: random() < skew ? 1 : 0, bits: 1, model: Math.floor(random() * 4) });
        else {
          const bits = Math.floor(random() * 25);
          ops.push({ kind: 'flat', value: Math.floor(random() * 2 ** bits), bits, model: 0 });
        }
      }
      const enc = new SnapshotRangeEncoder();
      const encModels = new Uint16Array(4).fill(2048);
      for (const op of ops) {
        if (op.kind === 'bit') enc.codeBit(op.value, encModels, op.model);
        else enc.codeDirect(op.value, op.bits);
      }
      const bytes = enc.finish();
      const dec = new SnapshotRangeDecoder(bytes);
      const decModels = new Uint16Array(4).fill(2048);
      for (const op of ops) {
        const v = op.kind === 'bit' ? dec.codeBit(0, decModels, op.model) : dec.codeDirect(0, op.bits);
        expect(v).toBe(op.value);
      }
      dec.finish();
      expect(Array.from(decModels)).toEqual(Array.from(encModels));
    }
  });

  it('spends well under a bit on a predictable bit', () => {
    const enc = new SnapshotRangeEncoder();
    const models = new Uint16Array(1).fill(2048);
    for (let i = 0; i < 1000; i++) enc.codeBit(1, models, 0);
    expect(enc.finish().length * 8).toBeLessThan(100);
  });

  it('rejects trailing garbage and never throws anything but NetError on random bytes', () => {
    const enc = new SnapshotRangeEncoder();
    enc.codeDirect(5, 3);
    const bytes = enc.finish();
    const long = new Uint8Array(bytes.length + 6).fill(0x55);
    long.set(bytes);
    const dec = new SnapshotRangeDecoder(long);
    dec.codeDirect(0, 3);
    expect(() => dec.finish()).toThrow(NetError);
    const random = mulberry32(2);
    for (let i = 0; i < 200; i++) {
      const junk = Uint8Array.from({ length: Math.floor(random() * 12) }, () => Math.floor(random() * 256));
      try {
        const d = new SnapshotRangeDecoder(junk);
        const m = new Uint16Array(2).fill(2048);
        for (let k = 0; k < 50; k++) d.codeBit(0, m, k & 1);
        d.finish();
      } catch (e) {
        expect(e).toBeInstanceOf(NetError);
      }
    }
  });
});

describe('entropy codec', () => {
  const clip = loadFixture('dataset-1_dash_normal_001');
  const schema = createSnapshotSchema(clip);
  const quantizer = new PoseQuantizer(schema);
  const codes = clipPoses(clip).map((pose) => quantizer.quantize(pose, createSnapshotCodes(schema)).slice());
  const codec = new EntropyCodec(schema);
  const sent = (c: Int32Array): number[] => Array.from(c).filter((_, i) => schema.codeBits[i] > 0);

  it('classes are bit lengths of magnitudes', () => {
    expect([0, 1, -1, 2, 3, -4, 255, -256].map(deltaClass)).toEqual([0, 1, 1, 2, 2, 3, 8, 9]);
  });

  it('round-trips absolute and delta bodies against every baseline of a chain, states equal on both ends', () => {
    // A chain like a session's: each snapshot is coded against one a few ticks back, from that one's state.
    const states = codes.map(() => codec.createState());
    const decodedStates = codes.map(() => codec.createState());
    for (let t = 0; t < codes.length; t++) {
      const back = t === 0 ? 0 : 1 + (t % 9);
      const b = t - back;
      const enc = new SnapshotRangeEncoder();
      codec.serialize(enc, codes[t].slice(), back ? codes[b] : null, back ? states[b] : null, back, states[t]);
      const bytes = enc.finish();
      const out = createSnapshotCodes(schema).fill(-3);
      const dec = new SnapshotRangeDecoder(bytes);
      codec.serialize(dec, out, back ? codes[b] : null, back ? decodedStates[b] : null, back, decodedStates[t]);
      dec.finish();
      expect(sent(out)).toEqual(sent(codes[t]));
      expect(Array.from(decodedStates[t].probabilities)).toEqual(Array.from(states[t].probabilities));
      expect(Array.from(decodedStates[t].classes)).toEqual(Array.from(states[t].classes));
      if (back === 0) expect(states[t].classes.every((c) => c === UNKNOWN_CLASS)).toBe(true);
    }
  });

  it('rejects damaged bodies with NetError only', () => {
    const random = mulberry32(17);
    const base = codec.createState(),
      first = codec.createState();
    codec.recordPlain(codes[0], null, null, 0, first);
    codec.recordPlain(codes[6], codes[0], first, 6, base);
    let rejected = 0;
    for (let i = 0; i < 300; i++) {
      const enc = new SnapshotRangeEncoder();
      codec.serialize(enc, codes[12].slice(), codes[6], base, 6, codec.createState());
      const bytes = enc.finish();
      const bad = bytes.slice(0, random() < 0.3 ? Math.floor(random() * bytes.length) : bytes.length);
      if (bad.length > 0) bad[Math.floor(random() * bad.length)] ^= 1 << Math.floor(random() * 8);
      try {
        const dec = new SnapshotRangeDecoder(bad);
        codec.serialize(dec, createSnapshotCodes(schema), codes[6], base, 6, codec.createState());
        dec.finish();
      } catch (e) {
        expect(e).toBeInstanceOf(NetError);
        rejected++;
      }
    }
    expect(rejected).toBeGreaterThan(0);
  });
});
