/**
 * Bounded work and per-input caps, at the library level: the compressor's
 * subtree ranges (linear whatever the depth), the clip validation's bone limit and parent
 * order, the readers' maxSamples / maxBytes caps (LIMIT before allocation, at the line of
 * the count), and long tokens cut in messages.
 */
import { describe, expect, it } from 'vitest';

import { createRawClip, validateRawClip } from '../../src/clip/raw-clip.js';
import { ClipError, createSkeleton, POSE_STRIDE, type Skeleton } from '../../src/clip/skeleton.js';
import { compress } from '../../src/compress/index.js';
import { PASS2_SUBTREE_BUDGET_PER_BONE, subtreeRanges } from '../../src/compress/bitrate.js';
import { readAclSjson } from '../../src/readers/acl-sjson.js';
import { readBvh } from '../../src/readers/bvh.js';
import { cutText, MAX_QUOTED_CHARS, ParseError, PARSE_ERROR, quoteText } from '../../src/readers/errors.js';
import { readGltf } from '../../src/readers/gltf.js';
import { READ_LIMITS, boneSamplesProblem, checkBoneCount } from '../../src/readers/options.js';
import { CompressedClip } from '../../src/runtime/compressed-clip.js';
import { MAX_BONES, MAX_BONE_SAMPLES } from '../../src/runtime/format.js';
import { bvhChain, gltfChain, sjsonChain } from './chains.js';
import { mulberry32 } from '../../src/clip/random.js';

/** A seeded PRNG (mulberry32) for random hierarchies. */
const random = mulberry32;

/** Descendants of every bone, the bone first, by the obvious quadratic walk (the reference). */
function naiveSubtrees(parents: Int32Array): Set<number>[] {
  return Array.from(parents, (_, b) => {
    const set = new Set<number>();
    for (let d = 0; d < parents.length; d++) {
      for (let p = d; p >= 0; p = parents[p])
        if (p === b) {
          set.add(d);
          break;
        }
    }
    return set;
  });
}

function parseErrorOf(read: () => unknown): ParseError {
  try {
    read();
  } catch (error) {
    if (error instanceof ParseError) return error;
    throw error;
  }
  throw new Error('expected a ParseError');
}

describe('subtreeRanges', () => {
  it('gives every bone its descendants as one contiguous pre-order range, on random forests', () => {
    const next = random(19);
    for (let trial = 0; trial < 50; trial++) {
      const n = 1 + Math.floor(next() * 60);
      const parents = Int32Array.from({ length: n }, (_, b) =>
        b === 0 || next() < 0.15 ? -1 : Math.floor(next() * b),
      );
      const { preorder, at, size } = subtreeRanges(parents);
      expect([...preorder].sort((x, y) => x - y)).toEqual(Array.from({ length: n }, (_, b) => b));
      const reference = naiveSubtrees(parents);
      for (let b = 0; b < n; b++) {
        const range = [...preorder.subarray(at[b], at[b] + size[b])];
        expect(range[0], `bone ${b} first`).toBe(b);
        expect(new Set(range), `bone ${b} of ${JSON.stringify([...parents])}`).toEqual(reference[b]);
        // Parents before children inside the range, as the trial walk needs.
        for (let i = 1; i < range.length; i++) expect(range.indexOf(parents[range[i]])).toBeLessThan(i);
      }
    }
  });

  it('is linear for a chain 32,767 deep: sizes count down, the pre-order is the bone order', () => {
    const parents = Int32Array.from({ length: MAX_BONES }, (_, b) => b - 1);
    const { preorder, at, size } = subtreeRanges(parents);
    expect(size[0]).toBe(MAX_BONES);
    expect(size[MAX_BONES - 1]).toBe(1);
    expect(at[MAX_BONES - 1]).toBe(MAX_BONES - 1);
    expect(preorder.every((bone, i) => bone === i)).toBe(true);
  });
});

describe('the compressor on a deep chain', () => {
  it('compresses a 2,000-joint chain within the threshold (pass 2 tries only the deepest bones) and the file opens', () => {
    const clip = readBvh(bvhChain(2000, 3), 'chain.bvh');
    // The chain's subtree sizes add up to 2000·2001/2, far over the budget: the budget must be what limits pass 2.
    expect((2000 * 2001) / 2).toBeGreaterThan(PASS2_SUBTREE_BUDGET_PER_BONE * 2000);
    const { bytes, stats } = compress(clip);
    expect(stats.maxError).toBeLessThanOrEqual(stats.threshold);
    const opened = CompressedClip.open(bytes);
    expect(opened.boneCount).toBe(2000);
    expect(opened.parents[1999]).toBe(1998);
  });
});

describe('validateRawClip', () => {
  function clipWith(skeleton: Skeleton) {
    return createRawClip('c', skeleton, 30, 2, 'cm');
  }
  const identity = (n: number) => {
    const pose = new Float32Array(n * POSE_STRIDE);
    for (let b = 0; b < n; b++) {
      pose[b * POSE_STRIDE + 3] = 1;
      pose.fill(1, b * POSE_STRIDE + 7, b * POSE_STRIDE + 10);
    }
    return pose;
  };

  it('refuses more bones than a .bpk holds, before looking at any sample', () => {
    const n = MAX_BONES + 1;
    const skeleton = createSkeleton(
      Array.from({ length: n }, (_, b) => `b${b}`),
      Int32Array.from({ length: n }, (_, b) => b - 1),
      identity(n),
      'cm',
    );
    expect(() => validateRawClip(clipWith(skeleton))).toThrow(
      new ClipError('BAD_CLIP', `clip "c": ${n} bones, more than the ${MAX_BONES} a .bpk clip holds`),
    );
  });

  it('refuses a parent that does not precede its child (a hand-built skeleton)', () => {
    const skeleton: Skeleton = {
      ...createSkeleton(['a', 'b'], [-1, 0], identity(2), 'cm'),
      parents: Int32Array.from([1, -1]),
    };
    expect(() => validateRawClip(clipWith(skeleton))).toThrow(/bone 0 has parent 1; parents must come first/);
  });
});

describe('maxSamples and maxBytes', () => {
  it('BVH: over either cap is a LIMIT error at the Frames: line, before the tracks exist', () => {
    const text = bvhChain(10, 5);
    const framesLine = text.split('\n').findIndex((line) => line.startsWith('Frames:')) + 1;
    const samples = parseErrorOf(() => readBvh(text, 'c.bvh', { maxSamples: 4 }));
    expect([samples.code, samples.line, samples.problem]).toEqual([
      PARSE_ERROR.LIMIT,
      framesLine,
      'Frames: 5: 5 samples is over the limit of 4 (maxSamples)',
    ]);
    const bytes = parseErrorOf(() => readBvh(text, 'c.bvh', { maxBytes: 1000 }));
    expect([bytes.code, bytes.line, bytes.problem]).toEqual([
      PARSE_ERROR.LIMIT,
      framesLine,
      'Frames: 5: 10 bones × 5 samples need 2 KiB of tracks, over the limit of 1000 bytes (maxBytes)',
    ]);
    expect(readBvh(text, 'c.bvh', { maxSamples: 5, maxBytes: 40 * 10 * 5 }).sampleCount).toBe(5);
  });

  it('ACL SJSON: a LIMIT error at num_samples', () => {
    const e = parseErrorOf(() => readAclSjson(sjsonChain(3, 4), 'c.acl.sjson', { maxSamples: 3 }));
    expect([e.code, e.line, e.problem]).toEqual([
      PARSE_ERROR.LIMIT,
      2,
      'num_samples 4: 4 samples is over the limit of 3 (maxSamples)',
    ]);
    expect(readAclSjson(sjsonChain(3, 4), 'c.acl.sjson', { maxBytes: 40 * 3 * 4 }).sampleCount).toBe(4);
  });

  it('glTF: a LIMIT error naming the animation', async () => {
    const bytes = new TextEncoder().encode(gltfChain(3));
    await expect(readGltf(bytes, 'c.gltf', { sampleRate: 30, maxBytes: 100 })).rejects.toThrow(
      'c.gltf: animation "animation_0": 3 bones × 2 samples need 240 bytes of tracks, over the limit of 100 bytes (maxBytes)',
    );
    expect((await readGltf(bytes, 'c.gltf', { sampleRate: 30, maxSamples: 2 }))[0].sampleCount).toBe(2);
  });

  it('defaults: the .bpk bone limit, 2^24 samples, 512 MiB of tracks, and the .bpk bone-sample limit for every reader', () => {
    expect(READ_LIMITS).toEqual({
      maxBones: MAX_BONES,
      maxSamples: 2 ** 24,
      maxBytes: 512 * 2 ** 20,
      maxBoneSamples: MAX_BONE_SAMPLES,
    });
  });

  it('one NaN-safe bone-sample check: at the limit passes, one over it, NaN and infinite counts fail', () => {
    const max = READ_LIMITS.maxBoneSamples;
    expect(boneSamplesProblem(1, max)).toBeUndefined();
    expect(boneSamplesProblem(2, max / 2)).toBeUndefined();
    expect(boneSamplesProblem(1, max + 1)).toBe(
      `1 bones × ${max + 1} samples is over the reader's limit of ${max} bone samples`,
    );
    for (const count of [Number.NaN, Infinity]) expect(boneSamplesProblem(3, count)).toMatch(/over the reader's limit/);
    expect(boneSamplesProblem(Number.NaN, 1)).toMatch(/over the reader's limit/);
  });

  it('the bone-count check is NaN-safe too', () => {
    expect(() => checkBoneCount('f', 1, READ_LIMITS.maxBones)).not.toThrow();
    for (const count of [READ_LIMITS.maxBones + 1, Number.NaN]) {
      expect(() => checkBoneCount('f', 1, count)).toThrow(expect.objectContaining({ code: PARSE_ERROR.LIMIT }));
    }
  });
});

describe('long tokens in messages', () => {
  it('quoteText and cutText keep short text whole and cut long text, saying how long it was', () => {
    expect(quoteText('Hips')).toBe('"Hips"');
    expect(cutText('Hips')).toBe('Hips');
    const long = 'y'.repeat(1000);
    expect(quoteText(long)).toBe(`"${'y'.repeat(MAX_QUOTED_CHARS)}…" (1000 characters)`);
    expect(cutText(long)).toBe(`${'y'.repeat(MAX_QUOTED_CHARS)}… (1000 characters)`);
    // Never half a surrogate pair.
    const emoji = 'a'.repeat(MAX_QUOTED_CHARS - 1) + '😀'.repeat(10);
    expect(quoteText(emoji).startsWith(`"${'a'.repeat(MAX_QUOTED_CHARS - 1)}…"`)).toBe(true);
  });

  it('BVH, SJSON and glTF messages quote at most a few dozen characters of a 1 MB token', async () => {
    const token = 'z'.repeat(1_000_000);
    const messages = [
      parseErrorOf(() => readBvh(`${token}\n`, 'a.bvh')).message,
      parseErrorOf(() => readBvh(`HIERARCHY\nROOT r\n{\nOFFSET 0 0 0\nCHANNELS 1 ${token}\n}\n`, 'b.bvh')).message,
      parseErrorOf(() =>
        readBvh(bvhChain(2, 1).replace('Frame Time: 0.0333333', `Frame Time: 0.${'0'.repeat(1_000_000)}`), 'c.bvh'),
      ).message,
      parseErrorOf(() => readAclSjson(sjsonChain(2, 1).replace('name = "j1"', `name = "${token}"`), 'd.acl.sjson'))
        .message,
      await readGltf(
        new TextEncoder().encode(gltfChain(2).replace('"children":[1]', `"children":[${'1,'.repeat(300_000)}1]`)),
        'e.gltf',
      ).then(
        () => '',
        (e: Error) => e.message,
      ),
    ];
    for (const message of messages) {
      expect(message.length, message.slice(0, 200)).toBeLessThan(300);
      expect(message).not.toContain('z'.repeat(MAX_QUOTED_CHARS + 1));
    }
  });
});
