/**
 * `bonepress compress lib -o out --format glb|gltf`: glTF output for a batch. Every glTF/GLB
 * input (files, or found in folders) becomes `<out>/<its subfolder>/<name>.glb` (`.gltf`),
 * as compress-gltf.ts does for one; outputs are checked together before any is written.
 */
import { join } from 'node:path';

import { PARSE_ERROR, parseLength } from '../../index.js';
import {
  compressGltfFile,
  inputBaseName,
  isGltfPath,
  type CompressGltfFileResult,
  type FileFailure,
  type GltfOutputFormat,
  type InputFile,
} from '../../node/index.js';
import { planOutputs, toFailure } from '../../node/internal.js';
import { EXIT, exitCodeOfFailure, failureText, worstExitCode, type ExitCode } from '../exit-codes.js';
import { warningLines } from '../load.js';
import { renderJson } from '../render/json.js';
import { formatDistance, formatRatio, renderTable } from '../render/table.js';
import { gltfCompressOptions, type GltfCompressCliOptions } from './compress-gltf.js';

/** What `compress --json` prints for glTF output of a batch. */
export interface GltfFolderReport {
  assets: CompressGltfFileResult[];
  failures: FileFailure[];
}

/**
 * Compresses each glTF input of `files` into `options.out` (a folder), each at its
 * subfolder unless `flat`, one after the other. An input that is not glTF, or whose output
 * clashes with another output or would replace an input, fails without stopping the others.
 * Returns the exit code as `compress` does.
 */
export async function runGltfFolderCompress(
  files: readonly InputFile[],
  options: GltfCompressCliOptions & { flat?: boolean },
  format: GltfOutputFormat,
): Promise<ExitCode> {
  const failures: FileFailure[] = [];
  const planned = files.filter((input) => {
    if (isGltfPath(input.path)) return true;
    failures.push({
      file: input.path,
      code: PARSE_ERROR.UNSUPPORTED,
      message: `glTF output (--format ${format}) needs .glb or .gltf inputs; compress it to loose clips with --format bpk`,
    });
    return false;
  });
  const requests = planned.map((input) => ({
    file: input.path,
    outputs: [
      join(options.out, options.flat === true ? '' : input.subfolder, `${inputBaseName(input.path)}.${format}`),
    ],
  }));
  const refused = await planOutputs(
    requests,
    files.map((input) => input.path),
  );
  const assets: CompressGltfFileResult[] = [];
  for (const [index, request] of requests.entries()) {
    const failure = refused.get(index);
    if (failure) {
      failures.push(failure);
      continue;
    }
    try {
      assets.push(
        await compressGltfFile(request.file, request.outputs[0], {
          ...gltfCompressOptions(options, request.file),
          format,
        }),
      );
    } catch (error) {
      failures.push(toFailure(request.file, error));
    }
  }
  if (options.json) {
    process.stdout.write(renderJson({ assets, failures } satisfies GltfFolderReport));
  } else if (options.quiet !== true) {
    process.stderr.write(assets.map((a) => warningLines(a.input, a.warnings)).join(''));
    if (assets.length > 0) process.stdout.write(renderFolderTable(assets, parseLength(options.error).unit));
  }
  process.stderr.write(failures.map((f) => failureText(f, options.debug === true)).join(''));
  const over = assets.some((a) => a.animations.some((c) => c.stats.maxError > c.stats.threshold));
  return worstExitCode([...failures.map(exitCodeOfFailure), over ? EXIT.CHECK_FAILED : EXIT.OK]);
}

/** A row per asset (animations, animation bytes of source and output, the worst error) and the total. */
function renderFolderTable(assets: readonly CompressGltfFileResult[], display: string): string {
  const worst = (a: CompressGltfFileResult): string => {
    const clip = a.animations.reduce<CompressGltfFileResult['animations'][number] | undefined>(
      (w, c) => (w === undefined || c.stats.maxError > w.stats.maxError ? c : w),
      undefined,
    );
    return clip === undefined
      ? ''
      : formatDistance(clip.stats.maxError, clip.stats.unit, display) +
          (a.animations.some((c) => c.stats.maxError > c.stats.threshold) ? ' !' : '');
  };
  const body = assets.map((a) => [
    a.output,
    String(a.animations.length),
    String(a.sourceAnimation.total),
    String(a.outputAnimation.total),
    formatRatio(a.sourceAnimation.total / a.outputAnimation.total),
    worst(a),
  ]);
  const source = assets.reduce((n, a) => n + a.sourceAnimation.total, 0),
    output = assets.reduce((n, a) => n + a.outputAnimation.total, 0);
  const footer = [
    [
      `TOTAL (${assets.length} asset${assets.length === 1 ? '' : 's'})`,
      String(assets.reduce((n, a) => n + a.animations.length, 0)),
      String(source),
      String(output),
      formatRatio(source / output),
      '',
    ],
  ];
  const columns = ['asset', 'animations', 'animation bytes', 'compressed', 'ratio', 'max error'].map((header, i) => ({
    header,
    align: i === 0 ? ('left' as const) : ('right' as const),
  }));
  return renderTable(columns, { body, footer });
}
