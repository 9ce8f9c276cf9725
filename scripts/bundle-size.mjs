#!/usr/bin/env node
// What a web page downloads for bonepress's runtime and three.js plugin: builds a minimal
// app that registers `bonepress/three`'s BonepressGLTFLoaderPlugin with Vite (production,
// minified) twice, with and without the plugin, and prints the difference in minified and
// gzip bytes (three.js itself is in both builds). Usage:
//   npm run build && node scripts/bundle-size.mjs [--dist <dist folder>] [--modules]
// --dist   the built package to measure (default: this repository's dist/)
// --modules also print the plugin's largest modules (each minified and gzipped alone)
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { gzipSync } from 'node:zlib';

import { build, minifySync } from 'vite';

const { values } = parseArgs({ options: { dist: { type: 'string' }, modules: { type: 'boolean', default: false } } });
const repo = fileURLToPath(new URL('..', import.meta.url));
const dist = resolve(values.dist ?? join(repo, 'dist'));

// The app: a GLTFLoader, with the plugin registered or not.
const APP = (withPlugin) => `import { GLTFLoader } from 'three/examples/jsm/loaders/GLTFLoader.js';
${withPlugin ? `import { BonepressGLTFLoaderPlugin } from 'bonepress-three';\n` : ''}const loader = new GLTFLoader();
${withPlugin ? 'loader.register((parser) => new BonepressGLTFLoaderPlugin(parser));\n' : ''}window.loader = loader;
`;

async function bundle(withPlugin) {
  const dir = mkdtempSync(join(tmpdir(), 'bonepress-bundle-'));
  try {
    writeFileSync(join(dir, 'main.js'), APP(withPlugin));
    const out = await build({
      root: dir,
      logLevel: 'silent',
      configFile: false,
      resolve: {
        alias: { 'bonepress-three': join(dist, 'adapters', 'three.js'), three: join(repo, 'node_modules', 'three') },
      },
      build: {
        write: false,
        minify: true,
        lib: undefined,
        rollupOptions: { input: join(dir, 'main.js') },
        modulePreload: false,
      },
    });
    const chunks = (Array.isArray(out) ? out : [out]).flatMap((o) => o.output).filter((o) => o.type === 'chunk');
    // What the page loads up front: the entry and what it imports statically. Chunks loaded
    // by import() (only where needed) are counted apart.
    const byName = new Map(chunks.map((c) => [c.fileName, c]));
    const eager = new Set();
    const visit = (c) => {
      if (eager.has(c)) return;
      eager.add(c);
      for (const name of c.imports) visit(byName.get(name));
    };
    for (const c of chunks) if (c.isEntry) visit(c);
    const size = (list) => {
      const code = list.map((c) => c.code).join('\n');
      return { min: Buffer.byteLength(code), gzip: gzipSync(code, { level: 9 }).length };
    };
    const lazy = chunks.filter((c) => !eager.has(c));
    const modules = [];
    for (const c of chunks)
      for (const [id, m] of Object.entries(c.modules)) {
        const { code } = minifySync(id.split('/').pop(), m.code ?? '');
        modules.push([id, Buffer.byteLength(code), gzipSync(code, { level: 9 }).length, eager.has(c)]);
      }
    return { ...size([...eager]), lazy: lazy.length > 0 ? size(lazy) : undefined, modules };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const without = await bundle(false);
const withPlugin = await bundle(true);
const kB = (n) => `${(n / 1000).toFixed(1)} kB`;
console.log(`three.js GLTFLoader app: ${kB(without.min)} minified, ${kB(without.gzip)} gzip`);
console.log(`with bonepress/three's plugin: ${kB(withPlugin.min)} minified, ${kB(withPlugin.gzip)} gzip`);
console.log(
  `bonepress runtime + three.js plugin: +${kB(withPlugin.min - without.min)} minified, +${kB(withPlugin.gzip - without.gzip)} gzip (${withPlugin.gzip - without.gzip} bytes)`,
);
if (withPlugin.lazy)
  console.log(
    `loaded only where needed (import()): ${kB(withPlugin.lazy.min)} minified, ${kB(withPlugin.lazy.gzip)} gzip`,
  );
if (values.modules) {
  const base = new Set(without.modules.map(([id]) => id));
  const own = withPlugin.modules.filter(([id]) => !base.has(id)).sort((a, b) => b[2] - a[2]);
  console.log('  minified   gzip  module (each alone; * loaded only where needed)');
  for (const [id, min, gzip, eager] of own.slice(0, 24))
    console.log(
      `  ${String(min).padStart(8)} ${String(gzip).padStart(6)}  ${eager ? '' : '* '}${id.replace(repo, '')}`,
    );
}
