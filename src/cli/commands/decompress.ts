/**
 * `bonepress decompress <clip.bpk> -o out.json`: every original sample, decoded by the
 * runtime decoder, as a pose dump (docs/pose-dump.md) for external checks.
 */
import type { Command } from 'commander';

import { writePoseDump } from '../../clip/pose-dump.js';
import { decompressClip } from '../../compress/verify.js';
import { writeFileAtomic } from '../../node/files.js';
import { EXIT, atFile, type ExitCode } from '../exit-codes.js';
import { openCompressedFile } from '../load.js';

/** Options of `decompress` as commander parses them. */
export interface DecompressCliOptions {
  out: string;
}

/** Adds the `decompress` command to `program`. */
export function registerDecompressCommand(program: Command): void {
  program
    .command('decompress')
    .description('decode every original sample of a .bpk clip into a pose dump JSON file')
    .argument('<clip>', 'a .bpk file')
    .requiredOption('-o, --out <file>', 'pose dump to write, - for stdout (bones named bone_<i> when names were stripped)')
    .action(async (file: string, options: DecompressCliOptions) => {
      process.exitCode = await runDecompress(file, options);
    });
}

/** Runs `decompress`; the output is written atomically. Throws (scoped to the file at fault). */
export async function runDecompress(file: string, options: DecompressCliOptions): Promise<ExitCode> {
  const clip = decompressClip(await openCompressedFile(file));
  if (options.out === '-') {
    // The pose dump itself goes to stdout, for pipes; nothing else is printed there.
    process.stdout.write(`${writePoseDump(clip)}\n`);
    return EXIT.OK;
  }
  await atFile(options.out, () => writeFileAtomic(options.out, writePoseDump(clip)));
  process.stdout.write(`${options.out}: ${clip.skeleton.boneNames.length} bones × ${clip.sampleCount} samples\n`);
  return EXIT.OK;
}
