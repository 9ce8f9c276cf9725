/**
 * Where a batch's outputs go, planned for the whole batch before anything is written: what
 * `-o` names (a folder, a file or a stream), output names for the clips of each input,
 * clashes between outputs (two clips, one path), outputs that would replace an input, and
 * output names that are symbolic links. Outputs are staged as temp files while the batch
 * runs and renamed into place only once the plan holds.
 */
import { lstat, mkdir, open, realpath, rename, rm, stat, type FileHandle } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { threadId } from 'node:worker_threads';

import { OUTPUT_CLASH, OUTPUT_LINK, OutputError, toFailure, type FileFailure } from './failure.js';
import {
  OUTPUT_EXTENSION,
  inputBaseName,
  isGltfPath,
  readClipFiles,
  sanitizeClipName,
  syncFolder,
  type ReadFileOptions,
} from './files.js';
import type { FileFailed } from './worker.js';

/**
 * What an output option (`-o`) names: a folder that receives one file per clip, one file,
 * or a stream (`-`, standard output).
 */
export type OutputTarget =
  | { readonly kind: 'folder'; readonly path: string }
  | { readonly kind: 'file'; readonly path: string }
  | { readonly kind: 'stream'; readonly stream: NodeJS.WritableStream };

/**
 * What `out` names, the same rule for every command: `-` is `stream` (the caller supplies
 * it, usually standard output); a path ending in a separator or naming an existing folder is
 * a folder; a path ending in `extension` (case-insensitive, e.g. `.bpk`, `.json`) is a file;
 * anything else is a folder (created when missing).
 */
export async function resolveOutputTarget(
  out: string,
  extension: string,
  stream: NodeJS.WritableStream,
): Promise<OutputTarget> {
  if (out === '-') return { kind: 'stream', stream };
  if (/[\\/]$/.test(out)) return { kind: 'folder', path: out };
  const info = await stat(out).catch(() => undefined);
  if (info?.isDirectory()) return { kind: 'folder', path: out };
  if (out.toLowerCase().endsWith(extension.toLowerCase()) && out.length > extension.length)
    return { kind: 'file', path: out };
  return { kind: 'folder', path: out };
}

/**
 * Output file names for the clips read from `inputPath`, in clip order: `<base>.bpk` for a
 * single clip, `<base>_<clip name>.bpk` (name sanitised) per clip when it holds several. A
 * name already taken in this file gets the first free `_2`, `_3`… suffix, so clips named
 * `b`, `b_2`, `b` become `<base>_b`, `<base>_b_2`, `<base>_b_3`.
 */
export function clipOutputNames(
  inputPath: string,
  clipNames: readonly string[],
  extension: string = OUTPUT_EXTENSION,
): string[] {
  const base = inputBaseName(inputPath);
  if (clipNames.length === 1) return [base + extension];
  const taken = new Set<string>();
  return clipNames.map((clipName) => {
    const stem = `${base}_${sanitizeClipName(clipName)}`;
    let name = stem;
    for (let n = 2; taken.has(name.toLowerCase()); n++) name = `${stem}_${n}`;
    taken.add(name.toLowerCase());
    return name + extension;
  });
}

/** {@link clipOutputNames} as paths in `outDir`. */
export function outputPathsFor(
  outDir: string,
  inputPath: string,
  clipNames: readonly string[],
  extension: string = OUTPUT_EXTENSION,
): string[] {
  return clipOutputNames(inputPath, clipNames, extension).map((name) => join(outDir, name));
}

/** The outputs one input asks for, before planning. */
export interface OutputRequest {
  readonly file: string;
  /** Paths of its outputs, one per clip. */
  readonly outputs: readonly string[];
}

/** Folders already probed by {@link isCaseInsensitive}, by real path. */
const caseInsensitiveFolders = new Map<string, boolean>();

/**
 * True when names in the existing folder `folder` (a real path) ignore case: the same path
 * with its letters' case swapped names the same folder. A path without letters says
 * nothing; then the platform's default decides (macOS and Windows ignore case).
 */
async function isCaseInsensitive(folder: string): Promise<boolean> {
  const known = caseInsensitiveFolders.get(folder);
  if (known !== undefined) return known;
  const swapped = [...folder].map((c) => (c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase())).join('');
  let insensitive: boolean;
  if (swapped === folder) {
    insensitive = process.platform === 'darwin' || process.platform === 'win32';
  } else {
    const [a, b] = await Promise.all([fileIdentity(folder), fileIdentity(swapped)]);
    insensitive = a !== undefined && a === b;
  }
  caseInsensitiveFolders.set(folder, insensitive);
  return insensitive;
}

/**
 * A comparable form of a path that may not exist yet: absolute, with the real path of its
 * folder when that exists, case-folded where that folder ignores case, so two spellings of
 * one file compare equal.
 */
async function comparablePath(path: string, folders?: Map<string, Promise<string | undefined>>): Promise<string> {
  const absolute = resolve(path);
  const folder = dirname(absolute);
  let pending = folders?.get(folder);
  if (pending === undefined) {
    pending = realpath(folder).catch(() => undefined);
    folders?.set(folder, pending);
  }
  const real = await pending;
  if (real === undefined) return absolute;
  const joined = join(real, basename(absolute));
  return (await isCaseInsensitive(real)) ? joined.toLowerCase() : joined;
}

/** Device and inode of the file `path` leads to (through links), or undefined when there is none. */
async function fileIdentity(path: string): Promise<string | undefined> {
  const info = await stat(path, { bigint: true }).catch(() => undefined);
  return info === undefined ? undefined : `${info.dev}:${info.ino}`;
}

/**
 * What the inputs of a run are, to tell whether an output would replace one: each existing
 * input by device and inode (so a symbolic link, a hard link or a case-insensitive alias of
 * it is caught), and by its comparable path.
 */
export class InputSet {
  private constructor(
    private readonly byIdentity: ReadonlyMap<string, string>,
    private readonly byPath: ReadonlyMap<string, string>,
    /** Real paths of the folders looked at, each resolved once (a library has thousands of files in a few folders). */
    private readonly folders: Map<string, Promise<string | undefined>>,
  ) {}

  /** The set of `inputs` as they are on disk now. */
  static async of(inputs: readonly string[]): Promise<InputSet> {
    const folders = new Map<string, Promise<string | undefined>>();
    const found = await Promise.all(
      inputs.map(async (input) => ({
        input,
        identity: await fileIdentity(input),
        path: await comparablePath(input, folders),
      })),
    );
    const byIdentity = new Map<string, string>();
    const byPath = new Map<string, string>();
    for (const { input, identity, path } of found) {
      if (identity !== undefined && !byIdentity.has(identity)) byIdentity.set(identity, input);
      if (!byPath.has(path)) byPath.set(path, input);
    }
    return new InputSet(byIdentity, byPath, folders);
  }

  /** The input that writing `output` would replace, or undefined. */
  async replacedBy(output: string): Promise<string | undefined> {
    const identity = await fileIdentity(output);
    return (
      (identity !== undefined ? this.byIdentity.get(identity) : undefined) ??
      this.byPath.get(await comparablePath(output, this.folders))
    );
  }

  /** Throws {@link OutputError} `OUTPUT_CLASH` when writing any of `outputs` would replace an input. */
  async refuse(outputs: readonly string[]): Promise<void> {
    for (const output of outputs) {
      const input = await this.replacedBy(output);
      if (input !== undefined) throw new OutputError(OUTPUT_CLASH, inputClashMessage(output, input));
    }
  }
}

function inputClashMessage(output: string, input: string): string {
  return `its output ${output} is the input ${input}; an output never replaces an input`;
}

/**
 * Checks the outputs of a whole batch before any is written. Returns a failure for each
 * request (by index) that may not be written:
 * - `OUTPUT_CLASH` for every request with an output another output of the batch also names
 *   (each one names the others), or an output that is one of `inputs` (an output never
 *   replaces an input, also through a link, a hard link or another case of its name);
 * - `OUTPUT_LINK` for an output whose path is a symbolic link: bonepress never replaces or
 *   writes through a link it did not create.
 * Requests without a failure may be written; they clash with nothing.
 */
export async function planOutputs(
  requests: readonly OutputRequest[],
  inputs: readonly string[],
): Promise<Map<number, FileFailure>> {
  const failures = new Map<number, FileFailure>();
  const fail = (index: number, code: string, message: string): void => {
    if (!failures.has(index)) failures.set(index, { file: requests[index].file, code, message });
  };
  const inputSet = await InputSet.of(inputs);
  const claims = new Map<string, { index: number; output: string }[]>();
  for (let index = 0; index < requests.length; index++) {
    for (const output of requests[index].outputs) {
      const key = await comparablePath(output);
      const list = claims.get(key) ?? [];
      list.push({ index, output });
      claims.set(key, list);
      const input = await inputSet.replacedBy(output);
      if (input !== undefined) fail(index, OUTPUT_CLASH, inputClashMessage(output, input));
      const info = await lstat(output).catch(() => undefined);
      if (info?.isSymbolicLink())
        fail(
          index,
          OUTPUT_LINK,
          `its output ${output} is a symbolic link; bonepress does not replace or follow links (remove it or write elsewhere)`,
        );
    }
  }
  for (const list of claims.values()) {
    if (list.length < 2) continue;
    for (const claim of list) {
      const others = list
        .filter((other) => other !== claim)
        .map((other) => (other.index === claim.index ? 'another of its clips' : requests[other.index].file));
      fail(
        claim.index,
        OUTPUT_CLASH,
        `its output ${claim.output} is also written by ${[...new Set(others)].join(', ')}; nothing was written there`,
      );
    }
  }
  return failures;
}

/** The outputs of a batch, planned before anything is written. */
export interface BatchPlan {
  /** Output paths of each input's clips, by input index (`-` for a stream); absent for a failed input. */
  readonly outputs: readonly (readonly string[] | undefined)[];
  /** Inputs that must not be compressed: unreadable, or with an output that may not be written. */
  readonly failures: ReadonlyMap<number, FileFailed>;
}

/**
 * Plans the outputs of a batch before anything is written. A glTF/GLB input is read
 * (with `read`) to learn its clips' names, since they name its outputs; every other input
 * holds one clip, named after the file. Then the outputs are checked together
 * ({@link planOutputs}); a `file` or `stream` target takes exactly one clip in all. Inputs
 * that fail to read here fail with the reader's error (nothing of them is compressed).
 * With a folder target, `subfolders[i]` (relative) is where under it the outputs of
 * `paths[i]` go.
 */
export async function planBatchOutputs(
  paths: readonly string[],
  target: OutputTarget,
  read: Omit<ReadFileOptions, 'onWarning'>,
  extension: string = OUTPUT_EXTENSION,
  subfolders?: readonly string[],
): Promise<BatchPlan> {
  const failures = new Map<number, FileFailed>();
  const clipNames: (readonly string[] | undefined)[] = [];
  for (let index = 0; index < paths.length; index++) {
    const file = paths[index];
    if (!isGltfPath(file)) {
      clipNames.push([inputBaseName(file)]);
      continue;
    }
    const warnings: string[] = [];
    try {
      const clips = await readClipFiles(file, { ...read, onWarning: (message) => warnings.push(message) });
      clipNames.push(clips.map((clip) => clip.name));
    } catch (error) {
      failures.set(index, { ok: false, file, failure: toFailure(file, error), warnings });
      clipNames.push(undefined);
    }
  }
  const outputs: (string[] | undefined)[] = clipNames.map(() => undefined);
  const planned = clipNames.flatMap((names, index) => (names ? [index] : []));
  const clipCount = planned.reduce((sum, index) => sum + clipNames[index]!.length, 0);
  const fail = (index: number, failure: FileFailure): void => {
    failures.set(index, { ok: false, file: paths[index], failure, warnings: [] });
  };
  if (target.kind !== 'folder') {
    for (const index of planned) {
      if (clipCount === 1) outputs[index] = [target.kind === 'file' ? target.path : '-'];
      else
        fail(index, {
          file: paths[index],
          code: OUTPUT_CLASH,
          message: `${target.kind === 'file' ? `-o names one file (${target.path})` : 'the output is one stream'}, but the inputs hold ${clipCount} clips; give a folder`,
        });
    }
    if (target.kind === 'stream' || clipCount !== 1) return { outputs, failures };
  } else {
    for (const index of planned)
      outputs[index] = outputPathsFor(
        join(target.path, subfolders?.[index] ?? ''),
        paths[index],
        clipNames[index]!,
        extension,
      );
  }
  const requests = planned.map((index) => ({ file: paths[index], outputs: outputs[index]! }));
  for (const [i, failure] of await planOutputs(requests, paths)) {
    fail(planned[i], failure);
    outputs[planned[i]] = undefined;
  }
  return { outputs, failures };
}

/** Counts staged files within this process, so concurrent stagings never share a name. */
let stagedCounter = 0;

/**
 * Writes `data` to a new hidden temp file in `folder` (created when missing) and flushes it to disk (fsync);
 * returns its path. {@link commitStaged} renames it into place; `removeTempFiles` (files.ts)
 * finds it by the process id in its name.
 */
export async function stageFile(folder: string, data: Uint8Array | string): Promise<string> {
  return stage(folder, (handle) => handle.writeFile(data));
}

/** A new temp file in `folder` (created when missing), filled by `fill` and synced; removed again when that fails. */
async function stage(folder: string, fill: (handle: FileHandle) => Promise<void>): Promise<string> {
  await mkdir(folder, { recursive: true });
  stagedCounter++;
  const temp = join(folder, `.bonepress-staged.${process.pid}-${threadId}-${stagedCounter}.tmp`);
  const handle = await open(temp, 'wx');
  try {
    await fill(handle);
    await handle.sync();
  } catch (error) {
    await handle.close().catch(() => undefined);
    await rm(temp, { force: true });
    throw error;
  }
  await handle.close();
  return temp;
}

/**
 * Renames a staged temp file to `path` (atomic on one file system), then flushes the
 * folder's entries. A failed rename removes the temp file and throws with `path` as the
 * error's path.
 */
export async function commitStaged(temp: string, path: string): Promise<void> {
  try {
    await rename(temp, path);
  } catch (error) {
    await rm(temp, { force: true }).catch(() => undefined);
    if (error instanceof Error && (error as NodeJS.ErrnoException).path === temp)
      (error as NodeJS.ErrnoException).path = path;
    throw error;
  }
  await syncFolder(dirname(path));
}

/**
 * Writes text chunks to `path` atomically, one chunk at a time (memory bounded by a chunk,
 * not by the whole output): a staged temp file in the same folder, flushed, then renamed.
 * Refuses (`OUTPUT_LINK`, as a {@link OutputError}) when `path` is a symbolic link. Creates
 * the parent folder when missing.
 */
export async function writeChunksAtomic(path: string, chunks: Iterable<string>): Promise<void> {
  const info = await lstat(path).catch(() => undefined);
  if (info?.isSymbolicLink())
    throw new OutputError(
      OUTPUT_LINK,
      `${path} is a symbolic link; bonepress does not replace or follow links (remove it or write elsewhere)`,
    );
  const temp = await stage(dirname(path), async (handle) => {
    let buffered = '';
    for (const chunk of chunks) {
      buffered += chunk;
      if (buffered.length >= 1 << 16) {
        await handle.write(buffered);
        buffered = '';
      }
    }
    if (buffered.length > 0) await handle.write(buffered);
  });
  await commitStaged(temp, path);
}

/**
 * Writes text chunks to a stream in pieces of about 64 KiB, waiting whenever it asks to
 * (`drain`), so a slow reader holds memory at a piece. Rejects when the stream fails.
 */
export async function writeChunksToStream(stream: NodeJS.WritableStream, chunks: Iterable<string>): Promise<void> {
  let buffered = '';
  const pieces = function* (): Generator<string> {
    for (const chunk of chunks) {
      buffered += chunk;
      if (buffered.length >= 1 << 16) {
        yield buffered;
        buffered = '';
      }
    }
    if (buffered.length > 0) yield buffered;
  };
  for (const chunk of pieces()) {
    if (!stream.write(chunk)) {
      await new Promise<void>((resolveDrain, reject) => {
        const onError = (error: Error): void => {
          stream.off('drain', onDrain);
          reject(error);
        };
        const onDrain = (): void => {
          stream.off('error', onError);
          resolveDrain();
        };
        stream.once('drain', onDrain);
        stream.once('error', onError);
      });
    }
  }
}
