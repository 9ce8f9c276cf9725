/**
 * An outage of exactly 65,536 sends both ways brings the 16-bit sequence
 * back to where it was, so an old ack names a newer snapshot the receiver never got. No
 * wrong pose may be accepted silently: every pose the receiver returns is the sender's
 * quantisation of that tick, the others are rejected with a NetError, and the stream
 * recovers.
 */
import { describe, expect, it } from 'vitest';

import { createRawClip } from '../../src/clip/raw-clip.js';
import { createSkeleton } from '../../src/clip/skeleton.js';
import { NET_ERROR, NetError } from '../../src/net/bit-stream.js';
import { PoseQuantizer, createSnapshotCodes, dequantizePose } from '../../src/net/quantize.js';
import { createSnapshotSchema, type SnapshotSchema } from '../../src/net/schema.js';
import { SNAPSHOT_CODING, SnapshotReceiver, SnapshotSender, type SnapshotCoding } from '../../src/net/session.js';
import { catchError, clipPoses, loadFixture, poseError } from './helpers.js';

const OUTAGE = 65536;

interface OutageResult {
  accepted: number;
  rejected: number;
  wrong: number;
  recoveredAt: number;
}

/**
 * Sends the clip's poses in a loop: `before` ticks over a link with a 6-tick ack delay, an
 * outage of {@link OUTAGE} sends with every packet and ack lost, then `after` ticks again.
 * `ackEveryTick`: the receiver acks its newest snapshot every tick (so its first acks after
 * the outage are stale), else only after each packet it decodes.
 */
function runOutage(
  schema: SnapshotSchema,
  poses: Float32Array[],
  coding: SnapshotCoding,
  ackEveryTick: boolean,
): OutageResult {
  const sender = new SnapshotSender(schema, { coding });
  const receiver = new SnapshotReceiver(schema, { coding });
  const out = new Float32Array(poses[0].length);
  const quantizer = new PoseQuantizer(schema),
    codes = createSnapshotCodes(schema),
    bound = new Float32Array(out.length);
  const acks: { at: number; packet: Uint8Array }[] = [];
  const before = 100,
    after = 235;
  const result: OutageResult = { accepted: 0, rejected: 0, wrong: 0, recoveredAt: -1 };
  for (let t = 0; t < before + OUTAGE + after; t++) {
    while (acks.length > 0 && acks[0].at <= t) sender.receiveAck(acks.shift()!.packet);
    const pose = poses[t % poses.length];
    const packet = sender.send(pose);
    const down = t >= before && t < before + OUTAGE;
    if (!down) {
      const error = catchError(() => receiver.receive(packet, out));
      if (error === undefined) {
        result.accepted++;
        // Verified deltas move codes off the bound's grid, so measure against the source
        // pose; a wrong baseline puts bones centimetres away, far above the threshold.
        if (poseError(pose, out, schema.parents, schema.shellDistances) > schema.threshold) result.wrong++;
        if (t >= before + OUTAGE && result.recoveredAt < 0 && sender.lastPacket!.baselineSequence >= 0)
          result.recoveredAt = t - before - OUTAGE;
        if (!ackEveryTick) acks.push({ at: t + 6, packet: receiver.ack() });
      } else {
        expect(error).toBeInstanceOf(NetError);
        result.rejected++;
      }
    }
    if (ackEveryTick && !down && receiver.newestSequence >= 0) acks.push({ at: t + 6, packet: receiver.ack() });
  }
  // The bound's own quantisation of the last pose: the last packet decoded to a real pose.
  dequantizePose(schema, quantizer.quantize(poses[(before + OUTAGE + after - 1) % poses.length], codes), bound);
  expect(poseError(bound, out, schema.parents, schema.shellDistances)).toBeLessThanOrEqual(2 * schema.threshold);
  return result;
}

/** A three-bone arm swinging and twisting: cheap enough to send 65,536 snapshots per test. */
function armClip() {
  const skeleton = createSkeleton(
    ['root', 'upper', 'lower'],
    [-1, 0, 1],
    Float32Array.from([0, 0, 0, 1, 0, 0, 0, 1, 1, 1, 0, 0, 0, 1, 0, 20, 0, 1, 1, 1, 0, 0, 0, 1, 0, 25, 0, 1, 1, 1]),
    'cm',
  );
  const n = 90,
    clip = createRawClip('arm', skeleton, 30, n, 'cm');
  for (let s = 0; s < n; s++) {
    for (let b = 0; b < 3; b++) {
      const angle = Math.sin((s / n) * 2 * Math.PI * (b + 1)) * (0.5 + b * 0.3);
      const i = (b * n + s) * 4; // about x, y, z for the three bones
      clip.rotations[i + b] = Math.sin(angle / 2);
      clip.rotations[i + 3] = Math.cos(angle / 2);
    }
  }
  return clip;
}

describe('sequence wraparound after a 65,536-send outage', () => {
  const clip = loadFixture('dataset-1_byebye_angry_001');
  const schema = createSnapshotSchema(clip);
  const poses = clipPoses(clip);
  const arm = armClip();
  const armSchema = createSnapshotSchema(arm);
  const armPoses = clipPoses(arm);

  for (const coding of [SNAPSHOT_CODING.PLAIN, SNAPSHOT_CODING.ENTROPY] as SnapshotCoding[]) {
    for (const ackEveryTick of [false, true]) {
      it(`${coding}, acks ${ackEveryTick ? 'every tick' : 'per packet'}: accepts no wrong pose and recovers`, () => {
        const r = runOutage(armSchema, armPoses, coding, ackEveryTick);
        expect(r.wrong).toBe(0);
        expect(r.accepted).toBeGreaterThan(100 + 235 - 80); // at most a window's worth rejected
        expect(r.recoveredAt).toBeGreaterThanOrEqual(0);
        expect(r.recoveredAt).toBeLessThan(80);
      }, 120_000);
    }
  }

  it('expires an ack once its snapshot is a window old', () => {
    const sender = new SnapshotSender(schema, { windowSize: 8 });
    const receiver = new SnapshotReceiver(schema, { windowSize: 8 });
    const out = new Float32Array(poses[0].length);
    receiver.receive(sender.send(poses[0]), out);
    sender.receiveAck(receiver.ack());
    expect(sender.ackedSequence).toBe(0);
    for (let t = 1; t < 8; t++) {
      sender.send(poses[t]);
      expect(sender.lastPacket!.baselineSequence).toBe(0);
    }
    expect(sender.ackedSequence).toBe(-1);
    sender.send(poses[8]);
    expect(sender.lastPacket!.baselineSequence).toBe(-1); // absolute again
  });

  for (const coding of [SNAPSHOT_CODING.PLAIN, SNAPSHOT_CODING.ENTROPY] as SnapshotCoding[]) {
    it(`${coding}: rejects a delta against another snapshot that carries the sequence the receiver holds`, () => {
      // Two senders with the same sequence numbers but different poses stand for the two
      // sides of the wrap: the receiver holds A's snapshot 5, B codes against its own 5.
      const a = new SnapshotSender(schema, { coding }),
        b = new SnapshotSender(schema, { coding });
      const receiver = new SnapshotReceiver(schema, { coding });
      const out = new Float32Array(poses[0].length);
      for (let t = 0; t <= 5; t++) receiver.receive(a.send(poses[t]), out);
      const n = poses.length;
      for (let t = 0; t <= 5; t++) b.send(poses[n - 1 - t]);
      b.receiveAck(receiver.ack());
      const packet = b.send(poses[n - 7]);
      expect(b.lastPacket!.baselineSequence).toBe(5);
      const error = catchError(() => receiver.receive(packet, out));
      expect(error).toBeInstanceOf(NetError);
      expect((error as NetError).code).toBe(NET_ERROR.BAD_CHECKSUM);
      // A's own delta against 5 still decodes.
      a.receiveAck(receiver.ack());
      expect(receiver.receive(a.send(poses[6]), out).baselineSequence).toBe(5);
    });
  }
});
