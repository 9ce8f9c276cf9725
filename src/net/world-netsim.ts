/**
 * The cube scene (cube-scene.ts) served to many clients over simulated lossy links: one
 * {@link WorldServer}, one {@link WorldClient} per client, each link with its own seeded
 * loss, delay and jitter both ways. Measures the payload rate per client, the error of every
 * cube corner in the snapshots the server sends (every received snapshot is checked to be
 * bit-identical to the server's, by hash), the sender's CPU time per client per tick, and
 * the error of one client's interpolated view against the server's truth at render times.
 * The library side of `npm run bench:net`.
 */
import { mulberry32 } from '../clip/random.js';
import { NET_ERROR, NetError } from './bit-stream.js';
import { CubeScene, type CubeSceneOptions } from './cube-scene.js';
import { SnapshotInterpolator } from './interpolation.js';
import { WorldState } from './world-codec.js';
import { rigidBodyError } from './world-error.js';
import { WorldClient, WorldServer, type WorldSessionOptions } from './world-session.js';

/** Options of {@link simulateWorld}. */
export interface WorldNetsimOptions {
  /** Clients served. Default 64. */
  clients?: number;
  /** Simulated seconds. Default 60. */
  seconds?: number;
  /** Ticks per second. Default 60. */
  hz?: number;
  /** Probability that a datagram (snapshot, fragment or ack) is lost, each way. Default 0.05. */
  loss?: number;
  /** Round-trip time, ms (half each way). Default 100. */
  rttMs?: number;
  /** Extra one-way delay uniform in 0..jitterMs per datagram. Default 0. */
  jitterMs?: number;
  /** Playout delay of the interpolated view, ms. Default 100. */
  playoutDelayMs?: number;
  /** Extrapolation limit of the view, ms. Default 50. */
  maxExtrapolationMs?: number;
  /** Seed of the links (the scene has its own). Default 1. */
  seed?: number;
  /** Lose every ack of client 0 in ticks `from..from + count − 1`. Default none. */
  ackOutage?: { from: number; count: number };
  /** Window, check bits and MTU of the session. */
  session?: WorldSessionOptions;
  /** The scene's options. */
  scene?: CubeSceneOptions;
  /** Clients whose interpolated view is measured (the first n). Default 1. */
  viewClients?: number;
  /** Measure the sender's time. Default true. */
  time?: boolean;
  /**
   * The clock the sender's time is read from, in ms. Default `performance.now()` (wall
   * clock); a Node caller can pass the process's CPU time so other load does not count.
   */
  clock?: () => number;
}

/** Defaults of {@link WorldNetsimOptions}. */
export const WORLD_NETSIM_DEFAULTS = {
  clients: 64,
  seconds: 60,
  hz: 60,
  loss: 0.05,
  rttMs: 100,
  jitterMs: 0,
  playoutDelayMs: 100,
  maxExtrapolationMs: 50,
  seed: 1,
  viewClients: 1,
} as const;

/** What {@link simulateWorld} measured. Lengths in metres. */
export interface WorldNetsimReport {
  readonly clients: number;
  readonly ticks: number;
  readonly hz: number;
  readonly entities: number;
  /** Mean payload per client: bytes of every datagram sent to it (fragment headers and checks included) × 8 × hz / ticks / 1000. */
  readonly kbps: number;
  /** The same from tick `hz` on: after the first second (joins and the initial drop). */
  readonly steadyKbps: number;
  /** Mean bits per snapshot per client. */
  readonly bitsPerSnapshot: number;
  /** Largest distance of any cube corner from the server's state, over every snapshot the server sent. */
  readonly maxCornerErrorM: number;
  /** The bound the schema was derived for. */
  readonly precisionM: number;
  /** Received snapshots that were not bit-identical to the server's (must be 0). */
  readonly mismatched: number;
  readonly sent: number;
  readonly received: number;
  /** Rejected by a client (e.g. a delta against a baseline it lost). */
  readonly rejected: number;
  /** Datagrams that needed fragments, and the fragments sent. */
  readonly fragmentedMessages: number;
  /** Sender CPU (quantising each tick once, plus every client's packet) per client per tick, ms. */
  readonly senderMsPerClientTick: number;
  /** The same from tick `hz` on (after joins and the initial drop). */
  readonly steadySenderMsPerClientTick: number;
  /** Largest corner error of the interpolated view of the measured clients, at every render time, m. */
  readonly interpolatedMaxErrorM: number;
  /** Render frames measured, and how many had to extrapolate or hold. */
  readonly frames: number;
  readonly extrapolatedFrames: number;
  /** Cubes moving per tick, mean. */
  readonly meanAwake: number;
  /** Mean baseline age of delta packets, ticks. */
  readonly meanBaselineAge: number;
  /** Packets sent to client 0 against an empty world after its first ack (0: acks never stalled). */
  readonly client0AbsoluteAfterJoin: number;
  /** Largest baseline age of client 0's deltas, ticks. */
  readonly client0MaxBaselineAge: number;
}

interface Event {
  time: number;
  order: number;
  client: number;
  toServer: boolean;
  tick: number;
  bytes: Uint8Array;
}

/** A time-ordered queue (a binary heap; ties in insertion order). */
class EventHeap {
  private readonly items: Event[] = [];
  private order = 0;
  push(time: number, client: number, toServer: boolean, tick: number, bytes: Uint8Array): void {
    const items = this.items;
    items.push({ time, order: this.order++, client, toServer, tick, bytes });
    let i = items.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(items[i], items[parent])) break;
      [items[i], items[parent]] = [items[parent], items[i]];
      i = parent;
    }
  }
  popUntil(time: number): Event | undefined {
    const items = this.items;
    if (items.length === 0 || items[0].time > time) return undefined;
    const top = items[0],
      last = items.pop()!;
    if (items.length > 0) {
      items[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1,
          r = l + 1;
        let m = i;
        if (l < items.length && before(items[l], items[m])) m = l;
        if (r < items.length && before(items[r], items[m])) m = r;
        if (m === i) break;
        [items[i], items[m]] = [items[m], items[i]];
        i = m;
      }
    }
    return top;
  }
}

function before(a: Event, b: Event): boolean {
  return a.time < b.time || (a.time === b.time && a.order < b.order);
}

const now = (): number => (globalThis.performance ? globalThis.performance.now() : Date.now());

/**
 * Runs the cube scene for `seconds` through a server and `clients` clients. Deterministic
 * apart from the CPU timing. Throws {@link NetError} `BAD_ARGUMENT` for bad options.
 */
export function simulateWorld(options: WorldNetsimOptions = {}): WorldNetsimReport {
  const d = WORLD_NETSIM_DEFAULTS;
  const clients = options.clients ?? d.clients,
    seconds = options.seconds ?? d.seconds,
    hz = options.hz ?? d.hz;
  const loss = options.loss ?? d.loss,
    rttMs = options.rttMs ?? d.rttMs,
    jitterMs = options.jitterMs ?? d.jitterMs;
  const seed = options.seed ?? d.seed,
    viewClients = Math.min(clients, options.viewClients ?? d.viewClients);
  const bad = (m: string) => new NetError(NET_ERROR.BAD_ARGUMENT, m);
  if (!Number.isInteger(clients) || clients < 1 || clients > 4096)
    throw bad(`clients must be in 1..4096, got ${clients}`);
  if (!(seconds > 0) || !(hz > 0)) throw bad('seconds and hz must be above 0');
  if (!(loss >= 0 && loss < 1)) throw bad(`loss must be in 0..1 (below 1), got ${loss}`);
  if (!(rttMs >= 0) || !(jitterMs >= 0)) throw bad('rtt and jitter must be ≥ 0');
  const timing = options.time ?? true;
  const clock = options.clock ?? now;

  const scene = new CubeScene({ ...options.scene, hz });
  const schema = scene.schema;
  const server = new WorldServer(schema, options.session);
  const clientIds: number[] = [],
    receivers: WorldClient[] = [],
    links: (() => number)[] = [];
  for (let c = 0; c < clients; c++) {
    clientIds.push(server.addClient());
    receivers.push(new WorldClient(schema, options.session));
    links.push(mulberry32((seed * 7919 + c * 104729) | 0));
  }
  const views = Array.from(
    { length: viewClients },
    () =>
      new SnapshotInterpolator(schema, {
        hz,
        playoutDelayMs: options.playoutDelayMs ?? d.playoutDelayMs,
        maxExtrapolationMs: options.maxExtrapolationMs ?? d.maxExtrapolationMs,
      }),
  );
  const ticks = Math.round(seconds * hz);
  const delayTicks = ((options.playoutDelayMs ?? d.playoutDelayMs) / 1000) * hz;
  const serverHashes = new Float64Array(ticks);
  const queue = new EventHeap();
  const oneWay = rttMs / 2000; // s
  // The truth of the last ticks, for the view's error at render times.
  const truthRing = Array.from(
    { length: Math.ceil(((options.playoutDelayMs ?? d.playoutDelayMs) / 1000) * hz) + 4 },
    () => new WorldState(schema),
  );
  const truthBlend = new WorldState(schema),
    view = new WorldState(schema),
    decoded = new WorldState(schema);
  const entities = scene.cubes + 1;
  let bytes = 0,
    steadyBytes = 0,
    sent = 0,
    received = 0,
    rejected = 0,
    mismatched = 0,
    fragmented = 0;
  let maxCorner = 0,
    maxView = 0,
    frames = 0,
    extrapolated = 0,
    awakeSum = 0,
    ageSum = 0,
    deltas = 0,
    senderMs = 0,
    steadySenderMs = 0;
  let joined0 = false,
    absoluteAfterJoin0 = 0,
    maxAge0 = 0;
  const outage = options.ackOutage;

  const transmit = (time: number, client: number, toServer: boolean, tick: number, datagram: Uint8Array): void => {
    const random = links[client];
    const drop = random() < loss;
    const jitter = jitterMs > 0 ? (random() * jitterMs) / 1000 : 0;
    if (!drop) queue.push(time + oneWay + jitter, client, toServer, tick, datagram);
  };
  const deliver = (time: number): void => {
    for (let e = queue.popUntil(time); e; e = queue.popUntil(time)) {
      if (e.toServer) {
        server.receiveAck(clientIds[e.client], e.bytes);
        if (e.client === 0) joined0 = true;
        continue;
      }
      const client = receivers[e.client];
      let got;
      try {
        got = client.receive(e.bytes);
      } catch (error) {
        if (error instanceof NetError) {
          rejected++;
          continue;
        }
        throw error;
      }
      if (!got) continue;
      received++;
      if (got.snapshot.hash !== serverHashes[e.tick]) mismatched++;
      if (e.client < viewClients) views[e.client].push(got.tick, got.snapshot);
      const tickNow = Math.round(time * hz);
      const lostAck =
        e.client === 0 && outage !== undefined && tickNow >= outage.from && tickNow < outage.from + outage.count;
      if (!lostAck) transmit(e.time, e.client, true, e.tick, client.ack());
    }
  };

  for (let tick = 0; tick < ticks; tick++) {
    const time = tick / hz;
    deliver(time);
    if (tick > 0) scene.step();
    awakeSum += scene.awakeCount;
    const t0 = timing ? clock() : 0;
    server.tick(scene.state);
    for (let c = 0; c < clients; c++) {
      const datagrams = server.packetsFor(clientIds[c]);
      for (const datagram of datagrams) transmit(time, c, false, tick, datagram);
    }
    if (timing) {
      const ms = clock() - t0;
      senderMs += ms;
      if (tick >= hz) steadySenderMs += ms;
    }
    serverHashes[tick] = server.current.hash;
    for (let c = 0; c < clients; c++) {
      const info = server.lastPacket(clientIds[c])!;
      sent++;
      bytes += info.bytes;
      if (tick >= hz) steadyBytes += info.bytes;
      if (info.datagrams > 1) fragmented++;
      if (info.baselineSequence >= 0) {
        const age = (info.sequence - info.baselineSequence + 65536) % 65536;
        deltas++;
        ageSum += age;
        if (c === 0 && age > maxAge0) maxAge0 = age;
      } else if (c === 0 && joined0) absoluteAfterJoin0++;
    }
    // Corner error of what every client decodes for this tick (the server's snapshot).
    server.current.dequantize(decoded);
    const truth = scene.state,
      stride = truth.valueStride;
    for (let id = 0; id < entities; id++) {
      const type = truth.typeOf(id);
      if (!type) continue;
      const e = rigidBodyError(type, truth.values, id * stride, decoded.values, id * stride);
      if (e > maxCorner) maxCorner = e;
    }
    truthRing[tick % truthRing.length].copyFrom(truth);
    // Views: render at the tick and half a tick after it, `playoutDelay` behind the server's clock.
    for (const half of [0, 0.5]) {
      const renderTick = tick + half - delayTicks;
      if (views.length === 0 || renderTick < hz) continue; // from the second second on: joins done
      const lo = Math.floor(renderTick),
        alpha = renderTick - lo;
      const a = truthRing[lo % truthRing.length],
        b = truthRing[Math.min(tick, lo + 1) % truthRing.length];
      blendTruth(a, b, alpha, truthBlend);
      for (const v of views) {
        const mode = v.sample(renderTick / hz, view);
        frames++;
        if (mode !== 'interpolated') extrapolated++;
        for (let id = 0; id < entities; id++) {
          const type = truthBlend.typeOf(id);
          if (!type || view.types[id] !== type.index) continue;
          const e = rigidBodyError(type, truthBlend.values, id * stride, view.values, id * stride);
          if (e > maxView) maxView = e;
        }
      }
    }
    deliver(time + 0.5 / hz);
  }
  const precision = schema.types[0].rigidBody!.precision;
  return {
    clients,
    ticks,
    hz,
    entities,
    kbps: (bytes * 8 * hz) / ticks / clients / 1000,
    steadyKbps: ticks > hz ? (steadyBytes * 8 * hz) / (ticks - hz) / clients / 1000 : 0,
    bitsPerSnapshot: (bytes * 8) / sent,
    maxCornerErrorM: maxCorner,
    precisionM: precision,
    mismatched,
    sent,
    received,
    rejected,
    fragmentedMessages: fragmented,
    senderMsPerClientTick: timing ? senderMs / ticks / clients : 0,
    steadySenderMsPerClientTick: timing && ticks > hz ? steadySenderMs / (ticks - hz) / clients : 0,
    interpolatedMaxErrorM: maxView,
    frames,
    extrapolatedFrames: extrapolated,
    meanAwake: awakeSum / ticks,
    meanBaselineAge: deltas > 0 ? ageSum / deltas : 0,
    client0AbsoluteAfterJoin: absoluteAfterJoin0,
    client0MaxBaselineAge: maxAge0,
  };
}

// The server's truth between two ticks, for the cube scene's layout (position, then
// orientation): positions linearly, orientations by normalised lerp, as a view blends.
function blendTruth(a: WorldState, b: WorldState, alpha: number, out: WorldState): void {
  const stride = a.valueStride,
    av = a.values,
    bv = b.values,
    ov = out.values;
  out.types.set(a.types);
  for (let id = 0; id < a.types.length; id++) {
    const t = a.types[id];
    if (t < 0) continue;
    const o = id * stride;
    for (let k = 0; k < 3; k++) ov[o + k] = av[o + k] + (bv[o + k] - av[o + k]) * alpha;
    const dot = av[o + 3] * bv[o + 3] + av[o + 4] * bv[o + 4] + av[o + 5] * bv[o + 5] + av[o + 6] * bv[o + 6];
    const s = dot < 0 ? -1 : 1;
    let len = 0;
    for (let k = 3; k < 7; k++) {
      ov[o + k] = av[o + k] + (s * bv[o + k] - av[o + k]) * alpha;
      len += ov[o + k] * ov[o + k];
    }
    len = Math.sqrt(len);
    for (let k = 3; k < 7; k++) ov[o + k] /= len;
  }
}
