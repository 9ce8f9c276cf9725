/**
 * Incremental library builds: a cache (cache.ts) in front of the compressor and a manifest
 * (manifest.ts) behind it. Inputs whose key is in the cache are copied from it (an output
 * that already holds the right bytes is left untouched); the rest are compressed on a
 * worker pool fed a few files at a time, and each is written, then stored in the cache, as
 * it comes back. The manifest is written once, at the end: a run killed at any moment
 * leaves only complete outputs and entries behind, and the rerun finishes the rest with the
 * same bytes.
 */
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { basename, dirname, join } from 'node:path';

import { ClipCache, codecVersions, inputKey, type CacheEntry } from './cache.js';
import { OUTPUT_CLASH, toFailure } from './failure.js';
import { holdsBytes, inputBaseName, removeTempFiles, syncFolder, writeFileAtomic } from './files.js';
import {
  buildManifest,
  writeManifest,
  type Manifest,
  type ManifestInput,
  type ManifestOutput,
  type ManifestShard,
} from './manifest.js';
import { InputSet } from './outputs.js';
import { encodeBatch, type BatchTask } from './pool.js';
import { withoutWarningCallback, type CompressFilesOptions, type EncodedFile, type FileFailed } from './worker.js';
import type { CompressStats } from '../compress/index.js';
import { COMPRESS_DEFAULTS } from '../compress/options.js';
import type { ReadOptions } from '../readers/options.js';

/** Inputs keyed and looked up between two yields to the event loop (which lets a signal stop the scan). */
const SCAN_YIELD_EVERY = 64;
/** Files being written (and stored) at once while the next ones compress: several, so their fsyncs share journal commits. */
const MAX_PENDING_WRITES = 16;

/** How a library build runs. */
export interface LibraryRun {
  /** Folder for the `.bpk` files; created when missing. */
  readonly outDir: string;
  /** Per path, the folder under `outDir` (relative) its outputs go to (inputs.ts `expandInputTree`). Default: none. */
  readonly subfolders?: readonly string[];
  /** Parallel jobs for the inputs that must be compressed (pool.ts `CompressFilesRun.jobs`). */
  readonly jobs?: number;
  /** Cache folder; undefined: no cache (every input is compressed, keys are still computed for the manifest). */
  readonly cacheDir?: string;
  /** Where to write the manifest; undefined: none. Its folder is created when missing. */
  readonly manifestPath?: string;
  /** The slice these inputs are (recorded in the manifest only: the caller has sliced them). */
  readonly shard?: ManifestShard;
  /** Called after each input, in completion order; `cached` when it came from the cache. */
  readonly onProgress?: (progress: LibraryProgress) => void;
  /**
   * Stops the build: workers are terminated, this process's temp files in `outDir` are
   * removed (every output in place is complete), no manifest is written, and the promise
   * rejects with the signal's reason.
   */
  readonly signal?: AbortSignal;
}

/** Progress of a library build, after each input. */
export interface LibraryProgress {
  readonly done: number;
  readonly total: number;
  readonly file: string;
  readonly cached: boolean;
}

/** What a library build did. */
export interface LibraryResult {
  readonly manifest: Manifest;
  /** False when no manifest was asked for, or the file already held these bytes. */
  readonly manifestWritten: boolean;
  /** Inputs compressed (or tried: failures are not cached, so a bad input is tried on every run) in this run. */
  readonly compressed: number;
  /** Inputs taken from the cache. */
  readonly cached: number;
  /** Output files written (compressed, or copied from the cache because they were missing or different). */
  readonly outputsWritten: number;
}

/**
 * The settings that change outputs, with the defaults filled in so that spelling a default
 * out gives the same key as leaving it out; plus, under `admission`, the read options that
 * decide whether an input is refused at all (size and sample caps, special files, external
 * glTF buffers): a cached entry must never let through an input a fresh run would refuse.
 * Order of members does not matter (keys hash their canonical JSON).
 */
export function outputSettings(options: CompressFilesOptions): Record<string, unknown> {
  const {
    unit,
    sampleRate,
    onWarning: _callback,
    ...admission
  } = (options.read ?? {}) as ReadOptions & Record<string, unknown>;
  return {
    error: options.error ?? COMPRESS_DEFAULTS.error,
    shell: options.shell ?? COMPRESS_DEFAULTS.shell,
    shellBones: options.shellBones ?? {},
    // Only a metric or an effort other than the default, and the transport form, enter the key, so caches
    // made before these options existed stay valid.
    ...(options.metric !== undefined && options.metric !== COMPRESS_DEFAULTS.metric ? { metric: options.metric } : {}),
    ...(options.effort !== undefined && options.effort !== COMPRESS_DEFAULTS.effort ? { effort: options.effort } : {}),
    stripNames: options.stripNames ?? COMPRESS_DEFAULTS.stripNames,
    checksum: options.checksum ?? COMPRESS_DEFAULTS.checksum,
    ...(options.transport === true ? { transport: true } : {}),
    unit: unit ?? null,
    sampleRate: sampleRate ?? null,
    admission,
  };
}

/**
 * Compresses `paths` into `run.outDir` incrementally (see the module comment) and returns
 * the manifest of all of them, in input-path order. Two inputs with the same base name in
 * the same output folder would write the same outputs: the later one fails with
 * `OUTPUT_CLASH`, as in pool.ts `compressFiles`; so does an input one of whose outputs would
 * replace an input (outputs.ts `InputSet`). A bad input is a failure entry, never a
 * rejection. Per input, only its manifest entry is kept once its outputs are written.
 * Rejects when `run.signal` aborts, when a folder cannot be created, and with an
 * `OutputError` when the manifest or the cache folder is an input.
 */
export async function compressLibrary(
  paths: readonly string[],
  options: CompressFilesOptions,
  run: LibraryRun,
): Promise<LibraryResult> {
  const { outDir, signal } = run;
  signal?.throwIfAborted();
  const subfolderOf = new Map(paths.map((path, i) => [path, run.subfolders?.[i] ?? '']));
  const folderOf = (file: string): string => join(outDir, subfolderOf.get(file) ?? '');
  const folders = new Set(paths.map(folderOf));
  const inputs = await InputSet.of(paths);
  await inputs.refuse([run.manifestPath, run.cacheDir].filter((path) => path !== undefined));
  await mkdir(outDir, { recursive: true });
  for (const folder of folders) removeStaleTempFiles(folder);
  const versions = codecVersions();
  const settings = outputSettings(options);
  const cache = run.cacheDir !== undefined ? new ClipCache(run.cacheDir) : undefined;
  const entries: ManifestInput[] = [];
  const total = paths.length;
  let done = 0,
    cached = 0,
    outputsWritten = 0;
  const finish = (entry: ManifestInput, isCached: boolean): void => {
    entries.push(entry);
    done++;
    run.onProgress?.({ done, total, file: entry.input, cached: isCached });
  };

  // Stage 1, clashes: decided on names alone, in input order, as pool.ts `compressFiles` did.
  const claimedBy = new Map<string, string>();
  const candidates: string[] = [];
  for (const file of paths) {
    const base = join(subfolderOf.get(file) ?? '', inputBaseName(file));
    const owner = claimedBy.get(base);
    if (owner !== undefined) {
      finish(
        { input: file, failure: { code: OUTPUT_CLASH, message: `writes the same output (${base}) as ${owner}` } },
        false,
      );
      continue;
    }
    claimedBy.set(base, file);
    candidates.push(file);
  }
  claimedBy.clear();

  // Stages 2 and 3, in input-path order (the order changes no byte, and a resumed run picks
  // up where the killed one stopped): each input's key is computed and looked up (synchronous
  // file calls: cache.ts says why) while the pool encodes the misses before it; a hit's
  // outputs are checked (and copied when they differ) here, a miss is compressed, then
  // written and stored as it comes back.
  candidates.sort(compareCodeUnits);
  const keys = new Map<string, string>();
  let compressed = 0;
  async function* misses(): AsyncGenerator<BatchTask> {
    for (const [n, file] of candidates.entries()) {
      // Now and then a turn of the event loop, so that a signal can stop a scan of hits.
      if (n % SCAN_YIELD_EVERY === 0) await new Promise((resolve) => setImmediate(resolve));
      signal?.throwIfAborted();
      let key: string;
      try {
        key = (cache ? cache.inputKey(file, settings, versions) : inputKey(file, settings, versions)).key;
      } catch (error) {
        const failure = toFailure(file, error);
        finish({ input: file, failure: { code: failure.code, message: failure.message } }, false);
        continue;
      }
      const entry = cache?.lookup(key);
      if (entry === undefined) {
        keys.set(file, key);
        compressed++;
        yield { index: n, task: { file, outDir: folderOf(file), options: plainOptions } };
        continue;
      }
      try {
        outputsWritten += await placeOutputs(folderOf(file), entry.outputs, inputs);
      } catch (error) {
        const failure = toFailure(file, error);
        finish(
          { input: file, key, failure: { code: failure.code, message: failure.message }, warnings: entry.warnings },
          false,
        );
        continue;
      }
      cached++;
      finish(entryFromCache(file, key, folderOf(file), entry), true);
    }
  }
  const settle = async (_index: number, encoded: EncodedFile | FileFailed): Promise<void> => {
    const key = keys.get(encoded.file);
    keys.delete(encoded.file);
    if (!encoded.ok) {
      finish(
        {
          input: encoded.file,
          key,
          failure: { code: encoded.failure.code, message: encoded.failure.message },
          warnings: encoded.warnings,
        },
        false,
      );
      return;
    }
    const outputs = encoded.clips.map((clip) => ({
      name: basename(clip.output),
      stats: clip.stats,
      bytes: clip.bytes,
    }));
    try {
      const written = await placeOutputs(folderOf(encoded.file), outputs, inputs);
      outputsWritten += written;
      // After the outputs: an entry never stands for outputs that are not in place.
      if (cache !== undefined && key !== undefined) await cache.store(key, { outputs, warnings: encoded.warnings });
    } catch (error) {
      const failure = toFailure(encoded.file, error);
      finish(
        {
          input: encoded.file,
          key,
          failure: { code: failure.code, message: failure.message },
          warnings: encoded.warnings,
        },
        false,
      );
      return;
    }
    finish(
      {
        input: encoded.file,
        key,
        outputs: outputs.map((o) => manifestOutput(join(folderOf(encoded.file), o.name), o.stats)),
        warnings: encoded.warnings,
      },
      false,
    );
  };
  const plainOptions = withoutWarningCallback(options);
  const jobs = Math.max(1, Math.min(Math.floor(run.jobs ?? availableParallelism()), candidates.length));
  try {
    await encodeBatch(misses(), { jobs, signal, maxPendingSettles: MAX_PENDING_WRITES }, settle);
  } catch (error) {
    if (signal?.aborted) for (const folder of folders) await removeTempFiles(folder);
    throw error;
  } finally {
    cache?.saveStamps();
  }
  // Once for all the renames above (placeOutputs), before the manifest may name them.
  if (outputsWritten > 0) for (const folder of folders) await syncFolder(folder);

  const manifest = buildManifest(entries, versions, settings, run.shard);
  let manifestWritten = false;
  if (run.manifestPath !== undefined) {
    signal?.throwIfAborted();
    await mkdir(dirname(run.manifestPath), { recursive: true });
    manifestWritten = await writeManifest(run.manifestPath, manifest);
  }
  return { manifest, manifestWritten, compressed, cached, outputsWritten };
}

/**
 * Writes each output whose file is missing or holds other bytes, atomically (files.ts
 * `writeFileAtomic`), creating `outDir` when missing; an output that already holds the right
 * bytes is not touched (it is compared synchronously: see stage 2). The folder is not
 * flushed here: the build does that once, before its manifest. Returns how many it wrote.
 * Throws `OutputError` before writing anything when an output would replace one of `inputs`.
 */
async function placeOutputs(
  outDir: string,
  outputs: readonly { name: string; bytes: Uint8Array }[],
  inputs: InputSet,
): Promise<number> {
  const paths = outputs.map((output) => join(outDir, output.name));
  await inputs.refuse(paths);
  if (!existsSync(outDir)) await mkdir(outDir, { recursive: true });
  let written = 0;
  for (const [o, output] of outputs.entries()) {
    const path = paths[o];
    if (holdsBytes(path, output.bytes)) continue;
    await writeFileAtomic(path, output.bytes, { syncFolder: false });
    written++;
  }
  return written;
}

/**
 * Removes the temp files (files.ts `writeFileAtomic`) that processes no longer running left
 * in `folder`: a build killed while writing leaves one, and its rerun should leave the
 * folder as an uninterrupted build does. A temp file of a live process is left alone.
 */
function removeStaleTempFiles(folder: string): void {
  let names: string[];
  try {
    names = readdirSync(folder);
  } catch {
    return;
  }
  for (const name of names) {
    const match = /^\..+\.(\d+)-\d+-\d+\.tmp$/.exec(name);
    if (match === null || isRunning(Number(match[1]))) continue;
    rmSync(join(folder, name), { force: true });
  }
}

/** True unless no process `pid` exists (a process of another user counts as running). */
function isRunning(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}

function entryFromCache(file: string, key: string, outDir: string, entry: CacheEntry): ManifestInput {
  return {
    input: file,
    key,
    outputs: entry.outputs.map((o) => manifestOutput(join(outDir, o.name), o.stats)),
    warnings: entry.warnings,
  };
}

function manifestOutput(path: string, stats: CompressStats): ManifestOutput {
  return {
    path,
    clip: stats.name,
    boneCount: stats.boneCount,
    sampleCount: stats.sampleCount,
    rawBytes: stats.rawBytes,
    bytes: stats.compressedBytes,
    ratio: stats.ratio,
    maxError: stats.maxError,
    threshold: stats.threshold,
    unit: stats.unit,
  };
}

const compareCodeUnits = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
