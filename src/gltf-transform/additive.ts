/**
 * Additive animations of a glTF document (`BonepressOptions.additive`): which animations
 * are additive, their reference and base as the compressor's `additive` option takes them
 * (clips of other animations of the same document), and the channels that cannot stay
 * beside an additive clip (docs/gltf-extension.md, "Additive animations").
 */
import type { Animation, AnimationChannel } from '@gltf-transform/core';

import type { RawClip } from '../clip/raw-clip.js';
import { OptionsError, type AdditiveOptions } from '../compress/options.js';
import type { BonepressOptions, GltfAdditiveOptions, GltfAnimationPose } from './types.js';

/**
 * The additive settings of each animation (by index) that `options.additive` makes
 * additive. Throws {@link OptionsError} for an animation it names that the document does
 * not have, one named twice, or additive animations with a fallback.
 */
export function additiveSettings(
  options: Pick<BonepressOptions, 'additive' | 'fallback'>,
  animations: readonly Animation[],
): Map<number, GltfAdditiveOptions> {
  const given = options.additive;
  const out = new Map<number, GltfAdditiveOptions>();
  if (given === undefined || given === false) return out;
  const entries: readonly GltfAdditiveOptions[] = given === true ? [{}] : Array.isArray(given) ? given : [given];
  for (const entry of entries) {
    const base = entry.base && animationIndex(entry.base.animation, animations, 'additive base');
    const indices = entry.animations
      ? entry.animations.map((a) => animationIndex(a, animations, 'additive animation'))
      : animations.flatMap((_, i) => (i === base ? [] : [i]));
    for (const i of indices) {
      if (out.has(i))
        throw new OptionsError(`additive: ${label(animations, i)} is named by two entries; give each animation one`);
      out.set(i, entry);
    }
  }
  if (out.size > 0 && options.fallback)
    throw new OptionsError(
      'additive animations keep no fallback channels (glTF plays channels as absolute poses, not as a layer over a base): drop the fallback, or the additive option',
    );
  return out;
}

/**
 * The compressor's additive option for animation `index` from its settings, with the clips
 * of the document's animations (`clips`, by animation index) standing for the animations
 * they name. Throws {@link OptionsError} for an animation without a clip (it moves no
 * skeleton) or a bad time.
 */
export function additiveOptions(
  setting: GltfAdditiveOptions,
  animations: readonly Animation[],
  clips: ReadonlyMap<number, RawClip>,
  index: number,
): AdditiveOptions {
  const pose = (p: GltfAnimationPose, what: string) => {
    const i = animationIndex(p.animation, animations, what);
    const clip = clips.get(i);
    if (!clip)
      throw new OptionsError(`${what} of ${label(animations, index)}: ${label(animations, i)} moves no skeleton`);
    return { clip: { ...clip, name: animations[i].getName() }, time: p.time };
  };
  const { reference, base } = setting;
  const out: { reference?: AdditiveOptions['reference']; base?: AdditiveOptions['base'] } = {
    reference: typeof reference === 'object' ? pose(reference, 'additive reference') : (reference ?? 0),
  };
  if (base) {
    const b = pose(base, 'additive base');
    out.base = base.time === undefined ? b.clip : b;
  }
  return out;
}

/**
 * Throws {@link OptionsError} when the additive animation `index` has channels outside
 * `replaced` (the channels its clip holds): they would stay absolute beside a layer.
 */
export function refuseAbsoluteChannels(
  animation: Animation,
  index: number,
  replaced: readonly AnimationChannel[],
): void {
  const held = new Set(replaced);
  const rest = animation.listChannels().filter((c) => !held.has(c));
  if (rest.length === 0) return;
  const names = rest.map((c) => `${c.getTargetNode()?.getName() || 'no node'} ${c.getTargetPath() ?? 'pointer'}`);
  const shown = names.length <= 3 ? names.join(', ') : `${names.slice(0, 3).join(', ')}, …`;
  throw new OptionsError(
    `additive animation ${index} ${JSON.stringify(animation.getName())}: ${rest.length} channel${rest.length > 1 ? 's' : ''} (${shown}) would stay outside its clip as absolute poses, which a layer cannot hold; compress with extras, or leave the animation absolute`,
  );
}

/** Index of the animation `a` names (its name, or its index). Throws {@link OptionsError} when the document has none. */
function animationIndex(a: string | number, animations: readonly Animation[], what: string): number {
  const j =
    typeof a === 'number'
      ? Number.isInteger(a) && a >= 0 && a < animations.length
        ? a
        : -1
      : animations.findIndex((x) => x.getName() === a);
  if (j < 0)
    throw new OptionsError(
      `${what} ${JSON.stringify(a)}: the document has no such animation (${animations.length === 0 ? 'none' : animations.map((x, k) => `${k} ${JSON.stringify(x.getName())}`).join(', ')})`,
    );
  return j;
}

function label(animations: readonly Animation[], i: number): string {
  return `animation ${i} ${JSON.stringify(animations[i].getName())}`;
}
