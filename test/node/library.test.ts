/**
 * Incremental library builds (node/library.ts): a second run over an unchanged library
 * compresses and rewrites nothing; a changed input, a changed setting, a lost or damaged
 * output cost exactly what they must; 1 and 2 jobs give the same bytes. The pool runs
 * workers from dist/, so these tests load the built module (`npm test` builds first).
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { FIXTURES, ROOT, makeTempDir } from '../cli/run-cli.js';

type LibraryModule = typeof import('../../src/node/library.js');
let library: LibraryModule;
beforeAll(async () => {
  library = (await import(pathToFileURL(join(ROOT, 'dist', 'node', 'library.js')).href)) as LibraryModule;
});

const temp = makeTempDir('bonepress-library-');
afterAll(() => temp.remove());

/** Per-test limit: generous for a loaded CI machine, never the runner's default. */
const LONG = { timeout: 120_000 };
const FIXTURE_NAMES = readdirSync(FIXTURES)
  .filter((name) => name.endsWith('.bvh'))
  .sort()
  .slice(0, 4);

/** A fresh library: 4 fixture clips, one malformed file, and one whose name clashes with a clip. */
function makeLibrary(name: string): { root: string; inputs: string[] } {
  const root = join(temp.dir, name);
  mkdirSync(join(root, 'lib', 'more'), { recursive: true });
  const inputs = FIXTURE_NAMES.map((fixture) => {
    copyFileSync(join(FIXTURES, fixture), join(root, 'lib', fixture));
    return join(root, 'lib', fixture);
  });
  writeFileSync(join(root, 'lib', 'broken.bvh'), 'HIERARCHY\nROOT Hips\n{\n');
  copyFileSync(join(FIXTURES, FIXTURE_NAMES[0]), join(root, 'lib', 'more', FIXTURE_NAMES[0]));
  return { root, inputs: [...inputs, join(root, 'lib', 'broken.bvh'), join(root, 'lib', 'more', FIXTURE_NAMES[0])] };
}

/** Every `.bpk` of a folder: name → bytes, inode and mtime (to see whether it was rewritten). */
function outputsOf(dir: string): Map<string, { bytes: Buffer; ino: bigint; mtimeNs: bigint }> {
  return new Map(
    readdirSync(dir)
      .filter((n) => n.endsWith('.bpk'))
      .sort()
      .map((name) => {
        const s = statSync(join(dir, name), { bigint: true });
        return [name, { bytes: readFileSync(join(dir, name)), ino: s.ino, mtimeNs: s.mtimeNs }];
      }),
  );
}

/** Changes one motion value of a BVH a little: the file stays valid and compresses differently. */
function touch(path: string): void {
  const lines = readFileSync(path, 'utf8').split('\n');
  let last = lines.length - 1;
  while (!/\d/.test(lines[last])) last--;
  const values = lines[last].trim().split(/\s+/);
  values[5] = (Number(values[5]) + 0.5).toFixed(6);
  lines[last] = values.join(' ');
  writeFileSync(path, lines.join('\n'));
}

describe('compressLibrary', () => {
  it('compresses once, then an unchanged library compresses nothing and rewrites nothing', LONG, async () => {
    const { root, inputs } = makeLibrary('unchanged');
    const run = {
      outDir: join(root, 'out'),
      cacheDir: join(root, 'cache'),
      manifestPath: join(root, 'out', 'manifest.json'),
      jobs: 1,
    };
    const first = await library.compressLibrary(inputs, {}, run);
    expect(first).toMatchObject({ compressed: 5, cached: 0, outputsWritten: 4, manifestWritten: true });
    const manifest = first.manifest;
    expect(manifest.total).toMatchObject({ inputs: 6, outputs: 4, failures: 2 });
    const byInput = new Map(manifest.inputs.map((e) => [e.input, e]));
    expect(byInput.get(inputs[4])?.failure?.code).toBe('TRUNCATED');
    expect(byInput.get(inputs[5])?.failure).toEqual({
      code: 'OUTPUT_CLASH',
      message: `writes the same output (${FIXTURE_NAMES[0].replace('.bvh', '')}) as ${inputs[0]}`,
    });
    for (const input of inputs.slice(0, 4)) {
      const entry = byInput.get(input)!;
      expect(entry.key).toMatch(/^[0-9a-f]{64}$/);
      expect(entry.outputs).toHaveLength(1);
      const output = entry.outputs![0];
      expect(readFileSync(output.path).byteLength).toBe(output.bytes);
      expect(output).toMatchObject({
        clip: FIXTURE_NAMES[inputs.indexOf(input)].replace('.bvh', ''),
        boneCount: 22,
        unit: 'cm',
        threshold: 0.01,
      });
      expect(output.ratio).toBeCloseTo(output.rawBytes / output.bytes, 12);
    }
    const manifestText = readFileSync(run.manifestPath, 'utf8');
    const manifestStat = statSync(run.manifestPath, { bigint: true });
    const outputs = outputsOf(run.outDir);

    const second = await library.compressLibrary(inputs, {}, run);
    // Only the malformed input is tried again: failures are not cached.
    expect(second).toMatchObject({ compressed: 1, cached: 4, outputsWritten: 0, manifestWritten: false });
    expect(outputsOf(run.outDir)).toEqual(outputs);
    expect(readFileSync(run.manifestPath, 'utf8')).toBe(manifestText);
    expect(statSync(run.manifestPath, { bigint: true }).mtimeNs).toBe(manifestStat.mtimeNs);
  });

  it('writes the same outputs and manifest with 2 jobs, with or without a cache', LONG, async () => {
    const one = makeLibrary('jobs-1');
    const two = makeLibrary('jobs-2');
    const a = await library.compressLibrary(
      one.inputs,
      {},
      {
        outDir: join(one.root, 'out'),
        cacheDir: join(one.root, 'cache'),
        manifestPath: join(one.root, 'm.json'),
        jobs: 1,
      },
    );
    const b = await library.compressLibrary(
      two.inputs,
      {},
      { outDir: join(two.root, 'out'), manifestPath: join(two.root, 'm.json'), jobs: 2 },
    );
    expect(b.compressed).toBe(5);
    const bytesOf = (dir: string): [string, Buffer][] => [...outputsOf(dir)].map(([name, o]) => [name, o.bytes]);
    expect(bytesOf(join(two.root, 'out'))).toEqual(bytesOf(join(one.root, 'out')));
    expect(readFileSync(join(two.root, 'm.json'), 'utf8').replaceAll(two.root, 'ROOT')).toBe(
      readFileSync(join(one.root, 'm.json'), 'utf8').replaceAll(one.root, 'ROOT'),
    );
    expect(a.manifest.inputs.map((e) => e.key)).toEqual(b.manifest.inputs.map((e) => e.key));
  });

  it(
    'recompresses exactly a touched input, and everything when a setting that changes output changes',
    LONG,
    async () => {
      const { root, inputs } = makeLibrary('touched');
      const run = {
        outDir: join(root, 'out'),
        cacheDir: join(root, 'cache'),
        manifestPath: join(root, 'm.json'),
        jobs: 1,
      };
      const first = await library.compressLibrary(inputs, {}, run);
      const before = outputsOf(run.outDir);
      touch(inputs[2]);
      const second = await library.compressLibrary(inputs, {}, run);
      expect(second).toMatchObject({ compressed: 2, cached: 3, outputsWritten: 1, manifestWritten: true });
      const after = outputsOf(run.outDir);
      const touchedName = FIXTURE_NAMES[2].replace('.bvh', '.bpk');
      for (const [name, output] of after) {
        if (name === touchedName) expect(output.bytes.equals(before.get(name)!.bytes)).toBe(false);
        else expect(output).toEqual(before.get(name));
      }
      const keyOf = (m: typeof first.manifest, input: string): string | undefined =>
        m.inputs.find((e) => e.input === input)?.key;
      expect(keyOf(second.manifest, inputs[2])).not.toBe(keyOf(first.manifest, inputs[2]));
      expect(keyOf(second.manifest, inputs[1])).toBe(keyOf(first.manifest, inputs[1]));

      const coarser = await library.compressLibrary(inputs, { error: '0.02cm' }, run);
      expect(coarser).toMatchObject({ compressed: 5, cached: 0 });
      expect(coarser.manifest.settings).toMatchObject({ error: '0.02cm' });
      // Back to the first settings: every entry is still in the cache.
      const back = await library.compressLibrary(inputs, {}, run);
      expect(back).toMatchObject({ compressed: 1, cached: 4, outputsWritten: 4 });
      expect(readFileSync(join(run.outDir, touchedName))).toEqual(after.get(touchedName)!.bytes);
    },
  );

  it('puts back a deleted output and repairs a damaged one from the cache, without compressing', LONG, async () => {
    const { root, inputs } = makeLibrary('repair');
    const run = { outDir: join(root, 'out'), cacheDir: join(root, 'cache'), jobs: 1 };
    await library.compressLibrary(inputs.slice(0, 4), {}, run);
    const before = outputsOf(run.outDir);
    const [first, second] = [...before.keys()];
    rmSync(join(run.outDir, first));
    const damaged = Buffer.from(before.get(second)!.bytes);
    damaged[20] ^= 0xff;
    writeFileSync(join(run.outDir, second), damaged);
    const result = await library.compressLibrary(inputs.slice(0, 4), {}, run);
    expect(result).toMatchObject({ compressed: 0, cached: 4, outputsWritten: 2, manifestWritten: false });
    const after = outputsOf(run.outDir);
    for (const [name, output] of before) expect(after.get(name)!.bytes).toEqual(output.bytes);
  });

  it('never lets a cached clip past a cap a fresh run enforces', LONG, async () => {
    const { root, inputs } = makeLibrary('capped');
    const run = { outDir: join(root, 'out'), cacheDir: join(root, 'cache'), jobs: 1 };
    await library.compressLibrary(inputs.slice(0, 2), {}, run);
    const capped = await library.compressLibrary(
      inputs.slice(0, 2),
      { read: { maxSamples: 10 } } as Parameters<typeof library.compressLibrary>[1],
      run,
    );
    expect(capped).toMatchObject({ compressed: 2, cached: 0 });
    for (const entry of capped.manifest.inputs) expect(entry.failure?.message, entry.input).toMatch(/10/);
  });

  it('records the shard and reports progress for every input', LONG, async () => {
    const { root, inputs } = makeLibrary('progress');
    const seen: [number, boolean][] = [];
    const result = await library.compressLibrary(
      inputs.slice(0, 2),
      {},
      {
        outDir: join(root, 'out'),
        jobs: 1,
        shard: { index: 2, count: 3 },
        onProgress: (p) => seen.push([p.done, p.cached]),
      },
    );
    expect(result.manifest.shard).toEqual({ index: 2, count: 3 });
    expect(seen).toEqual([
      [1, false],
      [2, false],
    ]);
  });

  it('stops on abort and leaves only complete outputs; the rerun finishes with the same bytes', LONG, async () => {
    const { root, inputs } = makeLibrary('abort');
    const run = {
      outDir: join(root, 'out'),
      cacheDir: join(root, 'cache'),
      manifestPath: join(root, 'm.json'),
      jobs: 1,
    };
    const controller = new AbortController();
    await expect(
      library.compressLibrary(
        inputs,
        {},
        {
          ...run,
          signal: controller.signal,
          onProgress: ({ done }) => {
            if (done === 3) controller.abort(new Error('stop'));
          },
        },
      ),
    ).rejects.toThrow('stop');
    expect(() => statSync(run.manifestPath)).toThrow();
    expect(readdirSync(run.outDir).filter((n) => n.endsWith('.tmp'))).toEqual([]);
    const resumed = await library.compressLibrary(inputs, {}, run);
    expect(resumed.cached).toBeGreaterThan(0);
    const reference = makeLibrary('abort-reference');
    await library.compressLibrary(
      reference.inputs,
      {},
      { outDir: join(reference.root, 'out'), manifestPath: join(reference.root, 'm.json'), jobs: 1 },
    );
    expect(readFileSync(run.manifestPath, 'utf8').replaceAll(root, 'ROOT')).toBe(
      readFileSync(join(reference.root, 'm.json'), 'utf8').replaceAll(reference.root, 'ROOT'),
    );
    const bytesOf = (dir: string): [string, Buffer][] => [...outputsOf(dir)].map(([name, o]) => [name, o.bytes]);
    expect(bytesOf(run.outDir)).toEqual(bytesOf(join(reference.root, 'out')));
  });
});

describe('stale temp files', () => {
  it('are removed when their process is gone; a live process keeps its own', LONG, async () => {
    const { root, inputs } = makeLibrary('stale');
    const out = join(root, 'out');
    mkdirSync(out, { recursive: true });
    // The pid of a process that has exited: its temp files can never be finished.
    const gone = spawnSync(process.execPath, ['-e', '']).pid!;
    const stale = `.${FIXTURE_NAMES[0].replace('.bvh', '.bpk')}.${gone}-0-1.tmp`;
    const live = `.${FIXTURE_NAMES[1].replace('.bvh', '.bpk')}.${process.ppid}-0-1.tmp`;
    for (const name of [stale, live, '.keep-me']) writeFileSync(join(out, name), 'partial');
    await library.compressLibrary(inputs.slice(0, 1), {}, { outDir: out, jobs: 1 });
    expect(
      readdirSync(out)
        .filter((n) => n.startsWith('.'))
        .sort(),
    ).toEqual(['.keep-me', live].sort());
  });
});

describe('outputSettings', () => {
  it('fills in the defaults, so spelling one out keys like leaving it out', () => {
    expect(library.outputSettings({})).toEqual(
      library.outputSettings({ error: '0.01cm', shell: '3cm', stripNames: false, checksum: true }),
    );
    expect(library.outputSettings({ read: { unit: 'm', sampleRate: 30 } })).toMatchObject({
      unit: 'm',
      sampleRate: 30,
    });
    // The default metric spelled out keeps the key of a build made before the option; another metric changes it.
    expect(library.outputSettings({ metric: 'vertices' })).toEqual(library.outputSettings({}));
    expect(library.outputSettings({ metric: 'shell' })).toEqual({ ...library.outputSettings({}), metric: 'shell' });
    // The caps decide whether an input is refused: another cap is another key, so a cached
    // clip cannot slip past a cap a fresh run would enforce.
    const capped = { read: { maxSamples: 100 } } as Parameters<typeof library.outputSettings>[0];
    expect(library.outputSettings(capped)).toMatchObject({ admission: { maxSamples: 100 } });
    // Untyped callers may still pass a warning callback: it changes nothing.
    const withCallback = { read: { onWarning: () => undefined } } as unknown as Parameters<
      typeof library.outputSettings
    >[0];
    expect(library.outputSettings(withCallback)).toEqual(library.outputSettings({}));
  });
});
