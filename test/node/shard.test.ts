import { describe, expect, it } from 'vitest';

import { shardInputs } from '../../src/node/pool.js';

/** A seeded list of distinct file names. */
function names(count: number, seed: number): string[] {
  let state = seed;
  const next = () => (state = (state * 1103515245 + 12345) % 2 ** 31);
  return Array.from({ length: count }, (_, i) => `clips/${next().toString(36)}_${i}.bvh`);
}

describe('shardInputs', () => {
  it('puts every input in exactly one of n shards', () => {
    for (const count of [0, 1, 2, 5, 17, 40]) {
      const inputs = names(count, count + 1);
      for (let n = 1; n <= 7; n++) {
        const seen = new Map<string, number>();
        for (let i = 1; i <= n; i++)
          for (const path of shardInputs(inputs, i, n)) seen.set(path, (seen.get(path) ?? 0) + 1);
        expect(seen.size).toBe(inputs.length);
        for (const path of inputs) expect(seen.get(path)).toBe(1);
      }
    }
  });

  it('does not depend on the order inputs are given in', () => {
    const inputs = names(23, 7);
    const reversed = [...inputs].reverse();
    for (let i = 1; i <= 4; i++) expect(shardInputs(reversed, i, 4)).toEqual(shardInputs(inputs, i, 4));
  });

  it('keeps shard sizes within one of each other', () => {
    const inputs = names(23, 3);
    const sizes = [1, 2, 3, 4, 5].map((i) => shardInputs(inputs, i, 5).length);
    expect(Math.max(...sizes) - Math.min(...sizes)).toBeLessThanOrEqual(1);
  });

  it('rejects an index outside 1..n', () => {
    expect(() => shardInputs(['a'], 0, 2)).toThrow(RangeError);
    expect(() => shardInputs(['a'], 3, 2)).toThrow(RangeError);
    expect(() => shardInputs(['a'], 1, 0)).toThrow(RangeError);
    expect(() => shardInputs(['a'], 1.5, 2)).toThrow(RangeError);
  });
});
