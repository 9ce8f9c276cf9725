import { describe, expect, it } from 'vitest';

import { NET_ERROR, NetError } from '../../src/net/bit-stream.js';
import { FRAGMENT_HEADER_BYTES, Reassembler, fragmentMessage, resolveFragmentOptions } from '../../src/net/fragment.js';
import { buildWorldSchema, type WorldSchema } from '../../src/net/world-schema.js';
import { WorldState } from '../../src/net/world-codec.js';
import { WorldClient, WorldServer, type WorldReceived } from '../../src/net/world-session.js';
import { SnapshotInterpolator } from '../../src/net/interpolation.js';
import { CubeScene } from '../../src/net/cube-scene.js';
import { simulateWorld } from '../../src/net/world-netsim.js';
import { catchError, mulberry32 } from './helpers.js';

function smallWorld(maxEntities = 64): WorldSchema {
  return buildWorldSchema({
    maxEntities,
    types: {
      box: {
        fields: {
          position: { kind: 'position', min: [-10, -10, -10], max: [10, 10, 10] },
          orientation: { kind: 'orientation' },
          on: { kind: 'bool' },
        },
        rigidBody: { position: 'position', orientation: 'orientation', halfExtents: [0.5, 0.5, 0.5], precision: 0.001 },
      },
    },
  });
}

/** Moves every box a little: a world where everything changes every tick. */
function animate(state: WorldState, tick: number, count: number): void {
  for (let id = 0; id < count; id++) {
    if (!state.typeOf(id)) state.spawn(id, 'box');
    const p = state.field(id, 'position');
    p[0] = Math.sin(tick * 0.05 + id);
    p[1] = Math.cos(tick * 0.03 + id);
    p[2] = id * 0.1 - 3;
    const q = state.field(id, 'orientation');
    q[0] = 0;
    q[1] = 0;
    q[2] = Math.sin(tick * 0.02 + id);
    q[3] = Math.cos(tick * 0.02 + id);
    state.field(id, 'on')[0] = (tick >> 4) & 1;
  }
}

interface Link {
  at: number;
  bytes: Uint8Array;
  tick: number;
}

describe('world sessions', () => {
  it("serves several clients over lossy, reordering links; every decoded snapshot is the server's", () => {
    const schema = smallWorld();
    const server = new WorldServer(schema, { mtu: 200 });
    const clients = [0, 1, 2].map(() => ({
      id: server.addClient(),
      client: new WorldClient(schema, { mtu: 200 }),
      down: [] as Link[],
      up: [] as Link[],
    }));
    const random = mulberry32(4);
    const state = new WorldState(schema);
    const hashes: number[] = [];
    let decoded = 0,
      deltas = 0,
      fragmented = 0;
    for (let tick = 0; tick < 400; tick++) {
      animate(state, tick, tick < 200 ? 60 : 20); // the first ticks need fragments at a 200-byte MTU
      if (tick === 200) for (let id = 20; id < 60; id++) state.despawn(id);
      server.tick(state);
      hashes.push(server.current.hash);
      for (const c of clients) {
        for (const a of c.up.filter((x) => x.at <= tick)) {
          server.receiveAck(c.id, a.bytes);
          c.up.splice(c.up.indexOf(a), 1);
        }
        const datagrams = server.packetsFor(c.id);
        if (datagrams.length > 1) fragmented++;
        if (server.lastPacket(c.id)!.baselineSequence >= 0) deltas++;
        for (const d of datagrams)
          if (random() > 0.1) c.down.push({ at: tick + 1 + Math.floor(random() * 5), bytes: d, tick });
        const due = c.down.filter((x) => x.at <= tick).sort(() => random() - 0.5);
        for (const d of due) {
          c.down.splice(c.down.indexOf(d), 1);
          let got: WorldReceived | undefined;
          const e = catchError(() => {
            got = c.client.receive(d.bytes);
          });
          if (e !== undefined) {
            expect(e).toBeInstanceOf(NetError);
            continue;
          }
          if (!got) continue;
          decoded++;
          expect(got.snapshot.hash).toBe(hashes[d.tick]);
          expect(got.tick).toBe(d.tick);
          if (random() > 0.1) c.up.push({ at: tick + 1 + Math.floor(random() * 4), bytes: c.client.ack(), tick });
        }
      }
    }
    expect(decoded).toBeGreaterThan(900);
    expect(deltas).toBeGreaterThan(1000);
    expect(fragmented).toBeGreaterThan(0);
  });

  it('does not stall when 10 consecutive acks are lost: deltas continue against older baselines', () => {
    const schema = smallWorld();
    const server = new WorldServer(schema);
    const id = server.addClient();
    const client = new WorldClient(schema);
    const state = new WorldState(schema);
    const acks: Link[] = [];
    let absoluteAfterJoin = 0,
      maxAge = 0,
      joined = false;
    for (let tick = 0; tick < 200; tick++) {
      animate(state, tick, 30);
      server.tick(state);
      while (acks.length > 0 && acks[0].at <= tick) {
        server.receiveAck(id, acks.shift()!.bytes);
        joined = true;
      }
      const [packet] = server.packetsFor(id);
      const info = server.lastPacket(id)!;
      if (info.baselineSequence < 0 && joined) absoluteAfterJoin++;
      if (info.baselineSequence >= 0)
        maxAge = Math.max(maxAge, (info.sequence - info.baselineSequence + 65536) % 65536);
      const got = client.receive(packet)!;
      expect(got.snapshot.hash).toBe(server.current.hash);
      const lost = tick >= 100 && tick < 110;
      if (!lost) acks.push({ at: tick + 3, bytes: client.ack(), tick });
    }
    expect(absoluteAfterJoin).toBe(0);
    expect(maxAge).toBeGreaterThanOrEqual(13);
    expect(maxAge).toBeLessThan(20);
    // The ack fields told the server about every snapshot, the ones whose own acks were lost
    // too: all of the last 64 but the 3 whose acks are still in flight.
    expect(server.receivedInWindow(id)).toBe(61);
  });

  it('expires acks across a 65,536-tick outage and never accepts a wrong snapshot after it', () => {
    const schema = smallWorld(4);
    const server = new WorldServer(schema, { windowSize: 16 });
    const id = server.addClient();
    const client = new WorldClient(schema, { windowSize: 16 });
    const state = new WorldState(schema);
    const acks: Link[] = [];
    let accepted = 0,
      wrong = 0;
    for (let tick = 0; tick < 65536 + 300; tick++) {
      animate(state, tick, 4);
      server.tick(state);
      const down = tick >= 100 && tick < 100 + 65536;
      while (acks.length > 0 && acks[0].at <= tick) server.receiveAck(id, acks.shift()!.bytes);
      if (down) continue; // every packet lost: no need to code them
      const [packet] = server.packetsFor(id);
      const e = catchError(() => {
        const got = client.receive(packet)!;
        accepted++;
        if (got.snapshot.hash !== server.current.hash) wrong++;
      });
      if (e !== undefined) expect(e).toBeInstanceOf(NetError);
      acks.push({ at: tick + 3, bytes: client.ack(), tick }); // acks every tick, stale ones too
    }
    expect(wrong).toBe(0);
    expect(accepted).toBeGreaterThan(100 + 200 - 20); // 200 ticks after the outage; at most a window rejected
    expect(server.lastPacket(id)!.baselineSequence).toBeGreaterThanOrEqual(0);
  }, 60_000);

  it('rejects a delta coded against another snapshot of the sequence the client holds', () => {
    const schema = smallWorld();
    const a = new WorldServer(schema),
      b = new WorldServer(schema);
    const ia = a.addClient(),
      ib = b.addClient();
    const client = new WorldClient(schema);
    const sa = new WorldState(schema),
      sb = new WorldState(schema);
    for (let tick = 0; tick <= 5; tick++) {
      animate(sa, tick, 10);
      animate(sb, tick + 1000, 10);
      a.tick(sa);
      b.tick(sb);
      client.receive(a.packetsFor(ia)[0]);
      b.packetsFor(ib);
    }
    b.receiveAck(ib, client.ack());
    animate(sb, 1006, 10);
    b.tick(sb);
    const [packet] = b.packetsFor(ib);
    expect(b.lastPacket(ib)!.baselineSequence).toBe(5);
    const e = catchError(() => client.receive(packet)) as NetError;
    expect(e).toBeInstanceOf(NetError);
    expect(e.code).toBe(NET_ERROR.BAD_CHECKSUM);
  });

  it('rejects damaged datagrams and acks with a NetError', () => {
    const schema = smallWorld();
    const server = new WorldServer(schema, { mtu: 100 });
    const id = server.addClient();
    const state = new WorldState(schema);
    animate(state, 0, 40);
    server.tick(state);
    const datagrams = server.packetsFor(id);
    expect(datagrams.length).toBeGreaterThan(1);
    const random = mulberry32(2);
    let rejected = 0;
    for (let trial = 0; trial < 200; trial++) {
      const client = new WorldClient(schema, { mtu: 100 });
      const damaged = datagrams.map((d) => d.slice());
      const k = Math.floor(random() * damaged.length);
      damaged[k][Math.floor(random() * damaged[k].length)] ^= 1 << Math.floor(random() * 8);
      // Either rejected, or (a damaged fragment header) the message never completes.
      let got: WorldReceived | undefined;
      const e = catchError(() => {
        for (const d of damaged) got = client.receive(d) ?? got;
      });
      if (e !== undefined) {
        expect(e).toBeInstanceOf(NetError);
        rejected++;
      } else expect(got).toBeUndefined();
    }
    expect(rejected).toBeGreaterThan(150);
    const other = new WorldClient(schema, { mtu: 100 });
    for (const d of datagrams) other.receive(d);
    const good = other.ack();
    good[1] ^= 4;
    expect((catchError(() => server.receiveAck(id, good)) as NetError).code).toBe(NET_ERROR.BAD_CHECKSUM);
    expect((catchError(() => server.receiveAck(id, good.subarray(0, 3))) as NetError).code).toBe(
      NET_ERROR.PACKET_TRUNCATED,
    );
  });
});

describe('random datagrams', () => {
  it('end in a NetError or an incomplete message, never another exception', () => {
    const schema = smallWorld();
    const client = new WorldClient(schema, { mtu: 300 });
    const random = mulberry32(11);
    let rejected = 0;
    for (let trial = 0; trial < 2000; trial++) {
      const d = Uint8Array.from({ length: 1 + Math.floor(random() * 300) }, () => Math.floor(random() * 256));
      if (trial % 2 === 0) d[0] = 0xff; // half of them look like fragments
      const e = catchError(() => client.receive(d));
      if (e !== undefined) {
        expect(e).toBeInstanceOf(NetError);
        rejected++;
      }
    }
    expect(client.newestSequence).toBe(-1); // a 16-bit check let nothing through
    expect(rejected).toBeGreaterThan(900);
  });
});

describe('fragments', () => {
  const options = resolveFragmentOptions({ mtu: 100, maxFragments: 8, slots: 2 });
  const message = Uint8Array.from({ length: 500 }, (_, i) => (i * 7) & 0xfe);

  it('reassemble in any order, duplicates ignored', () => {
    const parts = fragmentMessage(message, 77, options);
    expect(parts.length).toBe(Math.ceil(500 / (100 - FRAGMENT_HEADER_BYTES)));
    for (const p of parts) expect(p.length).toBeLessThanOrEqual(100);
    const r = new Reassembler(options);
    const order = [3, 0, 0, 5, 1, 4, 2];
    let out: Uint8Array | undefined;
    for (const i of order) out = r.add(parts[i]) ?? out;
    expect(Array.from(out!)).toEqual(Array.from(message));
    expect(r.pending).toBe(0);
  });

  it('bound what they hold and reject malformed headers', () => {
    expect((catchError(() => fragmentMessage(new Uint8Array(1000), 1, options)) as NetError).code).toBe(
      NET_ERROR.BAD_ARGUMENT,
    );
    const r = new Reassembler(options);
    for (let s = 0; s < 10; s++) r.add(fragmentMessage(message, s, options)[0]);
    expect(r.pending).toBe(2);
    const part = fragmentMessage(message, 1, options)[1].slice();
    part[4] = 200; // count over maxFragments
    expect((catchError(() => r.add(part)) as NetError).code).toBe(NET_ERROR.BAD_VALUE);
    part[4] = 3;
    part[3] = 3; // index past count
    expect((catchError(() => r.add(part)) as NetError).code).toBe(NET_ERROR.BAD_VALUE);
    expect((catchError(() => r.add(new Uint8Array(3).fill(0xff))) as NetError).code).toBe(NET_ERROR.PACKET_TRUNCATED);
  });
});

describe('interpolation', () => {
  const schema = smallWorld();
  const server = new WorldServer(schema);
  const id = server.addClient();
  const client = new WorldClient(schema);
  const state = new WorldState(schema);
  state.spawn(0, 'box');

  it('interpolates between buffered snapshots, extrapolates up to its limit, then holds', () => {
    const view = new SnapshotInterpolator(schema, { hz: 10, playoutDelayMs: 100, maxExtrapolationMs: 100 });
    const out = new WorldState(schema);
    for (let tick = 0; tick < 6; tick++) {
      if (tick === 3) {
        server.tick(state);
        server.packetsFor(id);
        continue;
      } // lost
      state.field(0, 'position')[0] = tick * 0.5; // 5 m/s
      server.tick(state);
      const got = client.receive(server.packetsFor(id)[0])!;
      view.push(got.tick, got.snapshot);
    }
    expect(view.sample(0.25, out)).toBe('interpolated');
    expect(out.field(0, 'position')[0]).toBeCloseTo(1.25, 3);
    expect(view.sample(0.35, out)).toBe('interpolated'); // across the lost tick
    expect(out.field(0, 'position')[0]).toBeCloseTo(1.75, 3);
    expect(view.sample(0.55, out)).toBe('extrapolated');
    expect(out.field(0, 'position')[0]).toBeCloseTo(2.75, 3);
    expect(view.sample(2, out)).toBe('held');
    expect(out.field(0, 'position')[0]).toBeCloseTo(3, 3); // newest (0.5 s) + 100 ms at 5 m/s
    expect(view.renderTime(1)).toBeCloseTo(0.9, 9);
  });
});

describe('cube scene', () => {
  it('is deterministic, and most cubes rest once settled', () => {
    const a = new CubeScene({ cubes: 400 }),
      b = new CubeScene({ cubes: 400 });
    let awake = 0;
    for (let t = 0; t < 240; t++) {
      a.step();
      b.step();
      if (t >= 120) awake += a.awakeCount;
    }
    expect(Array.from(a.state.values)).toEqual(Array.from(b.state.values));
    expect(awake / 120).toBeLessThan(400 / 4);
  });

  it("runs through many clients with every snapshot within the precision and bit-identical to the server's", () => {
    const r = simulateWorld({
      clients: 4,
      seconds: 4,
      scene: { cubes: 300 },
      ackOutage: { from: 120, count: 10 },
      time: false,
    });
    expect(r.mismatched).toBe(0);
    expect(r.maxCornerErrorM).toBeLessThanOrEqual(r.precisionM);
    expect(r.received).toBeGreaterThan(r.sent * 0.85);
    expect(r.client0AbsoluteAfterJoin).toBe(0);
    expect(r.interpolatedMaxErrorM).toBeLessThan(0.01);
    expect(r.steadyKbps).toBeLessThan(r.kbps);
  });
});

describe('shared messages', () => {
  it('give clients of one baseline the bytes each would get on its own', () => {
    const schema = smallWorld();
    const shared = new WorldServer(schema),
      alone = new WorldServer(schema, { shareMessages: false });
    const ids = [0, 1, 2].map(() => [shared.addClient(), alone.addClient()]);
    const clients = ids.map(() => new WorldClient(schema));
    const state = new WorldState(schema);
    for (let tick = 0; tick < 50; tick++) {
      animate(state, tick, 30);
      shared.tick(state);
      alone.tick(state);
      ids.forEach(([s, a], c) => {
        const x = shared.packetsFor(s),
          y = alone.packetsFor(a);
        expect(x.map((d) => Array.from(d))).toEqual(y.map((d) => Array.from(d)));
        // Client c acks every (c + 1)th tick, offset by c, so baselines differ between clients.
        for (const d of x) clients[c].receive(d);
        if ((tick + c) % (c + 1) === 0) {
          const ack = clients[c].ack();
          shared.receiveAck(s, ack);
          alone.receiveAck(a, ack);
        }
      });
    }
    expect(new Set(ids.map(([s]) => shared.lastPacket(s)!.baselineSequence)).size).toBeGreaterThan(1);
  });
});
