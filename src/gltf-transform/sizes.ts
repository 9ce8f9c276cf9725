/**
 * What a glTF asset spends on animation, counted the same way for a source and for its
 * compressed output, so `compress --json` can set them side by side.
 */
import type { GLTF } from '@gltf-transform/core';

import { BONEPRESS_ANIMATION_COMPRESSION } from './extension.js';
import type { AnimationBytes } from './types.js';

export type { AnimationBytes } from './types.js';

const COMPONENTS: Record<string, number> = { SCALAR: 1, VEC2: 2, VEC3: 3, VEC4: 4, MAT2: 4, MAT3: 9, MAT4: 16 };
const COMPONENT_BYTES: Record<number, number> = { 5120: 1, 5121: 1, 5122: 2, 5123: 2, 5125: 4, 5126: 4 };

/** Counts {@link AnimationBytes} in a glTF JSON document. Accessors that other properties use too count for animation. */
export function animationBytes(json: GLTF.IGLTF): AnimationBytes {
  const encoder = new TextEncoder();
  const size = (value: unknown): number => (value === undefined ? 0 : encoder.encode(JSON.stringify(value)).length);
  const accessors = new Set<number>();
  const views = new Set<number>();
  let compressedBytes = 0;
  for (const animation of json.animations ?? []) {
    for (const sampler of animation.samplers ?? []) {
      accessors.add(sampler.input);
      accessors.add(sampler.output);
    }
    const ext = animation.extensions?.[BONEPRESS_ANIMATION_COMPRESSION] as { bufferView?: number } | undefined;
    if (ext?.bufferView !== undefined && json.bufferViews?.[ext.bufferView]) {
      views.add(ext.bufferView);
      compressedBytes += json.bufferViews[ext.bufferView].byteLength;
    }
  }
  let accessorBytes = 0;
  let jsonBytes = size(json.animations) + size(json.extensions?.[BONEPRESS_ANIMATION_COMPRESSION]);
  for (const a of accessors) {
    const def = json.accessors?.[a];
    if (!def) continue;
    accessorBytes += def.count * (COMPONENTS[def.type] ?? 1) * (COMPONENT_BYTES[def.componentType] ?? 4);
    jsonBytes += size(def);
    if (def.bufferView !== undefined) views.add(def.bufferView);
  }
  for (const v of views) jsonBytes += size(json.bufferViews?.[v]);
  return { accessorBytes, compressedBytes, jsonBytes, total: accessorBytes + compressedBytes + jsonBytes };
}
