/**
 * The transport-form bench: over a corpus of BVH files, the downloaded size
 * (transport form) next to the resident size (runtime form), brotli-11 of each as a
 * reference, the load-time decode speed, playback µs/pose of the clip opened from either
 * form, and the independent float64 check of every clip against its source
 * (bench/float64-check.ts). `scripts/bench-transport.mjs` prints it.
 */
import { readFile, readdir, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { brotliCompressSync, constants as zlibConstants } from 'node:zlib';

import { rawSizeBytes } from '../clip/raw-clip.js';
import { convertLength, parseLength } from '../clip/units.js';
import { compress } from '../compress/index.js';
import { COMPRESS_DEFAULTS } from '../compress/options.js';
import { encodeTransport } from '../compress/transport.js';
import { readBvh } from '../readers/bvh.js';
import { CompressedClip } from '../runtime/compressed-clip.js';
import { POSE_STRIDE } from '../runtime/pose.js';
import { sampleKey } from '../runtime/sampler.js';
import { decodeTransport, openClip } from '../runtime/transport.js';
import { checkBvhFloat64 } from './float64-check.js';

/** Options of {@link runTransportBench}. */
export interface TransportBenchOptions {
  /** BVH files and folders (searched recursively). */
  corpus: readonly string[];
  /** Error threshold with a unit. Default {@link COMPRESS_DEFAULTS}.error. */
  error?: string;
  /** Shell distance with a unit. Default {@link COMPRESS_DEFAULTS}.shell. */
  shell?: string;
  /** Least wall time of one timing measurement, ms. Default 200. */
  measureMs?: number;
  /** Timed measurements per figure (the fastest is kept). Default 5. */
  repeats?: number;
  /** Called after each clip is compressed and checked. */
  onClip?: (done: number, total: number, file: string) => void;
}

/** Defaults of {@link TransportBenchOptions}. */
export const TRANSPORT_BENCH_DEFAULTS = { measureMs: 200, repeats: 5 } as const;

/** One clip's row. Sizes in bytes, errors in the clip's unit. */
export interface TransportBenchClip {
  file: string;
  bones: number;
  samples: number;
  rawBytes: number;
  runtimeBytes: number;
  transportBytes: number;
  runtimeBrotliBytes: number;
  transportBrotliBytes: number;
  /** Largest virtual-vertex error, float64, against the BVH. */
  vertexError64: number;
  /** Largest whole-shell bound 2·d·sin(θ/2) + |Δt|, float64, against the BVH. */
  shellError64: number;
}

/** The whole corpus. */
export interface TransportBenchReport {
  clips: TransportBenchClip[];
  threshold: number;
  unit: string;
  rawBytes: number;
  runtimeBytes: number;
  transportBytes: number;
  runtimeBrotliBytes: number;
  transportBrotliBytes: number;
  /** Raw bytes ÷ transport bytes (names included). */
  transportRatio: number;
  runtimeRatio: number;
  runtimeBrotliRatio: number;
  transportBrotliRatio: number;
  /** Load-time decode (transport → runtime bytes) of the whole corpus, MB of raw clip data per second. */
  decodeRawMBps: number;
  /** The same as transport MB per second. */
  decodeTransportMBps: number;
  /** {@link decodeRawMBps} over the process's CPU time instead of wall time. */
  decodeRawMBpsCpu: number;
  /** Playback (every key in order) of the clips opened from the runtime bytes and from the transport bytes, µs per pose. */
  playbackUsPerPose: { runtime: number; transport: number };
  /** Clips over the threshold in the float64 check. */
  overThreshold64: number;
  maxVertexError64: number;
  maxShellError64: number;
}

async function listBvh(paths: readonly string[]): Promise<string[]> {
  const out: string[] = [];
  for (const p of paths) {
    if ((await stat(p)).isDirectory()) {
      const entries = (await readdir(p)).sort();
      out.push(...(await listBvh(entries.map((e) => join(p, e)).filter((e) => !basename(e).startsWith('.')))));
    } else if (p.toLowerCase().endsWith('.bvh')) {
      out.push(p);
    }
  }
  return out;
}

function brotli(bytes: Uint8Array): number {
  return brotliCompressSync(bytes, {
    params: { [zlibConstants.BROTLI_PARAM_QUALITY]: 11, [zlibConstants.BROTLI_PARAM_SIZE_HINT]: bytes.length },
  }).length;
}

/**
 * Fastest of `repeats` runs of `work` repeated for at least `measureMs`: wall and CPU
 * (this process's user + system) milliseconds per call. On a loaded machine the CPU figure
 * leaves out the time spent waiting for a core.
 */
function timeIt(work: () => void, measureMs: number, repeats: number): { wall: number; cpu: number } {
  let wall = Infinity,
    cpu = Infinity;
  for (let r = 0; r < repeats; r++) {
    let calls = 0;
    const start = performance.now(),
      cpuStart = process.cpuUsage();
    let elapsed = 0;
    do {
      work();
      calls++;
      elapsed = performance.now() - start;
    } while (elapsed < measureMs);
    const used = process.cpuUsage(cpuStart);
    wall = Math.min(wall, elapsed / calls);
    cpu = Math.min(cpu, (used.user + used.system) / 1000 / calls);
  }
  return { wall, cpu };
}

/** Compresses the corpus at the given settings and measures both forms (see the file comment). */
export async function runTransportBench(options: TransportBenchOptions): Promise<TransportBenchReport> {
  const files = await listBvh(options.corpus);
  if (files.length === 0) throw new Error(`no .bvh files in ${options.corpus.join(', ')}`);
  const error = options.error ?? COMPRESS_DEFAULTS.error;
  const shell = options.shell ?? COMPRESS_DEFAULTS.shell;
  const measureMs = options.measureMs ?? TRANSPORT_BENCH_DEFAULTS.measureMs;
  const repeats = options.repeats ?? TRANSPORT_BENCH_DEFAULTS.repeats;
  const clips: TransportBenchClip[] = [];
  const runtimeForms: Uint8Array[] = [],
    transportForms: Uint8Array[] = [];
  let unit = '';
  let threshold = 0;
  for (const file of files) {
    const text = await readFile(file, 'utf8');
    const clip = readBvh(text, file);
    unit = clip.unit;
    threshold = convertLength(parseLength(error), clip.unit);
    const bpk = compress(clip, { error, shell }).bytes;
    const transport = encodeTransport(bpk);
    const check = checkBvhFloat64(text, transport, convertLength(parseLength(shell), clip.unit));
    runtimeForms.push(bpk);
    transportForms.push(transport);
    clips.push({
      file,
      bones: clip.skeleton.parents.length,
      samples: clip.sampleCount,
      rawBytes: rawSizeBytes(clip.skeleton.parents.length, clip.sampleCount),
      runtimeBytes: bpk.length,
      transportBytes: transport.length,
      runtimeBrotliBytes: brotli(bpk),
      transportBrotliBytes: brotli(transport),
      vertexError64: check.vertexError,
      shellError64: check.shellError,
    });
    options.onClip?.(clips.length, files.length, file);
  }
  const sum = (f: (c: TransportBenchClip) => number) => clips.reduce((a, c) => a + f(c), 0);
  const rawBytes = sum((c) => c.rawBytes),
    runtimeBytes = sum((c) => c.runtimeBytes),
    transportBytes = sum((c) => c.transportBytes);
  const runtimeBrotliBytes = sum((c) => c.runtimeBrotliBytes),
    transportBrotliBytes = sum((c) => c.transportBrotliBytes);

  const decodeMs = timeIt(
    () => {
      for (const t of transportForms) decodeTransport(t);
    },
    measureMs,
    repeats,
  );
  const poses = sum((c) => c.samples);
  const play = (opened: CompressedClip[]): number => {
    const pose = new Float32Array(Math.max(...opened.map((c) => c.boneCount)) * POSE_STRIDE);
    const ms = timeIt(
      () => {
        for (const c of opened) {
          const sampler = c.createSampler();
          for (let k = 0; k < c.sampleCount; k++) sampleKey(sampler, k, pose);
        }
      },
      measureMs,
      repeats,
    ).wall;
    return (ms * 1000) / poses;
  };
  const playbackUsPerPose = {
    runtime: play(runtimeForms.map((b) => CompressedClip.open(b))),
    transport: play(transportForms.map((t) => openClip(t))),
  };
  return {
    clips,
    threshold,
    unit,
    rawBytes,
    runtimeBytes,
    transportBytes,
    runtimeBrotliBytes,
    transportBrotliBytes,
    transportRatio: rawBytes / transportBytes,
    runtimeRatio: rawBytes / runtimeBytes,
    runtimeBrotliRatio: rawBytes / runtimeBrotliBytes,
    transportBrotliRatio: rawBytes / transportBrotliBytes,
    decodeRawMBps: rawBytes / 1e6 / (decodeMs.wall / 1000),
    decodeTransportMBps: transportBytes / 1e6 / (decodeMs.wall / 1000),
    decodeRawMBpsCpu: rawBytes / 1e6 / (decodeMs.cpu / 1000),
    playbackUsPerPose,
    overThreshold64: clips.filter((c) => c.vertexError64 > threshold).length,
    maxVertexError64: Math.max(...clips.map((c) => c.vertexError64)),
    maxShellError64: Math.max(...clips.map((c) => c.shellError64)),
  };
}

/** The report as a few lines of text. */
export function formatTransportReport(r: TransportBenchReport): string {
  const f = (n: number, d = 2) => n.toFixed(d);
  const lines = [
    `${r.clips.length} clips, raw ${r.rawBytes} B (40 B per bone per sample), threshold ${r.threshold} ${r.unit}`,
    'form        bytes      ratio   brotli-11 bytes  ratio',
    `runtime   ${String(r.runtimeBytes).padStart(9)}  ${f(r.runtimeRatio).padStart(7)}   ${String(r.runtimeBrotliBytes).padStart(9)}  ${f(r.runtimeBrotliRatio).padStart(7)}`,
    `transport ${String(r.transportBytes).padStart(9)}  ${f(r.transportRatio).padStart(7)}   ${String(r.transportBrotliBytes).padStart(9)}  ${f(r.transportBrotliRatio).padStart(7)}`,
    `load-time decode: ${f(r.decodeRawMBps, 1)} MB/s of raw clip data (${f(r.decodeTransportMBps, 1)} MB/s of transport bytes); ${f(r.decodeRawMBpsCpu, 1)} MB/s over CPU time`,
    `playback µs/pose: runtime bytes ${f(r.playbackUsPerPose.runtime, 3)}, opened from transport ${f(r.playbackUsPerPose.transport, 3)} (the same bytes)`,
    `float64 check against the BVH: ${r.overThreshold64} clips over ${r.threshold} ${r.unit}; largest virtual-vertex error ${r.maxVertexError64.toPrecision(6)} ${r.unit}, largest whole-shell bound ${r.maxShellError64.toPrecision(6)} ${r.unit}`,
  ];
  return lines.join('\n');
}
