import { describe, expect, it } from 'vitest';

import { NET_ERROR, NetError, WriteStream, ReadStream } from '../../src/net/bit-stream.js';
import { buildWorldSchema, entityField, rigidBodyBits, type WorldSchema } from '../../src/net/world-schema.js';
import { WorldCodec, WorldSnapshot, WorldState, serializeGolomb } from '../../src/net/world-codec.js';
import { rigidBodyError } from '../../src/net/world-error.js';
import { createSnapshotSchema } from '../../src/net/schema.js';
import { catchError, clipPoses, loadFixture, mulberry32, poseError } from './helpers.js';

/** A world with every field kind: a prop (rigid box), a pawn (sphere, custom fields, a pose). */
function testSchema(): WorldSchema {
  const clip = loadFixture('dataset-1_byebye_angry_001');
  return buildWorldSchema({
    maxEntities: 300,
    types: {
      prop: {
        fields: {
          position: { kind: 'position', min: [-50, -50, 0], max: [50, 50, 10] },
          orientation: { kind: 'orientation' },
          scale: { kind: 'scale', min: 0.5, max: 2, precision: 0.001 },
        },
        rigidBody: { position: 'position', orientation: 'orientation', halfExtents: [0.5, 1, 0.25], precision: 0.002 },
      },
      pawn: {
        fields: {
          position: { kind: 'position', min: [-50, -50, 0], max: [50, 50, 10] },
          orientation: { kind: 'orientation' },
          health: { kind: 'int', min: 0, max: 100 },
          stamina: { kind: 'float', min: 0, max: 1, precision: 0.01 },
          crouching: { kind: 'bool' },
          weapon: { kind: 'enum', values: ['none', 'sword', 'bow'] },
          pose: { kind: 'pose', schema: createSnapshotSchema(clip) },
        },
        rigidBody: { position: 'position', orientation: 'orientation', radius: 1, precision: 0.005 },
      },
    },
  });
}

function randomQuaternion(random: () => number, out: Float32Array, o: number): void {
  let x = random() * 2 - 1,
    y = random() * 2 - 1,
    z = random() * 2 - 1,
    w = random() * 2 - 1;
  const l = Math.hypot(x, y, z, w);
  x /= l;
  y /= l;
  z /= l;
  w /= l;
  out[o] = x;
  out[o + 1] = y;
  out[o + 2] = z;
  out[o + 3] = w;
}

describe('world schema', () => {
  it('derives position and orientation bits that hold the precision at every corner of the body', () => {
    const schema = testSchema();
    const prop = schema.types[0];
    expect(prop.rigidBodyErrorBound).toBeLessThanOrEqual(0.002);
    const random = mulberry32(3);
    const state = new WorldState(schema),
      decoded = new WorldState(schema),
      snap = new WorldSnapshot(schema);
    for (let id = 0; id < 200; id++) {
      state.spawn(id, 'prop');
      const p = state.field(id, 'position'),
        q = state.field(id, 'orientation');
      p[0] = random() * 100 - 50;
      p[1] = random() * 100 - 50;
      p[2] = random() * 10;
      randomQuaternion(random, q, 0);
    }
    snap.quantize(state).dequantize(decoded);
    let worst = 0;
    for (let id = 0; id < 200; id++)
      worst = Math.max(
        worst,
        rigidBodyError(prop, state.values, state.valueOffset(id), decoded.values, decoded.valueOffset(id)),
      );
    expect(worst).toBeLessThanOrEqual(0.002);
    expect(worst).toBeGreaterThan(0.0002); // the bound is used, not wasted
  });

  it('spends fewer bits for a looser precision or a smaller body', () => {
    const a = rigidBodyBits([-64, -64, 0], [64, 64, 16], 0.866, 0.003, 'a');
    const b = rigidBodyBits([-64, -64, 0], [64, 64, 16], 0.866, 0.01, 'b');
    const c = rigidBodyBits([-64, -64, 0], [64, 64, 16], 0.1, 0.003, 'c');
    const total = (x: typeof a) => x.positionBits.reduce((s, v) => s + v, 0) + 3 * x.orientationBits;
    expect(total(b)).toBeLessThan(total(a));
    expect(total(c)).toBeLessThan(total(a));
    for (const x of [a, b, c]) expect(x.bound).toBeLessThanOrEqual(x === b ? 0.01 : 0.003);
  });

  it('rejects bad descriptions with a message naming the type and field', () => {
    const bad = (spec: Parameters<typeof buildWorldSchema>[0]) => catchError(() => buildWorldSchema(spec)) as NetError;
    let e = bad({
      maxEntities: 10,
      types: { t: { fields: { p: { kind: 'position', min: [0, 0, 0], max: [1, -1, 1], precision: 0.01 } } } },
    });
    expect(e).toBeInstanceOf(NetError);
    expect(e.message).toContain('entity type "t" field "p"');
    e = bad({
      maxEntities: 10,
      types: { t: { fields: { f: { kind: 'float', min: 0, max: 1e12, precision: 1e-9 } } } },
    });
    expect(e.message).toContain('needs');
    e = bad({ maxEntities: 0, types: { t: { fields: { b: { kind: 'bool' } } } } });
    expect(e.message).toContain('maxEntities');
    e = bad({
      maxEntities: 10,
      types: {
        t: { fields: { b: { kind: 'bool' } }, rigidBody: { position: 'b', orientation: 'b', radius: 1, precision: 1 } },
      },
    });
    expect(e.message).toContain('not a position field');
  });
});

describe('exp-Golomb codes', () => {
  it('round-trip every order over small and large values', () => {
    const values = [0, 1, 2, 3, 7, 8, 100, 65535, 2 ** 20 + 3, 2 ** 31];
    for (let k = 0; k <= 15; k++) {
      const w = new WriteStream(64);
      for (const v of values) serializeGolomb(w, v, k);
      const r = new ReadStream(w.finish());
      for (const v of values) expect(serializeGolomb(r, 0, k)).toBe(v);
    }
  });

  it('rejects a run of more than 31 zeros', () => {
    const e = catchError(() => serializeGolomb(new ReadStream(new Uint8Array(8)), 0, 0)) as NetError;
    expect(e.code).toBe(NET_ERROR.BAD_VALUE);
  });
});

describe('world delta bodies', () => {
  const schema = testSchema();
  const clip = loadFixture('dataset-1_byebye_angry_001');
  const poses = clipPoses(clip);
  const pawn = schema.types[1];
  const poseSchema = entityField(pawn, 'pose').pose!;

  function roundTrip(
    codec: WorldCodec,
    current: WorldSnapshot,
    baseline: WorldSnapshot | null,
  ): { bits: number; out: WorldSnapshot } {
    const w = new WriteStream(1024);
    codec.serialize(w, current, baseline);
    const bits = w.bitOffset;
    const r = new ReadStream(w.finish());
    const out = new WorldSnapshot(schema);
    new WorldCodec(schema).serialize(r, out, baseline);
    r.finish();
    out.rehash();
    return { bits, out };
  }

  it('spawns, changes and despawns every field kind, and decodes each snapshot exactly', () => {
    const random = mulberry32(5);
    const state = new WorldState(schema);
    const codec = new WorldCodec(schema);
    let baseline: WorldSnapshot | null = null;
    for (let step = 0; step < 40; step++) {
      for (let k = 0; k < 30; k++) {
        const id = Math.floor(random() * schema.maxEntities);
        const r = random();
        if (r < 0.15) state.despawn(id);
        else if (!state.typeOf(id) || r < 0.3) state.spawn(id, random() < 0.7 ? 'prop' : 'pawn');
        const type = state.typeOf(id);
        if (!type) continue;
        const p = state.field(id, 'position');
        p[0] += random() - 0.5;
        p[1] += random() - 0.5;
        p[2] = random() * 10;
        randomQuaternion(random, state.field(id, 'orientation'), 0);
        if (type.name === 'pawn') {
          state.field(id, 'health')[0] = Math.floor(random() * 101);
          state.field(id, 'stamina')[0] = random();
          state.field(id, 'crouching')[0] = random() < 0.5 ? 1 : 0;
          state.field(id, 'weapon')[0] = Math.floor(random() * 3);
          state.field(id, 'pose').set(poses[Math.floor(random() * poses.length)]);
        } else {
          state.field(id, 'scale')[0] = 0.5 + random() * 1.5;
        }
      }
      const current = new WorldSnapshot(schema).quantize(state);
      const { out } = roundTrip(codec, current, baseline);
      expect(Array.from(out.types)).toEqual(Array.from(current.types));
      expect(out.hash).toBe(current.hash);
      baseline = current;
    }
  });

  it('costs nothing for entities at rest: the body grows with the changed entities only', () => {
    const state = new WorldState(schema);
    for (let id = 0; id < 250; id++) {
      state.spawn(id, 'prop');
      const p = state.field(id, 'position');
      p[0] = (id % 20) * 2 - 20;
      p[1] = Math.floor(id / 20) * 2 - 20;
      p[2] = 0.25;
    }
    const codec = new WorldCodec(schema);
    const base = new WorldSnapshot(schema).quantize(state);
    expect(roundTrip(codec, base, base).bits).toBeLessThanOrEqual(16); // a count and a flag per type
    state.field(17, 'position')[0] += 0.1;
    const one = new WorldSnapshot(schema).quantize(state);
    const { bits, out } = roundTrip(codec, one, base);
    expect(out.hash).toBe(one.hash);
    expect(bits).toBeLessThan(80);
  });

  it('codes a pose field with the pose snapshot coding, within the pose schema bound', () => {
    const state = new WorldState(schema);
    state.spawn(3, 'pawn');
    const codec = new WorldCodec(schema);
    let baseline: WorldSnapshot | null = null;
    const decoded = new WorldState(schema);
    for (let t = 0; t < poses.length; t += 5) {
      state.field(3, 'pose').set(poses[t]);
      const current = new WorldSnapshot(schema).quantize(state);
      const { out } = roundTrip(codec, current, baseline);
      out.dequantize(decoded);
      expect(
        poseError(poses[t], decoded.field(3, 'pose'), poseSchema.parents, poseSchema.shellDistances),
      ).toBeLessThanOrEqual(poseSchema.threshold);
      baseline = current;
    }
  });

  it('rejects damaged bodies with a NetError, never another exception', () => {
    const random = mulberry32(9);
    const state = new WorldState(schema);
    for (let id = 0; id < 60; id++) {
      state.spawn(id, id % 3 === 0 ? 'pawn' : 'prop');
      state.field(id, 'position')[0] = random() * 10;
    }
    const base = new WorldSnapshot(schema).quantize(state);
    for (let id = 0; id < 60; id += 2) state.field(id, 'position')[1] = random() * 10;
    const current = new WorldSnapshot(schema).quantize(state);
    const w = new WriteStream(1024);
    new WorldCodec(schema).serialize(w, current, base);
    const bytes = w.finish();
    const codec = new WorldCodec(schema),
      out = new WorldSnapshot(schema);
    for (let trial = 0; trial < 300; trial++) {
      const damaged = bytes.slice(0, trial % 3 === 0 ? Math.floor(random() * bytes.length) : bytes.length);
      if (damaged.length > 0) damaged[Math.floor(random() * damaged.length)] ^= 1 << Math.floor(random() * 8);
      const e = catchError(() => {
        const r = new ReadStream(damaged);
        codec.serialize(r, out, base);
        r.finish();
      });
      if (e !== undefined) expect(e).toBeInstanceOf(NetError);
    }
  });
});
