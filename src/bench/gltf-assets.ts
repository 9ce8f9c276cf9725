/**
 * Per glTF asset of a bench corpus: what its animations cost in the source and once
 * compressed into the asset (`BONEPRESS_animation_compression`, src/node/gltf-files.ts), and
 * the whole files, beside the raw figure of 40 bytes per bone per sample of its clips.
 */
import { join } from 'node:path';

import type { CompressOptions } from '../compress/options.js';
import type { AnimationBytes } from '../gltf-transform/sizes.js';
import { toFailure, type FileFailure } from '../node/failure.js';
import { compressGltfFile } from '../node/gltf-files.js';
import type { CorpusFile } from './run.js';

/** Sizes of one glTF asset of the corpus. */
export interface BenchGltfAsset {
  id: string;
  file: string;
  /** Animations compressed into the asset. */
  clips: number;
  /** 40 · bones · samples over those clips. */
  rawBytes: number;
  /** Counted alike by `animationBytes` (src/gltf-transform/sizes.ts): accessors, compressed clips, JSON. */
  sourceAnimation: AnimationBytes;
  outputAnimation: AnimationBytes;
  sourceFileBytes: number;
  outputFileBytes: number;
}

/**
 * Compresses every `.gltf`/`.glb` of `files` into a GLB under `workDir` with `options` and
 * returns its sizes; assets that fail are returned as failures (their clips' own failures are
 * the clip run's to report).
 */
export async function measureGltfAssets(
  files: readonly CorpusFile[],
  options: Pick<CompressOptions, 'error' | 'shell' | 'metric'>,
  workDir: string,
): Promise<{ assets: BenchGltfAsset[]; failures: FileFailure[] }> {
  const assets: BenchGltfAsset[] = [];
  const failures: FileFailure[] = [];
  let n = 0;
  for (const file of files) {
    if (!/\.(gltf|glb)$/i.test(file.path)) continue;
    try {
      const r = await compressGltfFile(file.path, join(workDir, `asset-${n++}.glb`), { ...options, format: 'glb' });
      assets.push({
        id: file.id,
        file: file.path,
        clips: r.animations.length,
        rawBytes: r.animations.reduce((sum, a) => sum + a.stats.rawBytes, 0),
        sourceAnimation: r.sourceAnimation,
        outputAnimation: r.outputAnimation,
        sourceFileBytes: r.sourceFileBytes,
        outputFileBytes: r.outputFileBytes,
      });
    } catch (error) {
      failures.push(toFailure(file.path, error));
    }
  }
  return { assets, failures };
}
