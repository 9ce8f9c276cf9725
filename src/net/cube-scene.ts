/**
 * A deterministic test world in the style of the snapshot-compression literature: 900
 * one-metre cubes dropped onto a floor in a 30 × 30 grid, where they settle, and a
 * two-metre player cube that drives through them on a fixed path, pushing cubes that
 * slide, spin, push their neighbours and come to rest again. The physics is deliberately
 * simple (boxes as axis-aligned squares in the floor plane, friction, restitution,
 * sleeping), since what matters for the network code is the motion statistics: most cubes
 * at rest at any time, a few dozen moving. Same seed, same motion, bit for bit.
 */
import { mulberry32 } from '../clip/random.js';
import { buildWorldSchema, type WorldSchema } from './world-schema.js';
import { WorldState } from './world-codec.js';

/** Options of {@link CubeScene}. */
export interface CubeSceneOptions {
  /** Cubes in the grid (the player is one more entity, the last id). Default 900. */
  cubes?: number;
  /** Seed of the drop heights and tilts. Default 1. */
  seed?: number;
  /** Ticks per second. Default 60. */
  hz?: number;
  /** Player speed in m/s. Default 3. */
  playerSpeed?: number;
}

/** Defaults of {@link CubeSceneOptions}. */
export const CUBE_SCENE_DEFAULTS = { cubes: 900, seed: 1, hz: 60, playerSpeed: 3 } as const;

/** Half the floor's side, in metres: positions are sent in ±this. */
export const CUBE_SCENE_HALF_SIZE = 64;

/** Largest distance of any cube corner from the sender's state, in metres (3 mm). */
export const CUBE_SCENE_PRECISION = 0.003;

/**
 * The schema of the cube scene: types "cube" (half extent 0.5 m) and "player" (1 m), each a
 * position in ±64 m × ±64 m × 0..16 m and an orientation, with precision `precision`
 * metres over every corner.
 */
export function cubeSceneSchema(options: { cubes?: number; precision?: number } = {}): WorldSchema {
  const cubes = options.cubes ?? CUBE_SCENE_DEFAULTS.cubes;
  const precision = options.precision ?? CUBE_SCENE_PRECISION;
  const h = CUBE_SCENE_HALF_SIZE;
  const fields = {
    position: { kind: 'position', min: [-h, -h, 0], max: [h, h, 16] },
    orientation: { kind: 'orientation' },
  } as const;
  return buildWorldSchema({
    maxEntities: cubes + 1,
    types: {
      cube: {
        fields,
        rigidBody: { position: 'position', orientation: 'orientation', halfExtents: [0.5, 0.5, 0.5], precision },
      },
      player: {
        fields,
        rigidBody: { position: 'position', orientation: 'orientation', halfExtents: [1, 1, 1], precision },
      },
    },
  });
}

const GRAVITY = 9.81;
const FRICTION = 0.5; // μ: sliding decelerates by μ·g
const RESTITUTION = 0.3;
const SLEEP_SPEED = 0.05; // m/s and rad/s
const CONTACT_ACCELERATION = 12; // m/s², and rad/s² of spin
// Contact grid: 2 m cells over the floor (±64 m), with a border so neighbours never wrap.
const CELL_OFFSET = 34;
const CELLS = 68;
function cellOf(x: number, y: number): number {
  return (Math.floor(x / 2) + CELL_OFFSET) * CELLS + Math.floor(y / 2) + CELL_OFFSET;
}

/** The cube scene's simulation; {@link step} advances one tick and writes the world state. */
export class CubeScene {
  readonly schema: WorldSchema;
  readonly state: WorldState;
  readonly cubes: number;
  readonly hz: number;
  /** Cubes moving at the last tick (the player not counted). */
  awakeCount = 0;
  private readonly playerSpeed: number;
  private readonly p: Float64Array; // x y z per cube
  private readonly v: Float64Array;
  private readonly yaw: Float64Array;
  private readonly yawRate: Float64Array;
  private readonly tilt: Float64Array; // angle, axis angle in the floor plane
  private readonly tiltAxis: Float64Array;
  private readonly awake: Uint8Array;
  private readonly cellHead = new Int32Array(CELLS * CELLS);
  private readonly cellNext: Int32Array;
  private tickIndex = 0;
  private playerX = 0;
  private playerY = 0;
  private playerVX = 0;
  private playerVY = 0;

  constructor(options: CubeSceneOptions = {}) {
    this.cubes = options.cubes ?? CUBE_SCENE_DEFAULTS.cubes;
    this.hz = options.hz ?? CUBE_SCENE_DEFAULTS.hz;
    this.playerSpeed = options.playerSpeed ?? CUBE_SCENE_DEFAULTS.playerSpeed;
    const random = mulberry32(options.seed ?? CUBE_SCENE_DEFAULTS.seed);
    this.schema = cubeSceneSchema({ cubes: this.cubes });
    this.state = new WorldState(this.schema);
    const n = this.cubes;
    this.p = new Float64Array(n * 3);
    this.v = new Float64Array(n * 3);
    this.yaw = new Float64Array(n);
    this.yawRate = new Float64Array(n);
    this.tilt = new Float64Array(n);
    this.tiltAxis = new Float64Array(n);
    this.awake = new Uint8Array(n).fill(1);
    this.cellNext = new Int32Array(n);
    const side = Math.ceil(Math.sqrt(n));
    for (let i = 0; i < n; i++) {
      this.p[i * 3] = ((i % side) - (side - 1) / 2) * 1.5;
      this.p[i * 3 + 1] = (Math.floor(i / side) - (side - 1) / 2) * 1.5;
      this.p[i * 3 + 2] = 0.5 + random() * 0.3;
      this.yaw[i] = (random() - 0.5) * 0.6;
      this.tilt[i] = random() * 0.3;
      this.tiltAxis[i] = random() * 2 * Math.PI;
      this.state.spawn(i, 'cube');
    }
    this.state.spawn(n, 'player');
    this.placePlayer(0);
    this.write();
  }

  /** Ticks stepped so far. */
  get tick(): number {
    return this.tickIndex;
  }

  // The player drives a rounded figure of eight through the grid at constant speed.
  private placePlayer(tick: number): void {
    const a = 18,
      t = (tick / this.hz) * (this.playerSpeed / (a * 1.2));
    const x = a * Math.sin(t),
      y = (a * 0.8 * Math.sin(2 * t)) / 1.2;
    this.playerVX = (x - this.playerX) * this.hz;
    this.playerVY = (y - this.playerY) * this.hz;
    if (tick === 0) {
      this.playerVX = 0;
      this.playerVY = 0;
    }
    this.playerX = x;
    this.playerY = y;
  }

  /** Advances one tick: the player moves, cubes fall, slide, collide and fall asleep. */
  step(): void {
    const dt = 1 / this.hz,
      n = this.cubes,
      p = this.p,
      v = this.v;
    this.tickIndex++;
    this.placePlayer(this.tickIndex);
    const px = this.playerX,
      py = this.playerY;
    // Player contacts: a 2 m and a 1 m square overlap. Contacts are soft (velocity changes at
    // most CONTACT_ACCELERATION), as in penalty-based physics, so motion has no corners
    // sharper than a real engine's over one tick.
    const dv = CONTACT_ACCELERATION * dt;
    for (let i = 0; i < n; i++) {
      const dx = p[i * 3] - px,
        dy = p[i * 3 + 1] - py;
      const ox = 1.5 - Math.abs(dx),
        oy = 1.5 - Math.abs(dy);
      if (ox <= 0 || oy <= 0 || p[i * 3 + 2] > 2.5) continue;
      this.awake[i] = 1;
      const axis = ox < oy ? 0 : 1,
        sign = Math.sign(axis === 0 ? dx : dy) || 1;
      const target = (axis === 0 ? this.playerVX : this.playerVY) + sign * 0.5;
      const change = (target - v[i * 3 + axis]) * sign;
      if (change > 0) v[i * 3 + axis] += sign * Math.min(change, dv);
      const spin = (axis === 0 ? dy : -dx) * sign * 0.5;
      this.yawRate[i] += Math.max(-dv, Math.min(dv, spin - this.yawRate[i]));
    }
    // Integrate the awake cubes.
    for (let i = 0; i < n; i++) {
      if (!this.awake[i]) continue;
      const o = i * 3;
      v[o + 2] -= GRAVITY * dt;
      p[o] += v[o] * dt;
      p[o + 1] += v[o + 1] * dt;
      p[o + 2] += v[o + 2] * dt;
      const grounded = p[o + 2] <= 0.5;
      if (grounded) {
        p[o + 2] = 0.5;
        v[o + 2] = -v[o + 2] * RESTITUTION;
        if (v[o + 2] < 0.4) v[o + 2] = 0;
        const speed = Math.hypot(v[o], v[o + 1]),
          slow = FRICTION * GRAVITY * dt;
        const k = speed > slow ? (speed - slow) / speed : 0;
        v[o] *= k;
        v[o + 1] *= k;
        this.yawRate[i] *= 0.92;
        this.tilt[i] *= 0.85;
      }
      this.yaw[i] += this.yawRate[i] * dt;
      for (let c = 0; c < 2; c++)
        p[o + c] = Math.min(CUBE_SCENE_HALF_SIZE - 1, Math.max(-CUBE_SCENE_HALF_SIZE + 1, p[o + c]));
    }
    this.collide();
    let awake = 0;
    for (let i = 0; i < n; i++) {
      if (!this.awake[i]) continue;
      const o = i * 3;
      if (
        p[o + 2] === 0.5 &&
        v[o + 2] === 0 &&
        Math.hypot(v[o], v[o + 1]) < SLEEP_SPEED &&
        Math.abs(this.yawRate[i]) < SLEEP_SPEED &&
        this.tilt[i] < 0.002
      ) {
        this.awake[i] = 0;
        v[o] = 0;
        v[o + 1] = 0;
        this.yawRate[i] = 0;
        this.tilt[i] = 0;
      } else awake++;
    }
    this.awakeCount = awake;
    this.write();
  }

  // Cube–cube contacts in the floor plane: overlapping unit squares are pushed apart along
  // the axis of least overlap and share their velocity along it; a moving cube wakes a
  // sleeping one. A grid of 2 m cells finds the neighbours.
  private collide(): void {
    const n = this.cubes,
      p = this.p,
      v = this.v,
      head = this.cellHead,
      next = this.cellNext;
    const dv = CONTACT_ACCELERATION / this.hz;
    head.fill(-1);
    for (let i = 0; i < n; i++) {
      const k = cellOf(p[i * 3], p[i * 3 + 1]);
      next[i] = head[k];
      head[k] = i;
    }
    for (let i = 0; i < n; i++) {
      if (!this.awake[i]) continue;
      const cx = Math.floor(p[i * 3] / 2) + CELL_OFFSET,
        cy = Math.floor(p[i * 3 + 1] / 2) + CELL_OFFSET;
      for (let gx = cx - 1; gx <= cx + 1; gx++) {
        for (let gy = cy - 1; gy <= cy + 1; gy++) {
          for (let j = head[gx * CELLS + gy]; j >= 0; j = next[j]) {
            if (j === i || (this.awake[j] && j < i)) continue;
            const dx = p[j * 3] - p[i * 3],
              dy = p[j * 3 + 1] - p[i * 3 + 1];
            const ox = 1 - Math.abs(dx),
              oy = 1 - Math.abs(dy);
            if (ox <= 0 || oy <= 0 || Math.abs(p[j * 3 + 2] - p[i * 3 + 2]) >= 1) continue;
            const axis = ox < oy ? 0 : 1,
              sign = Math.sign(axis === 0 ? dx : dy) || 1;
            // Approaching: share the velocity along the axis, at most CONTACT_ACCELERATION
            // each; overlapping but not approaching: drift apart at 0.3 m/s.
            const vi = v[i * 3 + axis],
              vj = v[j * 3 + axis];
            const closing = (vi - vj) * sign;
            const change = Math.min(
              closing > 0 ? (closing * (1 + RESTITUTION)) / 2 : Math.max(0, 0.3 + closing / 2),
              dv,
            );
            v[i * 3 + axis] = vi - sign * change;
            v[j * 3 + axis] = vj + sign * change;
            this.awake[j] = 1;
          }
        }
      }
    }
  }

  private write(): void {
    const n = this.cubes,
      s = this.state,
      values = s.values,
      stride = s.valueStride;
    for (let i = 0; i < n; i++) {
      const o = i * stride;
      values[o] = this.p[i * 3];
      values[o + 1] = this.p[i * 3 + 1];
      values[o + 2] = this.p[i * 3 + 2];
      writeOrientation(this.yaw[i], this.tilt[i], this.tiltAxis[i], values, o + 3);
    }
    const o = n * stride;
    values[o] = this.playerX;
    values[o + 1] = this.playerY;
    values[o + 2] = 1;
    writeOrientation(Math.atan2(this.playerVY, this.playerVX), 0, 0, values, o + 3);
  }
}

/** Yaw about z after a tilt of `tilt` radians about the floor-plane axis at angle `axis`: x y z w at out[o..]. */
function writeOrientation(yaw: number, tilt: number, axis: number, out: Float32Array, o: number): void {
  const cy = Math.cos(yaw / 2),
    sy = Math.sin(yaw / 2);
  const ct = Math.cos(tilt / 2),
    st = Math.sin(tilt / 2);
  const ax = Math.cos(axis) * st,
    ay = Math.sin(axis) * st;
  // q = yaw (0, 0, sy, cy) · tilt (ax, ay, 0, ct)
  out[o] = cy * ax - sy * ay;
  out[o + 1] = cy * ay + sy * ax;
  out[o + 2] = sy * ct;
  out[o + 3] = cy * ct;
}
