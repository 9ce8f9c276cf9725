/**
 * Loading what the commands work on, each error scoped to its file so that it prints as
 * `bonepress: <file>: <problem>`.
 */
import { PARSE_ERROR, ParseError, type RawClip, type ReadOptions } from '../index.js';
import { readClipFiles, readInputFile } from '../node/index.js';
import { openClip, type CompressedClip } from '../runtime/index.js';
import { atFile } from './exit-codes.js';

export { anonymousBoneName } from '../index.js';

/**
 * Reads and validates a `.bpk` file. Throws a FileScopedError wrapping a system error or
 * the runtime's FormatError.
 */
export function openCompressedFile(file: string): Promise<CompressedClip> {
  return atFile(file, async () => {
    // Regular files only, capped: `info /dev/zero` or a FIFO fails at once instead of reading forever.
    // Either form of a clip: the runtime .bpk, or the entropy-coded transport form (decoded here).
    return openClip(await readInputFile(file));
  });
}

/** A reader warning about `file` as one stderr line: `bonepress: <file>: warning: <message>`. */
export function warningLine(file: string, message: string): string {
  return `bonepress: ${file}: warning: ${message}\n`;
}

/** Prints a reader warning about `file` on stderr ({@link warningLine}). */
export function printWarning(file: string, message: string): void {
  process.stderr.write(warningLine(file, message));
}

/** Which clip {@link readSingleClip} takes from a file holding several. */
export interface ClipChoice {
  /** The clip with exactly this name (`--clip`); an error when there is none. */
  readonly name?: string | undefined;
  /** Taken when the file holds several clips and one has this name (e.g. the name a `.bpk` stores). */
  readonly preferred?: string | undefined;
}

/**
 * Reads one clip from a source file: the only one, the one `choice.name` names, or, in a
 * file holding several clips (glTF: one per animation), the one `choice.preferred` names.
 * What the reader skips is printed with {@link printWarning} unless `options.onWarning`
 * takes it. Throws a FileScopedError wrapping the reader's error, a system error, or a
 * ParseError when the file holds several clips and none was chosen, or none has the name.
 */
export function readSingleClip(file: string, options: ReadOptions = {}, choice: ClipChoice = {}): Promise<RawClip> {
  return atFile(file, async () => {
    const onWarning = options.onWarning ?? ((message: string) => printWarning(file, message));
    const clips = await readClipFiles(file, { ...options, onWarning });
    const names = clips.map((clip) => `"${clip.name}"`).join(', ');
    if (choice.name !== undefined) {
      const clip = clips.find((c) => c.name === choice.name);
      if (!clip) throw new ParseError(PARSE_ERROR.UNSUPPORTED, `holds no clip named "${choice.name}" (it holds ${names})`, file);
      return clip;
    }
    if (clips.length === 1) return clips[0];
    const preferred = choice.preferred === undefined ? undefined : clips.find((c) => c.name === choice.preferred);
    if (preferred) return preferred;
    throw new ParseError(PARSE_ERROR.UNSUPPORTED, `holds ${clips.length} clips (${names}); name one with --clip`, file);
  });
}
