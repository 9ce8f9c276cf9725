/**
 * The file piscina loads in each worker thread. It is CommonJS on purpose: piscina first
 * tries `require()` on its worker file, and on Node 20 requiring an ES module that another
 * `import()` loads at the same time can crash the worker ("Unexpected status of a module
 * that is imported again after being required"). Requiring this file is plain CommonJS;
 * the ES module holding the task (worker.js) is only ever loaded with `import()`.
 */
import type { CompressFileTask, EncodedFile, FileFailed } from './worker.js';

// Loaded and warmed up as the worker starts, while the pool's thread still prepares the
// batch, so the first task finds the compressor compiled.
const task: Promise<(t: CompressFileTask) => Promise<EncodedFile | FileFailed>> = import('./worker.js').then((m) => {
  m.warmUp();
  return m.encodeFile;
});
task.catch(() => undefined); // a failure reaches every task through `task`; it must not end the worker here

/** The piscina task: reads and compresses one input file; the pool's thread writes it (see worker.ts). */
function encodeFileTask(t: CompressFileTask): Promise<EncodedFile | FileFailed> {
  return task.then((run) => run(t));
}

export = encodeFileTask;
