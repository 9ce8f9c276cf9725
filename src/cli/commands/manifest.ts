/**
 * `bonepress manifest merge <parts…> -o <out>`: joins the partial manifests of a sharded
 * build (`compress --shard i/n --manifest …` on n machines) into the manifest one run over
 * every input would have written.
 */
import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';

import type { Command } from 'commander';

import { ManifestError, mergeManifests, readManifest, writeManifest } from '../../node/index.js';
import { declareCommand } from '../command-list.js';
import { InputSet } from '../../node/internal.js';
import { EXIT, atFile, type ExitCode } from '../exit-codes.js';

/** Options of `manifest merge`. */
export interface ManifestMergeCliOptions {
  out: string;
  quiet?: boolean;
}

/** Adds `manifest merge` to `program`. */
export function registerManifestCommand(program: Command): void {
  const manifest = declareCommand(program, 'manifest');
  manifest
    .command('merge')
    .description('merge the partial manifests of a sharded build (compress --shard i/n --manifest …) into one')
    .argument('<parts...>', 'partial manifests (JSON), one per shard')
    .requiredOption(
      '-o, --out <file>',
      'merged manifest to write (atomically; left untouched when it already holds the result)',
    )
    .addHelpText(
      'after',
      [
        '',
        'The parts must come from the same bonepress version and settings, and their shards must cover 1..n.',
        'An input listed differently by two parts, or an output path written by two inputs, is a conflict.',
        'Exit status: 0 when merged, 2 when a part is unreadable, mismatched, conflicting or missing.',
      ].join('\n'),
    )
    .action(async (parts: string[], _options: ManifestMergeCliOptions, command: Command) => {
      process.exitCode = await runManifestMerge(parts, command.optsWithGlobals<ManifestMergeCliOptions>());
    });
}

/**
 * Reads every part, merges them (manifest.ts `mergeManifests`) and writes the result to
 * `options.out`. Returns {@link EXIT.OK}, or {@link EXIT.BAD_INPUT} after printing
 * `bonepress: <part>: <problem>` for a part that cannot be read or merged.
 */
export async function runManifestMerge(parts: readonly string[], options: ManifestMergeCliOptions): Promise<ExitCode> {
  try {
    const manifests = [];
    for (const file of parts) manifests.push({ file, manifest: await readManifest(file) });
    const merged = mergeManifests(manifests);
    await atFile(options.out, async () => (await InputSet.of(parts)).refuse([options.out]));
    await mkdir(dirname(options.out), { recursive: true });
    const written = await writeManifest(options.out, merged);
    if (options.quiet !== true) {
      const t = merged.total;
      process.stdout.write(
        `${parts.length} part${parts.length === 1 ? '' : 's'}: ${t.inputs} inputs, ${t.outputs} outputs, ${t.failures} failed; ${options.out} ${written ? 'written' : 'unchanged'}\n`,
      );
    }
    return EXIT.OK;
  } catch (error) {
    if (!(error instanceof ManifestError)) throw error;
    process.stderr.write(`bonepress: ${error.message}\n`);
    return EXIT.BAD_INPUT;
  }
}
