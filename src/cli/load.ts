/**
 * Loading what the commands work on, each error scoped to its file so that it prints as
 * `bonepress: <file>: <problem>`.
 */
import { PARSE_ERROR, ParseError, type RawClip, type ReadOptions } from '../index.js';
import {
  isGltfPath,
  readClipFiles,
  readCompressedGltfFile,
  readInputFile,
  type GltfCompressedClip,
} from '../node/index.js';
import { openClip, type CompressedClip } from '../runtime/index.js';
import { printable } from '../node/internal.js';
import { atFile } from './exit-codes.js';

export { anonymousBoneName } from '../index.js';

/**
 * Reads and validates a compressed clip: a `.bpk`, a `.bpt` (decoded here), or one animation
 * of a glTF asset compressed by bonepress (`.glb`/`.gltf`, by extension): the only one, or
 * the one `clipName` names (`--clip`). Throws a FileScopedError wrapping a system error,
 * the runtime's FormatError, or a ParseError when the asset holds no compressed animation,
 * none of that name, or several and none was named; and when `clipName` does not name the
 * clip of a `.bpk`. `name` is the clip's stored name, or the animation's for a glTF asset
 * (whose clips store none); `boneNames`, for a glTF asset, the bones' names from its nodes.
 */
export function openCompressedFile(
  file: string,
  clipName?: string,
): Promise<{ clip: CompressedClip; name: string | undefined; boneNames?: readonly string[] }> {
  return atFile(file, async () => {
    if (isGltfPath(file)) return compressedAnimation(file, clipName);
    // Regular files only, capped: `info /dev/zero` or a FIFO fails at once instead of reading forever.
    // Either form of a clip: the runtime .bpk, or the entropy-coded transport form (decoded here).
    const clip = openClip(await readInputFile(file));
    if (clipName !== undefined && clip.name !== clipName) {
      throw new ParseError(
        PARSE_ERROR.UNSUPPORTED,
        `holds no clip named "${clipName}" (it holds ${clip.name === undefined ? 'one whose name was stripped' : `"${clip.name}"`})`,
        file,
      );
    }
    return { clip, name: clip.name };
  });
}

/** The animation of a compressed glTF asset that {@link openCompressedFile} takes. */
async function compressedAnimation(
  file: string,
  clipName: string | undefined,
): Promise<{ clip: CompressedClip; name: string; boneNames: readonly string[] }> {
  const animations = await readCompressedGltfFile(file);
  if (animations.length === 0) {
    throw new ParseError(
      PARSE_ERROR.UNSUPPORTED,
      'holds no animation compressed by bonepress (BONEPRESS_animation_compression); compress the asset with `bonepress compress <asset> -o <out.glb>`',
      file,
    );
  }
  const chosen =
    clipName !== undefined
      ? namedAnimation(file, animations, clipName)
      : animations.length === 1
        ? animations[0]
        : undefined;
  if (chosen === undefined) {
    throw new ParseError(
      PARSE_ERROR.UNSUPPORTED,
      `holds ${animations.length} compressed animations (${animationNames(animations)}); name one with --clip`,
      file,
    );
  }
  return { clip: chosen.clip, name: animationName(chosen), boneNames: chosen.boneNames };
}

/** The compressed animation of `file` called `name` (`--clip`, {@link isNamed}); a ParseError naming the ones it holds when there is none. */
export function namedAnimation(
  file: string,
  animations: readonly GltfCompressedClip[],
  name: string,
): GltfCompressedClip {
  const named = animations.find((a) => isNamed(a, name));
  if (!named)
    throw new ParseError(
      PARSE_ERROR.UNSUPPORTED,
      `holds no compressed animation named ${JSON.stringify(name)} (it holds ${animationNames(animations)})`,
      file,
    );
  return named;
}

/** An animation's name as the glTF reader names its clip: its own, or `animation_<index>` when it has none. */
export function animationName(animation: Pick<GltfCompressedClip, 'name' | 'index'>): string {
  return animation.name !== '' ? animation.name : `animation_${animation.index}`;
}

/** True when `--clip name` takes `animation`: its name as written (`""` for an unnamed one) or as the reader names its clip ({@link animationName}). */
export function isNamed(animation: Pick<GltfCompressedClip, 'name' | 'index'>, name: string): boolean {
  return animation.name === name || animationName(animation) === name;
}

function animationNames(animations: readonly GltfCompressedClip[]): string {
  return animations.map((a) => JSON.stringify(animationName(a))).join(', ');
}

/** A reader warning about `file` as one stderr line: `bonepress: <file>: warning: <message>`. */
export function warningLine(file: string, message: string): string {
  return `bonepress: ${printable(file)}: warning: ${printable(message)}\n`;
}

/** The prefix of a warning about one animation: `animation "<name>"` (the glTF reader) or `animation <i> "<name>"` (glTF output), then `: ` or ` `. */
const ANIMATION_PREFIX = /^animation (?:\d+ )?"((?:[^"\\]|\\.)*)"(: | )/;

/**
 * The warnings of one file as {@link warningLine}s, each said once: the same warning about
 * several animations (`animation "Run": 2 morph-target weight channels … ignored`) becomes
 * one line naming how many and the first few, and a warning repeated word for word says
 * how many times.
 */
export function warningLines(file: string, messages: readonly string[]): string {
  const groups = new Map<string, { first: string; separator: string; animations: string[]; count: number }>();
  for (const message of messages) {
    const match = ANIMATION_PREFIX.exec(message);
    const key = match ? `${match[2]}${message.slice(match[0].length)}` : message;
    const group = groups.get(key) ?? { first: message, separator: match?.[2] ?? '', animations: [], count: 0 };
    group.count++;
    if (match) group.animations.push(match[1]);
    groups.set(key, group);
  }
  return [...groups.entries()]
    .map(([key, group]) => {
      if (group.count === 1) return warningLine(file, group.first);
      if (group.animations.length === 0) return warningLine(file, `${group.first} (${group.count} times)`);
      const shown = group.animations
        .slice(0, 3)
        .map((name) => `"${name}"`)
        .join(', ');
      const more = group.animations.length > 3 ? ', …' : '';
      return warningLine(
        file,
        `${group.animations.length} animations (${shown}${more})${group.separator}${key.slice(group.separator.length)}`,
      );
    })
    .join('');
}

/** Which clip {@link readSingleClip} takes from a file holding several. */
export interface ClipChoice {
  /** The clip with exactly this name (`--clip`); an error when there is none. */
  readonly name?: string | undefined;
  /** Taken when the file holds several clips and one has this name (e.g. the name a `.bpk` stores). */
  readonly preferred?: string | undefined;
}

/**
 * Reads one clip from a source file: the only one, the one `choice.name` names, or, in a
 * file holding several clips (glTF: one per animation), the one `choice.preferred` names.
 * What the reader skips is printed once it is read ({@link warningLines}) unless
 * `options.onWarning` takes it. Throws a FileScopedError wrapping the reader's error, a system error, or a
 * ParseError when the file holds several clips and none was chosen, or none has the name.
 */
export function readSingleClip(file: string, options: ReadOptions = {}, choice: ClipChoice = {}): Promise<RawClip> {
  return atFile(file, async () => {
    const warnings: string[] = [];
    const clips = await readClipFiles(file, { ...options, onWarning: (message) => warnings.push(message) }).finally(
      () => {
        if (options.onWarning) for (const message of warnings) options.onWarning(message);
        else process.stderr.write(warningLines(file, warnings));
      },
    );
    const names = clips.map((clip) => `"${clip.name}"`).join(', ');
    if (choice.name !== undefined) {
      const clip = clips.find((c) => c.name === choice.name);
      if (!clip)
        throw new ParseError(PARSE_ERROR.UNSUPPORTED, `holds no clip named "${choice.name}" (it holds ${names})`, file);
      return clip;
    }
    if (clips.length === 1) return clips[0];
    const preferred = choice.preferred === undefined ? undefined : clips.find((c) => c.name === choice.preferred);
    if (preferred) return preferred;
    throw new ParseError(PARSE_ERROR.UNSUPPORTED, `holds ${clips.length} clips (${names}); name one with --clip`, file);
  });
}
