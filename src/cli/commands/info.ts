/**
 * `bonepress info <clip>`: what is inside a compressed clip (`.bpk`, `.bpt`, or an animation
 * of a compressed glTF asset) — header fields, section sizes, track classes (in total and
 * per bone) and the bit-rate histogram.
 */
import type { Command } from 'commander';

import {
  RAW_BITS,
  TRACK_KIND_NAMES,
  describeCompressedClip,
  type ClassCounts,
  type ClipDescription,
} from '../../index.js';
import { declareCommand } from '../command-list.js';
import { isGltfPath, readCompressedGltfFile, type GltfCompressedClip } from '../../node/index.js';
import { gltfAnimationNames } from '../../node/internal.js';
import { EXIT, atFile, type ExitCode } from '../exit-codes.js';
import { animationName, openCompressedFile } from '../load.js';
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
    .option(
      '--clip <name>',
      'one animation of a glTF asset holding several (its name, or animation_<index> when unnamed); without it, a row per animation',
    )
    .option('--json', 'print one JSON object instead of text')
    .action(async (file: string, options: InfoCliOptions) => {
      process.exitCode = await runInfo(file, options);
    });
}

/** What `info --json` prints for a glTF asset holding several compressed animations and no `--clip`. */
export interface AssetInfo {
  file: string;
  /** Every compressed animation, in the asset's order (`name`: as the glTF reader names its clip). */
  animations: (ClipDescription & { index: number })[];
  /** Animations the asset holds as plain glTF channels, not compressed. */
  plain: { index: number; name: string }[];
  total: { animations: number; bytes: number; rawBytes: number; ratio: number };
}

/**
 * Runs `info`: one clip in full, or, for a glTF asset holding several compressed animations
 * and no `--clip`, a row per animation and the total. Throws (scoped to the file) when it
 * holds no valid compressed clip (load.ts `openCompressedFile`).
 */
export async function runInfo(file: string, options: InfoCliOptions): Promise<ExitCode> {
  if (options.clip === undefined && isGltfPath(file)) {
    const animations = await atFile(file, () => readCompressedGltfFile(file));
    // Animations bonepress kept as plain channels (compressing would not have made them smaller) are listed too.
    const all = await atFile(file, () => gltfAnimationNames(file));
    if (animations.length > 1 || all.length > animations.length || animations.length === 0) {
      const compressed = new Set(animations.map((a) => a.index));
      const info = assetInfo(
        file,
        animations,
        all.flatMap((name, index) => (compressed.has(index) ? [] : [{ index, name }])),
      );
      process.stdout.write(options.json ? renderJson(info) : renderAssetInfo(info));
      return EXIT.OK;
    }
  }
  const { clip, name, boneNames } = await openCompressedFile(file, options.clip);
  const info: ClipInfo = { file, ...describeCompressedClip(clip), name: name ?? null };
  // A glTF asset's clips store no names: its nodes name the bones.
  if (boneNames)
    info.bones.forEach((bone) => {
      bone.name = boneNames[bone.index];
    });
  process.stdout.write(options.json ? renderJson(info) : renderInfo(info));
  return EXIT.OK;
}

function assetInfo(
  file: string,
  animations: readonly GltfCompressedClip[],
  plain: { index: number; name: string }[],
): AssetInfo {
  const described = animations.map((a) => ({
    ...describeCompressedClip(a.clip),
    name: animationName(a),
    index: a.index,
  }));
  const bytes = described.reduce((n, d) => n + d.byteLength, 0),
    rawBytes = described.reduce((n, d) => n + d.rawBytes, 0);
  return {
    file,
    animations: described,
    plain,
    total: { animations: described.length, bytes, rawBytes, ratio: bytes > 0 ? rawBytes / bytes : 0 },
  };
}

function renderAssetInfo(info: AssetInfo): string {
  const columns = ['animation', 'bones', 'samples', 'rate', 'duration', 'bytes', 'raw bytes', 'ratio'].map(
    (header, i) => ({ header, align: i === 0 ? ('left' as const) : ('right' as const) }),
  );
  const body = info.animations.map((a) => [
    `${a.index} ${JSON.stringify(a.name)}${a.additive ? ' (additive)' : ''}`,
    String(a.boneCount),
    String(a.sampleCount),
    `${a.sampleRate} Hz`,
    `${a.duration.toFixed(3)} s`,
    String(a.byteLength),
    String(a.rawBytes),
    formatRatio(a.ratio),
  ]);
  const t = info.total;
  const plain =
    info.plain.length === 0
      ? ''
      : `${info.plain.length} animations as plain glTF channels, not compressed: ${info.plain.map((a) => `${a.index} ${JSON.stringify(a.name)}`).join(', ')}\n`;
  if (t.animations === 0) return `${info.file}: no compressed animations\n${plain}`;
  const footer = [
    [`TOTAL (${t.animations} animations)`, '', '', '', '', String(t.bytes), String(t.rawBytes), formatRatio(t.ratio)],
  ];
  return `${info.file}: ${t.animations} compressed animations (details of one: --clip <name>)\n${renderTable(columns, { body, footer })}${plain}`;
}

/** What the poses are: absolute or additive (and against what), and how many bones are weight tracks. */
export function posesText(info: Pick<ClipInfo, 'additive' | 'weightTracks' | 'boneCount'>): string {
  const reference = info.additive?.reference;
  const kind = !reference
    ? 'absolute'
    : `additive (deltas to apply to a base pose), against ${reference.kind === 'frame' ? `frame ${reference.frame} of the source (${reference.time} s)` : `a pose of another clip at ${reference.time} s`}`;
  return info.weightTracks > 0
    ? `${kind}; ${info.weightTracks} of ${info.boneCount} bones are morph-target weight tracks`
    : kind;
}

function renderInfo(info: ClipInfo): string {
  const parts: string[] = [];
  parts.push(
    renderFields([
      ['file', info.file],
      ['name', info.name ?? '(stripped)'],
      [
        'format',
        `version ${info.version}, rotations ${info.rotationFormat}, checksum ${info.hasChecksum ? 'yes' : 'no'}, names ${info.hasNames ? 'yes' : 'stripped'}`,
      ],
      ['bones', String(info.boneCount)],
      ['samples', `${info.sampleCount} at ${info.sampleRate} Hz (${info.duration.toFixed(3)} s)`],
      ['segments', String(info.segmentCount)],
      ['unit', info.unit],
      ['size', `${info.byteLength} bytes (raw ${info.rawBytes}, ratio ${formatRatio(info.ratio)})`],
      ['poses', posesText(info)],
    ]),
  );
  const sections = Object.entries(info.sections).filter(([key]) => key !== 'total');
  parts.push(
    renderTable([{ header: 'section' }, { header: 'bytes', align: 'right' }], {
      body: sections.map(([key, bytes]) => [key, String(bytes)]),
      footer: [['total', String(info.sections.total)]],
    }),
  );
  const classRow = (label: string, c: ClassCounts) => [
    label,
    String(c.default),
    String(c.constant),
    String(c.animated),
  ];
  parts.push(
    renderTable(
      [
        { header: 'tracks' },
        { header: 'default', align: 'right' },
        { header: 'constant', align: 'right' },
        { header: 'animated', align: 'right' },
      ],
      {
        body: TRACK_KIND_NAMES.map((kindName) => classRow(kindName, info.trackClasses[kindName])),
        footer: [classRow('total', info.trackClasses.total)],
      },
    ),
  );
  parts.push(
    renderTable(
      [
        { header: 'bone' },
        { header: 'parent', align: 'right' },
        { header: 'rotation' },
        { header: 'translation' },
        { header: 'scale' },
      ],
      {
        body: info.bones.map((b) => [
          `${b.index} ${b.name}${b.weight ? ' (weight track)' : ''}`,
          String(b.parent),
          b.rotation,
          b.translation,
          b.scale,
        ]),
      },
    ),
  );
  const histogram = Object.entries(info.bitRateHistogram);
  const pairs = histogram.reduce((sum, [, n]) => sum + n, 0);
  parts.push(
    renderTable([{ header: 'bit rate' }, { header: 'tracks', align: 'right' }, { header: 'share', align: 'right' }], {
      body: histogram.map(([bits, n]) => [
        Number(bits) === RAW_BITS ? 'raw' : bits,
        String(n),
        `${((100 * n) / Math.max(1, pairs)).toFixed(1)}%`,
      ]),
      footer: [['total', String(pairs), pairs > 0 ? '100.0%' : '-']],
    }),
  );
  return parts.join('\n');
}
