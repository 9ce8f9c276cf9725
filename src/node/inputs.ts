/**
 * Turning command-line inputs into the files of a batch: a file is taken as it is, a folder
 * is searched for clip files.
 */
import { readdir, stat } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';

/** File name endings a folder is searched for (pose dump `.json` files only when named). */
export const CLIP_FILE_EXTENSIONS = ['.bvh', '.gltf', '.glb', '.sjson'] as const;

/** True when `name` ends in one of {@link CLIP_FILE_EXTENSIONS} (case-insensitive). */
export function isClipFileName(name: string): boolean {
  const lower = name.toLowerCase();
  return CLIP_FILE_EXTENSIONS.some((ext) => lower.endsWith(ext));
}

/** One file of a batch and where its outputs go under the output folder. */
export interface InputFile {
  readonly path: string;
  /**
   * The folder of `path` relative to the folder argument it was found in (`a/b` for
   * `lib/a/b/walk.bvh` found in `lib`); empty for a file named as an argument. Outputs go to
   * the same relative folder under `-o`, so same-named files in different folders never clash.
   */
  readonly subfolder: string;
}

/**
 * Expands `inputs` into files: a path that is not a folder is kept as it is (a missing one
 * too, so that reading it reports the problem); a folder is searched recursively for
 * {@link CLIP_FILE_EXTENSIONS}, hidden entries skipped, its files sorted by path. Order:
 * argument order; a file reached twice is listed once. Throws the system error of a folder
 * that cannot be listed.
 */
export async function expandInputs(inputs: readonly string[]): Promise<string[]> {
  return (await expandInputTree(inputs)).map((input) => input.path);
}

/** {@link expandInputs} with each file's {@link InputFile.subfolder}. */
export async function expandInputTree(inputs: readonly string[]): Promise<InputFile[]> {
  const out: InputFile[] = [];
  const seen = new Set<string>();
  const add = (path: string, subfolder: string): void => {
    if (seen.has(path)) return;
    seen.add(path);
    out.push({ path, subfolder });
  };
  for (const input of inputs) {
    const info = await stat(input).catch(() => undefined);
    if (!info?.isDirectory()) {
      add(input, '');
      continue;
    }
    const found = await clipFilesUnder(input);
    found.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    for (const path of found) add(path, relative(input, dirname(path)));
  }
  return out;
}

/** Clip files under `folder`, recursively; hidden entries and symbolic links to folders skipped. */
export async function clipFilesUnder(folder: string): Promise<string[]> {
  const out: string[] = [];
  const pending = [folder];
  // A queue rather than recursion: a deep folder tree costs no stack.
  while (pending.length > 0) {
    const current = pending.pop()!;
    const entries = await readdir(current, { withFileTypes: true });
    for (const entry of entries) {
      if (entry.name.startsWith('.')) continue;
      const path = join(current, entry.name);
      if (entry.isDirectory()) pending.push(path);
      else if (entry.isFile() && isClipFileName(entry.name)) out.push(path);
    }
  }
  return out;
}
