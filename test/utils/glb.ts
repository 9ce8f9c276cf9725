/**
 * GLB containers written and split by hand, for tests that edit an asset's JSON or damage
 * its bytes (glTF-Transform would rewrite or refuse what they need to keep as it is).
 */

/** A GLB of `json` whose one BIN chunk is `bin` (both padded to 4 bytes). */
export function glbOf(json: unknown, bin: Uint8Array): Uint8Array {
  const text = new TextEncoder().encode(JSON.stringify(json));
  const jsonLength = (text.length + 3) & ~3,
    binLength = (bin.length + 3) & ~3;
  const out = new Uint8Array(28 + jsonLength + binLength);
  const view = new DataView(out.buffer);
  view.setUint32(0, 0x46546c67, true); // "glTF"
  view.setUint32(4, 2, true);
  view.setUint32(8, out.length, true);
  view.setUint32(12, jsonLength, true);
  view.setUint32(16, 0x4e4f534a, true); // "JSON"
  out.fill(0x20, 20, 20 + jsonLength);
  out.set(text, 20);
  view.setUint32(20 + jsonLength, binLength, true);
  view.setUint32(24 + jsonLength, 0x004e4942, true); // "BIN\0"
  out.set(bin, 28 + jsonLength);
  return out;
}

/** The JSON and BIN chunk of a GLB that has both. */
export function splitGlb<Json = Record<string, unknown>>(glb: Uint8Array): { json: Json; bin: Uint8Array } {
  const view = new DataView(glb.buffer, glb.byteOffset, glb.byteLength);
  const jsonLength = view.getUint32(12, true);
  const json = JSON.parse(new TextDecoder().decode(glb.subarray(20, 20 + jsonLength))) as Json;
  const binLength = view.getUint32(20 + jsonLength, true);
  return { json, bin: glb.slice(28 + jsonLength, 28 + jsonLength + binLength) };
}
