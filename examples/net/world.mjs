#!/usr/bin/env node
/**
 * A game server and two clients over a simulated lossy link, with bonepress/net's world
 * snapshots: a schema of two entity types, a server that quantises each tick once and codes
 * a delta per client, clients that decode, ack and render an interpolated view 100 ms
 * behind the server. Run after a build:
 *
 *   npm run build && node examples/net/world.mjs
 *
 * Swap the `Link` below for a real transport (UDP, WebRTC data channels, WebSocket): every
 * packet is a Uint8Array, and nothing here depends on delivery order or reliability.
 */
import { SnapshotInterpolator, WorldClient, WorldServer, WorldState, buildWorldSchema, NetError } from 'bonepress/net';

const HZ = 60;

// 1. The schema both ends share: bit counts follow from the ranges and precisions.
const schema = buildWorldSchema({
  maxEntities: 256,
  types: {
    crate: {
      fields: {
        position: { kind: 'position', min: [-100, -100, 0], max: [100, 100, 20] },
        orientation: { kind: 'orientation' },
      },
      // Every corner of a 1 m crate within 5 mm of the server's.
      rigidBody: { position: 'position', orientation: 'orientation', halfExtents: [0.5, 0.5, 0.5], precision: 0.005 },
    },
    player: {
      fields: {
        position: { kind: 'position', min: [-100, -100, 0], max: [100, 100, 20], precision: 0.002 },
        orientation: { kind: 'orientation', maxAngle: 0.002 },
        health: { kind: 'int', min: 0, max: 100 },
        stamina: { kind: 'float', min: 0, max: 1, precision: 0.01 },
        crouching: { kind: 'bool' },
        weapon: { kind: 'enum', values: ['none', 'sword', 'bow'] },
      },
    },
  },
});

// 2. A link that loses 5 % of packets and delivers the rest 50 ms later (both ways).
class Link {
  constructor(seed) {
    this.queue = [];
    this.s = seed;
  }
  random() {
    this.s = (this.s * 1103515245 + 12345) % 2147483648;
    return this.s / 2147483648;
  }
  send(now, packet) {
    if (this.random() >= 0.05) this.queue.push({ at: now + 0.05, packet });
  }
  receive(now) {
    const due = this.queue.filter((p) => p.at <= now);
    this.queue = this.queue.filter((p) => p.at > now);
    return due.map((p) => p.packet);
  }
}

// 3. The server's world: 100 crates at rest, one player walking in a circle.
const world = new WorldState(schema);
for (let id = 0; id < 100; id++) {
  world.spawn(id, 'crate');
  world.field(id, 'position').set([(id % 10) * 3 - 15, Math.floor(id / 10) * 3 - 15, 0.5]);
}
const PLAYER = 200;
world.spawn(PLAYER, 'player');
world.field(PLAYER, 'health')[0] = 100;
world.field(PLAYER, 'weapon')[0] = 1;

const server = new WorldServer(schema); // default window 64, 16 check bits, MTU 1200
const clients = [1, 2].map((seed) => ({
  id: server.addClient(),
  client: new WorldClient(schema),
  view: new SnapshotInterpolator(schema, { hz: HZ, playoutDelayMs: 100, maxExtrapolationMs: 50 }),
  rendered: new WorldState(schema),
  down: new Link(seed),
  up: new Link(seed + 10),
  bytes: 0,
}));

for (let tick = 0; tick < 5 * HZ; tick++) {
  const now = tick / HZ;
  // Game logic: the player walks; the crate the player touches at 2 s is removed.
  const p = world.field(PLAYER, 'position');
  p[0] = 10 * Math.cos(now * 0.5);
  p[1] = 10 * Math.sin(now * 0.5);
  p[2] = 0;
  const yaw = now * 0.5 + Math.PI / 2;
  world.field(PLAYER, 'orientation').set([0, 0, Math.sin(yaw / 2), Math.cos(yaw / 2)]);
  world.field(PLAYER, 'stamina')[0] = 0.5 + 0.5 * Math.sin(now);
  if (tick === 2 * HZ) world.despawn(42);

  server.tick(world); // quantise once for every client
  for (const c of clients) {
    for (const ack of c.up.receive(now)) server.receiveAck(c.id, ack);
    for (const datagram of server.packetsFor(c.id)) {
      c.down.send(now, datagram);
      c.bytes += datagram.length;
    }
    for (const datagram of c.down.receive(now)) {
      try {
        const got = c.client.receive(datagram); // undefined while fragments are missing
        if (!got) continue;
        c.view.push(got.tick, got.snapshot);
        c.up.send(now, c.client.ack());
      } catch (error) {
        if (!(error instanceof NetError)) throw error; // damaged or unusable packets are dropped
      }
    }
    c.view.sample(c.view.renderTime(now), c.rendered); // what the client draws this frame
  }
}

for (const c of clients) {
  const p = c.rendered.typeOf(PLAYER) ? c.rendered.field(PLAYER, 'position') : [NaN, NaN];
  console.log(
    `client ${c.id}: ${((c.bytes * 8 * HZ) / (5 * HZ) / 1000).toFixed(1)} kbps; player drawn at (${p[0].toFixed(3)}, ${p[1].toFixed(3)}); ` +
      `crate 42 ${c.rendered.typeOf(42) ? 'present' : 'despawned'}; health ${c.rendered.field(PLAYER, 'health')[0]}`,
  );
}
