/**
 * The three.js bench behind `npm run bench:mixer`: crowds of characters driven through
 * `AnimationMixer.update`, once by the raw clips (three.js `AnimationClip`s built from the
 * samples, as decode-timing.ts builds them) and once by the compressed clips
 * (`createMixerClip`), timed in alternating rounds of the same run; and the bytes held per
 * resident clip against three.js's typed arrays for the same clip.
 *
 *   npm run bench:mixer [-- --json] [--corpus dir] [--characters 100] [--clips 20] [--frames 240] [--rounds 5]
 *
 * Default corpus: the development corpus beside the repository when present (bench/README.md),
 * else fixtures/.
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import * as THREE from 'three';

import { createMixerClip } from '../adapters/three.js';
import type { RawClip } from '../clip/raw-clip.js';
import { compress } from '../compress/index.js';
import { readBvh } from '../readers/bvh.js';
import { type ClipTables, CompressedClip } from '../runtime/compressed-clip.js';
import { POSE_STRIDE } from '../runtime/pose.js';
import { buildThreeHarness, median } from './decode-timing.js';

/** Bytes one resident compressed clip holds, and three.js's raw clip for comparison. */
export interface ResidentMemory {
  clip: string;
  /** How the clip was opened (CompressedClip.open's `tables`). */
  tables: 'full' | 'compact';
  sampleCount: number;
  boneCount: number;
  /** The `.bpk` bytes. */
  fileBytes: number;
  /** Decode tables derived at open time (typed arrays beyond the file's own buffer). */
  tableBytes: number;
  /** One playing instance: its sampler, its pose and the clip's one-key track stand-ins. */
  instanceBytes: number;
  total: number;
  /** three.js `AnimationClip` from the samples: key times plus every track's values. */
  threeClipBytes: number;
  /** threeClipBytes / total. */
  ratio: number;
}

/** Crowd timings: median over rounds of ms per frame for all characters. */
export interface MixerTiming {
  characters: number;
  clips: number;
  frames: number;
  rawMsPerFrame: number;
  /** Clips opened with full tables, and with compact ones. */
  compressedMsPerFrame: number;
  compactMsPerFrame: number;
  /** compressed / raw, compact / raw. */
  ratio: number;
  compactRatio: number;
}

/**
 * Bytes of the distinct buffers behind the typed arrays among `tables`' own fields and its
 * animated tracks', except views of `skip` (views may share a buffer; each counts for its
 * widest view; the file, or the copy a kernel clip keeps instead, counts as the file).
 */
function bufferBytes(tables: ClipTables, skip: ArrayBufferLike): number {
  // The widest view of each buffer: a clip's decode buffer may be a place in a WebAssembly
  // memory shared with other clips (runtime/wasm-kernel.ts), not a buffer of its own.
  const buffers = new Map<ArrayBufferLike, number>();
  for (const field of [...Object.values(tables), ...Object.values(tables.animated)]) {
    if (ArrayBuffer.isView(field) && field.buffer !== skip)
      buffers.set(field.buffer, Math.max(buffers.get(field.buffer) ?? 0, field.byteLength));
  }
  let total = 0;
  for (const bytes of buffers.values()) total += bytes;
  return total;
}

/** {@link ResidentMemory} of `raw` compressed at the defaults and opened with `tables`. */
export function residentMemory(raw: RawClip, tables: 'full' | 'compact'): ResidentMemory {
  const bytes = compress(raw).bytes;
  const clip = CompressedClip.open(bytes, { tables });
  const harness = buildThreeHarness(THREE, raw);
  const root = harness.skeleton.bones[0].parent ?? harness.skeleton.bones[0];
  const mixerClip = createMixerClip(clip, root, { onWarning: () => {} });
  const sampler = clip.createSampler();
  const tableBytes = bufferBytes(clip.tables, bytes.buffer);
  let standIns = 0;
  for (const track of mixerClip.tracks) standIns += track.times.byteLength + track.values.byteLength;
  const instanceBytes = sampler.byteLength + clip.boneCount * POSE_STRIDE * 4 + standIns;
  const total = clip.byteLength + tableBytes + instanceBytes;
  return {
    clip: raw.name,
    tables,
    sampleCount: raw.sampleCount,
    boneCount: clip.boneCount,
    fileBytes: clip.byteLength,
    tableBytes,
    instanceBytes,
    total,
    threeClipBytes: harness.clipBytes,
    ratio: harness.clipBytes / total,
  };
}

/** A character for the crowd: its bone hierarchy named b<i>, as buildThreeHarness names them. */
function character(raw: RawClip): THREE.Object3D {
  const root = new THREE.Object3D();
  const bones: THREE.Bone[] = [];
  raw.skeleton.parents.forEach((p, b) => {
    const bone = new THREE.Bone();
    bone.name = `b${b}`;
    (p >= 0 ? bones[p] : root).add(bone);
    bones.push(bone);
  });
  return root;
}

/**
 * `characters` characters, character i on clip i mod clips.length at its own start time;
 * each frame calls `update(1/60)` on every character's mixer. Rounds alternate raw and
 * compressed; each figure is the median over rounds of the mean ms per frame.
 */
export function timeMixers(raws: readonly RawClip[], characters: number, frames: number, rounds: number): MixerTiming {
  // Bones named b<i> on both sides, as buildThreeHarness names them, so both crowds bind alike.
  const named = raws.map((raw) => ({
    ...raw,
    skeleton: { ...raw.skeleton, boneNames: raw.skeleton.boneNames.map((_, b) => `b${b}`) },
  }));
  const bytes = named.map((raw) => compress(raw).bytes);
  const compressed = bytes.map((b) => CompressedClip.open(b));
  const compact = bytes.map((b) => CompressedClip.open(b, { tables: 'compact' }));
  const rawMixers: THREE.AnimationMixer[] = [];
  const packedMixers: THREE.AnimationMixer[] = [];
  const compactMixers: THREE.AnimationMixer[] = [];
  for (let i = 0; i < characters; i++) {
    const c = i % raws.length;
    const harness = buildThreeHarness(THREE, named[c]);
    harness.mixer.setTime((i * 0.37) % 5);
    rawMixers.push(harness.mixer);
    for (const [clips, mixers] of [
      [compressed, packedMixers],
      [compact, compactMixers],
    ] as const) {
      const root = character(named[c]);
      const mixer = new THREE.AnimationMixer(root);
      mixer.clipAction(createMixerClip(clips[c], root, { onWarning: () => {} })).play();
      mixer.setTime((i * 0.37) % 5);
      mixers.push(mixer);
    }
  }
  const run = (mixers: THREE.AnimationMixer[]): number => {
    const start = performance.now();
    for (let f = 0; f < frames; f++) for (const m of mixers) m.update(1 / 60);
    return (performance.now() - start) / frames;
  };
  run(rawMixers);
  run(packedMixers);
  run(compactMixers); // warm-up
  const rawTimes: number[] = [],
    packedTimes: number[] = [],
    compactTimes: number[] = [];
  for (let r = 0; r < rounds; r++) {
    rawTimes.push(run(rawMixers));
    packedTimes.push(run(packedMixers));
    compactTimes.push(run(compactMixers));
  }
  const rawMs = median(rawTimes),
    packedMs = median(packedTimes),
    compactMs = median(compactTimes);
  return {
    characters,
    clips: raws.length,
    frames,
    rawMsPerFrame: rawMs,
    compressedMsPerFrame: packedMs,
    compactMsPerFrame: compactMs,
    ratio: packedMs / rawMs,
    compactRatio: compactMs / rawMs,
  };
}

function parseArgs(argv: string[]): {
  json: boolean;
  corpus: string;
  characters: number;
  clips: number;
  frames: number;
  rounds: number;
} {
  const root = resolve(fileURLToPath(new URL('../../', import.meta.url)));
  const shared = resolve(root, '../shared/data/bandai-ds1');
  const o = {
    json: false,
    corpus: existsSync(shared) ? shared : join(root, 'fixtures'),
    characters: 100,
    clips: 20,
    frames: 240,
    rounds: 5,
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const next = (): string => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${a} needs a value`);
      return v;
    };
    if (a === '--json') o.json = true;
    else if (a === '--corpus') o.corpus = resolve(next());
    else if (a === '--characters' || a === '--clips' || a === '--frames' || a === '--rounds') {
      const n = Number(next());
      if (!(Number.isInteger(n) && n > 0)) throw new Error(`${a} needs a whole number > 0`);
      o[a.slice(2) as 'characters' | 'clips' | 'frames' | 'rounds'] = n;
    } else throw new Error(`unknown option ${a}`);
  }
  return o;
}

function main(): void {
  const o = parseArgs(process.argv.slice(2));
  const files = readdirSync(o.corpus)
    .filter((f) => f.toLowerCase().endsWith('.bvh'))
    .sort();
  if (files.length === 0) throw new Error(`${o.corpus}: no .bvh files`);
  const raws = files.map((f) => readBvh(readFileSync(join(o.corpus, f), 'utf8'), f));
  const longest = raws.reduce((a, b) => (b.sampleCount > a.sampleCount ? b : a));
  const memory = [residentMemory(longest, 'full'), residentMemory(longest, 'compact')];
  const timing = timeMixers(raws.slice(0, o.clips), o.characters, o.frames, o.rounds);
  if (o.json) {
    process.stdout.write(`${JSON.stringify({ corpus: o.corpus, memory, timing }, null, 1)}\n`);
    return;
  }
  const kb = (n: number) => `${(n / 1024).toFixed(1)} KiB`;
  process.stdout.write(
    [
      `corpus ${o.corpus}`,
      `resident clip "${memory[0].clip}" (${memory[0].boneCount} bones × ${memory[0].sampleCount} samples); three.js AnimationClip ${memory[0].threeClipBytes} B (${kb(memory[0].threeClipBytes)})`,
      ...memory.map(
        (m) =>
          `  tables ${m.tables.padEnd(7)} ${m.total} B = file ${m.fileBytes} + tables ${m.tableBytes} + one playing instance ${m.instanceBytes} (${kb(m.total)}): three.js holds ${m.ratio.toFixed(1)}×`,
      ),
      `mixer.update, ${timing.characters} characters on ${timing.clips} clips, median of ${o.rounds} rounds × ${timing.frames} frames`,
      `  raw clips         ${timing.rawMsPerFrame.toFixed(3)} ms per frame`,
      `  compressed clips  ${timing.compressedMsPerFrame.toFixed(3)} ms per frame (${timing.ratio.toFixed(2)}× raw), full tables`,
      `  compressed clips  ${timing.compactMsPerFrame.toFixed(3)} ms per frame (${timing.compactRatio.toFixed(2)}× raw), compact tables`,
      '',
    ].join('\n'),
  );
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main();
