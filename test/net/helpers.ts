/** Shared helpers of the bonepress/net tests: fixture clips, seeded numbers, pose errors. */
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import type { RawClip } from '../../src/clip/raw-clip.js';
import { POSE_STRIDE } from '../../src/clip/skeleton.js';
import { AFFINE_STRIDE, poseToObject, virtualVertexError } from '../../src/metric/error-metric.js';
import type { ReceivedSnapshot, SnapshotReceiver, SnapshotSender } from '../../src/net/session.js';
import { readBvh } from '../../src/readers/bvh.js';

export { mulberry32 } from '../utils/synthetic.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** Base names of the BVH clips in fixtures/. */
export function fixtureNames(): string[] {
  return readdirSync(path.join(repoRoot, 'fixtures'))
    .filter((f) => f.endsWith('.bvh'))
    .map((f) => f.slice(0, -4))
    .sort();
}

/** A BVH clip from fixtures/ by base name (e.g. `dataset-1_walk_happy_002`). */
export function loadFixture(name: string): RawClip {
  const file = path.join(repoRoot, 'fixtures', `${name}.bvh`);
  return readBvh(readFileSync(file, 'utf8'), `${name}.bvh`);
}

/** Largest virtual-vertex error between two local poses of the same skeleton. */
export function poseError(
  reference: Float32Array,
  decoded: Float32Array,
  parents: Int32Array,
  shell: Float32Array,
): number {
  const boneCount = parents.length;
  const a = new Float64Array(boneCount * AFFINE_STRIDE),
    b = new Float64Array(boneCount * AFFINE_STRIDE);
  poseToObject(reference, parents, a);
  poseToObject(decoded, parents, b);
  let worst = 0;
  for (let i = 0; i < boneCount; i++)
    worst = Math.max(worst, virtualVertexError(a, i * AFFINE_STRIDE, b, i * AFFINE_STRIDE, shell[i]));
  return worst;
}

/** Every sample of `clip` as one pose each. */
export function clipPoses(clip: RawClip): Float32Array[] {
  const boneCount = clip.skeleton.boneNames.length,
    n = clip.sampleCount;
  const poses: Float32Array[] = [];
  for (let s = 0; s < n; s++) {
    const pose = new Float32Array(boneCount * POSE_STRIDE);
    for (let b = 0; b < boneCount; b++) {
      const i = b * n + s,
        o = b * POSE_STRIDE;
      for (let c = 0; c < 4; c++) pose[o + c] = clip.rotations[i * 4 + c];
      for (let c = 0; c < 3; c++) {
        pose[o + 4 + c] = clip.translations[i * 3 + c];
        pose[o + 7 + c] = clip.scales[i * 3 + c];
      }
    }
    poses.push(pose);
  }
  return poses;
}

/** What `work` throws, or undefined when it returns: for asserting an error's class and code. */
export function catchError(work: () => unknown): unknown {
  try {
    work();
  } catch (e) {
    return e;
  }
  return undefined;
}

/**
 * Sends `poses` one a tick over a seeded lossy link: 20 % of snapshots and of acks are lost,
 * snapshots arrive 1–8 ticks later and acks 1–5, and the packets due in a tick arrive in
 * random order; 40 more ticks let the link drain. `onSent(tick)` runs after each send;
 * `onReceived(tick, info)` after each delivery, with the decoded pose in `out`.
 */
export function driveLossyLink(
  poses: readonly Float32Array[],
  sender: SnapshotSender,
  receiver: SnapshotReceiver,
  random: () => number,
  out: Float32Array,
  onReceived: (tick: number, info: ReceivedSnapshot) => void,
  onSent: (tick: number) => void = () => {},
): void {
  const inFlight: { at: number; tick: number; packet: Uint8Array }[] = [];
  const acks: { at: number; packet: Uint8Array }[] = [];
  for (let tick = 0; tick < poses.length + 40; tick++) {
    for (let i = acks.length - 1; i >= 0; i--)
      if (acks[i].at <= tick) {
        sender.receiveAck(acks[i].packet);
        acks.splice(i, 1);
      }
    if (tick < poses.length) {
      const packet = sender.send(poses[tick]);
      onSent(tick);
      if (random() > 0.2) inFlight.push({ at: tick + 1 + Math.floor(random() * 8), tick, packet });
    }
    const due = inFlight.filter((p) => p.at <= tick).sort(() => random() - 0.5);
    for (const p of due) {
      inFlight.splice(inFlight.indexOf(p), 1);
      onReceived(p.tick, receiver.receive(p.packet, out));
      if (random() > 0.2) acks.push({ at: tick + 1 + Math.floor(random() * 5), packet: receiver.ack() });
    }
  }
}
