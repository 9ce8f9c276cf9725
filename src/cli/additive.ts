/**
 * `compress --additive [<frame>]` and `--additive-base <file>[#animation][@time]`: the
 * compressor's additive option from the command line (docs/format.md, "Additive clips").
 * - `--additive [<frame>]`: deltas against that frame of each input clip (default 0).
 * - `--additive-base <file>[#animation][@time]`: the base the error is measured over: the
 *   pose at `@time` seconds, or without it the whole animation played alongside (both from
 *   time 0, the base looping). Without `--additive`, the base is also the reference: its
 *   pose at `@time` (default its first).
 *
 * With glTF output the base is an animation of the asset itself (`<input>#<animation>`),
 * which stays absolute while every other animation becomes additive
 * (docs/gltf-extension.md, "Additive animations").
 */
import { resolve } from 'node:path';

import { InvalidArgumentError } from 'commander';

import { OptionsError, type AdditiveOptions, type RawClip, type ReadOptions } from '../index.js';
import type { CompressGltfFileOptions } from '../node/index.js';
import { readSingleClip } from './load.js';

/** `--additive-base`, parsed. */
export interface AdditiveBaseSpec {
  readonly file: string;
  /** The animation (clip) of the file, by name; needed when the file holds several. */
  readonly animation?: string;
  /** Seconds on the animation's timeline: a pose; absent, the whole animation. */
  readonly time?: number;
}

/** Parses `--additive [<frame>]`: `true` (frame 0) or a frame index ≥ 0. */
export function parseAdditiveArg(value: string): number {
  const frame = Number(value);
  if (value.trim() === '' || !Number.isInteger(frame) || frame < 0)
    throw new InvalidArgumentError(`expected a frame index (a whole number ≥ 0), got "${value}"`);
  return frame;
}

/** Parses `<file>[#animation][@time]`; a `@` or `#` that does not start a suffix stays in the file name. */
export function parseAdditiveBaseArg(value: string): AdditiveBaseSpec {
  let rest = value;
  let time: number | undefined;
  const at = rest.lastIndexOf('@');
  if (at >= 0 && !rest.slice(at + 1).includes('/')) {
    const text = rest.slice(at + 1);
    time = Number(text);
    if (text.trim() === '' || !Number.isFinite(time) || time < 0)
      throw new InvalidArgumentError(`expected <file>[#animation][@seconds ≥ 0], got time "${text}" in "${value}"`);
    rest = rest.slice(0, at);
  }
  const hash = rest.lastIndexOf('#');
  let animation: string | undefined;
  if (hash >= 0 && !rest.slice(hash + 1).includes('/')) {
    animation = rest.slice(hash + 1);
    rest = rest.slice(0, hash);
    if (animation === '') throw new InvalidArgumentError(`empty animation name after # in "${value}"`);
  }
  if (rest === '') throw new InvalidArgumentError(`no file in "${value}"`);
  return { file: rest, ...(animation !== undefined ? { animation } : {}), ...(time !== undefined ? { time } : {}) };
}

/**
 * The compressor's additive option from the two flags (undefined when neither is given),
 * reading the base file with `read`. Throws the reader's file-scoped error for a bad base
 * file or a missing animation, {@link OptionsError} for a file of several animations
 * without `#animation`.
 */
export async function additiveOptions(
  frame: number | boolean | undefined,
  base: AdditiveBaseSpec | undefined,
  read: ReadOptions,
): Promise<AdditiveOptions | undefined> {
  if (frame === undefined && base === undefined) return undefined;
  const reference = typeof frame === 'number' ? frame : 0;
  if (base === undefined) return { reference };
  let clip: RawClip;
  try {
    clip = await readSingleClip(base.file, read, { name: base.animation });
  } catch (e) {
    if (e instanceof Error && /name one with --clip/.test(e.message))
      throw new OptionsError(`--additive-base ${base.file}: ${e.message.replace(/--clip/, '<file>#<animation>')}`);
    throw e;
  }
  const pose = { clip, ...(base.time !== undefined ? { time: base.time } : {}) };
  return {
    reference: frame === undefined ? pose : reference,
    base: base.time !== undefined ? pose : clip,
  };
}

/**
 * The glTF transform's additive option from the two flags for the asset `input` (undefined
 * when neither is given): every animation additive against `frame` (default 0), or with a
 * base, every animation but the base, measured over it (and, without `--additive`, against
 * its pose). Throws {@link OptionsError} for a base in another file or without `#animation`.
 */
export function gltfAdditiveOption(
  frame: number | boolean | undefined,
  base: AdditiveBaseSpec | undefined,
  input: string,
): CompressGltfFileOptions['additive'] {
  if (frame === undefined && base === undefined) return undefined;
  const reference = typeof frame === 'number' ? frame : 0;
  if (base === undefined) return { reference };
  if (resolve(base.file) !== resolve(input) || base.animation === undefined)
    throw new OptionsError(
      `--additive-base ${base.file}${base.animation !== undefined ? `#${base.animation}` : ''}: with glTF output the base is an animation of the asset itself: ${input}#<animation>[@time]`,
    );
  const pose = { animation: base.animation, ...(base.time !== undefined ? { time: base.time } : {}) };
  return { reference: frame === undefined ? pose : reference, base: pose };
}
