import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { compareToBaseline, type Baseline } from '../../src/bench/compare.js';
import { loadReferences } from '../../src/bench/references.js';
import {
  escapeHtml,
  renderBarChart,
  renderBenchJson,
  renderHtmlReport,
  saveBenchReport,
} from '../../src/bench/report-html.js';
import {
  createErrorHistogram,
  addToErrorHistogram,
  totalsOf,
  type BenchClip,
  type BenchResult,
} from '../../src/bench/run.js';

function makeClip(id: string, compressedBytes: number, maxError: number, withDecode: boolean): BenchClip {
  const clip: BenchClip = {
    id,
    file: `fixtures/${id}`,
    name: id.replace(/\.bvh$/, ''),
    boneCount: 22,
    sampleCount: 100,
    rawBytes: 88_000,
    compressedBytes,
    namesBytes: 300,
    ratio: 88_000 / compressedBytes,
    maxError,
    shellMaxError: maxError * 1.3,
    p99Error: maxError * 0.9,
    threshold: 0.01,
    unit: 'cm',
    withinThreshold: maxError <= 0.01,
    worstBone: 'LeftToe',
    worstSample: 3,
    compressSeconds: 0.05,
    bitRateHistogram: { 0: 3, 5: 10, 9: 4, 32: 1 },
  };
  if (withDecode) {
    clip.decode = {
      bonepress: { sequentialUs: 1.5, randomUs: 1.9, sequentialCpuUs: 1.5, randomCpuUs: 1.9 },
      rawCopy: { sequentialUs: 0.2, randomUs: 0.25, sequentialCpuUs: 0.2, randomCpuUs: 0.25 },
      three: { sequentialUs: 3.4, randomUs: 8.1, sequentialCpuUs: 3.4, randomCpuUs: 8.1 },
      threeClipBytes: 62_000,
    };
  }
  return clip;
}

function makeResult(): BenchResult {
  const clips = [makeClip('walk.bvh', 8_000, 0.0099, true), makeClip('<kick & "run">.bvh', 11_000, 0.012, false)];
  const errorHistogram = createErrorHistogram(20);
  for (let i = 0; i < 1000; i++) addToErrorHistogram(errorHistogram, (i % 97) / 96);
  addToErrorHistogram(errorHistogram, 1.2);
  const clipErrorHistogram = createErrorHistogram(20);
  for (const c of clips) addToErrorHistogram(clipErrorHistogram, c.maxError / c.threshold);
  return {
    version: 1,
    startedAt: '2026-01-02T03:04:05.678Z',
    seconds: 12.5,
    corpus: ['fixtures'],
    settings: {
      error: '0.01cm',
      shell: '3cm',
      metric: 'vertices',
      ladder: 'default',
      rotationReference: 'default',
      jobs: 2,
      decode: true,
      seed: 1,
      measureMs: 20,
      repeats: 3,
      playbackHz: 60,
      randomTimes: 4096,
    },
    environment: {
      node: 'v20.20.0',
      platform: 'linux',
      arch: 'x64',
      cpuModel: 'Test CPU',
      cpus: 2,
      three: '187',
      loadAverage: { start: 0.5, end: 0.7 },
    },
    clips,
    failures: [{ file: 'fixtures/broken.bvh', code: 'SYNTAX', message: 'line 3: expected "{"' }],
    totals: totalsOf(clips, 3, 1),
    throughput: {
      singleWorker: { jobs: 1, seconds: 2, rawBytes: 176_000, rawMBps: 0.088, cpuSeconds: 1.9 },
      pool: { jobs: 2, seconds: 1.1, rawBytes: 176_000, rawMBps: 0.16, speedup: 1.82, cpuSeconds: 2.1 },
    },
    determinism: { ok: true, repeatIdentical: true, poolCompared: 2, poolJobs: 2, mismatches: [] },
    errorHistogram,
    clipErrorHistogram,
    bitRateHistogram: { 0: 6, 5: 20, 9: 8, 32: 2 },
    decode: {
      clips: 1,
      bonepress: { sequentialUs: 1.5, randomUs: 1.9, sequentialCpuUs: 1.5, randomCpuUs: 1.9 },
      rawCopy: { sequentialUs: 0.2, randomUs: 0.25, sequentialCpuUs: 0.2, randomCpuUs: 0.25 },
      three: { sequentialUs: 3.4, randomUs: 8.1, sequentialCpuUs: 3.4, randomCpuUs: 8.1 },
      speedupVsThree: { sequential: 3.4 / 1.5, random: 8.1 / 1.9 },
      speedupVsThreeCpu: { sequential: 3.4 / 1.5, random: 8.1 / 1.9 },
      threeClipBytes: 62_000,
    },
  };
}

/** Every number in the SVG geometry attributes. */
function svgNumbers(html: string): number[] {
  const out: number[] = [];
  for (const m of html.matchAll(/\b(?:x|y|x1|x2|y1|y2|width|height)="([^"]*)"/g)) out.push(Number(m[1]));
  return out;
}

describe('renderHtmlReport', () => {
  it('holds the four SVG charts with finite geometry', () => {
    const html = renderHtmlReport(makeResult());
    expect(html.startsWith('<!doctype html>')).toBe(true);
    expect(html.match(/<svg /g)).toHaveLength(4);
    expect(html.match(/<\/svg>/g)).toHaveLength(4);
    expect(html).toContain('Error of every bone × sample');
    expect(html).toContain('Max error of each clip');
    expect(html).toContain('Bit rates');
    // The whole-shell error of each clip beside its max error (makeClip: 1.3 × the max error of walk.bvh, 0.0099 cm).
    expect(html).toContain('<th>whole shell</th>');
    expect(html).toContain('0.01287cm');
    expect(html).toContain('metric vertices');
    expect(html).toContain('Compression ratio per clip');
    const numbers = svgNumbers(html);
    expect(numbers.length).toBeGreaterThan(100);
    for (const n of numbers) expect(Number.isFinite(n)).toBe(true);
    // Bars never have a negative height.
    for (const m of html.matchAll(/<rect [^>]*height="([^"]*)"/g)) expect(Number(m[1])).toBeGreaterThanOrEqual(0);
    expect(html).not.toMatch(/NaN|undefined|Infinity|\[object/);
  });

  it('shows the reference figures only for the corpus they were measured on', () => {
    const references = loadReferences()!;
    const other = renderHtmlReport(makeResult());
    expect(other).not.toMatch(/ACL|gltfpack|bench\/references\.json/);
    const theirs = renderHtmlReport(makeResult(), undefined, references);
    expect(theirs).toContain('ACL 2.1 9.52');
    expect(theirs).toContain('reference (bandai-ds1, bench/references.json)');
  });

  it('is self-contained: no scripts and no external resources', () => {
    const html = renderHtmlReport(makeResult());
    expect(html).not.toMatch(/<script|<link|src=|href=/i);
  });

  it('shows the figures and escapes clip names', () => {
    const html = renderHtmlReport(makeResult());
    expect(html).toContain('&lt;kick &amp; &quot;run&quot;&gt;.bvh');
    expect(html).not.toContain('<kick');
    expect(html).toContain('<td>9.26</td>'); // total ratio 176,000 / 19,000
    expect(html).toContain('three.js 3.400 (2.27×)');
    expect(html).toContain('fixtures/broken.bvh: line 3: expected &quot;{&quot; (SYNTAX)');
    // The clip above its threshold is drawn in red in the ratio chart.
    expect(html).toMatch(/class="bar bad"><title>&lt;kick/);
  });

  it('prints dashes, not NaN, for missing figures', () => {
    const result = makeResult();
    result.decode = {
      ...result.decode!,
      three: null,
      speedupVsThree: null,
      speedupVsThreeCpu: null,
      threeClipBytes: null,
      threeUnavailable: 'three.js could not be loaded',
    };
    result.throughput.pool = null;
    result.clips = [];
    result.totals = totalsOf([], 0, 0);
    result.bitRateHistogram = {};
    const html = renderHtmlReport(result);
    expect(html).not.toMatch(/NaN|undefined|Infinity/);
    for (const n of svgNumbers(html)) expect(Number.isFinite(n)).toBe(true);
  });

  it('includes the baseline comparison', () => {
    const result = makeResult();
    const baseline: Baseline = {
      version: 1,
      settings: { error: '0.01cm', shell: '3cm', ladder: 'default', rotationReference: 'default' },
      total: { clips: 1, rawBytes: 88_000, compressedBytes: 7_000, ratio: 88_000 / 7_000, maxError: 0.009, unit: 'cm' },
      clips: { 'walk.bvh': { rawBytes: 88_000, compressedBytes: 7_000, maxError: 0.009 } },
    };
    const html = renderHtmlReport(result, compareToBaseline(result, baseline));
    expect(html).toContain('Baseline check: FAILED');
    expect(html).toContain('walk.bvh: 7000 → 8000 (+14.29%)');
  });
});

describe('renderBarChart', () => {
  it('draws one rect per bar and reference lines, on a log scale too', () => {
    for (const log of [false, true]) {
      const svg = renderBarChart({
        title: 't',
        yLabel: 'n',
        log,
        bars: [
          { label: 'a', value: 0 },
          { label: 'b', value: 1e6 },
          { label: 'c', value: Number.NaN },
        ],
        lines: [{ value: 5, label: 'five' }],
      });
      expect(svg.match(/<rect /g)).toHaveLength(3);
      expect(svg).toContain('five');
      for (const n of svgNumbers(svg)) expect(Number.isFinite(n)).toBe(true);
    }
  });

  it('escapes text', () => {
    expect(escapeHtml(`<a href="x">'&'</a>`)).toBe('&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;');
  });
});

describe('saveBenchReport', () => {
  it('writes the JSON and the HTML next to each other', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'bonepress-report-'));
    try {
      const result = makeResult();
      const saved = await saveBenchReport(join(dir, 'results'), result);
      expect(saved.json).toBe(join(dir, 'results', 'bench-2026-01-02T03-04-05Z.json'));
      expect(saved.html).toBe(join(dir, 'results', 'bench-2026-01-02T03-04-05Z.html'));
      const json = JSON.parse(await readFile(saved.json, 'utf8')) as BenchResult;
      expect(json.totals.compressedBytes).toBe(19_000);
      expect(await readFile(saved.html, 'utf8')).toBe(renderHtmlReport(result));
      expect(renderBenchJson({ a: Number.NaN, b: 1 })).toBe('{\n  "a": null,\n  "b": 1\n}\n');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
