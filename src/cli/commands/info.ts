/**
 * `bonepress info <clip.bpk>`: what is inside a compressed clip — header fields, section
 * sizes, track classes (in total and per bone) and the bit-rate histogram.
 */
import type { Command } from 'commander';

import { rawSizeBytes } from '../../clip/raw-clip.js';
import type { CompressedClip, SectionSizes, TrackClass } from '../../runtime/compressed-clip.js';
import { RAW_BITS, ROTATION_FORMAT, TRACK_KIND } from '../../runtime/format.js';
import { EXIT, type ExitCode } from '../exit-codes.js';
import { anonymousBoneName, openCompressedFile } from '../load.js';
import { renderJson } from '../render/json.js';
import { formatRatio, renderFields, renderTable } from '../render/table.js';

/** Options of `info` as commander parses them. */
export interface InfoCliOptions {
  json?: boolean;
}

/** Track kinds in file order (TRACK_KIND). */
const KINDS = [
  ['rotation', TRACK_KIND.ROTATION],
  ['translation', TRACK_KIND.TRANSLATION],
  ['scale', TRACK_KIND.SCALE],
] as const;
type KindName = (typeof KINDS)[number][0];

/** Counts of each track class. */
export type ClassCounts = Record<TrackClass, number>;

/** What `info --json` prints. */
export interface ClipInfo {
  file: string;
  /** Clip name, or null when names were stripped. */
  name: string | null;
  version: number;
  rotationFormat: string;
  hasChecksum: boolean;
  hasNames: boolean;
  boneCount: number;
  sampleCount: number;
  sampleRate: number;
  /** Seconds. */
  duration: number;
  segmentCount: number;
  unit: string;
  byteLength: number;
  /** 40 · bones · samples. */
  rawBytes: number;
  ratio: number;
  sections: SectionSizes;
  trackClasses: Record<KindName | 'total', ClassCounts>;
  bones: { index: number; name: string; parent: number; rotation: TrackClass; translation: TrackClass; scale: TrackClass }[];
  /** (segment, animated track) pairs per bit rate; key = bits per component (32 = raw float). */
  bitRateHistogram: Record<string, number>;
}

/** Adds the `info` command to `program`. */
export function registerInfoCommand(program: Command): void {
  program
    .command('info')
    .description('show the header, section sizes, track classes and bit rates of a .bpk clip')
    .argument('<clip>', 'a .bpk file')
    .option('--json', 'print one JSON object instead of text')
    .action(async (file: string, options: InfoCliOptions) => {
      process.exitCode = await runInfo(file, options);
    });
}

/** Runs `info`. Throws (scoped to the file) when it is not a valid `.bpk`. */
export async function runInfo(file: string, options: InfoCliOptions): Promise<ExitCode> {
  const info = describeClip(file, await openCompressedFile(file));
  process.stdout.write(options.json ? renderJson(info) : renderInfo(info));
  return EXIT.OK;
}

/** Gathers everything `info` shows about `clip`. */
export function describeClip(file: string, clip: CompressedClip): ClipInfo {
  const empty = (): ClassCounts => ({ default: 0, constant: 0, animated: 0 });
  const trackClasses = { rotation: empty(), translation: empty(), scale: empty(), total: empty() };
  const bones: ClipInfo['bones'] = [];
  for (let b = 0; b < clip.boneCount; b++) {
    const classes = {} as Record<KindName, TrackClass>;
    for (const [kindName, kind] of KINDS) {
      const cls = clip.trackClassOf(b, kind);
      classes[kindName] = cls;
      trackClasses[kindName][cls]++;
      trackClasses.total[cls]++;
    }
    bones.push({ index: b, name: clip.boneNames?.[b] ?? anonymousBoneName(b), parent: clip.parents[b], ...classes });
  }
  const bitRateHistogram: Record<string, number> = {};
  const counts = new Map<number, number>();
  for (let s = 0; s < clip.segmentCount; s++) {
    for (const bits of clip.segmentBitRates(s)) counts.set(bits, (counts.get(bits) ?? 0) + 1);
  }
  for (const bits of [...counts.keys()].sort((a, b) => a - b)) bitRateHistogram[String(bits)] = counts.get(bits) ?? 0;
  const rawBytes = rawSizeBytes(clip.boneCount, clip.sampleCount);
  const formatName = Object.entries(ROTATION_FORMAT).find(([, v]) => v === clip.rotationFormat)?.[0] ?? String(clip.rotationFormat);
  return {
    file,
    name: clip.name ?? null,
    version: clip.version,
    rotationFormat: formatName.toLowerCase().replace(/_/g, '-'),
    hasChecksum: clip.hasChecksum,
    hasNames: clip.boneNames !== undefined,
    boneCount: clip.boneCount,
    sampleCount: clip.sampleCount,
    sampleRate: clip.sampleRate,
    duration: clip.duration,
    segmentCount: clip.segmentCount,
    unit: clip.unit,
    byteLength: clip.byteLength,
    rawBytes,
    ratio: rawBytes / clip.byteLength,
    sections: clip.sectionSizes(),
    trackClasses,
    bones,
    bitRateHistogram,
  };
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
      body: KINDS.map(([kindName]) => classRow(kindName, info.trackClasses[kindName])),
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
