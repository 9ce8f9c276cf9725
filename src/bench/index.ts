/**
 * The bench engine's one entry, for the `bench` command: running a corpus (run.ts), the
 * baseline gate (compare.ts), the reference figures (references.ts) and the reports
 * (report-html.ts).
 */
export {
  BENCH_DEFAULTS,
  BENCH_ERROR,
  BENCH_STAGE,
  BenchError,
  CORPUS_EXTENSIONS,
  listCorpus,
  runBench,
  totalsOf,
} from './run.js';
export type {
  BenchClip,
  BenchErrorCode,
  BenchOptions,
  BenchProgress,
  BenchResult,
  BenchSettings,
  BenchStage,
  BenchTotals,
} from './run.js';
export { measureGltfAssets, type BenchGltfAsset } from './gltf-assets.js';
export type { CliTiming, ProcessFigure } from './cli-timing.js';
export { SCALING_RUNS, readAclMeasurement } from './speed.js';
export type { AclMeasurement, BenchSpeed, EffortFigure, ScalingFigure } from './speed.js';
export {
  BASELINE_VERSION,
  SIZE_GROWTH_TOLERANCE,
  baselineFromResult,
  compareToBaseline,
  formatPercent,
  readBaseline,
  writeBaseline,
} from './compare.js';
export type { Baseline, BaselineComparison } from './compare.js';
export { REFERENCES_URL, loadReferences, referencesFor } from './references.js';
export type { ReferenceFigures } from './references.js';
export { renderBenchJson, renderHtmlReport, saveBenchReport } from './report-html.js';
export type { SavedReport } from './report-html.js';
