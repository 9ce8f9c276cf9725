/**
 * `bonepress info <clip>`: what is inside a compressed clip (`.bpk`, `.bpt`, or an animation
 * of a compressed glTF asset) — header fields, section sizes, track classes (in total and
 * per bone) and the bit-rate histogram.
 */
import type { Command } from 'commander';

import { RAW_BITS, TRACK_KIND_NAMES, describeCompressedClip, type ClassCounts, type ClipDescription } from '../../index.js';
import { declareCommand } from '../command-list.js';
import { EXIT, type ExitCode } from '../exit-codes.js';
import { openCompressedFile } from '../load.js';
import { renderJson } from '../render/json.js';
import { formatRatio, renderFields, renderTable } from '../render/table.js';

/** Options of `info` as commander parses them. */
export interface InfoCliOptions {
  json?: boolean;
  /** The animation of a glTF asset holding several. */
  clip?: string;
}

/** What `info --json` prints. */
export interface ClipInfo extends ClipDescription {
  file: string;
}

/** Adds the `info` command to `program`. */
export function registerInfoCommand(program: Command): void {
  declareCommand(program, 'info')
    .option('--clip <name>', 'the animation to read from a glTF asset holding several')
    .option('--json', 'print one JSON object instead of text')
    .action(async (file: string, options: InfoCliOptions) => {
      process.exitCode = await runInfo(file, options);
    });
}

/** Runs `info`. Throws (scoped to the file) when it holds no valid compressed clip (load.ts `openCompressedFile`). */
export async function runInfo(file: string, options: InfoCliOptions): Promise<ExitCode> {
  const { clip, name, boneNames } = await openCompressedFile(file, options.clip);
  const info: ClipInfo = { file, ...describeCompressedClip(clip), name: name ?? null };
  // A glTF asset's clips store no names: its nodes name the bones.
  if (boneNames) info.bones.forEach((bone) => { bone.name = boneNames[bone.index]; });
  process.stdout.write(options.json ? renderJson(info) : renderInfo(info));
  return EXIT.OK;
}

function renderInfo(info: ClipInfo): string {
  const parts: string[] = [];
  parts.push(renderFields([
    ['file', info.file],
    ['name', info.name ?? '(stripped)'],
    ['format', `version ${info.version}, rotations ${info.rotationFormat}, checksum ${info.hasChecksum ? 'yes' : 'no'}, names ${info.hasNames ? 'yes' : 'stripped'}`],
    ['bones', String(info.boneCount)],
    ['samples', `${info.sampleCount} at ${info.sampleRate} Hz (${info.duration.toFixed(3)} s)`],
    ['segments', String(info.segmentCount)],
    ['unit', info.unit],
    ['size', `${info.byteLength} bytes (raw ${info.rawBytes}, ratio ${formatRatio(info.ratio)})`],
  ]));
  const sections = Object.entries(info.sections).filter(([key]) => key !== 'total');
  parts.push(renderTable([{ header: 'section' }, { header: 'bytes', align: 'right' }], {
    body: sections.map(([key, bytes]) => [key, String(bytes)]),
    footer: [['total', String(info.sections.total)]],
  }));
  const classRow = (label: string, c: ClassCounts) => [label, String(c.default), String(c.constant), String(c.animated)];
  parts.push(renderTable(
    [{ header: 'tracks' }, { header: 'default', align: 'right' }, { header: 'constant', align: 'right' }, { header: 'animated', align: 'right' }],
    {
      body: TRACK_KIND_NAMES.map((kindName) => classRow(kindName, info.trackClasses[kindName])),
      footer: [classRow('total', info.trackClasses.total)],
    },
  ));
  parts.push(renderTable(
    [{ header: 'bone' }, { header: 'parent', align: 'right' }, { header: 'rotation' }, { header: 'translation' }, { header: 'scale' }],
    { body: info.bones.map((b) => [`${b.index} ${b.name}`, String(b.parent), b.rotation, b.translation, b.scale]) },
  ));
  const histogram = Object.entries(info.bitRateHistogram);
  const pairs = histogram.reduce((sum, [, n]) => sum + n, 0);
  parts.push(renderTable(
    [{ header: 'bit rate' }, { header: 'tracks', align: 'right' }, { header: 'share', align: 'right' }],
    {
      body: histogram.map(([bits, n]) => [
        Number(bits) === RAW_BITS ? 'raw' : bits, String(n), `${((100 * n) / Math.max(1, pairs)).toFixed(1)}%`,
      ]),
      footer: [['total', String(pairs), pairs > 0 ? '100.0%' : '-']],
    },
  ));
  return parts.join('\n');
}
