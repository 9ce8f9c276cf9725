/**
 * File access for bonepress: reading clips from disk, atomic writes, and where outputs go.
 * The only place (with pool.ts and worker.ts) that touches `node:fs`.
 */
import { closeSync, constants, fstatSync, openSync, readdirSync, readFileSync, readSync, realpathSync } from 'node:fs';
import { open, readdir, rename, rm, type FileHandle } from 'node:fs/promises';
import { basename, dirname, extname, isAbsolute, join, resolve, sep } from 'node:path';
import { threadId } from 'node:worker_threads';

import type { RawClip } from '../clip/raw-clip.js';
import { ParseError, PARSE_ERROR } from '../readers/errors.js';
import { readClips } from '../readers/index.js';
import type { GltfReadOptions } from '../readers/gltf.js';
import { formatBytes, type ReadOptions } from '../readers/options.js';

/** How input files are read from disk, on top of the readers' {@link ReadOptions}. */
export interface ReadFileOptions extends ReadOptions {
  /**
   * Largest file read, in bytes (a glTF's external buffers count one by one); a larger one
   * is refused with code `LIMIT` before it is read. Default
   * {@link READ_FILE_DEFAULTS}.maxInputBytes.
   */
  maxInputBytes?: number;
  /**
   * Also read devices, FIFOs and sockets (`/dev/stdin`, a pipe), up to `maxInputBytes`; such
   * a read waits for data. Default false: only regular files (and symlinks to them) are
   * read, and anything else is refused at once, so `/dev/zero` or a FIFO never hangs or
   * fills memory.
   */
  allowSpecialFiles?: boolean;
  /**
   * Let glTF buffer URIs name files outside the asset's folder (absolute paths, `..` past
   * the folder, symlinks leading out of it). Default false: such buffers are refused.
   */
  allowExternalResources?: boolean;
}

/** Defaults of {@link ReadFileOptions}. */
export const READ_FILE_DEFAULTS = {
  /** 512 MiB: more than any real clip's source, and about the longest string a text reader can decode. */
  maxInputBytes: 512 * 2 ** 20,
  allowSpecialFiles: false,
  allowExternalResources: false,
} as const;

/** Extension of compressed clips (the runtime form, docs/format.md). */
export const OUTPUT_EXTENSION = '.bpk';
/** Extension of compressed clips in the transport form (docs/transport.md). */
export const TRANSPORT_OUTPUT_EXTENSION = '.bpt';

/** Extensions made of two parts, stripped whole from an input's base name. */
const COMPOUND_EXTENSIONS = ['.acl.sjson'] as const;

/**
 * Reads the file at `path` and parses every clip in it (one for BVH, ACL SJSON and pose
 * dumps; one per animation for glTF/GLB). The file is read with {@link readInputFile}
 * (regular files only unless `options.allowSpecialFiles`, at most `options.maxInputBytes`).
 * External glTF buffers (`"uri": "walk.bin"`) are read from the `.gltf`'s folder after
 * percent-decoding; URIs with a scheme are never followed, and absolute paths or paths
 * leading out of that folder only with `options.allowExternalResources`. `path` is used as
 * given in error messages. The other `options` go to the reader as they are,
 * `options.onWarning` included: it hears what the reader skipped (glTF channels outside the
 * skeleton, morph weights…). Throws the reader's `ParseError` (also for a refused input or
 * buffer), or a Node system error (`ENOENT`, `EISDIR`…) when `path` cannot be read.
 */
export async function readClipFiles(path: string, options: ReadFileOptions = {}): Promise<RawClip[]> {
  return clipsOfFile(path, await readInputFile(path, options), options);
}

/**
 * {@link readClipFiles} reading the input with synchronous calls ({@link readInputFileSync}):
 * for batch encoders (worker.ts `encodeFile`), which compress synchronously right after
 * anyway, so blocking holds up nothing, while each asynchronous call would be a round trip
 * through libuv's thread pool.
 */
export function readClipFilesBlocking(path: string, options: ReadFileOptions = {}): Promise<RawClip[]> {
  return clipsOfFile(path, readInputFileSync(path, options), options);
}

function clipsOfFile(path: string, bytes: Uint8Array, options: ReadFileOptions): Promise<RawClip[]> {
  const gltfOptions: GltfReadOptions = { ...options, loadResource: (uri) => readResource(path, uri, options) };
  return readClips(path, bytes, gltfOptions);
}

/** True for a glTF asset's path (`.glb` or `.gltf`, any case): the inputs that hold keyframes and may hold several clips. */
export function isGltfPath(path: string): boolean {
  return /\.(glb|gltf)$/i.test(path);
}

/** Chunk size of reads from files whose size is not known up front (devices, pipes, /proc). */
const READ_CHUNK_BYTES = 1 << 16;

/**
 * The bytes of the input file at `path`, read with bounded time and memory:
 * - only a regular file (or a symlink to one) is read, unless `options.allowSpecialFiles`;
 *   the file is opened non-blocking and checked before any read, so a FIFO never blocks;
 * - a file over `options.maxInputBytes` (default {@link READ_FILE_DEFAULTS}) is refused
 *   before it is read, and a file that grows while being read stops at the cap;
 * - a name Node cannot open because it was not valid UTF-8 (a byte it shows as U+FFFD) is
 *   found in its folder by that decoding when exactly one entry matches.
 *
 * Throws a `ParseError` naming `path` (code `UNSUPPORTED` for a device, FIFO or socket,
 * `LIMIT` for a file over the cap), or the Node system error (`ENOENT`, `EISDIR`, `EACCES`…).
 */
export async function readInputFile(path: string, options: ReadFileOptions = {}): Promise<Uint8Array> {
  const maxBytes = options.maxInputBytes ?? READ_FILE_DEFAULTS.maxInputBytes;
  const handle = await openInput(path);
  try {
    const info = await handle.stat();
    if (info.isDirectory())
      throw Object.assign(new Error(`EISDIR: illegal operation on a directory, read '${path}'`), {
        code: 'EISDIR',
        syscall: 'read',
        path,
      });
    if (!info.isFile()) {
      if (!(options.allowSpecialFiles ?? READ_FILE_DEFAULTS.allowSpecialFiles)) {
        throw new ParseError(
          PARSE_ERROR.UNSUPPORTED,
          `is ${fileKind(info)}, not a regular file; bonepress reads only regular files`,
          path,
        );
      }
      // Asked for: read it blocking, as a stream of unknown length, up to the cap.
      const blocking = await open(path, constants.O_RDONLY);
      try {
        return await readCapped(blocking, path, maxBytes, READ_CHUNK_BYTES);
      } finally {
        await blocking.close();
      }
    }
    if (info.size > maxBytes) {
      throw new ParseError(
        PARSE_ERROR.LIMIT,
        `is ${formatBytes(info.size)}, over the input limit of ${formatBytes(maxBytes)} (maxInputBytes)`,
        path,
      );
    }
    // Files in /proc and the like say 0 bytes and still hold data: read those in chunks.
    return await readCapped(handle, path, maxBytes, info.size > 0 ? info.size : READ_CHUNK_BYTES);
  } finally {
    await handle.close();
  }
}

/** Opens `path` read-only and non-blocking (a FIFO opens at once and never blocks a read). */
async function openInput(path: string): Promise<FileHandle> {
  const flags = constants.O_RDONLY | constants.O_NONBLOCK;
  try {
    return await open(path, flags);
  } catch (error) {
    // Node decodes command-line arguments as UTF-8 and shows each bad byte as U+FFFD, so the
    // name as given no longer names the file. Its folder, listed as bytes, still does.
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT' || !path.includes('\uFFFD')) throw error;
    const raw = await findRawName(path);
    if (raw === undefined) throw notUtf8Error(path);
    return open(raw, flags);
  }
}

/** The one entry of `path`'s folder whose name, decoded as UTF-8, reads as `path`'s base name; as raw bytes. */
async function findRawName(path: string): Promise<Buffer | undefined> {
  let entries: Buffer[];
  try {
    entries = await readdir(dirname(path), { encoding: 'buffer' });
  } catch {
    return undefined;
  }
  return rawNameAmong(path, entries);
}

/** {@link findRawName}'s match among the folder's `entries`. */
function rawNameAmong(path: string, entries: readonly Buffer[]): Buffer | undefined {
  const folder = dirname(path);
  const name = basename(path);
  const matches = entries.filter((entry) => entry.toString('utf8') === name);
  if (matches.length !== 1) return undefined;
  const prefix = Buffer.from(folder === '.' && !path.startsWith('.') ? '' : folder + sep, 'utf8');
  return Buffer.concat([prefix, matches[0]]);
}

/** The error for a U+FFFD name that matches no entry (see {@link openInput}). */
function notUtf8Error(path: string): ParseError {
  return new ParseError(
    PARSE_ERROR.UNSUPPORTED,
    'no such file (the name holds U+FFFD, which is how Node shows a byte that is not UTF-8, and no entry in its folder reads like it)',
    path,
  );
}

/** {@link openInput} with synchronous calls: a file descriptor. */
function openInputSync(path: string): number {
  const flags = constants.O_RDONLY | constants.O_NONBLOCK;
  try {
    return openSync(path, flags);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT' || !path.includes('\uFFFD')) throw error;
    let entries: Buffer[] = [];
    try {
      entries = readdirSync(dirname(path), { encoding: 'buffer' });
    } catch {
      // No folder to search: the name stays unknown.
    }
    const raw = rawNameAmong(path, entries);
    if (raw === undefined) throw notUtf8Error(path);
    return openSync(raw, flags);
  }
}

/** Reads `handle` to its end, at most `maxBytes`; more is a `LIMIT` ParseError for `path`. */
async function readCapped(handle: FileHandle, path: string, maxBytes: number, sizeHint: number): Promise<Uint8Array> {
  const chunks: Buffer[] = [];
  let total = 0;
  for (;;) {
    // One byte past the cap tells a file at the cap from a larger one.
    const room = maxBytes + 1 - total;
    const chunk = Buffer.allocUnsafe(
      Math.max(1, Math.min(room, chunks.length === 0 ? sizeHint + 1 : READ_CHUNK_BYTES)),
    );
    const { bytesRead } = await readSome(handle, chunk);
    if (bytesRead === 0) break;
    total += bytesRead;
    if (total > maxBytes) {
      throw new ParseError(
        PARSE_ERROR.LIMIT,
        `holds more than the input limit of ${formatBytes(maxBytes)} (maxInputBytes)`,
        path,
      );
    }
    chunks.push(bytesRead === chunk.length ? chunk : chunk.subarray(0, bytesRead));
  }
  const data = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, total);
  return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
}

/** One read; a non-blocking descriptor with nothing to read yet (EAGAIN) waits a little and retries. */
async function readSome(handle: FileHandle, into: Buffer): Promise<{ bytesRead: number }> {
  for (;;) {
    try {
      return await handle.read(into, 0, into.length, null);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EAGAIN') throw error;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }
}

/** What a non-regular file is, for a message. */
function fileKind(info: {
  isCharacterDevice(): boolean;
  isBlockDevice(): boolean;
  isFIFO(): boolean;
  isSocket(): boolean;
}): string {
  if (info.isCharacterDevice()) return 'a character device';
  if (info.isBlockDevice()) return 'a block device';
  if (info.isFIFO()) return 'a FIFO (named pipe)';
  if (info.isSocket()) return 'a socket';
  return 'not a regular file';
}

/**
 * The file a glTF buffer URI of the asset at `gltfPath` names: `uri` percent-decoded and
 * resolved against the asset's folder; undefined when no such file exists. Throws an Error
 * saying why when the URI has a scheme or holds a NUL, or (without
 * `options.allowExternalResources`) is absolute or leads out of the folder, also through a
 * symlink. Messages name the URI's problem, never anything read from the file. Synchronous
 * (path checks only), so the cache's input keys can use it too.
 */
export function resolveGltfResource(gltfPath: string, uri: string, options: ReadFileOptions = {}): string | undefined {
  let relative: string;
  try {
    relative = decodeURIComponent(uri);
  } catch {
    throw new Error('the URI is not valid percent-encoding');
  }
  if (/^[a-z][a-z0-9+.-]*:/i.test(relative))
    throw new Error('URIs with a scheme are not read; only files next to the asset');
  if (relative.includes('\0')) throw new Error('the URI holds a NUL character');
  const external = options.allowExternalResources ?? READ_FILE_DEFAULTS.allowExternalResources;
  const folder = dirname(resolve(gltfPath));
  const target = resolve(folder, relative);
  if (!external && (isAbsolute(relative) || !isInside(target, folder))) {
    throw new Error("the file is outside the asset's folder (allowExternalResources reads it)");
  }
  let real: string;
  try {
    real = realpathSync(target);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new Error(`cannot read it (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  if (!external && !isInside(real, realpathSync(folder))) {
    throw new Error("the file is a link leading outside the asset's folder (allowExternalResources reads it)");
  }
  return target;
}

/**
 * A glTF resource of the asset at `gltfPath` ({@link resolveGltfResource}), read with
 * {@link readInputFile}; undefined when it does not exist. Throws an Error saying why it is
 * refused or unreadable, never quoting its bytes.
 */
async function readResource(gltfPath: string, uri: string, options: ReadFileOptions): Promise<Uint8Array | undefined> {
  const target = resolveGltfResource(gltfPath, uri, options);
  if (target === undefined) return undefined;
  try {
    return await readInputFile(target, options);
  } catch (error) {
    return resourceFailure(error);
  }
}

/** A resource read's failure as {@link readResource} reports it: undefined when missing, else an Error. */
function resourceFailure(error: unknown): undefined {
  if (error instanceof ParseError) throw new Error(error.problem);
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') return undefined;
  throw new Error(`cannot read it (${code ?? 'error'})`);
}

/**
 * {@link readInputFile} for callers that must not yield (the cache keys a whole library
 * before compressing): the same checks, refusals and cap, with synchronous calls. A FIFO is
 * refused before any read, so it never blocks this thread.
 */
export function readInputFileSync(path: string, options: ReadFileOptions = {}): Uint8Array {
  const maxBytes = options.maxInputBytes ?? READ_FILE_DEFAULTS.maxInputBytes;
  let fd = openInputSync(path);
  try {
    const info = fstatSync(fd);
    if (info.isDirectory())
      throw Object.assign(new Error(`EISDIR: illegal operation on a directory, read '${path}'`), {
        code: 'EISDIR',
        syscall: 'read',
        path,
      });
    let sizeHint = info.size > 0 ? info.size : READ_CHUNK_BYTES;
    if (!info.isFile()) {
      if (!(options.allowSpecialFiles ?? READ_FILE_DEFAULTS.allowSpecialFiles)) {
        throw new ParseError(
          PARSE_ERROR.UNSUPPORTED,
          `is ${fileKind(info)}, not a regular file; bonepress reads only regular files`,
          path,
        );
      }
      closeSync(fd);
      fd = -1;
      fd = openSync(path, constants.O_RDONLY);
      sizeHint = READ_CHUNK_BYTES;
    } else if (info.size > maxBytes) {
      throw new ParseError(
        PARSE_ERROR.LIMIT,
        `is ${formatBytes(info.size)}, over the input limit of ${formatBytes(maxBytes)} (maxInputBytes)`,
        path,
      );
    }
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      const room = maxBytes + 1 - total;
      const chunk = Buffer.allocUnsafe(
        Math.max(1, Math.min(room, chunks.length === 0 ? sizeHint + 1 : READ_CHUNK_BYTES)),
      );
      const bytesRead = readSync(fd, chunk, 0, chunk.length, null);
      if (bytesRead === 0) break;
      total += bytesRead;
      if (total > maxBytes)
        throw new ParseError(
          PARSE_ERROR.LIMIT,
          `holds more than the input limit of ${formatBytes(maxBytes)} (maxInputBytes)`,
          path,
        );
      chunks.push(bytesRead === chunk.length ? chunk : chunk.subarray(0, bytesRead));
    }
    const data = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, total);
    return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  } finally {
    if (fd >= 0) closeSync(fd);
  }
}

/**
 * A glTF resource read synchronously ({@link resolveGltfResource}, {@link readInputFileSync});
 * undefined when it does not exist. Throws an Error saying why it is refused or unreadable.
 */
export function readGltfResourceSync(
  gltfPath: string,
  uri: string,
  options: ReadFileOptions = {},
): Uint8Array | undefined {
  const target = resolveGltfResource(gltfPath, uri, options);
  if (target === undefined) return undefined;
  try {
    return readInputFileSync(target, options);
  } catch (error) {
    return resourceFailure(error);
  }
}

/** True when `path` lies strictly inside `folder` (both absolute and normalised). */
function isInside(path: string, folder: string): boolean {
  const prefix = folder.endsWith(sep) ? folder : folder + sep;
  return path.startsWith(prefix);
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
 * `path`, and flushes the folder too unless `options.syncFolder` is false (the caller then
 * calls {@link syncFolder} once after a batch of writes). On any failure the temp file is
 * removed and the error is rethrown with `path` as its path. The parent folder must exist.
 */
export async function writeFileAtomic(
  path: string,
  data: Uint8Array | string,
  options: { readonly syncFolder?: boolean } = {},
): Promise<void> {
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
    if (error instanceof Error && (error as NodeJS.ErrnoException).path === temp)
      (error as NodeJS.ErrnoException).path = path;
    throw error;
  }
  if (options.syncFolder !== false) await syncFolder(dirname(path));
}

/** True when the file at `path` holds exactly `bytes` (false when it is missing or unreadable). */
export function holdsBytes(path: string, bytes: Uint8Array): boolean {
  try {
    return Buffer.compare(readFileSync(path), bytes) === 0;
  } catch {
    return false;
  }
}

/** Flushes a folder's entries (a rename) to disk where the platform allows it. */
export async function syncFolder(folder: string): Promise<void> {
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
