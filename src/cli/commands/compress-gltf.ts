/**
 * `bonepress compress model.glb -o model.bp.glb` (or `--format glb|gltf`): glTF in, glTF
 * out. The asset's skeletal animations become `BONEPRESS_animation_compression` data
 * (docs/gltf-extension.md); everything else goes through glTF-Transform I/O. One input, one
 * output file.
 */
import { extname } from 'node:path';

import { InvalidArgumentError } from 'commander';

import { OptionsError, parseLength, type ErrorMetric, type LengthUnit } from '../../index.js';
import {
  compressGltfFile,
  isGltfPath,
  type CompressGltfFileOptions,
  type CompressGltfFileResult,
  type GltfOutputFormat,
} from '../../node/index.js';
import { toFailure } from '../../node/internal.js';
import { gltfAdditiveOption, type AdditiveBaseSpec } from '../additive.js';
import { EXIT, exitCodeOfFailure, failureText, type ExitCode } from '../exit-codes.js';
import { warningLines } from '../load.js';
import { renderJson } from '../render/json.js';
import { formatDistance, formatRatio, formatSeconds, renderTable } from '../render/table.js';

/** `--format` values. */
export const OUTPUT_FORMATS = ['glb', 'gltf', 'bpk', 'bpt'] as const;
/** A `--format` value. */
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

/** Parses `--format`. */
export function parseFormatArg(value: string): OutputFormat {
  const format = OUTPUT_FORMATS.find((f) => f === value.toLowerCase());
  if (format === undefined) throw new InvalidArgumentError(`expected one of ${OUTPUT_FORMATS.join(', ')}`);
  return format;
}

/** `--fallback` values. */
export const FALLBACK_KINDS = ['original', 'quantized'] as const;
/** A `--fallback` value. */
export type FallbackKind = (typeof FALLBACK_KINDS)[number];

/** Parses `--fallback <kind>`. */
export function parseFallbackArg(value: string): FallbackKind {
  const kind = FALLBACK_KINDS.find((k) => k === value.toLowerCase());
  if (kind === undefined) throw new InvalidArgumentError(`expected one of ${FALLBACK_KINDS.join(', ')}`);
  return kind;
}

/** The options of `compress` that the glTF output reads. */
export interface GltfCompressCliOptions {
  out: string;
  error: string;
  shell: string;
  shellBone?: Record<string, string>;
  metric?: ErrorMetric;
  rate?: number;
  unit?: LengthUnit;
  format?: OutputFormat;
  fallback?: boolean | FallbackKind;
  /** `--no-extras`: false leaves morph weights and nodes outside the skins as plain channels. */
  extras?: boolean;
  /** `--compress-all`: compress every animation, even one whose compressed form is not smaller than its channels. */
  compressAll?: boolean;
  /** `--additive [<frame>]`: additive animations against this frame (`true`: frame 0). */
  additive?: number | boolean;
  /** `--additive-base <input>#<animation>[@time]`: the base of the additive animations, an animation of the input. */
  additiveBase?: AdditiveBaseSpec;
  maxInputBytes: number;
  allowSpecialFiles?: boolean;
  allowExternalResources?: boolean;
  json?: boolean;
  quiet?: boolean;
  debug?: boolean;
}

/**
 * The glTF container `compress` writes, or undefined for `.bpk` output: `--format glb|gltf`,
 * else the extension of `-o` (`.glb`, `.gltf`). Loose clips (`.bpk`, `.bpt`) stay the default for every input.
 */
export function gltfOutputFormat(
  options: Pick<GltfCompressCliOptions, 'out' | 'format'>,
): GltfOutputFormat | undefined {
  if (options.format !== undefined)
    return options.format === 'glb' || options.format === 'gltf' ? options.format : undefined;
  const ext = extname(options.out).toLowerCase();
  return ext === '.glb' ? 'glb' : ext === '.gltf' ? 'gltf' : undefined;
}

/** What `compress --json` prints for a glTF output. */
export interface GltfCompressReport extends CompressGltfFileResult {
  /** Source animation bytes / output animation bytes. */
  animationRatio: number;
  /** The raw figure beside them: 40 bytes per bone per sample, over the compressed clips (sum of their `stats.rawBytes`). */
  rawBytes: number;
}

/** Runs `compress` with glTF output: one glTF/GLB input into one file. Returns the exit code. */
export async function runGltfCompress(
  inputs: readonly string[],
  options: GltfCompressCliOptions,
  format: GltfOutputFormat,
): Promise<ExitCode> {
  if (inputs.length !== 1) throw new OptionsError(`glTF output takes one glTF/GLB input, got ${inputs.length}`);
  const input = inputs[0];
  if (!isGltfPath(input))
    throw new OptionsError(`glTF output needs a .glb or .gltf input; ${input} compresses to .bpk`);
  if (options.out === '-') throw new OptionsError('glTF output goes to a file, not stdout');
  let result: CompressGltfFileResult;
  try {
    result = await compressGltfFile(input, options.out, { ...gltfCompressOptions(options, input), format });
  } catch (error) {
    const failure = toFailure(input, error);
    process.stderr.write(failureText(failure, options.debug === true));
    return exitCodeOfFailure(failure);
  }
  const over = result.animations.filter((a) => a.stats.maxError > a.stats.threshold);
  if (options.json) {
    const rawBytes = result.animations.reduce((sum, a) => sum + a.stats.rawBytes, 0);
    const report: GltfCompressReport = {
      ...result,
      animationRatio: result.sourceAnimation.total / result.outputAnimation.total,
      rawBytes,
    };
    process.stdout.write(renderJson(report));
  } else if (options.quiet !== true) {
    const lines = [
      ...result.warnings,
      ...result.droppedExtensions.map((e) => `extension ${e} is not known to glTF-Transform I/O and was not written`),
    ];
    process.stderr.write(warningLines(input, lines));
    process.stdout.write(renderGltfTable(result, parseLength(options.error).unit));
  }
  return over.length > 0 ? EXIT.CHECK_FAILED : EXIT.OK;
}

/** What `compressGltfFile` takes from the command line, for the asset `input`. */
export function gltfCompressOptions(options: GltfCompressCliOptions, input: string): CompressGltfFileOptions {
  return {
    additive: gltfAdditiveOption(options.additive, options.additiveBase, input),
    error: options.error,
    shell: options.shell,
    shellBones: options.shellBone,
    metric: options.metric,
    sampleRate: options.rate,
    unit: options.unit,
    fallback: options.fallback ?? false,
    extras: options.extras !== false,
    keepSmallerSource: options.compressAll !== true,
    read: {
      maxInputBytes: options.maxInputBytes,
      allowSpecialFiles: options.allowSpecialFiles === true,
      allowExternalResources: options.allowExternalResources === true,
    },
  };
}

function renderGltfTable(result: CompressGltfFileResult, display: string): string {
  const body = result.animations.map(({ animation, stats }) => [
    animation + (stats.additive ? ' (additive)' : ''),
    String(stats.boneCount),
    String(stats.sampleCount),
    String(stats.rawBytes),
    String(stats.compressedBytes),
    formatRatio(stats.ratio),
    formatDistance(stats.maxError, stats.unit, display) + (stats.maxError > stats.threshold ? ' !' : ''),
    formatSeconds(stats.seconds),
  ]);
  const s = result.sourceAnimation,
    o = result.outputAnimation;
  const raw = result.animations.reduce((sum, a) => sum + a.stats.rawBytes, 0);
  const footer = [
    ['raw, 40 B per bone per sample', '', '', String(raw), '', formatRatio(raw / o.total), '', ''],
    [
      `animation bytes (${result.animations.length} clips)`,
      '',
      '',
      String(s.total),
      String(o.total),
      formatRatio(s.total / o.total),
      '',
      '',
    ],
    [
      `file bytes (${result.output})`,
      '',
      '',
      String(result.sourceFileBytes),
      String(result.outputFileBytes),
      formatRatio(result.sourceFileBytes / result.outputFileBytes),
      '',
      '',
    ],
  ];
  const columns = [
    'animation',
    'bones',
    'samples',
    'raw / source',
    'compressed / output',
    'ratio',
    'max error',
    'time',
  ].map((header, i) => ({ header, align: i === 0 ? ('left' as const) : ('right' as const) }));
  return renderTable(columns, { body, footer });
}
