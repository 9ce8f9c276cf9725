/**
 * The content-addressed cache: what its keys depend on (and do not), entry round trips,
 * damaged entries refused, and the stamps that spare re-reading unchanged inputs.
 */
import { existsSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import type { CompressStats } from '../../src/compress/index.js';
import {
  CacheEntryError,
  ClipCache,
  cacheKey,
  canonicalJson,
  codecVersions,
  decodeCacheEntry,
  encodeCacheEntry,
  externalBufferUris,
  inputKey,
  packageVersion,
  sha256Hex,
  type CacheEntry,
  type KeyParts,
} from '../../src/node/cache.js';
import { VERSION } from '../../src/runtime/format.js';
import { makeTempDir } from '../cli/run-cli.js';

const temp = makeTempDir('bonepress-cache-');
afterAll(() => temp.remove());

const SETTINGS = {
  error: '0.01cm',
  shell: '3cm',
  shellBones: {},
  stripNames: false,
  checksum: true,
  unit: null,
  sampleRate: null,
};
const PARTS: KeyParts = {
  name: 'walk.bvh',
  contentSha256: sha256Hex('HIERARCHY…'),
  resources: [],
  settings: SETTINGS,
  versions: { package: '0.1.0', format: 2 },
};

/** Stats as an entry stores them (the cache copies them whole, whatever fields they have). */
function stats(name: string): CompressStats {
  const value = {
    name,
    boneCount: 2,
    sampleCount: 3,
    rawBytes: 240,
    compressedBytes: 4,
    ratio: 60,
    namesBytes: 0,
    threshold: 0.01,
    unit: 'cm',
    maxError: 0.005,
    p99Error: 0.004,
    meanError: 0.001,
    worstBone: 'Hips',
    worstSample: 1,
    tracks: { default: 1, constant: 2, animated: 3 },
    bitRateHistogram: { 3: 4 },
    searchTrials: 5,
    seconds: 0.25,
  };
  return value as unknown as CompressStats;
}

const ENTRY: CacheEntry = {
  outputs: [
    { name: 'a_idle.bpk', stats: stats('idle'), bytes: new Uint8Array([1, 2, 3, 4]) },
    { name: 'a_run.bpk', stats: stats('run'), bytes: new Uint8Array([5, 6, 7]) },
  ],
  warnings: ['animation "run": 1 channel on a node outside the skeleton skipped'],
};

describe('cacheKey', () => {
  it('is a pure function of its parts, whatever the settings key order', () => {
    const reordered = { ...PARTS, settings: Object.fromEntries(Object.entries(SETTINGS).reverse()) };
    expect(cacheKey(PARTS)).toMatch(/^[0-9a-f]{64}$/);
    expect(cacheKey(reordered)).toBe(cacheKey(PARTS));
    expect(canonicalJson({ b: 1, a: { d: 2, c: [3, { f: 4, e: 5 }] } })).toBe(
      '{"a":{"c":[3,{"e":5,"f":4}],"d":2},"b":1}',
    );
  });

  it('changes with the bytes, the file name, each setting, the package and the format version', () => {
    const base = cacheKey(PARTS);
    const variants: KeyParts[] = [
      { ...PARTS, contentSha256: sha256Hex('HIERARCHY…!') },
      { ...PARTS, name: 'run.bvh' },
      { ...PARTS, name: 'walk.gltf' },
      { ...PARTS, settings: { ...SETTINGS, error: '0.02cm' } },
      { ...PARTS, settings: { ...SETTINGS, stripNames: true } },
      { ...PARTS, settings: { ...SETTINGS, shellBones: { Hips: '1m' } } },
      { ...PARTS, versions: { package: '0.1.1', format: 2 } },
      { ...PARTS, versions: { package: '0.1.0', format: 3 } },
      { ...PARTS, resources: [{ uri: 'walk.bin', sha256: sha256Hex('x') }] },
      { ...PARTS, resources: [{ uri: 'walk.bin', sha256: undefined }] },
    ];
    const keys = new Set(variants.map(cacheKey));
    expect(keys.size).toBe(variants.length);
    expect(keys.has(base)).toBe(false);
  });

  it('records this build: the package version and the format VERSION', () => {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
    expect(packageVersion()).toBe(pkg.version);
    expect(codecVersions()).toEqual({ package: pkg.version, format: VERSION });
  });
});

describe('cache entries', () => {
  it('round-trip byte for byte, deterministically', () => {
    const bytes = encodeCacheEntry(ENTRY);
    expect(encodeCacheEntry(ENTRY)).toEqual(bytes);
    const back = decodeCacheEntry(bytes);
    expect(back.warnings).toEqual(ENTRY.warnings);
    expect(back.outputs.map((o) => [o.name, o.stats, [...o.bytes]])).toEqual(
      ENTRY.outputs.map((o) => [o.name, o.stats, [...o.bytes]]),
    );
  });

  it('refuses damaged bytes with a CacheEntryError naming the problem, at every truncation and every flipped payload byte', () => {
    const bytes = encodeCacheEntry(ENTRY);
    for (let length = 0; length < bytes.byteLength; length++) {
      expect(() => decodeCacheEntry(bytes.subarray(0, length)), `truncated to ${length}`).toThrow(CacheEntryError);
    }
    for (let i = bytes.byteLength - 7; i < bytes.byteLength; i++) {
      const flipped = bytes.slice();
      flipped[i] ^= 0x10;
      expect(() => decodeCacheEntry(flipped)).toThrow(/does not match its SHA-256/);
    }
    const badMagic = bytes.slice();
    badMagic[0] = 0;
    expect(() => decodeCacheEntry(badMagic)).toThrow(/bad magic/);
    const hugeHeader = bytes.slice();
    new DataView(hugeHeader.buffer).setUint32(8, 0xffffffff, true);
    expect(() => decodeCacheEntry(hugeHeader)).toThrow(/header length 4294967295 runs past the end/);
    expect(() => decodeCacheEntry(new Uint8Array([...bytes, 0]))).toThrow(/1 bytes after the last output/);
  });
});

describe('ClipCache', () => {
  it('stores atomically and looks up; a missing key is undefined', async () => {
    const cache = new ClipCache(join(temp.dir, 'store'));
    const key = cacheKey(PARTS);
    expect(cache.lookup(key)).toBeUndefined();
    await cache.store(key, ENTRY);
    expect(existsSync(cache.entryPath(key))).toBe(true);
    const back = cache.lookup(key);
    expect(back?.outputs.map((o) => o.name)).toEqual(['a_idle.bpk', 'a_run.bpk']);
    expect([...back!.outputs[1].bytes]).toEqual([5, 6, 7]);
  });

  it('treats a damaged entry as missing and removes it', async () => {
    const cache = new ClipCache(join(temp.dir, 'damaged'));
    const key = cacheKey({ ...PARTS, name: 'damaged.bvh' });
    await cache.store(key, ENTRY);
    const path = cache.entryPath(key);
    const bytes = readFileSync(path);
    writeFileSync(path, bytes.subarray(0, bytes.byteLength - 1));
    expect(cache.lookup(key)).toBeUndefined();
    expect(existsSync(path)).toBe(false);
  });

  it('keys an input by its bytes; an unchanged old file comes from its stamp, a rewritten one is read again', async () => {
    const cache = new ClipCache(join(temp.dir, 'stamps'));
    const input = join(temp.dir, 'walk.bvh');
    const old = new Date(Date.now() - 60_000);
    writeFileSync(input, 'first');
    utimesSync(input, old, old);
    const first = cache.inputKey(input, SETTINGS);
    expect(first.fromStamp).toBe(false);
    expect(first.key).toBe(inputKey(input, SETTINGS).key);
    const again = cache.inputKey(input, SETTINGS);
    expect(again).toEqual({ key: first.key, fromStamp: true });
    // Saved stamps serve the next build too (another process, same cache folder).
    cache.saveStamps();
    expect(new ClipCache(cache.dir).inputKey(input, SETTINGS)).toEqual({ key: first.key, fromStamp: true });
    expect(new ClipCache(join(temp.dir, 'other-cache')).inputKey(input, SETTINGS).fromStamp).toBe(false);
    // Same size and mtime, other bytes: the change time gives it away.
    writeFileSync(input, 'fir5t');
    utimesSync(input, old, old);
    const changed = cache.inputKey(input, SETTINGS);
    expect(changed.fromStamp).toBe(false);
    expect(changed.key).not.toBe(first.key);
    expect(changed.key).toBe(inputKey(input, SETTINGS).key);
    expect(cache.inputKey(input, { ...SETTINGS, error: '0.02cm' }).key).not.toBe(changed.key);
  });

  it('does not trust a stamp taken within moments of the last change (a coarse clock could hide an edit)', async () => {
    const cache = new ClipCache(join(temp.dir, 'racy'));
    const input = join(temp.dir, 'fresh.bvh');
    writeFileSync(input, 'fresh');
    expect(cache.inputKey(input, SETTINGS).fromStamp).toBe(false);
    expect(cache.inputKey(input, SETTINGS).fromStamp).toBe(false);
  });

  it('throws the system error of a missing input', () => {
    const cache = new ClipCache(join(temp.dir, 'missing'));
    expect(() => cache.inputKey(join(temp.dir, 'nope.bvh'), SETTINGS)).toThrow(
      expect.objectContaining({ code: 'ENOENT' }),
    );
  });

  it('keys a glTF by its external buffers too', async () => {
    const gltf = join(temp.dir, 'anim.gltf');
    writeFileSync(
      gltf,
      JSON.stringify({
        asset: { version: '2.0' },
        buffers: [{ uri: 'anim.bin', byteLength: 4 }, { uri: 'data:application/octet-stream;base64,AAAA' }],
      }),
    );
    expect(externalBufferUris(gltf, readFileSync(gltf))).toEqual(['anim.bin']);
    expect(externalBufferUris('x.glb', readFileSync(gltf))).toEqual([]);
    expect(externalBufferUris(gltf, new TextEncoder().encode('{not json'))).toEqual([]);
    const missing = inputKey(gltf, SETTINGS).key;
    writeFileSync(join(temp.dir, 'anim.bin'), new Uint8Array([1, 2, 3, 4]));
    const one = inputKey(gltf, SETTINGS).key;
    writeFileSync(join(temp.dir, 'anim.bin'), new Uint8Array([1, 2, 3, 5]));
    const other = inputKey(gltf, SETTINGS).key;
    expect(new Set([missing, one, other]).size).toBe(3);
    const cache = new ClipCache(join(temp.dir, 'gltf'));
    expect(cache.inputKey(gltf, SETTINGS)).toEqual({ key: other, fromStamp: false });
  });
});
