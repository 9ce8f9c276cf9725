#!/usr/bin/env node
/**
 * Library bench (docs/library.md): a synthetic library of the corpus's clips
 * replicated with small perturbations, built with `compress --manifest` four ways (first
 * run with --jobs 1 and 2, unchanged second run, after touching 1 %), with wall time, raw
 * MB/s and peak RSS of each. Plain ESM over the build:
 *
 *   npm run build && node bench/library.mjs [corpus-dir] [--count 10000] [--touch 0.01]
 *     [--first-jobs 1,2] [--seed 1] [--tmp dir] [--keep] [--json out.json]
 *
 * Default corpus: the development corpus beside the repository when present (bench/README.md),
 * else fixtures/. The library is
 * generated in a temp folder (about 2.2 GB for 10,000 clips) and removed at the end.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const flag = (name, fallback) => {
  const i = args.indexOf(`--${name}`);
  if (i < 0) return fallback;
  const v = args[i + 1];
  args.splice(i, 2);
  return v;
};
const toggle = (name) => {
  const i = args.indexOf(`--${name}`);
  if (i < 0) return false;
  args.splice(i, 1);
  return true;
};
const count = Number(flag('count', '10000'));
const touchFraction = Number(flag('touch', '0.01'));
const seed = Number(flag('seed', '1'));
const firstRunJobs = flag('first-jobs', '1,2').split(',').map(Number);
const tempRoot = flag('tmp', undefined);
const jsonOut = flag('json', undefined);
const keep = toggle('keep');
const defaultCorpus = existsSync(join(here, '..', '..', 'shared', 'data', 'bandai-ds1'))
  ? join(here, '..', '..', 'shared', 'data', 'bandai-ds1')
  : join(here, '..', 'fixtures');
const corpus = resolve(args[0] ?? defaultCorpus);

const { runLibraryBench, renderLibraryBench } = await import(
  pathToFileURL(join(here, '..', 'dist', 'bench', 'library.js')).href
);
const result = await runLibraryBench({
  corpus,
  count,
  touchFraction,
  firstRunJobs,
  seed,
  tempRoot,
  keep,
  log: (line) => process.stderr.write(`${line}\n`),
});
process.stdout.write(renderLibraryBench(result));
if (jsonOut) writeFileSync(jsonOut, `${JSON.stringify(result, null, 2)}\n`);
