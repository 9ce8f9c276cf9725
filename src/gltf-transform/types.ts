/**
 * The plain types of compressing a glTF asset: options, per-animation reports, animation
 * byte counts. Kept apart from glTF-Transform so that `bonepress/node`, whose
 * glTF file functions take and return them, declares nothing of @gltf-transform: a project
 * that never writes glTF output does not type-check glTF-Transform's declarations.
 */
import type { LengthUnit } from '../clip/units.js';
import type { CompressStats } from '../compress/index.js';
import type { CompressOptions } from '../compress/options.js';

/** Options of `bonepress()` and `compressDocument()` (bonepress.ts). */
export interface BonepressOptions extends Pick<CompressOptions, 'error' | 'shell' | 'shellBones' | 'metric'> {
  /**
   * Channels for loaders without the extension (which is then optional, not required):
   * `true` or `'original'` keeps the original channels; `'quantized'` replaces them with the
   * compressed clip decoded at its sample rate, rotations as normalised 16-bit integers
   * (core glTF) and translations and scales as floats. Default false: the channels are
   * removed and the extension is required.
   */
  fallback?: boolean | 'original' | 'quantized';
  /** Resample at this rate (Hz) instead of the rate detected from the key times. */
  sampleRate?: number;
  /**
   * Also compress morph-target weights and the translation, rotation and scale of animated
   * nodes outside the skins (props, cameras), as extra bones of each clip
   * (docs/gltf-extension.md, "Extra bones"). Default true; false leaves them plain channels.
   */
  extras?: boolean;
  /**
   * Leave an animation's own channels as they are when its compressed form (clip, extension
   * object, stub channel) would not be smaller than the channels it replaces, and say so
   * (`kept`, and a warning). Default true; false compresses every animation whatever its
   * size. Ignored with a fallback, which keeps the channels anyway.
   */
  keepSmallerSource?: boolean;
  /** Length unit of the asset's translations when it is not in metres (as the glTF spec says it should be). */
  unit?: LengthUnit;
  /** Receives the reader's warnings (channels left uncompressed, keys moved onto the grid). */
  onWarning?: (message: string) => void;
  /** Name of the asset in error messages and warnings. Default `'document'`. */
  file?: string;
  /**
   * Store animations as additive layers (docs/gltf-extension.md, "Additive animations"):
   * `true` makes every animation additive against its frame 0; one {@link GltfAdditiveOptions}
   * applies to the animations it names (default every one); a list gives animations their
   * own settings (an animation named by two entries is an error). Not with `fallback`: glTF
   * channels play as absolute poses, so an additive animation keeps no fallback.
   */
  additive?: boolean | GltfAdditiveOptions | readonly GltfAdditiveOptions[];
}

/**
 * An animation of the document, by name or by index in its animation list, at `time`
 * seconds on its timeline (default its start).
 */
export interface GltfAnimationPose {
  /** The animation's name, or its index in the document's animation list. */
  readonly animation: string | number;
  /** Seconds on the animation's timeline (its key times). */
  readonly time?: number;
}

/**
 * Additive animations of `compressDocument()`: each pose stored as a delta against
 * `reference`, the error bounded over `base`, as the compressor's `additive` option does
 * for a loose clip (docs/format.md, "Additive clips").
 */
export interface GltfAdditiveOptions {
  /**
   * The animations this applies to, by name or index. Default: every animation but the one
   * `base` names, which stays absolute.
   */
  readonly animations?: readonly (string | number)[];
  /**
   * What the deltas are taken against: a frame (sample index) of the animation itself
   * (default 0, as three.js's `makeClipAdditive`), or the pose of another animation that
   * moves the same bones.
   */
  readonly reference?: number | GltfAnimationPose;
  /**
   * What the error is measured over: the pose of another animation at `time`, or, without
   * `time`, that animation played alongside from time 0, looping. Default: the reference pose.
   */
  readonly base?: GltfAnimationPose;
}

/** One compressed animation of `compressDocument()`. */
export interface CompressedAnimationReport {
  /** The animation's name as written in the file ('' when unnamed). */
  animation: string;
  /** Index in the document's animation list. */
  index: number;
  /** Compression figures of its clip (sizes are the `.bpk` bytes stored in the file). */
  stats: CompressStats;
}

/** An animation left as it was because its compressed form would not be smaller. */
export interface KeptAnimationReport {
  /** The animation's name as written in the file ('' when unnamed). */
  animation: string;
  /** Index in the document's animation list. */
  index: number;
  /** Bytes the compressed form would take: the clip, its extension object and any stub channel. */
  compressedBytes: number;
  /** Bytes of the channels it would replace: their accessors no one else reads and their JSON (a lower bound). */
  sourceBytes: number;
}

/** Animation bytes of one glTF asset. */
export interface AnimationBytes {
  /** Bytes of the accessors animation samplers read (key times, values), as stored (count × element size). */
  accessorBytes: number;
  /** Bytes of the compressed clips' buffer views (`BONEPRESS_animation_compression`). */
  compressedBytes: number;
  /**
   * Bytes of the JSON that describes animations: `animations[]`, the accessor and buffer
   * view objects only they use, and the extension's root object (bone tables), compact.
   */
  jsonBytes: number;
  /** accessorBytes + compressedBytes + jsonBytes. */
  total: number;
}
