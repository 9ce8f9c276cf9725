/**
 * File access for bonepress: reading clips from disk, atomic writes, and where outputs go.
 * The only place (with pool.ts and worker.ts) that touches `node:fs`.
 */
import { open, readFile, readdir, rename, rm } from 'node:fs/promises';
import { basename, dirname, extname, isAbsolute, join, resolve } from 'node:path';
import { threadId } from 'node:worker_threads';

import type { RawClip } from '../clip/raw-clip.js';
import { readClips } from '../readers/index.js';
import type { GltfReadOptions } from '../readers/gltf.js';
import type { ReadOptions } from '../readers/options.js';

/** Extension of compressed clips. */
export const OUTPUT_EXTENSION = '.bpk';

/** Extensions made of two parts, stripped whole from an input's base name. */
const COMPOUND_EXTENSIONS = ['.acl.sjson'] as const;

/**
 * Reads the file at `path` and parses every clip in it (one for BVH, ACL SJSON and pose
 * dumps; one per animation for glTF/GLB). External glTF buffers (`"uri": "walk.bin"`) are
 * read from disk relative to `path`; absolute URIs and URIs with a scheme are not followed.
 * `path` is used as given in error messages. `options` go to the reader as they are,
 * `options.onWarning` included: it hears what the reader skipped (glTF channels outside the
 * skeleton, morph weights…). Throws the reader's `ParseError`, or a Node system error
 * (`ENOENT`, `EISDIR`…) when `path` cannot be read.
 */
export async function readClipFiles(path: string, options: ReadOptions = {}): Promise<RawClip[]> {
  const data = await readFile(path);
  const bytes = new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  const gltfOptions: GltfReadOptions = { ...options, loadResource: (uri) => readResource(path, uri) };
  return readClips(path, bytes, gltfOptions);
}

/** A glTF resource next to `gltfPath`, or undefined when it is missing or not a relative path. */
async function readResource(gltfPath: string, uri: string): Promise<Uint8Array | undefined> {
  let relative: string;
  try {
    relative = decodeURIComponent(uri);
  } catch {
    return undefined;
  }
  if (isAbsolute(relative) || /^[a-z][a-z0-9+.-]*:/i.test(relative)) return undefined;
  try {
    const data = await readFile(resolve(dirname(gltfPath), relative));
    return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/** Counts temp files within this process, so concurrent writes never share a name. */
let tempCounter = 0;

/** Temp file name for `path`: hidden, in the same folder, tagged with the process id. */
function tempPathFor(path: string): string {
  tempCounter++;
  return join(dirname(path), `.${basename(path)}.${process.pid}-${threadId}-${tempCounter}.tmp`);
}

/**
 * Writes `data` to `path` so that readers see either the old file or the whole new one:
 * it writes a temp file in the same folder, flushes it to disk (fsync), then renames it over
 * `path`. On any failure the temp file is removed and the error is rethrown with `path` as
 * its path. The parent folder must exist.
 */
export async function writeFileAtomic(path: string, data: Uint8Array | string): Promise<void> {
  const temp = tempPathFor(path);
  let handle: Awaited<ReturnType<typeof open>> | undefined;
  try {
    handle = await open(temp, 'wx');
    await handle.writeFile(data);
    await handle.sync();
    await handle.close();
    handle = undefined;
    await rename(temp, path);
  } catch (error) {
    await handle?.close().catch(() => undefined);
    await rm(temp, { force: true }).catch(() => undefined);
    // The temp name means nothing to a user: report the file they asked for.
    if (error instanceof Error && (error as NodeJS.ErrnoException).path === temp) (error as NodeJS.ErrnoException).path = path;
    throw error;
  }
  await syncFolder(dirname(path));
}

/** Flushes a folder's entries (the rename) to disk where the platform allows it. */
async function syncFolder(folder: string): Promise<void> {
  try {
    const handle = await open(folder, 'r');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch {
    // Some platforms and file systems cannot fsync a folder; the rename itself is still atomic.
  }
}

/**
 * Writes in flight while a batch goes on compressing: {@link room} waits while `limit` are
 * pending, so outputs do not pile up in memory. A failed write surfaces where the queue is
 * awaited ({@link room}, {@link drain}); give it writes that report their own failures.
 */
export class WriteQueue {
  private readonly pending = new Set<Promise<void>>();

  constructor(private readonly limit: number) {}

  /** Tracks `write` until it finishes. */
  add(write: Promise<void>): void {
    const tracked: Promise<void> = write.then(() => {
      this.pending.delete(tracked);
    });
    tracked.catch(() => undefined); // handled by room() or drain(), not unhandled meanwhile
    this.pending.add(tracked);
  }

  /** Resolves once fewer than `limit` writes are pending. */
  async room(): Promise<void> {
    while (this.pending.size >= this.limit) await Promise.race(this.pending);
  }

  /** Resolves when every write has finished; rejects with the first failure. */
  async drain(): Promise<void> {
    await Promise.all(this.pending);
  }

  /** Resolves when every write has finished or failed (before cleaning up temp files). */
  async settle(): Promise<void> {
    await Promise.allSettled(this.pending);
  }
}

/**
 * Removes the temp files that {@link writeFileAtomic} calls of process `pid` (default: this
 * one) left in `folder`, e.g. after workers were stopped mid-write. Returns how many it
 * removed; a missing folder counts as none.
 */
export async function removeTempFiles(folder: string, pid: number = process.pid): Promise<number> {
  let names: string[];
  try {
    names = await readdir(folder);
  } catch {
    return 0;
  }
  const pattern = new RegExp(`^\\..+\\.${pid}-\\d+-\\d+\\.tmp$`);
  let removed = 0;
  for (const name of names) {
    if (!pattern.test(name)) continue;
    await rm(join(folder, name), { force: true });
    removed++;
  }
  return removed;
}

/**
 * Base name of an input without its extension: `clips/walk.bvh` → `walk`,
 * `run.acl.sjson` → `run`.
 */
export function inputBaseName(path: string): string {
  const name = basename(path);
  const lower = name.toLowerCase();
  for (const ext of COMPOUND_EXTENSIONS) {
    if (lower.endsWith(ext) && lower.length > ext.length) return name.slice(0, -ext.length);
  }
  const ext = extname(name);
  return ext.length > 0 && ext.length < name.length ? name.slice(0, -ext.length) : name;
}

/**
 * A clip name made safe for a file name: runs of characters other than letters, digits,
 * `.`, `_` and `-` become `_`; leading and trailing `_`/`.` are dropped; an empty result
 * is `clip`.
 */
export function sanitizeClipName(name: string): string {
  const safe = name.replace(/[^A-Za-z0-9._-]+/g, '_').replace(/^[_.]+|[_.]+$/g, '');
  return safe.length > 0 ? safe : 'clip';
}

/**
 * Output paths for the clips read from `inputPath`: `<outDir>/<base>.bpk` for a single clip,
 * `<outDir>/<base>_<clip name>.bpk` (name sanitised; `_2`, `_3`… added to repeats) when the
 * input holds several.
 */
export function outputPathsFor(outDir: string, inputPath: string, clipNames: readonly string[]): string[] {
  const base = inputBaseName(inputPath);
  if (clipNames.length === 1) return [join(outDir, base + OUTPUT_EXTENSION)];
  const seen = new Map<string, number>();
  return clipNames.map((clipName) => {
    let stem = `${base}_${sanitizeClipName(clipName)}`;
    const count = (seen.get(stem) ?? 0) + 1;
    seen.set(stem, count);
    if (count > 1) stem += `_${count}`;
    return join(outDir, stem + OUTPUT_EXTENSION);
  });
}
