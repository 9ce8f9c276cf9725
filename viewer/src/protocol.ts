/**
 * Messages between the page and the compression worker. The worker keeps the clips of the
 * last loaded file, so changing the threshold re-compresses without re-parsing.
 */
import type { CompressStats, RawClip } from 'bonepress';

/** One clip of a loaded file, enough to fill a clip picker. */
export interface ClipSummary {
  name: string;
  boneCount: number;
  sampleCount: number;
  sampleRate: number;
  unit: string;
}

/** Page → worker. `id` increases; the page ignores answers to superseded requests. */
export type WorkerRequest =
  | { type: 'load'; id: number; fileName: string; bytes: ArrayBuffer }
  | { type: 'compress'; id: number; clipIndex: number; error: string; shell: string }
  /** Compress every animation of the loaded glTF asset into BONEPRESS_animation_compression. */
  | { type: 'compress-asset'; id: number; error: string; shell: string };

/** Worker → page. */
export type WorkerResponse =
  | { type: 'loaded'; id: number; fileName: string; clips: ClipSummary[] }
  | {
      type: 'compressed';
      id: number;
      clipIndex: number;
      /** The raw clip, as read (a structured clone). */
      clip: RawClip;
      /** The `.bpk` file. */
      bpk: Uint8Array;
      stats: CompressStats;
      /** Shell distance per bone in clip units, as compress() resolved them. */
      shellDistances: Float32Array;
    }
  | { type: 'asset'; id: number /** The compressed asset, as a GLB. */; glb: Uint8Array }
  | { type: 'failed'; id: number; stage: 'load' | 'compress'; message: string };
