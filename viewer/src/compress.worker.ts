/**
 * Compression off the main thread: reads a dropped file with the library's readers and
 * compresses one of its clips with the library's compress(), as a user's tool would.
 */
import { WebIO } from '@gltf-transform/core';
import { compress, readClips, resolveOptions, type RawClip } from 'bonepress';
import { BonepressAnimationCompression, compressDocument } from 'bonepress/gltf-transform';

import type { WorkerRequest, WorkerResponse } from './protocol.js';

let clips: RawClip[] = [];
/** The last file loaded, for compress-asset. */
let file: { name: string; bytes: Uint8Array } | undefined;

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
  if (request.type === 'compress-asset') {
    try {
      if (!file || !/\.(glb|gltf)$/i.test(file.name)) throw new Error('no glTF asset loaded');
      const io = new WebIO().registerExtensions([BonepressAnimationCompression]);
      const doc = file.name.toLowerCase().endsWith('.glb')
        ? await io.readBinary(file.bytes)
        : await io.readJSON({ json: JSON.parse(new TextDecoder().decode(file.bytes)), resources: {} });
      await compressDocument(doc, { error: request.error, shell: request.shell, file: file.name });
      const glb = await io.writeBinary(doc);
      reply({ type: 'asset', id: request.id, glb }, [glb.buffer]);
    } catch (e) {
      reply({ type: 'failed', id: request.id, stage: 'compress', message: describe(e) });
    }
    return;
  }
  if (request.type === 'load') {
    try {
      file = { name: request.fileName, bytes: new Uint8Array(request.bytes) };
      clips = await readClips(request.fileName, file.bytes);
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
      file = undefined;
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
    reply(
      { type: 'compressed', id: request.id, clipIndex: request.clipIndex, clip, bpk: bytes, stats, shellDistances },
      [bytes.buffer],
    );
  } catch (e) {
    reply({ type: 'failed', id: request.id, stage: 'compress', message: describe(e) });
  }
}

// Requests run one at a time, in order.
let queue: Promise<void> = Promise.resolve();
self.addEventListener('message', (event: MessageEvent<WorkerRequest>) => {
  queue = queue.then(() => handle(event.data));
});
