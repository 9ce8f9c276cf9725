import type { LengthUnit } from '../clip/units.js';

/** Options shared by the readers. */
export interface ReadOptions {
  /** Length unit of the source's translations; default per format (BVH: cm, glTF: m, SJSON: as declared or m). */
  unit?: LengthUnit;
  /** Resample keyframed sources (glTF) to this many samples per second; default: detected from the key times. */
  sampleRate?: number;
  /**
   * Called with each warning, in order. Readers that can skip data report what they skipped
   * here, one line each, instead of dropping it silently; the glTF reader does (channels on
   * nodes outside the skeleton, morph-weight and KHR_animation_pointer channels, keys moved
   * onto the sample grid, renamed bones). Readers that skip nothing never call it.
   */
  onWarning?: (message: string) => void;
}
