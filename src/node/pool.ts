/**
 * Batch compression over a piscina worker pool (or in-process for one job). Results come
 * back in input order, one bad file never stops the others, and the bytes written do not
 * depend on the number of jobs.
 */
import { setMaxListeners } from 'node:events';
import { mkdir } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';

import { Piscina } from 'piscina';

import { INTERNAL_ERROR, OUTPUT_CLASH } from './failure.js';
import { WriteQueue, inputBaseName, removeTempFiles } from './files.js';
import type { ReadOptions } from '../readers/options.js';
import {
  encodeFile, writeEncodedFile, type CompressFileTask, type CompressFilesOptions, type EncodedFile, type FileFailed, type FileResult,
} from './worker.js';

/** The worker entry, next to this one: CommonJS on purpose (worker-entry.cts says why). */
const WORKER_FILE = fileURLToPath(new URL('./worker-entry.cjs', import.meta.url));

/** In-process batches compress the next file while at most this many are being written. */
export const MAX_PENDING_WRITES = 4;

/** Progress of a batch, reported after each file. */
export interface BatchProgress {
  /** Files finished so far, this one included. */
  readonly done: number;
  readonly total: number;
  /** The file that just finished and how it went. */
  readonly result: FileResult;
}

/** How a batch runs. */
export interface CompressFilesRun {
  /** Folder for the `.bpk` files; created when missing. */
  readonly outDir: string;
  /**
   * Parallel jobs. Default `os.availableParallelism()`, capped at the number of inputs;
   * 1 runs in this thread, more use a pool of worker threads over `worker.js`.
   */
  readonly jobs?: number;
  /** Called after each file, in completion order. */
  readonly onProgress?: (progress: BatchProgress) => void;
  /**
   * Stops the batch: workers are terminated, this process's temp files in `outDir` are
   * removed (every `.bpk` already there is complete), and the promise rejects with the
   * signal's reason.
   */
  readonly signal?: AbortSignal;
}

/**
 * The `index`-th (1-based) of `count` deterministic slices of `paths`: the paths sorted by
 * code unit, then every `count`-th from position `index − 1`. Over `index` = 1..count each
 * path lands in exactly one slice. Throws a `RangeError` unless 1 ≤ index ≤ count.
 */
export function shardInputs(paths: readonly string[], index: number, count: number): string[] {
  if (!Number.isInteger(count) || count < 1) throw new RangeError(`shard count must be a whole number >= 1, got ${count}`);
  if (!Number.isInteger(index) || index < 1 || index > count) throw new RangeError(`shard index must be a whole number in 1..${count}, got ${index}`);
  const sorted = [...paths].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return sorted.filter((_, i) => i % count === index - 1);
}

/**
 * Compresses every file of `paths` into `run.outDir` (see worker.ts `compressFile` for
 * naming and atomic writes) and returns one {@link FileResult} per path, in input order.
 * Two inputs with the same base name would write the same output: the later one fails with
 * code `OUTPUT_CLASH`. Each result carries its file's reader warnings (`warnings`, plain
 * strings in the reader's order), the same whatever the number of jobs. Rejects only when
 * `run.signal` aborts, or when `outDir` cannot be created.
 */
export async function compressFiles(
  paths: readonly string[],
  options: CompressFilesOptions,
  run: CompressFilesRun,
): Promise<FileResult[]> {
  const { outDir, signal, onProgress } = run;
  signal?.throwIfAborted();
  options = withoutWarningCallback(options);
  await mkdir(outDir, { recursive: true });
  const total = paths.length;
  const results = new Array<FileResult | undefined>(total);
  let done = 0;
  const finish = (index: number, result: FileResult): void => {
    results[index] = result;
    done++;
    onProgress?.({ done, total, result });
  };

  // An output claimed twice would be overwritten by whichever file finishes last.
  const claimedBy = new Map<string, string>();
  const tasks: { index: number; task: CompressFileTask }[] = [];
  for (let index = 0; index < total; index++) {
    const file = paths[index];
    const base = inputBaseName(file);
    const owner = claimedBy.get(base);
    if (owner !== undefined) {
      finish(index, { ok: false, file, failure: { file, code: OUTPUT_CLASH, message: `writes the same output (${base}) as ${owner}` }, warnings: [] });
      continue;
    }
    claimedBy.set(base, file);
    tasks.push({ index, task: { file, outDir, options } });
  }

  // Files are written on this thread while the next ones compress (here or in workers):
  // compression never waits on the disk.
  const writes = new WriteQueue(MAX_PENDING_WRITES);
  const write = (index: number, encoded: EncodedFile | FileFailed): void => {
    writes.add(writeEncodedFile(encoded).then((result) => finish(index, result)));
  };

  const jobs = Math.max(1, Math.min(Math.floor(run.jobs ?? availableParallelism()), tasks.length));
  try {
    if (jobs <= 1) {
      for (const { index, task } of tasks) {
        signal?.throwIfAborted();
        write(index, await untilAborted(encodeFile(task), signal));
        await writes.room();
      }
    } else {
      await runPool(tasks, jobs, signal, write, finish);
    }
    await writes.drain();
    signal?.throwIfAborted();
  } catch (error) {
    // No write may still be creating a temp file once they are cleaned up.
    await writes.settle();
    if (signal?.aborted) await removeTempFiles(outDir);
    throw error;
  }
  return results as FileResult[];
}

/**
 * Encodes `tasks` on a pool of `jobs` worker threads, handing each file to `write` as it
 * comes back; the pool is destroyed before it returns. On abort piscina terminates the
 * running workers (and a worker stuck in a read cannot hold the batch up).
 */
async function runPool(
  tasks: readonly { index: number; task: CompressFileTask }[],
  jobs: number,
  signal: AbortSignal | undefined,
  write: (index: number, encoded: EncodedFile | FileFailed) => void,
  finish: (index: number, result: FileResult) => void,
): Promise<void> {
  const pool = new Piscina<CompressFileTask, EncodedFile | FileFailed>({ filename: WORKER_FILE, minThreads: jobs, maxThreads: jobs });
  // Every task listens to the signal: a batch-owned one, so that many tasks raise no
  // listener-leak warning on the caller's signal.
  const batch = new AbortController();
  setMaxListeners(tasks.length + 1, batch.signal);
  const onAbort = (): void => batch.abort(signal?.reason);
  signal?.addEventListener('abort', onAbort, { once: true });
  // An abort that came before the listener (while the folder was being made) counts too.
  if (signal?.aborted) onAbort();
  try {
    const settled = await Promise.allSettled(
      tasks.map(({ index, task }) => pool.run(task, { signal: batch.signal }).then((encoded) => write(index, encoded))),
    );
    signal?.throwIfAborted();
    // The worker catches every error of a task, so a rejection here means the worker itself died.
    settled.forEach((outcome, i) => {
      if (outcome.status === 'rejected') {
        const { index, task } = tasks[i];
        const reason = outcome.reason instanceof Error ? outcome.reason.message : String(outcome.reason);
        finish(index, { ok: false, file: task.file, failure: { file: task.file, code: INTERNAL_ERROR, message: `worker failed: ${reason}` }, warnings: [] });
      }
    });
  } finally {
    signal?.removeEventListener('abort', onAbort);
    await pool.destroy();
  }
}

/**
 * `options` without a `read.onWarning` (which untyped or widened callers may still pass): a
 * function cannot be cloned into a worker, and warnings come back in each result instead.
 */
function withoutWarningCallback(options: CompressFilesOptions): CompressFilesOptions {
  const read = options.read as ReadOptions | undefined;
  if (read?.onWarning === undefined) return options;
  const { onWarning, ...plain } = read;
  return { ...options, read: plain };
}

/** Resolves as `promise` does, or rejects with the signal's reason as soon as it aborts. */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason);
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => { signal.removeEventListener('abort', onAbort); resolve(value); },
      (error: unknown) => { signal.removeEventListener('abort', onAbort); reject(error); },
    );
  });
}
