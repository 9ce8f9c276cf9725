/**
 * Compression off the main thread: reads a dropped file with the library's readers and
 * compresses one of its clips with the library's compress(), as a user's tool would.
 */
import { compress, readClips, resolveOptions, type RawClip } from 'bonepress';

import type { WorkerRequest, WorkerResponse } from './protocol.js';

let clips: RawClip[] = [];

function reply(message: WorkerResponse, transfer: Transferable[] = []): void {
  // Typed against the DOM lib (the viewer's tsconfig has no WebWorker lib); in a worker,
  // postMessage(message, { transfer }) is the StructuredSerializeOptions overload.
  self.postMessage(message, { transfer });
}

function describe(e: unknown): string {
  if (e instanceof Error) return e.name && e.name !== 'Error' ? `${e.name}: ${e.message}` : e.message;
  return String(e);
}

async function handle(request: WorkerRequest): Promise<void> {
  if (request.type === 'load') {
    try {
      clips = await readClips(request.fileName, new Uint8Array(request.bytes));
      if (clips.length === 0) throw new Error(`${request.fileName} holds no animation`);
      reply({
        type: 'loaded',
        id: request.id,
        fileName: request.fileName,
        clips: clips.map((c) => ({
          name: c.name,
          boneCount: c.skeleton.boneNames.length,
          sampleCount: c.sampleCount,
          sampleRate: c.sampleRate,
          unit: c.unit,
        })),
      });
    } catch (e) {
      clips = [];
      reply({ type: 'failed', id: request.id, stage: 'load', message: describe(e) });
    }
    return;
  }
  try {
    const clip = clips[request.clipIndex];
    if (!clip) throw new Error(`no clip ${request.clipIndex} loaded`);
    const options = { error: request.error, shell: request.shell };
    const { shellDistances } = resolveOptions(clip, options);
    const { bytes, stats } = compress(clip, options);
    reply({ type: 'compressed', id: request.id, clipIndex: request.clipIndex, clip, bpk: bytes, stats, shellDistances }, [bytes.buffer]);
  } catch (e) {
    reply({ type: 'failed', id: request.id, stage: 'compress', message: describe(e) });
  }
}

// Requests run one at a time, in order.
let queue: Promise<void> = Promise.resolve();
self.addEventListener('message', (event: MessageEvent<WorkerRequest>) => {
  queue = queue.then(() => handle(event.data));
});
