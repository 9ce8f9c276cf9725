import { describe, expect, it } from 'vitest';

import { NET_ERROR, NetError } from '../../src/net/bit-stream.js';
import { EntropyCodec, SnapshotRangeDecoder, SnapshotRangeEncoder } from '../../src/net/entropy.js';
import { CODE_STRIDE, PoseQuantizer, createSnapshotCodes } from '../../src/net/quantize.js';
import { createSnapshotSchema } from '../../src/net/schema.js';
import { SNAPSHOT_CODING, SnapshotReceiver, SnapshotSender } from '../../src/net/session.js';
import { VerifiedQuantizer } from '../../src/net/verify.js';
import { catchError, clipPoses, driveLossyLink, loadFixture, mulberry32, poseError } from './helpers.js';

const clip = loadFixture('dataset-1_byebye_angry_001');
const schema = createSnapshotSchema(clip);
const poses = clipPoses(clip);
const coding = SNAPSHOT_CODING.ENTROPY;

describe('verified precision', () => {
  it('measures exactly the error the receiver decodes, always within the threshold, in fewer bits than the bound', () => {
    const bits = { verified: 0, bound: 0 };
    for (const precision of ['verified', 'bound'] as const) {
      const sender = new SnapshotSender(schema, { coding, precision });
      const receiver = new SnapshotReceiver(schema, { coding });
      const out = new Float32Array(poses[0].length);
      poses.forEach((pose, t) => {
        receiver.receive(sender.send(pose), out);
        const error = poseError(pose, out, schema.parents, schema.shellDistances);
        expect(error).toBeLessThanOrEqual(schema.threshold);
        if (precision === 'verified' && t > 0) expect(sender.lastVerifiedError).toBe(error);
        else expect(sender.lastVerifiedError).toBe(-1);
        bits[precision] += sender.lastPacket!.bodyBits;
        sender.receiveAck(receiver.ack());
      });
    }
    expect(bits.verified).toBeLessThan(bits.bound * 0.85);
  });

  it('keeps both ends on the same baselines under loss, delay and reordering', () => {
    const random = mulberry32(7);
    const sender = new SnapshotSender(schema, { coding, windowSize: 32 });
    const receiver = new SnapshotReceiver(schema, { coding, windowSize: 32 });
    const out = new Float32Array(poses[0].length);
    const measured = new Map<number, number>();
    let checked = 0;
    driveLossyLink(
      poses,
      sender,
      receiver,
      random,
      out,
      (tick) => {
        const error = poseError(poses[tick], out, schema.parents, schema.shellDistances);
        expect(error).toBeLessThanOrEqual(schema.threshold);
        if (measured.get(tick)! >= 0) {
          expect(error).toBe(measured.get(tick));
          checked++;
        }
      },
      (tick) => measured.set(tick, sender.lastVerifiedError),
    );
    expect(checked).toBeGreaterThan(poses.length / 2);
  });

  it('refines bones that miss; level 0 is the bound-derived codes', () => {
    const baseline = new PoseQuantizer(schema).quantize(poses[0], createSnapshotCodes(schema));
    const pose = poses[20];
    const plain = new PoseQuantizer(schema).quantize(pose, createSnapshotCodes(schema));
    const levels = new Uint8Array(schema.boneCount);
    // Level 0 against a baseline is the bound's quantisation; from there the quantiser only tries one step coarser.
    const exact = createSnapshotCodes(schema),
      quantizer = new PoseQuantizer(schema);
    for (let b = 0; b < schema.boneCount; b++) quantizer.quantizeBone(pose, b, exact, baseline, 0);
    expect(Array.from(exact)).toEqual(Array.from(plain));
    expect(new VerifiedQuantizer(schema, 0).quantize(pose, baseline, exact, levels)).toBeLessThanOrEqual(
      schema.threshold,
    );
    expect(Math.max(...levels)).toBeLessThanOrEqual(1);
    // Start far too coarse: some bones must come down, and every delta is a whole number of steps.
    const coarse = new VerifiedQuantizer(schema, 7);
    const codes = createSnapshotCodes(schema);
    const error = coarse.quantize(pose, baseline, codes, levels);
    expect(error).toBeLessThanOrEqual(schema.threshold);
    expect(Math.min(...Array.from(levels).filter((_, b) => schema.codeBits[b * CODE_STRIDE + 1] > 0))).toBeLessThan(7);
    for (let b = 0; b < schema.boneCount; b++) {
      for (let i = 1; i < CODE_STRIDE; i++) {
        const n = schema.codeBits[b * CODE_STRIDE + i];
        if (n === 0 || (i < 4 && codes[b * CODE_STRIDE] !== baseline[b * CODE_STRIDE])) continue;
        expect(
          Math.abs((codes[b * CODE_STRIDE + i] - baseline[b * CODE_STRIDE + i]) % 2 ** Math.min(levels[b], n - 1)),
        ).toBe(0);
      }
    }
    // The levels travel in the body: a decoder gets the codes back and the levels into its state.
    const entropy = new EntropyCodec(schema);
    const base = entropy.createState();
    entropy.serialize(new SnapshotRangeEncoder(), baseline.slice(), null, null, 0, base);
    const encoder = new SnapshotRangeEncoder();
    const sent = entropy.createState();
    entropy.serialize(encoder, codes.slice(), baseline, base, 3, sent, levels);
    const decoded = createSnapshotCodes(schema);
    const got = entropy.createState();
    const decoder = new SnapshotRangeDecoder(encoder.finish());
    entropy.serialize(decoder, decoded, baseline, base, 3, got);
    decoder.finish();
    expect(Array.from(decoded)).toEqual(Array.from(codes));
    for (let b = 0; b < schema.boneCount; b++) {
      let changed = false;
      for (let i = 0; i < CODE_STRIDE; i++)
        if (schema.codeBits[b * CODE_STRIDE + i] > 0 && codes[b * CODE_STRIDE + i] !== baseline[b * CODE_STRIDE + i])
          changed = true;
      if (changed) expect(got.levels[b]).toBe(levels[b]);
    }
    expect(Array.from(got.probabilities)).toEqual(Array.from(sent.probabilities));
  });

  it("refuses to code a delta that is not a whole number of its level's steps", () => {
    const entropy = new EntropyCodec(schema);
    const baseline = new PoseQuantizer(schema).quantize(poses[0], createSnapshotCodes(schema));
    const base = entropy.createState();
    entropy.serialize(new SnapshotRangeEncoder(), baseline.slice(), null, null, 0, base);
    const b = schema.sentBones.find((x) => schema.codeBits[x * CODE_STRIDE + 1] > 0)!;
    const codes = baseline.slice();
    codes[b * CODE_STRIDE + 1] += codes[b * CODE_STRIDE + 1] > 0 ? -1 : 1;
    const levels = new Uint8Array(schema.boneCount).fill(2);
    const error = catchError(() =>
      entropy.serialize(new SnapshotRangeEncoder(), codes, baseline, base, 1, entropy.createState(), levels),
    );
    expect(error).toBeInstanceOf(NetError);
    expect((error as NetError).code).toBe(NET_ERROR.BAD_ARGUMENT);
  });

  it('rejects every truncation and bit flip of a verified packet, and stays usable', () => {
    const sender = new SnapshotSender(schema, { coding });
    const receiver = new SnapshotReceiver(schema, { coding });
    const out = new Float32Array(poses[0].length);
    for (let t = 0; t < 10; t++) {
      receiver.receive(sender.send(poses[t]), out);
      sender.receiveAck(receiver.ack());
    }
    const packet = sender.send(poses[10]);
    for (let cut = 0; cut < packet.length; cut++)
      expect(catchError(() => receiver.receive(packet.subarray(0, cut), out))).toBeInstanceOf(NetError);
    for (let bit = 0; bit < packet.length * 8; bit++) {
      const bad = packet.slice();
      bad[bit >>> 3] ^= 1 << (bit & 7);
      expect(catchError(() => receiver.receive(bad, out))).toBeInstanceOf(NetError);
    }
    receiver.receive(packet, out);
    expect(poseError(poses[10], out, schema.parents, schema.shellDistances)).toBe(sender.lastVerifiedError);
  });
});
