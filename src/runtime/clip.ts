/**
 * A `.bpk` clip opened for sampling. `CompressedClip.open` validates every field once and
 * derives the decode tables (decode-tables.ts: one buffer in the order a pose decode reads
 * it); the clip is immutable after that and can be shared by any number of characters,
 * each sampling it through its own {@link ClipSampler} (`clip.createSampler()`), whose
 * per-instance state is a few numbers. The library imports it from compressed-clip.ts,
 * which installs the TypeScript decoder that samplers of clips the WebAssembly kernel does
 * not decode need.
 */
import { BITSET, SEGMENT_SIZE, TRACKS_PER_BONE, type UNIT_CODES, type RotationFormat } from './format.js';
import { FormatError } from './errors.js';
import {
  readAdditive,
  readHeader,
  readKeyTimes,
  type AdditiveInfo,
  readNames,
  readNodeIndices,
  readParents,
  readSegments,
  readTracks,
  trackBit,
} from './clip-reader.js';
import { buildTables, type ClipTables } from './decode-tables.js';
import { kernelPlace } from './wasm-kernel.js';
import { ClipSampler } from './sampler.js';

export type { Looping, Rounding, SampleOptions } from './sampler.js';
export type { ClipTables } from './decode-tables.js';

/** Options of {@link CompressedClip.open}. */
export interface OpenOptions {
  /** Check the CRC-32 when the file has one. Default true. */
  verifyChecksum?: boolean;
  /**
   * What is derived at open time:
   * - `'full'` (default): every segment's dequantisation records, in one buffer in the order
   *   a decode reads it, shared by every sampler: the fastest decode, cold or warm. The
   *   TypeScript decoder reads the packed keys from the file (on the corpus the tables take
   *   about 0.8 × the file); where the WebAssembly kernel decodes, the clip keeps a copy of
   *   the file in the kernel's memory instead of the caller's bytes, and the buffer holds
   *   rows of four rotations for it (about 1.04 × the file beside the copy);
   * - `'compact'`: the base pose and references only; each sampler builds the records of
   *   the two segments it last read (32 bytes per animated track each) and reads packed keys
   *   from the file. Resident memory is about the file's size plus a few KB per sampler;
   *   moving to another segment costs one record build. Decoded values are identical.
   */
  tables?: 'full' | 'compact';
  /**
   * Which code decodes a pose (both give the same bits):
   * - `'auto'` (default): the WebAssembly SIMD kernel (wasm-kernel.ts) where the engine has
   *   WebAssembly SIMD and the tables are `'full'`, else TypeScript;
   * - `'typescript'`: always the TypeScript decoder.
   */
  decoder?: 'auto' | 'typescript';
}

/** A validated `.bpk` clip with its decode tables, immutable once opened. */
export class CompressedClip {
  // The fields are `declare`d: the constructor assigns each one, so the build emits no list
  // of them beside the assignments (a web page's bundle names each field once fewer). Those
  // of the header are assigned together: readHeader names them as the clip does.
  /** Number of bones. */
  declare readonly boneCount: number;
  /** Number of uniformly spaced samples. */
  declare readonly sampleCount: number;
  /** Samples per second (Hz). */
  declare readonly sampleRate: number;
  /** Time of sample 0 on the source's timeline, in seconds (a glTF animation's first key; 0 for BVH). */
  declare readonly startTime: number;
  /**
   * The source's duration in seconds, measured from time 0 as three.js does (a glTF
   * animation's last key time): the clip's length on the host's timeline and the period of
   * `'repeat'` looping. For sources without a time base, startTime + (sampleCount − 1) / sampleRate.
   */
  declare readonly duration: number;
  /** Number of segments of up to {@link SEGMENT_SIZE} samples (the last takes a short tail). */
  declare readonly segmentCount: number;
  /** Length unit of translations. */
  declare readonly unit: (typeof UNIT_CODES)[number];
  /** Format version of the file. */
  declare readonly version: number;
  /** How animated rotations are stored. */
  declare readonly rotationFormat: RotationFormat;
  /** Parent index of every bone (-1 for roots); parents precede children. */
  declare readonly parents: Int32Array;
  /** Bone names, when the file has the names section. */
  declare readonly boneNames: readonly string[] | undefined;
  /** Clip name, when the file has the names section. */
  declare readonly name: string | undefined;
  /** The glTF node index of every bone, when the clip came from a glTF asset. */
  declare readonly nodeIndices: Int32Array | undefined;
  /**
   * The time of every sample (seconds on the source's timeline), when the source's keys lie
   * on no uniform grid; undefined when sample k plays at startTime + k / sampleRate (then
   * {@link sampleRate} is exact, else the mean rate).
   */
  declare readonly keyTimes: Float32Array | undefined;
  /**
   * Set on an additive clip: its decoded poses are deltas to apply to a base pose
   * (`applyAdditivePose`), taken against the reference it names; undefined for a
   * clip of absolute poses.
   */
  declare readonly additive: AdditiveInfo | undefined;
  /** Number of animated tracks. */
  declare readonly animatedTrackCount: number;
  /** Size of the file in bytes. */
  declare readonly byteLength: number;
  /** Whether the file carries a checksum. */
  declare readonly hasChecksum: boolean;
  /** @internal The header's flags (format.ts's FLAGS). */
  declare readonly flags: number;
  /** @internal Decode tables for {@link ClipSampler}. */
  declare readonly tables: ClipTables;
  /** @internal The file's bytes: the caller's, or where the kernel decodes its copy (clip-inspection.ts reads the rates). */
  declare readonly bytes: Uint8Array;

  private constructor(bytes: Uint8Array, verifyChecksum: boolean, compactTables: boolean, useKernel: boolean) {
    // The file's sections in order, each validated by its own stage (clip-reader.ts), in the
    // order docs/format.md's validation table lists the checks; each stage's fields are
    // assigned as it passes (a clip that fails is never returned).
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const header = readHeader(bytes, view, verifyChecksum);
    Object.assign(this, header);
    this.parents = readParents(view, header);
    const { animated, layout } = readTracks(view, header);
    this.nodeIndices = layout.nodeIndices ? readNodeIndices(view, layout.nodeIndices, header.boneCount) : undefined;
    this.keyTimes = readKeyTimes(view, header, layout.keyTimes);
    this.additive = readAdditive(view, layout.additive);
    const segments = readSegments(bytes, view, header, animated, layout);
    // The clip's name and bone names, as readNames names them.
    Object.assign(this, readNames(bytes, view, header, segments.end));
    this.byteLength = bytes.byteLength;
    this.tables = buildTables(
      { bytes, animated, segments, parents: this.parents },
      compactTables,
      useKernel ? kernelPlace : undefined,
    );
    // Where the kernel decodes, the file's copy in its memory: the caller's bytes are not kept.
    this.bytes = this.tables.kernel ? this.tables.kernel.file : bytes;
  }

  /**
   * Validates `bytes` as a `.bpk` clip and wraps it. The bytes are kept (names, bit rates)
   * and copied only when they start at an offset that is not a multiple of 4 in their
   * ArrayBuffer, or where the WebAssembly kernel decodes (into its memory, where it reads
   * them); the decode tables take about 0.8 × the file size on the corpus, 1.04 × where
   * the kernel decodes (see {@link OpenOptions.tables}). Work and memory are
   * linear in the file size. Throws {@link FormatError} naming the problem and its byte offset.
   */
  static open(bytes: Uint8Array | ArrayBuffer, options: OpenOptions = {}): CompressedClip {
    let u8 = bytes instanceof ArrayBuffer ? new Uint8Array(bytes) : bytes;
    if (!(u8 instanceof Uint8Array)) throw new FormatError('BAD_ARGUMENT', 'expected a Uint8Array or ArrayBuffer');
    if ((u8.byteOffset & 3) !== 0) u8 = u8.slice();
    const { tables = 'full', decoder = 'auto' } = options;
    checkOption('tables', tables, 'full', 'compact');
    checkOption('decoder', decoder, 'auto', 'typescript');
    return new CompressedClip(u8, options.verifyChecksum ?? true, tables === 'compact', decoder === 'auto');
  }

  /**
   * A new per-instance sampler over this clip: one per character (or mixer action) that
   * plays it. The clip itself is shared and never changes.
   */
  createSampler(): ClipSampler {
    return new ClipSampler(this);
  }

  /** The code that decodes this clip's poses (see {@link OpenOptions.decoder}). */
  get decoder(): 'wasm' | 'typescript' {
    return this.tables.kernel ? 'wasm' : 'typescript';
  }

  /** Whether the source animates track `kind` of `bone` (a host binds only these). */
  hasChannel(bone: number, kind: number): boolean {
    return trackBit(this.bytes, this.boneCount, BITSET.CHANNEL, bone * TRACKS_PER_BONE + kind) === 1;
  }
}

/** Throws a BAD_ARGUMENT error unless option `name`'s `value` is `a` or `b`. */
function checkOption(name: string, value: string, a: string, b: string): void {
  if (value !== a && value !== b)
    throw new FormatError('BAD_ARGUMENT', `${name} must be '${a}' or '${b}', got ${String(value)}`);
}
