/**
 * glTF in, glTF out, on files: reads a `.glb` or `.gltf` (its buffers and images through
 * the same guarded resource reader as the glTF clip reader), compresses its skeletal
 * animations with `bonepress()` (src/gltf-transform/), and writes a `.glb` or `.gltf` whose
 * other contents glTF-Transform carried through: every extension of
 * @gltf-transform/extensions is registered, with the meshopt and Draco codecs loaded when the
 * asset uses them, and `KHR_animation_pointer` channels pass through as they are.
 */
import { mkdir } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { basename, dirname, extname, join } from 'node:path';

import type { Document, GLTF, NodeIO } from '@gltf-transform/core';

import type {
  AnimationBytes,
  BonepressOptions,
  CompressedAnimationReport,
  KeptAnimationReport,
} from '../gltf-transform/types.js';
import type { CompressedAnimation } from '../gltf-transform/extension.js';
import { ParseError, PARSE_ERROR } from '../readers/errors.js';
import type { GltfReadOptions, GltfReadResult } from '../readers/gltf.js';
import { CompressedClip } from '../runtime/compressed-clip.js';
import { BonepressError } from '../shared/errors.js';
import {
  holdsBytes,
  readGltfResourceSync,
  readInputFile,
  resolveGltfResource,
  writeFileAtomic,
  type ReadFileOptions,
} from './files.js';
import { quoteExcerpt } from './failure.js';
import { InputSet } from './outputs.js';

/** Output container of {@link compressGltfFile}. */
export type GltfOutputFormat = 'glb' | 'gltf';

/** Options of {@link compressGltfFile}. */
export interface CompressGltfFileOptions extends BonepressOptions {
  /** Container to write. Default: from the output's extension (`.gltf` → JSON, else GLB). */
  format?: GltfOutputFormat;
  /** How input files and their resources are read (caps, special files, resources outside the folder). */
  read?: ReadFileOptions;
}

/** What {@link compressGltfFile} did, with sizes for `compress --json`. */
export interface CompressGltfFileResult {
  input: string;
  output: string;
  format: GltfOutputFormat;
  animations: CompressedAnimationReport[];
  /** Animations left as they were, their compressed form being no smaller (bonepress's `kept`). */
  kept: KeptAnimationReport[];
  warnings: string[];
  /** Extensions of the input that glTF-Transform I/O does not know, and therefore did not write. */
  droppedExtensions: string[];
  /** Animation bytes of the source and the output, counted alike (src/gltf-transform/sizes.ts). */
  sourceAnimation: AnimationBytes;
  outputAnimation: AnimationBytes;
  /** Whole-file sizes (the output's resources included for `.gltf`). */
  sourceFileBytes: number;
  outputFileBytes: number;
}

const GLB_MAGIC = 0x46546c67;

/**
 * Compresses the skeletal animations of the glTF asset at `input` into `output`
 * (docs/gltf-extension.md), creating the output's folder when missing. An output never
 * replaces the input or one of its resources (also through a link, a hard link or another
 * case of its name): such an output is refused with `OutputError` `OUTPUT_CLASH` before
 * anything is written, but for a `.gltf` output's resource that already holds the very
 * bytes it would get (a texture written next to its source), which is left as it is.
 * Throws `ParseError` naming the file for unreadable input or animation data,
 * `OptionsError` for bad options, and Node's errors for file problems.
 */
export async function compressGltfFile(
  input: string,
  output: string,
  options: CompressGltfFileOptions = {},
): Promise<CompressGltfFileResult> {
  const format = options.format ?? (extname(output).toLowerCase() === '.gltf' ? 'gltf' : 'glb');
  const [{ BonepressAnimationCompression, compressDocument, animationBytes }, { mergeBuffers }] = await Promise.all([
    import('../gltf-transform/index.js'),
    import('../gltf-transform/buffers.js'),
  ]);
  const { io, json, resources, sourceFileBytes, droppedExtensions } = await openAsset(input, options.read);
  // A GLB's own chunk is named like a resource ('@glb.bin'), but no file holds it.
  const resourceFiles = Object.keys(resources).flatMap((uri) => resolveGltfResource(input, uri, options.read) ?? []);
  const inputs = await InputSet.of([input, ...resourceFiles]);
  await inputs.refuse([output]);
  await installCodecs(io, input, json.extensionsUsed ?? []);
  const sourceAnimation = animationBytes(json);
  const doc = await readDocument(io, input, json, resources);
  const { animations, kept, warnings } = await compressDocument(doc, { ...options, file: input });
  if (
    animations.length === 0 &&
    kept.length === 0 &&
    !doc
      .getRoot()
      .listAnimations()
      .some((a) => a.getExtension(BonepressAnimationCompression.EXTENSION_NAME))
  ) {
    throw new ParseError(PARSE_ERROR.NO_ANIMATION, 'no skeletal animation to compress', input);
  }
  let outputFileBytes: number;
  let outputJson: GLTF.IGLTF;
  await mkdir(dirname(output), { recursive: true });
  if (format === 'glb') {
    mergeBuffers(doc);
    const glb = await io.writeBinary(doc);
    await writeFileAtomic(output, glb);
    outputFileBytes = glb.byteLength;
    outputJson = (await io.binaryToJSON(glb)).json;
  } else {
    // Buffers are named after the output (`x.bp.bin`), never after the source's files: beside
    // the source, its own names would have the output replace the input's data.
    for (const buffer of doc.getRoot().listBuffers()) buffer.setURI('');
    const written = await io.writeJSON(doc, { basename: basename(output, extname(output)) });
    const text = JSON.stringify(written.json, null, 2);
    outputFileBytes = Buffer.byteLength(text);
    const files = Object.entries(written.resources).map(([uri, data]) => ({ path: join(dirname(output), uri), data }));
    const changed = files.filter((file) => !holdsBytes(file.path, file.data));
    await inputs.refuse(changed.map((file) => file.path));
    for (const file of changed) await writeFileAtomic(file.path, file.data);
    outputFileBytes += files.reduce((sum, file) => sum + file.data.byteLength, 0);
    await writeFileAtomic(output, text);
    outputJson = written.json;
  }
  return {
    input,
    output,
    format,
    animations,
    kept,
    warnings,
    droppedExtensions,
    sourceAnimation,
    outputAnimation: animationBytes(outputJson),
    sourceFileBytes,
    outputFileBytes,
  };
}

/**
 * Reads the container of the glTF asset at `path` with a glTF-Transform I/O that knows every
 * extension of @gltf-transform/extensions and bonepress's. Throws ParseError `UNSUPPORTED`
 * for a required extension it does not know, unless `anyRequired`.
 */
async function openAsset(
  path: string,
  read: ReadFileOptions | undefined,
  anyRequired = false,
): Promise<{
  io: NodeIO;
  json: GLTF.IGLTF;
  resources: Record<string, Uint8Array<ArrayBuffer>>;
  sourceFileBytes: number;
  droppedExtensions: string[];
  missing: string[];
}> {
  // Loaded on first use, so `bonepress/node` (and the CLI) start without glTF-Transform.
  const [{ NodeIO }, { ALL_EXTENSIONS }, { BonepressAnimationCompression, KHRAnimationPointerPassThrough }] =
    await Promise.all([
      import('@gltf-transform/core'),
      import('@gltf-transform/extensions'),
      import('../gltf-transform/index.js'),
    ]);
  const extensions = [...ALL_EXTENSIONS, BonepressAnimationCompression, KHRAnimationPointerPassThrough];
  const io = new NodeIO().registerExtensions(extensions);
  const bytes = await readInputFile(path, read);
  const { json, resources, sourceFileBytes } = await readContainer(io, path, bytes, read);
  // glTF-Transform reads only registered extensions: it refuses unknown required ones, and
  // drops optional ones with everything they hold (said in droppedExtensions).
  const known = new Set(extensions.map((e) => e.EXTENSION_NAME));
  const droppedExtensions = (json.extensionsUsed ?? []).filter((name) => !known.has(name));
  const missing = (json.extensionsRequired ?? []).filter((name) => !known.has(name));
  if (!anyRequired) refuseMissing(path, missing);
  return { io, json, resources, sourceFileBytes, droppedExtensions, missing };
}

/** ParseError `UNSUPPORTED` when the asset requires extensions glTF-Transform I/O does not know. */
function refuseMissing(path: string, missing: readonly string[]): void {
  if (missing.length === 0) return;
  throw new ParseError(
    PARSE_ERROR.UNSUPPORTED,
    `requires ${missing.join(', ')}, which glTF-Transform I/O cannot read or write, so bonepress cannot carry ${missing.length > 1 ? 'them' : 'it'} through; ` +
      'write the asset without it (or compress to loose .bpk clips with -o folder/, which reads only the animations)',
    path,
  );
}

/** The Document of an asset's JSON and resources; a malformed extension object is a ParseError naming the file and its JSON path. */
async function readDocument(
  io: NodeIO,
  path: string,
  json: GLTF.IGLTF,
  resources: Record<string, Uint8Array<ArrayBuffer>>,
): Promise<Document> {
  try {
    io.setLogger({ debug: () => {}, info: () => {}, warn: () => {}, error: () => {} });
    return await io.readJSON({ json, resources });
  } catch (error) {
    if (error instanceof BonepressError)
      throw new ParseError(PARSE_ERROR.BAD_VALUE, `${animationLabel(json, error.detail)}${error.detail}`, path);
    throw new ParseError(
      PARSE_ERROR.BAD_VALUE,
      `glTF-Transform cannot read the asset: ${(error as Error).message}`,
      path,
    );
  }
}

/** `animation 2 "Run": ` when `jsonPath` is inside `animations[2]`, else nothing. */
function animationLabel(json: GLTF.IGLTF, jsonPath: string): string {
  const match = /^animations\[(\d+)\]/.exec(jsonPath);
  if (!match) return '';
  const index = Number(match[1]);
  return `animation ${index} ${JSON.stringify(json.animations?.[index]?.name ?? '')}: `;
}

/** One compressed animation of a glTF asset (docs/gltf-extension.md), as {@link readCompressedGltfFile} gives it. */
export interface GltfCompressedClip {
  /** The animation's name as written in the file ('' when unnamed). */
  name: string;
  /** Index in the asset's `animations`. */
  index: number;
  /** The clip, opened and checked against the bone lists below. */
  clip: CompressedClip;
  /** glTF node index of each bone of the clip's bone table, in bone order (the clip's first bones); empty without a table. */
  joints: number[];
  /** Node index of each node bone (props, cameras), after the table's bones. */
  nodes: number[];
  /** Weight bones after the node bones: per node, one displacement scale per morph target (one bone each). */
  weights: { node: number; scales: number[] }[];
  /**
   * Every bone's name, from the asset's nodes as the glTF reader names them: the node's name
   * (`node_<i>` when it has none), `<node>.weights[<t>]` for a weight bone. The clip itself
   * stores none.
   */
  boneNames: string[];
}

/**
 * The compressed clips of the glTF asset (`.glb` or `.gltf`) at `path`, in animation order,
 * with their names and what their bones bind to; empty when the asset does not use
 * `BONEPRESS_animation_compression`. Each clip is opened (version, checksum) and checked
 * against its animation's bone table and extra-bone lists, as a loader would. Throws
 * ParseError naming the file and the animation for a malformed extension object or clip
 * data, and Node's errors for file problems.
 */
export async function readCompressedGltfFile(
  path: string,
  options: ReadFileOptions = {},
): Promise<GltfCompressedClip[]> {
  const { BONEPRESS_ANIMATION_COMPRESSION } = await import('../gltf-transform/extension.js');
  // An asset without the extension is not refused for what else it requires: it has no compressed clip.
  const { io, json, resources, missing } = await openAsset(path, options, true);
  if (!(json.extensionsUsed ?? []).includes(BONEPRESS_ANIMATION_COMPRESSION)) return [];
  refuseMissing(path, missing);
  await installCodecs(io, path, json.extensionsUsed ?? []);
  const doc = await readDocument(io, path, json, resources);
  const nodeIndex = new Map(
    doc
      .getRoot()
      .listNodes()
      .map((node, i) => [node, i]),
  );
  const out: GltfCompressedClip[] = [];
  doc
    .getRoot()
    .listAnimations()
    .forEach((animation, index) => {
      const compressed = animation.getExtension<CompressedAnimation>(BONEPRESS_ANIMATION_COMPRESSION);
      if (!compressed) return;
      const name = animation.getName();
      const fail = (problem: string): never => {
        throw new ParseError(
          PARSE_ERROR.BAD_VALUE,
          `animation ${index} ${JSON.stringify(name)}: ${BONEPRESS_ANIMATION_COMPRESSION}: ${problem}`,
          path,
        );
      };
      const table = compressed.getSkeleton();
      const joints = (table?.listJoints() ?? []).map((n) => nodeIndex.get(n)!);
      const parents = table?.getParents() ?? [];
      const nodes = compressed.listNodes().map((n) => nodeIndex.get(n)!);
      const scales = compressed.getWeightScales();
      const weights = compressed
        .listWeightNodes()
        .map((n, w) => ({ node: nodeIndex.get(n)!, scales: scales[w] ?? [] }));
      const data = compressed.getData();
      if (!data) return fail('no clip data');
      let clip: CompressedClip;
      try {
        clip = CompressedClip.open(data);
      } catch (error) {
        return fail(
          `the clip data is not a valid .bpk: ${error instanceof BonepressError ? error.detail : (error as Error).message}`,
        );
      }
      const boneCount = compressed.getBoneCount();
      if (clip.boneCount !== boneCount)
        fail(`the clip has ${clip.boneCount} bones, but its bone table, nodes and weights ${boneCount}`);
      for (let b = 0; b < boneCount; b++) {
        const expected = b < parents.length ? parents[b] : -1;
        if (clip.parents[b] !== expected)
          fail(`bone ${b}: the clip's parent ${clip.parents[b]} differs from the bone table's ${expected}`);
      }
      const nodeName = (n: number): string => doc.getRoot().listNodes()[n]?.getName() || `node_${n}`;
      const boneNames = [...joints, ...nodes].map(nodeName);
      for (const w of weights) w.scales.forEach((_, t) => boneNames.push(`${nodeName(w.node)}.weights[${t}]`));
      out.push({ name, index, clip, joints, nodes, weights, boneNames });
    });
  return out;
}

/** The name of every animation of the glTF asset at `path`, in order ('' when unnamed). */
export async function gltfAnimationNames(path: string, options: ReadFileOptions = {}): Promise<string[]> {
  const { json } = await openAsset(path, options, true);
  return (json.animations ?? []).map((animation) => (typeof animation.name === 'string' ? animation.name : ''));
}

/** Bytes the animations of the glTF file at `path` take (`animationBytes`: samplers' data and their JSON). */
export async function gltfAnimationBytes(path: string, options: ReadFileOptions = {}): Promise<number> {
  const [{ json }, { animationBytes }] = await Promise.all([
    openAsset(path, options, true),
    import('../gltf-transform/sizes.js'),
  ]);
  return animationBytes(json).total;
}

/**
 * Reads the clips of a glTF source file as {@link readGltfWithWarnings} does (with
 * `extraTracks`, the extra bones each clip of a compressed asset holds), its external
 * buffers next to it through the same guarded reader as {@link readInputFile}.
 */
export async function readGltfSourceFile(
  path: string,
  options: ReadFileOptions & Pick<GltfReadOptions, 'extraTracks'> = {},
): Promise<GltfReadResult> {
  const [bytes, { readGltfWithWarnings }] = await Promise.all([
    readInputFile(path, options),
    import('../readers/gltf.js'),
  ]);
  return readGltfWithWarnings(bytes, path, {
    ...options,
    loadResource: (uri) => readGltfResourceSync(path, uri, options),
  });
}

const MESHOPT = 'EXT_meshopt_compression';
const DRACO = 'KHR_draco_mesh_compression';

/** The Draco modules of the `draco3dgltf` package (CommonJS, untyped). */
interface Draco3dGltf {
  createDecoderModule(options?: object): Promise<unknown>;
  createEncoderModule(options?: object): Promise<unknown>;
}

/**
 * Registers the decoder and encoder of each compression extension `used` lists (meshopt,
 * Draco): glTF-Transform decodes such meshes on read and encodes them again on write. Loaded
 * only for assets that use them (Draco's modules take a moment to instantiate). Throws
 * ParseError `UNSUPPORTED` naming the extension when its codec cannot be loaded.
 */
async function installCodecs(io: NodeIO, input: string, used: readonly string[]): Promise<void> {
  const codec = async (
    extension: string,
    what: string,
    load: () => Promise<Record<string, unknown>>,
  ): Promise<void> => {
    try {
      io.registerDependencies(await load());
    } catch (error) {
      throw new ParseError(
        PARSE_ERROR.UNSUPPORTED,
        `uses ${extension}, but its codec (${what}) cannot be loaded: ${(error as Error).message}; reinstall bonepress's dependencies, or write the asset without ${extension}`,
        input,
      );
    }
  };
  if (used.includes(MESHOPT)) {
    await codec(MESHOPT, 'the npm package meshoptimizer', async () => {
      const [{ MeshoptDecoder }, { MeshoptEncoder }] = await Promise.all([
        import('meshoptimizer/decoder'),
        import('meshoptimizer/encoder'),
      ]);
      await Promise.all([MeshoptDecoder.ready, MeshoptEncoder.ready]);
      return { 'meshopt.decoder': MeshoptDecoder, 'meshopt.encoder': MeshoptEncoder };
    });
  }
  if (used.includes(DRACO)) {
    await codec(DRACO, 'the npm package draco3dgltf', async () => {
      const draco = createRequire(import.meta.url)('draco3dgltf') as Draco3dGltf;
      const [decoder, encoder] = await Promise.all([draco.createDecoderModule(), draco.createEncoderModule()]);
      return { 'draco3d.decoder': decoder, 'draco3d.encoder': encoder };
    });
  }
}

/**
 * The glTF JSON of a file that is not a GLB, as the glTF reader decides it: a file whose
 * first character (after a BOM and blanks) is not `{` is a GLB with a bad magic. Messages
 * quote at most 40 characters of the file, escaped.
 */
function parseJson(bytes: Uint8Array, path: string): GLTF.IGLTF {
  const text = new TextDecoder().decode(bytes).replace(/^\uFEFF/, '');
  const start = text.length - text.trimStart().length;
  if (text[start] !== '{') {
    const magic =
      bytes.byteLength >= 4 ? new DataView(bytes.buffer, bytes.byteOffset, 4).getUint32(0, true) : undefined;
    const problem =
      magic === undefined
        ? `${bytes.byteLength} bytes is shorter than the 12-byte header`
        : `bad magic 0x${magic.toString(16).padStart(8, '0')}`;
    throw new ParseError(
      PARSE_ERROR.BAD_VALUE,
      `corrupt GLB: ${problem} (expected "glTF", or a JSON file starting with "{")`,
      path,
    );
  }
  try {
    return JSON.parse(text) as GLTF.IGLTF;
  } catch (error) {
    const at = /position (\d+)/.exec((error as Error).message);
    const position = at ? Number(at[1]) : text.length;
    throw new ParseError(
      PARSE_ERROR.SYNTAX,
      `invalid glTF JSON at character ${position}, near ${quoteExcerpt(text.slice(position))}`,
      path,
    );
  }
}

/** The JSON and resources of a GLB or `.gltf` file; external resources read next to it. */
async function readContainer(
  io: NodeIO,
  path: string,
  bytes: Uint8Array,
  read: ReadFileOptions | undefined,
): Promise<{ json: GLTF.IGLTF; resources: Record<string, Uint8Array<ArrayBuffer>>; sourceFileBytes: number }> {
  if (bytes.byteLength >= 4 && new DataView(bytes.buffer, bytes.byteOffset, 4).getUint32(0, true) === GLB_MAGIC) {
    try {
      const { json, resources } = await io.binaryToJSON(bytes);
      return { json, resources, sourceFileBytes: bytes.byteLength };
    } catch (error) {
      throw new ParseError(PARSE_ERROR.BAD_VALUE, `not a valid GLB: ${(error as Error).message}`, path);
    }
  }
  const json = parseJson(bytes, path);
  const resources: Record<string, Uint8Array<ArrayBuffer>> = {};
  let sourceFileBytes = bytes.byteLength;
  for (const def of [...(json.buffers ?? []), ...(json.images ?? [])]) {
    const uri = def.uri;
    if (uri === undefined || uri.startsWith('data:') || resources[uri]) continue;
    let data: Uint8Array | undefined;
    try {
      data = readGltfResourceSync(path, uri, read);
    } catch (error) {
      throw new ParseError(
        PARSE_ERROR.UNSUPPORTED,
        `resource ${JSON.stringify(uri)}: ${(error as Error).message}`,
        path,
      );
    }
    if (!data)
      throw new ParseError(PARSE_ERROR.BAD_VALUE, `resource ${JSON.stringify(uri)} not found next to the asset`, path);
    resources[uri] = new Uint8Array(data);
    sourceFileBytes += data.byteLength;
  }
  return { json, resources, sourceFileBytes };
}
