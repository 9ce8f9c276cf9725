#!/usr/bin/env node
/**
 * Animation bytes at equal error, per glTF asset (the table of docs/gltf.md, "Size at
 * equal error"): the source; gltfpack -c and -cc; glTF-Transform resample + meshopt;
 * and bonepress at the largest error that gltfpack -c reaches on that asset.
 *
 *   npm run build && node scripts/gltf-sizes.mjs [--out out/gltf-sizes] [--json]
 *   npm run build && node scripts/gltf-sizes.mjs --khronos [--out out/gltf-khronos] [--json]
 *
 * `--khronos` makes the table of docs/gltf.md, "The Khronos sample models" instead: per model
 * of ../shared/data/khronos-samples (generated rigs of the same shapes without it,
 * test/khronos/harness.ts), its animations, their bytes in the source, in bonepress's
 * `.bp.glb` (default settings) and in `gltfpack -c`'s output, bonepress's largest distance
 * from three.js's own playback of the source through the GLTFLoader plugin (the harness of
 * the tests, at random times and around every key), and gltfpack's error as `verify`
 * measures it (gltfpack renumbers nodes, so the three.js comparison by node does not apply).
 *
 * The assets are made here (nothing large is committed): the eight mocap fixtures as one
 * skinned character in metres (viewer/test/skinned-glb.ts), and the Mixamo-style, Blender-style
 * and scene rigs of test/utils/gltf-rigs.ts. The TypeScript generators load through Vite's
 * module runner. gltfpack (npm `gltfpack`) and the glTF-Transform CLI (npm `@gltf-transform/cli`)
 * run through npx at pinned versions; once npx has them cached, add `--offline` to NPX_FLAGS.
 *
 * Errors are `bonepress verify <source> <other> --clip <animation> --json` (the compressor's
 * metric: virtual vertices at the 3 cm shell, object space, at the samples), the largest over
 * the asset's animations, in metres. bonepress's error is the larger of what `compress --json`
 * reports per clip (the same metric, at the samples and between them) and `verify` of the same
 * clips written as loose .bpk files (verify does not read the extension). Animation bytes count what the file
 * stores: the accessors animation samplers read (their share of a meshopt-compressed buffer
 * view's compressed bytes when the view is compressed), the compressed clips' buffer views, and
 * the JSON that describes animations (animations[], their accessors and buffer views, the
 * bonepress root object), as `animationBytes` (src/gltf-transform/sizes.ts) counts them.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import { NodeIO } from '@gltf-transform/core';
import { readClips } from 'bonepress';
import { runnerImport } from 'vite';

import { glbJson, storedAnimationBytes } from './stored-animation-bytes.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const CLI = join(ROOT, 'dist/cli/main.js');
const GLTFPACK = 'gltfpack@1.3.0';
const GLTF_TRANSFORM = '@gltf-transform/cli@4.5.1';
const NPX_FLAGS = (process.env.NPX_FLAGS ?? '--yes').split(' ').filter(Boolean);

const args = process.argv.slice(2);
const KHRONOS = args.includes('--khronos');
const outIndex = args.indexOf('--out');
const OUT = resolve(outIndex >= 0 ? args[outIndex + 1] : join(ROOT, KHRONOS ? 'out/gltf-khronos' : 'out/gltf-sizes'));
const JSON_ONLY = args.includes('--json');
mkdirSync(OUT, { recursive: true });

const log = (line) => {
  if (!JSON_ONLY) process.stderr.write(`${line}\n`);
};
const run = (command, argv) =>
  execFileSync(command, argv, { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 1 << 26 });
const npx = (pkg, bin, argv) => run('npx', [...NPX_FLAGS, '-p', pkg, bin, ...argv]);

// ---------------------------------------------------------------------------------------
// Assets

async function tsModule(path) {
  const { module } = await runnerImport(join(ROOT, path), { configFile: false, logLevel: 'error' });
  return module;
}

async function makeAssets() {
  const { skinnedDocument } = await tsModule('viewer/test/skinned-glb.ts');
  const { makeRigs, makeSceneRig } = await tsModule('test/utils/gltf-rigs.ts');
  const fixtures = readdirSync(join(ROOT, 'fixtures'))
    .filter((f) => f.endsWith('.bvh'))
    .sort();
  const clips = [];
  for (const f of fixtures) clips.push(...(await readClips(f, readFileSync(join(ROOT, 'fixtures', f)))));
  const io = new NodeIO();
  const rigs = await makeRigs();
  return [
    {
      name: 'bandai',
      about: `the ${clips.length} mocap fixtures as one skinned character (metres)`,
      glb: await io.writeBinary(skinnedDocument(clips, { metresPerUnit: 0.01 })),
    },
    {
      name: 'mixamo',
      about: 'makeRigs() "mixamo" (keys from 0.1 s, 30 Hz)',
      glb: rigs.find((r) => r.name === 'mixamo').glb,
    },
    {
      name: 'blender',
      about: 'makeRigs() "blender" (0.01 armature scale, 24 Hz)',
      glb: rigs.find((r) => r.name === 'blender').glb,
    },
    {
      name: 'scene',
      about: 'makeSceneRig() (two skins, morph weight, camera)',
      glb: await makeSceneRig({ texture: false }),
    },
  ];
}

// ---------------------------------------------------------------------------------------
// Counting

/**
 * The largest `verify` error of `other` against `source` over the animations `names`. When
 * the other file was resampled to another rate (gltfpack resamples at 30 Hz), the source is
 * resampled at that rate for the comparison (`verify --rate`), so both sides are compared at
 * the other file's keys; `rates` collects the rates so used.
 */
function maxVerifyError(source, other, names, rates = new Set()) {
  let max = 0;
  for (const name of names) {
    const attempt = (extra) => {
      try {
        return run('node', [CLI, 'verify', source, other, '--clip', name, '--json', '--quiet', ...extra]);
      } catch (e) {
        // Exit 1 is "above the threshold": the JSON is still printed.
        if (e.status === 1 && e.stdout) return e.stdout;
        const message = String(e.stderr || e.message);
        const rate = /: \d+ samples at ([\d.]+) Hz, but /.exec(message);
        if (rate && extra.length === 0) {
          rates.add(Number(rate[1]));
          return attempt(['--rate', rate[1]]);
        }
        throw new Error(`verify ${basename(other)} --clip ${name}: ${message}`);
      }
    };
    max = Math.max(max, JSON.parse(attempt([])).maxError);
  }
  return max;
}

// ---------------------------------------------------------------------------------------
// --khronos: the sample models (test/khronos/harness.ts reads them from ../shared)

/** `compress --json` of an input; exit 1 (a clip above the threshold) still prints the report. */
function compressReport(argv) {
  try {
    return JSON.parse(run('node', [CLI, 'compress', ...argv, '--json', '--quiet']));
  } catch (e) {
    if (e.status === 1 && e.stdout) return JSON.parse(e.stdout);
    throw new Error(`compress ${argv.join(' ')}: ${String(e.stderr || e.message)}`);
  }
}

async function khronosTable() {
  const harness = await tsModule('test/khronos/harness.ts');
  const { assets, khronos } = await harness.corpusAssets(OUT);
  const rows = [];
  for (const asset of assets) {
    const json = await harness.assetJson(asset.file);
    const out = join(OUT, `${asset.name}.bp.glb`);
    const report = compressReport([asset.file, '-o', out]);
    const packC = join(OUT, `${asset.name}.gltfpack-c.glb`);
    npx(GLTFPACK, 'gltfpack', ['-i', asset.file, '-o', packC, '-c']);
    const { errors } = await harness.playbackErrors(asset.file, out);
    // gltfpack renumbers nodes, so its error is verify's (the compressor's metric at the source's samples), by animation name.
    const names = (json.animations ?? []).map((a) => a.name).filter((name) => name);
    let packError;
    try {
      packError =
        names.length === (json.animations ?? []).length ? maxVerifyError(asset.file, packC, names) : undefined;
    } catch (e) {
      log(`${asset.name}: gltfpack -c not verified: ${e.message.split('\n')[0]}`);
    }
    rows.push({
      asset: asset.name,
      animations: json.animations?.length ?? 0,
      compressed: report.animations.length,
      kept: report.kept.length,
      source: storedAnimationBytes(json).total,
      bonepress: storedAnimationBytes(glbJson(readFileSync(out))).total,
      gltfpack: storedAnimationBytes(glbJson(readFileSync(packC))).total,
      bonepressError: Math.max(0, ...errors.map((e) => e.error)),
      gltfpackError: packError,
    });
    log(`${asset.name}: done`);
  }
  if (JSON_ONLY) {
    process.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
    return;
  }
  const n = (x) => Math.round(x).toLocaleString('en-US');
  const cm = (m) => (m === undefined ? '–' : (m * 100).toFixed(4));
  const lines = [
    `| model${khronos ? '' : ' (generated: ../shared is absent)'} | animations (compressed) | source | bonepress | gltfpack -c | bonepress max error, three.js (cm) | gltfpack -c max error, verify (cm) |`,
    '|---|---|---|---|---|---|---|',
  ];
  for (const r of rows) {
    lines.push(
      `| ${r.asset} | ${r.animations} (${r.compressed}) | ${n(r.source)} | ${n(r.bonepress)} | ${n(r.gltfpack)} | ${cm(r.bonepressError)} | ${cm(r.gltfpackError)} |`,
    );
  }
  const total = (key) => rows.reduce((sum, r) => sum + r[key], 0);
  lines.push(
    `| **total** | ${total('animations')} (${total('compressed')}) | ${n(total('source'))} | ${n(total('bonepress'))} | ${n(total('gltfpack'))} | | |`,
  );
  process.stdout.write(`${lines.join('\n')}\n`);
  writeFileSync(join(OUT, 'khronos.json'), `${JSON.stringify(rows, null, 2)}\n`);
}

if (KHRONOS) {
  await khronosTable();
  process.exit(0);
}

const assets = await makeAssets();
const rows = [];
for (const asset of assets) {
  const dir = join(OUT, asset.name);
  mkdirSync(dir, { recursive: true });
  const source = join(dir, 'source.glb');
  writeFileSync(source, asset.glb);
  const animationCount = glbJson(asset.glb).animations?.length ?? 0;
  // Errors are measured on the clips bonepress's reader makes (skeletal animations).
  const names = (await readClips('source.glb', asset.glb, { onWarning: () => {} })).map((c) => c.name);
  log(`${asset.name}: ${animationCount} animations, ${names.length} skeletal`);
  // Which clips bonepress compresses (animations that move a skeleton), from its own report.
  const variants = [];
  const add = (label, file, error, rates) => {
    const bytes = readFileSync(file);
    variants.push({
      label,
      file: basename(file),
      fileBytes: bytes.byteLength,
      animation: storedAnimationBytes(glbJson(bytes)),
      maxError: error,
      ...(rates?.size ? { verifiedAtRates: [...rates] } : {}),
    });
  };
  add('source', source, 0);

  const packC = join(dir, 'gltfpack-c.glb');
  npx(GLTFPACK, 'gltfpack', ['-i', source, '-o', packC, '-c']);
  const packCRates = new Set();
  const packCError = maxVerifyError(source, packC, names, packCRates);
  add('gltfpack -c', packC, packCError, packCRates);
  const packCC = join(dir, 'gltfpack-cc.glb');
  npx(GLTFPACK, 'gltfpack', ['-i', source, '-o', packCC, '-cc']);
  const packCCRates = new Set();
  add('gltfpack -cc', packCC, maxVerifyError(source, packCC, names, packCCRates), packCCRates);

  const resampled = join(dir, 'gltf-transform-resample.glb');
  const meshopt = join(dir, 'gltf-transform-meshopt.glb');
  npx(GLTF_TRANSFORM, 'gltf-transform', ['resample', source, resampled]);
  npx(GLTF_TRANSFORM, 'gltf-transform', ['meshopt', resampled, meshopt]);
  const meshoptRates = new Set();
  add('gltf-transform resample+meshopt', meshopt, maxVerifyError(source, meshopt, names, meshoptRates), meshoptRates);

  // bonepress at gltfpack -c's error (metres; floored at 1 µm so that a lossless competitor
  // does not ask for an impossible bound).
  const target = Math.max(packCError, 1e-6);
  const bp = join(dir, 'bonepress.glb');
  const report = JSON.parse(
    run('node', [CLI, 'compress', source, '-o', bp, '--error', `${target}m`, '--json', '--quiet']),
  );
  const clips = report.animations;
  // verify reads no BONEPRESS_animation_compression asset, so the same clips are also written
  // as loose .bpk files (same settings, same bit rates) and verified one by one.
  const loose = join(dir, 'bonepress-bpk');
  rmSync(loose, { recursive: true, force: true });
  run('node', [CLI, 'compress', source, '-o', `${loose}/`, '--error', `${target}m`, '--quiet']);
  let verified = 0;
  for (const f of readdirSync(loose).filter((f) => f.endsWith('.bpk'))) {
    let out;
    try {
      out = run('node', [CLI, 'verify', source, join(loose, f), '--json', '--quiet']);
    } catch (e) {
      if (e.status !== 1 || !e.stdout) throw e;
      out = e.stdout;
    }
    verified = Math.max(verified, JSON.parse(out).maxError);
  }
  const bpError = Math.max(verified, ...clips.map((c) => c.stats.maxError));
  add(`bonepress --error ${target.toPrecision(3)}m`, bp, bpError);
  rows.push({
    asset: asset.name,
    about: asset.about,
    animations: animationCount,
    skeletalAnimations: names.length,
    compressedClips: clips.length,
    target,
    variants,
  });
}

if (JSON_ONLY) {
  process.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
} else {
  const n = (x) => Math.round(x).toLocaleString('en-US');
  const mm = (m) => (m * 1000).toFixed(3);
  const labels = rows[0].variants.map((v) => v.label.replace(/ --error.*/, ''));
  const lines = [];
  lines.push(`| asset | ${labels.join(' | ')} |`, `|---|${labels.map(() => '---').join('|')}|`);
  for (const r of rows)
    lines.push(
      `| ${r.asset} (anim. bytes / max error mm) | ${r.variants.map((v) => (v.label === 'source' ? n(v.animation.total) : `${n(v.animation.total)} / ${mm(v.maxError)}`)).join(' | ')} |`,
    );
  const totals = labels.map((_, i) => rows.reduce((s, r) => s + r.variants[i].animation.total, 0));
  lines.push(`| **total** | ${totals.map(n).join(' | ')} |`);
  lines.push('', `| asset (whole file bytes) | ${labels.join(' | ')} |`, `|---|${labels.map(() => '---').join('|')}|`);
  for (const r of rows) lines.push(`| ${r.asset} | ${r.variants.map((v) => n(v.fileBytes)).join(' | ')} |`);
  const c = labels.indexOf('gltfpack -c'),
    b = labels.indexOf('bonepress');
  lines.push('', `gltfpack -c / bonepress animation bytes, all assets: ${(totals[c] / totals[b]).toFixed(2)}×`);
  for (const r of rows)
    lines.push(`- ${r.asset}: ${r.about}; ${r.animations} animations, ${r.compressedClips} compressed by bonepress`);
  process.stdout.write(`${lines.join('\n')}\n`);
  writeFileSync(join(OUT, 'sizes.json'), `${JSON.stringify(rows, null, 2)}\n`);
}
