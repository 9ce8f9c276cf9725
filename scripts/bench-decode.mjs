#!/usr/bin/env node
// Whole-pose decode time with ACL's cold-cache method, beside the warm figure
// (src/bench/decode-timing.ts, measureColdDecode). Usage:
//   npm run build && taskset -c 1 node scripts/bench-decode.mjs <folder of .bpk> [options]
// --clips a,b,c   clip base names to time with the full method (default: the five of COLD_DECODE_CLIPS)
// --corpus        also the median over every .bpk in the folder, with --corpus-* settings
// --runtime dir   a dist/ folder whose runtime/compressed-clip.js is timed (default: this build)
// --decoder d     auto (default: the WebAssembly kernel where available) or typescript
// --acl file      ACL's figures to print beside ours: the JSON that ACL's acl_decompressor writes
//                 with --benchmark_out=file --benchmark_out_format=json, run on the same machine
//                 (its DecompressPose median per clip, matched by clip name)
// --json          one JSON object on stdout
// Also prints the decode tables' bytes over every .bpk in the folder, as a multiple of the files'.
import { readFileSync, readdirSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    clips: {
      type: 'string',
      default: 'dash_normal_001,run_old_001,walk_tired_002,walk-back_sad_001,dance-short_normal_001',
    },
    corpus: { type: 'boolean', default: false },
    'corpus-times': { type: 'string', default: '10' },
    'corpus-iterations': { type: 'string', default: '2200' },
    'corpus-repetitions': { type: 'string', default: '1' },
    iterations: { type: 'string' },
    repetitions: { type: 'string' },
    times: { type: 'string' },
    runtime: { type: 'string' },
    decoder: { type: 'string', default: 'auto' },
    acl: { type: 'string' },
    json: { type: 'boolean', default: false },
  },
});
const folder = positionals[0];
if (!folder) {
  console.error(
    'usage: node scripts/bench-decode.mjs <folder of .bpk> [--clips a,b] [--corpus] [--runtime dist-dir] [--json]',
  );
  process.exit(2);
}
const here = new URL('../dist/', import.meta.url);
const { measureColdDecode, COLD_DECODE_DEFAULTS, median } = await import(new URL('bench/decode-timing.js', here).href);
const runtimeDir = values.runtime ? pathToFileURL(resolve(values.runtime) + '/') : here;
const { CompressedClip } = await import(new URL('runtime/compressed-clip.js', runtimeDir).href);
// Older builds ignore the decoder option.
const open = (bytes) => CompressedClip.open(bytes, { decoder: values.decoder });

const method = {
  ...COLD_DECODE_DEFAULTS,
  ...(values.iterations ? { iterations: Number(values.iterations) } : {}),
  ...(values.repetitions ? { repetitions: Number(values.repetitions) } : {}),
  ...(values.times ? { times: Number(values.times) } : {}),
};
const files = readdirSync(folder)
  .filter((f) => f.endsWith('.bpk'))
  .sort();
const find = (name) => files.find((f) => f === `${name}.bpk` || f.endsWith(`_${name}.bpk`));
const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
const result = {
  runtime: values.runtime ?? 'dist',
  decoder: values.decoder,
  node: process.version,
  loadBefore: load(),
  method,
  clips: [],
  corpus: null,
};
const log = (line) => {
  if (!values.json) console.log(line);
};
log(
  `runtime ${fileURLToString(runtimeDir)} (decoder ${values.decoder}: ${open(readFileSync(join(folder, files[0]))).decoder ?? 'typescript'}), node ${process.version}, load average ${result.loadBefore}`,
);
log(
  `method: ${method.copies} copies, ${method.flushBytes / 1048576} MiB flush, ${method.iterations} iterations × ${method.repetitions}, ${method.times} times`,
);
const acl = values.acl ? aclFigures(values.acl) : undefined;
log(
  `clip                        cold ns  warm ns   (CPU time: cold ns  warm ns)${acl ? '   ACL cold ns  cold / ACL' : ''}`,
);
for (const name of values.clips.split(',').filter(Boolean)) {
  const file = find(name);
  if (!file) {
    console.error(`no .bpk for ${name} in ${folder}`);
    process.exit(2);
  }
  const t = measureColdDecode(new Uint8Array(readFileSync(join(folder, file))), open, method);
  const aclNs = acl?.find((b) => b.clip === name || b.clip.endsWith(`_${name}`))?.ns;
  result.clips.push({ name, ...t, ...(aclNs !== undefined ? { aclColdNs: aclNs } : {}) });
  const beside =
    aclNs !== undefined
      ? `   ${aclNs.toFixed(0).padStart(11)}  ${(t.coldNs / aclNs).toFixed(2).padStart(10)}`
      : acl
        ? '   (no ACL figure)'
        : '';
  log(
    `${name.padEnd(26)} ${t.coldNs.toFixed(0).padStart(8)} ${t.warmNs.toFixed(0).padStart(8)}              ${t.coldCpuNs.toFixed(0).padStart(8)} ${t.warmCpuNs.toFixed(0).padStart(8)}${beside}`,
  );
}
if (values.corpus) {
  const corpusMethod = {
    ...method,
    times: Number(values['corpus-times']),
    iterations: Number(values['corpus-iterations']),
    repetitions: Number(values['corpus-repetitions']),
  };
  const all = [];
  for (const file of files)
    all.push(measureColdDecode(new Uint8Array(readFileSync(join(folder, file))), open, corpusMethod));
  const med = (key) => median(all.map((t) => t[key]));
  result.corpus = {
    clips: files.length,
    method: corpusMethod,
    coldNs: med('coldNs'),
    warmNs: med('warmNs'),
    coldCpuNs: med('coldCpuNs'),
    warmCpuNs: med('warmCpuNs'),
  };
  const c = result.corpus;
  log(
    `corpus median (${files.length} clips; ${corpusMethod.iterations} iterations × ${corpusMethod.repetitions}, ${corpusMethod.times} times)`,
  );
  log(
    `${'  whole corpus'.padEnd(26)} ${c.coldNs.toFixed(0).padStart(8)} ${c.warmNs.toFixed(0).padStart(8)}              ${c.coldCpuNs.toFixed(0).padStart(8)} ${c.warmCpuNs.toFixed(0).padStart(8)}`,
  );
}
// After the timings: what the open clips' decode tables hold beside the files: the widest view of each buffer
// the tables and their animated tracks keep, the file's own excepted (a kernel clip's view is its place in
// the memory, where the file's copy lies after the tables).
let fileBytes = 0,
  tableBytes = 0;
for (const file of files) {
  const bytes = new Uint8Array(readFileSync(join(folder, file)));
  const buffers = new Map();
  const { tables } = open(bytes);
  for (const view of [...Object.values(tables), ...Object.values(tables.animated)]) {
    if (ArrayBuffer.isView(view) && view.buffer !== bytes.buffer)
      buffers.set(view.buffer, Math.max(buffers.get(view.buffer) ?? 0, view.byteLength));
  }
  fileBytes += bytes.byteLength;
  for (const n of buffers.values()) tableBytes += n;
}
result.tables = { clips: files.length, fileBytes, tableBytes, ratio: tableBytes / fileBytes };
log(
  `decode tables: ${tableBytes} bytes for ${files.length} clips of ${fileBytes} bytes, ${result.tables.ratio.toFixed(3)} × the files`,
);
result.loadAfter = load();
log(`load average after: ${result.loadAfter}`);
if (values.json) console.log(JSON.stringify(result, null, 2));

function fileURLToString(url) {
  return url.href.replace('file://', '');
}

/**
 * ACL's DecompressPose medians from google-benchmark's JSON output: [{ clip, ns }], one per
 * clip file (benchmarks named "<clip file>/<address>/Dir:0/Func:0/..." with aggregate
 * "median"; clip is the file's name without its extension).
 */
function aclFigures(file) {
  const scale = { ns: 1, us: 1e3, ms: 1e6, s: 1e9 };
  const { benchmarks } = JSON.parse(readFileSync(file, 'utf8'));
  if (!Array.isArray(benchmarks)) {
    console.error(`${file}: no "benchmarks" array (google-benchmark JSON expected)`);
    process.exit(2);
  }
  return benchmarks
    .filter((b) => b.aggregate_name === 'median' && /\/Func:0\//.test(b.name) && scale[b.time_unit] !== undefined)
    .map((b) => ({
      clip: b.name.slice(0, b.name.indexOf('/')).replace(/\.[^/]*$/, ''),
      ns: b.real_time * scale[b.time_unit],
    }));
}
