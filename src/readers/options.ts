import type { LengthUnit } from '../clip/units.js';

/** Options shared by the readers. */
export interface ReadOptions {
  /** Length unit of the source's translations; default per format (BVH: cm, glTF: m, SJSON: as declared or m). */
  unit?: LengthUnit;
  /** Resample keyframed sources (glTF) to this many samples per second; default: detected from the key times. */
  sampleRate?: number;
}
