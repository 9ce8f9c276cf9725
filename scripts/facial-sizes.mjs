#!/usr/bin/env node
/**
 * Face-capture animation bytes and the error a viewer sees on the face (docs/gltf.md,
 * "Facial animation"): the avatar of test/facial/avatar-rig.ts (67-bone skin, head with the
 * 52 ARKit morph targets, 60 Hz × 30 s) as the source; bonepress at its default bound;
 * gltfpack -c and -cc at their defaults and -c at its finest (source keys, most bits); and
 * bonepress with its bound at the largest error each gltfpack output reaches.
 *
 *   npm run build && node scripts/facial-sizes.mjs [--out out/facial-sizes] [--json]
 *
 * The error is the largest distance between a deformed head vertex (morph targets with the
 * played weights, then the skin, by three.js: test/facial/deformed-head.ts) of the asset
 * and of the source, at the same 200 random times (seeded) over the clip, in cm; its shares
 * (the morphs': source bones with the played weights; the skin's: played bones with the
 * source weights); and the largest difference of a played weight. Animation bytes count what the file stores
 * (scripts/stored-animation-bytes.mjs). gltfpack (npm `gltfpack`) runs through npx at a
 * pinned version; it resamples to 30 Hz by default, which is part of its error here.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import { runnerImport } from 'vite';

import { glbJson, storedAnimationBytes } from './stored-animation-bytes.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const CLI = join(ROOT, 'dist/cli/main.js');
const GLTFPACK = 'gltfpack@1.3.0';
const NPX_FLAGS = (process.env.NPX_FLAGS ?? '--yes').split(' ').filter(Boolean);
const TIMES = 200;

const args = process.argv.slice(2);
const outIndex = args.indexOf('--out');
const OUT = resolve(outIndex >= 0 ? args[outIndex + 1] : join(ROOT, 'out/facial-sizes'));
const JSON_ONLY = args.includes('--json');
mkdirSync(OUT, { recursive: true });

const log = (line) => {
  if (!JSON_ONLY) process.stderr.write(`${line}\n`);
};
const run = (command, argv) =>
  execFileSync(command, argv, { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 1 << 26 });

async function tsModule(path) {
  const { module } = await runnerImport(join(ROOT, path), { configFile: false, logLevel: 'error' });
  return module;
}

const { makeFacialAvatar, AVATAR } = await tsModule('test/facial/avatar-rig.ts');
const { loadGlb, headError, randomTimes } = await tsModule('test/facial/deformed-head.ts');
const { mulberry32 } = await tsModule('test/utils/synthetic.ts');

const sourceFile = join(OUT, 'source.glb');
const sourceBytes = await makeFacialAvatar();
writeFileSync(sourceFile, sourceBytes);
const source = await loadGlb(sourceBytes);
const times = randomTimes(mulberry32(35), TIMES, AVATAR.duration);

const rows = [];
async function measure(label, file) {
  const bytes = readFileSync(file);
  const error = headError(source, await loadGlb(bytes), AVATAR.animation, AVATAR.headMesh, times);
  const row = {
    label,
    fileBytes: bytes.byteLength,
    animation: storedAnimationBytes(glbJson(bytes)),
    vertexErrorCm: error.vertex * 100,
    atTime: error.vertexTime,
    morphsCm: error.morphs * 100,
    skinCm: error.skin * 100,
    weightError: error.weight,
  };
  rows.push(row);
  log(`${label}: ${row.animation.total} animation bytes, vertex error ${row.vertexErrorCm.toPrecision(3)} cm`);
  return row;
}
const bonepress = (name, error) => {
  const file = join(OUT, `${name}.glb`);
  run('node', [
    CLI,
    'compress',
    sourceFile,
    '-o',
    file,
    '--quiet',
    ...(error === undefined ? [] : ['--error', `${error}cm`]),
  ]);
  return file;
};
const gltfpack = (flags) => {
  const file = join(OUT, `gltfpack${flags.join('').replace(/\W+/g, '')}.glb`);
  run('npx', [...NPX_FLAGS, '-p', GLTFPACK, 'gltfpack', '-i', sourceFile, '-o', file, ...flags]);
  return file;
};

await measure('source', sourceFile);
await measure('bonepress (default --error 0.01cm)', bonepress('bonepress'));
const packC = await measure('gltfpack -c', gltfpack(['-c']));
const packCC = await measure('gltfpack -cc', gltfpack(['-cc']));
// gltfpack at its finest: the source's keys kept (no resampling), the most bits it allows.
const FINEST = ['-c', '-af', '0', '-ar', '16', '-at', '24', '-as', '24'];
const packFinest = await measure(`gltfpack ${FINEST.join(' ')}`, gltfpack(FINEST));
for (const pack of [packC, packCC, packFinest]) {
  // The compressor's bound at gltfpack's measured vertex error (3 significant digits).
  const error = Number(pack.vertexErrorCm.toPrecision(3));
  await measure(
    `bonepress --error ${error}cm (${pack.label}'s error)`,
    bonepress(`bonepress-${pack.label.replace(/\W+/g, '')}`, error),
  );
}

if (JSON_ONLY) {
  process.stdout.write(`${JSON.stringify({ times: TIMES, rows }, null, 2)}\n`);
} else {
  const n = (x) => Math.round(x).toLocaleString('en-US');
  const lines = [
    `${AVATAR.animation}: 67-bone skin, head with 52 morph targets, ${AVATAR.keyRate} Hz × ${AVATAR.duration} s; errors at ${TIMES} random times`,
    '',
    '| asset | file bytes | animation bytes | max vertex error (cm) | morphs only (cm) | skin only (cm) | max weight error |',
    '|---|---:|---:|---:|---:|---:|---:|',
    ...rows.map(
      (r) =>
        `| ${r.label} | ${n(r.fileBytes)} | ${n(r.animation.total)} | ${[r.vertexErrorCm, r.morphsCm, r.skinCm, r.weightError].map((x) => x.toPrecision(3)).join(' | ')} |`,
    ),
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
  writeFileSync(join(OUT, 'sizes.json'), `${JSON.stringify({ times: TIMES, rows }, null, 2)}\n`);
}
