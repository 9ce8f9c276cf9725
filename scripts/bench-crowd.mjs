#!/usr/bin/env node
// Crowd decode bench, in headless Chromium and in Node: ms of decode per frame for crowds
// of N characters, each on its own clip and time (src/bench/crowd-timing.ts). Usage:
//   npm run build && taskset -c 1 node scripts/bench-crowd.mjs <folder of .bpk> [options]
// --sizes 100,1000,10000   crowd sizes
// --outputs local,object12 what is written per bone (local pose, 4×4 or 3×4 matrices)
// --frames 120             timed frames per figure
// --no-browser / --no-node skip one side
// --decoder d              Node side: auto (default: the WebAssembly kernel where available) or typescript
// Chromium: $CHROMIUM_PATH or /usr/bin/chromium (.ci/e2e installs Debian's).
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { createServer } from 'node:http';
import { loadavg } from 'node:os';
import { extname, join, normalize, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    sizes: { type: 'string', default: '100,1000,10000' },
    outputs: { type: 'string', default: 'local,object12' },
    frames: { type: 'string', default: '120' },
    'no-browser': { type: 'boolean', default: false },
    'no-node': { type: 'boolean', default: false },
    decoder: { type: 'string', default: 'auto' },
  },
});
const folder = positionals[0] && resolve(positionals[0]);
if (!folder) {
  console.error(
    'usage: node scripts/bench-crowd.mjs <folder of .bpk> [--sizes 100,1000,10000] [--outputs local,object12] [--frames 120]',
  );
  process.exit(2);
}
const repo = fileURLToPath(new URL('..', import.meta.url));
const names = readdirSync(folder)
  .filter((f) => f.endsWith('.bpk'))
  .sort();
const sizes = values.sizes.split(',').map(Number);
const outputs = values.outputs.split(',');
const frames = Number(values.frames);
const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
console.log(`${names.length} clips from ${folder}; load average ${load()}; ${frames} frames per figure`);
const rows = [];

if (!values['no-node']) {
  const { CompressedClip } = await import(new URL('../dist/runtime/compressed-clip.js', import.meta.url).href);
  const { measureCrowd } = await import(new URL('../dist/bench/crowd-timing.js', import.meta.url).href);
  const clips = names.map((n) =>
    CompressedClip.open(new Uint8Array(readFileSync(join(folder, n))), { decoder: values.decoder }),
  );
  const cpuClock = () => {
    const u = process.cpuUsage();
    return (u.user + u.system) / 1000;
  };
  for (const output of outputs) {
    for (const characters of sizes) {
      const engine = `node ${process.version} ${clips[0]?.decoder ?? ''}`;
      rows.push({ engine, ...measureCrowd(clips, { characters, output, frames }) });
      rows.push({ engine: `${engine} CPU`, ...measureCrowd(clips, { characters, output, frames, clock: cpuClock }) });
    }
  }
}

if (!values['no-browser']) {
  const TYPES = {
    '.html': 'text/html; charset=utf-8',
    '.js': 'text/javascript; charset=utf-8',
    '.json': 'application/json',
    '.bpk': 'application/octet-stream',
  };
  // Only what the page needs: dist/, the page, gl-matrix and the clips. Cross-origin
  // isolation gives the page a 5 µs clock instead of 100 µs.
  const roots = {
    '/dist/': join(repo, 'dist'),
    '/bench/crowd/': join(repo, 'bench/crowd'),
    '/node_modules/gl-matrix/': join(repo, 'node_modules/gl-matrix'),
    '/clips/': folder,
  };
  const server = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname);
    const headers = { 'cross-origin-opener-policy': 'same-origin', 'cross-origin-embedder-policy': 'require-corp' };
    if (path === '/clips/index.json') {
      res.writeHead(200, { ...headers, 'content-type': TYPES['.json'] }).end(JSON.stringify(names));
      return;
    }
    const prefix = Object.keys(roots).find((p) => path.startsWith(p));
    const root = prefix && roots[prefix];
    const file = root && normalize(join(root, path.slice(prefix.length) || 'index.html'));
    if (!file || (!file.startsWith(root + sep) && file !== root) || !existsSync(file) || !statSync(file).isFile()) {
      res.writeHead(404).end('not found');
      return;
    }
    res
      .writeHead(200, { ...headers, 'content-type': TYPES[extname(file)] ?? 'application/octet-stream' })
      .end(readFileSync(file));
  });
  await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
  const { chromium } = await import('playwright-core');
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: ['--no-sandbox'],
  });
  try {
    const page = await browser.newPage();
    const url = `http://127.0.0.1:${server.address().port}/bench/crowd/index.html?sizes=${sizes.join(',')}&outputs=${outputs.join(',')}&frames=${frames}`;
    await page.goto(url);
    await page.waitForFunction(() => document.body.dataset.ready, undefined, { timeout: 600_000 });
    const result = await page.evaluate(() => window.crowdResult);
    if (result.error) throw new Error(`page: ${result.error}`);
    const version = browser.version();
    for (const r of result.results)
      rows.push({
        engine: `chromium ${version} ${result.decoder ?? ''}${result.crossOriginIsolated ? '' : ' (coarse clock)'}`,
        ...r,
      });
  } finally {
    await browser.close();
    server.close();
  }
}

console.log('engine                     output    characters  median ms  mean ms   min ms   max ms');
for (const r of rows) {
  console.log(
    `${r.engine.padEnd(26)} ${r.output.padEnd(9)} ${String(r.characters).padStart(10)} ${r.medianMs.toFixed(3).padStart(10)} ${r.meanMs.toFixed(3).padStart(8)} ${r.minMs.toFixed(3).padStart(8)} ${r.maxMs.toFixed(3).padStart(8)}`,
  );
}
console.log(`load average after: ${load()}`);
