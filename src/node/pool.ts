/**
 * Batch compression over a piscina worker pool (or in-process for one job). Results come
 * back in input order, one bad file never stops the others, and the bytes written do not
 * depend on the number of jobs.
 */
import { setMaxListeners } from 'node:events';
import { mkdir, stat } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { dirname, join } from 'node:path';

import { INTERNAL_ERROR, OUTPUT_CLASH, toFailure, type FileFailure } from './failure.js';
import { WriteQueue, removeTempFiles } from './files.js';
import { commitStaged, planBatchOutputs, stageFile, type OutputTarget } from './outputs.js';
import {
  encodeFile,
  outputExtension,
  withoutWarningCallback,
  type CompressFileTask,
  type CompressFilesOptions,
  type EncodedFile,
  type FileFailed,
  type FileResult,
} from './worker.js';
import { startWorkers, type WorkerPool } from './worker-pool.js';

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
  /** Folder for the `.bpk` files, created when missing: shorthand for `out: { kind: 'folder', path: outDir }`. */
  readonly outDir?: string;
  /**
   * Where the outputs go (outputs.ts `resolveOutputTarget` reads a `-o` value into one): a
   * folder (one `.bpk` per clip, named by outputs.ts `clipOutputNames`), one file, or a
   * stream; the last two take a batch holding exactly one clip. Wins over `outDir`.
   */
  readonly out?: OutputTarget;
  /** With a folder output: per path, the folder under it (relative) its outputs go to (inputs.ts `expandInputTree`). Default: none. */
  readonly subfolders?: readonly string[];
  /**
   * Parallel jobs. Default `os.availableParallelism()`, capped at the number of inputs;
   * 1 runs in this thread, more use a pool of worker threads over `worker.js`.
   */
  readonly jobs?: number;
  /** Called after each file, in completion order. */
  readonly onProgress?: (progress: BatchProgress) => void;
  /**
   * Stops the batch: workers are terminated, this process's temp files in the output folder
   * are removed (every output already there is complete), and the promise rejects with the
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
  if (!Number.isInteger(count) || count < 1)
    throw new RangeError(`shard count must be a whole number >= 1, got ${count}`);
  if (!Number.isInteger(index) || index < 1 || index > count)
    throw new RangeError(`shard index must be a whole number in 1..${count}, got ${index}`);
  const sorted = [...paths].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return sorted.filter((_, i) => i % count === index - 1);
}

/**
 * Compresses every file of `paths` and returns one {@link FileResult} per path, in input
 * order; the bytes do not depend on the number of jobs.
 *
 * Outputs are planned for the whole batch before anything is written (outputs.ts
 * `planBatchOutputs`): a file two of whose outputs, or one output of which another file
 * also names, or that would replace an input, fails with `OUTPUT_CLASH` (every party to a
 * clash fails and is named), one whose output path is a symbolic link with `OUTPUT_LINK`;
 * such files are not compressed and nothing of them is written. The others are written as
 * they finish, each output atomically (a flushed temp file renamed into place), so an
 * interrupted batch keeps every output it completed and no partial one.
 *
 * Each result carries its file's reader warnings (and each clip its own), the same
 * whatever the number of jobs. Rejects only when `run.signal` aborts, when the output
 * folder cannot be created, or without an output.
 *
 * Starting worker threads sets V8's `--no-incremental-marking-task` for the process: on
 * Node 20 a worker torn down while a background compile job schedules a marking task for
 * it aborts the process.
 */
export async function compressFiles(
  paths: readonly string[],
  options: CompressFilesOptions,
  run: CompressFilesRun,
): Promise<FileResult[]> {
  const { signal, onProgress } = run;
  const target: OutputTarget | undefined =
    run.out ?? (run.outDir !== undefined ? { kind: 'folder', path: run.outDir } : undefined);
  if (!target) throw new TypeError('compressFiles: give run.out or run.outDir');
  signal?.throwIfAborted();
  options = withoutWarningCallback(options);
  const folder = target.kind === 'folder' ? target.path : target.kind === 'file' ? dirname(target.path) : undefined;
  if (folder !== undefined) await mkdir(folder, { recursive: true });
  const total = paths.length;
  const results = new Array<FileResult | undefined>(total);
  let done = 0;
  const finish = (index: number, result: FileResult): void => {
    results[index] = result;
    done++;
    onProgress?.({ done, total, result });
  };

  const outDirOf = (index: number): string =>
    target.kind === 'folder' ? join(target.path, run.subfolders?.[index] ?? '') : (folder ?? '.');
  // The workers start loading and warming up the compressor while the outputs are planned
  // (which reads glTF inputs for their clip names).
  const jobs = Math.max(1, Math.min(Math.floor(run.jobs ?? availableParallelism()), total));
  const workers = startBatchWorkers(jobs, signal);
  workers.catch(() => undefined); // awaited below; never unhandled while the outputs are planned
  const tasks: { index: number; task: CompressFileTask }[] = [];
  try {
    const plan = await planBatchOutputs(paths, target, options.read ?? {}, outputExtension(options), run.subfolders);
    for (let index = 0; index < total; index++) {
      const failed = plan.failures.get(index);
      if (failed) finish(index, failed);
      else tasks.push({ index, task: { file: paths[index], outDir: outDirOf(index), options } });
    }
    // With several jobs the largest inputs go first, so that the batch does not end with one
    // worker on a long file while the others idle; results keep their input order.
    if (jobs > 1) await largestFirst(tasks);
    // Files are written on this thread while the next ones compress (here or in workers):
    // compression never waits on the disk.
    await runBatch(
      tasks,
      { jobs, signal, maxPendingSettles: MAX_PENDING_WRITES },
      async (index, encoded) => {
        finish(index, await writePlanned(encoded, plan.outputs[index] ?? [], target));
      },
      workers,
    );
  } catch (error) {
    if (signal?.aborted && folder !== undefined)
      for (const dir of new Set(tasks.map((t) => outDirOf(t.index)))) await removeTempFiles(dir);
    throw error;
  } finally {
    await (await workers.catch(() => undefined))?.destroy();
  }
  return results as FileResult[];
}

/** Sorts `tasks` by their input's size, largest first (ties and unreadable sizes keep their order). */
async function largestFirst(tasks: { index: number; task: CompressFileTask }[]): Promise<void> {
  const sizes = await Promise.all(
    tasks.map(({ task }) =>
      stat(task.file).then(
        (info) => info.size,
        () => 0,
      ),
    ),
  );
  const order = tasks.map((_, i) => i).sort((a, b) => sizes[b] - sizes[a] || a - b);
  const sorted = order.map((i) => tasks[i]);
  tasks.splice(0, tasks.length, ...sorted);
}

/**
 * Writes each clip of `encoded` to its planned output: atomically to a file, or to the
 * stream. A file whose clips are not the planned ones (it changed while the batch ran) or
 * whose write fails becomes a {@link FileFailed}. Never throws.
 */
async function writePlanned(
  encoded: EncodedFile | FileFailed,
  planned: readonly string[],
  target: OutputTarget,
): Promise<FileResult> {
  if (!encoded.ok) return encoded;
  const { file, warnings } = encoded;
  const fail = (failure: FileFailure): FileFailed => ({ ok: false, file, failure, warnings });
  const outputs = target.kind === 'folder' ? encoded.clips.map((clip) => clip.output) : [...planned];
  if (outputs.length !== planned.length || outputs.some((output, i) => output !== planned[i])) {
    return fail({
      file,
      code: OUTPUT_CLASH,
      message: `its clips changed while the batch ran (planned ${planned.length} outputs, now ${outputs.length}); nothing of it was written`,
    });
  }
  try {
    for (let c = 0; c < encoded.clips.length; c++) {
      const clip = encoded.clips[c];
      if (target.kind === 'stream') await writeToStream(target.stream, clip.bytes);
      else await commitStaged(await stageFile(dirname(outputs[c]), clip.bytes), outputs[c]);
    }
  } catch (error) {
    return fail(toFailure(file, error));
  }
  return {
    ok: true,
    file,
    clips: encoded.clips.map(({ stats, warnings: own }, c) => ({ output: outputs[c], stats, warnings: own })),
    warnings,
  };
}

/** Writes `bytes` to `stream` and waits until they are handed over. */
function writeToStream(stream: NodeJS.WritableStream, bytes: Uint8Array): Promise<void> {
  return new Promise((resolveWrite, reject) => {
    stream.write(bytes, (error) => (error ? reject(error) : resolveWrite()));
  });
}

/** One file of a batch for {@link encodeBatch}: its position in the caller's list and its work. */
export interface BatchTask {
  readonly index: number;
  readonly task: CompressFileTask;
}

/** How {@link encodeBatch} runs. */
export interface EncodeBatchRun {
  /** Worker threads; 1 without a `signal` encodes in this thread. */
  readonly jobs: number;
  /** Stops the batch: workers are terminated, the settles under way finish, and it rejects with the signal's reason. */
  readonly signal?: AbortSignal;
  /** Settles (writes) under way at once while the next files encode. */
  readonly maxPendingSettles: number;
}

/**
 * The batch engine under {@link compressFiles}, library.ts `compressLibrary` and the bench:
 * encodes each task (worker.ts `encodeFile`) and hands the result to `settle` on this
 * thread as it comes back, while the next files encode. One job without a signal runs in
 * this thread; otherwise a pool of `run.jobs` worker threads is started before the first
 * task is asked for (each loads and warms up the compressor meanwhile) and fed two tasks
 * per worker, so no worker waits for this thread and only a few files
 * are in flight: `tasks` may be a lazy (async) iterable that the caller fills while the
 * pool works, and nothing of a file is kept once its settle is done. A worker that dies
 * becomes an `INTERNAL_ERROR` failure of its file. Rejects with the signal's reason on
 * abort (after the settles under way finish), or with the first settle that rejects.
 */
export async function encodeBatch(
  tasks: Iterable<BatchTask> | AsyncIterable<BatchTask>,
  run: EncodeBatchRun,
  settle: (index: number, encoded: EncodedFile | FileFailed) => Promise<void>,
): Promise<void> {
  const workers = startBatchWorkers(run.jobs, run.signal);
  workers.catch(() => undefined); // awaited below; never unhandled meanwhile
  try {
    await runBatch(tasks, run, settle, workers);
  } finally {
    await (await workers.catch(() => undefined))?.destroy();
  }
}

/**
 * The pool of a batch of `jobs` (worker-pool.ts `startWorkers`), or none when one job
 * without a `signal` encodes in this thread (see {@link runBatch}).
 */
async function startBatchWorkers(jobs: number, signal: AbortSignal | undefined): Promise<WorkerPool | undefined> {
  if (jobs <= 1 && signal === undefined) return undefined;
  signal?.throwIfAborted();
  return startWorkers(jobs);
}

/** {@link encodeBatch} on `workers` (undefined: in this thread), which the caller destroys. */
async function runBatch(
  tasks: Iterable<BatchTask> | AsyncIterable<BatchTask>,
  run: EncodeBatchRun,
  settle: (index: number, encoded: EncodedFile | FileFailed) => Promise<void>,
  workers: Promise<WorkerPool | undefined>,
): Promise<void> {
  const { jobs, signal } = run;
  const settles = new WriteQueue(run.maxPendingSettles);
  // With a signal to honour, even one job runs on a worker thread: a signal handler runs
  // only when this thread's event loop turns, and one large clip encoded here would hold
  // it for seconds.
  const pool = await workers;
  const inFlight = new Set<Promise<void>>();
  // Tasks listen to a batch-owned signal: many in flight then raise no listener-leak
  // warning on the caller's.
  const batch = new AbortController();
  setMaxListeners(jobs * 2 + 1, batch.signal);
  const onAbort = (): void => batch.abort(signal?.reason);
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    for await (const { index, task } of tasks) {
      signal?.throwIfAborted();
      if (!pool) {
        settles.add(settle(index, await encodeFile(task)));
      } else {
        const running: Promise<void> = pool
          .run(task, { signal: batch.signal })
          .catch((error: unknown): FileFailed => {
            // Rejected with the signal's reason, as the in-process path is, not piscina's AbortError.
            if (signal?.aborted) throw signal.reason;
            // The worker catches every error of a task, so this is the worker itself dying.
            const message = `worker failed: ${error instanceof Error ? error.message : String(error)}`;
            return {
              ok: false,
              file: task.file,
              failure: { file: task.file, code: INTERNAL_ERROR, message },
              warnings: [],
            };
          })
          .then((encoded) => {
            settles.add(settle(index, encoded));
          })
          .finally(() => {
            inFlight.delete(running);
          });
        running.catch(() => undefined); // seen through the race or Promise.all below, never unhandled meanwhile
        inFlight.add(running);
        while (inFlight.size >= jobs * 2) await Promise.race(inFlight);
      }
      await settles.room();
    }
    await Promise.all(inFlight);
    await settles.drain();
    signal?.throwIfAborted();
  } catch (error) {
    // No settle may still be creating a temp file once the caller cleans them up.
    await Promise.allSettled(inFlight);
    await settles.settle();
    throw error;
  } finally {
    signal?.removeEventListener('abort', onAbort);
  }
}
