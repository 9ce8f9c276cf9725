/**
 * The `BONEPRESS_animation_compression` glTF extension (docs/gltf-extension.md) for
 * glTF-Transform: reads and writes the per-file bone tables and each animation's `.bpk`
 * buffer view, so compressed animations survive any glTF-Transform pipeline (node
 * references, not indices, so pruning or reordering nodes keeps the tables right).
 */
import {
  Extension,
  ExtensionProperty,
  PropertyType,
  RefList,
  type Animation,
  type IProperty,
  type Node,
  type Nullable,
  type ReaderContext,
  type WriterContext,
} from '@gltf-transform/core';

import { FLAGS, HEADER } from '../runtime/format.js';
import { BonepressError } from '../shared/errors.js';

/** The extension's name, as written in `extensionsUsed`. */
export const BONEPRESS_ANIMATION_COMPRESSION = 'BONEPRESS_animation_compression';
const NAME = BONEPRESS_ANIMATION_COMPRESSION;

/** A malformed or inconsistent `BONEPRESS_animation_compression` object, named by its JSON path. */
export class GltfExtensionError extends BonepressError {
  override readonly name = 'GltfExtensionError';
  declare readonly code: 'BAD_EXTENSION';
  constructor(
    problem: string,
    /** JSON path of the offending value, e.g. `animations[2].extensions.BONEPRESS_animation_compression.bufferView`. */
    readonly path: string,
  ) {
    super('BAD_EXTENSION', `${path}: ${problem}`);
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
  nodes: RefList<Node>;
  weightNodes: RefList<Node>;
  weightScales: number[][];
}

/**
 * An animation's compressed clip: the `.bpk` bytes (without names or node indices) and what
 * binds its bones, in bone order: the {@link BoneTable} (when the animation moves the
 * skeleton), then one bone per node of {@link listNodes} (animated nodes outside the
 * skeleton), then per node of {@link listWeightNodes} one bone per morph target
 * (docs/gltf-extension.md, "Extra bones"). Attached to an `Animation`.
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
    return Object.assign(super.getDefaults(), {
      data: null,
      skeleton: null,
      nodes: new RefList<Node>(),
      weightNodes: new RefList<Node>(),
      weightScales: [],
    });
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

  /** Nodes outside the skeleton whose translation, rotation and scale the clip holds, in bone order after the table's. */
  listNodes(): Node[] {
    return this.listRefs('nodes');
  }

  setNodes(nodes: readonly Node[]): this {
    for (const node of this.listRefs('nodes')) this.removeRef('nodes', node);
    for (const node of nodes) this.addRef('nodes', node);
    return this;
  }

  /** Nodes whose morph-target weights the clip holds, in bone order after {@link listNodes}. */
  listWeightNodes(): Node[] {
    return this.listRefs('weightNodes');
  }

  /** Per weight node, per morph target: the displacement scale (bone translation x = weight × scale). A copy. */
  getWeightScales(): number[][] {
    return this.get('weightScales').map((s) => s.slice());
  }

  /** Sets the weight nodes and, per node, one scale per morph target. */
  setWeights(nodes: readonly Node[], scales: readonly (readonly number[])[]): this {
    for (const node of this.listRefs('weightNodes')) this.removeRef('weightNodes', node);
    for (const node of nodes) this.addRef('weightNodes', node);
    return this.set(
      'weightScales',
      scales.map((s) => s.slice()),
    );
  }

  /**
   * True when the clip is additive (the `.bpk` header's `ADDITIVE` flag): its poses are
   * deltas to play over a base (docs/gltf-extension.md, "Additive animations").
   */
  isAdditive(): boolean {
    return isAdditiveData(this.getData());
  }

  /** Bones of the clip this binds: table bones, node bones and weight bones. */
  getBoneCount(): number {
    return (
      (this.getSkeleton()?.listJoints().length ?? 0) +
      this.listNodes().length +
      this.get('weightScales').reduce((n, s) => n + s.length, 0)
    );
  }
}

interface RootDef {
  skeletons?: unknown;
}
interface AnimationDef {
  skeleton?: unknown;
  bufferView?: unknown;
  nodes?: unknown;
  weights?: unknown;
  additive?: unknown;
}

/** The `.bpk` header's `ADDITIVE` flag, read without opening the clip (false for bytes too short to hold it). */
function isAdditiveData(data: Uint8Array | null): boolean {
  if (!data || data.byteLength < HEADER.FLAGS + 2) return false;
  return ((data[HEADER.FLAGS] | (data[HEADER.FLAGS + 1] << 8)) & FLAGS.ADDITIVE) !== 0;
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
      if (!Array.isArray(rootDef.skeletons)) throw new GltfExtensionError('is not an array', `${rootPath}.skeletons`);
      rootDef.skeletons.forEach((def: unknown, s: number) => {
        const path = `${rootPath}.skeletons[${s}]`;
        const { joints, parents } = (typeof def === 'object' && def !== null ? def : {}) as {
          joints?: unknown;
          parents?: unknown;
        };
        if (!Array.isArray(joints) || joints.length === 0)
          throw new GltfExtensionError('is not a non-empty array', `${path}.joints`);
        if (!Array.isArray(parents) || parents.length !== joints.length) {
          throw new GltfExtensionError(`needs one parent per joint (${joints.length})`, `${path}.parents`);
        }
        const nodes = joints.map((j: unknown, b: number) => {
          if (!Number.isInteger(j) || (j as number) < 0 || (j as number) >= context.nodes.length) {
            throw new GltfExtensionError(
              `${String(j)} is not a node index (the file has ${context.nodes.length} nodes)`,
              `${path}.joints[${b}]`,
            );
          }
          return context.nodes[j as number];
        });
        if (new Set(nodes).size !== nodes.length) throw new GltfExtensionError('lists a node twice', `${path}.joints`);
        parents.forEach((p: unknown, b: number) => {
          if (!Number.isInteger(p) || (p as number) < -1 || (p as number) >= b) {
            throw new GltfExtensionError(
              `${String(p)} (a parent must be −1 or an earlier bone)`,
              `${path}.parents[${b}]`,
            );
          }
        });
        tables.push(this.createBoneTable().setBones(nodes, parents as number[]));
      });
    }
    (json.animations ?? []).forEach((animationDef, a) => {
      const def = animationDef.extensions?.[NAME] as AnimationDef | undefined;
      if (def === undefined) return;
      const path = `animations[${a}].extensions.${NAME}`;
      const { skeleton, bufferView, nodes, weights, additive } = def;
      if (
        skeleton !== undefined &&
        (!Number.isInteger(skeleton) || (skeleton as number) < 0 || (skeleton as number) >= tables.length)
      ) {
        throw new GltfExtensionError(
          `${String(skeleton)} is not a skeleton index (${rootPath} has ${tables.length})`,
          `${path}.skeleton`,
        );
      }
      const nodeAt = (n: unknown, where: string): Node => {
        if (!Number.isInteger(n) || (n as number) < 0 || (n as number) >= context.nodes.length) {
          throw new GltfExtensionError(
            `${String(n)} is not a node index (the file has ${context.nodes.length} nodes)`,
            where,
          );
        }
        return context.nodes[n as number];
      };
      if (nodes !== undefined && (!Array.isArray(nodes) || nodes.length === 0))
        throw new GltfExtensionError('is not a non-empty array', `${path}.nodes`);
      const propNodes = ((nodes ?? []) as unknown[]).map((n, i) => nodeAt(n, `${path}.nodes[${i}]`));
      if (weights !== undefined && (!Array.isArray(weights) || weights.length === 0))
        throw new GltfExtensionError('is not a non-empty array', `${path}.weights`);
      const weightNodes: Node[] = [],
        weightScales: number[][] = [];
      ((weights ?? []) as unknown[]).forEach((w, i) => {
        const { node, scales } = (typeof w === 'object' && w !== null ? w : {}) as { node?: unknown; scales?: unknown };
        weightNodes.push(nodeAt(node, `${path}.weights[${i}].node`));
        if (
          !Array.isArray(scales) ||
          scales.length === 0 ||
          !scales.every((x) => typeof x === 'number' && Number.isFinite(x) && x > 0)
        ) {
          throw new GltfExtensionError(
            'must be a non-empty array of positive numbers (one per morph target)',
            `${path}.weights[${i}].scales`,
          );
        }
        weightScales.push(scales as number[]);
      });
      if (skeleton === undefined && propNodes.length === 0 && weightNodes.length === 0) {
        throw new GltfExtensionError('names no skeleton, nodes or weights: the clip binds to nothing', path);
      }
      if (
        !Number.isInteger(bufferView) ||
        (bufferView as number) < 0 ||
        (bufferView as number) >= context.bufferViews.length
      ) {
        throw new GltfExtensionError(
          `${String(bufferView)} is not a buffer view index (the file has ${context.bufferViews.length})`,
          `${path}.bufferView`,
        );
      }
      // A copy: the view is a window on the whole buffer, which the document would otherwise keep alive.
      const data = context.bufferViews[bufferView as number].slice();
      if (additive !== undefined && typeof additive !== 'boolean')
        throw new GltfExtensionError(`${JSON.stringify(additive)} is not a boolean`, `${path}.additive`);
      if ((additive === true) !== isAdditiveData(data)) {
        throw new GltfExtensionError(
          additive === true
            ? 'says the animation is additive, but its clip is not'
            : 'is absent or false, but the clip is additive (its ADDITIVE flag is set)',
          `${path}.additive`,
        );
      }
      const compressed = this.createCompressedAnimation()
        .setData(data)
        .setNodes(propNodes)
        .setWeights(weightNodes, weightScales);
      if (skeleton !== undefined) compressed.setSkeleton(tables[skeleton as number]);
      context.animations[a].setExtension(NAME, compressed);
    });
    return this;
  }

  override prewrite(context: WriterContext): this {
    const compressed = this.compressedAnimations();
    if (compressed.length === 0) return this;
    const buffer = this.document.getRoot().listBuffers()[0];
    if (!buffer)
      throw new GltfExtensionError(
        'compressed animations need a buffer, and the document has none',
        `extensions.${NAME}`,
      );
    const views = context.otherBufferViews.get(buffer) ?? [];
    for (const { animation, compressed: c } of compressed) {
      const data = c.getData();
      if (!data)
        throw new GltfExtensionError('the compressed animation has no data', `animation "${animation.getName()}"`);
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
      if (index === undefined || view === undefined) {
        throw new GltfExtensionError('the compressed animation has no data', `animation "${animation.getName()}"`);
      }
      const nodeIndex = (node: Node): number => {
        const n = context.nodeIndexMap.get(node);
        if (n === undefined)
          throw new GltfExtensionError(
            'a node its clip animates was removed from the document',
            `animation "${animation.getName()}"`,
          );
        return n;
      };
      const out: Record<string, unknown> = {};
      let s = table ? tableIndex.get(table) : undefined;
      if (table && s === undefined) {
        const joints = table.listJoints().map((node) => context.nodeIndexMap.get(node));
        const parents = table.getParents();
        if (joints.length !== parents.length || joints.some((j) => j === undefined)) {
          throw new GltfExtensionError(
            `its bone table lists ${parents.length} bones but ${joints.filter((j) => j !== undefined).length} of their nodes are in the document (a bone's node was removed)`,
            `animation "${animation.getName()}"`,
          );
        }
        s = skeletons.length;
        tableIndex.set(table, s);
        skeletons.push({ joints: joints as number[], parents });
      }
      if (s !== undefined) out.skeleton = s;
      out.bufferView = view;
      const props = c.listNodes();
      if (props.length > 0) out.nodes = props.map(nodeIndex);
      const weightNodes = c.listWeightNodes(),
        scales = c.getWeightScales();
      if (weightNodes.length > 0)
        out.weights = weightNodes.map((node, w) => ({ node: nodeIndex(node), scales: scales[w] }));
      if (c.isAdditive()) out.additive = true;
      const def = json.animations![index];
      def.extensions = { ...def.extensions, [NAME]: out };
    }
    // The root object exists whenever the extension is used; skeletons only when a clip moves one.
    json.extensions = { ...json.extensions, [NAME]: skeletons.length > 0 ? { skeletons } : {} };
    return this;
  }
}
