/**
 * What the CLI needs from the Node layer beyond `bonepress/node` (index.ts): how a failure
 * prints, how `-o` is read, staged writes and streams, and the workers a `compress` run
 * starts before its options are parsed. Not exported by the package, so none of it is
 * public API.
 */
export { isInputError, printable, problemOf, toFailure } from './failure.js';
export { sanitizeClipName } from './files.js';
export { gltfAnimationNames } from './gltf-files.js';
export { InputSet, planOutputs, resolveOutputTarget, writeChunksAtomic, writeChunksToStream } from './outputs.js';
export { releaseEarlyWorkers, startWorkersEarly } from './worker-pool.js';
export { atVertexBound, transformShare } from '../compress/morph-bound.js';
