/**
 * A GLB holds one binary chunk, so a Document read from a `.gltf` whose data sits in several
 * `.bin` files must have its buffers merged before it is written as GLB.
 */
import type { Document } from '@gltf-transform/core';

/**
 * Moves every accessor of `doc` onto its first buffer and disposes the buffers left with no
 * user. Buffers still referenced by an extension (a meshopt fallback) stay, as glTF-Transform
 * would then refuse the write with its own message.
 */
export function mergeBuffers(doc: Document): void {
  const root = doc.getRoot();
  const buffers = root.listBuffers();
  if (buffers.length < 2) return;
  const [first] = buffers;
  for (const accessor of root.listAccessors()) if (accessor.getBuffer() !== first) accessor.setBuffer(first);
  for (const buffer of buffers.slice(1)) {
    if (buffer.listParents().every((p) => p.propertyType === 'Root')) buffer.dispose();
  }
}
