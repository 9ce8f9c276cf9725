/**
 * A simulated network for pose snapshots: a clip is sampled at a send rate, each tick's
 * pose goes through {@link SnapshotSender} → a seeded lossy link (loss, one-way delay of half
 * the round trip, optional jitter that reorders) → {@link SnapshotReceiver}, whose acks
 * travel back over the same kind of link. Every decoded pose is measured against the source
 * pose of its tick with the virtual-vertex metric. The library side of `bonepress netsim`.
 */
import { createRawClip, type RawClip } from '../clip/raw-clip.js';
import { POSE_STRIDE } from '../clip/skeleton.js';
import { AFFINE_STRIDE, poseToObject, virtualVertexError } from '../metric/error-metric.js';
import { lerp, nlerpRotation } from '../runtime/interpolate.js';
import { NET_ERROR, NetError, WriteStream } from './bit-stream.js';
import { createSnapshotSchema, type NetLength, type SnapshotSchema } from './schema.js';
import {
  SNAPSHOT_CODING,
  SnapshotReceiver,
  SnapshotSender,
  type SessionOptions,
  type SnapshotCoding,
} from './session.js';
import { PoseQuantizer, createSnapshotCodes } from './quantize.js';
import { SnapshotCodec } from './snapshot.js';
import { mulberry32 as seededRandom } from '../clip/random.js';

/** Options of {@link simulateNetwork}. */
export interface NetsimOptions {
  /** Snapshots per second. Default: the clip's sample rate. */
  hz?: number;
  /** Probability that a packet (snapshot or ack) is lost, 0..1. Default 0.05. */
  loss?: number;
  /** Round-trip time in milliseconds; each direction takes half. Default 100. */
  rttMs?: number;
  /** Extra one-way delay, uniform in 0..jitterMs milliseconds per packet (reorders packets). Default 0. */
  jitterMs?: number;
  /** Seed of the link's random numbers. Default 1. */
  seed?: number;
  /** Error threshold of the schema (and of the report's pass/fail). Default 0.1 cm. */
  error?: NetLength;
  /** Shell distance of every bone. Default 3 cm. */
  shell?: NetLength;
  /** Use this schema instead of building one from the clip. */
  schema?: SnapshotSchema;
  /** Window size and check bits of both ends (the coding is chosen per run). */
  session?: Omit<SessionOptions, 'coding'>;
  /** Also run the link with entropy-coded bodies. Default true. */
  entropy?: boolean;
  /** Keep every decoded pose (for a dump). Default false. */
  keepPoses?: boolean;
  /** Playout delay of the receiver's interpolated view, ms. Default 100. */
  playoutDelayMs?: number;
  /** Longest extrapolation of that view past the newest received pose, ms. Default 50. */
  maxExtrapolationMs?: number;
}

/** Defaults of {@link NetsimOptions}; the CLI shows the same. */
export const NETSIM_DEFAULTS = {
  loss: 0.05,
  rttMs: 100,
  jitterMs: 0,
  seed: 1,
  error: '0.1cm',
  shell: '3cm',
  entropy: true,
  keepPoses: false,
  playoutDelayMs: 100,
  maxExtrapolationMs: 50,
} as const;

/** What one run of the link saw. */
export interface LinkStats {
  readonly coding: SnapshotCoding;
  /** Mean body bits per sent snapshot (absolute and delta packets together). */
  readonly bodyBitsPerSnapshot: number;
  /** Mean bits on the wire per sent snapshot (header, check and byte padding included). */
  readonly packetBitsPerSnapshot: number;
  /** Mean body bits of the delta packets alone. */
  readonly deltaBodyBits: number;
  /** Snapshots sent as deltas. */
  readonly deltas: number;
  /** Mean baseline distance of the delta packets, in ticks. */
  readonly meanBaselineAge: number;
  readonly sent: number;
  readonly lost: number;
  readonly received: number;
  /** Received but rejected (e.g. a delta against a baseline the receiver does not hold). */
  readonly rejected: number;
  readonly acksLost: number;
  /** Largest virtual-vertex error of a decoded pose, in the clip's unit. */
  readonly maxError: number;
  /**
   * Largest virtual-vertex error of the receiver's view — the received poses interpolated
   * (rotations by nlerp, the rest linearly) `playoutDelayMs` behind the sender, extrapolated
   * for at most `maxExtrapolationMs` past the newest — against the clip at render times: on
   * every tick and half a tick after it, from the first render time with a pose received.
   */
  readonly interpolatedMaxError: number;
  /** Render times at which the view had to extrapolate or hold. */
  readonly extrapolatedFrames: number;
}

/** What {@link simulateNetwork} reports. Bits are per snapshot; errors in `unit`. */
export interface NetsimReport {
  readonly clip: string;
  readonly boneCount: number;
  readonly hz: number;
  readonly ticks: number;
  readonly unit: RawClip['unit'];
  readonly threshold: number;
  /** The schema's bound of the error (≤ threshold when the bit counts reach it). */
  readonly errorBound: number;
  /** 32 bits × 10 floats × bones. */
  readonly rawBitsPerSnapshot: number;
  /** Mean absolute snapshot body over every tick. */
  readonly absoluteBitsPerSnapshot: number;
  /** Mean body of the plainly coded stream (deltas once acked). */
  readonly deltaBitsPerSnapshot: number;
  /** Mean body of the entropy-coded stream, when run. */
  readonly entropyBitsPerSnapshot?: number;
  /** Largest error of any decoded pose in any run. */
  readonly maxError: number;
  /** Largest error of the interpolated view in any run (see {@link LinkStats.interpolatedMaxError}). */
  readonly interpolatedMaxError: number;
  readonly sent: number;
  readonly lost: number;
  readonly received: number;
  readonly plain: LinkStats;
  readonly entropy?: LinkStats;
  /** With `keepPoses`: ticks the receiver decoded (ascending, once each) and their poses. */
  readonly receivedTicks?: Int32Array;
  readonly receivedPoses?: Float32Array;
}

/**
 * The pose of `clip` at `time` seconds (clamped to the clip) into `outPose`: rotations by
 * normalised lerp on the shortest path, translations and scales by lerp between the two
 * samples around it.
 */
export function sampleClipAt(clip: RawClip, time: number, outPose: Float32Array): Float32Array {
  const n = clip.sampleCount;
  const at = Math.min(Math.max(0, time * clip.sampleRate), n - 1);
  const s0 = Math.floor(at),
    s1 = Math.min(n - 1, s0 + 1),
    alpha = at - s0;
  const r = clip.rotations,
    t = clip.translations,
    sc = clip.scales;
  for (let b = 0; b < clip.skeleton.boneNames.length; b++) {
    const i0 = b * n + s0,
      i1 = b * n + s1,
      o = b * POSE_STRIDE;
    nlerpRotation(
      r[i0 * 4],
      r[i0 * 4 + 1],
      r[i0 * 4 + 2],
      r[i0 * 4 + 3],
      r[i1 * 4],
      r[i1 * 4 + 1],
      r[i1 * 4 + 2],
      r[i1 * 4 + 3],
      alpha,
      outPose,
      o,
    );
    for (let c = 0; c < 3; c++) {
      outPose[o + 4 + c] = lerp(t[i0 * 3 + c], t[i1 * 3 + c], alpha);
      outPose[o + 7 + c] = lerp(sc[i0 * 3 + c], sc[i1 * 3 + c], alpha);
    }
  }
  return outPose;
}

/** Ticks of `clip` sent at `hz`: one per 1/hz seconds over its duration, the first at 0. */
export function tickCount(clip: RawClip, hz: number): number {
  const duration = clip.sampleCount > 1 ? (clip.sampleCount - 1) / clip.sampleRate : 0;
  return Math.floor(duration * hz + 1e-9) + 1;
}

interface InFlight {
  time: number; // µs
  order: number;
  ack: boolean;
  tick: number;
  bytes: Uint8Array;
}

/** A time-ordered queue (ties in insertion order). */
class EventQueue {
  private readonly items: InFlight[] = [];
  private order = 0;

  push(time: number, ack: boolean, tick: number, bytes: Uint8Array): void {
    const item = { time, order: this.order++, ack, tick, bytes };
    let i = this.items.length;
    while (
      i > 0 &&
      (this.items[i - 1].time > time || (this.items[i - 1].time === time && this.items[i - 1].order > item.order))
    )
      i--;
    this.items.splice(i, 0, item);
  }

  popUntil(time: number): InFlight | undefined {
    return this.items.length > 0 && this.items[0].time <= time ? this.items.shift() : undefined;
  }
}

interface CheckedOptions {
  hz: number;
  loss: number;
  rttMs: number;
  jitterMs: number;
  seed: number;
  playoutDelayMs: number;
  maxExtrapolationMs: number;
}

function checkOptions(clip: RawClip, o: NetsimOptions): CheckedOptions {
  const hz = o.hz ?? clip.sampleRate;
  const loss = o.loss ?? NETSIM_DEFAULTS.loss;
  const rttMs = o.rttMs ?? NETSIM_DEFAULTS.rttMs;
  const jitterMs = o.jitterMs ?? NETSIM_DEFAULTS.jitterMs;
  const seed = o.seed ?? NETSIM_DEFAULTS.seed;
  const bad = (what: string) => new NetError(NET_ERROR.BAD_ARGUMENT, what);
  if (!(hz > 0) || !Number.isFinite(hz)) throw bad(`hz must be a number greater than 0, got ${hz}`);
  if (!(loss >= 0 && loss < 1)) throw bad(`loss must be in 0..1 (below 1), got ${loss}`);
  if (!(rttMs >= 0) || !Number.isFinite(rttMs))
    throw bad(`rtt must be a finite number of milliseconds >= 0, got ${rttMs}`);
  if (!(jitterMs >= 0) || !Number.isFinite(jitterMs))
    throw bad(`jitter must be a finite number of milliseconds >= 0, got ${jitterMs}`);
  if (!Number.isInteger(seed)) throw bad(`seed must be a whole number, got ${seed}`);
  const playoutDelayMs = o.playoutDelayMs ?? NETSIM_DEFAULTS.playoutDelayMs;
  const maxExtrapolationMs = o.maxExtrapolationMs ?? NETSIM_DEFAULTS.maxExtrapolationMs;
  if (!(playoutDelayMs >= 0) || !Number.isFinite(playoutDelayMs))
    throw bad(`playout delay must be a finite number of milliseconds >= 0, got ${playoutDelayMs}`);
  if (!(maxExtrapolationMs >= 0) || !Number.isFinite(maxExtrapolationMs))
    throw bad(`extrapolation limit must be a finite number of milliseconds >= 0, got ${maxExtrapolationMs}`);
  return { hz, loss, rttMs, jitterMs, seed, playoutDelayMs, maxExtrapolationMs };
}

/**
 * Streams `clip` through a sender, a simulated lossy link and a receiver, once with plain
 * and (by default) once more with entropy-coded bodies over the same seeded link, and
 * reports bits per snapshot and the largest error of any decoded pose. Deterministic for a
 * given clip and options. Allocates the source poses of every tick (and the received
 * poses with `keepPoses`). Throws {@link NetError} `BAD_ARGUMENT` for bad options, or a
 * schema that does not fit the clip.
 */
export function simulateNetwork(clip: RawClip, options: NetsimOptions = {}): NetsimReport {
  const o = checkOptions(clip, options);
  const schema =
    options.schema ??
    createSnapshotSchema(clip, {
      error: options.error ?? NETSIM_DEFAULTS.error,
      shell: options.shell ?? NETSIM_DEFAULTS.shell,
    });
  const boneCount = clip.skeleton.boneNames.length;
  if (schema.boneCount !== boneCount)
    throw new NetError(NET_ERROR.BAD_ARGUMENT, `schema of ${schema.boneCount} bones for a clip of ${boneCount}`);
  const ticks = tickCount(clip, o.hz);
  const stride = boneCount * POSE_STRIDE;
  const source = new Float32Array(ticks * stride);
  for (let i = 0; i < ticks; i++) sampleClipAt(clip, i / o.hz, source.subarray(i * stride, (i + 1) * stride));
  const reference = new Float64Array(ticks * boneCount * AFFINE_STRIDE);
  for (let i = 0; i < ticks; i++)
    poseToObject(
      source.subarray(i * stride, (i + 1) * stride),
      clip.skeleton.parents,
      reference,
      i * boneCount * AFFINE_STRIDE,
    );

  // Absolute size of every tick, link aside.
  const quantizer = new PoseQuantizer(schema);
  const codec = new SnapshotCodec(schema);
  const codes = createSnapshotCodes(schema);
  const stream = new WriteStream(512);
  let absoluteBits = 0;
  for (let i = 0; i < ticks; i++) {
    quantizer.quantize(source.subarray(i * stride, (i + 1) * stride), codes);
    stream.reset();
    codec.serializeAbsolute(stream, codes);
    absoluteBits += stream.bitOffset;
  }

  const keep = options.keepPoses ?? NETSIM_DEFAULTS.keepPoses;
  const kept = keep ? new Float32Array(ticks * stride) : undefined;
  const keptFlags = keep ? new Uint8Array(ticks) : undefined;
  const run = (coding: SnapshotCoding) =>
    runLink(clip, schema, source, reference, ticks, o, coding, options.session ?? {}, kept, keptFlags);
  const plain = run(SNAPSHOT_CODING.PLAIN);
  const entropy = (options.entropy ?? NETSIM_DEFAULTS.entropy) ? run(SNAPSHOT_CODING.ENTROPY) : undefined;

  let receivedTicks: Int32Array | undefined, receivedPoses: Float32Array | undefined;
  if (kept && keptFlags) {
    const list: number[] = [];
    for (let i = 0; i < ticks; i++) if (keptFlags[i]) list.push(i);
    receivedTicks = Int32Array.from(list);
    receivedPoses = new Float32Array(list.length * stride);
    list.forEach((tick, k) => receivedPoses!.set(kept.subarray(tick * stride, (tick + 1) * stride), k * stride));
  }
  return {
    clip: clip.name,
    boneCount,
    hz: o.hz,
    ticks,
    unit: clip.unit,
    threshold: schema.threshold,
    errorBound: schema.errorBound,
    rawBitsPerSnapshot: boneCount * POSE_STRIDE * 32,
    absoluteBitsPerSnapshot: absoluteBits / ticks,
    deltaBitsPerSnapshot: plain.bodyBitsPerSnapshot,
    ...(entropy ? { entropyBitsPerSnapshot: entropy.bodyBitsPerSnapshot } : {}),
    maxError: Math.max(plain.maxError, entropy?.maxError ?? 0),
    interpolatedMaxError: Math.max(plain.interpolatedMaxError, entropy?.interpolatedMaxError ?? 0),
    sent: plain.sent,
    lost: plain.lost,
    received: plain.received,
    plain,
    ...(entropy ? { entropy } : {}),
    ...(receivedTicks && receivedPoses ? { receivedTicks, receivedPoses } : {}),
  };
}

function runLink(
  clip: RawClip,
  schema: SnapshotSchema,
  source: Float32Array,
  reference: Float64Array,
  ticks: number,
  o: CheckedOptions,
  coding: SnapshotCoding,
  session: Omit<SessionOptions, 'coding'>,
  kept: Float32Array | undefined,
  keptFlags: Uint8Array | undefined,
): LinkStats {
  const boneCount = schema.boneCount;
  const stride = boneCount * POSE_STRIDE;
  const sender = new SnapshotSender(schema, { ...session, coding });
  const receiver = new SnapshotReceiver(schema, { ...session, coding });
  const random = seededRandom(o.seed);
  const queue = new EventQueue();
  const oneWay = (o.rttMs * 1000) / 2; // µs
  const pose = new Float32Array(stride);
  const decoded = new Float64Array(boneCount * AFFINE_STRIDE);
  const shell = schema.shellDistances;
  let sent = 0,
    lost = 0,
    received = 0,
    rejected = 0,
    acksLost = 0,
    deltas = 0;
  let bodyBits = 0,
    packetBits = 0,
    deltaBodyBits = 0,
    ageSum = 0,
    maxError = 0,
    interpolatedMaxError = 0,
    extrapolatedFrames = 0;
  const view = new PoseView(stride, ticks);
  const truth = new Float32Array(stride),
    truthObject = new Float64Array(boneCount * AFFINE_STRIDE);

  // Both directions draw their fate the same way: lost?, then the jitter.
  const transmit = (time: number, ack: boolean, tick: number, bytes: Uint8Array): boolean => {
    const drop = random() < o.loss;
    const jitter = o.jitterMs > 0 ? random() * o.jitterMs * 1000 : 0;
    if (!drop) queue.push(time + oneWay + jitter, ack, tick, bytes);
    return !drop;
  };
  const deliver = (now: number): void => {
    for (let event = queue.popUntil(now); event; event = queue.popUntil(now)) {
      if (event.ack) {
        sender.receiveAck(event.bytes);
        continue;
      }
      try {
        receiver.receive(event.bytes, pose);
      } catch (error) {
        if (error instanceof NetError) {
          rejected++;
          continue;
        }
        throw error;
      }
      received++;
      poseToObject(pose, schema.parents, decoded, 0);
      const base = event.tick * boneCount * AFFINE_STRIDE;
      for (let b = 0; b < boneCount; b++) {
        const e = virtualVertexError(reference, base + b * AFFINE_STRIDE, decoded, b * AFFINE_STRIDE, shell[b]);
        if (e > maxError) maxError = e;
      }
      if (kept && keptFlags) {
        kept.set(pose, event.tick * stride);
        keptFlags[event.tick] = 1;
      }
      view.add(event.tick, pose);
      if (!transmit(event.time, true, event.tick, receiver.ack())) acksLost++;
    }
  };

  for (let tick = 0; tick < ticks; tick++) {
    const now = Math.round((tick * 1e6) / o.hz);
    deliver(now);
    const packet = sender.send(source.subarray(tick * stride, (tick + 1) * stride));
    const info = sender.lastPacket!;
    sent++;
    bodyBits += info.bodyBits;
    packetBits += info.packetBits;
    if (info.baselineSequence >= 0) {
      deltas++;
      deltaBodyBits += info.bodyBits;
      ageSum += (info.sequence - info.baselineSequence + 65536) % 65536;
    }
    if (!transmit(now, false, tick, packet)) lost++;
    deliver(now);
    // The receiver's view, on the tick and half a tick later, playoutDelay behind.
    for (const half of [0, 0.5]) {
      const renderTick = tick + half - (o.playoutDelayMs / 1000) * o.hz;
      if (renderTick < 0 || renderTick > ticks - 1) continue;
      const mode = view.sample(renderTick, (o.maxExtrapolationMs / 1000) * o.hz, pose);
      if (mode === 'empty') continue;
      if (mode !== 'interpolated') extrapolatedFrames++;
      sampleClipAt(clip, renderTick / o.hz, truth);
      poseToObject(truth, schema.parents, truthObject, 0);
      poseToObject(pose, schema.parents, decoded, 0);
      for (let b = 0; b < boneCount; b++) {
        const e = virtualVertexError(truthObject, b * AFFINE_STRIDE, decoded, b * AFFINE_STRIDE, shell[b]);
        if (e > interpolatedMaxError) interpolatedMaxError = e;
      }
    }
  }
  deliver(Infinity);
  return {
    coding,
    bodyBitsPerSnapshot: bodyBits / sent,
    packetBitsPerSnapshot: packetBits / sent,
    deltaBodyBits: deltas > 0 ? deltaBodyBits / deltas : 0,
    deltas,
    meanBaselineAge: deltas > 0 ? ageSum / deltas : 0,
    sent,
    lost,
    received,
    rejected,
    acksLost,
    maxError,
    interpolatedMaxError,
    extrapolatedFrames,
  };
}

/**
 * The receiver's view of a pose stream: the poses received so far by tick, sampled at a
 * render tick between the received poses around it (rotations by nlerp on the shortest
 * path, translations and scales linearly), or past the newest extrapolated from the last
 * two for at most `maxExtrapolationTicks`, then held.
 */
class PoseView {
  private readonly poses: Float32Array;
  private readonly have: Uint8Array;
  private newest = -1;

  constructor(
    private readonly stride: number,
    ticks: number,
  ) {
    this.poses = new Float32Array(stride * ticks);
    this.have = new Uint8Array(ticks);
  }

  add(tick: number, pose: Float32Array): void {
    this.poses.set(pose.subarray(0, this.stride), tick * this.stride);
    this.have[tick] = 1;
    if (tick > this.newest) this.newest = tick;
  }

  sample(
    renderTick: number,
    maxExtrapolationTicks: number,
    out: Float32Array,
  ): 'interpolated' | 'extrapolated' | 'held' | 'empty' {
    if (this.newest < 0) return 'empty';
    let a = Math.min(Math.floor(renderTick), this.newest);
    while (a >= 0 && !this.have[a]) a--;
    let b = Math.ceil(renderTick);
    while (b <= this.newest && !this.have[b]) b++;
    if (a < 0) {
      this.blend(b, b, 0, out);
      return 'held';
    }
    if (b <= this.newest) {
      this.blend(a, b, b === a ? 0 : (renderTick - a) / (b - a), out);
      return 'interpolated';
    }
    // Past the newest: extrapolate from the two newest.
    let p = a - 1;
    while (p >= 0 && !this.have[p]) p--;
    if (p < 0) {
      this.blend(a, a, 0, out);
      return 'held';
    }
    const t = Math.min(renderTick, a + maxExtrapolationTicks);
    this.blend(p, a, (t - p) / (a - p), out);
    return renderTick > a + maxExtrapolationTicks ? 'held' : 'extrapolated';
  }

  private blend(a: number, b: number, alpha: number, out: Float32Array): void {
    const pa = a * this.stride,
      pb = b * this.stride,
      poses = this.poses;
    for (let o = 0; o < this.stride; o += POSE_STRIDE) {
      const i = pa + o,
        j = pb + o;
      const dot =
        poses[i] * poses[j] + poses[i + 1] * poses[j + 1] + poses[i + 2] * poses[j + 2] + poses[i + 3] * poses[j + 3];
      const sign = dot < 0 ? -1 : 1;
      let len = 0;
      for (let c = 0; c < 4; c++) {
        out[o + c] = poses[i + c] + (sign * poses[j + c] - poses[i + c]) * alpha;
        len += out[o + c] * out[o + c];
      }
      len = Math.sqrt(len) || 1;
      for (let c = 0; c < 4; c++) out[o + c] /= len;
      for (let c = 4; c < POSE_STRIDE; c++) out[o + c] = poses[i + c] + (poses[j + c] - poses[i + c]) * alpha;
    }
  }
}

/**
 * The poses a receiver decoded as a clip at the send rate (one sample per decoded tick, in
 * tick order), ready for `writePoseDump`. Throws {@link NetError} `BAD_ARGUMENT` when the
 * report kept no poses or none was received.
 */
export function receivedPosesToClip(report: NetsimReport, clip: RawClip): RawClip {
  const ticks = report.receivedTicks,
    poses = report.receivedPoses;
  if (!ticks || !poses)
    throw new NetError(NET_ERROR.BAD_ARGUMENT, 'the simulation kept no poses (run it with keepPoses)');
  if (ticks.length === 0) throw new NetError(NET_ERROR.BAD_ARGUMENT, 'the receiver decoded no pose');
  const boneCount = clip.skeleton.boneNames.length;
  const out = createRawClip(`${clip.name}-received`, clip.skeleton, report.hz, ticks.length, clip.unit);
  const n = ticks.length;
  for (let s = 0; s < n; s++) {
    for (let b = 0; b < boneCount; b++) {
      const o = (s * boneCount + b) * POSE_STRIDE,
        i = b * n + s;
      for (let c = 0; c < 4; c++) out.rotations[i * 4 + c] = poses[o + c];
      for (let c = 0; c < 3; c++) {
        out.translations[i * 3 + c] = poses[o + 4 + c];
        out.scales[i * 3 + c] = poses[o + 7 + c];
      }
    }
  }
  return out;
}
