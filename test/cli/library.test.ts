/**
 * Library builds through the built CLI (`compress --manifest`, `manifest merge`): a batch
 * SIGKILLed at random moments and rerun ends with the outputs and manifest of an
 * uninterrupted run, byte for byte; three shards merged equal one run; an unchanged
 * second run compresses and writes nothing.
 */
import { copyFileSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import { FIXTURES, killStartedClis, makeTempDir, runCli, sleep, startCli } from './run-cli.js';
import { mulberry32 } from '../../src/clip/random.js';

const temp = makeTempDir('bonepress-cli-library-');
afterAll(() => temp.remove());
afterEach(killStartedClis);

/** Per-test limit: several CLI runs on a loaded 2-core machine; only a hang reaches it. */
const LONG = { timeout: 240_000 };
const REPLICAS = 4;

/** The fixture clips, each copied REPLICAS times under other names: a few dozen inputs. */
const LIBRARY = join(temp.dir, 'lib');
/** The library's files, sorted, as the command lines here name them. */
let libraryFiles: string[] = [];
/** The uninterrupted run everything is compared with. */
const REFERENCE = join(temp.dir, 'reference');
let referenceSeconds = 0;

/** `out` with `manifest.json` in it, as every run here lays it out. */
function compressArgs(out: string, ...more: string[]): string[] {
  return ['compress', ...libraryFiles, '-o', out, '--manifest', join(out, 'manifest.json'), ...more];
}

/** Every visible file of a folder (hidden ones are the cache and temp files): name → bytes. */
function visibleFiles(dir: string): Map<string, Buffer> {
  return new Map(
    readdirSync(dir)
      .filter((name) => !name.startsWith('.'))
      .sort()
      .map((name) => [name, readFileSync(join(dir, name))]),
  );
}

/** How many outputs are in place in `out` (0 while it does not exist). */
function bpkCount(out: string): number {
  try {
    return readdirSync(out).filter((name) => name.endsWith('.bpk')).length;
  } catch {
    return 0;
  }
}

/** The manifest of `out`, its folder written as OUT so that runs into other folders compare. */
function manifestText(out: string): string {
  return readFileSync(join(out, 'manifest.json'), 'utf8').replaceAll(out, 'OUT');
}

/** A small deterministic PRNG (mulberry32), so each seed kills at the same moments every time. */
const random = mulberry32;

beforeAll(() => {
  mkdirSync(LIBRARY, { recursive: true });
  for (const name of readdirSync(FIXTURES).filter((n) => n.endsWith('.bvh'))) {
    for (let r = 1; r <= REPLICAS; r++)
      copyFileSync(join(FIXTURES, name), join(LIBRARY, name.replace('.bvh', `_r${r}.bvh`)));
  }
  libraryFiles = readdirSync(LIBRARY)
    .sort()
    .map((name) => join(LIBRARY, name));
  const started = performance.now();
  const run = runCli(compressArgs(REFERENCE, '--jobs', '2'), 180_000);
  referenceSeconds = (performance.now() - started) / 1000;
  expect(run.stderr).toBe('');
  expect(run.code).toBe(0);
}, 200_000);

describe('compress --manifest', () => {
  it(
    'writes every output and a manifest; an unchanged second run compresses nothing and rewrites nothing',
    LONG,
    () => {
      const inputs = readdirSync(LIBRARY).length;
      const manifest = JSON.parse(readFileSync(join(REFERENCE, 'manifest.json'), 'utf8')) as {
        inputs: { input: string; outputs: { path: string }[] }[];
        total: { inputs: number };
      };
      expect(manifest.total.inputs).toBe(inputs);
      expect(manifest.inputs.map((e) => e.outputs[0].path)).toEqual(
        manifest.inputs.map((e) => join(REFERENCE, e.input.slice(LIBRARY.length + 1).replace('.bvh', '.bpk'))),
      );
      expect(visibleFiles(REFERENCE).size).toBe(inputs + 1);

      const out = join(temp.dir, 'second');
      expect(runCli(compressArgs(out, '--jobs', '2')).code).toBe(0);
      const stamps = new Map(
        readdirSync(out).map((name) => [name, statSync(join(out, name), { bigint: true }).mtimeNs]),
      );
      const second = runCli(compressArgs(out, '--jobs', '2'));
      expect(second.code).toBe(0);
      expect(second.stdout).toContain(
        `${inputs} inputs: 0 compressed, ${inputs} from the cache, 0 failed; 0 outputs written`,
      );
      expect(second.stdout).toContain('manifest.json unchanged');
      expect(
        new Map(readdirSync(out).map((name) => [name, statSync(join(out, name), { bigint: true }).mtimeNs])),
      ).toEqual(stamps);
      expect(manifestText(out)).toBe(manifestText(REFERENCE));
    },
  );

  it('prints what the run did and the manifest with --json', LONG, () => {
    const out = join(temp.dir, 'json');
    const run = runCli(compressArgs(out, '--jobs', '1', '--json'));
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout) as {
      compressed: number;
      cached: number;
      manifestWritten: boolean;
      manifest: unknown;
    };
    expect(report).toMatchObject({ compressed: readdirSync(LIBRARY).length, cached: 0, manifestWritten: true });
    expect(`${JSON.stringify(report.manifest, null, 2)}\n`.replaceAll(out, 'OUT')).toBe(manifestText(REFERENCE));
  });

  it(
    'with --skip-empty, reports an input without animation as skipped and exits 0; the manifest still lists it',
    LONG,
    () => {
      const empty = join(temp.dir, 'empty.gltf');
      writeFileSync(empty, JSON.stringify({ asset: { version: '2.0' } }));
      const out = join(temp.dir, 'skip-empty');
      const args = [
        'compress',
        empty,
        libraryFiles[0],
        '-o',
        out,
        '--manifest',
        join(out, 'manifest.json'),
        '--jobs',
        '1',
      ];
      const failed = runCli(args);
      expect(failed.code).toBe(2);
      expect(failed.stderr).toBe(`bonepress: ${empty}: no animations in the file\n`);
      const skipped = runCli([...args, '--skip-empty']);
      expect(skipped.code).toBe(0);
      expect(skipped.stderr).toBe(`bonepress: ${empty}: skipped: no animations in the file\n`);
      const manifest = JSON.parse(readFileSync(join(out, 'manifest.json'), 'utf8')) as {
        inputs: { input: string; failure?: { code: string } }[];
      };
      expect(manifest.inputs.find((e) => e.input === empty)?.failure?.code).toBe('NO_ANIMATION');
    },
  );

  it('refuses a single-file -o in library mode', () => {
    const run = runCli([
      'compress',
      ...libraryFiles,
      '-o',
      join(temp.dir, 'one.bpk'),
      '--manifest',
      join(temp.dir, 'm.json'),
    ]);
    expect(run.code).toBe(2);
    // Either check may speak first (the batch's own, or library mode's): both name the -o value.
    expect(run.stderr).toMatch(/^bonepress: .*one\.bpk.*\n$/);
  });
});

describe('a batch killed at random moments', () => {
  for (const seed of [1, 2, 3]) {
    it(`reruns to the outputs and manifest of an uninterrupted run, byte for byte (seed ${seed})`, LONG, async () => {
      const next = random(seed);
      const out = join(temp.dir, `killed-${seed}`);
      const jobs = seed % 2 === 0 ? '1' : '2';
      // First kill: once a random number of outputs is in place (always mid-batch: the
      // manifest comes last). Second kill, of the resumed run: after a random delay, from
      // start-up (the scan of the cache) to the end of a whole run.
      const total = libraryFiles.length;
      const first = startCli(compressArgs(out, '--jobs', jobs));
      const landed = Math.floor(next() * (total - 4));
      await first.waitUntil(() => bpkCount(out) >= landed, `${landed} outputs`, 120_000);
      first.kill('SIGKILL');
      expect(await first.waitForExit()).toMatchObject({ signal: 'SIGKILL', timedOut: false });
      expect(() => statSync(join(out, 'manifest.json'))).toThrow();
      const second = startCli(compressArgs(out, '--jobs', jobs));
      await sleep(Math.floor(next() * referenceSeconds * 1000));
      second.kill('SIGKILL');
      expect((await second.waitForExit()).timedOut).toBe(false);
      const rerun = runCli(compressArgs(out, '--jobs', jobs), 180_000);
      expect(rerun.stderr).toBe('');
      expect(rerun.code).toBe(0);
      const [actual, expected] = [visibleFiles(out), visibleFiles(REFERENCE)];
      expect([...actual.keys()]).toEqual([...expected.keys()]);
      for (const [name, bytes] of expected)
        if (name !== 'manifest.json') expect(actual.get(name)!.equals(bytes), name).toBe(true);
      expect(manifestText(out)).toBe(manifestText(REFERENCE));
      // The temp files the kills left behind are gone too.
      expect(readdirSync(out).filter((name) => name.startsWith('.'))).toEqual(['.bonepress-cache']);
    });
  }
});

describe('--shard over 3 shards, merged', () => {
  it('equals one run: the same outputs and, after manifest merge, the same manifest bytes', LONG, () => {
    const out = join(temp.dir, 'sharded');
    const parts = [1, 2, 3].map((i) => join(out, `part-${i}.json`));
    for (const [i, part] of parts.entries()) {
      const run = runCli(
        [
          'compress',
          ...libraryFiles,
          '-o',
          out,
          '--shard',
          `${i + 1}/3`,
          '--manifest',
          part,
          '--jobs',
          String(1 + (i % 2)),
        ],
        180_000,
      );
      expect(run.stderr).toBe('');
      expect(run.code).toBe(0);
    }
    const merged = join(out, 'manifest.json');
    const merge = runCli(['manifest', 'merge', ...parts, '-o', merged]);
    expect(merge.stderr).toBe('');
    expect(merge.code).toBe(0);
    expect(merge.stdout).toContain(`3 parts: ${readdirSync(LIBRARY).length} inputs`);
    expect(manifestText(out)).toBe(manifestText(REFERENCE));
    for (const part of parts) rmSync(part);
    const [actual, expected] = [visibleFiles(out), visibleFiles(REFERENCE)];
    expect([...actual.keys()]).toEqual([...expected.keys()]);
    for (const [name, bytes] of expected)
      if (name !== 'manifest.json') expect(actual.get(name)!.equals(bytes), name).toBe(true);
  });

  it('refuses parts that miss a shard or conflict, naming the part', () => {
    const out = join(temp.dir, 'merge-errors');
    mkdirSync(out, { recursive: true });
    const part = (i: number, inputs: unknown[]): string => {
      const path = join(out, `p${i}.json`);
      writeFileSync(
        path,
        JSON.stringify({
          manifestVersion: 1,
          bonepress: '0.1.0',
          formatVersion: 2,
          settings: {},
          shard: { index: i, count: 3 },
          inputs,
          total: {},
        }),
      );
      return path;
    };
    const missing = runCli(['manifest', 'merge', part(1, []), part(3, []), '-o', join(out, 'm.json')]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toBe(`bonepress: ${join(out, 'p1.json')}: shard 2/3 missing from the parts\n`);
    const failed = (message: string): unknown => ({ input: 'a.bvh', failure: { code: 'SYNTAX', message } });
    const conflict = runCli([
      'manifest',
      'merge',
      part(1, [failed('x')]),
      part(2, [failed('y')]),
      part(3, []),
      '-o',
      join(out, 'm.json'),
    ]);
    expect(conflict.code).toBe(2);
    expect(conflict.stderr).toBe(
      `bonepress: ${join(out, 'p2.json')}: input a.bvh differs from its entry in ${join(out, 'p1.json')}\n`,
    );
    const broken = join(out, 'broken.json');
    writeFileSync(broken, '{"manifestVersion": 1');
    const bad = runCli(['manifest', 'merge', broken, '-o', join(out, 'm.json')]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/broken\.json: not JSON/);
    expect(() => statSync(join(out, 'm.json'))).toThrow();
  });
});

describe('library mode options', () => {
  it('-v names each output, compressed or from the cache; glTF output and a single .bpt file are refused', LONG, () => {
    const out = join(temp.dir, 'verbose'),
      manifest = join(out, 'manifest.json');
    const input = libraryFiles[0];
    const first = runCli(['compress', input, '-o', out, '--manifest', manifest, '-v']);
    expect(first.code, first.stderr).toBe(0);
    const output = join(out, input.slice(LIBRARY.length + 1).replace('.bvh', '.bpk'));
    const bytes = statSync(output).size;
    expect(first.stderr).toBe(`bonepress: ${input}: compressed: ${output} (${bytes} bytes)\n`);
    const second = runCli(['compress', input, '-o', out, '--manifest', manifest, '-v']);
    expect(second.stderr).toBe(`bonepress: ${input}: from the cache: ${output} (${bytes} bytes)\n`);
    expect(runCli(['compress', input, '-o', out, '--manifest', manifest]).stderr).toBe('');

    const glb = runCli(['compress', input, '-o', join(temp.dir, 'x.glb'), '--manifest', manifest]);
    expect(glb.code).toBe(2);
    expect(glb.stderr).toMatch(
      /--cache and --manifest build a folder of loose clips; glTF output \(-o .*x\.glb\) writes one asset/,
    );
    const bpt = runCli(['compress', input, '-o', join(temp.dir, 'one.bpt'), '--manifest', manifest]);
    expect(bpt.code).toBe(2);
    expect(bpt.stderr).toBe(
      `bonepress: --cache and --manifest write a folder of outputs; -o ${join(temp.dir, 'one.bpt')} names one file\n`,
    );
    const folder = runCli(['compress', input, '-o', out, '--manifest', `${out}/`]);
    expect(folder.code).toBe(2);
    expect(folder.stderr).toBe(`bonepress: --manifest names a file, got ${out}/\n`);
  });
});
