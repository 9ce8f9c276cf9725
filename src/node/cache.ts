/**
 * A content-addressed cache of compressed files, for incremental library builds. An input's
 * key hashes everything its outputs depend on: the input's bytes (and a glTF's external
 * buffers), its file name (the reader, the clip name and the output names come from it),
 * the settings that change the output, the `.bpk` format version and the package version.
 * An entry holds every output of one input (a glTF may give several) with its stats and
 * warnings, in one file replaced by a rename, so a lookup sees a whole entry or none, and
 * checked against its SHA-256s when read.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { basename, dirname, extname, isAbsolute, join, resolve } from 'node:path';
import { threadId } from 'node:worker_threads';

import type { CompressStats } from '../compress/index.js';
import { VERSION as FORMAT_VERSION } from '../runtime/format.js';
import { BonepressError } from '../shared/errors.js';
import { readGltfResourceSync, readInputFileSync } from './files.js';

/** First bytes of a cache entry file; the trailing digit is the entry layout's version. */
const ENTRY_MAGIC = 'BPCACHE1';
/** Largest JSON header an entry may declare: far above any real one, it bounds what a corrupt length can ask for. */
const MAX_HEADER_BYTES = 16 * 1024 * 1024;
/** Stamps taken before the folder's stamp file is saved again: a killed build loses at most these (they cost a read each). */
const STAMP_SAVE_EVERY = 500;
/** Stamps younger than this may miss a change made in the same mtime tick (coarse file systems): they are not trusted. */
const RACY_STAMP_MS = 2_000;

/** The package version, read from package.json next to dist/ (or src/), once. */
let packageVersionCache: string | undefined;

/** bonepress's package version (`0.1.0`); part of every key, so an upgrade misses every entry. */
export function packageVersion(): string {
  if (packageVersionCache === undefined) {
    // Synchronous on purpose: read once per process, before any batch starts.
    const text = readFileSync(new URL('../../package.json', import.meta.url), 'utf8');
    packageVersionCache = (JSON.parse(text) as { version: string }).version;
  }
  return packageVersionCache;
}

/** The versions every key and manifest records. */
export interface CodecVersions {
  /** bonepress's package version. */
  readonly package: string;
  /** The `.bpk` format version (runtime/format.ts `VERSION`). */
  readonly format: number;
}

/** This build's {@link CodecVersions}. */
export function codecVersions(): CodecVersions {
  return { package: packageVersion(), format: FORMAT_VERSION };
}

/**
 * `value` as JSON with object keys sorted at every level, so that equal settings give equal
 * text whatever order they were built in. `undefined` members are left out, as JSON does.
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) {
      const member = (value as Record<string, unknown>)[key];
      if (member !== undefined) out[key] = sortKeys(member);
    }
    return out;
  }
  return value;
}

/** SHA-256 of `bytes`, as 64 lowercase hex digits. */
export function sha256Hex(bytes: Uint8Array | string): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** One external resource a glTF names, and the digest of its bytes (undefined when it could not be read). */
export interface ResourceDigest {
  readonly uri: string;
  readonly sha256: string | undefined;
}

/** What a key is made of. */
export interface KeyParts {
  /** The input's file name (base name with extension). */
  readonly name: string;
  /** SHA-256 of the input's bytes. */
  readonly contentSha256: string;
  /** External glTF buffers, in the order the file lists them; empty for other inputs. */
  readonly resources: readonly ResourceDigest[];
  /** Every setting that changes the output (JSON-able; key order does not matter). */
  readonly settings: unknown;
  readonly versions: CodecVersions;
}

/** The cache key of `parts`: 64 hex digits. A pure function of them. */
export function cacheKey(parts: KeyParts): string {
  return sha256Hex(
    canonicalJson({
      key: 1,
      name: parts.name,
      content: parts.contentSha256,
      resources: parts.resources.map((r) => [r.uri, r.sha256 ?? null]),
      settings: parts.settings,
      package: parts.versions.package,
      format: parts.versions.format,
    }),
  );
}

/**
 * The relative buffer URIs a glTF (JSON, not GLB) names, in order; empty for anything else
 * or for text that is not JSON (the reader reports that). Only relative paths count: the
 * reader follows nothing else (files.ts `readClipFiles`).
 */
export function externalBufferUris(path: string, bytes: Uint8Array): string[] {
  if (extname(path).toLowerCase() !== '.gltf') return [];
  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    return [];
  }
  const buffers = (json as { buffers?: unknown }).buffers;
  if (!Array.isArray(buffers)) return [];
  const uris: string[] = [];
  for (const buffer of buffers) {
    const uri = (buffer as { uri?: unknown } | null)?.uri;
    if (typeof uri !== 'string' || /^[a-z][a-z0-9+.-]*:/i.test(uri)) continue;
    let relative: string;
    try {
      relative = decodeURIComponent(uri);
    } catch {
      continue;
    }
    if (!isAbsolute(relative)) uris.push(uri);
  }
  return uris;
}

/** Digests of `uris`, resolved next to `gltfPath`; a missing one has no digest (the reader will say so). */
function digestResources(gltfPath: string, uris: readonly string[]): ResourceDigest[] {
  const digests: ResourceDigest[] = [];
  for (const uri of uris) {
    try {
      // Inside the asset's folder and regular files only, as the reader loads them (files.ts).
      const bytes = readGltfResourceSync(gltfPath, uri);
      digests.push({ uri, sha256: bytes === undefined ? undefined : sha256Hex(bytes) });
    } catch {
      digests.push({ uri, sha256: undefined });
    }
  }
  return digests;
}

/** What identifies an unchanged file without reading it (like git's index). */
interface FileStamp {
  readonly size: number;
  readonly mtimeNs: string;
  readonly ctimeNs: string;
  readonly ino: string;
  readonly dev: string;
}

function stampOf(path: string): FileStamp {
  const s = statSync(path, { bigint: true });
  return {
    size: Number(s.size),
    mtimeNs: String(s.mtimeNs),
    ctimeNs: String(s.ctimeNs),
    ino: String(s.ino),
    dev: String(s.dev),
  };
}

function sameStamp(a: FileStamp, b: FileStamp): boolean {
  return a.size === b.size && a.mtimeNs === b.mtimeNs && a.ctimeNs === b.ctimeNs && a.ino === b.ino && a.dev === b.dev;
}

/** One output of a cached input. */
export interface CachedOutput {
  /** The output's file name (no folder): the same for every input with this key, whose file name is in the key. */
  readonly name: string;
  readonly stats: CompressStats;
  readonly bytes: Uint8Array;
}

/** Everything one input produced. */
export interface CacheEntry {
  readonly outputs: readonly CachedOutput[];
  /** The reader's warnings for the input, in order. */
  readonly warnings: readonly string[];
}

/** A cache entry's bytes are not a valid entry. */
export class CacheEntryError extends BonepressError {
  override readonly name = 'CacheEntryError';
  declare readonly code: 'BAD_CACHE_ENTRY';
  constructor(message: string) {
    super('BAD_CACHE_ENTRY', message);
  }
}

/**
 * The bytes of a cache entry: `BPCACHE1`, a u32 (little-endian) header length, the JSON
 * header (each output's name, stats, byte length and SHA-256; the warnings), then each
 * output's bytes in order. Deterministic for a given entry.
 */
export function encodeCacheEntry(entry: CacheEntry): Uint8Array {
  const header = new TextEncoder().encode(
    JSON.stringify({
      outputs: entry.outputs.map((o) => ({
        name: o.name,
        stats: o.stats,
        byteLength: o.bytes.byteLength,
        sha256: sha256Hex(o.bytes),
      })),
      warnings: entry.warnings,
    }),
  );
  const total =
    ENTRY_MAGIC.length + 4 + header.byteLength + entry.outputs.reduce((sum, o) => sum + o.bytes.byteLength, 0);
  const out = new Uint8Array(total);
  out.set(new TextEncoder().encode(ENTRY_MAGIC), 0);
  new DataView(out.buffer).setUint32(ENTRY_MAGIC.length, header.byteLength, true);
  let at = ENTRY_MAGIC.length + 4;
  out.set(header, at);
  at += header.byteLength;
  for (const o of entry.outputs) {
    out.set(o.bytes, at);
    at += o.bytes.byteLength;
  }
  return out;
}

/**
 * Reads the bytes {@link encodeCacheEntry} wrote. Every length is checked against the data
 * and every output against its SHA-256, so a damaged entry is refused rather than copied:
 * throws a {@link CacheEntryError} saying what is wrong. Outputs are views into `bytes`.
 */
export function decodeCacheEntry(bytes: Uint8Array): CacheEntry {
  const fail = (problem: string): never => {
    throw new CacheEntryError(`cache entry: ${problem}`);
  };
  const prefix = ENTRY_MAGIC.length + 4;
  if (bytes.byteLength < prefix || new TextDecoder().decode(bytes.subarray(0, ENTRY_MAGIC.length)) !== ENTRY_MAGIC)
    fail('bad magic');
  const headerLength = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getUint32(
    ENTRY_MAGIC.length,
    true,
  );
  if (headerLength > MAX_HEADER_BYTES || prefix + headerLength > bytes.byteLength)
    fail(`header length ${headerLength} runs past the end (${bytes.byteLength} bytes)`);
  let header: { outputs?: unknown; warnings?: unknown };
  try {
    header = JSON.parse(new TextDecoder().decode(bytes.subarray(prefix, prefix + headerLength))) as typeof header;
  } catch {
    return fail('header is not JSON');
  }
  if (
    !Array.isArray(header.outputs) ||
    !Array.isArray(header.warnings) ||
    !header.warnings.every((w) => typeof w === 'string')
  )
    fail('header lacks outputs or warnings');
  let at = prefix + headerLength;
  const outputs: CachedOutput[] = [];
  for (const [i, o] of (
    header.outputs as { name?: unknown; stats?: unknown; byteLength?: unknown; sha256?: unknown }[]
  ).entries()) {
    if (
      typeof o?.name !== 'string' ||
      typeof o.stats !== 'object' ||
      o.stats === null ||
      !Number.isSafeInteger(o.byteLength) ||
      typeof o.sha256 !== 'string'
    )
      fail(`output ${i} is malformed`);
    const byteLength = o.byteLength as number;
    if (byteLength < 0 || at + byteLength > bytes.byteLength) fail(`output ${i} runs past the end`);
    const data = bytes.subarray(at, at + byteLength);
    if (sha256Hex(data) !== o.sha256) fail(`output ${i} does not match its SHA-256`);
    outputs.push({ name: o.name as string, stats: o.stats as CompressStats, bytes: data });
    at += byteLength;
  }
  if (at !== bytes.byteLength) fail(`${bytes.byteLength - at} bytes after the last output`);
  return { outputs, warnings: header.warnings as string[] };
}

/** An input's key, and what computing it read. */
export interface InputKey {
  readonly key: string;
  /** True when the key came from a stamp, without reading the input. */
  readonly fromStamp: boolean;
}

/**
 * The key of the input at `path` for `settings`: reads the input (and a glTF's external
 * buffers, synchronously) and hashes it with {@link cacheKey}. Throws what reading the input throws
 * (`ENOENT`…); a missing external buffer is part of the key, not an error.
 */
export function inputKey(path: string, settings: unknown, versions: CodecVersions = codecVersions()): InputKey {
  const bytes = readInputFileSync(path);
  const resources = digestResources(path, externalBufferUris(path, bytes));
  return {
    key: cacheKey({ name: basename(path), contentSha256: sha256Hex(bytes), resources, settings, versions }),
    fromStamp: false,
  };
}

/**
 * A cache folder: `<dir>/entries/<2 hex>/<key>.bpc` holds entries, `<dir>/stamps/<hash>.json`
 * (one per input folder) remembers the content digest of inputs whose size, times and inode
 * have not changed since they were last read (so an unchanged library is not read again).
 * One file per folder rather than per input: a first build then creates one file per input
 * fewer, and each creation waits on the file system's journal. Any number of processes may share
 * a folder: every file is replaced by an atomic rename, and an entry's content is a
 * function of its key.
 *
 * Keys and lookups use synchronous file calls on purpose: a library build makes them for
 * every input before any compression starts, when nothing else waits on this thread, and
 * each asynchronous call would cost several hops through libuv's thread pool (which, on a
 * loaded machine, made an unchanged 1,000-clip build take 3.5 s instead of a fraction).
 */
export class ClipCache {
  /** The stamps of the folder of the last input keyed: one folder at a time, so memory follows the largest folder, not the library. */
  private stamps: StampFolder | undefined;
  private unsavedStamps = 0;
  /** Entry folders known to exist, so each store does not ask again. */
  private readonly entryFolders = new Set<string>();

  /** `dir` need not exist; it is created on the first store. */
  constructor(readonly dir: string) {}

  /** Where the entry of `key` lives. */
  entryPath(key: string): string {
    return join(this.dir, 'entries', key.slice(0, 2), `${key}.bpc`);
  }

  /**
   * The key of the input at `path` for `settings` ({@link inputKey}), with the input's digest
   * taken from its stamp when the file is unchanged since it was last hashed (same size,
   * times, inode), so that an unchanged library is not read again; otherwise it is read and
   * the stamp updated. A `.gltf` is always read, since its external buffers are part of its
   * key. Throws what reading the input throws (`ENOENT`…).
   */
  inputKey(path: string, settings: unknown, versions: CodecVersions = codecVersions()): InputKey {
    if (extname(path).toLowerCase() === '.gltf') return inputKey(path, settings, versions);
    const before = stampOf(path);
    const folder = this.stampFolderOf(path);
    const name = basename(path);
    const known = folder.records.get(name);
    if (
      known !== undefined &&
      sameStamp(known.stamp, before) &&
      known.recordedMs - Number(BigInt(before.mtimeNs) / 1_000_000n) > RACY_STAMP_MS
    ) {
      return {
        key: cacheKey({ name, contentSha256: known.contentSha256, resources: [], settings, versions }),
        fromStamp: true,
      };
    }
    const contentSha256 = sha256Hex(readInputFileSync(path));
    folder.records.set(name, { stamp: before, contentSha256, recordedMs: Date.now() });
    folder.changed.add(name);
    if (++this.unsavedStamps >= STAMP_SAVE_EVERY) this.saveStamps();
    return { key: cacheKey({ name, contentSha256, resources: [], settings, versions }), fromStamp: false };
  }

  /**
   * Writes the stamps taken since the last save to the cache folder, so that the next run
   * need not read those inputs again. {@link inputKey} saves every few hundred; call this
   * once more when done. A stamp that cannot be written only costs a read next time, so
   * this never throws.
   */
  saveStamps(): void {
    this.unsavedStamps = 0;
    const folder = this.stamps;
    if (folder === undefined || folder.changed.size === 0) return;
    // Merged into what is on disk now: another build sharing the cache may have saved stamps
    // of the same folder meanwhile, and only the ones taken here are newer.
    const merged = readStampFile(folder.file);
    for (const name of folder.changed) merged.set(name, folder.records.get(name)!);
    folder.changed.clear();
    try {
      writeStampFile(folder.file, merged);
    } catch {
      // Lost stamps only cost reads of their inputs next time.
    }
  }

  /** The stamps of `path`'s folder, loaded when it is not the folder of the last input (whose stamps are saved first). */
  private stampFolderOf(path: string): StampFolder {
    const dir = dirname(resolve(path));
    if (this.stamps?.dir === dir) return this.stamps;
    this.saveStamps();
    const file = join(this.dir, 'stamps', `${sha256Hex(dir)}.json`);
    this.stamps = { dir, file, records: readStampFile(file), changed: new Set() };
    return this.stamps;
  }

  /**
   * The entry of `key`, or undefined when there is none or it is damaged (a damaged entry is
   * removed, so the next store replaces it). Throws only unexpected file system errors.
   */
  lookup(key: string): CacheEntry | undefined {
    const path = this.entryPath(key);
    let data: Buffer;
    try {
      data = readFileSync(path);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
    try {
      return decodeCacheEntry(new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
    } catch (error) {
      if (!(error instanceof CacheEntryError)) throw error;
      rmSync(path, { force: true });
      return undefined;
    }
  }

  /**
   * Stores `entry` under `key`: a temp file renamed over the entry, so a reader sees the
   * whole entry or none, even when the process is killed. No fsync (one per entry would
   * double a build's disk flushes): after a power loss an entry may hold anything, and
   * {@link decodeCacheEntry}'s checks turn that into a miss.
   */
  async store(key: string, entry: CacheEntry): Promise<void> {
    const path = this.entryPath(key);
    const folder = dirname(path);
    if (!this.entryFolders.has(folder)) {
      await mkdir(folder, { recursive: true });
      this.entryFolders.add(folder);
    }
    await writeRenamed(path, encodeCacheEntry(entry));
  }
}

interface StampRecord {
  readonly stamp: FileStamp;
  readonly contentSha256: string;
  /** When the digest was taken (ms since the epoch). */
  readonly recordedMs: number;
}

/** The stamps of the inputs of one folder, by file name, and which were taken since the last save. */
interface StampFolder {
  readonly dir: string;
  /** `<cache>/stamps/<SHA-256 of the folder's absolute path>.json`. */
  readonly file: string;
  readonly records: Map<string, StampRecord>;
  readonly changed: Set<string>;
}

/** The records of a stamp file; empty when it is missing or not a stamp file (a stamp lost only costs a read). */
function readStampFile(path: string): Map<string, StampRecord> {
  const records = new Map<string, StampRecord>();
  let files: unknown;
  try {
    files = (JSON.parse(readFileSync(path, 'utf8')) as { files?: unknown }).files;
  } catch {
    return records;
  }
  if (files === null || typeof files !== 'object') return records;
  for (const [name, record] of Object.entries(files as Record<string, Partial<StampRecord> | null>)) {
    const stamp = record?.stamp as Partial<FileStamp> | undefined;
    if (
      typeof record?.contentSha256 !== 'string' ||
      typeof record.recordedMs !== 'number' ||
      typeof stamp !== 'object' ||
      stamp === null
    )
      continue;
    if (
      typeof stamp.size !== 'number' ||
      typeof stamp.mtimeNs !== 'string' ||
      typeof stamp.ctimeNs !== 'string' ||
      typeof stamp.ino !== 'string' ||
      typeof stamp.dev !== 'string'
    )
      continue;
    records.set(name, record as StampRecord);
  }
  return records;
}

/** Counts temp files of this thread, so concurrent writes never share a name. */
let tempCounter = 0;

function tempPathFor(path: string): string {
  return `${path}.${process.pid}-${threadId}-${++tempCounter}.tmp`;
}

/** Replaces a stamp file; stamps lost in a crash only cost one more read of their inputs. */
function writeStampFile(path: string, records: ReadonlyMap<string, StampRecord>): void {
  mkdirSync(dirname(path), { recursive: true });
  const temp = tempPathFor(path);
  const files = Object.fromEntries([...records].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  try {
    writeFileSync(temp, JSON.stringify({ stamps: 1, files }));
    renameSync(temp, path);
  } catch (error) {
    rmSync(temp, { force: true });
    throw error;
  }
}

/** Writes a temp file next to `path` and renames it over `path` (atomic, not flushed to disk). */
async function writeRenamed(path: string, data: Uint8Array | string): Promise<void> {
  const temp = tempPathFor(path);
  try {
    await writeFile(temp, data);
    await rename(temp, path);
  } catch (error) {
    await rm(temp, { force: true }).catch(() => undefined);
    throw error;
  }
}
