/**
 * The `BONEPRESS_animation_compression` glTF extension (docs/gltf-extension.md) for
 * glTF-Transform: reads and writes the per-file bone tables and each animation's `.bpk`
 * buffer view, so compressed animations survive any glTF-Transform pipeline (node
 * references, not indices, so pruning or reordering nodes keeps the tables right).
 */
import {
  Extension, ExtensionProperty, PropertyType, RefList,
  type Animation, type IProperty, type Node, type Nullable, type ReaderContext, type WriterContext,
} from '@gltf-transform/core';

import { BonepressError } from '../shared/errors.js';

/** The extension's name, as written in `extensionsUsed`. */
export const BONEPRESS_ANIMATION_COMPRESSION = 'BONEPRESS_animation_compression';
const NAME = BONEPRESS_ANIMATION_COMPRESSION;

/** A malformed or inconsistent `BONEPRESS_animation_compression` object, named by its JSON path. */
export class GltfExtensionError extends BonepressError {
  override readonly name = 'GltfExtensionError';
  readonly code = 'BAD_EXTENSION';
  constructor(
    /** JSON path of the offending value, e.g. `animations[2].extensions.BONEPRESS_animation_compression.bufferView`. */
    readonly path: string,
    problem: string,
  ) {
    super(`${path}: ${problem}`);
  }
}

interface IBoneTable extends IProperty {
  joints: RefList<Node>;
  parents: number[];
}

/**
 * A bone table: the glTF node of every bone of a skeleton, in the clips' bone order, and
 * each bone's parent bone (−1 for a root). Written once per file, shared by every
 * {@link CompressedAnimation} of that skeleton.
 */
export class BoneTable extends ExtensionProperty<IBoneTable> {
  static override EXTENSION_NAME = NAME;
  declare extensionName: typeof NAME;
  declare propertyType: 'BonepressBoneTable';
  // Referenced from CompressedAnimation, never attached to a core property.
  declare parentTypes: [];

  protected init(): void {
    this.extensionName = NAME;
    this.propertyType = 'BonepressBoneTable';
    this.parentTypes = [];
  }

  protected override getDefaults(): Nullable<IBoneTable> {
    return Object.assign(super.getDefaults(), { joints: new RefList<Node>(), parents: [] });
  }

  /** Nodes in bone order. */
  listJoints(): Node[] {
    return this.listRefs('joints');
  }

  /** Sets the bones: their nodes in bone order and each one's parent bone (−1 for a root). */
  setBones(joints: readonly Node[], parents: readonly number[]): this {
    for (const node of this.listRefs('joints')) this.removeRef('joints', node);
    for (const node of joints) this.addRef('joints', node);
    return this.set('parents', parents.slice());
  }

  /** Parent bone of every bone, −1 for a root. A copy. */
  getParents(): number[] {
    return this.get('parents').slice();
  }
}

interface ICompressedAnimation extends IProperty {
  data: Uint8Array | null;
  skeleton: BoneTable;
}

/**
 * An animation's compressed clip: the `.bpk` bytes (without names or node indices) and the
 * {@link BoneTable} that binds its bones. Attached to an `Animation`.
 */
export class CompressedAnimation extends ExtensionProperty<ICompressedAnimation> {
  static override EXTENSION_NAME = NAME;
  declare extensionName: typeof NAME;
  declare propertyType: 'BonepressCompressedAnimation';
  declare parentTypes: [PropertyType.ANIMATION];

  protected init(): void {
    this.extensionName = NAME;
    this.propertyType = 'BonepressCompressedAnimation';
    this.parentTypes = [PropertyType.ANIMATION];
  }

  protected override getDefaults(): Nullable<ICompressedAnimation> {
    return Object.assign(super.getDefaults(), { data: null, skeleton: null });
  }

  /** The `.bpk` bytes. */
  getData(): Uint8Array | null {
    return this.get('data');
  }

  setData(data: Uint8Array): this {
    return this.set('data', data);
  }

  getSkeleton(): BoneTable | null {
    return this.getRef('skeleton');
  }

  setSkeleton(table: BoneTable | null): this {
    return this.setRef('skeleton', table);
  }
}

interface RootDef {
  skeletons?: unknown;
}
interface AnimationDef {
  skeleton?: unknown;
  bufferView?: unknown;
}

/**
 * `BONEPRESS_animation_compression` for glTF-Transform. Register it on an I/O
 * (`new NodeIO().registerExtensions([BonepressAnimationCompression])`) to read and write
 * compressed assets; {@link bonepress} creates it on the document it compresses.
 *
 * Required (listed in `extensionsRequired`) unless the animations keep their original
 * channels as a fallback: `setRequired(false)`.
 */
export class BonepressAnimationCompression extends Extension {
  static override readonly EXTENSION_NAME = NAME;
  override readonly extensionName = NAME;
  // The .bpk bytes go into buffer views of their own, laid out before write().
  override readonly prewriteTypes = [PropertyType.BUFFER];

  /** A new, empty bone table. */
  createBoneTable(): BoneTable {
    return new BoneTable(this.document.getGraph());
  }

  /** A new compressed animation; attach it with `animation.setExtension(BONEPRESS_ANIMATION_COMPRESSION, it)`. */
  createCompressedAnimation(): CompressedAnimation {
    return new CompressedAnimation(this.document.getGraph());
  }

  /** The compressed animations of the document, in animation order. */
  private compressedAnimations(): { animation: Animation; compressed: CompressedAnimation }[] {
    const out: { animation: Animation; compressed: CompressedAnimation }[] = [];
    for (const animation of this.document.getRoot().listAnimations()) {
      const compressed = animation.getExtension<CompressedAnimation>(NAME);
      if (compressed) out.push({ animation, compressed });
    }
    return out;
  }

  override read(context: ReaderContext): this {
    const json = context.jsonDoc.json;
    const rootPath = `extensions.${NAME}`;
    const rootDef = (json.extensions?.[NAME] ?? {}) as RootDef;
    const tables: BoneTable[] = [];
    if (rootDef.skeletons !== undefined) {
      if (!Array.isArray(rootDef.skeletons)) throw new GltfExtensionError(`${rootPath}.skeletons`, 'is not an array');
      rootDef.skeletons.forEach((def: unknown, s: number) => {
        const path = `${rootPath}.skeletons[${s}]`;
        const { joints, parents } = (typeof def === 'object' && def !== null ? def : {}) as { joints?: unknown; parents?: unknown };
        if (!Array.isArray(joints) || joints.length === 0) throw new GltfExtensionError(`${path}.joints`, 'is not a non-empty array');
        if (!Array.isArray(parents) || parents.length !== joints.length) {
          throw new GltfExtensionError(`${path}.parents`, `needs one parent per joint (${joints.length})`);
        }
        const nodes = joints.map((j: unknown, b: number) => {
          if (!Number.isInteger(j) || (j as number) < 0 || (j as number) >= context.nodes.length) {
            throw new GltfExtensionError(`${path}.joints[${b}]`, `${String(j)} is not a node index (the file has ${context.nodes.length} nodes)`);
          }
          return context.nodes[j as number];
        });
        if (new Set(nodes).size !== nodes.length) throw new GltfExtensionError(`${path}.joints`, 'lists a node twice');
        parents.forEach((p: unknown, b: number) => {
          if (!Number.isInteger(p) || (p as number) < -1 || (p as number) >= b) {
            throw new GltfExtensionError(`${path}.parents[${b}]`, `${String(p)} (a parent must be −1 or an earlier bone)`);
          }
        });
        tables.push(this.createBoneTable().setBones(nodes, parents as number[]));
      });
    }
    (json.animations ?? []).forEach((animationDef, a) => {
      const def = animationDef.extensions?.[NAME] as AnimationDef | undefined;
      if (def === undefined) return;
      const path = `animations[${a}].extensions.${NAME}`;
      const { skeleton, bufferView } = def;
      if (!Number.isInteger(skeleton) || (skeleton as number) < 0 || (skeleton as number) >= tables.length) {
        throw new GltfExtensionError(`${path}.skeleton`, `${String(skeleton)} is not a skeleton index (${rootPath} has ${tables.length})`);
      }
      if (!Number.isInteger(bufferView) || (bufferView as number) < 0 || (bufferView as number) >= context.bufferViews.length) {
        throw new GltfExtensionError(`${path}.bufferView`, `${String(bufferView)} is not a buffer view index (the file has ${context.bufferViews.length})`);
      }
      // A copy: the view is a window on the whole buffer, which the document would otherwise keep alive.
      const data = context.bufferViews[bufferView as number].slice();
      context.animations[a].setExtension(NAME, this.createCompressedAnimation().setData(data).setSkeleton(tables[skeleton as number]));
    });
    return this;
  }

  override prewrite(context: WriterContext): this {
    const compressed = this.compressedAnimations();
    if (compressed.length === 0) return this;
    const buffer = this.document.getRoot().listBuffers()[0];
    if (!buffer) throw new GltfExtensionError(`extensions.${NAME}`, 'compressed animations need a buffer, and the document has none');
    const views = context.otherBufferViews.get(buffer) ?? [];
    for (const { animation, compressed: c } of compressed) {
      const data = c.getData();
      if (!data) throw new GltfExtensionError(`animation "${animation.getName()}"`, 'the compressed animation has no data');
      views.push(data);
    }
    context.otherBufferViews.set(buffer, views);
    return this;
  }

  override write(context: WriterContext): this {
    const compressed = this.compressedAnimations();
    if (compressed.length === 0) return this;
    const json = context.jsonDoc.json;
    const tableIndex = new Map<BoneTable, number>();
    const skeletons: { joints: number[]; parents: number[] }[] = [];
    for (const { animation, compressed: c } of compressed) {
      const table = c.getSkeleton();
      const index = context.animationIndexMap.get(animation);
      const data = c.getData();
      const view = data ? context.otherBufferViewsIndexMap.get(data) : undefined;
      if (!table || index === undefined || view === undefined) {
        throw new GltfExtensionError(`animation "${animation.getName()}"`, 'the compressed animation has no bone table or data');
      }
      let s = tableIndex.get(table);
      if (s === undefined) {
        const joints = table.listJoints().map((node) => context.nodeIndexMap.get(node));
        const parents = table.getParents();
        if (joints.length !== parents.length || joints.some((j) => j === undefined)) {
          throw new GltfExtensionError(`animation "${animation.getName()}"`, `its bone table lists ${parents.length} bones but ${joints.filter((j) => j !== undefined).length} of their nodes are in the document (a bone's node was removed)`);
        }
        s = skeletons.length;
        tableIndex.set(table, s);
        skeletons.push({ joints: joints as number[], parents });
      }
      const def = json.animations![index];
      def.extensions = { ...def.extensions, [NAME]: { skeleton: s, bufferView: view } };
    }
    json.extensions = { ...json.extensions, [NAME]: { skeletons } };
    return this;
  }
}
