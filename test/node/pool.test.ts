/**
 * compressFiles runs piscina workers from dist/node/worker.js, so these tests load the built
 * module (`npm test` builds first), typed from the source.
 */
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { FIXTURES, ROOT, WAIT_MS, blockingFifo, makeTempDir } from '../cli/run-cli.js';

type NodeModule = typeof import('../../src/node/index.js');
let node: NodeModule;
beforeAll(async () => {
  node = (await import(pathToFileURL(join(ROOT, 'dist', 'node', 'index.js')).href)) as NodeModule;
});

const temp = makeTempDir();
afterAll(() => temp.remove());

const INPUTS = readdirSync(FIXTURES)
  .filter((name) => name.endsWith('.bvh'))
  .sort()
  .slice(0, 4)
  .map((name) => join(FIXTURES, name));
/** Per-test limit: generous for a loaded CI machine, never the runner's default. */
const LONG = { timeout: 60_000 };

/** Every file of a folder, name → bytes. */
function filesOf(dir: string): Map<string, Buffer> {
  return new Map(
    readdirSync(dir)
      .sort()
      .map((name) => [name, readFileSync(join(dir, name))]),
  );
}

describe('compressFiles', () => {
  it('writes byte-identical files with 1 and 2 jobs, results in input order', LONG, async () => {
    const one = join(temp.dir, 'jobs-1');
    const two = join(temp.dir, 'jobs-2');
    const a = await node.compressFiles(INPUTS, {}, { outDir: one, jobs: 1 });
    const b = await node.compressFiles(INPUTS, {}, { outDir: two, jobs: 2 });
    expect(a.map((r) => r.file)).toEqual(INPUTS);
    expect(b.map((r) => r.file)).toEqual(INPUTS);
    for (const result of [...a, ...b]) expect(result.ok).toBe(true);
    const filesOne = filesOf(one),
      filesTwo = filesOf(two);
    expect([...filesOne.keys()]).toEqual(INPUTS.map((p) => node.inputBaseName(p) + '.bpk').sort());
    expect([...filesTwo.keys()]).toEqual([...filesOne.keys()]);
    for (const [name, bytes] of filesOne) expect(filesTwo.get(name)?.equals(bytes)).toBe(true);
  });

  it('reports a bad input as data while the others complete', LONG, async () => {
    const out = join(temp.dir, 'mixed');
    const bad = join(temp.dir, 'bad.bvh');
    writeFileSync(bad, 'HIERARCHY\nROOT Hips\n{\n');
    const missing = join(temp.dir, 'missing.bvh');
    const clash = join(temp.dir, 'dataset-1_bow_normal_001.bvh'); // same output name as INPUTS[0]
    writeFileSync(clash, readFileSync(INPUTS[0]));
    const inputs = [INPUTS[0], bad, INPUTS[1], missing, clash];
    const progress: number[] = [];
    const results = await node.compressFiles(
      inputs,
      {},
      { outDir: out, jobs: 2, onProgress: (p) => progress.push(p.done) },
    );
    expect(results.map((r) => r.file)).toEqual(inputs);
    // Both parties to a clash fail, each naming the other: neither output is written.
    expect(results.map((r) => r.ok)).toEqual([false, false, true, false, false]);
    const failures = results.flatMap((r) => (r.ok ? [] : [r.failure]));
    expect(failures.map((f) => f.file)).toEqual([INPUTS[0], bad, missing, clash]);
    expect(failures.map((f) => f.code)).toEqual([node.OUTPUT_CLASH, 'TRUNCATED', 'ENOENT', node.OUTPUT_CLASH]);
    expect(failures[0].message).toContain(clash);
    expect(failures[3].message).toContain(INPUTS[0]);
    for (const f of failures) expect(f.message.length).toBeGreaterThan(0);
    expect(progress).toEqual([1, 2, 3, 4, 5]);
    expect([...filesOf(out).keys()]).toEqual([node.inputBaseName(INPUTS[1]) + '.bpk']);
  });

  for (const jobs of [1, 2]) {
    it(
      `reports a file whose output cannot be written and writes the others (${jobs} job${jobs > 1 ? 's' : ''})`,
      LONG,
      async () => {
        const out = join(temp.dir, `unwritable-${jobs}`);
        // A folder where the second output goes: the rename over it fails.
        const blocked = join(out, node.inputBaseName(INPUTS[1]) + '.bpk');
        mkdirSync(blocked, { recursive: true });
        const results = await node.compressFiles(INPUTS, {}, { outDir: out, jobs });
        expect(results.map((r) => r.ok)).toEqual([true, false, true, true]);
        const failed = results[1];
        if (failed.ok) throw new Error('unreachable');
        expect(failed.file).toBe(INPUTS[1]);
        expect(failed.failure.code).toBe('EISDIR');
        const names = readdirSync(out).sort();
        expect(names.filter((name) => name.endsWith('.tmp'))).toEqual([]);
        expect(names).toEqual([0, 1, 2, 3].map((i) => node.inputBaseName(INPUTS[i]) + '.bpk').sort());
      },
    );
  }

  it('rejects at once when the signal is already aborted', LONG, async () => {
    const controller = new AbortController();
    controller.abort(new Error('stop'));
    await expect(
      node.compressFiles(INPUTS, {}, { outDir: join(temp.dir, 'never'), signal: controller.signal }),
    ).rejects.toThrow('stop');
  });

  for (const jobs of [1, 2]) {
    it(`stops a running batch on abort (${jobs} job${jobs > 1 ? 's' : ''}) without temp files`, LONG, async () => {
      const out = join(temp.dir, `aborted-${jobs}`);
      // Reading this FIFO blocks until release(): the batch cannot finish before the abort.
      const fifo = blockingFifo(join(temp.dir, `blocked-${jobs}.bvh`));
      const controller = new AbortController();
      // The hang guard: should no file ever finish (so no abort from onProgress), stop the batch anyway.
      const deadline = setTimeout(
        () => controller.abort(new Error(`deadline: no file finished within ${WAIT_MS} ms`)),
        WAIT_MS,
      );
      let outcome: unknown;
      try {
        outcome = await node
          .compressFiles(
            [INPUTS[2], fifo.path],
            { read: { allowSpecialFiles: true } },
            {
              outDir: out,
              jobs,
              signal: controller.signal,
              onProgress: () => controller.abort(new Error('stop')),
            },
          )
          .then(
            () => 'resolved although aborted',
            (error: unknown) => error,
          );
      } finally {
        clearTimeout(deadline);
        // A stopped worker may still be reading the FIFO: end-of-file lets it exit.
        fifo.release();
      }
      expect(outcome).toBeInstanceOf(Error);
      expect((outcome as Error).message).toBe('stop');
      expect(readdirSync(out)).toEqual([node.inputBaseName(INPUTS[2]) + '.bpk']);
    });
  }
});
