/**
 * `bonepress/net`: pose snapshots for networked games. Browser-safe: imports only the
 * runtime, the clip model and the error metric, nothing Node-only.
 *
 * Build a {@link SnapshotSchema} once (from a clip, or a skeleton and the ranges its poses
 * take), share it with the receiver, then drive a {@link SnapshotSender} and a
 * {@link SnapshotReceiver}; {@link simulateNetwork} runs both over a simulated lossy link.
 *
 * For a whole game world: describe entity types with {@link buildWorldSchema}, write the
 * world into a {@link WorldState} each tick, and serve it with a {@link WorldServer} to
 * {@link WorldClient}s, which render through a {@link SnapshotInterpolator}
 * (docs/net.md, "World snapshots").
 */
export { NetError, NET_ERROR, ReadStream, WriteStream, bitsRequired } from './bit-stream.js';
export type { BitStream, NetErrorCode } from './bit-stream.js';
export {
  SMALLEST_THREE_INDEX_BITS,
  SMALLEST_THREE_MAX_BITS,
  SMALLEST_THREE_MAX_NORM,
  SMALLEST_THREE_MIN_BITS,
  SMALLEST_THREE_RANGE,
  decodeSmallestThree,
  encodeSmallestThree,
  encodeSmallestThreeNear,
  smallestThreeMaxAngle,
  smallestThreeStep,
  snapCode,
} from './smallest-three.js';
export { measurePoseRanges, mergePoseRanges } from './pose-ranges.js';
export type { PoseRanges } from './pose-ranges.js';
export { SNAPSHOT_SCHEMA_DEFAULTS, buildSnapshotSchema, createSnapshotSchema, resolveNetLength } from './schema.js';
export type { NetLength, SnapshotSchema, SnapshotSchemaOptions } from './schema.js';
export { COMPONENT_MAX_BITS } from './bit-allocation.js';
export { SCHEMA_VERSION, decodeSnapshotSchema, encodeSnapshotSchema } from './schema-wire.js';
export {
  CODE_STRIDE,
  PoseQuantizer,
  createSnapshotCodes,
  dequantizeBone,
  dequantizeComponentCode,
  dequantizePose,
  quantizeComponentCode,
} from './quantize.js';
export { DELTA_SHIFT_BITS, DELTA_SHIFT_MIN, SnapshotCodec, boneCodesEqual, serializeAbsolute } from './snapshot.js';
export {
  ADAPT_SHIFT,
  EntropyCodec,
  PROBABILITY_BITS,
  SnapshotRangeDecoder,
  SnapshotRangeEncoder,
  UNKNOWN_CLASS,
  UNKNOWN_LEVEL,
  deltaClass,
} from './entropy.js';
export type { SnapshotBinaryCoder, EntropyState } from './entropy.js';
export {
  SEQUENCE_BITS,
  SESSION_DEFAULTS,
  SNAPSHOT_CODING,
  SnapshotReceiver,
  SnapshotSender,
  sequenceDistance,
  sequenceGreaterThan,
} from './session.js';
export type { PacketInfo, ReceivedSnapshot, SessionOptions, SnapshotCoding, SnapshotPrecision } from './session.js';
export { MAX_PRECISION_LEVEL, START_PRECISION_LEVEL, VerifiedQuantizer } from './verify.js';
export { NETSIM_DEFAULTS, receivedPosesToClip, sampleClipAt, simulateNetwork, tickCount } from './netsim.js';
export type { LinkStats, NetsimOptions, NetsimReport } from './netsim.js';
export {
  FIELD_KIND,
  WORLD_COMPONENT_MAX_BITS,
  boundedBits,
  buildWorldSchema,
  entityField,
  entityType,
  rigidBodyBits,
} from './world-schema.js';
export type {
  EntityTypeSchema,
  EntityTypeSpec,
  FieldKind,
  FieldSchema,
  FieldSpec,
  RigidBodySpec,
  Vec3,
  WorldSchema,
  WorldSchemaSpec,
} from './world-schema.js';
export { dequantizeEntity, quantizeEntity } from './world-quantize.js';
export { NO_ENTITY, WorldCodec, WorldSnapshot, WorldState, serializeGolomb } from './world-codec.js';
export type { WorldBodyStats } from './world-codec.js';
export { rigidBodyError } from './world-error.js';
export {
  FRAGMENT_DEFAULTS,
  FRAGMENT_HEADER_BYTES,
  FRAGMENT_MARKER,
  Reassembler,
  fragmentMessage,
  resolveFragmentOptions,
} from './fragment.js';
export type { FragmentOptions } from './fragment.js';
export { ACK_FIELD_BITS, WORLD_SESSION_DEFAULTS, WorldClient, WorldServer } from './world-session.js';
export type { WorldPacketInfo, WorldReceived, WorldSessionOptions } from './world-session.js';
export { INTERPOLATION_DEFAULTS, SnapshotInterpolator } from './interpolation.js';
export type { InterpolationMode, InterpolationOptions } from './interpolation.js';
export {
  CUBE_SCENE_DEFAULTS,
  CUBE_SCENE_HALF_SIZE,
  CUBE_SCENE_PRECISION,
  CubeScene,
  cubeSceneSchema,
} from './cube-scene.js';
export type { CubeSceneOptions } from './cube-scene.js';
export { WORLD_NETSIM_DEFAULTS, simulateWorld } from './world-netsim.js';
export type { WorldNetsimOptions, WorldNetsimReport } from './world-netsim.js';
