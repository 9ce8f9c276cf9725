/**
 * The transport form's encoder (docs/transport.md): re-codes the runtime `.bpk` bytes
 * losslessly with the layout of runtime/transport.ts, which the decoder shares.
 */
import { CompressedClip } from '../runtime/compressed-clip.js';
import { FORMAT_ERROR, FormatError } from '../runtime/errors.js';
import {
  EXPANSION_SLACK,
  MAX_EXPANSION,
  TRANSPORT_HEADER,
  TRANSPORT_MAGIC,
  TRANSPORT_VERSION,
  codeClip,
} from '../runtime/transport.js';
import { RangeEncoder } from './entropy-encoder.js';

/**
 * The transport form of a runtime `.bpk` clip: `decodeTransport` (bonepress/runtime) gives
 * back exactly `bpk`. The clip is validated first (throws {@link FormatError}). The same
 * input always gives the same bytes.
 */
export function encodeTransport(bpk: Uint8Array): Uint8Array {
  CompressedClip.open(bpk);
  const copy = bpk.slice(); // codeClip writes back what it codes; a fresh buffer is 4-byte aligned
  const encoder = new RangeEncoder(bpk.length);
  codeClip(encoder, copy, copy.length);
  const stream = encoder.finish();
  const out = new Uint8Array(TRANSPORT_HEADER.SIZE + stream.length);
  const view = new DataView(out.buffer);
  view.setUint32(TRANSPORT_HEADER.MAGIC, TRANSPORT_MAGIC, true);
  view.setUint16(TRANSPORT_HEADER.VERSION, TRANSPORT_VERSION, true);
  view.setUint16(TRANSPORT_HEADER.FLAGS, 0, true);
  view.setUint32(TRANSPORT_HEADER.RUNTIME_SIZE, bpk.length, true);
  out.set(stream, TRANSPORT_HEADER.SIZE);
  if (bpk.length > MAX_EXPANSION * out.length + EXPANSION_SLACK) {
    // Unreachable for real clips (see MAX_EXPANSION); the decoder would refuse the result.
    throw new FormatError(
      FORMAT_ERROR.BAD_SIZE,
      `clip of ${bpk.length} bytes codes to ${out.length}, beyond the transport form's expansion limit`,
    );
  }
  return out;
}
