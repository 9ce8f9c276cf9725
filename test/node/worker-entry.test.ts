/**
 * The file piscina loads in each worker (dist/node/worker-entry.cjs, built by `npm test`).
 * piscina awaits the handler its worker file exports before it reports the worker ready, and
 * an idle worker then blocks in Atomics.wait, where no import can go on: the export must be
 * the promise of a compressor already loaded and warmed up, not a function that loads it.
 */
import { createRequire } from 'node:module';
import { join } from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import type { CompressFileTask, EncodedFile, FileFailed } from '../../src/node/worker.js';
import { FIXTURES, ROOT, makeTempDir } from '../cli/run-cli.js';

type Task = (task: CompressFileTask) => Promise<EncodedFile | FileFailed>;

const temp = makeTempDir();
afterAll(() => temp.remove());

describe('worker-entry.cjs', () => {
  it('exports a promise of the task, which compresses a file once it resolves', { timeout: 60_000 }, async () => {
    const exported: unknown = createRequire(import.meta.url)(join(ROOT, 'dist', 'node', 'worker-entry.cjs'));
    expect(typeof (exported as Promise<unknown>).then).toBe('function');
    const task = (await exported) as Task;
    expect(typeof task).toBe('function');
    const file = join(FIXTURES, 'dataset-1_walk_happy_002.bvh');
    const encoded = await task({ file, outDir: temp.dir, options: {} });
    expect(encoded.ok).toBe(true);
    if (!encoded.ok) return;
    expect(encoded.file).toBe(file);
    expect(encoded.clips).toHaveLength(1);
    expect(encoded.clips[0].bytes.length).toBeGreaterThan(0);
    expect(encoded.clips[0].stats.maxError).toBeLessThanOrEqual(encoded.clips[0].stats.threshold);
  });
});
