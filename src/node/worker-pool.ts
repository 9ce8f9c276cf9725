/**
 * The worker threads a batch compresses on: a piscina pool over worker-entry.cjs, made here
 * alone, and the one pool a process may start before it knows its batch. The command line
 * starts that one first thing (cli/main.ts), so that the workers' start (Node's own start of
 * each thread, the compressor's modules, the warm-up: about 0.4 s) runs while the command's
 * modules load and its inputs are planned.
 */
import { fileURLToPath } from 'node:url';
import { setFlagsFromString } from 'node:v8';

import type { Piscina } from 'piscina';

import type { CompressFileTask, EncodedFile, FileFailed } from './worker.js';

/** The worker entry, next to this one: CommonJS on purpose (worker-entry.cts says why). */
const WORKER_FILE = fileURLToPath(new URL('./worker-entry.cjs', import.meta.url));

/** A pool of compression workers. */
export type WorkerPool = Piscina<CompressFileTask, EncodedFile | FileFailed>;

/** The pool started by {@link startWorkersEarly} and not taken yet. */
let early: { readonly jobs: number; readonly pool: Promise<WorkerPool> } | undefined;

/**
 * A pool of `jobs` workers, every one started at once: each loads and warms up the
 * compressor (worker-entry.cts) before its first task comes. The pool started early is
 * taken when it has exactly `jobs` workers; one of another size is destroyed.
 */
export function startWorkers(jobs: number): Promise<WorkerPool> {
  const started = early;
  early = undefined;
  if (started?.jobs === jobs) return started.pool;
  if (started) void destroyPool(started.pool);
  return createPool(jobs);
}

/**
 * Starts a pool of `jobs` workers now, for the next batch of this process to take
 * ({@link startWorkers}); {@link releaseEarlyWorkers} destroys it when no batch did. A
 * second call while one waits does nothing.
 */
export function startWorkersEarly(jobs: number): void {
  if (early || !(jobs >= 1)) return;
  const pool = createPool(Math.floor(jobs));
  pool.catch(() => undefined); // taken and awaited by a batch, or destroyed; never unhandled
  early = { jobs: Math.floor(jobs), pool };
}

/** Destroys the pool {@link startWorkersEarly} started if no batch took it. */
export async function releaseEarlyWorkers(): Promise<void> {
  const started = early;
  early = undefined;
  if (started) await destroyPool(started.pool);
}

async function createPool(jobs: number): Promise<WorkerPool> {
  // Loaded here: a one-job batch in this thread, and every command that compresses nothing, never needs it.
  const { Piscina } = await import('piscina');
  // Node 20 unregisters a worker's isolate before disposing of it: a background compile job
  // that starts a marking task for a worker being torn down (the batch's end, an abort)
  // aborts the whole process (node_platform.cc, ForIsolate). Without marking tasks V8 marks
  // as it allocates instead; the whole `compress` process measured the same.
  setFlagsFromString('--no-incremental-marking-task');
  return new Piscina<CompressFileTask, EncodedFile | FileFailed>({
    filename: WORKER_FILE,
    minThreads: jobs,
    maxThreads: jobs,
  });
}

async function destroyPool(pool: Promise<WorkerPool>): Promise<void> {
  await (await pool.catch(() => undefined))?.destroy();
}
