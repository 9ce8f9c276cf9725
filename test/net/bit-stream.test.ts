import { describe, expect, it } from 'vitest';

import {
  NET_ERROR,
  NetError,
  ReadStream,
  WriteStream,
  bitsRequired,
  type BitStream,
} from '../../src/net/bit-stream.js';
import { mulberry32 } from './helpers.js';

/** One message description, run by both streams: the point of a symmetric stream. */
interface Message {
  widths: number[];
  values: number[];
  flag: boolean;
  small: number;
  signed: number;
  f: number;
  raw: number;
}

function serializeMessage(stream: BitStream, m: Message): void {
  for (let i = 0; i < m.widths.length; i++) m.values[i] = stream.serializeBits(m.values[i], m.widths[i]);
  m.flag = stream.serializeBool(m.flag);
  m.small = stream.serializeInt(m.small, 3, 9);
  m.signed = stream.serializeInt(m.signed, -1000, 1000);
  m.f = stream.serializeFloatBounded(m.f, -2, 5, 12);
  m.raw = stream.serializeFloat32(m.raw);
}

function roundTrip(bytes: Uint8Array, widths: number[]): Message {
  const out: Message = { widths, values: widths.map(() => 0), flag: false, small: 0, signed: 0, f: 0, raw: 0 };
  const reader = new ReadStream(bytes);
  serializeMessage(reader, out);
  reader.finish();
  return out;
}

describe('bitsRequired', () => {
  it('counts the bits of 0..range', () => {
    expect([0, 1, 2, 3, 4, 255, 256, 2 ** 32 - 1].map(bitsRequired)).toEqual([0, 1, 2, 2, 3, 8, 9, 32]);
  });
});

describe('WriteStream / ReadStream', () => {
  it('round-trips seeded values at every width 1..32, alone and packed together', () => {
    const random = mulberry32(7);
    for (let width = 1; width <= 32; width++) {
      const values: number[] = [];
      for (let i = 0; i < 50; i++) values.push(Math.floor(random() * 2 ** width));
      values.push(0, 2 ** width - 1); // edges
      const writer = new WriteStream(4);
      for (const v of values) expect(writer.serializeBits(v, width)).toBe(v);
      const reader = new ReadStream(writer.finish());
      for (const v of values) expect(reader.serializeBits(0, width)).toBe(v);
      reader.finish();
    }
    // Mixed widths in one stream cross word boundaries at every offset.
    const widths: number[] = [],
      values: number[] = [];
    for (let i = 0; i < 2000; i++) {
      const w = 1 + Math.floor(random() * 32);
      widths.push(w);
      values.push(Math.floor(random() * 2 ** w));
    }
    const m: Message = {
      widths,
      values: [...values],
      flag: true,
      small: 7,
      signed: -123,
      f: 1.2345,
      raw: Math.fround(-3.75e-7),
    };
    const writer = new WriteStream();
    serializeMessage(writer, m);
    const back = roundTrip(writer.finish(), widths);
    expect(back.values).toEqual(values);
    expect(back.flag).toBe(true);
    expect(back.small).toBe(7);
    expect(back.signed).toBe(-123);
    expect(back.raw).toBe(Math.fround(-3.75e-7));
    // The writer returned what the reader gets back.
    expect(back.f).toBe(m.f);
    expect(Math.abs(back.f - 1.2345)).toBeLessThanOrEqual(7 / (2 ** 12 - 1) / 2 + 1e-12);
  });

  it('clamps bounded floats to their range on both sides alike', () => {
    const writer = new WriteStream();
    const lo = writer.serializeFloatBounded(-10, -1, 1, 8);
    const hi = writer.serializeFloatBounded(10, -1, 1, 8);
    const reader = new ReadStream(writer.finish());
    expect(reader.serializeFloatBounded(0, -1, 1, 8)).toBe(lo);
    expect(reader.serializeFloatBounded(0, -1, 1, 8)).toBe(hi);
    expect([lo, hi]).toEqual([-1, 1]);
  });

  it('throws PACKET_TRUNCATED when reading past the end, at every cut', () => {
    const writer = new WriteStream();
    for (let i = 0; i < 20; i++) writer.serializeBits(i * 37, 13);
    const bytes = writer.finish();
    for (let cut = 0; cut < bytes.length; cut++) {
      const reader = new ReadStream(bytes.subarray(0, cut));
      let error: unknown;
      try {
        for (let i = 0; i < 20; i++) reader.serializeBits(0, 13);
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(NetError);
      expect((error as NetError).code).toBe(NET_ERROR.PACKET_TRUNCATED);
    }
  });

  it('rejects left-over bytes, non-zero padding and out-of-range integers with BAD_VALUE', () => {
    const writer = new WriteStream();
    writer.serializeBits(5, 3);
    const bytes = writer.finish();
    const long = new Uint8Array([bytes[0], 0]);
    const reader = new ReadStream(long);
    reader.serializeBits(0, 3);
    expect(() => reader.finish()).toThrow(expect.objectContaining({ code: NET_ERROR.BAD_VALUE }));
    const padded = new ReadStream(new Uint8Array([bytes[0] | 0x80]));
    padded.serializeBits(0, 3);
    expect(() => padded.finish()).toThrow(expect.objectContaining({ code: NET_ERROR.BAD_VALUE }));
    // 0..5 takes 3 bits; 6 and 7 are not values.
    const bad = new ReadStream(new Uint8Array([7]));
    expect(() => bad.serializeInt(0, 0, 5)).toThrow(expect.objectContaining({ code: NET_ERROR.BAD_VALUE }));
  });

  it('refuses to write what the description does not allow', () => {
    const writer = new WriteStream();
    expect(() => writer.serializeBits(8, 3)).toThrow(NetError);
    expect(() => writer.serializeBits(-1, 3)).toThrow(NetError);
    expect(() => writer.serializeBits(1.5, 3)).toThrow(NetError);
    expect(() => writer.serializeInt(10, 0, 9)).toThrow(expect.objectContaining({ code: NET_ERROR.BAD_ARGUMENT }));
  });

  it('aligns to bytes with zero bits on both sides', () => {
    const writer = new WriteStream();
    writer.serializeBits(1, 1);
    writer.align();
    writer.serializeBits(0xab, 8);
    const bytes = writer.finish();
    expect(Array.from(bytes)).toEqual([1, 0xab]);
    const reader = new ReadStream(bytes);
    expect(reader.serializeBits(0, 1)).toBe(1);
    reader.align();
    expect(reader.serializeBits(0, 8)).toBe(0xab);
    const dirty = new ReadStream(new Uint8Array([3, 0xab]));
    dirty.serializeBits(0, 1);
    expect(() => dirty.align()).toThrow(expect.objectContaining({ code: NET_ERROR.BAD_VALUE }));
  });

  it('reuses a reader across packets', () => {
    const reader = new ReadStream();
    for (let n = 1; n < 300; n += 37) {
      const writer = new WriteStream(1);
      for (let i = 0; i < n; i++) writer.serializeBits(i & 0xff, 8);
      reader.reset(writer.finish());
      for (let i = 0; i < n; i++) expect(reader.serializeBits(0, 8)).toBe(i & 0xff);
      reader.finish();
    }
  });
});
