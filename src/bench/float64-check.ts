/**
 * An independent double-precision check of a compressed clip against its BVH source
 * (a guarantee anyone can check). It shares no code with the reader or the
 * compressor's metric: it parses the BVH numbers itself as float64, builds the source's
 * object transforms with 3×3 rotation matrices in float64, decodes the clip with the runtime
 * (either form), and measures at every sample and bone
 *
 * - the virtual-vertex error the compressor bounds: the largest distance between the
 *   source and decoded images of (d, 0, 0), (0, d, 0) and (0, 0, d), d the shell distance;
 * - the whole-shell bound d · ‖R_src − R_dec‖ + |Δt| = 2 · d · sin(θ/2) + |Δt|, θ the angle
 *   between the two object rotations, which bounds the error of every point of the sphere
 *   of radius d around the bone (the spectral norm of the difference of two rotations is
 *   2 sin(θ/2); it is computed as the Frobenius norm over √2, which equals it for rotations
 *   and avoids the cancellation of acos near 0).
 */
import { CompressedClip } from '../runtime/compressed-clip.js';
import { POSE_STRIDE } from '../runtime/pose.js';
import { sampleKey } from '../runtime/sampler.js';
import { openClip } from '../runtime/transport.js';

/** What {@link checkBvhFloat64} measured. */
export interface Float64Check {
  readonly bones: number;
  readonly samples: number;
  /** Largest virtual-vertex error, in the BVH's unit. */
  readonly vertexError: number;
  readonly vertexWorstBone: number;
  readonly vertexWorstSample: number;
  /** Largest whole-shell bound 2·d·sin(θ/2) + |Δt|, in the BVH's unit. */
  readonly shellError: number;
  readonly shellWorstBone: number;
  readonly shellWorstSample: number;
}

/** A BVH file's skeleton and motion as float64. */
interface Bvh {
  names: string[];
  parents: number[];
  offsets: number[]; // 3 per bone
  channels: { bone: number; kind: 'position' | 'rotation'; axis: number }[];
  frameCount: number;
  frameTime: number;
  values: Float64Array; // frameCount × channels
}

const AXES: Record<string, number> = { x: 0, y: 1, z: 2 };

/** Parses a BVH file with plain `Number()` on every numeric token (float64). Throws Error on a malformed file. */
export function parseBvhFloat64(text: string): Bvh {
  const tokens = text.split(/\s+/).filter((t) => t.length > 0);
  let i = 0;
  const next = (): string => {
    if (i >= tokens.length) throw new Error('BVH ends early');
    return tokens[i++];
  };
  const num = (): number => {
    const t = next();
    const v = Number(t);
    if (!Number.isFinite(v)) throw new Error(`not a number: ${t}`);
    return v;
  };
  const names: string[] = [],
    parents: number[] = [],
    offsets: number[] = [];
  const channels: Bvh['channels'] = [];
  const stack: number[] = []; // bone index, or -2 for an End Site
  let pendingBone = -1;
  if (next().toUpperCase() !== 'HIERARCHY') throw new Error('expected HIERARCHY');
  for (;;) {
    const t = next();
    const u = t.toUpperCase();
    if (u === 'ROOT' || u === 'JOINT') {
      let parent = -1;
      for (let s = stack.length - 1; s >= 0; s--)
        if (stack[s] >= 0) {
          parent = stack[s];
          break;
        }
      names.push(next());
      parents.push(u === 'ROOT' ? -1 : parent);
      offsets.push(0, 0, 0);
      pendingBone = names.length - 1;
    } else if (u === 'END') {
      next(); // Site
      pendingBone = -2;
    } else if (t === '{') {
      stack.push(pendingBone);
    } else if (t === '}') {
      stack.pop();
    } else if (u === 'OFFSET') {
      const x = num(),
        y = num(),
        z = num();
      const top = stack[stack.length - 1];
      if (top >= 0) {
        offsets[3 * top] = x;
        offsets[3 * top + 1] = y;
        offsets[3 * top + 2] = z;
      }
    } else if (u === 'CHANNELS') {
      const bone = stack[stack.length - 1];
      const n = num();
      for (let c = 0; c < n; c++) {
        const name = next().toLowerCase();
        const axis = AXES[name[0]];
        if (axis === undefined) throw new Error(`unknown channel ${name}`);
        channels.push({ bone, kind: name.endsWith('position') ? 'position' : 'rotation', axis });
      }
    } else if (u === 'MOTION') {
      break;
    } else {
      throw new Error(`unexpected token ${t}`);
    }
  }
  next(); // Frames:
  const frameCount = num();
  next();
  next(); // Frame Time:
  const frameTime = num();
  const values = new Float64Array(frameCount * channels.length);
  for (let v = 0; v < values.length; v++) values[v] = num();
  return { names, parents, offsets, channels, frameCount, frameTime, values };
}

/** out (3×3, column-major) = a · b. */
function mul3(a: Float64Array, b: Float64Array, out: Float64Array): void {
  for (let c = 0; c < 3; c++) {
    const x = b[3 * c],
      y = b[3 * c + 1],
      z = b[3 * c + 2];
    out[3 * c] = a[0] * x + a[3] * y + a[6] * z;
    out[3 * c + 1] = a[1] * x + a[4] * y + a[7] * z;
    out[3 * c + 2] = a[2] * x + a[5] * y + a[8] * z;
  }
}

/** The rotation of `degrees` about `axis` (0 x, 1 y, 2 z), column-major. */
function axisRotation(axis: number, degrees: number, out: Float64Array): void {
  const r = (degrees * Math.PI) / 180,
    c = Math.cos(r),
    s = Math.sin(r);
  out.fill(0);
  const a = (axis + 1) % 3,
    b = (axis + 2) % 3;
  out[4 * axis] = 1;
  out[3 * a + a] = c;
  out[3 * a + b] = s; // column a: (cos, sin) in rows a, b
  out[3 * b + a] = -s;
  out[3 * b + b] = c;
}

/**
 * The matrix (column-major) of a quaternion as three.js's `Matrix4.compose` and Babylon.js's
 * `Matrix.ComposeToRef` build it, in float64 and without normalising: a decoded float32
 * quaternion is within about 1e-7 of unit length, and what a player shows is this matrix
 * (docs/format.md, "The error at any time").
 */
function quatToMatrix(x: number, y: number, z: number, w: number, out: Float64Array): void {
  out[0] = 1 - 2 * (y * y + z * z);
  out[1] = 2 * (x * y + w * z);
  out[2] = 2 * (x * z - w * y);
  out[3] = 2 * (x * y - w * z);
  out[4] = 1 - 2 * (x * x + z * z);
  out[5] = 2 * (y * z + w * x);
  out[6] = 2 * (x * z + w * y);
  out[7] = 2 * (y * z - w * x);
  out[8] = 1 - 2 * (x * x + y * y);
}

/**
 * Measures `clip` (runtime or transport bytes, or an opened clip) against the BVH source
 * `bvhText` in float64, with shell distance `shell` (the BVH's unit) for every bone.
 * The clip's bones must be the BVH's joints in file order, and its samples its frames.
 */
export function checkBvhFloat64(bvhText: string, clip: Uint8Array | CompressedClip, shell: number): Float64Check {
  const bvh = parseBvhFloat64(bvhText);
  const decoded = clip instanceof CompressedClip ? clip : openClip(clip);
  const boneCount = bvh.names.length;
  if (decoded.boneCount !== boneCount) throw new Error(`clip has ${decoded.boneCount} bones, the BVH ${boneCount}`);
  const sampled = decoded.sampleCount === bvh.frameCount;
  const sampler = decoded.createSampler();
  const pose = new Float32Array(boneCount * POSE_STRIDE);
  const srcRot = new Float64Array(9 * boneCount),
    srcPos = new Float64Array(3 * boneCount);
  const decRot = new Float64Array(9 * boneCount),
    decPos = new Float64Array(3 * boneCount);
  const local = new Float64Array(9),
    axis = new Float64Array(9),
    tmp = new Float64Array(9);
  const t = new Float64Array(3);
  const perBone = bvh.channels.map((c, index) => ({ ...c, index }));
  let vertexError = 0,
    vertexWorstBone = -1,
    vertexWorstSample = -1;
  let shellError = 0,
    shellWorstBone = -1,
    shellWorstSample = -1;
  const stride = bvh.channels.length;
  for (let f = 0; f < bvh.frameCount; f++) {
    if (sampled) sampleKey(sampler, f, pose);
    else sampler.sample(f * bvh.frameTime, pose);
    for (let b = 0; b < boneCount; b++) {
      // Source local transform: OFFSET (or position channels), Euler channels composed in listed order.
      local.fill(0);
      local[0] = local[4] = local[8] = 1;
      t[0] = bvh.offsets[3 * b];
      t[1] = bvh.offsets[3 * b + 1];
      t[2] = bvh.offsets[3 * b + 2];
      for (const c of perBone) {
        if (c.bone !== b) continue;
        const v = bvh.values[f * stride + c.index];
        if (c.kind === 'position') t[c.axis] = v;
        else {
          axisRotation(c.axis, v, axis);
          mul3(local, axis, tmp);
          local.set(tmp);
        }
      }
      compose(bvh.parents[b], b, local, t, srcRot, srcPos);
      // Decoded local transform (float32 values, composed in float64).
      const o = b * POSE_STRIDE;
      quatToMatrix(pose[o], pose[o + 1], pose[o + 2], pose[o + 3], local);
      for (let c = 0; c < 3; c++) for (let r = 0; r < 3; r++) local[3 * c + r] *= pose[o + 7 + c];
      t[0] = pose[o + 4];
      t[1] = pose[o + 5];
      t[2] = pose[o + 6];
      compose(bvh.parents[b], b, local, t, decRot, decPos);
      // Errors.
      const dx = srcPos[3 * b] - decPos[3 * b],
        dy = srcPos[3 * b + 1] - decPos[3 * b + 1],
        dz = srcPos[3 * b + 2] - decPos[3 * b + 2];
      let frob = 0,
        vertex = 0;
      for (let c = 0; c < 3; c++) {
        const ex = srcRot[9 * b + 3 * c] - decRot[9 * b + 3 * c];
        const ey = srcRot[9 * b + 3 * c + 1] - decRot[9 * b + 3 * c + 1];
        const ez = srcRot[9 * b + 3 * c + 2] - decRot[9 * b + 3 * c + 2];
        frob += ex * ex + ey * ey + ez * ez;
        const vx = shell * ex + dx,
          vy = shell * ey + dy,
          vz = shell * ez + dz;
        const e = Math.sqrt(vx * vx + vy * vy + vz * vz);
        if (e > vertex) vertex = e;
      }
      const whole = shell * Math.sqrt(frob / 2) + Math.sqrt(dx * dx + dy * dy + dz * dz);
      if (vertex > vertexError) {
        vertexError = vertex;
        vertexWorstBone = b;
        vertexWorstSample = f;
      }
      if (whole > shellError) {
        shellError = whole;
        shellWorstBone = b;
        shellWorstSample = f;
      }
    }
  }
  return {
    bones: boneCount,
    samples: bvh.frameCount,
    vertexError,
    vertexWorstBone,
    vertexWorstSample,
    shellError,
    shellWorstBone,
    shellWorstSample,
  };
}

/** Object transform of bone `b` from its parent's (already computed) and its local one. */
function compose(
  parent: number,
  b: number,
  rot: Float64Array,
  t: Float64Array,
  outRot: Float64Array,
  outPos: Float64Array,
): void {
  if (parent < 0) {
    outRot.set(rot, 9 * b);
    outPos[3 * b] = t[0];
    outPos[3 * b + 1] = t[1];
    outPos[3 * b + 2] = t[2];
    return;
  }
  const p = outRot.subarray(9 * parent, 9 * parent + 9);
  mul3(p, rot, outRot.subarray(9 * b, 9 * b + 9));
  for (let r = 0; r < 3; r++) {
    outPos[3 * b + r] = p[r] * t[0] + p[3 + r] * t[1] + p[6 + r] * t[2] + outPos[3 * parent + r];
  }
}
