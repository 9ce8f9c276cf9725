/**
 * The file piscina loads in each worker thread. It is CommonJS on purpose: piscina first
 * tries `require()` on its worker file, and on Node 20 requiring an ES module that another
 * `import()` loads at the same time can crash the worker ("Unexpected status of a module
 * that is imported again after being required"). Requiring this file is plain CommonJS;
 * the ES module holding the task (worker.js) is only ever loaded with `import()`.
 */
import type { CompressFileTask, EncodedFile, FileFailed } from './worker.js';

type Task = (t: CompressFileTask) => Promise<EncodedFile | FileFailed>;

// The export is a promise of the task, which piscina awaits before it reports the worker
// ready (its documented way to delay a worker's readiness): the compressor loads and warms
// up as the worker starts, while the pool's thread still prepares the batch. A task exported
// at once would leave that loading to an import piscina's idle worker does not run: it
// blocks in Atomics.wait until the first task comes. A failure to load reaches every task
// rather than ending the worker.
const task: Promise<Task> = import('./worker.js')
  .then((m): Task => {
    m.warmUp();
    return m.encodeFile;
  })
  .catch(
    (error: unknown): Task =>
      () =>
        Promise.reject(error),
  );

export = task;
