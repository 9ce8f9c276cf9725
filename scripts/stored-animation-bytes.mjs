/**
 * Animation bytes a GLB stores, counted the same way for every tool's output (used by
 * scripts/gltf-sizes.mjs and scripts/facial-sizes.mjs): the accessors animation samplers
 * read (their share of a meshopt-compressed buffer view's compressed bytes when the view is
 * compressed), the compressed clips' buffer views, and the JSON that describes animations
 * (animations[], their accessors and buffer views, the bonepress root object).
 */
const COMPONENTS = { SCALAR: 1, VEC2: 2, VEC3: 3, VEC4: 4, MAT2: 4, MAT3: 9, MAT4: 16 };
const COMPONENT_BYTES = { 5120: 1, 5121: 1, 5122: 2, 5123: 2, 5125: 4, 5126: 4 };
const EXT = 'BONEPRESS_animation_compression';

/** The JSON chunk of GLB bytes, parsed. */
export function glbJson(glb) {
  const view = new DataView(glb.buffer, glb.byteOffset, glb.byteLength);
  return JSON.parse(new TextDecoder().decode(glb.subarray(20, 20 + view.getUint32(12, true))));
}

const jsonSize = (value) => (value === undefined ? 0 : Buffer.byteLength(JSON.stringify(value)));
const accessorBytes = (a) => a.count * (COMPONENTS[a.type] ?? 1) * (COMPONENT_BYTES[a.componentType] ?? 4);

/** Stored animation bytes of a GLB's JSON (see the header): `{ data, json, total }`. */
export function storedAnimationBytes(json) {
  const used = new Set();
  const extViews = new Set();
  for (const animation of json.animations ?? []) {
    for (const s of animation.samplers ?? []) {
      used.add(s.input);
      used.add(s.output);
    }
    const ext = animation.extensions?.[EXT];
    if (ext?.bufferView !== undefined) extViews.add(ext.bufferView);
  }
  // Uncompressed bytes per view over all accessors, to share out a compressed view's bytes.
  const perView = new Map();
  (json.accessors ?? []).forEach((a) => {
    if (a.bufferView !== undefined) perView.set(a.bufferView, (perView.get(a.bufferView) ?? 0) + accessorBytes(a));
  });
  let data = 0;
  let jsonBytes = jsonSize(json.animations) + jsonSize(json.extensions?.[EXT]);
  const views = new Set(extViews);
  for (const i of used) {
    const a = json.accessors[i];
    jsonBytes += jsonSize(a);
    const raw = accessorBytes(a);
    const view = a.bufferView !== undefined ? json.bufferViews[a.bufferView] : undefined;
    const meshopt = view?.extensions?.EXT_meshopt_compression;
    data += meshopt ? meshopt.byteLength * (raw / perView.get(a.bufferView)) : raw;
    if (a.bufferView !== undefined) views.add(a.bufferView);
  }
  for (const v of extViews) data += json.bufferViews[v].byteLength;
  for (const v of views) jsonBytes += jsonSize(json.bufferViews[v]);
  return { data: Math.round(data), json: jsonBytes, total: Math.round(data) + jsonBytes };
}
