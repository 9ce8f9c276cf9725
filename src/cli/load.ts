/**
 * Loading what the commands work on, each error scoped to its file so that it prints as
 * `bonepress: <file>: <problem>`.
 */
import type { RawClip } from '../clip/raw-clip.js';
import { readClipFiles, readInputFile } from '../node/files.js';
import { ParseError, PARSE_ERROR } from '../readers/errors.js';
import type { ReadOptions } from '../readers/options.js';
import { CompressedClip } from '../runtime/compressed-clip.js';
import { atFile } from './exit-codes.js';

/**
 * Name of bone `boneIndex` in a clip whose names were stripped, as `decompressClip` names
 * it: `bone_<i>`.
 */
export function anonymousBoneName(boneIndex: number): string {
  return `bone_${boneIndex}`;
}

/**
 * Reads and validates a `.bpk` file. Throws a FileScopedError wrapping a system error or
 * the runtime's FormatError.
 */
export function openCompressedFile(file: string): Promise<CompressedClip> {
  return atFile(file, async () => {
    // Regular files only, capped: `info /dev/zero` or a FIFO fails at once instead of reading forever.
    return CompressedClip.open(await readInputFile(file));
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

/**
 * Reads one clip from a source file: the only one, or the one called `clipName` (glTF
 * files hold one clip per animation). What the reader skips is printed with
 * {@link printWarning} unless `options.onWarning` takes it. Throws a FileScopedError
 * wrapping the reader's error, a system error, or a ParseError when the file holds several
 * clips and none was named, or none has that name.
 */
export function readSingleClip(file: string, options: ReadOptions = {}, clipName?: string): Promise<RawClip> {
  return atFile(file, async () => {
    const onWarning = options.onWarning ?? ((message: string) => printWarning(file, message));
    const clips = await readClipFiles(file, { ...options, onWarning });
    const names = clips.map((clip) => `"${clip.name}"`).join(', ');
    if (clipName !== undefined) {
      const clip = clips.find((c) => c.name === clipName);
      if (!clip) throw new ParseError(file, 0, `holds no clip named "${clipName}" (it holds ${names})`, PARSE_ERROR.UNSUPPORTED);
      return clip;
    }
    if (clips.length !== 1) {
      throw new ParseError(file, 0, `holds ${clips.length} clips (${names}); name one with --clip`, PARSE_ERROR.UNSUPPORTED);
    }
    return clips[0];
  });
}
