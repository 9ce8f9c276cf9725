/**
 * `bonepress decompress <clip> -o <out>`: every original sample of a compressed clip (`.bpk`,
 * `.bpt`, or an animation of a compressed glTF asset), decoded by the runtime
 * decoder, as a pose dump (docs/pose-dump.md) for external checks, streamed to a file or
 * to stdout.
 */
import { join } from 'node:path';

import type { Command } from 'commander';

import { inputBaseName } from '../../node/index.js';
import {
  InputSet,
  resolveOutputTarget,
  sanitizeClipName,
  writeChunksAtomic,
  writeChunksToStream,
} from '../../node/internal.js';
import { poseDumpChunks } from '../../index.js';
import { declareCommand } from '../command-list.js';
import { EXIT, atFile, type ExitCode } from '../exit-codes.js';
import { openCompressedFile } from '../load.js';

/** Options of `decompress` as commander parses them. */
export interface DecompressCliOptions {
  out: string;
  quiet?: boolean;
  /** The animation of a glTF asset holding several. */
  clip?: string;
}

/** Extension of pose dumps. */
const POSE_DUMP_EXTENSION = '.json';

/** Adds the `decompress` command to `program`. */
export function registerDecompressCommand(program: Command): void {
  declareCommand(program, 'decompress')
    .requiredOption(
      '-o, --out <path>',
      'a .json file, a folder (gets <input name>.json, or <input name>_<animation>.json with --clip; created when missing), or - for stdout',
    )
    .option(
      '--clip <name>',
      'the animation to read from a glTF asset holding several (its name, or animation_<index> when unnamed)',
    )
    .addHelpText(
      'after',
      '\nBones are named bone_<i> when names were stripped. A file output is written atomically and never replaces a symbolic link.',
    )
    .action(async (file: string, _options: DecompressCliOptions, command: Command) => {
      process.exitCode = await runDecompress(file, command.optsWithGlobals<DecompressCliOptions>());
    });
}

/**
 * Runs `decompress`: the pose dump is streamed (one pose in memory at a time) to stdout, or
 * atomically to a file, creating its folder. Throws (scoped to the file at fault).
 */
export async function runDecompress(file: string, options: DecompressCliOptions): Promise<ExitCode> {
  const { clip } = await openCompressedFile(file, options.clip);
  const target = await resolveOutputTarget(options.out, POSE_DUMP_EXTENSION, process.stdout);
  if (target.kind === 'stream') {
    // The pose dump itself goes to stdout, for pipes; nothing else is printed there.
    await writeChunksToStream(target.stream, chunksWithNewline(poseDumpChunks(clip)));
    return EXIT.OK;
  }
  // One animation of several named: its own name, as compress names the outputs of such an asset.
  const stem =
    options.clip === undefined ? inputBaseName(file) : `${inputBaseName(file)}_${sanitizeClipName(options.clip)}`;
  const path = target.kind === 'file' ? target.path : join(target.path, stem + POSE_DUMP_EXTENSION);
  await atFile(path, async () => {
    await (await InputSet.of([file])).refuse([path]);
    await writeChunksAtomic(path, chunksWithNewline(poseDumpChunks(clip)));
  });
  if (options.quiet !== true) process.stdout.write(`${path}: ${clip.boneCount} bones × ${clip.sampleCount} samples\n`);
  return EXIT.OK;
}

/** `chunks`, then a final newline. */
function* chunksWithNewline(chunks: Iterable<string>): Generator<string> {
  yield* chunks;
  yield '\n';
}
