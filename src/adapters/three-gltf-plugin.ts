/**
 * A three.js `GLTFLoader` plugin for `BONEPRESS_animation_compression` assets
 * (docs/gltf-extension.md): each compressed animation loads as a mixer-native
 * {@link CompressedAnimationClip}, resident compressed and bound to the loaded nodes through
 * the file's bone table. Fallback channels on the skeleton are discarded; the animation's
 * other channels (morph weights, nodes outside the skeleton) load as usual and play in the
 * same clip.
 */
import type { AnimationClip, KeyframeTrack, Object3D } from 'three';
import type { GLTFLoaderPlugin, GLTFParser } from 'three/examples/jsm/loaders/GLTFLoader.js';

import { CompressedClip } from '../runtime/compressed-clip.js';
import { FORMAT_ERROR, FormatError } from '../runtime/errors.js';
import { createMixerClip, type CompressedAnimationClip, type MixerClipOptions } from './three-mixer.js';

/** The extension's name (docs/gltf-extension.md). */
export const BONEPRESS_EXTENSION = 'BONEPRESS_animation_compression';

const TRS = new Set(['translation', 'rotation', 'scale']);

/** Options of {@link BonepressGLTFLoaderPlugin}. */
export interface BonepressGLTFLoaderPluginOptions extends Pick<MixerClipOptions, 'translationScale' | 'onWarning' | 'strict'> {}

interface ChannelDef {
  target?: { node?: number; path?: string };
}
interface AnimationDef {
  name?: string;
  channels?: ChannelDef[];
  extensions?: Record<string, unknown>;
}
interface SkeletonDef {
  joints?: unknown;
  parents?: unknown;
}

/**
 * `loader.register((parser) => new BonepressGLTFLoaderPlugin(parser))`: `gltf.animations`
 * then hold {@link CompressedAnimationClip}s for the compressed animations (play them with
 * `mixer.clipAction(clip)`, on `gltf.scene` as loaded). A malformed extension or `.bpk`
 * rejects the load with a {@link FormatError} naming the animation.
 */
export class BonepressGLTFLoaderPlugin implements GLTFLoaderPlugin {
  readonly name = BONEPRESS_EXTENSION;

  constructor(
    private readonly parser: GLTFParser,
    private readonly options: BonepressGLTFLoaderPluginOptions = {},
  ) {}

  /** GLTFLoader's hook (absent from the GLTFLoaderPlugin type): null leaves the animation to the loader. */
  loadAnimation(animationIndex: number): Promise<AnimationClip> | null {
    const def = (this.parser.json.animations as AnimationDef[] | undefined)?.[animationIndex];
    const ext = def?.extensions?.[BONEPRESS_EXTENSION] as { skeleton?: unknown; bufferView?: unknown } | undefined;
    if (!def || !ext) return null;
    return this.load(animationIndex, def, ext);
  }

  private async load(index: number, def: AnimationDef, ext: { skeleton?: unknown; bufferView?: unknown }): Promise<AnimationClip> {
    const name = def.name ? def.name : `animation_${index}`;
    const where = `animation ${index} ("${name}")`;
    const fail = (problem: string): never => {
      throw new FormatError(FORMAT_ERROR.BAD_ARGUMENT, `${BONEPRESS_EXTENSION}: ${where}: ${problem}`);
    };
    const json = this.parser.json as { extensions?: Record<string, { skeletons?: SkeletonDef[] }>; bufferViews?: unknown[]; nodes?: unknown[] };
    const skeletons = json.extensions?.[BONEPRESS_EXTENSION]?.skeletons;
    const s = ext.skeleton;
    if (!Array.isArray(skeletons) || !Number.isInteger(s) || (s as number) < 0 || (s as number) >= skeletons.length) fail(`skeleton ${String(s)} is not in the file's bone tables`);
    const table = skeletons![s as number];
    const joints = table.joints, parents = table.parents;
    const nodeCount = json.nodes?.length ?? 0;
    if (!Array.isArray(joints) || !joints.every((j) => Number.isInteger(j) && j >= 0 && j < nodeCount)) fail(`bone table ${String(s)} has joints that are not node indices`);
    if (!Array.isArray(parents) || parents.length !== (joints as number[]).length) fail(`bone table ${String(s)} needs one parent per joint`);
    const view = ext.bufferView;
    if (!Number.isInteger(view) || (view as number) < 0 || (view as number) >= (json.bufferViews?.length ?? 0)) fail(`bufferView ${String(view)} is not in the file`);

    const bytes = await this.parser.getDependency('bufferView', view as number) as ArrayBuffer;
    let compressed: CompressedClip;
    try {
      compressed = CompressedClip.open(new Uint8Array(bytes));
    } catch (e) {
      return fail((e as Error).message);
    }
    const nodeIndices = Int32Array.from(joints as number[]);
    if (compressed.boneCount !== nodeIndices.length) fail(`the clip has ${compressed.boneCount} bones but its bone table ${nodeIndices.length}`);
    (parents as number[]).forEach((p, b) => { if (compressed.parents[b] !== p) fail(`bone ${b}: the clip's parent ${compressed.parents[b]} differs from the bone table's ${String(p)}`); });

    const nodes = await Promise.all(Array.from(nodeIndices, (j) => this.parser.getDependency('node', j) as Promise<Object3D>));
    // Bind straight to the objects made from the table's nodes; a stand-in root lists them for naming.
    const associations = new Map<Object3D, { nodes: number }>(nodes.map((o, b) => [o, { nodes: nodeIndices[b] }]));
    const root = { traverse: (visit: (o: Object3D) => void) => nodes.forEach(visit) } as unknown as Object3D;
    const clip: CompressedAnimationClip = createMixerClip(compressed, root, {
      ...this.options, name, associations, nodeIndices, boneNames: nodes.map((o) => o.name),
    });
    const extra = await this.otherTracks(index, def, new Set(nodeIndices));
    clip.tracks.push(...extra);
    if (typeof (def as { extras?: unknown }).extras === 'object') Object.assign(clip.userData, (def as { extras: object }).extras);
    return clip;
  }

  /**
   * The animation's channels the clip does not replace (not a translation, rotation or scale
   * of a table node, nor the node-less stub), as the loader itself would make them.
   */
  private async otherTracks(index: number, def: AnimationDef, skeleton: ReadonlySet<number>): Promise<KeyframeTrack[]> {
    const all = def.channels ?? [];
    const kept = all.filter((c) => c.target?.node !== undefined && !(skeleton.has(c.target.node) && TRS.has(c.target.path ?? '')));
    if (kept.length === 0) return [];
    // The loader's own loadAnimation reads the channel list synchronously before it awaits
    // anything, so the list is swapped only for that call.
    def.channels = kept;
    let pending: Promise<AnimationClip>;
    try {
      pending = (this.parser as unknown as { loadAnimation(i: number): Promise<AnimationClip> }).loadAnimation(index);
    } finally {
      def.channels = all;
    }
    return (await pending).tracks;
  }
}
