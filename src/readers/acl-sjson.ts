/**
 * ACL SJSON clip reader (`.acl.sjson`), the raw-clip format of the Animation Compression
 * Library's tools and regression data, so one clip can be compressed by both and compared.
 *
 * The layout follows ACL's `tools/format_reference.acl.sjson` (versions 1–5):
 * `version`, `clip` { name, num_samples, sample_rate, is_binary_exact, additive_format … },
 * optional `settings` (ignored: bonepress has its own), `bones` [{ name, parent,
 * vertex_distance, bind_rotation, bind_translation, bind_scale }] and `tracks` [{ name,
 * rotations, translations, scales }]. SJSON is JSON relaxed: unquoted keys, `=` or `:`,
 * optional commas, `//` and `/* *\/` comments, bare words as string values, and an implicit
 * object at the root.
 */
import { createRawClip, validateRawClip, type RawClip } from '../clip/raw-clip.js';
import { createSkeleton, POSE_STRIDE } from '../clip/skeleton.js';
import type { LengthUnit } from '../clip/units.js';
import { ParseError, PARSE_ERROR, quoteText, type ParseErrorCode } from './errors.js';
import { boneSamplesProblem, checkBoneCount, checkClipSize, READ_LIMITS, type ReadOptions } from './options.js';

/** Defaults of the ACL SJSON reader. */
export const ACL_SJSON_DEFAULTS = {
  /** ACL files carry no unit; they are read as metres unless `options.unit` says otherwise. */
  unit: 'm',
  /** Newest `version` this reader knows (ACL 2.x writes 5). */
  maxVersion: 5,
} as const satisfies { unit: LengthUnit; maxVersion: number };

/**
 * Reads an ACL SJSON clip (`.acl.sjson`).
 *
 * - Bones may be listed in any order; they are reordered parents first (otherwise file
 *   order). `parent = ""` (or no parent) makes a root.
 * - `vertex_distance` becomes the bone's shell distance (in the clip's unit); bones
 *   without one get the default shell (3 cm).
 * - Bind transforms default to identity; a missing `rotations`, `translations` or `scales`
 *   array, or a bone without a track, holds the bind value for the whole clip.
 * - With `is_binary_exact = true` values may be hexadecimal strings holding the bits of a
 *   float64, as ACL writes them; plain numbers are accepted too.
 * - The unit is metres unless `options.unit` says otherwise; `options.sampleRate` is
 *   ignored (the clip is already uniformly sampled).
 *
 * Not read: track lists (`track_list`, scalar tracks) and additive clips
 * (`additive_format` other than none) — both are rejected as UNSUPPORTED.
 *
 * Throws {@link ParseError} with the line and column of the problem: code `LIMIT` when
 * num_samples × bones is over `READ_LIMITS.maxBoneSamples` (readers/options.ts), `TRUNCATED` when a
 * track array holds fewer samples than num_samples. Both are checked before the clip is
 * allocated, so a declared count the file does not back costs no memory.
 */
export function readAclSjson(text: string, file: string, options: ReadOptions = {}): RawClip {
  const doc = new SjsonParser(text, file).parseRoot();
  const at = (node: SjsonNode | undefined, problem: string, code: ParseErrorCode = PARSE_ERROR.BAD_VALUE): never => {
    const { line, column } = node ? doc.position(node.pos) : { line: 0, column: 0 };
    throw new ParseError(code, problem, file, line, column);
  };
  const root = doc.root;
  const unit = options.unit ?? ACL_SJSON_DEFAULTS.unit;

  const version = numberField(root, 'version', at);
  if (!Number.isInteger(version.value) || version.value < 1) at(version, 'version must be a whole number ≥ 1');
  if (version.value > ACL_SJSON_DEFAULTS.maxVersion) {
    at(
      version,
      `ACL SJSON version ${version.value} is newer than this reader knows (${ACL_SJSON_DEFAULTS.maxVersion})`,
      PARSE_ERROR.UNSUPPORTED,
    );
  }
  if (root.entries.has('track_list'))
    at(
      root.entries.get('track_list'),
      'ACL track lists (scalar tracks) are not supported; only clips',
      PARSE_ERROR.UNSUPPORTED,
    );

  const clipNode = objectField(root, 'clip', at);
  const nameNode = clipNode.entries.get('name');
  const name = nameNode ? stringValue(nameNode, 'clip name', at) : defaultClipName(file);
  const numSamples = numberField(clipNode, 'num_samples', at);
  if (!Number.isInteger(numSamples.value) || numSamples.value < 1)
    at(numSamples, `num_samples must be a whole number ≥ 1, got ${numSamples.value}`);
  const sampleCount = numSamples.value;
  const rateNode = numberField(clipNode, 'sample_rate', at);
  if (!(rateNode.value > 0) || !Number.isFinite(rateNode.value))
    at(rateNode, `sample_rate must be a positive number, got ${rateNode.value}`);
  const sampleRate = rateNode.value;
  const exactNode = clipNode.entries.get('is_binary_exact');
  if (exactNode && exactNode.kind !== 'boolean') at(exactNode, 'is_binary_exact must be true or false');
  const binaryExact = exactNode?.kind === 'boolean' && exactNode.value;
  const additive = clipNode.entries.get('additive_format');
  if (additive && !(additive.kind === 'string' && additive.value.toLowerCase() === 'none')) {
    at(
      additive,
      `additive clips are not supported (additive_format ${additive.kind === 'string' ? quoteText(additive.value) : 'is not a string'})`,
      PARSE_ERROR.UNSUPPORTED,
    );
  }
  const settings = root.entries.get('settings');
  if (settings && settings.kind !== 'object') at(settings, 'settings must be an object');

  const num = (node: SjsonNode, what: string): number => {
    let v: number;
    if (node.kind === 'number') v = node.value;
    else if (node.kind === 'string' && binaryExact) v = hexToDouble(node, what, at);
    else return at(node, `${what}: expected a number${binaryExact ? ' or a hexadecimal float64' : ''}`);
    if (!Number.isFinite(v)) at(node, `${what} is ${v}`);
    return v;
  };
  const vector = (node: SjsonNode, size: number, what: string, out: Float32Array | Float64Array, o: number): void => {
    if (node.kind !== 'array' || node.items.length !== size) at(node, `${what}: expected an array of ${size} numbers`);
    const items = (node as SjsonArray).items;
    for (let c = 0; c < size; c++) out[o + c] = num(items[c], `${what}[${c}]`);
    if (size === 4 && out[o] === 0 && out[o + 1] === 0 && out[o + 2] === 0 && out[o + 3] === 0)
      at(node, `${what} is a zero quaternion`);
  };

  // Bones, in file order first.
  const bonesNode = arrayField(root, 'bones', at);
  if (bonesNode.items.length === 0) at(bonesNode, 'bones is empty');
  const bonesAt = doc.position(bonesNode.pos);
  checkBoneCount(file, bonesAt.line, bonesNode.items.length, bonesAt.column);
  const fileBones = bonesNode.items.map((b, i) => {
    if (b.kind !== 'object') return at(b, `bones[${i}] must be an object`);
    const boneName = stringValue(field(b, 'name', at), `bones[${i}].name`, at);
    const parentNode = b.entries.get('parent');
    const parent = parentNode ? stringValue(parentNode, `bone ${quoteText(boneName)} parent`, at) : '';
    const distNode = b.entries.get('vertex_distance');
    let distance: number | undefined;
    if (distNode) {
      distance = num(distNode, `bone ${quoteText(boneName)} vertex_distance`);
      if (!(distance > 0)) at(distNode, `bone ${quoteText(boneName)} vertex_distance must be > 0, got ${distance}`);
    }
    const bind = new Float64Array(POSE_STRIDE);
    bind[3] = 1;
    bind[7] = 1;
    bind[8] = 1;
    bind[9] = 1;
    const r = b.entries.get('bind_rotation'),
      t = b.entries.get('bind_translation'),
      s = b.entries.get('bind_scale');
    if (r) vector(r, 4, `bone ${quoteText(boneName)} bind_rotation`, bind, 0);
    if (t) vector(t, 3, `bone ${quoteText(boneName)} bind_translation`, bind, 4);
    if (s) vector(s, 3, `bone ${quoteText(boneName)} bind_scale`, bind, 7);
    return { node: b, name: boneName, parent, parentNode, distance, bind };
  });
  const fileIndex = new Map<string, number>();
  fileBones.forEach((b, i) => {
    if (fileIndex.has(b.name)) at(b.node, `two bones are named ${quoteText(b.name)}`);
    fileIndex.set(b.name, i);
  });
  const parentOf = fileBones.map((b) => {
    if (b.parent === '') return -1;
    const p = fileIndex.get(b.parent);
    if (p === undefined)
      return at(b.parentNode, `bone ${quoteText(b.name)} has parent ${quoteText(b.parent)}, which is not a bone`);
    return p;
  });

  // Parents first; otherwise file order (ACL requires this order, other tools may not keep it).
  const boneCount = fileBones.length;
  const order: number[] = [];
  const boneOfFile = new Int32Array(boneCount).fill(-1);
  const chain: number[] = [];
  for (let i = 0; i < boneCount; i++) {
    chain.length = 0;
    for (let b = i; b >= 0 && boneOfFile[b] < 0; b = parentOf[b]) {
      if (chain.length > boneCount)
        at(
          fileBones[i].node,
          `bone ${quoteText(fileBones[i].name)} is its own ancestor (the parent links form a cycle)`,
        );
      chain.push(b);
    }
    for (let c = chain.length - 1; c >= 0; c--) {
      boneOfFile[chain[c]] = order.length;
      order.push(chain[c]);
    }
  }
  const tooMany = boneSamplesProblem(boneCount, sampleCount);
  if (tooMany !== undefined) at(numSamples, `num_samples ${sampleCount}: ${tooMany}`, PARSE_ERROR.LIMIT);

  // Tracks, checked before the clip is allocated: num_samples is only a declaration, and
  // every sample array must hold exactly that many samples (a short one is TRUNCATED).
  const tracksNode = root.entries.get('tracks');
  if (tracksNode && tracksNode.kind !== 'array') at(tracksNode, 'tracks must be an array');
  const kinds = [
    ['rotations', 4],
    ['translations', 3],
    ['scales', 3],
  ] as const;
  const tracks: { bone: number; name: string; arrays: (SjsonArray | undefined)[] }[] = [];
  const seen = new Set<number>();
  for (const [i, t] of (tracksNode ? (tracksNode as SjsonArray).items : []).entries()) {
    if (t.kind !== 'object') at(t, `tracks[${i}] must be an object`);
    const track = t as SjsonObject;
    const trackName = stringValue(field(track, 'name', at), `tracks[${i}].name`, at);
    const f = fileIndex.get(trackName);
    if (f === undefined) at(track.entries.get('name'), `track ${quoteText(trackName)} names no bone`);
    const b = boneOfFile[f as number];
    if (seen.has(b)) at(track, `two tracks for bone ${quoteText(trackName)}`);
    seen.add(b);
    const arrays = kinds.map(([key]) => {
      const samples = track.entries.get(key);
      if (!samples) return undefined;
      if (samples.kind !== 'array') at(samples, `track ${quoteText(trackName)} ${key} must be an array`);
      const count = (samples as SjsonArray).items.length;
      if (count !== sampleCount) {
        at(
          samples,
          `track ${quoteText(trackName)} has ${count} ${key}, expected num_samples = ${sampleCount}`,
          count < sampleCount ? PARSE_ERROR.TRUNCATED : PARSE_ERROR.BAD_VALUE,
        );
      }
      return samples as SjsonArray;
    });
    tracks.push({ bone: b, name: trackName, arrays });
  }

  // After the tracks: a count no array backs is reported as such first.
  const samplesAt = doc.position(numSamples.pos);
  checkClipSize(file, samplesAt.line, `num_samples ${sampleCount}`, boneCount, sampleCount, options, samplesAt.column);

  const defaultPose = new Float32Array(boneCount * POSE_STRIDE);
  order.forEach((f, b) => defaultPose.set(fileBones[f].bind, b * POSE_STRIDE));
  const skeleton = createSkeleton(
    order.map((f) => fileBones[f].name),
    order.map((f) => (parentOf[f] < 0 ? -1 : boneOfFile[parentOf[f]])),
    defaultPose,
    unit,
  );
  order.forEach((f, b) => {
    const d = fileBones[f].distance;
    if (d !== undefined) skeleton.shellDistances[b] = d;
  });
  const clip = createRawClip(name, skeleton, sampleRate, sampleCount, unit);

  // Each track replaces the bind value of the arrays it has.
  const outputs = [clip.rotations, clip.translations, clip.scales] as const;
  for (const { bone: b, name: trackName, arrays } of tracks) {
    arrays.forEach((samples, k) => {
      if (!samples) return;
      const [key, width] = kinds[k];
      const label = `track ${quoteText(trackName)} ${key}`;
      for (let s = 0; s < sampleCount; s++)
        vector(samples.items[s], width, `${label}[${s}]`, outputs[k], (b * sampleCount + s) * width);
    });
  }
  try {
    validateRawClip(clip);
  } catch (e) {
    throw new ParseError(PARSE_ERROR.BAD_VALUE, (e as Error).message, file);
  }
  return clip;
}

/** `walk.acl.sjson` → `walk`, as ACL names a clip without a name. */
function defaultClipName(file: string): string {
  const base = file.slice(Math.max(file.lastIndexOf('/'), file.lastIndexOf('\\')) + 1);
  return base.replace(/(\.acl)?\.sjson$/i, '') || base;
}

const HEX_SCRATCH = new DataView(new ArrayBuffer(8));

/** ACL's binary-exact value: up to 16 hex digits holding the bits of a float64. */
function hexToDouble(node: SjsonString, what: string, at: (n: SjsonNode, p: string) => never): number {
  if (!/^[0-9a-fA-F]{1,16}$/.test(node.value))
    return at(node, `${what}: ${quoteText(node.value)} is not a hexadecimal float64`);
  const padded = node.value.padStart(16, '0');
  HEX_SCRATCH.setUint32(0, parseInt(padded.slice(0, 8), 16));
  HEX_SCRATCH.setUint32(4, parseInt(padded.slice(8), 16));
  return HEX_SCRATCH.getFloat64(0);
}

type At = (node: SjsonNode | undefined, problem: string, code?: ParseErrorCode) => never;

function field(obj: SjsonObject, key: string, at: At): SjsonNode {
  const v = obj.entries.get(key);
  if (!v) return at(obj, `missing "${key}"`);
  return v;
}

function objectField(obj: SjsonObject, key: string, at: At): SjsonObject {
  const v = field(obj, key, at);
  if (v.kind !== 'object') return at(v, `"${key}" must be an object`);
  return v;
}

function arrayField(obj: SjsonObject, key: string, at: At): SjsonArray {
  const v = field(obj, key, at);
  if (v.kind !== 'array') return at(v, `"${key}" must be an array`);
  return v;
}

function numberField(obj: SjsonObject, key: string, at: At): SjsonNumber {
  const v = field(obj, key, at);
  if (v.kind !== 'number') return at(v, `"${key}" must be a number`);
  return v;
}

function stringValue(node: SjsonNode, what: string, at: At): string {
  if (node.kind !== 'string') return at(node, `${what} must be a string`);
  return node.value;
}

// ---------------------------------------------------------------------------------------
// SJSON: a small recursive-descent parser. Nodes keep their byte offset; line and column
// are computed only when an error needs them.

/** A parsed SJSON value with the offset of its first character. */
export type SjsonNode = SjsonString | SjsonNumber | SjsonBoolean | SjsonNull | SjsonArray | SjsonObject;
/** A string (quoted, or a bare word such as `float4f`). */
export interface SjsonString {
  kind: 'string';
  value: string;
  pos: number;
}
/** A number. */
export interface SjsonNumber {
  kind: 'number';
  value: number;
  pos: number;
}
/** `true` or `false`. */
export interface SjsonBoolean {
  kind: 'boolean';
  value: boolean;
  pos: number;
}
/** `null`. */
export interface SjsonNull {
  kind: 'null';
  pos: number;
}
/** An array; commas between items are optional. */
export interface SjsonArray {
  kind: 'array';
  items: SjsonNode[];
  pos: number;
}
/** An object; keys are unique. */
export interface SjsonObject {
  kind: 'object';
  entries: Map<string, SjsonNode>;
  pos: number;
}

/** A parsed SJSON document: the root object and offset → line/column. */
export interface SjsonDocument {
  root: SjsonObject;
  /** 1-based line and column of a character offset. */
  position(pos: number): { line: number; column: number };
}

/**
 * Parses SJSON text (see the module comment for the syntax). The root is an implicit
 * object, or an explicit `{ … }`. Throws {@link ParseError} with the line and column.
 */
export function parseSjson(text: string, file: string): SjsonDocument {
  return new SjsonParser(text, file).parseRoot();
}

const MAX_DEPTH = 256;
const NUMBER_RE = /[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?/y;
const WORD_RE = /[A-Za-z_$][\w$.-]*/y;
/** A bare value that starts like a number but goes on with letters, e.g. unquoted hex `3F800000`. */
const BARE_RE = /[\w$.+-]+/y;
const ESCAPES: Readonly<Record<string, string>> = {
  '"': '"',
  '\\': '\\',
  '/': '/',
  b: '\b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
};

class SjsonParser {
  private i = 0;
  private depth = 0;
  /** Most items the next array may hold (the root's `bones`), or 0 for no limit. */
  private nextArrayLimit = 0;

  constructor(
    private readonly text: string,
    private readonly file: string,
  ) {
    if (text.charCodeAt(0) === 0xfeff) this.i = 1;
  }

  parseRoot(): SjsonDocument {
    this.skip();
    let root: SjsonObject;
    if (this.text.charCodeAt(this.i) === 0x7b /* { */) {
      root = this.parseObject();
      this.skip();
      if (this.i < this.text.length) this.error('unexpected text after the root object');
    } else {
      root = this.parseEntries(this.i, -1);
    }
    return { root, position: (pos) => this.position(pos) };
  }

  /** Line and column of `pos`. Called for errors and a few places only: one scan, no line table. */
  private position(pos: number): { line: number; column: number } {
    const t = this.text;
    let line = 1,
      start = 0;
    for (let nl = t.indexOf('\n'); nl >= 0 && nl < pos; nl = t.indexOf('\n', nl + 1)) {
      line++;
      start = nl + 1;
    }
    return { line, column: pos - start + 1 };
  }

  private error(problem: string, pos = this.i, code: ParseErrorCode = PARSE_ERROR.SYNTAX): never {
    const { line, column } = this.position(pos);
    throw new ParseError(code, problem, this.file, line, column);
  }

  /** Skips whitespace and comments (not commas). */
  private skip(): void {
    const t = this.text;
    for (;;) {
      const c = t.charCodeAt(this.i);
      if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) {
        this.i++;
        continue;
      }
      if (c === 0x2f /* / */) {
        const d = t.charCodeAt(this.i + 1);
        if (d === 0x2f) {
          const end = t.indexOf('\n', this.i + 2);
          this.i = end < 0 ? t.length : end + 1;
          continue;
        }
        if (d === 0x2a /* * */) {
          const end = t.indexOf('*/', this.i + 2);
          if (end < 0) this.error('unclosed /* comment', this.i, PARSE_ERROR.TRUNCATED);
          this.i = end + 2;
          continue;
        }
      }
      return;
    }
  }

  /** Skips whitespace and at most one comma. */
  private skipSeparator(): void {
    this.skip();
    if (this.text.charCodeAt(this.i) === 0x2c /* , */) {
      this.i++;
      this.skip();
    }
  }

  /** `key = value` pairs until `close` (a char code) or, for the root (-1), the end of the text. */
  private parseEntries(pos: number, close: number): SjsonObject {
    const entries = new Map<string, SjsonNode>();
    for (;;) {
      this.skip();
      const c = this.text.charCodeAt(this.i);
      if (close < 0 ? this.i >= this.text.length : c === close) break;
      if (this.i >= this.text.length)
        this.error(`unclosed object (opened at line ${this.position(pos).line})`, this.i, PARSE_ERROR.TRUNCATED);
      const keyPos = this.i;
      const key = this.parseKey();
      this.skip();
      const sep = this.text.charCodeAt(this.i);
      if (sep !== 0x3d /* = */ && sep !== 0x3a /* : */) this.error(`expected "=" or ":" after key ${quoteText(key)}`);
      this.i++;
      this.skip();
      // The root's bone list is checked against the .bpk bone limit while it is parsed, so a
      // file with a million bones fails before the rest of it becomes nodes.
      this.nextArrayLimit = this.depth <= 1 && key === 'bones' ? READ_LIMITS.maxBones : 0;
      const value = this.parseValue();
      if (entries.has(key)) this.error(`duplicate key ${quoteText(key)}`, keyPos);
      entries.set(key, value);
      this.skipSeparator();
    }
    if (close >= 0) this.i++;
    return { kind: 'object', entries, pos };
  }

  private parseKey(): string {
    if (this.text.charCodeAt(this.i) === 0x22 /* " */) return this.parseString();
    WORD_RE.lastIndex = this.i;
    const m = WORD_RE.exec(this.text);
    if (!m)
      this.error(
        this.i >= this.text.length
          ? 'unexpected end of file, expected a key'
          : `expected a key, found "${this.text[this.i]}"`,
      );
    this.i += m![0].length;
    return m![0];
  }

  private parseValue(): SjsonNode {
    const pos = this.i;
    const c = this.text.charCodeAt(pos);
    if (c === 0x7b /* { */) return this.parseObject();
    if (c === 0x5b /* [ */) return this.parseArray();
    if (c === 0x22 /* " */) return { kind: 'string', value: this.parseString(), pos };
    NUMBER_RE.lastIndex = pos;
    const n = NUMBER_RE.exec(this.text);
    if (n) {
      const next = this.text.charCodeAt(pos + n[0].length);
      const isWordChar = (next >= 0x41 && next <= 0x5a) || (next >= 0x61 && next <= 0x7a) || next === 0x5f;
      if (!isWordChar) {
        this.i += n[0].length;
        return { kind: 'number', value: Number(n[0]), pos };
      }
      BARE_RE.lastIndex = pos;
      const bare = BARE_RE.exec(this.text)![0];
      this.i += bare.length;
      return { kind: 'string', value: bare, pos };
    }
    WORD_RE.lastIndex = pos;
    const w = WORD_RE.exec(this.text);
    if (w) {
      this.i += w[0].length;
      if (w[0] === 'true' || w[0] === 'false') return { kind: 'boolean', value: w[0] === 'true', pos };
      if (w[0] === 'null') return { kind: 'null', pos };
      return { kind: 'string', value: w[0], pos };
    }
    if (pos >= this.text.length)
      return this.error('unexpected end of file, expected a value', pos, PARSE_ERROR.TRUNCATED);
    return this.error(`expected a value, found "${this.text[pos]}"`);
  }

  private enter(): void {
    if (++this.depth > MAX_DEPTH) this.error(`nesting deeper than ${MAX_DEPTH} levels`, this.i, PARSE_ERROR.LIMIT);
  }

  private parseObject(): SjsonObject {
    const pos = this.i;
    this.enter();
    this.i++;
    const obj = this.parseEntries(pos, 0x7d /* } */);
    this.depth--;
    return obj;
  }

  private parseArray(): SjsonArray {
    const pos = this.i;
    this.enter();
    this.i++;
    const items: SjsonNode[] = [];
    const limit = this.nextArrayLimit;
    this.nextArrayLimit = 0;
    for (;;) {
      this.skip();
      if (this.i >= this.text.length)
        this.error(`unclosed array (opened at line ${this.position(pos).line})`, this.i, PARSE_ERROR.TRUNCATED);
      if (this.text.charCodeAt(this.i) === 0x5d /* ] */) {
        this.i++;
        break;
      }
      if (limit > 0 && items.length === limit) {
        const { line, column } = this.position(this.i);
        checkBoneCount(this.file, line, limit + 1, column);
      }
      items.push(this.parseValue());
      this.skipSeparator();
    }
    this.depth--;
    return { kind: 'array', items, pos };
  }

  private parseString(): string {
    const t = this.text;
    const start = this.i;
    let out = '';
    let run = ++this.i;
    for (;;) {
      if (this.i >= t.length) this.error('unclosed string', start, PARSE_ERROR.TRUNCATED);
      const c = t.charCodeAt(this.i);
      if (c === 0x22) {
        out += t.slice(run, this.i);
        this.i++;
        return out;
      }
      if (c === 0x0a) this.error('unclosed string (a string cannot span lines)', start);
      if (c !== 0x5c /* \ */) {
        this.i++;
        continue;
      }
      out += t.slice(run, this.i);
      const e = t[this.i + 1];
      if (e !== undefined && e in ESCAPES) {
        out += ESCAPES[e];
        this.i += 2;
      } else if (e === 'u' && /^[0-9a-fA-F]{4}$/.test(t.slice(this.i + 2, this.i + 6))) {
        out += String.fromCharCode(parseInt(t.slice(this.i + 2, this.i + 6), 16));
        this.i += 6;
      } else this.error(`bad escape "\\${e ?? ''}" in string`);
      run = this.i;
    }
  }
}
