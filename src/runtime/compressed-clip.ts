/**
 * {@link CompressedClip}, complete: the clip (clip.ts) with the TypeScript decoder
 * (typescript-decoder.ts) installed, so every clip `CompressedClip.open` returns can be
 * sampled at once, whatever decodes it. The library and its entry points import the clip
 * from here; the glTF plugins import clip.ts and load the TypeScript decoder through
 * `import()` only for a clip the WebAssembly kernel does not decode (sampler.ts's
 * loadTypeScriptDecoder), so a page whose engine has WebAssembly SIMD never fetches it.
 * package.json lists this module under `sideEffects`, so bundlers keep the installation.
 */
import { useTypeScriptDecoder } from './sampler.js';
import { TypeScriptDecoder } from './typescript-decoder.js';

useTypeScriptDecoder(TypeScriptDecoder);

export { CompressedClip } from './clip.js';
export type { ClipSections, ClipTables, Looping, OpenOptions, Rounding, SampleOptions } from './clip.js';
