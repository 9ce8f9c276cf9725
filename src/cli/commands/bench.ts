/**
 * `bonepress bench <corpus…>`: the error-regression benchmark. Runs src/bench/run.ts,
 * compares with a baseline when given one, writes JSON and HTML reports when given a
 * folder, and prints a summary; the reference figures of bench/references.json appear only
 * beside a run over the corpus they were measured on.
 */
import { availableParallelism } from 'node:os';

import { Option, type Command } from 'commander';

import {
  BENCH_DEFAULTS,
  BENCH_ERROR,
  BenchError,
  SCALING_RUNS,
  baselineFromResult,
  compareToBaseline,
  formatPercent,
  readAclMeasurement,
  readBaseline,
  referencesFor,
  renderBenchJson,
  runBench,
  saveBenchReport,
  writeBaseline,
  type Baseline,
  type BaselineComparison,
  type BenchProgress,
  type BenchResult,
  type BenchStage,
  type ProcessFigure,
  type ReferenceFigures,
  type SavedReport,
} from '../../bench/index.js';
import {
  BIT_RATE_LADDERS,
  COMPRESS_DEFAULTS,
  OptionsError,
  convertLength,
  parseLength,
  type BitRateLadder,
  type ErrorMetric,
  type LengthUnit,
  type RotationReference,
} from '../../index.js';
import { declareCommand } from '../command-list.js';
import { EXIT, failureText, worstExitCode, type ExitCode } from '../exit-codes.js';
import { parseCountArg, parseLengthArg, parseMetricArg } from '../parse.js';
import { createProgress, type Progress } from '../render/progress.js';
import { formatDistance, formatRatio, renderFields, renderTable, type Column } from '../render/table.js';

/** Ladder names `--ladder` accepts. */
const LADDERS = Object.keys(BIT_RATE_LADDERS) as BitRateLadder[];
/** Rotation references `--rotation-reference` accepts. */
const ROTATION_REFERENCES = ['mean', 'identity'] as const satisfies readonly RotationReference[];

/** Options of `bench` as commander parses them. */
export interface BenchCliOptions {
  jobs: number;
  json?: boolean;
  check?: boolean;
  updateBaseline?: boolean;
  baseline?: string;
  out?: string;
  decode: boolean;
  decodeCold?: boolean;
  /** Effort levels, big skeletons and `compress` as whole processes (`--no-speed` skips them). */
  speed: boolean;
  /** Native ACL's measurement (a JSON file, speed.ts `AclMeasurement`). */
  acl?: string;
  ladder?: BitRateLadder;
  rotationReference?: RotationReference;
  error: string;
  shell: string;
  metric: ErrorMetric;
  seed: number;
  /** The global --debug flag. */
  debug?: boolean;
  quiet?: boolean;
}

/** Per-clip rows are printed up to this many clips; beyond, the HTML report has them. */
const MAX_CLIP_ROWS = 20;

/** Adds the `bench` command to `program`. */
export function registerBenchCommand(program: Command): void {
  declareCommand(program, 'bench')
    .option('--jobs <n>', 'jobs of the pool throughput run (1 skips it)', parseCountArg, availableParallelism())
    .option('--json', 'print the result as one JSON object instead of the summary')
    .option('--baseline <file>', "compare with this baseline (the repository's is bench/baseline.json)")
    .option(
      '--check',
      'fail (exit 1) when the total size grew > 0.5 % over --baseline or a clip is above the threshold',
    )
    .option('--update-baseline', 'write this run to --baseline (after --check passes, when both are given)')
    .option('--out <dir>', 'write the JSON and HTML reports into this folder (default: none)')
    .option('--no-decode', 'skip the decoder timings')
    .option(
      '--decode-cold',
      "also time whole-pose decode with ACL's cold-cache method (5 named clips, corpus median; slow)",
    )
    .option(
      '--no-speed',
      'skip timing compress() at each effort level and on the generated 1,000-joint chain and 300-bone rig, and `compress` as whole processes',
    )
    .option(
      '--acl <file>',
      "native ACL's compression of the same corpus, measured outside the bench (JSON: label, clips, compressSeconds, processSeconds, rawBytes, optional processCpuSeconds), printed beside ours",
    )
    .addOption(new Option('--ladder <ladder>', 'bit-rate ladder (experimental)').choices(LADDERS))
    .addOption(
      new Option('--rotation-reference <ref>', 'rotation reference (experimental)').choices(ROTATION_REFERENCES),
    )
    .option('--error <length>', 'largest allowed virtual-vertex error', parseLengthArg, BENCH_DEFAULTS.error)
    .option('--shell <length>', 'virtual-vertex distance of every bone', parseLengthArg, BENCH_DEFAULTS.shell)
    .option(
      '--metric <metric>',
      'what --error bounds: vertices or shell (the whole-shell error is reported either way)',
      parseMetricArg,
      BENCH_DEFAULTS.metric,
    )
    .option('--seed <n>', 'seed of the random sampling times', parseCountArg, BENCH_DEFAULTS.seed)
    .addHelpText(
      'after',
      [
        '',
        'Reference figures of other tools (bench/references.json) are shown only for the corpus they were measured on.',
        'Errors are printed in the unit of --error. Timings are reported, never checked.',
        'Exit status: 0 ok, 1 --check failed, 2 bad input (corpus, baseline, a file that fails).',
      ].join('\n'),
    )
    .action(async (corpus: string[], _options: BenchCliOptions, command: Command) => {
      process.exitCode = await runBenchCommand(corpus, command.optsWithGlobals<BenchCliOptions>());
    });
}

const STAGE_TEXT: Readonly<Record<BenchStage, string>> = {
  compress: 'compressing in-process (1 worker)',
  pool: 'compressing on the pool',
  process: 'timing `compress` as whole processes',
  speed: 'timing effort levels and big skeletons',
  errors: 'measuring error distribution',
  decode: 'timing decoders (bonepress, three.js, raw copy)',
};

/**
 * Runs `bench` and returns its exit code: {@link EXIT.BAD_INPUT} for a bad corpus or
 * baseline or a corpus file that failed; {@link EXIT.CHECK_FAILED} when `--check` fails
 * (size, threshold or non-deterministic bytes); else {@link EXIT.OK}.
 */
export async function runBenchCommand(corpus: readonly string[], options: BenchCliOptions): Promise<ExitCode> {
  const debug = options.debug === true;
  if ((options.check || options.updateBaseline) && options.baseline === undefined) {
    return reportBenchError(
      new BenchError(
        BENCH_ERROR.NO_BASELINE,
        `${options.check ? '--check' : '--update-baseline'} needs --baseline <file>`,
      ),
    );
  }
  let baseline: Baseline | undefined;
  if (options.baseline !== undefined) {
    try {
      baseline = await readBaseline(options.baseline);
    } catch (error) {
      // A baseline about to be written for the first time need not exist yet.
      const missing = error instanceof BenchError && error.code === BENCH_ERROR.NO_BASELINE;
      if (options.check || !missing || !options.updateBaseline) return reportBenchError(error);
    }
  }

  const progress = stageProgress(options.json === true || options.quiet === true);
  let result: BenchResult;
  try {
    const acl = options.acl !== undefined ? await readAclMeasurement(options.acl) : undefined;
    result = await runBench({
      speed: options.speed,
      acl,
      corpus,
      jobs: options.jobs,
      error: options.error,
      shell: options.shell,
      metric: options.metric,
      ladder: options.ladder,
      rotationReference: options.rotationReference,
      decode: options.decode,
      decodeCold: options.decodeCold === true,
      seed: options.seed,
      onProgress: progress,
    });
  } catch (error) {
    progress.finish();
    if (error instanceof BenchError || error instanceof OptionsError) return reportBenchError(error);
    throw error;
  }
  progress.finish();

  const comparison = baseline ? compareToBaseline(result, baseline) : undefined;
  const references = referencesFor(result);
  const saved = options.out !== undefined ? await saveBenchReport(options.out, result, comparison) : undefined;
  for (const failure of result.failures) process.stderr.write(failureText(failure, debug));

  const checkFailed = options.check === true && (!comparison?.ok || !result.determinism.ok);
  let baselineNote = '';
  if (options.updateBaseline) {
    if (result.failures.length > 0) baselineNote = `baseline not updated: ${result.failures.length} file(s) failed`;
    else if (checkFailed) baselineNote = 'baseline not updated: the check failed';
    else if (options.baseline !== undefined) {
      await writeBaseline(options.baseline, baselineFromResult(result));
      baselineNote = `baseline written to ${options.baseline} (${result.clips.length} clips)`;
    }
  }
  if (options.json) process.stdout.write(renderBenchJson(comparison ? { ...result, comparison } : result));
  else if (options.quiet !== true)
    process.stdout.write(renderBenchSummary(result, comparison, saved, options.check === true, references));
  if (baselineNote) process.stderr.write(`bonepress: ${baselineNote}\n`);
  return worstExitCode([
    result.failures.length > 0 ? EXIT.BAD_INPUT : EXIT.OK,
    checkFailed ? EXIT.CHECK_FAILED : EXIT.OK,
  ]);
}

function reportBenchError(error: unknown): ExitCode {
  process.stderr.write(`bonepress: ${error instanceof Error ? error.message : String(error)}\n`);
  return EXIT.BAD_INPUT;
}

/** Stage lines on stderr (unless `--json`), with a progress bar on a terminal. */
function stageProgress(quiet: boolean): ((p: BenchProgress) => void) & { finish(): void } {
  let bar: Progress | undefined;
  const onProgress = (p: BenchProgress): void => {
    if (quiet) return;
    if (p.done === 0) {
      bar?.finish();
      process.stderr.write(
        `bench: ${STAGE_TEXT[p.stage]}, ${p.total} ${p.stage === 'compress' || p.stage === 'pool' ? 'files' : p.stage === 'process' ? 'runs' : 'clips'}\n`,
      );
      bar = createProgress({ total: p.total });
    }
    bar?.update(p.done, p.label);
  };
  return Object.assign(onProgress, { finish: () => bar?.finish() });
}

function fixed(value: number | null | undefined, digits: number): string {
  return value !== null && value !== undefined && Number.isFinite(value) ? value.toFixed(digits) : '-';
}

/** A reference range `[low, high]` as `low–high`, two decimals. */
function range([low, high]: readonly [number, number]): string {
  return `${low.toFixed(2)}–${high.toFixed(2)}`;
}

/** Columns of the figures table; the reference column only beside the references' corpus. */
function summaryColumns(references: ReferenceFigures | undefined): Column[] {
  const columns: Column[] = [{ header: 'figure' }, { header: 'bonepress', align: 'right' }, { header: 'same run' }];
  if (references) columns.push({ header: `reference (${references.corpus.name}, bench/references.json)` });
  return columns;
}

const CLIP_COLUMNS: readonly Column[] = [
  { header: 'clip' },
  { header: 'bones', align: 'right' },
  { header: 'samples', align: 'right' },
  { header: 'raw bytes', align: 'right' },
  { header: 'compressed', align: 'right' },
  { header: 'ratio', align: 'right' },
  { header: 'max error', align: 'right' },
  { header: 'whole shell', align: 'right' },
  { header: 'p99 error', align: 'right' },
];

/**
 * The text summary: per-clip rows for small corpora, the figures table (with the reference
 * figures when `references` is given: pass {@link referencesFor} the result), the baseline
 * comparison and where the reports went. Lengths are in the unit of the run's threshold.
 */
export function renderBenchSummary(
  result: BenchResult,
  comparison: BaselineComparison | undefined,
  saved: SavedReport | undefined,
  check: boolean,
  references?: ReferenceFigures,
): string {
  const t = result.totals;
  const display = parseLength(result.settings.error).unit;
  const ref = (text: (r: ReferenceFigures) => string): string => (references ? text(references) : '');
  const parts: string[] = [];
  if (result.clips.length <= MAX_CLIP_ROWS) {
    parts.push(
      renderTable(CLIP_COLUMNS, {
        body: result.clips.map((c) => [
          c.id + (c.weightTracks ? ` (${c.weightTracks} weight track${c.weightTracks === 1 ? '' : 's'})` : ''),
          String(c.boneCount),
          String(c.sampleCount),
          String(c.rawBytes),
          String(c.compressedBytes),
          formatRatio(c.ratio),
          formatDistance(c.maxError, c.unit, display) + (c.withinThreshold ? '' : ' !'),
          formatDistance(c.shellMaxError, c.unit, display),
          formatDistance(c.p99Error, c.unit, display),
        ]),
      }),
    );
  }
  const tp = result.throughput;
  const d = result.decode;
  const rows: string[][] = [
    [
      'total ratio',
      formatRatio(t.ratio),
      `without names ${formatRatio(t.ratioWithoutNames)}`,
      ref(
        (r) =>
          `${r.acl.label} ${r.acl.ratio} · ${r.gltfpackC.label} ${r.gltfpackC.ratio} · ${r.gltfpackCC.label} ${r.gltfpackCC.ratio} (goal ≥ ${r.goals.ratio}, then ${r.goals.ratioNext})`,
      ),
    ],
    [
      'compressed bytes',
      String(t.compressedBytes),
      `without names ${t.compressedBytesWithoutNames} · raw ${t.rawBytes}`,
      ref((r) => `raw ${r.corpus.rawBytes}`),
    ],
    [
      'max error',
      t.maxError === null || t.unit === null ? '-' : formatDistance(t.maxError, t.unit, display),
      `${fixed(t.worstErrorShare, 4)} × threshold`,
      ref((r) => `${r.acl.label} ${r.acl.maxErrorCm}cm · ${r.gltfpackC.label} ${r.gltfpackC.maxErrorCm}cm`),
    ],
    [
      'whole-shell error',
      t.shellMaxError === null || t.unit === null ? '-' : formatDistance(t.shellMaxError, t.unit, display),
      result.settings.metric === 'shell'
        ? 'bounded by --metric shell'
        : 'every point of the shell sphere; --metric shell bounds it',
      '',
    ],
    p99Row(result, display),
    [
      'clips within threshold',
      `${fixed(t.withinThresholdShare * 100, 1)}% (${t.withinThreshold}/${t.clips})`,
      `threshold ${result.settings.error}`,
      ref((r) => `${r.acl.label} 0% · ${r.gltfpackC.label} 100% (goal 100%)`),
    ],
    [
      'compression, 1 worker',
      `${fixed(tp.singleWorker.rawMBps, 2)} MB/s`,
      `${fixed(tp.singleWorker.seconds, 2)} s, parse included · ${fixed(tp.singleWorker.rawBytes / 1e6 / tp.singleWorker.cpuSeconds, 2)} MB per CPU-second`,
      ref((r) => `${r.acl.label} native ${r.acl.compressMBps} MB/s (goal ≥ ${r.goals.compressMBps})`),
    ],
    [
      'compression, pool',
      tp.pool ? `${fixed(tp.pool.rawMBps, 2)} MB/s` : '-',
      tp.pool
        ? `--jobs ${tp.pool.jobs}: ${fixed(tp.pool.speedup, 2)}× one worker, ${fixed(tp.pool.seconds, 2)} s · ${fixed(tp.pool.cpuSeconds / tp.pool.seconds, 2)} CPUs busy`
        : 'not run (--jobs 1)',
      ref(
        (r) =>
          `goal ≥ ${fixed(r.goals.poolFactor2Jobs * r.goals.compressMBps, 2)} MB/s with 2 jobs (${r.goals.poolFactor2Jobs} × ${r.goals.compressMBps})`,
      ),
    ],
    ...wholeProcessRows(result),
  ];
  rows.push(...speedRows(result));
  if (d) {
    const three = d.three;
    rows.push(
      [
        'decode sequential µs/pose',
        fixed(d.bonepress.sequentialUs, 3),
        three
          ? `three.js ${fixed(three.sequentialUs, 3)} (${fixed(d.speedupVsThree?.sequential, 2)}×) · raw copy ${fixed(d.rawCopy.sequentialUs, 3)}`
          : `raw copy ${fixed(d.rawCopy.sequentialUs, 3)}`,
        ref(
          (r) =>
            `${r.three.label} ${range(r.three.sequentialUs)} (goal ≥ ${r.goals.speedupVsThreeSequential}× three.js)`,
        ),
      ],
      [
        'decode random µs/pose',
        fixed(d.bonepress.randomUs, 3),
        three
          ? `three.js ${fixed(three.randomUs, 3)} (${fixed(d.speedupVsThree?.random, 2)}×) · raw copy ${fixed(d.rawCopy.randomUs, 3)}`
          : `raw copy ${fixed(d.rawCopy.randomUs, 3)}`,
        ref((r) => `${r.three.label} ${range(r.three.randomUs)} (goal ≥ ${r.goals.speedupVsThreeRandom}× three.js)`),
      ],
      [
        '  in CPU time, sequential',
        fixed(d.bonepress.sequentialCpuUs, 3),
        three
          ? `three.js ${fixed(three.sequentialCpuUs, 3)} (${fixed(d.speedupVsThreeCpu?.sequential, 2)}×) · raw copy ${fixed(d.rawCopy.sequentialCpuUs, 3)}`
          : `raw copy ${fixed(d.rawCopy.sequentialCpuUs, 3)}`,
        'steadier than wall time on a busy machine',
      ],
      [
        '  in CPU time, random',
        fixed(d.bonepress.randomCpuUs, 3),
        three
          ? `three.js ${fixed(three.randomCpuUs, 3)} (${fixed(d.speedupVsThreeCpu?.random, 2)}×) · raw copy ${fixed(d.rawCopy.randomCpuUs, 3)}`
          : `raw copy ${fixed(d.rawCopy.randomCpuUs, 3)}`,
        '',
      ],
    );
    // ACL's cold-cache method (--decode-cold): cold and warm ns per whole pose, wall (CPU).
    const cold = d.cold;
    const ns = (wall: number, cpu: number): string => `${fixed(wall, 0)} (CPU ${fixed(cpu, 0)})`;
    const coldRow = (
      label: string,
      t: { coldNs: number; warmNs: number; coldCpuNs: number; warmCpuNs: number },
    ): string[] => [label, ns(t.coldNs, t.coldCpuNs), `warm ${ns(t.warmNs, t.warmCpuNs)}`, ''];
    if (cold) {
      for (const c of cold.clips) rows.push(coldRow(`decode cold ns/pose ${c.name}`, c));
      if (cold.corpus) rows.push(coldRow(`decode cold ns/pose median of ${cold.corpus.clips}`, cold.corpus));
    }
  }
  const det = result.determinism;
  rows.push([
    'deterministic bytes',
    det.ok ? 'yes' : 'NO',
    `compressed twice: ${det.repeatIdentical === null ? '-' : det.repeatIdentical ? 'same' : 'DIFFERENT'} · pool (${det.poolJobs} jobs): ${det.poolCompared} clips, ${det.mismatches.length} differ`,
    '',
  ]);
  for (const a of result.gltfAssets ?? []) {
    rows.push([
      `glTF ${a.id}`,
      `anim. ${a.sourceAnimation.total} → ${a.outputAnimation.total} B`,
      `${formatRatio(a.sourceAnimation.total / a.outputAnimation.total)}× · file ${a.sourceFileBytes} → ${a.outputFileBytes} B · raw ${a.rawBytes} B (${a.clips} clips)`,
      '',
    ]);
  }
  const columns = summaryColumns(references);
  parts.push(renderTable(columns, { body: rows.map((cells) => cells.slice(0, columns.length)) }));

  const env = result.environment;
  const fields: [string, string][] = [
    ['corpus', `${result.corpus.join(', ')} (${t.clips} clips${t.failures > 0 ? `, ${t.failures} files failed` : ''})`],
    [
      'machine',
      `${env.cpus}× ${env.cpuModel}, Node ${env.node}${env.three ? `, three.js r${env.three}` : ''}; load average ${fixed(env.loadAverage.start, 1)} → ${fixed(env.loadAverage.end, 1)}${Math.max(env.loadAverage.start, env.loadAverage.end) > env.cpus ? ' (busy: timings are disturbed)' : ''}; ${fixed(result.seconds, 1)} s`,
    ],
  ];
  if (d?.cold) {
    const m = d.cold.method,
      cm = d.cold.corpusMethod;
    fields.push([
      'decode cold',
      `ACL's method: ${m.copies} copies, ${m.flushBytes / 1048576} MiB flushed between batches, ${m.iterations} iterations × ${m.repetitions} repetitions, ${m.times} evenly spaced times; corpus median with ${cm.iterations} × ${cm.repetitions}, ${cm.times} times`,
    ]);
  }
  if (d)
    fields.push([
      'decode',
      `medians over ${d.clips} clips; ${result.settings.playbackHz} Hz playback, ${result.settings.randomTimes} random times (seed ${result.settings.seed})${d.threeUnavailable ? `; ${d.threeUnavailable}` : ''}`,
    ]);
  if (comparison) {
    const growth = Number.isFinite(comparison.growth) ? formatPercent(comparison.growth) : '-';
    fields.push([
      'baseline',
      `${comparison.compared} clips compared: ${comparison.before} → ${comparison.after} bytes (${growth}, tolerance ${(comparison.tolerance * 100).toFixed(1)}%)${check ? (comparison.ok && det.ok ? ' — check passed' : ' — CHECK FAILED') : ''}`,
    ]);
    if (comparison.grown.length > 0) {
      fields.push([
        'clips that grew',
        comparison.grown
          .slice(0, 10)
          .map((c) => `${c.id} ${formatPercent(c.growth)}`)
          .join(', ') + (comparison.grown.length > 10 ? `, … ${comparison.grown.length - 10} more` : ''),
      ]);
    }
    if (comparison.missing.length > 0) fields.push(['missing clips', comparison.missing.join(', ')]);
    if (comparison.added.length > 0) fields.push(['new clips', `${comparison.added.length} not in the baseline`]);
    if (comparison.settingsDiffer.length > 0) fields.push(['settings differ', comparison.settingsDiffer.join(', ')]);
    for (const problem of comparison.problems) fields.push(['problem', problem]);
  } else if (check) {
    fields.push(['baseline', 'none — CHECK FAILED']);
  }
  if (!det.ok)
    fields.push([
      'problem',
      `compressed bytes are not deterministic${det.mismatches.length > 0 ? `: ${det.mismatches.slice(0, 5).join(', ')}` : ''}`,
    ]);
  if (saved) fields.push(['report', `${saved.html}`], ['json', saved.json]);
  parts.push(renderFields(fields));
  return parts.join('\n');
}

/** Rows of the effort levels, the big skeletons against the corpus, and native ACL beside one worker. */
function speedRows(result: BenchResult): string[][] {
  const speed = result.speed;
  if (!speed) return [];
  const rows: string[][] = [];
  const standard = speed.efforts?.find((e) => e.effort === COMPRESS_DEFAULTS.effort);
  for (const e of speed.efforts ?? []) {
    const versus =
      standard && e !== standard
        ? ` · ${formatPercent(e.compressedBytes / standard.compressedBytes - 1)} bytes, ${fixed(standard.seconds / e.seconds, 2)}× the speed (CPU ${fixed(standard.cpuSeconds / e.cpuSeconds, 2)}×) of default`
        : '';
    rows.push([
      `effort ${e.effort}`,
      formatRatio(e.ratio),
      `${e.compressedBytes} B · compress() ${fixed(e.seconds, 2)} s (CPU ${fixed(e.cpuSeconds, 2)}), ${fixed(e.secondsPerMillion, 2)} s per M bone-samples · ${e.withinThreshold}/${e.clips} within${versus}`,
      '',
    ]);
  }
  for (const g of speed.scaling ?? []) {
    const versus = standard
      ? ` · ${fixed(g.secondsPerMillion / standard.secondsPerMillion, 2)}× the corpus's (CPU ${fixed(g.cpuSecondsPerMillion / standard.cpuSecondsPerMillion, 2)}×)`
      : '';
    rows.push([
      `big skeleton ${g.name}`,
      `${fixed(g.secondsPerMillion, 2)} s/M`,
      `${g.boneCount} bones × ${g.sampleCount} samples: ${fixed(g.seconds, 2)} s (CPU ${fixed(g.cpuSeconds, 2)}; median of ${SCALING_RUNS}), ratio ${formatRatio(g.ratio)}, max ${formatDistance(g.maxError, 'cm')}${g.withinThreshold ? '' : ' !'}${versus}`,
      '',
    ]);
  }
  const acl = speed.acl;
  if (acl) {
    // The command as a user runs it when it was timed (cli-timing.ts), else the in-process batch.
    const whole = result.throughput.wholeProcess?.one;
    const single = whole ?? result.throughput.singleWorker;
    const what = whole ? 'compress --jobs 1' : '1 worker in-process';
    const cpu =
      acl.processCpuSeconds !== undefined
        ? ` · in CPU time: its loop ${fixed(acl.processCpuSeconds, 2)} s, bonepress ${fixed(single.cpuSeconds / acl.processCpuSeconds, 2)}× it`
        : '';
    rows.push([
      `native ${acl.label}`,
      `${fixed(acl.rawBytes / 1e6 / acl.compressSeconds, 2)} MB/s`,
      `its compression timer ${fixed(acl.compressSeconds, 2)} s, its whole loop ${fixed(acl.processSeconds, 2)} s (${acl.clips} clips, measured outside the bench) · bonepress ${what} ${fixed(single.seconds, 2)} s: ${fixed(single.seconds / acl.compressSeconds, 2)}× ACL's compression, ${fixed(single.seconds / acl.processSeconds, 2)}× its loop${cpu}`,
      '',
    ]);
  }
  return rows;
}

/** The `compress` command timed as whole processes (bench/cli-timing.ts): one job, then the pool's jobs. */
function wholeProcessRows(result: BenchResult): string[][] {
  const timing = result.throughput.wholeProcess;
  if (!timing) return [];
  const rawMB = result.totals.rawBytes / 1e6;
  const row = (label: string, f: ProcessFigure, versus: string): string[] => [
    label,
    `${fixed(f.seconds, 2)} s`,
    `${fixed(rawMB / f.seconds, 2)} MB/s · CPU ${fixed(f.cpuSeconds, 2)} s · median of ${f.rounds.length} (${f.rounds.map((s) => fixed(s, 2)).join(', ')})${versus}`,
    '',
  ];
  const rows = [row('compress --jobs 1, whole process', timing.one, '')];
  if (timing.pool)
    rows.push(
      row(
        `compress --jobs ${timing.pool.jobs}, whole process`,
        timing.pool,
        ` · ${fixed(timing.speedup, 2)}× --jobs 1`,
      ),
    );
  if (timing.split)
    rows.push(
      row(
        `${timing.split.jobs} × compress --jobs 1 at once`,
        timing.split,
        ` · ${fixed(timing.splitSpeedup, 2)}× --jobs 1 · each on a share of the files: what ${timing.split.jobs} jobs get here sharing nothing`,
      ),
    );
  return rows;
}

/** The p99 row: 99th-percentile error of each clip (over its bones × samples), median and largest over clips. */
function p99Row(result: BenchResult, display: LengthUnit): string[] {
  const p99 = result.clips
    .map((c) => convertLength({ value: c.p99Error, unit: c.unit as LengthUnit }, display))
    .sort((x, y) => x - y);
  if (p99.length === 0) return ['p99 error, per clip', '-', '', ''];
  const median = p99[(p99.length - 1) >> 1];
  return [
    'p99 error, per clip',
    `median ${formatDistance(median, display)}`,
    `largest ${formatDistance(p99[p99.length - 1], display)}`,
    '',
  ];
}
