/**
 * `KHR_animation_pointer` carried through glTF-Transform I/O unchanged. glTF-Transform
 * 4.5 has no such extension, so without this one its reader drops the channel's
 * `target.extensions` and writes a channel with path `"pointer"` and nothing to point at.
 * Each pointer is kept as the string the file holds: bonepress neither reorders nor removes
 * nodes, meshes, materials or cameras, so the indices inside a pointer stay right through
 * `compressDocument`; a transform that does (prune, dedup) would leave them stale.
 */
import {
  Extension,
  ExtensionProperty,
  PropertyType,
  type AnimationChannel,
  type IProperty,
  type Nullable,
  type ReaderContext,
  type WriterContext,
} from '@gltf-transform/core';

import { GltfExtensionError } from './extension.js';

/** The extension's name, as written in `extensionsUsed`. */
export const KHR_ANIMATION_POINTER = 'KHR_animation_pointer';
const NAME = KHR_ANIMATION_POINTER;

interface IAnimationPointer extends IProperty {
  pointer: string;
}

/** The JSON pointer a channel animates (its `target.extensions.KHR_animation_pointer.pointer`). */
export class AnimationPointer extends ExtensionProperty<IAnimationPointer> {
  static override EXTENSION_NAME = NAME;
  declare extensionName: typeof NAME;
  declare propertyType: 'AnimationPointer';
  declare parentTypes: [PropertyType.ANIMATION_CHANNEL];

  protected init(): void {
    this.extensionName = NAME;
    this.propertyType = 'AnimationPointer';
    this.parentTypes = [PropertyType.ANIMATION_CHANNEL];
  }

  protected override getDefaults(): Nullable<IAnimationPointer> {
    return Object.assign(super.getDefaults(), { pointer: '' });
  }

  /** The JSON pointer, e.g. `/materials/0/pbrMetallicRoughness/baseColorFactor`. */
  getPointer(): string {
    return this.get('pointer');
  }

  setPointer(pointer: string): this {
    return this.set('pointer', pointer);
  }
}

/**
 * Reads and writes `KHR_animation_pointer` channel targets verbatim, so bonepress passes
 * such channels through uncompressed (it compresses node TRS and morph weights only).
 */
export class KHRAnimationPointerPassThrough extends Extension {
  static override readonly EXTENSION_NAME = NAME;
  override readonly extensionName = NAME;

  /** The pointer of every channel that has one, in animation and channel order. */
  listPointerChannels(): { channel: AnimationChannel; pointer: AnimationPointer }[] {
    const out: { channel: AnimationChannel; pointer: AnimationPointer }[] = [];
    for (const animation of this.document.getRoot().listAnimations()) {
      for (const channel of animation.listChannels()) {
        const pointer = channel.getExtension<AnimationPointer>(NAME);
        if (pointer) out.push({ channel, pointer });
      }
    }
    return out;
  }

  override read(context: ReaderContext): this {
    (context.jsonDoc.json.animations ?? []).forEach((animationDef, a) => {
      // glTF-Transform's reader makes one channel per channel definition, in order.
      const channels = context.animations[a].listChannels();
      (animationDef.channels ?? []).forEach((channelDef, c) => {
        const def = (channelDef.target as { extensions?: Record<string, unknown> }).extensions?.[NAME] as
          | { pointer?: unknown }
          | undefined;
        if (def === undefined) return;
        if (typeof def.pointer !== 'string' || !def.pointer.startsWith('/')) {
          throw new GltfExtensionError(
            `${JSON.stringify(def.pointer)} is not a JSON pointer`,
            `animations[${a}].channels[${c}].target.extensions.${NAME}.pointer`,
          );
        }
        channels[c].setExtension(NAME, new AnimationPointer(this.document.getGraph()).setPointer(def.pointer));
      });
    });
    return this;
  }

  override write(context: WriterContext): this {
    const json = context.jsonDoc.json;
    for (const animation of this.document.getRoot().listAnimations()) {
      const index = context.animationIndexMap.get(animation);
      if (index === undefined) continue;
      animation.listChannels().forEach((channel, c) => {
        const pointer = channel.getExtension<AnimationPointer>(NAME);
        if (!pointer) return;
        const target = json.animations![index].channels[c].target as { extensions?: Record<string, unknown> };
        target.extensions = { ...target.extensions, [NAME]: { pointer: pointer.getPointer() } };
      });
    }
    return this;
  }
}
