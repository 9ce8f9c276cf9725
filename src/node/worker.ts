/**
 * One input file → compressed `.bpk` files, in two halves: {@link encodeFile} (read and
 * compress; what pool workers run) and {@link writeEncodedFile} (the atomic writes; the
 * batch's own thread). Everything they return is plain data (structured-clone safe),
 * errors included.
 */
import { toFailure, type FileFailure } from './failure.js';
import { gltfAnimationBytes } from './gltf-files.js';
import {
  OUTPUT_EXTENSION,
  TRANSPORT_OUTPUT_EXTENSION,
  isGltfPath,
  readClipFilesBlocking,
  writeFileAtomic,
  type ReadFileOptions,
} from './files.js';
import { outputPathsFor } from './outputs.js';
import { compress, type CompressStats } from '../compress/index.js';
import type { CompressOptions } from '../compress/options.js';
import { encodeTransport } from '../compress/transport.js';
import type { ReadOptions } from '../readers/options.js';
import { readBvh } from '../readers/bvh.js';

/** Compression and reading options of a batch. */
export interface CompressFilesOptions extends CompressOptions {
  /**
   * How inputs are read (source unit override, glTF resampling rate, size cap, special
   * files). No `onWarning`: a function cannot reach a worker thread; each file's warnings
   * come back in its result's `warnings` instead.
   */
  read?: Omit<ReadFileOptions, 'onWarning'>;
  /**
   * Write each clip in the transport form (`.bpt`, docs/transport.md: what a game or page
   * downloads, decoded to the exact runtime bytes at load) instead of the runtime `.bpk`.
   * The clip's `compressedBytes` and `ratio` are then those of the `.bpt` file. Default false.
   */
  transport?: boolean;
}

/** The extension of the files a batch with `options` writes. */
export function outputExtension(options: Pick<CompressFilesOptions, 'transport'>): string {
  return options.transport === true ? TRANSPORT_OUTPUT_EXTENSION : OUTPUT_EXTENSION;
}

/** One file of work. */
export interface CompressFileTask {
  readonly file: string;
  readonly outDir: string;
  readonly options: CompressFilesOptions;
}

/** One clip written by a task. */
export interface ClipOutput {
  /** Path of the written `.bpk` (`-` when it went to a stream). */
  readonly output: string;
  readonly stats: CompressStats;
  /**
   * The reader's warnings that concern this clip: those about its own animation, and those
   * about the whole file; not those about the file's other animations.
   */
  readonly warnings: readonly string[];
}

/** A file whose every clip was compressed and written. */
export interface FileSuccess {
  readonly ok: true;
  readonly file: string;
  readonly clips: readonly ClipOutput[];
  /** What the reader skipped in this file (e.g. glTF channels outside the skeleton), in order; empty when nothing. */
  readonly warnings: readonly string[];
}

/** A file that failed; nothing of it was written. */
export interface FileFailed {
  readonly ok: false;
  readonly file: string;
  readonly failure: FileFailure;
  /** Warnings heard before it failed (a file read fine but whose compression failed); often empty. */
  readonly warnings: readonly string[];
}

/** Outcome of one input file. */
export type FileResult = FileSuccess | FileFailed;

/** A file's clips, compressed in memory and not written yet (what a worker sends back). */
export interface EncodedFile {
  readonly ok: true;
  readonly file: string;
  readonly clips: readonly (ClipOutput & { readonly bytes: Uint8Array })[];
  readonly warnings: readonly string[];
}

/**
 * Reads `task.file` and compresses every clip in it, in memory: the first half of
 * {@link compressFile}. Pool workers run only this and the main thread writes, so a worker
 * never waits on the disk (two workers' fsyncs also queue behind each other's). Never
 * throws: failures come back as a {@link FileFailed}.
 */
export async function encodeFile(task: CompressFileTask): Promise<EncodedFile | FileFailed> {
  const { file, outDir } = task;
  const { read, transport, ...compressOptions } = task.options;
  const warnings: string[] = [];
  try {
    const clips = await readClipFilesBlocking(file, { ...read, onWarning: (message) => warnings.push(message) });
    const names = clips.map((clip) => clip.name);
    const outputs = outputPathsFor(outDir, file, names, outputExtension(task.options));
    const results = clips.map((clip) => {
      const result = compress(clip, compressOptions);
      if (transport !== true) return result;
      const bytes = encodeTransport(result.bytes);
      return {
        bytes,
        stats: { ...result.stats, compressedBytes: bytes.length, ratio: result.stats.rawBytes / bytes.length },
      };
    });
    if (isGltfPath(file)) {
      const source = await gltfAnimationBytes(file, read);
      const loose = results.reduce((sum, r) => sum + r.bytes.length, 0);
      if (loose > source) warnings.push(largerThanSource(loose, source));
    }
    return {
      ok: true,
      file,
      clips: results.map(({ bytes, stats }, i) => ({
        output: outputs[i],
        stats,
        bytes,
        warnings: warningsOfClip(warnings, names, i),
      })),
      warnings,
    };
  } catch (error) {
    return { ok: false, file, failure: toFailure(file, error), warnings };
  }
}

/**
 * The warning for loose clips that take more bytes than their glTF source's animations.
 * Each `.bpk` holds every bone of its clip (a file without skins: every node of the scene)
 * with its rest values and names, where a glTF animation holds only the channels it moves;
 * and a CUBICSPLINE curve is sampled finely enough for the decoder's linear interpolation
 * to follow it within the bound. glTF output keeps an animation's own channels when they
 * are smaller (docs/gltf.md, "Loose clips larger than their source").
 */
function largerThanSource(loose: number, source: number): string {
  return `the compressed clips take ${loose} bytes, more than the ${source} bytes of the source's animations (each .bpk holds every bone of its clip, with rest values and names, and samples CUBICSPLINE curves for linear playback); glTF output (-o <name>.bp.glb) keeps an animation's own channels where they are smaller`;
}

/**
 * Reads and compresses two small generated BVH files (a 4-joint chain, then a 24-joint one,
 * over several segments) and drops the results: a pool worker runs this as it starts, so the
 * engine has compiled the compressor's hot paths before the first file arrives. BVH texts
 * rather than clips built here: the clips then have the object shape of the clips the
 * worker reads, and the reader, translations and constant tracks have run too, so the code
 * compiled now meets fewer branches it never saw (each one discards that code) at the first
 * files.
 */
export function warmUp(): void {
  // A tiny clip first, too short to make more than a few small functions hot: an object
  // field that holds a typed array is typed by its first value and generalised at the
  // second, which discards the code compiled in between (that was most of the warm-up's
  // code, at the first file). After this pass every such field has seen two values, so
  // what the second clip compiles stays valid for the files. One of its joints stops after
  // the first segment, so constant segments are rebuilt before the code doing so compiles.
  compress(readBvh(warmUpBvh(4, 40), 'warm-up.bvh'));
  compress(readBvh(warmUpBvh(24, 40), 'warm-up.bvh'));
}

/**
 * A chain of `joints` joints with position and rotation channels, `frames` frames, shaped
 * like motion capture so that the branches real clips take have run once: a root sliding
 * without turning, a walking hip turning 71° a frame (slerps past their series' range, every component
 * dropped in turn), joints that bend, stop bending after the first segment, turn about 180°
 * or hold a pose and place, positions with noise written with exponents, one number with more digits
 * than a double holds, and a space at the end of each frame line.
 */
function warmUpBvh(joints: number, frames: number): string {
  const channels = 'CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation';
  let text = 'HIERARCHY\n';
  for (let b = 0; b < joints; b++) {
    const pad = ' '.repeat(b);
    text += `${pad}${b === 0 ? 'ROOT' : 'JOINT'} j${b}\n${pad}{\n${pad} OFFSET 0 ${b === 0 ? 0 : 2.5} 0\n${pad} ${channels}\n`;
  }
  const end = ' '.repeat(joints);
  text += `${end}End Site\n${end}{\n${end} OFFSET 0 2.5 0\n${end}}\n`;
  for (let b = joints - 1; b >= 0; b--) text += `${' '.repeat(b)}}\n`;
  text += `MOTION\nFrames:\t${frames}\nFrame Time:\t0.0333333\n`;
  for (let f = 0; f < frames; f++) {
    let line = '';
    for (let b = 0; b < joints; b++) line += `${warmUpChannels(b, f).join(' ')} `;
    text += `${line}\n`;
  }
  return text;
}

/** Joint `b`'s six channel values at frame `f` in {@link warmUpBvh}. */
function warmUpChannels(b: number, f: number): string[] {
  if (b === 0) return [(0.25 * f).toFixed(4), '0', '0', '0', '0', '-0'];
  if (b === 1) {
    const sway = Math.sin(f / 3);
    return [f * 1.25, 90 + sway, 0.5 * sway, 10 * sway, 20 * Math.cos(f / 4), f * 71].map((v) => v.toFixed(4));
  }
  const kind = b % 4;
  if (kind === 0) return ['0', '2.5', '0', '5', '-3', '2'];
  const position = [(1e-6 * Math.sin(f + b)).toPrecision(6), '2.5', b === 2 ? '1.00000000000000000001' : '0'];
  const bend = kind === 2 && f >= 16 ? 0.5 : 12 * Math.sin(f / 6 + b);
  const turn = kind === 3 ? 178 + 4 * Math.sin(f / 2) : bend / 3;
  return [...position, turn.toFixed(4), bend.toFixed(4), (-bend / 5).toFixed(4)];
}

/**
 * Writes each clip of `encoded` atomically to its output path: the second half of
 * {@link compressFile}. A failed write makes the file a {@link FileFailed}. Never throws.
 */
export async function writeEncodedFile(encoded: EncodedFile | FileFailed): Promise<FileResult> {
  if (!encoded.ok) return encoded;
  const { file, clips, warnings } = encoded;
  try {
    for (const clip of clips) await writeFileAtomic(clip.output, clip.bytes);
  } catch (error) {
    return { ok: false, file, failure: toFailure(file, error), warnings };
  }
  return {
    ok: true,
    file,
    clips: clips.map(({ output, stats, warnings: own }) => ({ output, stats, warnings: own })),
    warnings,
  };
}

/**
 * The warnings of a file that concern clip `clipIndex` of `clipNames`: a warning about an
 * animation starts with `animation "<name>"` (the glTF reader's form) and belongs to the
 * clip of that name; any other warning is about the whole file and belongs to every clip.
 */
export function warningsOfClip(warnings: readonly string[], clipNames: readonly string[], clipIndex: number): string[] {
  if (clipNames.length <= 1) return [...warnings];
  const own = `animation "${clipNames[clipIndex]}"`;
  return warnings.filter(
    (warning) => !warning.startsWith('animation "') || warning.startsWith(own + ' ') || warning.startsWith(own + ':'),
  );
}

/**
 * Reads `task.file`, compresses every clip in it and writes each atomically to its output
 * path (files.ts `outputPathsFor`). All clips are compressed before any is written, so a
 * clip that fails leaves no output of that file behind. The reader's warnings are collected
 * into the result's `warnings` (an `onWarning` in `task.options.read` is not called). Never
 * throws: failures come back as a {@link FileFailed}.
 */
export async function compressFile(task: CompressFileTask): Promise<FileResult> {
  return writeEncodedFile(await encodeFile(task));
}

/**
 * `options` without a `read.onWarning` (which untyped or widened callers may still pass): a
 * function cannot be cloned into a worker, and warnings come back in each result instead.
 */
export function withoutWarningCallback(options: CompressFilesOptions): CompressFilesOptions {
  const read = options.read as ReadOptions | undefined;
  if (read?.onWarning === undefined) return options;
  const { onWarning: _dropped, ...plain } = read;
  return { ...options, read: plain };
}
