#!/usr/bin/env -S node --expose-gc
/**
 * What `bonepress/babylon` costs a Babylon.js page (docs/babylon.md):
 *
 * - bundle: the extension and the runtime decoder as the example page bundles them (Vite,
 *   minified, Babylon left out as the page loads it anyway), raw and gzip;
 * - memory per playing clip: the JS heap an asset's animations take in Babylon (NullEngine,
 *   after a full GC), the original with Babylon's own keyframes against the compressed asset
 *   through the extension in both modes, each less the same asset loaded without animations,
 *   divided by the number of animations. Each asset is loaded LOADS times so that one-off
 *   allocations average out.
 *
 *   npm run bench:babylon   (npm run build && node --expose-gc scripts/babylon-sizes.mjs)
 *
 * Assets: the e2e test's skinned character (two mocap fixtures, viewer/test/skinned-glb.ts,
 * loaded through Vite's module runner), and Khronos Fox and CesiumMan from ../shared when
 * present; compressed with the built CLI at its defaults.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

import { NullEngine } from '@babylonjs/core/Engines/nullEngine.js';
import { LoadAssetContainerAsync } from '@babylonjs/core/Loading/sceneLoader.js';
import { Logger } from '@babylonjs/core/Misc/logger.js';
import { Scene } from '@babylonjs/core/scene.js';
import '@babylonjs/loaders/glTF/2.0/index.js';
import { NodeIO } from '@gltf-transform/core';
import { readClips } from 'bonepress';
import { BONEPRESS_EXTENSION, registerBonepressExtension } from 'bonepress/babylon';
import { build, runnerImport } from 'vite';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const CLI = join(ROOT, 'dist/cli/main.js');
const LOADS = 8;

if (typeof globalThis.gc !== 'function') {
  console.error('babylon-sizes: run with node --expose-gc');
  process.exit(2);
}

/** The extension and the runtime as a page bundles them: minified bytes and gzip bytes. */
async function bundleSize() {
  const dir = join(ROOT, 'out', 'babylon-bundle');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'entry.js'), "export { registerBonepressExtension } from 'bonepress/babylon';\n");
  const result = await build({
    configFile: false,
    logLevel: 'error',
    root: dir,
    build: {
      write: false,
      minify: true,
      target: 'es2022',
      lib: { entry: join(dir, 'entry.js'), formats: ['es'], fileName: 'entry' },
      rollupOptions: { external: [/^@babylonjs\//] },
    },
  });
  const chunks = (Array.isArray(result) ? result : [result])
    .flatMap((r) => r.output)
    .filter((o) => o.type === 'chunk' || o.fileName.endsWith('.wasm'));
  const code = Buffer.concat(chunks.map((c) => Buffer.from(c.type === 'chunk' ? c.code : c.source)));
  rmSync(dir, { recursive: true, force: true });
  return { bytes: code.length, gzip: gzipSync(code, { level: 9 }).length };
}

async function tsModule(path) {
  const { module } = await runnerImport(join(ROOT, path), { configFile: false, logLevel: 'error' });
  return module;
}

/** The asset without animations (the baseline the per-clip figures subtract). */
async function withoutAnimations(glb) {
  const io = new NodeIO();
  const doc = await io.readBinary(glb);
  for (const animation of doc.getRoot().listAnimations()) animation.dispose();
  return io.writeBinary(doc);
}

function compressWithCli(name, glb, work) {
  const input = join(work, `${name}.glb`),
    output = join(work, `${name}.bp.glb`);
  writeFileSync(input, glb);
  try {
    execFileSync(process.execPath, [CLI, 'compress', input, '-o', output], { stdio: 'pipe' });
  } catch (e) {
    // Exit 1: written, with a clip above the threshold.
    if (e.status !== 1) throw e;
  }
  return new Uint8Array(readFileSync(output));
}

/** JS heap taken by LOADS loads of `glb` in `mode`, after a full GC, per load; and the number of animation groups. */
async function heapOf(engine, glb, mode) {
  globalThis.gc();
  globalThis.gc();
  const before = process.memoryUsage().heapUsed;
  const scene = new Scene(engine);
  let groups = 0;
  for (let i = 0; i < LOADS; i++) {
    const container = await LoadAssetContainerAsync(glb, scene, {
      pluginExtension: '.glb',
      pluginOptions: {
        gltf: { skipMaterials: true, animationStartMode: 0, extensionOptions: { [BONEPRESS_EXTENSION]: { mode } } },
      },
    });
    container.addAllToScene();
    // Playing: each group is started, so Babylon has made its runtime animations.
    for (const g of container.animationGroups) g.start(true);
    scene.animate();
    groups = container.animationGroups.length;
  }
  globalThis.gc();
  globalThis.gc();
  const used = process.memoryUsage().heapUsed - before;
  scene.dispose();
  return { perLoad: used / LOADS, groups };
}

const kb = (n) => `${(n / 1024).toFixed(1)} KiB`;

const main = async () => {
  Logger.LogLevels = Logger.NoneLogLevel;
  const bundle = await bundleSize();
  console.log(
    `bundle: bonepress/babylon extension + runtime, minified ${kb(bundle.bytes)}, gzip ${kb(bundle.gzip)} (Babylon excluded)`,
  );

  const { skinnedDocument } = await tsModule('viewer/test/skinned-glb.ts');
  const fixtures = ['dataset-1_walk_happy_002.bvh', 'dataset-1_run_active_001.bvh'].map((f) =>
    join(ROOT, 'fixtures', f),
  );
  const clips = (await Promise.all(fixtures.map(async (f) => readClips(f, readFileSync(f))))).flat();
  const assets = [
    { name: 'e2e-character', glb: await new NodeIO().writeBinary(skinnedDocument(clips, { metresPerUnit: 0.01 })) },
  ];
  for (const model of ['Fox', 'CesiumMan']) {
    const path = join(ROOT, '..', 'shared', 'data', 'khronos-samples', model, `${model}.glb`);
    try {
      assets.push({ name: model, glb: new Uint8Array(readFileSync(path)) });
    } catch {
      console.log(`${model}: ${path} is absent, skipped`);
    }
  }

  registerBonepressExtension();
  const engine = new NullEngine();
  const work = mkdtempSync(join(tmpdir(), 'bonepress-babylon-sizes-'));
  try {
    console.log(
      `memory per playing clip (JS heap after GC, mean of ${LOADS} loads, less the asset without animations):`,
    );
    console.log(
      'asset            clips  Babylon keyframes (original)  decode mode  resident mode  resident / keyframes',
    );
    for (const { name, glb } of assets) {
      const compressed = compressWithCli(name, glb, work);
      const base = await heapOf(engine, await withoutAnimations(glb), 'decode');
      const original = await heapOf(engine, glb, 'decode');
      const decoded = await heapOf(engine, compressed, 'decode');
      const resident = await heapOf(engine, compressed, 'resident');
      const per = (r) => (r.perLoad - base.perLoad) / r.groups;
      console.log(
        `${name.padEnd(16)} ${String(original.groups).padStart(5)}  ${kb(per(original)).padStart(28)}  ${kb(per(decoded)).padStart(11)}  ${kb(per(resident)).padStart(13)}  ${(per(resident) / per(original)).toFixed(3).padStart(20)}`,
      );
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
    engine.dispose();
  }
};

await main();
