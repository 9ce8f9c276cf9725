/**
 * The schema's wire form: one description of its serialized fields for both directions,
 * {@link encodeSnapshotSchema} and {@link decodeSnapshotSchema}, and the derived fields
 * (sent bones, default codes, hash) every schema is finished with.
 */
import { LENGTH_UNITS, type LengthUnit } from '../clip/units.js';
import { crc32 } from '../runtime/format.js';
import { POSE_STRIDE } from '../runtime/pose.js';
import { COMPONENT_MAX_BITS } from './bit-allocation.js';
import { NET_ERROR, NetError, ReadStream, WriteStream, type BitStream } from './bit-stream.js';
import { CODE_STRIDE, PoseQuantizer } from './quantize.js';
import type { SnapshotSchema } from './schema.js';
import { SMALLEST_THREE_INDEX_BITS, SMALLEST_THREE_MAX_BITS, SMALLEST_THREE_MIN_BITS } from './smallest-three.js';

/** Version of the schema's wire form. Serialized: bump it when the layout changes. */
export const SCHEMA_VERSION = 1;

/** The serialized fields of a schema; the rest is derived by {@link finishSchema}. */
export interface SchemaFields {
  boneCount: number;
  parents: Int32Array;
  unit: LengthUnit;
  threshold: number;
  shellDistances: Float32Array;
  basePose: Float32Array;
  defaultPose: Float32Array;
  compensate: boolean;
  codeBits: Uint8Array;
  translationMin: Float32Array;
  translationMax: Float32Array;
  scaleMin: Float32Array;
  scaleMax: Float32Array;
  deltaSmallOffset: number;
  deltaLargeOffset: number;
  errorBound: number;
}

/** A schema from its serialized fields: sent bones, default codes, absolute size and hash derived. */
export function finishSchema(f: SchemaFields, boneBounds?: Float64Array): SnapshotSchema {
  const n = f.boneCount * CODE_STRIDE;
  const sent: number[] = [];
  let absoluteBits = 0;
  for (let b = 0; b < f.boneCount; b++) {
    let any = false;
    for (let i = 0; i < CODE_STRIDE; i++) {
      const bits = f.codeBits[b * CODE_STRIDE + i];
      if (bits === 0) continue;
      any = true;
      absoluteBits += bits;
    }
    if (any) {
      sent.push(b);
      absoluteBits++;
    }
  }
  const partial = {
    ...f,
    sentBones: Int32Array.from(sent),
    sendsRotations: sent.some((b) => f.codeBits[b * CODE_STRIDE] > 0),
    defaultCodes: new Int32Array(n),
    boneErrorBounds: boneBounds ?? new Float64Array(f.boneCount).fill(f.errorBound),
    absoluteBits,
    hash: 0,
  };
  // The default pose as the quantiser codes it (compensation included), so that a pose at
  // rest gives exactly these codes.
  new PoseQuantizer(partial).quantize(partial.defaultPose, partial.defaultCodes);
  const stream = new WriteStream(1024);
  serializeSchemaFields(stream, f);
  return { ...partial, hash: crc32(stream.finish()) };
}

/**
 * One description of the schema's wire form, for both directions. Serialized: never
 * reorder; bump {@link SCHEMA_VERSION}.
 */
function serializeSchemaFields(stream: BitStream, f: SchemaFields): void {
  const version = stream.serializeBits(SCHEMA_VERSION, 8);
  if (version !== SCHEMA_VERSION)
    throw new NetError(NET_ERROR.BAD_VALUE, `schema version ${version}, expected ${SCHEMA_VERSION}`, 0);
  f.boneCount = stream.serializeInt(f.boneCount, 1, 0xffff);
  if (stream.isReading) allocateFields(f);
  f.unit = LENGTH_UNITS[stream.serializeInt(LENGTH_UNITS.indexOf(f.unit), 0, LENGTH_UNITS.length - 1)];
  f.compensate = stream.serializeBool(f.compensate);
  f.threshold = stream.serializeFloat32(f.threshold);
  f.errorBound = stream.serializeFloat32(f.errorBound);
  f.deltaSmallOffset = stream.serializeInt(f.deltaSmallOffset, 0, 31);
  f.deltaLargeOffset = stream.serializeInt(f.deltaLargeOffset, 0, 31);
  for (let b = 0; b < f.boneCount; b++) {
    f.parents[b] = stream.serializeInt(f.parents[b], -1, b - 1);
    f.shellDistances[b] = stream.serializeFloat32(f.shellDistances[b]);
    for (let i = 0; i < POSE_STRIDE; i++)
      f.basePose[b * POSE_STRIDE + i] = stream.serializeFloat32(f.basePose[b * POSE_STRIDE + i]);
    for (let i = 0; i < POSE_STRIDE; i++)
      f.defaultPose[b * POSE_STRIDE + i] = stream.serializeFloat32(f.defaultPose[b * POSE_STRIDE + i]);
    const c = b * CODE_STRIDE;
    const rotBits = stream.serializeInt(f.codeBits[c + 1], 0, SMALLEST_THREE_MAX_BITS);
    if (rotBits > 0 && rotBits < SMALLEST_THREE_MIN_BITS)
      throw new NetError(NET_ERROR.BAD_VALUE, `bone ${b}: ${rotBits} rotation bits`, 0);
    f.codeBits[c] = rotBits > 0 ? SMALLEST_THREE_INDEX_BITS : 0;
    f.codeBits[c + 1] = f.codeBits[c + 2] = f.codeBits[c + 3] = rotBits;
    for (let k = 0; k < 3; k++) {
      const i = b * 3 + k;
      f.codeBits[c + 4 + k] = stream.serializeInt(f.codeBits[c + 4 + k], 0, COMPONENT_MAX_BITS);
      if (f.codeBits[c + 4 + k] > 0) {
        f.translationMin[i] = stream.serializeFloat32(f.translationMin[i]);
        f.translationMax[i] = stream.serializeFloat32(f.translationMax[i]);
      }
      f.codeBits[c + 7 + k] = stream.serializeInt(f.codeBits[c + 7 + k], 0, COMPONENT_MAX_BITS);
      if (f.codeBits[c + 7 + k] > 0) {
        f.scaleMin[i] = stream.serializeFloat32(f.scaleMin[i]);
        f.scaleMax[i] = stream.serializeFloat32(f.scaleMax[i]);
      }
    }
  }
}

function allocateFields(f: SchemaFields): void {
  const n = f.boneCount;
  f.parents = new Int32Array(n);
  f.shellDistances = new Float32Array(n);
  f.basePose = new Float32Array(n * POSE_STRIDE);
  f.defaultPose = new Float32Array(n * POSE_STRIDE);
  f.codeBits = new Uint8Array(n * CODE_STRIDE);
  f.translationMin = new Float32Array(n * 3);
  f.translationMax = new Float32Array(n * 3);
  f.scaleMin = new Float32Array(n * 3);
  f.scaleMax = new Float32Array(n * 3);
}

/**
 * The schema's wire form, for a server to send its clients once (a few bytes per bone:
 * parents, shells, base and default poses as float32, bit counts and ranges).
 */
export function encodeSnapshotSchema(schema: SnapshotSchema): Uint8Array {
  const stream = new WriteStream(1024);
  serializeSchemaFields(stream, { ...schema });
  return stream.finish();
}

/**
 * Reads a schema written by {@link encodeSnapshotSchema}. Throws {@link NetError}
 * (`PACKET_TRUNCATED`, `BAD_VALUE`) for bytes that are not one.
 */
export function decodeSnapshotSchema(bytes: Uint8Array): SnapshotSchema {
  const stream = new ReadStream(bytes);
  const f: SchemaFields = {
    boneCount: 0,
    parents: new Int32Array(0),
    unit: 'cm',
    threshold: 0,
    shellDistances: new Float32Array(0),
    basePose: new Float32Array(0),
    defaultPose: new Float32Array(0),
    compensate: false,
    codeBits: new Uint8Array(0),
    translationMin: new Float32Array(0),
    translationMax: new Float32Array(0),
    scaleMin: new Float32Array(0),
    scaleMax: new Float32Array(0),
    deltaSmallOffset: 0,
    deltaLargeOffset: 0,
    errorBound: 0,
  };
  serializeSchemaFields(stream, f);
  stream.finish();
  for (let i = 0; i < f.basePose.length; i++) {
    if (!Number.isFinite(f.basePose[i]) || !Number.isFinite(f.defaultPose[i]))
      throw new NetError(NET_ERROR.BAD_VALUE, 'schema pose value is not finite');
  }
  for (let i = 0; i < f.translationMin.length; i++) {
    const bad = (lo: number, hi: number, bits: number) =>
      bits > 0 && !(Number.isFinite(lo) && Number.isFinite(hi) && hi > lo);
    if (
      bad(f.translationMin[i], f.translationMax[i], f.codeBits[Math.floor(i / 3) * CODE_STRIDE + 4 + (i % 3)]) ||
      bad(f.scaleMin[i], f.scaleMax[i], f.codeBits[Math.floor(i / 3) * CODE_STRIDE + 7 + (i % 3)])
    ) {
      throw new NetError(NET_ERROR.BAD_VALUE, `schema range ${i} is empty or not finite`);
    }
  }
  checkOffsets(f.deltaSmallOffset, f.deltaLargeOffset);
  return finishSchema(f);
}

/** Throws {@link NetError} `BAD_ARGUMENT` unless the delta offsets are whole with 0 ≤ large ≤ small ≤ 31. */
export function checkOffsets(small: number, large: number): void {
  if (!Number.isInteger(small) || !Number.isInteger(large) || large < 0 || small < large || small > 31) {
    throw new NetError(
      NET_ERROR.BAD_ARGUMENT,
      `delta offsets must be whole numbers with 0 <= large (${large}) <= small (${small}) <= 31`,
    );
  }
}
