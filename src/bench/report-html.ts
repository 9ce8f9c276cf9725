/**
 * The bench's files: the result as JSON and a self-contained HTML page (no scripts, no
 * external resources) with inline SVG charts: error distribution, bit-rate histogram and
 * ratio per clip.
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';

import { writeFileAtomic } from '../node/files.js';
import { formatPercent, type BaselineComparison } from './compare.js';
import { referencesFor, type ReferenceFigures } from './references.js';
import type { BenchResult, ErrorHistogram } from './run.js';

/** A bar of a {@link renderBarChart} chart. */
export interface ChartBar {
  readonly label: string;
  readonly value: number;
  /** Tooltip text; default `label: value`. */
  readonly title?: string;
  /** `'bad'` draws the bar in red (e.g. errors above the threshold). */
  readonly tone?: 'normal' | 'bad';
}

/** A horizontal reference line of a chart. */
export interface ChartLine {
  readonly value: number;
  readonly label: string;
}

/** What {@link renderBarChart} draws. */
export interface ChartSpec {
  readonly title: string;
  readonly bars: readonly ChartBar[];
  readonly yLabel: string;
  /** Log scale (log10(1 + value)) for counts spanning orders of magnitude. Default false. */
  readonly log?: boolean;
  readonly lines?: readonly ChartLine[];
  /** Label every n-th bar on the x axis. Default: as many as fit. */
  readonly labelEvery?: number;
  /** Pixels. Defaults 760 × 260. */
  readonly width?: number;
  readonly height?: number;
}

const BASE_MARGIN = { left: 64, right: 16, top: 28, bottom: 52 } as const;

/** `text` cut to `max` characters with an ellipsis. */
function shorten(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** The longest prefix every name shares, cut back to its last separator (`dataset-1_`). */
export function commonPrefix(names: readonly string[]): string {
  if (names.length < 2) return '';
  let prefix = names[0];
  for (const name of names) while (!name.startsWith(prefix)) prefix = prefix.slice(0, -1);
  const cut = Math.max(prefix.lastIndexOf('_'), prefix.lastIndexOf('-'), prefix.lastIndexOf('/'));
  return cut >= 0 ? prefix.slice(0, cut + 1) : '';
}

/** Escapes text for HTML and SVG content and attributes. */
export function escapeHtml(text: string): string {
  return text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

/** A finite number rounded for an SVG attribute (non-finite → 0). */
function px(value: number): string {
  return Number.isFinite(value) ? String(Math.round(value * 10) / 10) : '0';
}

/** Compact number for axis labels and cells: `1234567` → `1.23M`, `0.5` → `0.5`. */
export function formatCount(value: number): string {
  if (!Number.isFinite(value)) return '-';
  const abs = Math.abs(value);
  if (abs >= 1e9) return `${(value / 1e9).toFixed(2)}G`;
  if (abs >= 1e6) return `${(value / 1e6).toFixed(2)}M`;
  if (abs >= 1e4) return `${(value / 1e3).toFixed(1)}k`;
  if (Number.isInteger(value)) return String(value);
  return String(Number(value.toPrecision(3)));
}

/**
 * A bar chart as an inline `<svg>` element: one bar per entry, a y axis with 5 ticks, x
 * labels under the bars, optional reference lines. Non-finite values draw as 0.
 */
export function renderBarChart(spec: ChartSpec): string {
  const rotated = spec.bars.length > 24;
  // Slanted labels need room below the plot; the plot keeps its height.
  // Reference lines are labelled right of the plot, clear of the bars.
  const MARGIN = {
    ...BASE_MARGIN,
    bottom: rotated ? 120 : BASE_MARGIN.bottom,
    right: (spec.lines ?? []).length > 0 ? 120 : BASE_MARGIN.right,
  };
  const width = spec.width ?? 760,
    height = (spec.height ?? 260) + MARGIN.bottom - BASE_MARGIN.bottom;
  const plotW = width - MARGIN.left - MARGIN.right,
    plotH = height - MARGIN.top - MARGIN.bottom;
  const values = spec.bars.map((bar) => (Number.isFinite(bar.value) ? Math.max(0, bar.value) : 0));
  const lines = (spec.lines ?? []).filter((line) => Number.isFinite(line.value));
  const scaleOf = (v: number): number => (spec.log ? Math.log10(1 + v) : v);
  const top = Math.max(1e-12, ...values.map(scaleOf), ...lines.map((line) => scaleOf(line.value) * 1.05));
  const y = (v: number): number => MARGIN.top + plotH - (scaleOf(v) / top) * plotH;
  const slot = plotW / Math.max(1, values.length);
  const barW = Math.max(1, slot * 0.8);
  const labelEvery = spec.labelEvery ?? Math.max(1, Math.ceil(values.length / Math.floor(plotW / (rotated ? 14 : 40))));
  const out: string[] = [];
  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" class="chart" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" role="img" aria-label="${escapeHtml(spec.title)}">`,
  );
  out.push(`<text x="${MARGIN.left}" y="18" class="title">${escapeHtml(spec.title)}</text>`);
  // Y ticks: on a log scale, values back from evenly spaced log positions.
  for (let i = 0; i <= 4; i++) {
    const scaled = (top * i) / 4;
    const value = spec.log ? 10 ** scaled - 1 : scaled;
    const ty = MARGIN.top + plotH - (scaled / top) * plotH;
    out.push(`<line x1="${MARGIN.left}" x2="${px(MARGIN.left + plotW)}" y1="${px(ty)}" y2="${px(ty)}" class="grid"/>`);
    out.push(
      `<text x="${MARGIN.left - 6}" y="${px(ty + 4)}" class="tick" text-anchor="end">${escapeHtml(formatCount(value))}</text>`,
    );
  }
  out.push(
    `<text x="14" y="${px(MARGIN.top + plotH / 2)}" class="axis" transform="rotate(-90 14 ${px(MARGIN.top + plotH / 2)})" text-anchor="middle">${escapeHtml(spec.yLabel + (spec.log ? ' (log)' : ''))}</text>`,
  );
  spec.bars.forEach((bar, i) => {
    const v = values[i];
    const x = MARGIN.left + i * slot + (slot - barW) / 2;
    const by = y(v);
    const title = bar.title ?? `${bar.label}: ${formatCount(v)}`;
    out.push(
      `<rect x="${px(x)}" y="${px(by)}" width="${px(barW)}" height="${px(MARGIN.top + plotH - by)}" class="${bar.tone === 'bad' ? 'bar bad' : 'bar'}"><title>${escapeHtml(title)}</title></rect>`,
    );
    if (i % labelEvery === 0) {
      const lx = x + barW / 2,
        ly = MARGIN.top + plotH + 14;
      const rotate = rotated
        ? ` transform="rotate(60 ${px(lx)} ${px(ly)})" text-anchor="start"`
        : ' text-anchor="middle"';
      out.push(
        `<text x="${px(lx)}" y="${px(ly)}" class="tick"${rotate}>${escapeHtml(rotated ? shorten(bar.label, 20) : bar.label)}</text>`,
      );
    }
  });
  for (const line of lines) {
    const ly = y(line.value);
    out.push(`<line x1="${MARGIN.left}" x2="${px(MARGIN.left + plotW)}" y1="${px(ly)}" y2="${px(ly)}" class="ref"/>`);
    out.push(
      `<text x="${px(MARGIN.left + plotW + 4)}" y="${px(ly + 3)}" class="ref-label" text-anchor="start">${escapeHtml(line.label)}</text>`,
    );
  }
  out.push(
    `<line x1="${MARGIN.left}" x2="${px(MARGIN.left + plotW)}" y1="${px(MARGIN.top + plotH)}" y2="${px(MARGIN.top + plotH)}" class="axis-line"/>`,
  );
  out.push('</svg>');
  return out.join('\n');
}

/** Bars of an error histogram: bins labelled by their share of the threshold, plus `> thr`. */
function errorBars(histogram: ErrorHistogram, what: string): ChartBar[] {
  const bins = histogram.counts.length;
  const bars: ChartBar[] = histogram.counts.map((count, i) => ({
    label: (i / bins).toFixed(2),
    value: count,
    title: `${what} in [${(i / bins).toFixed(2)}, ${((i + 1) / bins).toFixed(2)}) × threshold: ${count}`,
  }));
  bars.push({
    label: '> thr',
    value: histogram.over,
    title: `${what} above the threshold: ${histogram.over}`,
    tone: 'bad',
  });
  return bars;
}

/** Bars of a bit-rate histogram, by bits (32 labelled `raw`). */
function bitRateBars(histogram: Record<number, number>): ChartBar[] {
  return Object.keys(histogram)
    .map(Number)
    .sort((a, b) => a - b)
    .map((bits) => ({
      label: bits === 32 ? 'raw' : String(bits),
      value: histogram[bits],
      title: `${bits === 32 ? 'raw float' : `${bits} bits`}: ${histogram[bits]} (segment, track) pairs`,
    }));
}

function fixed(value: number | null | undefined, digits: number): string {
  return value !== null && value !== undefined && Number.isFinite(value) ? value.toFixed(digits) : '-';
}

/** A reference range `[low, high]` as `low–high`, two decimals. */
function range([low, high]: readonly [number, number]): string {
  return `${low.toFixed(2)}–${high.toFixed(2)}`;
}

function row(cells: readonly string[], header = false): string {
  const tag = header ? 'th' : 'td';
  return `<tr>${cells.map((cell) => `<${tag}>${cell}</${tag}>`).join('')}</tr>`;
}

/**
 * The summary rows: our figure, the same-run comparisons and, for the corpus they were
 * measured on, the reference figures.
 */
function summaryTable(result: BenchResult, a: ReferenceFigures | undefined): string {
  const t = result.totals;
  const unit = t.unit ?? '';
  const tp = result.throughput;
  const d = result.decode;
  const ref = (text: (r: ReferenceFigures) => string): string => (a ? text(a) : '');
  const rows: string[][] = [
    [
      'total ratio',
      fixed(t.ratio, 2),
      `without names ${fixed(t.ratioWithoutNames, 2)}`,
      ref(
        (r) =>
          `${r.acl.label} ${r.acl.ratio}; ${r.gltfpackC.label} ${r.gltfpackC.ratio}; ${r.gltfpackCC.label} ${r.gltfpackCC.ratio}`,
      ),
    ],
    [
      'compressed bytes',
      String(t.compressedBytes),
      `without names ${t.compressedBytesWithoutNames}; raw ${t.rawBytes}`,
      ref((r) => `raw ${r.corpus.rawBytes} (${r.corpus.name})`),
    ],
    [
      'max error',
      t.maxError === null ? '-' : `${fixed(t.maxError, 4)}${unit}`,
      `worst ${fixed(t.worstErrorShare, 3)} × threshold`,
      ref((r) => `${r.acl.label} ${r.acl.maxErrorCm}cm; ${r.gltfpackC.label} ${r.gltfpackC.maxErrorCm}cm`),
    ],
    [
      'clips within threshold',
      `${fixed(t.withinThresholdShare * 100, 1)}% (${t.withinThreshold}/${t.clips})`,
      '',
      ref((r) => `${r.acl.label} 0%; ${r.gltfpackC.label} 100%`),
    ],
    [
      'compression, 1 worker',
      `${fixed(tp.singleWorker.rawMBps, 2)} MB/s`,
      `${fixed(tp.singleWorker.seconds, 2)} s; ${fixed(tp.singleWorker.rawBytes / 1e6 / tp.singleWorker.cpuSeconds, 2)} MB per CPU-second`,
      ref((r) => `${r.acl.label} ${r.acl.compressMBps} MB/s; goal ≥ ${r.goals.compressMBps}`),
    ],
    [
      'compression, pool',
      tp.pool ? `${fixed(tp.pool.rawMBps, 2)} MB/s` : '-',
      tp.pool
        ? `${tp.pool.jobs} jobs, ${fixed(tp.pool.speedup, 2)}× one worker, ${fixed(tp.pool.seconds, 2)} s; ${fixed(tp.pool.cpuSeconds / tp.pool.seconds, 2)} CPUs busy`
        : 'not run (--jobs 1)',
      ref(
        (r) =>
          `goal ≥ ${fixed(r.goals.poolFactor2Jobs * r.goals.compressMBps, 2)} MB/s with 2 jobs (${r.goals.poolFactor2Jobs} × ${r.goals.compressMBps})`,
      ),
    ],
  ];
  if (d) {
    rows.push(
      [
        'decode sequential, µs/pose',
        fixed(d.bonepress.sequentialUs, 3),
        `three.js ${fixed(d.three?.sequentialUs, 3)} (${fixed(d.speedupVsThree?.sequential, 2)}×); raw copy ${fixed(d.rawCopy.sequentialUs, 3)}`,
        ref(
          (r) =>
            `${r.three.label} ${range(r.three.sequentialUs)}; goal ≥ ${r.goals.speedupVsThreeSequential}× three.js`,
        ),
      ],
      [
        'decode random, µs/pose',
        fixed(d.bonepress.randomUs, 3),
        `three.js ${fixed(d.three?.randomUs, 3)} (${fixed(d.speedupVsThree?.random, 2)}×); raw copy ${fixed(d.rawCopy.randomUs, 3)}`,
        ref((r) => `${r.three.label} ${range(r.three.randomUs)}; goal ≥ ${r.goals.speedupVsThreeRandom}× three.js`),
      ],
      [
        'decode sequential, CPU µs/pose',
        fixed(d.bonepress.sequentialCpuUs, 3),
        `three.js ${fixed(d.three?.sequentialCpuUs, 3)} (${fixed(d.speedupVsThreeCpu?.sequential, 2)}×); raw copy ${fixed(d.rawCopy.sequentialCpuUs, 3)}`,
        'CPU time: steadier than wall time on a busy machine',
      ],
      [
        'decode random, CPU µs/pose',
        fixed(d.bonepress.randomCpuUs, 3),
        `three.js ${fixed(d.three?.randomCpuUs, 3)} (${fixed(d.speedupVsThreeCpu?.random, 2)}×); raw copy ${fixed(d.rawCopy.randomCpuUs, 3)}`,
        '',
      ],
    );
  }
  rows.push([
    'deterministic bytes',
    result.determinism.ok ? 'yes' : 'NO',
    `repeat ${result.determinism.repeatIdentical ?? '-'}; pool ${result.determinism.poolCompared} clips compared, ${result.determinism.mismatches.length} differ`,
    '',
  ]);
  const header = [
    'figure',
    'bonepress',
    'same run',
    ...(a ? [`reference (${a.corpus.name}, bench/references.json)`] : []),
  ];
  return `<table class="summary">${row(header.map(escapeHtml), true)}${rows.map((cells) => row(cells.slice(0, header.length).map(escapeHtml))).join('')}</table>`;
}

function comparisonSection(comparison: BaselineComparison | undefined): string {
  if (!comparison) return '<p>No baseline comparison.</p>';
  const lines = [
    `<p class="${comparison.ok ? 'ok' : 'fail'}">Baseline check: ${comparison.ok ? 'passed' : 'FAILED'}. ${comparison.compared} clips compared; compressed size ${comparison.before} → ${comparison.after} bytes (${escapeHtml(Number.isFinite(comparison.growth) ? formatPercent(comparison.growth) : '-')}, tolerance ${(comparison.tolerance * 100).toFixed(1)}%).</p>`,
  ];
  // Long lists (a corpus run against the fixtures' baseline) fold away so the charts stay in view.
  const list = (title: string, items: readonly string[]): string => {
    if (items.length === 0) return '';
    const ul = `<ul>${items.map((item) => `<li>${escapeHtml(item)}</li>`).join('')}</ul>`;
    return items.length > 10
      ? `<details><summary>${escapeHtml(title)} (${items.length})</summary>${ul}</details>`
      : `<p>${escapeHtml(title)}:</p>${ul}`;
  };
  lines.push(list('Problems', comparison.problems));
  lines.push(
    list(
      'Clips that grew',
      comparison.grown.map((c) => `${c.id}: ${c.before} → ${c.after} (${formatPercent(c.growth)})`),
    ),
  );
  lines.push(list('Missing from this run', comparison.missing));
  lines.push(list('Not in the baseline', comparison.added));
  lines.push(list('Settings differ', comparison.settingsDiffer));
  return lines.join('\n');
}

function clipTable(result: BenchResult): string {
  const header = row(
    [
      'clip',
      'bones',
      'samples',
      'raw bytes',
      'compressed',
      'ratio',
      'max error',
      'whole shell',
      'p99 error',
      'compress s',
      'bp seq µs',
      'bp rand µs',
      'three seq µs',
      'three rand µs',
    ],
    true,
  );
  const body = result.clips
    .map((c) =>
      row([
        escapeHtml(c.id),
        String(c.boneCount),
        String(c.sampleCount),
        String(c.rawBytes),
        String(c.compressedBytes),
        fixed(c.ratio, 2),
        `${c.withinThreshold ? '' : '<span class="bad">'}${fixed(c.maxError, 5)}${escapeHtml(c.unit)}${c.withinThreshold ? '' : '</span>'}`,
        `${fixed(c.shellMaxError, 5)}${escapeHtml(c.unit)}`,
        fixed(c.p99Error, 5),
        fixed(c.compressSeconds, 3),
        fixed(c.decode?.bonepress.sequentialUs, 3),
        fixed(c.decode?.bonepress.randomUs, 3),
        fixed(c.decode?.three?.sequentialUs, 3),
        fixed(c.decode?.three?.randomUs, 3),
      ]),
    )
    .join('');
  return `<table class="clips">${header}${body}</table>`;
}

/**
 * The HTML report of `result` (and its baseline comparison): summary with the reference
 * figures when the corpus is theirs (default: {@link referencesFor} `result`), charts (error distribution of every bone × sample and of clip max errors,
 * bit-rate histogram, ratio per clip), failures and a per-clip table. Self-contained.
 */
export function renderHtmlReport(
  result: BenchResult,
  comparison?: BaselineComparison,
  references?: ReferenceFigures,
): string {
  const t = result.totals;
  const refs = references ?? referencesFor(result);
  const prefix = commonPrefix(result.clips.map((clip) => clip.name));
  const ratioBars: ChartBar[] = result.clips.map((clip) => ({
    label: clip.name.slice(prefix.length),
    value: clip.ratio,
    title: `${clip.id}: ratio ${fixed(clip.ratio, 2)}, max error ${fixed(clip.maxError, 5)}${clip.unit}`,
    tone: clip.withinThreshold ? 'normal' : 'bad',
  }));
  const charts = [
    renderBarChart({
      title: 'Error of every bone × sample, as a share of the threshold',
      bars: errorBars(result.errorHistogram, 'bone × samples'),
      yLabel: 'bone × samples',
    }),
    renderBarChart({
      title: 'Max error of each clip, as a share of the threshold',
      bars: errorBars(result.clipErrorHistogram, 'clips'),
      yLabel: 'clips',
    }),
    renderBarChart({
      title: 'Bit rates: (segment, animated track) pairs per bits per component',
      bars: bitRateBars(result.bitRateHistogram),
      yLabel: 'pairs',
    }),
    renderBarChart({
      title: `Compression ratio per clip${prefix ? ` (names without "${prefix}")` : ''}`,
      bars: ratioBars,
      yLabel: 'ratio',
      width: Math.max(760, Math.min(2400, 64 + 120 + ratioBars.length * 8)),
      lines: [
        { value: t.ratio, label: `total ${fixed(t.ratio, 2)}` },
        ...(refs
          ? [
              { value: refs.acl.ratio, label: `${refs.acl.label} ${refs.acl.ratio}` },
              { value: refs.gltfpackC.ratio, label: `${refs.gltfpackC.label} ${refs.gltfpackC.ratio}` },
            ]
          : []),
      ],
    }),
  ];
  const failures =
    result.failures.length === 0
      ? ''
      : `<h2>Failures</h2><ul>${result.failures.map((f) => `<li>${escapeHtml(`${f.file}: ${f.message} (${f.code})`)}</li>`).join('')}</ul>`;
  const env = result.environment;
  const s = result.settings;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>bonepress bench ${escapeHtml(result.startedAt)}</title>
<style>
body { font: 14px/1.4 system-ui, sans-serif; margin: 24px; color: #222; }
table { border-collapse: collapse; margin: 12px 0; }
th, td { border: 1px solid #ccc; padding: 3px 8px; text-align: left; }
table.clips td { text-align: right; font-variant-numeric: tabular-nums; }
table.clips td:first-child { text-align: left; }
.chart { display: block; margin: 16px 0; }
.chart .title { font-weight: 600; font-size: 13px; }
.chart .tick { font-size: 10px; fill: #555; }
.chart .axis { font-size: 11px; fill: #333; }
.chart .grid { stroke: #eee; }
.chart .axis-line { stroke: #888; }
.chart .bar { fill: #4a7ab8; }
.chart .bar.bad, .bad { fill: #c0392b; color: #c0392b; }
.chart .ref { stroke: #e67e22; stroke-dasharray: 4 3; }
.chart .ref-label { font-size: 10px; fill: #e67e22; }
.ok { color: #1e7d32; } .fail { color: #c0392b; font-weight: 600; }
</style>
</head>
<body>
<h1>bonepress bench</h1>
<p>${escapeHtml(`${result.startedAt} · corpus ${result.corpus.join(', ')} · ${t.clips} clips, ${t.samples} samples · error ${s.error}, shell ${s.shell}, metric ${s.metric}, ladder ${s.ladder}, rotation reference ${s.rotationReference} · Node ${env.node} on ${env.cpus}× ${env.cpuModel}${env.three ? ` · three.js r${env.three}` : ''} · load average ${fixed(env.loadAverage.start, 1)} → ${fixed(env.loadAverage.end, 1)} · ${fixed(result.seconds, 1)} s`)}</p>
<h2>Summary</h2>
${summaryTable(result, refs)}
${comparisonSection(comparison)}
<h2>Charts</h2>
${charts.join('\n')}
${failures}
<h2>Clips</h2>
${clipTable(result)}
</body>
</html>
`;
}

/** JSON of a bench result (or anything): indented, non-finite numbers as null, trailing newline. */
export function renderBenchJson(value: unknown): string {
  return (
    JSON.stringify(value, (_key, v: unknown) => (typeof v === 'number' && !Number.isFinite(v) ? null : v), 2) + '\n'
  );
}

/** Paths {@link saveBenchReport} wrote. */
export interface SavedReport {
  readonly json: string;
  readonly html: string;
}

/**
 * Writes `bench-<time>.json` (the result with its comparison) and `bench-<time>.html` into
 * `outDir` (created when missing), atomically. `<time>` is the run's start, UTC.
 */
export async function saveBenchReport(
  outDir: string,
  result: BenchResult,
  comparison?: BaselineComparison,
): Promise<SavedReport> {
  await mkdir(outDir, { recursive: true });
  const stamp = result.startedAt.replace(/\.\d+Z$/, 'Z').replace(/[:]/g, '-');
  const json = join(outDir, `bench-${stamp}.json`);
  const html = join(outDir, `bench-${stamp}.html`);
  await writeFileAtomic(json, renderBenchJson(comparison ? { ...result, comparison } : result));
  await writeFileAtomic(html, renderHtmlReport(result, comparison));
  return { json, html };
}
