/**
 * mulberry32: a small seeded PRNG with a 2^32 period. Returns a function giving floats in
 * [0, 1); the same seed gives the same sequence on every platform (the bench's random
 * times, netsim's lossy link and the tests' synthetic clips all rely on that).
 */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
