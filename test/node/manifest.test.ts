/**
 * Manifests: deterministic rendering, strict parsing, and merging the parts of a sharded
 * build into exactly what one run writes, with conflicts refused.
 */
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import {
  MANIFEST_ERROR,
  ManifestError,
  buildManifest,
  mergeManifests,
  parseManifest,
  readManifest,
  renderManifest,
  writeManifest,
  type Manifest,
  type ManifestInput,
} from '../../src/node/manifest.js';
import { makeTempDir } from '../cli/run-cli.js';

const temp = makeTempDir('bonepress-manifest-');
afterAll(() => temp.remove());

const VERSIONS = { package: '0.1.0', format: 2 };
const SETTINGS = { error: '0.01cm', shell: '3cm' };

function success(input: string, bytes: number, maxError = 0.009): ManifestInput {
  const name = input.replace(/^.*\//, '').replace(/\.bvh$/, '');
  return {
    input,
    key: `${name.padEnd(64, '0')}`.slice(0, 64),
    outputs: [
      {
        path: `out/${name}.bpk`,
        clip: name,
        boneCount: 22,
        sampleCount: 100,
        rawBytes: 88_000,
        bytes,
        ratio: 88_000 / bytes,
        maxError,
        threshold: 0.01,
        unit: 'cm',
      },
    ],
  };
}

const INPUTS: ManifestInput[] = [
  success('lib/c.bvh', 900),
  success('lib/a.bvh', 1000, 0.02),
  {
    input: 'lib/bad.bvh',
    key: 'f'.repeat(64),
    failure: { code: 'SYNTAX', message: 'line 3: expected ROOT' },
    warnings: [],
  },
  success('lib/b.bvh', 1100),
  { input: 'lib/gone.bvh', failure: { code: 'ENOENT', message: 'no such file or directory' } },
];

/** The parts `--shard i/n` runs would write: slice i of the sorted inputs (pool.ts `shardInputs`). */
function shardParts(count: number): { file: string; manifest: Manifest }[] {
  const sorted = [...INPUTS].sort((a, b) => (a.input < b.input ? -1 : 1));
  return Array.from({ length: count }, (_, i) => ({
    file: `part-${i + 1}.json`,
    manifest: parseManifest(
      renderManifest(
        buildManifest(
          sorted.filter((_, j) => j % count === i),
          VERSIONS,
          SETTINGS,
          { index: i + 1, count },
        ),
      ),
      `part-${i + 1}.json`,
    ),
  }));
}

describe('buildManifest and renderManifest', () => {
  it('sort inputs by path and sum the totals; the text does not depend on the order entries arrived in', () => {
    const manifest = buildManifest(INPUTS, VERSIONS, SETTINGS);
    expect(manifest.inputs.map((e) => e.input)).toEqual([
      'lib/a.bvh',
      'lib/b.bvh',
      'lib/bad.bvh',
      'lib/c.bvh',
      'lib/gone.bvh',
    ]);
    expect(manifest.total).toEqual({
      inputs: 5,
      outputs: 3,
      failures: 2,
      overThreshold: 1,
      rawBytes: 264_000,
      bytes: 3000,
      ratio: 88,
    });
    expect(renderManifest(buildManifest([...INPUTS].reverse(), VERSIONS, { shell: '3cm', error: '0.01cm' }))).toBe(
      renderManifest(manifest),
    );
    // Empty warnings are left out, so a cached and a fresh entry render alike.
    expect(manifest.inputs[2]).not.toHaveProperty('warnings');
    expect(buildManifest([], VERSIONS, SETTINGS).total.ratio).toBeNull();
  });

  it('parses back to the same text', () => {
    const text = renderManifest(buildManifest(INPUTS, VERSIONS, SETTINGS, { index: 2, count: 3 }));
    expect(renderManifest(parseManifest(text, 'm.json'))).toBe(text);
  });
});

describe('parseManifest', () => {
  const good = JSON.parse(renderManifest(buildManifest(INPUTS, VERSIONS, SETTINGS))) as Record<string, unknown>;
  const cases: [string, unknown, RegExp][] = [
    ['not JSON', '{', /m\.json: not JSON/],
    ['an array', [], /not a JSON object/],
    ['another version', { ...good, manifestVersion: 99 }, /manifestVersion 99 is not supported \(expected 1\)/],
    ['no inputs', { ...good, inputs: 'x' }, /"inputs" must be an array/],
    ['a bad shard', { ...good, shard: { index: 4, count: 3 } }, /"shard" must be/],
    [
      'both outputs and failure',
      { ...good, inputs: [{ input: 'a', outputs: [], failure: { code: 'X', message: 'y' } }] },
      /inputs\[0\]: needs exactly one of/,
    ],
    [
      'an output without bytes',
      { ...good, inputs: [{ input: 'a', outputs: [{ path: 'a', clip: 'a', unit: 'cm' }] }] },
      /inputs\[0\]\.outputs\[0\]: "boneCount" must be a number/,
    ],
  ];
  for (const [what, value, message] of cases) {
    it(`refuses ${what} with a ManifestError naming the file and place`, () => {
      const text = typeof value === 'string' ? value : JSON.stringify(value);
      expect(() => parseManifest(text, 'm.json')).toThrow(message);
      try {
        parseManifest(text, 'm.json');
      } catch (error) {
        expect(error).toBeInstanceOf(ManifestError);
        expect((error as ManifestError).code).toBe(MANIFEST_ERROR.MALFORMED);
        expect((error as ManifestError).file).toBe('m.json');
      }
    });
  }

  it('names an unreadable file', async () => {
    await expect(readManifest(join(temp.dir, 'none.json'))).rejects.toThrow(/none\.json: cannot be read \(ENOENT\)/);
  });
});

describe('mergeManifests', () => {
  const whole = renderManifest(buildManifest(INPUTS, VERSIONS, SETTINGS));

  for (const count of [1, 2, 3, 5]) {
    it(`joins ${count} shard part${count > 1 ? 's' : ''} into the bytes of one run, in any order`, () => {
      const parts = shardParts(count);
      expect(renderManifest(mergeManifests(parts))).toBe(whole);
      expect(renderManifest(mergeManifests([...parts].reverse()))).toBe(whole);
    });
  }

  it('accepts a part given twice when it agrees with itself', () => {
    const parts = shardParts(3);
    expect(renderManifest(mergeManifests([...parts, parts[1]]))).toBe(whole);
  });

  it('refuses parts of other versions or settings', () => {
    const [a, b] = shardParts(2);
    const other = { ...b, manifest: { ...b.manifest, settings: { ...SETTINGS, error: '0.02cm' } } };
    expect(() => mergeManifests([a, other])).toThrow(/part-2\.json: made with different settings than part-1\.json/);
    const newer = { ...b, manifest: { ...b.manifest, bonepress: '0.2.0' } };
    expect(() => mergeManifests([a, newer])).toThrow(expect.objectContaining({ code: MANIFEST_ERROR.MISMATCH }));
  });

  it('refuses an input two parts list differently, and one output path written by two inputs', () => {
    const [a, b] = shardParts(2);
    const changed = {
      file: 'rerun.json',
      manifest: {
        ...a.manifest,
        inputs: a.manifest.inputs.map((e) => (e.input === 'lib/a.bvh' ? success('lib/a.bvh', 999) : e)),
      },
    };
    expect(() => mergeManifests([a, b, changed])).toThrow(
      /rerun\.json: input lib\/a\.bvh differs from its entry in part-1\.json/,
    );
    const clash = {
      file: 'clash.json',
      manifest: buildManifest([{ ...success('other/c.bvh', 900) }], VERSIONS, SETTINGS),
    };
    expect(() => mergeManifests([a, b, clash])).toThrow(
      /clash\.json: output out\/c\.bpk of other\/c\.bvh is also written by lib\/c\.bvh/,
    );
  });

  it('refuses shards that miss a slice or mix counts', () => {
    const parts = shardParts(3);
    expect(() => mergeManifests([parts[0], parts[2]])).toThrow(/shard 2\/3 missing from the parts/);
    expect(() => mergeManifests([parts[0], shardParts(2)[1]])).toThrow(
      expect.objectContaining({ code: MANIFEST_ERROR.MISSING_SHARD }),
    );
  });
});

describe('writeManifest', () => {
  it('writes atomically, and leaves a file that already holds the bytes untouched', async () => {
    const path = join(temp.dir, 'manifest.json');
    const manifest = buildManifest(INPUTS, VERSIONS, SETTINGS);
    expect(await writeManifest(path, manifest)).toBe(true);
    expect(readFileSync(path, 'utf8')).toBe(renderManifest(manifest));
    const before = statSync(path, { bigint: true });
    expect(await writeManifest(path, buildManifest([...INPUTS].reverse(), VERSIONS, SETTINGS))).toBe(false);
    const after = statSync(path, { bigint: true });
    expect([after.ino, after.mtimeNs]).toEqual([before.ino, before.mtimeNs]);
    writeFileSync(path, '{}');
    expect(await writeManifest(path, manifest)).toBe(true);
    expect(readFileSync(path, 'utf8')).toBe(renderManifest(manifest));
  });
});
