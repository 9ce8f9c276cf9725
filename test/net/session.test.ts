import { describe, expect, it } from 'vitest';

import { createSkeleton } from '../../src/clip/skeleton.js';
import { createRawClip } from '../../src/clip/raw-clip.js';
import { NET_ERROR, NetError } from '../../src/net/bit-stream.js';
import { PoseQuantizer, createSnapshotCodes, dequantizePose } from '../../src/net/quantize.js';
import { createSnapshotSchema, type SnapshotSchema } from '../../src/net/schema.js';
import {
  SNAPSHOT_CODING,
  SnapshotReceiver,
  SnapshotSender,
  sequenceDistance,
  sequenceGreaterThan,
  type SessionOptions,
  type SnapshotCoding,
} from '../../src/net/session.js';
import { catchError, clipPoses, driveLossyLink, loadFixture, mulberry32 } from './helpers.js';

/** The pose a receiver must decode for `pose`: the sender's own quantisation. */
function expectedPose(schema: SnapshotSchema, pose: Float32Array): Float32Array {
  const codes = new PoseQuantizer(schema).quantize(pose, createSnapshotCodes(schema));
  return dequantizePose(schema, codes, new Float32Array(pose.length));
}

const CODINGS: SnapshotCoding[] = [SNAPSHOT_CODING.PLAIN, SNAPSHOT_CODING.ENTROPY];

describe('sequence numbers', () => {
  it('compare with 16-bit wraparound', () => {
    expect(sequenceGreaterThan(1, 0)).toBe(true);
    expect(sequenceGreaterThan(0, 1)).toBe(false);
    expect(sequenceGreaterThan(0, 65535)).toBe(true);
    expect(sequenceGreaterThan(65535, 0)).toBe(false);
    expect(sequenceGreaterThan(100, 65500)).toBe(true);
    expect(sequenceGreaterThan(5, 5)).toBe(false);
    expect(sequenceDistance(3, 65534)).toBe(5);
  });
});

describe('snapshot session', () => {
  const clip = loadFixture('dataset-1_byebye_angry_001');
  const schema = createSnapshotSchema(clip);
  const poses = clipPoses(clip);
  const expected = poses.map((p) => expectedPose(schema, p));

  for (const coding of CODINGS) {
    it(`${coding}: decodes every pose exactly as the sender quantised it, deltas once acked`, () => {
      const sender = new SnapshotSender(schema, { coding, precision: 'bound' });
      const receiver = new SnapshotReceiver(schema, { coding });
      const out = new Float32Array(poses[0].length);
      let deltas = 0;
      poses.forEach((pose, t) => {
        const info = receiver.receive(sender.send(pose), out);
        expect(info.sequence).toBe(t);
        expect(info.isNewest).toBe(true);
        expect(Array.from(out)).toEqual(Array.from(expected[t]));
        if (info.baselineSequence >= 0) deltas++;
        sender.receiveAck(receiver.ack());
      });
      expect(deltas).toBe(poses.length - 1);
      expect(sender.lastPacket!.bodyBits).toBeLessThan(schema.absoluteBits);
    });

    it(`${coding}: survives loss, delay and reordering; only acked baselines are used`, () => {
      const random = mulberry32(coding === SNAPSHOT_CODING.PLAIN ? 1 : 2);
      const sender = new SnapshotSender(schema, { coding, windowSize: 32, precision: 'bound' });
      const receiver = new SnapshotReceiver(schema, { coding, windowSize: 32 });
      const out = new Float32Array(poses[0].length);
      let received = 0;
      driveLossyLink(poses, sender, receiver, random, out, (tick, info) => {
        expect(info.sequence).toBe(tick);
        expect(Array.from(out)).toEqual(Array.from(expected[tick]));
        received++;
      });
      expect(received).toBeGreaterThan(poses.length / 2);
    });

    it(`${coding}: rejects a delta whose baseline the receiver does not hold`, () => {
      const sender = new SnapshotSender(schema, { coding });
      const receiver = new SnapshotReceiver(schema, { coding });
      const out = new Float32Array(poses[0].length);
      receiver.receive(sender.send(poses[0]), out);
      sender.receiveAck(receiver.ack());
      const delta = sender.send(poses[1]);
      const stranger = new SnapshotReceiver(schema, { coding });
      expect(catchError(() => stranger.receive(delta, out))).toMatchObject({ code: NET_ERROR.UNKNOWN_BASELINE });
      // The stranger catches up from the next absolute snapshot a fresh sender sends.
      const fresh = new SnapshotSender(schema, { coding });
      expect(stranger.receive(fresh.send(poses[2]), out).baselineSequence).toBe(-1);
    });

    it(`${coding}: rejects every truncation and every bit flip of a packet with NetError, and stays usable`, () => {
      const sender = new SnapshotSender(schema, { coding, precision: 'bound' });
      const receiver = new SnapshotReceiver(schema, { coding });
      const out = new Float32Array(poses[0].length);
      for (let t = 0; t < 10; t++) {
        receiver.receive(sender.send(poses[t]), out);
        sender.receiveAck(receiver.ack());
      }
      for (let t = 10; t < 13; t++) {
        const packet = sender.send(poses[t]);
        for (let cut = 0; cut < packet.length; cut++)
          expect(catchError(() => receiver.receive(packet.subarray(0, cut), out))).toBeInstanceOf(NetError);
        for (let bit = 0; bit < packet.length * 8; bit++) {
          const bad = packet.slice();
          bad[bit >>> 3] ^= 1 << (bit & 7);
          expect(catchError(() => receiver.receive(bad, out))).toBeInstanceOf(NetError);
        }
        receiver.receive(packet, out);
        expect(Array.from(out)).toEqual(Array.from(expected[t]));
        sender.receiveAck(receiver.ack());
      }
      const ack = receiver.ack();
      expect(catchError(() => sender.receiveAck(ack.subarray(0, 1)))).toBeInstanceOf(NetError);
      const badAck = ack.slice();
      badAck[2] ^= 4;
      expect(catchError(() => sender.receiveAck(badAck))).toBeInstanceOf(NetError);
    });

    it(`${coding}: without check bits, damage gives NetError or a decoded pose, never another exception`, () => {
      const options: SessionOptions = { coding, checkBits: 0 };
      const sender = new SnapshotSender(schema, options);
      const receiver = new SnapshotReceiver(schema, options);
      const out = new Float32Array(poses[0].length);
      const random = mulberry32(5);
      for (let t = 0; t < 30; t++) {
        const packet = sender.send(poses[t]);
        for (let i = 0; i < 40; i++) {
          const bad = packet.slice(0, random() < 0.5 ? packet.length : Math.floor(random() * packet.length));
          for (let k = 0; k < 3 && bad.length > 0; k++)
            bad[Math.floor(random() * bad.length)] ^= 1 << Math.floor(random() * 8);
          const error = catchError(() => receiver.receive(bad, out));
          if (error !== undefined) expect(error).toBeInstanceOf(NetError);
        }
        // Damage that decodes is indistinguishable from a real packet and may overwrite a
        // baseline, so even the intact packet may now fail, but only with a NetError.
        const error = catchError(() => receiver.receive(packet, out));
        if (error !== undefined) expect(error).toBeInstanceOf(NetError);
        if (receiver.newestSequence >= 0) sender.receiveAck(receiver.ack());
      }
      if (coding === SNAPSHOT_CODING.PLAIN) {
        // Plain bodies know their own length: any cut is caught even without a check.
        const clean = new SnapshotSender(schema, options),
          fresh = new SnapshotReceiver(schema, options);
        for (let t = 0; t < 5; t++) {
          fresh.receive(clean.send(poses[t]), out);
          clean.receiveAck(fresh.ack());
        }
        const packet = clean.send(poses[5]);
        for (let cut = 0; cut < packet.length; cut++) {
          expect(catchError(() => fresh.receive(packet.subarray(0, cut), out))).toBeInstanceOf(NetError);
        }
      }
    });
  }

  it('rejects packets made with another schema', () => {
    const other = createSnapshotSchema(clip, { error: '0.2cm' });
    const packet = new SnapshotSender(other).send(poses[0]);
    expect(
      catchError(() => new SnapshotReceiver(schema).receive(packet, new Float32Array(poses[0].length))),
    ).toMatchObject({ code: NET_ERROR.BAD_CHECKSUM });
  });

  it('rejects bad options with BAD_ARGUMENT', () => {
    expect(() => new SnapshotSender(schema, { windowSize: 1 })).toThrow(NetError);
    expect(() => new SnapshotSender(schema, { checkBits: 12 })).toThrow(NetError);
    expect(() => new SnapshotReceiver(schema).ack()).toThrow(NetError);
  });

  it('keeps working across the 16-bit sequence wrap', () => {
    // Two bones, one animated rotation: cheap enough to send 70,000 snapshots.
    const skeleton = createSkeleton(
      ['a', 'b'],
      [-1, 0],
      Float32Array.from([0, 0, 0, 1, 0, 0, 0, 1, 1, 1, 0, 0, 0, 1, 10, 0, 0, 1, 1, 1]),
      'cm',
    );
    const small = createRawClip('spin', skeleton, 30, 64, 'cm');
    for (let s = 0; s < 64; s++) {
      const angle = (s / 64) * 2;
      small.rotations[(64 + s) * 4 + 2] = Math.sin(angle / 2);
      small.rotations[(64 + s) * 4 + 3] = Math.cos(angle / 2);
    }
    const smallSchema = createSnapshotSchema(small);
    const smallPoses = clipPoses(small);
    const smallExpected = smallPoses.map((p) => expectedPose(smallSchema, p));
    const sender = new SnapshotSender(smallSchema, { checkBits: 8 });
    const receiver = new SnapshotReceiver(smallSchema, { checkBits: 8 });
    const out = new Float32Array(20);
    let acks: Uint8Array[] = [];
    for (let t = 0; t < 70000; t++) {
      for (const ack of acks) sender.receiveAck(ack);
      acks = [];
      const packet = sender.send(smallPoses[t % 64]);
      if (t % 7 === 3) continue; // lost
      const info = receiver.receive(packet, out);
      expect(info.sequence).toBe(t % 65536);
      if (t % 997 === 0 || (t > 65530 && t < 65545)) expect(Array.from(out)).toEqual(Array.from(smallExpected[t % 64]));
      acks.push(receiver.ack());
    }
    expect(sender.sequence).toBe(70000 % 65536);
    expect(sender.lastPacket!.baselineSequence).toBeGreaterThanOrEqual(0);
  });
});
