/**
 * The receiver's view: a jitter buffer of decoded world snapshots and interpolation between
 * them. Snapshots arrive late, out of order or not at all; a client renders the world as it
 * was `playoutDelay` ago, between the two buffered snapshots around that time, so a lost
 * snapshot or a late one shows as a slightly longer interpolation rather than a hitch. Past
 * the newest snapshot it extrapolates from the last two, for at most `maxExtrapolation`,
 * then holds.
 */
import { NET_ERROR, NetError } from './bit-stream.js';
import { FIELD_KIND, type WorldSchema } from './world-schema.js';
import { NO_ENTITY, WorldState, type WorldSnapshot } from './world-codec.js';

/** Options of {@link SnapshotInterpolator}. */
export interface InterpolationOptions {
  /** Server ticks per second (the spacing of snapshot times). Required. */
  hz: number;
  /** How far behind the newest server time the view is rendered, ms. Default 100. */
  playoutDelayMs?: number;
  /** Longest extrapolation past the newest snapshot, ms; then the view holds. Default 50. */
  maxExtrapolationMs?: number;
  /** Snapshots buffered. Default 32. */
  capacity?: number;
}

/** Defaults of {@link InterpolationOptions}. */
export const INTERPOLATION_DEFAULTS = { playoutDelayMs: 100, maxExtrapolationMs: 50, capacity: 32 } as const;

/** How {@link SnapshotInterpolator.sample} made the view. */
export type InterpolationMode = 'interpolated' | 'extrapolated' | 'held' | 'empty';

/**
 * Buffers decoded snapshots by tick and renders interpolated world states. Allocates its
 * buffer once (`capacity` world states); {@link sample} allocates nothing.
 */
export class SnapshotInterpolator {
  readonly hz: number;
  readonly playoutDelay: number; // s
  readonly maxExtrapolation: number; // s
  private readonly states: WorldState[];
  private readonly ticks: Float64Array;
  private count = 0;

  /** Throws {@link NetError} `BAD_ARGUMENT` for bad options. */
  constructor(
    readonly schema: WorldSchema,
    options: InterpolationOptions,
  ) {
    const capacity = options.capacity ?? INTERPOLATION_DEFAULTS.capacity;
    const delay = options.playoutDelayMs ?? INTERPOLATION_DEFAULTS.playoutDelayMs;
    const extra = options.maxExtrapolationMs ?? INTERPOLATION_DEFAULTS.maxExtrapolationMs;
    if (!(options.hz > 0) || !Number.isFinite(options.hz))
      throw new NetError(NET_ERROR.BAD_ARGUMENT, `hz must be above 0, got ${options.hz}`);
    if (!(delay >= 0) || !Number.isFinite(delay))
      throw new NetError(NET_ERROR.BAD_ARGUMENT, `playoutDelayMs must be ≥ 0, got ${delay}`);
    if (!(extra >= 0) || !Number.isFinite(extra))
      throw new NetError(NET_ERROR.BAD_ARGUMENT, `maxExtrapolationMs must be ≥ 0, got ${extra}`);
    if (!Number.isInteger(capacity) || capacity < 2 || capacity > 1024)
      throw new NetError(NET_ERROR.BAD_ARGUMENT, `capacity must be in 2..1024, got ${capacity}`);
    this.hz = options.hz;
    this.playoutDelay = delay / 1000;
    this.maxExtrapolation = extra / 1000;
    this.states = Array.from({ length: capacity }, () => new WorldState(schema));
    this.ticks = new Float64Array(capacity);
  }

  /** Snapshots buffered. */
  get size(): number {
    return this.count;
  }

  /** The newest buffered tick, or -Infinity. */
  get newestTick(): number {
    return this.count > 0 ? this.ticks[this.count - 1] : -Infinity;
  }

  /**
   * Buffers the snapshot of server tick `tick` (an unwrapped tick, e.g.
   * {@link WorldReceived.tick}). Duplicates and snapshots older than the whole buffer are
   * ignored; when full, the oldest is dropped.
   */
  push(tick: number, snapshot: WorldSnapshot): void {
    const n = this.count,
      cap = this.states.length;
    let at = n;
    while (at > 0 && this.ticks[at - 1] > tick) at--;
    if (at > 0 && this.ticks[at - 1] === tick) return;
    if (n === cap && at === 0) return;
    // Reuse the oldest state when full.
    let spare: WorldState;
    if (n === cap) {
      spare = this.states[0];
      for (let i = 1; i < at; i++) {
        this.states[i - 1] = this.states[i];
        this.ticks[i - 1] = this.ticks[i];
      }
      at--;
    } else {
      spare = this.states[n];
      for (let i = n; i > at; i--) {
        this.states[i] = this.states[i - 1];
        this.ticks[i] = this.ticks[i - 1];
      }
      this.count++;
    }
    this.states[at] = spare;
    this.ticks[at] = tick;
    snapshot.dequantize(spare);
  }

  /**
   * Renders the world at server time `time` seconds (tick / hz) into `out`: between the
   * two buffered snapshots around it, or extrapolated past the newest for at most
   * `maxExtrapolation`, or held at the oldest/newest. Callers usually pass their estimate
   * of the server's clock minus {@link playoutDelay} ({@link renderTime}).
   */
  sample(time: number, out: WorldState): InterpolationMode {
    const n = this.count;
    if (n === 0) return 'empty';
    const t = time * this.hz;
    if (n === 1 || t <= this.ticks[0]) {
      out.copyFrom(this.states[t <= this.ticks[0] ? 0 : n - 1]);
      return 'held';
    }
    if (t >= this.ticks[n - 1]) {
      const limit = this.ticks[n - 1] + this.maxExtrapolation * this.hz;
      const tt = Math.min(t, limit);
      const a = this.ticks[n - 2],
        b = this.ticks[n - 1];
      blend(this.states[n - 2], this.states[n - 1], (tt - a) / (b - a), out);
      return t > limit ? 'held' : 'extrapolated';
    }
    let i = n - 1;
    while (this.ticks[i - 1] > t) i--;
    const a = this.ticks[i - 1],
      b = this.ticks[i];
    blend(this.states[i - 1], this.states[i], (t - a) / (b - a), out);
    return 'interpolated';
  }

  /** The render time for a client whose estimate of the server clock is `serverTime` seconds. */
  renderTime(serverTime: number): number {
    return serverTime - this.playoutDelay;
  }
}

/**
 * out = a + (b − a)·alpha per entity present in both: positions, scales and floats
 * linearly, orientations (and pose rotations) by normalised lerp on the shortest path,
 * ints, bools and enums from a (alpha < 1) or b. Entities present in only one side take
 * that side's state when alpha says it is the nearer, else are absent. alpha > 1
 * extrapolates.
 */
function blend(a: WorldState, b: WorldState, alpha: number, out: WorldState): void {
  const schema = a.schema,
    stride = a.valueStride;
  const av = a.values,
    bv = b.values,
    ov = out.values;
  for (let id = 0; id < schema.maxEntities; id++) {
    const ta = a.types[id],
      tb = b.types[id];
    if (ta !== tb) {
      const from = alpha < 0.5 ? a : b,
        t = from.types[id];
      out.types[id] = t;
      if (t !== NO_ENTITY)
        ov.set(from.values.subarray(id * stride, id * stride + schema.types[t].valueCount), id * stride);
      continue;
    }
    out.types[id] = ta;
    if (ta === NO_ENTITY) continue;
    const o = id * stride;
    for (const f of schema.types[ta].fields) {
      const v = o + f.valueOffset;
      switch (f.kind) {
        case FIELD_KIND.POSITION:
        case FIELD_KIND.SCALE:
        case FIELD_KIND.FLOAT:
          for (let k = 0; k < f.valueCount; k++) ov[v + k] = av[v + k] + (bv[v + k] - av[v + k]) * alpha;
          break;
        case FIELD_KIND.ORIENTATION:
          nlerp(av, bv, v, alpha, ov);
          break;
        case FIELD_KIND.POSE:
          for (let bone = 0; bone < f.valueCount / 10; bone++) {
            const p = v + bone * 10;
            nlerp(av, bv, p, alpha, ov);
            for (let k = 4; k < 10; k++) ov[p + k] = av[p + k] + (bv[p + k] - av[p + k]) * alpha;
          }
          break;
        default:
          ov[v] = alpha < 1 ? av[v] : bv[v];
      }
    }
  }
}

function nlerp(a: Float32Array, b: Float32Array, o: number, alpha: number, out: Float32Array): void {
  const dot = a[o] * b[o] + a[o + 1] * b[o + 1] + a[o + 2] * b[o + 2] + a[o + 3] * b[o + 3];
  const s = dot < 0 ? -1 : 1;
  let x = a[o] + (s * b[o] - a[o]) * alpha,
    y = a[o + 1] + (s * b[o + 1] - a[o + 1]) * alpha;
  let z = a[o + 2] + (s * b[o + 2] - a[o + 2]) * alpha,
    w = a[o + 3] + (s * b[o + 3] - a[o + 3]) * alpha;
  const len = Math.sqrt(x * x + y * y + z * z + w * w);
  if (len > 0) {
    x /= len;
    y /= len;
    z /= len;
    w /= len;
  } else {
    x = 0;
    y = 0;
    z = 0;
    w = 1;
  }
  out[o] = x;
  out[o + 1] = y;
  out[o + 2] = z;
  out[o + 3] = w;
}
