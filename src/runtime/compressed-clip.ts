/**
 * {@link CompressedClip}, complete: the clip (clip.ts) with the TypeScript decoder
 * (typescript-decoder.ts) installed, so every clip `CompressedClip.open` returns can be
 * sampled at once, whatever decodes it. The library and its entry points import the clip
 * from here; the glTF plugins import clip.ts, so a page that only loads assets carries the
 * TypeScript decoder only if it imports `bonepress/runtime` (the plugins refuse a clip the
 * WebAssembly kernel does not decode otherwise). package.json lists this module and the
 * runtime's index under `sideEffects`, so bundlers keep the installation, also for a bare
 * `import 'bonepress/runtime'`.
 */
import { useTypeScriptDecoder } from './sampler.js';
import { TypeScriptDecoder } from './typescript-decoder.js';

useTypeScriptDecoder(TypeScriptDecoder);

export { CompressedClip } from './clip.js';
export type { ClipTables, Looping, OpenOptions, Rounding, SampleOptions } from './clip.js';
