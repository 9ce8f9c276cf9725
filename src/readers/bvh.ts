/**
 * BVH reader. The hierarchy is small and read token by token with an explicit
 * block stack (never recursion, so a hierarchy nested thousands deep cannot overflow the
 * call stack). The MOTION section is most of the file and is read from the file's bytes
 * (never decoded to a string) with a hand-written scanner that writes straight into the
 * clip's tracks: no per-value strings, objects or regular expressions.
 */
import { createRawClip, type RawClip } from '../clip/raw-clip.js';
import { createSkeleton, POSE_STRIDE } from '../clip/skeleton.js';
import type { LengthUnit } from '../clip/units.js';
import { cutText, MAX_QUOTED_CHARS, ParseError, PARSE_ERROR, quoteText, type ParseErrorCode } from './errors.js';
import { boneSamplesProblem, checkBoneCount, checkClipSize, type ReadOptions } from './options.js';

/** Length unit assumed for BVH translations when {@link ReadOptions.unit} is not given. */
export const BVH_DEFAULT_UNIT: LengthUnit = 'cm';

/** Most channels one joint may list (a CHANNELS count above this is a syntax error). */
export const BVH_MAX_CHANNELS_PER_JOINT = 9;

/**
 * A sample rate within this relative distance of a whole number snaps to it: BVH files
 * store `Frame Time: 0.0333333`, whose reciprocal 30.00003 means 30 Hz.
 */
export const BVH_RATE_SNAP_TOLERANCE = 1e-3;

// Channel kinds: 0..2 = X/Y/Z position, 3..5 = X/Y/Z rotation.
const CHANNEL_KINDS: ReadonlyMap<string, number> = new Map([
  ['xposition', 0],
  ['yposition', 1],
  ['zposition', 2],
  ['xrotation', 3],
  ['yrotation', 4],
  ['zrotation', 5],
]);
const CHANNEL_NAMES = 'Xposition, Yposition, Zposition, Xrotation, Yrotation, Zrotation';

const LF = 10;
// "Time:" in ASCII: the label ending the header (`Frame Time:`).
const TIME_LABEL = [84, 105, 109, 101, 58];
/**
 * A header number as the frame scanner reads one: sign, digits with at most one point,
 * optional exponent. No alternative repeats another, so a long bad token fails in linear time.
 */
const NUMBER_TOKEN = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;
const utf8 = new TextDecoder('utf-8');
const utf8Encoder = new TextEncoder();
const HALF_DEGREE_RAD = Math.PI / 360;
const FLOAT32_MAX = 3.4028234663852886e38;
// Exact powers of ten: with a mantissa below 2^53, one multiply or divide by these is
// correctly rounded (Clinger's fast path), so the frame scanner agrees with Number().
const POW10 = new Float64Array(23);
for (let i = 0; i < 23; i++) POW10[i] = Number(`1e${i}`);

/**
 * Reads one BVH file as a clip.
 *
 * - Bones are ROOT and every JOINT in file order (several ROOTs are allowed); `End Site`
 *   blocks are not bones. The clip name is the file's base name without its extension.
 * - Default pose: identity rotation, translation = OFFSET, scale 1. Scale tracks are 1.
 * - Channels may come in any order and number (0..{@link BVH_MAX_CHANNELS_PER_JOINT} per
 *   joint). Position channels replace the matching OFFSET component as the local
 *   translation; components without a channel keep the OFFSET value. Rotation channels are
 *   Euler angles in degrees composed in the listed order as intrinsic rotations
 *   (`Zrotation Xrotation Yrotation` gives R = Rz·Rx·Ry for column vectors), converted to a
 *   normalised quaternion (x, y, z, w) in float64 and stored as float32.
 * - Sample rate = 1 / Frame Time, snapped to the nearest whole number when within
 *   {@link BVH_RATE_SNAP_TOLERANCE} of it (relative), so `0.0333333` gives exactly 30 Hz.
 * - Unit: `options.unit`, default {@link BVH_DEFAULT_UNIT}. `options.sampleRate` is ignored
 *   (BVH is already uniformly sampled).
 *
 * Allocates the returned clip and the frame lines' UTF-8 bytes (the frames are scanned as
 * bytes; `readClips` passes the file's own). Throws {@link ParseError} naming the file, the 1-based
 * line and the problem (frame numbers in messages are 1-based too), e.g.
 * `walk.bvh:212: frame 77: expected 132 channel values, got 131`. Codes: `TRUNCATED` when
 * the file ends early, `BAD_VALUE` for a bad or non-finite number or frame time, `SYNTAX`
 * for structure, `LIMIT` for a clip over `READ_LIMITS` (readers/options.ts), `UNSUPPORTED` for a
 * file without any channel.
 */
export function readBvh(text: string, file: string, options: ReadOptions = {}): RawClip {
  const header = readHeader(text, file);
  return readClip(header, utf8Encoder.encode(text.slice(header.motion.dataStart)), 0, file, options);
}

/**
 * {@link readBvh} for the bytes of a file (UTF-8, a BOM dropped), as `readClips` reads it:
 * the same clip or the same error. Only the header is decoded; the frames are scanned from
 * the bytes.
 */
export function readBvhBytes(bytes: Uint8Array, file: string, options: ReadOptions = {}): RawClip {
  // The header ends with the line holding the first "Time:" (`Frame Time:`). Read from that
  // prefix alone, it gives the whole text's header when it ends at that line's end; anything
  // else (a header error, a joint named "Time:") is read again from the whole text, so the
  // clip and every error are those of readBvh.
  const headerEnd = headerEndOf(bytes);
  if (headerEnd < bytes.length) {
    const prefix = utf8.decode(bytes.subarray(0, headerEnd));
    let header: Header | undefined;
    try {
      header = readHeader(prefix, file);
    } catch {
      header = undefined;
    }
    if (header !== undefined && header.motion.dataStart === prefix.length)
      return readClip(header, bytes, headerEnd, file, options);
  }
  return readBvh(utf8.decode(bytes), file, options);
}

/** The byte just past the line holding the first `Time:`, or the length when there is none or no line end. */
function headerEndOf(bytes: Uint8Array): number {
  for (let i = bytes.indexOf(TIME_LABEL[0]); i >= 0; i = bytes.indexOf(TIME_LABEL[0], i + 1)) {
    let k = 1;
    while (k < TIME_LABEL.length && bytes[i + k] === TIME_LABEL[k]) k++;
    if (k === TIME_LABEL.length) {
      const lineEnd = bytes.indexOf(LF, i);
      return lineEnd < 0 ? bytes.length : lineEnd + 1;
    }
  }
  return bytes.length;
}

/** HIERARCHY and the MOTION header, read from the text. */
interface Header {
  readonly hierarchy: Hierarchy;
  readonly motion: MotionHeader;
}

function readHeader(text: string, file: string): Header {
  const scanner = new HeaderScanner(text, file);
  const hierarchy = readHierarchy(scanner);
  return { hierarchy, motion: readMotionHeader(scanner, hierarchy.channelCount) };
}

/** The clip of `header` with the frames in `bytes` from `start` (the first byte after the Frame Time line). */
function readClip(header: Header, bytes: Uint8Array, start: number, file: string, options: ReadOptions): RawClip {
  const { hierarchy, motion } = header;
  const unit = options.unit ?? BVH_DEFAULT_UNIT;
  const frames: FrameText = { bytes, start, line: motion.dataLine };
  try {
    // Before any allocation sized by the frame count.
    checkFramesFit(frames, file, motion, hierarchy, options);
    const skeleton = createSkeleton(hierarchy.names, hierarchy.parents, defaultPoseOf(hierarchy.offsets), unit);
    // Added to the created clip, not spread into a new one: V8 gave every clip built by that
    // spread a hidden class of its own (one per file), and the compressor's code reading
    // clips kept deoptimising.
    const clip: RawClip = Object.assign(
      createRawClip(clipNameOf(file), skeleton, motion.sampleRate, motion.frameCount, unit),
      { channelMask: channelMaskOf(hierarchy.names.length) },
    );
    readFrames(frames, file, motion, hierarchy, clip);
    return clip;
  } catch (error) {
    // A file that ends early says so first.
    checkFrameLines(frames, file, motion);
    throw error;
  }
}

/** The default pose: identity rotations and scales, translations from the OFFSETs (3 per bone). */
function defaultPoseOf(offsets: readonly number[]): Float32Array {
  const boneCount = offsets.length / 3;
  const pose = new Float32Array(boneCount * POSE_STRIDE);
  for (let b = 0; b < boneCount; b++) {
    const o = b * POSE_STRIDE;
    pose[o + 3] = 1;
    pose[o + 4] = offsets[b * 3];
    pose[o + 5] = offsets[b * 3 + 1];
    pose[o + 6] = offsets[b * 3 + 2];
    pose[o + 7] = 1;
    pose[o + 8] = 1;
    pose[o + 9] = 1;
  }
  return pose;
}

/**
 * BVH animates rotations and positions (OFFSET when a joint has no position channels),
 * never scale: a host binds only those tracks, as it would the source clip.
 */
function channelMaskOf(boneCount: number): Uint8Array {
  const mask = new Uint8Array(boneCount * 3);
  for (let t = 0; t < mask.length; t++) mask[t] = t % 3 === 2 ? 0 : 1;
  return mask;
}

/** The clip name for a path: base name without its last extension (`a/walk.bvh` → `walk`). */
function clipNameOf(file: string): string {
  const base = file.slice(Math.max(file.lastIndexOf('/'), file.lastIndexOf('\\')) + 1);
  const dot = base.lastIndexOf('.');
  return dot > 0 ? base.slice(0, dot) : base;
}

function isSpace(c: number): boolean {
  // space, tab, CR, vertical tab, form feed; LF is handled separately because it counts lines.
  return c === 32 || c === 9 || c === 13 || c === 11 || c === 12;
}

/** Position just past the exponent scanned by {@link scanExponent} (module state avoids a result object). */
let scanEnd = 0;

/**
 * The exponent of the `e` at `i` (capped: it only decides between the fast and the exact
 * path, and must not overflow), setting `scanEnd` past it. Without digits after the `e`,
 * 0 with `scanEnd = i`: the caller rejects the `e` as a bad token. Stops at a newline, as
 * {@link readFrameValues} requires.
 */
function scanExponent(bytes: Uint8Array, i: number): number {
  let j = i + 1;
  let c = bytes[j];
  const negative = c === 45;
  if (negative || c === 43) c = bytes[++j];
  if ((c - 48) >>> 0 > 9) {
    scanEnd = i;
    return 0;
  }
  let value = 0;
  while ((c - 48) >>> 0 <= 9) {
    if (value < 100000) value = value * 10 + (c - 48);
    c = bytes[++j];
  }
  scanEnd = j;
  return negative ? -value : value;
}

/** How many of the digits at `start..end` (a point may be among them) follow the leading zeros. */
function significantDigits(bytes: Uint8Array, start: number, end: number): number {
  let count = 0;
  for (let i = start; i < end; i++) {
    const c = bytes[i];
    if (c !== 46 && (count > 0 || c !== 48)) count++;
  }
  return count;
}

/** Whitespace-separated tokens of the header, with `{` and `}` always tokens of their own. */
class HeaderScanner {
  pos = 0;
  line = 1;
  /** Line of the token most recently returned by {@link next}. */
  tokenLine = 1;

  constructor(
    readonly text: string,
    readonly file: string,
  ) {
    if (text.charCodeAt(0) === 0xfeff) this.pos = 1;
  }

  /** Skips whitespace, counting lines. */
  skipSpace(): void {
    const text = this.text;
    while (this.pos < text.length) {
      const c = text.charCodeAt(this.pos);
      if (c === LF) this.line++;
      else if (!isSpace(c)) break;
      this.pos++;
    }
  }

  /** The next token, or null at the end of the text. */
  next(): string | null {
    this.skipSpace();
    const text = this.text;
    const start = this.pos;
    this.tokenLine = this.line;
    if (start >= text.length) return null;
    const c = text.charCodeAt(start);
    if (c === 123 || c === 125) {
      this.pos++;
      return c === 123 ? '{' : '}';
    }
    let i = start;
    while (i < text.length) {
      const d = text.charCodeAt(i);
      if (d === LF || isSpace(d) || d === 123 || d === 125) break;
      i++;
    }
    this.pos = i;
    return text.slice(start, i);
  }

  /** The rest of the current line up to a brace, trimmed (joint names may contain spaces). */
  restOfLine(): string {
    const text = this.text;
    const start = this.pos;
    let i = start;
    while (i < text.length) {
      const d = text.charCodeAt(i);
      if (d === LF || d === 123 || d === 125) break;
      i++;
    }
    this.pos = i;
    return text.slice(start, i).trim();
  }

  /** True when only spaces remain before the end of the current line. */
  lineIsEmpty(): boolean {
    const text = this.text;
    let i = this.pos;
    while (i < text.length && isSpace(text.charCodeAt(i))) i++;
    return i >= text.length || text.charCodeAt(i) === LF;
  }

  fail(line: number, problem: string, code: ParseErrorCode = PARSE_ERROR.SYNTAX): ParseError {
    return new ParseError(code, problem, this.file, line);
  }

  /** Line number of the last line of the text (for errors at the end of the file). */
  lastLine(): number {
    return lastLineOf(this.text);
  }

  /** Parses `token` as one finite number, or throws naming `what`. */
  number(token: string | null, what: string): number {
    if (token === null)
      throw this.fail(this.lastLine(), `file ends inside HIERARCHY: expected ${what}`, PARSE_ERROR.TRUNCATED);
    const v = NUMBER_TOKEN.test(token) ? Number(token) : NaN;
    if (!Number.isFinite(v)) {
      throw this.fail(this.tokenLine, `${what}: ${quoteText(token)} is not a finite number`, PARSE_ERROR.BAD_VALUE);
    }
    return v;
  }
}

/** The skeleton and channel layout read from HIERARCHY. */
interface Hierarchy {
  readonly names: string[];
  readonly parents: number[];
  /** OFFSET per bone, 3 numbers each. */
  readonly offsets: number[];
  /** Total channels per frame. */
  readonly channelCount: number;
  /** Per bone × 3: the frame channel holding that position component, or -1 (keep OFFSET). */
  readonly positionChannels: Int32Array;
  /** Rotation channels of bone b are `rotationStart[b] .. rotationStart[b + 1] - 1`. */
  readonly rotationStart: Int32Array;
  /** Axis (0 = X, 1 = Y, 2 = Z) of each rotation channel, in listed order. */
  readonly rotationAxes: Uint8Array;
  /** Frame channel index of each rotation channel. */
  readonly rotationChannels: Int32Array;
}

// An open block on the stack: a bone index, or END_SITE for an `End Site` block.
const END_SITE = -1;

function readHierarchy(s: HeaderScanner): Hierarchy {
  const names: string[] = [];
  const parents: number[] = [];
  const offsets: number[] = [];
  const hasOffset: boolean[] = [];
  const hasChannels: boolean[] = [];
  const nameLines = new Map<string, number>();
  const positionChannels: number[] = [];
  const rotationOwner: number[] = [];
  const rotationAxes: number[] = [];
  const rotationChannels: number[] = [];
  let channelCount = 0;

  // Open blocks, innermost last: what each is and the line of its `{`.
  const stack: number[] = [];
  const openLines: number[] = [];
  let endSiteHasOffset = false;
  const describe = (block: number): string => (block === END_SITE ? 'End Site' : `joint ${quoteText(names[block])}`);

  const first = s.next();
  if (first === null) throw s.fail(1, 'empty file: expected HIERARCHY', PARSE_ERROR.TRUNCATED);
  if (first !== 'HIERARCHY') throw s.fail(s.tokenLine, `expected HIERARCHY, found ${quoteText(first)}`);

  const expectOpenBrace = (what: string): void => {
    const brace = s.next();
    if (brace === null)
      throw s.fail(s.lastLine(), `file ends inside HIERARCHY: expected "{" after ${what}`, PARSE_ERROR.TRUNCATED);
    if (brace !== '{') throw s.fail(s.tokenLine, `expected "{" after ${what}, found ${quoteText(brace)}`);
    openLines.push(s.tokenLine);
  };

  for (;;) {
    const token = s.next();
    const line = s.tokenLine;
    if (token === null) {
      if (stack.length > 0) {
        const top = stack[stack.length - 1];
        throw s.fail(
          s.lastLine(),
          `file ends inside HIERARCHY: the "{" of ${describe(top)} at line ${openLines[openLines.length - 1]} is not closed`,
          PARSE_ERROR.TRUNCATED,
        );
      }
      if (names.length === 0) throw s.fail(s.lastLine(), 'file ends inside HIERARCHY: no ROOT', PARSE_ERROR.TRUNCATED);
      throw s.fail(s.lastLine(), 'missing MOTION section after HIERARCHY', PARSE_ERROR.TRUNCATED);
    }
    switch (token) {
      case 'ROOT':
      case 'JOINT': {
        let parent = -1;
        if (token === 'ROOT') {
          if (stack.length > 0)
            throw s.fail(
              line,
              `ROOT inside ${describe(stack[stack.length - 1])} (opened at line ${openLines[openLines.length - 1]}; is a "}" missing?)`,
            );
        } else {
          if (stack.length === 0) throw s.fail(line, 'JOINT outside any ROOT');
          parent = stack[stack.length - 1];
          if (parent === END_SITE) throw s.fail(line, 'JOINT inside an End Site');
        }
        // Before anything per bone grows: a file cannot make the reader build more than the format holds.
        checkBoneCount(s.file, line, names.length + 1);
        const name = s.restOfLine();
        if (name === '') throw s.fail(line, `${token} without a name`);
        const earlier = nameLines.get(name);
        if (earlier !== undefined)
          throw s.fail(line, `duplicate bone name ${quoteText(name)} (first at line ${earlier})`);
        nameLines.set(name, line);
        const bone = names.length;
        names.push(name);
        parents.push(parent);
        offsets.push(0, 0, 0);
        hasOffset.push(false);
        hasChannels.push(false);
        positionChannels.push(-1, -1, -1);
        expectOpenBrace(`${token} ${cutText(name)}`);
        stack.push(bone);
        break;
      }
      case 'End': {
        const site = s.next();
        if (site === null || site.toLowerCase() !== 'site')
          throw s.fail(line, `expected "End Site", found ${quoteText(`End ${site ?? ''}`)}`);
        if (stack.length === 0) throw s.fail(line, 'End Site outside any joint');
        if (stack[stack.length - 1] === END_SITE) throw s.fail(line, 'End Site inside an End Site');
        expectOpenBrace('End Site');
        stack.push(END_SITE);
        endSiteHasOffset = false;
        break;
      }
      case '}': {
        if (stack.length === 0) throw s.fail(line, 'unexpected "}": no block is open');
        const block = stack.pop()!;
        openLines.pop();
        if (block === END_SITE ? !endSiteHasOffset : !hasOffset[block])
          throw s.fail(line, `${describe(block)} has no OFFSET`);
        break;
      }
      case '{':
        throw s.fail(line, 'unexpected "{" (a block opens only after ROOT, JOINT or End Site)');
      case 'OFFSET': {
        if (stack.length === 0) throw s.fail(line, 'OFFSET outside any joint');
        const block = stack[stack.length - 1];
        if (block === END_SITE ? endSiteHasOffset : hasOffset[block])
          throw s.fail(line, `second OFFSET in ${describe(block)}`);
        const values = [0, 0, 0];
        for (let k = 0; k < 3; k++) {
          const v = s.next();
          if (v !== null && s.tokenLine !== line) throw s.fail(line, `OFFSET needs 3 numbers, found ${k}`);
          values[k] = s.number(v, `OFFSET of ${describe(block)}`);
          if (Math.abs(values[k]) > FLOAT32_MAX)
            throw s.fail(line, `OFFSET of ${describe(block)}: ${v} is out of float32 range`, PARSE_ERROR.BAD_VALUE);
        }
        if (!s.lineIsEmpty()) throw s.fail(line, `OFFSET needs 3 numbers, found more: ${quoteText(s.next() ?? '')}`);
        if (block === END_SITE) {
          endSiteHasOffset = true;
        } else {
          hasOffset[block] = true;
          offsets[block * 3] = values[0];
          offsets[block * 3 + 1] = values[1];
          offsets[block * 3 + 2] = values[2];
        }
        break;
      }
      case 'CHANNELS': {
        if (stack.length === 0) throw s.fail(line, 'CHANNELS outside any joint');
        const bone = stack[stack.length - 1];
        if (bone === END_SITE) throw s.fail(line, 'CHANNELS inside an End Site (End Sites have no channels)');
        if (hasChannels[bone]) throw s.fail(line, `second CHANNELS in ${describe(bone)}`);
        hasChannels[bone] = true;
        const countToken = s.next();
        if (
          countToken === null ||
          s.tokenLine !== line ||
          !/^\d+$/.test(countToken) ||
          Number(countToken) > BVH_MAX_CHANNELS_PER_JOINT
        ) {
          throw s.fail(
            line,
            `bad CHANNELS count ${quoteText(countToken !== null && s.tokenLine === line ? countToken : '')} (expected a whole number 0..${BVH_MAX_CHANNELS_PER_JOINT})`,
          );
        }
        const count = Number(countToken);
        for (let k = 0; k < count; k++) {
          const name = s.next();
          if (name === null || s.tokenLine !== line) throw s.fail(line, `CHANNELS ${count} lists ${k} channel names`);
          const kind = CHANNEL_KINDS.get(name.toLowerCase());
          if (kind === undefined)
            throw s.fail(line, `unknown channel name ${quoteText(name)} (expected one of ${CHANNEL_NAMES})`);
          const channel = channelCount + k;
          if (kind < 3) {
            // Two channels for one component would make "replaces the OFFSET" ambiguous.
            if (positionChannels[bone * 3 + kind] >= 0) throw s.fail(line, `channel ${quoteText(name)} listed twice`);
            positionChannels[bone * 3 + kind] = channel;
          } else {
            // Repeated rotation axes (e.g. Z X Z) are well defined: compose them in order.
            rotationOwner.push(bone);
            rotationAxes.push(kind - 3);
            rotationChannels.push(channel);
          }
        }
        if (!s.lineIsEmpty()) throw s.fail(line, `CHANNELS ${count} lists more than ${count} channel names`);
        channelCount += count;
        break;
      }
      case 'MOTION': {
        if (stack.length > 0) {
          throw s.fail(
            line,
            `MOTION inside an open block: the "{" of ${describe(stack[stack.length - 1])} at line ${openLines[openLines.length - 1]} is not closed`,
          );
        }
        if (names.length === 0) throw s.fail(line, 'MOTION before any ROOT: the file has no bones');
        // rotationOwner is in bone order because CHANNELS lines are read in bone order.
        const boneCount = names.length;
        const rotationStart = new Int32Array(boneCount + 1);
        for (const owner of rotationOwner) rotationStart[owner + 1]++;
        for (let b = 0; b < boneCount; b++) rotationStart[b + 1] += rotationStart[b];
        return {
          names,
          parents,
          offsets,
          channelCount,
          positionChannels: Int32Array.from(positionChannels),
          rotationStart,
          rotationAxes: Uint8Array.from(rotationAxes),
          rotationChannels: Int32Array.from(rotationChannels),
        };
      }
      default:
        throw s.fail(
          line,
          `unexpected ${quoteText(token)} in HIERARCHY (expected ROOT, JOINT, End Site, OFFSET, CHANNELS, "}" or MOTION)`,
        );
    }
  }
}

/** What the MOTION header says, and where the frame data starts. */
interface MotionHeader {
  readonly frameCount: number;
  /** Line of the `Frames:` value. */
  readonly framesLine: number;
  readonly sampleRate: number;
  /** Offset of the first character after the `Frame Time` line, and that line's number. */
  readonly dataStart: number;
  readonly dataLine: number;
}

function readMotionHeader(s: HeaderScanner, channelCount: number): MotionHeader {
  const motionLine = s.tokenLine;
  // `Frames:` may be glued to its value (`Frames:138`), and so may `Time:`.
  const valueAfter = (label: string, what: string): string => {
    const token = s.next();
    if (token === null) throw s.fail(s.lastLine(), `file ends after MOTION: expected "${what}"`, PARSE_ERROR.TRUNCATED);
    if (!token.startsWith(label)) throw s.fail(s.tokenLine, `expected "${what}", found ${quoteText(token)}`);
    if (token.length > label.length) return token.slice(label.length);
    const labelLine = s.tokenLine;
    const value = s.next();
    if (value === null || s.tokenLine !== labelLine) throw s.fail(labelLine, `"${what}" has no value`);
    return value;
  };

  const framesText = valueAfter('Frames:', 'Frames:');
  const framesLine = s.tokenLine;
  if (!/^\d+$/.test(framesText) || !Number.isSafeInteger(Number(framesText))) {
    throw s.fail(framesLine, `Frames: ${quoteText(framesText)} is not a whole number`, PARSE_ERROR.BAD_VALUE);
  }
  const frameCount = Number(framesText);
  if (frameCount === 0) throw s.fail(framesLine, 'Frames: 0: a clip needs at least one frame', PARSE_ERROR.BAD_VALUE);

  const frame = s.next();
  if (frame === null)
    throw s.fail(s.lastLine(), 'file ends after Frames: expected "Frame Time:"', PARSE_ERROR.TRUNCATED);
  if (frame !== 'Frame') throw s.fail(s.tokenLine, `missing "Frame Time:" after Frames (found ${quoteText(frame)})`);
  const timeText = valueAfter('Time:', 'Frame Time:');
  const timeLine = s.tokenLine;
  const frameTime = s.number(timeText, 'Frame Time');
  if (!(frameTime > 0))
    throw s.fail(timeLine, `Frame Time ${cutText(timeText)} must be greater than 0 seconds`, PARSE_ERROR.BAD_VALUE);
  if (!s.lineIsEmpty())
    throw s.fail(timeLine, `unexpected ${quoteText(s.next() ?? '')} after Frame Time (frames start on the next line)`);

  if (channelCount === 0)
    throw s.fail(motionLine, 'no joint has CHANNELS: nothing is animated', PARSE_ERROR.UNSUPPORTED);

  const rawRate = 1 / frameTime;
  const whole = Math.round(rawRate);
  const sampleRate = whole > 0 && Math.abs(rawRate - whole) <= BVH_RATE_SNAP_TOLERANCE * rawRate ? whole : rawRate;

  // Move to the start of the first frame line.
  const text = s.text;
  let pos = s.pos;
  while (pos < text.length && text.charCodeAt(pos) !== LF) pos++;
  return { frameCount, framesLine, sampleRate, dataStart: Math.min(pos + 1, text.length), dataLine: s.line + 1 };
}

/** The frame lines: `bytes` from `start` (the first byte after the Frame Time line), whose line number is `line`. */
interface FrameText {
  readonly bytes: Uint8Array;
  readonly start: number;
  readonly line: number;
}

/** Counts lines holding something other than whitespace, from `start` to the end. */
function countNonBlankLines(bytes: Uint8Array, start: number): number {
  let count = 0,
    blank = true;
  for (let i = start; i < bytes.length; i++) {
    const c = bytes[i];
    if (c === LF) {
      if (!blank) count++;
      blank = true;
    } else if (!isSpace(c)) blank = false;
  }
  return blank ? count : count + 1;
}

/** The 1-based number of the last line of `text` (a final newline ends a line, it does not start one). */
function lastLineOf(text: string): number {
  let line = 1;
  for (let i = 0; i < text.length - 1; i++) if (text.charCodeAt(i) === LF) line++;
  return line;
}

/** {@link lastLineOf} the whole file, counted from the frame lines. */
function lastFrameLineOf({ bytes, start, line }: FrameText): number {
  // No frame bytes: the file ends with the Frame Time line.
  if (start >= bytes.length) return line - 1;
  for (let i = start; i < bytes.length - 1; i++) if (bytes[i] === LF) line++;
  return line;
}

function truncatedFrames(frames: FrameText, file: string, m: MotionHeader, found: number): ParseError {
  return new ParseError(
    PARSE_ERROR.TRUNCATED,
    `file ends after ${found} of ${m.frameCount} frames (Frames: ${m.frameCount})`,
    file,
    lastFrameLineOf(frames),
  );
}

/**
 * Throws the TRUNCATED error when fewer than `frameCount` lines follow the header, as the
 * first error of the frame lines, whatever else is wrong in them. Finding each newline
 * costs a tenth of reading the frames, so it runs only where the answer matters: before
 * allocating for frames the bytes cannot hold, and before any other error is thrown.
 */
function checkFrameLines(frames: FrameText, file: string, m: MotionHeader): void {
  const bytes = frames.bytes;
  let lines = 0;
  let p = frames.start;
  while (lines < m.frameCount && p < bytes.length) {
    const nl = bytes.indexOf(LF, p);
    lines++;
    if (nl < 0) break;
    p = nl + 1;
  }
  if (lines < m.frameCount) throw truncatedFrames(frames, file, m, countNonBlankLines(bytes, frames.start));
}

/**
 * Checks, before the tracks are allocated, that the clip is within the limits and that the
 * bytes can hold `frameCount` frames (so a hostile `Frames: 2000000000` fails first).
 */
function checkFramesFit(frames: FrameText, file: string, m: MotionHeader, h: Hierarchy, options: ReadOptions): void {
  // A frame line holds a byte per value and a space or newline after each (the last line's
  // newline may be missing). Where fewer bytes are left, the line count decides.
  if (frames.bytes.length - frames.start < m.frameCount * h.channelCount * 2 - 1) checkFrameLines(frames, file, m);
  const boneCount = h.names.length;
  const tooMany = boneSamplesProblem(boneCount, m.frameCount);
  if (tooMany !== undefined)
    throw new ParseError(PARSE_ERROR.LIMIT, `Frames: ${m.frameCount}: ${tooMany}`, file, m.framesLine);
  checkClipSize(file, m.framesLine, `Frames: ${m.frameCount}`, boneCount, m.frameCount, options);
}

/** Describes the token at `pos` for an error message (up to the next whitespace). */
function tokenAt(bytes: Uint8Array, pos: number): string {
  // Enough bytes for one character more than a message quotes, however they are encoded.
  const limit = Math.min(bytes.length, pos + 4 * (MAX_QUOTED_CHARS + 1));
  let end = pos;
  while (end < limit && bytes[end] !== LF && !isSpace(bytes[end])) end++;
  const token = utf8.decode(bytes.subarray(pos, end));
  // One character past the cut tells a long token from one of exactly the cut's length.
  return token.length > MAX_QUOTED_CHARS ? `${token.slice(0, MAX_QUOTED_CHARS)}…` : token;
}

/** Counts the whitespace-separated values from `pos` to the end of its line. */
function countValuesOnLine(bytes: Uint8Array, pos: number): number {
  let count = 0,
    inToken = false;
  for (let i = pos; i < bytes.length; i++) {
    const c = bytes[i];
    if (c === LF) break;
    if (isSpace(c)) inToken = false;
    else if (!inToken) {
      inToken = true;
      count++;
    }
  }
  return count;
}

/** Where {@link readFrames} is: the offset of the next byte and its 1-based line. */
interface FrameCursor {
  pos: number;
  line: number;
}

/**
 * Reads every frame line into the clip's tracks (after {@link checkFramesFit}). The hot
 * loop: one pass over the bytes, numbers scanned in place, each frame converted as soon as
 * it is read. Each step of a frame is a function of its own, called once per frame: the
 * engine compiles those small functions, where one function holding the whole loop was
 * compiled twice (mid-loop, then whole) with every step inlined.
 */
function readFrames(frames: FrameText, file: string, m: MotionHeader, h: Hierarchy, clip: RawClip): void {
  const bytes = frames.bytes;
  const values = new Float64Array(h.channelCount);
  const offsets = Float64Array.from(h.offsets);
  const at: FrameCursor = { pos: frames.start, line: frames.line };
  // Every scan of a frame line stops at a newline: lines before the last newline are read in
  // place without checking for the end of the bytes at each byte.
  const lastNewline = bytes.lastIndexOf(LF);
  for (let f = 0; f < m.frameCount; f++) {
    if (!skipBlankLines(bytes, at)) throw truncatedFrames(frames, file, m, f);
    if (at.pos < lastNewline) readFrameValues(bytes, bytes.length, file, at, f, values);
    else readLastLine(bytes, file, at, f, values);
    convertFrame(file, at.line, f, values, h, offsets, m.frameCount, clip);
  }
  // Anything after the last frame means the Frames count is wrong.
  if (skipBlankLines(bytes, at))
    throw new ParseError(PARSE_ERROR.SYNTAX, `more frame lines than Frames: ${m.frameCount} declares`, file, at.line);
}

/** {@link readFrameValues} for a last line without a newline: read from a copy that has one. */
function readLastLine(bytes: Uint8Array, file: string, at: FrameCursor, f: number, values: Float64Array): void {
  const line = new Uint8Array(bytes.length - at.pos + 1);
  line.set(bytes.subarray(at.pos));
  line[line.length - 1] = LF;
  readFrameValues(line, line.length - 1, file, { pos: 0, line: at.line }, f, values);
  at.pos = bytes.length;
}

/** Moves `at` to the first byte of the next line holding something; false at the end of the text. */
function skipBlankLines(bytes: Uint8Array, at: FrameCursor): boolean {
  const len = bytes.length;
  let pos = at.pos;
  for (;;) {
    while (pos < len && isSpace(bytes[pos])) pos++;
    if (pos >= len) {
      at.pos = pos;
      return false;
    }
    if (bytes[pos] !== LF) break;
    pos++;
    at.line++;
  }
  at.pos = pos;
  return true;
}

/**
 * Scans frame `f`'s line (from `at`) into `values`, one per channel, and checks nothing else
 * is on it. The line ends with a newline, at or before `end` (the end of the file's text):
 * every loop below stops there without checking for the end of `bytes`. Numbers are
 * decimals (`-1.5`, `.5`, `3e-7`) read as Number() reads them: up to 9 significant digits
 * are summed exactly in int32 and scaled by one correctly rounded multiply or divide by an
 * exact power of ten; anything else is handed to Number(). The scan is written out here, not
 * called per value: a function holding it was too large for the engine to inline.
 */
function readFrameValues(
  bytes: Uint8Array,
  end: number,
  file: string,
  at: FrameCursor,
  f: number,
  values: Float64Array,
): void {
  const channelCount = values.length;
  let pos = at.pos;
  for (let ch = 0; ch < channelCount; ch++) {
    let c = bytes[pos];
    while (isSpace(c)) c = bytes[++pos];
    if (c === LF) throw missingValues(file, at.line, f, channelCount, ch, pos === end);
    const start = pos;
    const negative = c === 45;
    if (negative || c === 43) c = bytes[++pos];
    // Wraps past 9 digits, which then take the exact path.
    let mantissa = 0;
    const intStart = pos;
    // One unsigned compare per byte: anything but '0'..'9' ends a run.
    while ((c - 48) >>> 0 <= 9) {
      mantissa = (mantissa * 10 + (c - 48)) | 0;
      c = bytes[++pos];
    }
    let digits = pos - intStart;
    let exponent = 0;
    if (c === 46) {
      const fracStart = ++pos;
      c = bytes[pos];
      while ((c - 48) >>> 0 <= 9) {
        mantissa = (mantissa * 10 + (c - 48)) | 0;
        c = bytes[++pos];
      }
      exponent = fracStart - pos;
      digits -= exponent;
    }
    const digitsEnd = pos;
    if ((c | 32) === 101 && digits > 0) {
      exponent += scanExponent(bytes, pos);
      pos = scanEnd;
      c = bytes[pos];
    }
    if (digits === 0 || !(c === 32 || c === LF || isSpace(c)))
      throw badValue(bytes, file, at.line, f, ch, start, 'is not a number');
    let v: number;
    if ((digits > 9 && significantDigits(bytes, intStart, digitsEnd) > 9) || exponent < -22 || exponent > 22) {
      v = Number(utf8.decode(bytes.subarray(start, pos)));
      if (!Number.isFinite(v)) throw badValue(bytes, file, at.line, f, ch, start, 'is not finite');
    } else {
      v = exponent < 0 ? mantissa / POW10[-exponent] : mantissa * POW10[exponent];
      if (negative) v = -v;
    }
    values[ch] = v;
  }
  let c = bytes[pos];
  while (isSpace(c)) c = bytes[++pos];
  if (c !== LF) {
    throw new ParseError(
      PARSE_ERROR.SYNTAX,
      `frame ${f + 1}: expected ${channelCount} channel values, got ${channelCount + countValuesOnLine(bytes, pos)}`,
      file,
      at.line,
    );
  }
  at.pos = pos;
}

function missingValues(
  file: string,
  line: number,
  f: number,
  expected: number,
  got: number,
  atEnd: boolean,
): ParseError {
  return new ParseError(
    atEnd ? PARSE_ERROR.TRUNCATED : PARSE_ERROR.SYNTAX,
    `frame ${f + 1}: expected ${expected} channel values, got ${got}${atEnd ? ' (file ends inside the frame)' : ''}`,
    file,
    line,
  );
}

function badValue(
  bytes: Uint8Array,
  file: string,
  line: number,
  f: number,
  ch: number,
  pos: number,
  problem: string,
): ParseError {
  return new ParseError(
    PARSE_ERROR.BAD_VALUE,
    `frame ${f + 1}: value ${ch + 1} "${tokenAt(bytes, pos)}" ${problem}`,
    file,
    line,
  );
}

/** Writes frame `f`'s channel `values` into the clip as each bone's translation and quaternion. */
function convertFrame(
  file: string,
  line: number,
  f: number,
  values: Float64Array,
  h: Hierarchy,
  offsets: Float64Array,
  frameCount: number,
  clip: RawClip,
): void {
  const { positionChannels, rotationStart, rotationAxes, rotationChannels } = h;
  const rotations = clip.rotations,
    translations = clip.translations;
  const boneCount = h.names.length;
  for (let b = 0; b < boneCount; b++) {
    const ti = (b * frameCount + f) * 3;
    for (let k = 0; k < 3; k++) {
      const channel = positionChannels[b * 3 + k];
      let t = offsets[b * 3 + k];
      if (channel >= 0) {
        t = values[channel];
        if (t > FLOAT32_MAX || t < -FLOAT32_MAX) {
          throw new ParseError(
            PARSE_ERROR.BAD_VALUE,
            `frame ${f + 1}: value ${channel + 1} (${t}) is out of float32 range`,
            file,
            line,
          );
        }
      }
      translations[ti + k] = t;
    }
    // q = q · q_axis for each channel in listed order: intrinsic composition.
    let qx = 0,
      qy = 0,
      qz = 0,
      qw = 1;
    for (let r = rotationStart[b], rEnd = rotationStart[b + 1]; r < rEnd; r++) {
      const half = values[rotationChannels[r]] * HALF_DEGREE_RAD;
      const sn = Math.sin(half),
        cs = Math.cos(half);
      const x = qx,
        y = qy,
        z = qz,
        w = qw;
      const axis = rotationAxes[r];
      if (axis === 0) {
        qx = x * cs + w * sn;
        qy = y * cs + z * sn;
        qz = z * cs - y * sn;
        qw = w * cs - x * sn;
      } else if (axis === 1) {
        qx = x * cs - z * sn;
        qy = y * cs + w * sn;
        qz = z * cs + x * sn;
        qw = w * cs - y * sn;
      } else {
        qx = x * cs + y * sn;
        qy = y * cs - x * sn;
        qz = z * cs + w * sn;
        qw = w * cs - z * sn;
      }
    }
    const inv = 1 / Math.sqrt(qx * qx + qy * qy + qz * qz + qw * qw);
    const ri = (b * frameCount + f) * 4;
    rotations[ri] = qx * inv;
    rotations[ri + 1] = qy * inv;
    rotations[ri + 2] = qz * inv;
    rotations[ri + 3] = qw * inv;
  }
}
