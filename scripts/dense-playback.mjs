#!/usr/bin/env node
/**
 * The largest distance between three.js's playback of a glTF source and of its compressed
 * forms, sampled densely: per animation, `--times` seeded random times (default 200,000)
 * through the GLTFLoader plugin (the `.bp.glb`), and with `--bpk <dir>` the loose clips through
 * `createMixerClip` and `CompressedClipPlayer`, as test/khronos/harness.ts plays them (virtual
 * vertices at the 3 cm shell of every node, in the asset's units). Prints one line per
 * animation and path: the worst distance, its ratio to `--threshold` (default 1e-4) and when.
 * With `--spread <windows>`, the plugin path only: the largest spread (largest minus smallest
 * distance) within `windows` random windows of 30 times 1e-7 s apart, over which the
 * interpolation barely moves and the float32 rounding of the decoded pose is what changes,
 * and the most a node origin's error vector moves within one window.
 *
 *   npm run build && node dist/cli/main.js compress Fox.glb -o out/Fox.bp.glb
 *   node scripts/dense-playback.mjs Fox.glb out/Fox.bp.glb [--bpk out/Fox-bpk] [--times 200000] [--spread 6000] [--json]
 */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { runnerImport } from 'vite';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const args = process.argv.slice(2);
const option = (name, fallback) => {
  const i = args.indexOf(name);
  return i >= 0 ? args.splice(i, 2)[1] : fallback;
};
const TIMES = Number(option('--times', '200000'));
const THRESHOLD = Number(option('--threshold', '1e-4'));
const BPK = option('--bpk', undefined);
const SPREAD = Number(option('--spread', '0'));
const JSON_ONLY = args.includes('--json') && args.splice(args.indexOf('--json'), 1);
const [sourceFile, packedFile] = args;
if (!sourceFile || !packedFile) {
  process.stderr.write(
    'usage: node scripts/dense-playback.mjs <source.glb> <packed.bp.glb> [--bpk dir] [--times n] [--threshold t] [--json]\n',
  );
  process.exit(2);
}

const { module: h } = await runnerImport(join(ROOT, 'test/khronos/harness.ts'), {
  configFile: false,
  logLevel: 'error',
});
const { module: synthetic } = await runnerImport(join(ROOT, 'test/utils/synthetic.ts'), {
  configFile: false,
  logLevel: 'error',
});

const glb = await h.loadableGlb(sourceFile);
const packed = await h.loadableGlb(packedFile);
const loose = BPK ? h.looseClips(BPK) : new Map();
const count = (await h.loadThree(glb, false)).animations.length;
/**
 * Over `windows` random windows of 30 times 1e-7 s apart: the largest spread of the error, and
 * the largest distance between two of a node origin's error vectors (compressed less source)
 * in one window, with the node's name.
 */
function spreadOf(reference, other, duration, random) {
  const nodes = reference.probe.nodes.length;
  const vectors = new Float64Array(30 * nodes * 3);
  const out = { error: 0, ratio: 0, time: 0, node: '', nodeSpread: 0 };
  for (let w = 0; w < SPREAD; w++) {
    const start = random() * duration * 0.999;
    const errors = [];
    for (let i = 0; i < 30; i++) {
      errors.push(h.worstDistance(reference, other, [start + i * 1e-7]).error);
      for (let n = 0; n < nodes; n++) {
        const a = reference.probe.nodes[n].matrixWorld.elements,
          b = other.probe.nodes[n].matrixWorld.elements;
        for (let c = 0; c < 3; c++) vectors[(i * nodes + n) * 3 + c] = b[12 + c] - a[12 + c];
      }
    }
    const spread = Math.max(...errors) - Math.min(...errors);
    if (spread > out.error) Object.assign(out, { error: spread, ratio: spread / THRESHOLD, time: start });
    for (let n = 0; n < nodes; n++)
      for (let i = 0; i < 30; i++)
        for (let j = 0; j < i; j++) {
          const p = (i * nodes + n) * 3,
            q = (j * nodes + n) * 3;
          const d = Math.hypot(
            vectors[p] - vectors[q],
            vectors[p + 1] - vectors[q + 1],
            vectors[p + 2] - vectors[q + 2],
          );
          if (d > out.nodeSpread) Object.assign(out, { nodeSpread: d, node: reference.probe.nodes[n].name });
        }
  }
  return out;
}

const rows = [];
for (let index = 0; index < count; index++) {
  const source = await h.loadThree(glb, false);
  const clip = source.animations[index];
  const random = synthetic.mulberry32(1000 + index);
  const times = Array.from({ length: TIMES }, () => random() * clip.duration);
  const reference = { scene: source.scene, probe: await h.probeOf(source), pose: h.mixerPoser(source.scene, clip) };
  const paths = [['plugin', packed, true, (gltf) => h.mixerPoser(gltf.scene, gltf.animations[index])]];
  if (SPREAD > 0) {
    const gltf = await h.loadThree(packed, true);
    const other = { scene: gltf.scene, probe: await h.probeOf(gltf), pose: paths[0][3](gltf) };
    const row = spreadOf(reference, other, clip.duration, random);
    rows.push({ animation: clip.name, path: 'plugin spread', ...row });
    if (!JSON_ONLY)
      process.stdout.write(
        `${clip.name.padEnd(16)} spread ${row.error.toExponential(4)}  ${row.ratio.toFixed(4)} ×  at ${row.time.toFixed(5)} s; ` +
          `node ${row.node} moves ${row.nodeSpread.toExponential(4)}\n`,
      );
    continue;
  }
  const bpk = loose.get(clip.name);
  if (bpk) {
    const warn = (w) => process.stderr.write(`${clip.name}: ${w}\n`);
    paths.push(['createMixerClip', glb, false, (gltf, probe) => h.looseMixerPoser(gltf, probe, bpk, warn)]);
    paths.push(['CompressedClipPlayer', glb, false, (_, probe) => h.playerPoser(probe, bpk, warn)]);
  }
  for (const [path, bytes, plugin, poser] of paths) {
    const gltf = await h.loadThree(bytes, plugin);
    const probe = await h.probeOf(gltf);
    const worst = h.worstDistance(reference, { scene: gltf.scene, probe, pose: poser(gltf, probe) }, times);
    const row = { animation: clip.name, path, error: worst.error, ratio: worst.error / THRESHOLD, time: worst.time };
    rows.push(row);
    if (!JSON_ONLY)
      process.stdout.write(
        `${row.animation.padEnd(16)} ${path.padEnd(21)} ${row.error.toExponential(4)}  ${row.ratio.toFixed(4)} ×  at ${row.time.toFixed(5)} s\n`,
      );
  }
}
if (JSON_ONLY) process.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
