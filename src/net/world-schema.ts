/**
 * Schemas of networked entities: a world holds entities of a few types, each type a fixed
 * list of typed fields, and every field becomes a few integer **codes** whose bit counts
 * follow from the field's range and precision (the same derivation as pose snapshots:
 * ranges and a precision in, bits out). A rigid body's position and orientation can share
 * one precision over its whole extent: every point of the body (its box corners, or the
 * sphere of its radius) stays within it.
 */
import { NET_ERROR, NetError, bitsRequired } from './bit-stream.js';
import { SMALLEST_THREE_MAX_BITS, SMALLEST_THREE_MIN_BITS, smallestThreeMaxAngle } from './smallest-three.js';
import { CODE_STRIDE } from './quantize.js';
import type { SnapshotSchema } from './schema.js';
import { quantizeEntity } from './world-quantize.js';

/** Field kinds. Serialized (in a schema's hash): never renumber. */
export const FIELD_KIND = {
  POSITION: 0,
  ORIENTATION: 1,
  SCALE: 2,
  INT: 3,
  FLOAT: 4,
  BOOL: 5,
  ENUM: 6,
  POSE: 7,
} as const;
/** A {@link FIELD_KIND} value. */
export type FieldKind = (typeof FIELD_KIND)[keyof typeof FIELD_KIND];

/** Three numbers, one per axis. */
export type Vec3 = readonly [number, number, number];

/**
 * One field of an entity type, as a game describes it. Values live in the entity's float
 * array ({@link EntityTypeSchema.valueOffsets}): position 3 floats, orientation 4 (x y z w),
 * scale 1 or 3, int/float/bool/enum 1 (bool 0 or 1, enum the value's index), pose
 * `boneCount × 10` (the pose layout of `src/runtime/pose.ts`).
 */
export type FieldSpec =
  /** Bounded position: per-axis range, and the largest error per axis (unless a `rigidBody` sets it). */
  | { kind: 'position'; min: Vec3; max: Vec3; precision?: number }
  /** Smallest-three orientation: `bits` per component, or the fewest meeting `maxAngle` radians (unless a `rigidBody` sets it). */
  | { kind: 'orientation'; bits?: number; maxAngle?: number }
  /** Scale: uniform (1 component) or per axis (3), bounded, with the largest error per component. */
  | { kind: 'scale'; min: number; max: number; precision: number; uniform?: boolean }
  /** An integer in min..max. */
  | { kind: 'int'; min: number; max: number }
  /** A float in min..max, off by at most `precision`. */
  | { kind: 'float'; min: number; max: number; precision: number }
  | { kind: 'bool' }
  /** One of `values` (the entity stores the index). */
  | { kind: 'enum'; values: readonly string[] }
  /** A skeleton pose coded with a pose snapshot schema (its bit counts and error bound). */
  | { kind: 'pose'; schema: SnapshotSchema };

/**
 * Precision over a rigid body's whole extent: position and orientation bits are derived
 * together so that every point of the body moves by at most `precision`.
 */
export interface RigidBodySpec {
  /** Name of the position field. */
  position: string;
  /** Name of the orientation field. */
  orientation: string;
  /** Half extents of a box (the bound then holds at its corners), or... */
  halfExtents?: Vec3;
  /** ...the radius of the sphere that holds the body. */
  radius?: number;
  /** Largest distance any point of the body may move, in the world's length unit. */
  precision: number;
}

/** An entity type as a game describes it. */
export interface EntityTypeSpec {
  /** Fields in wire order. */
  fields: Readonly<Record<string, FieldSpec>>;
  rigidBody?: RigidBodySpec;
}

/** A world's description: entity types by name, and how many entity ids exist. */
export interface WorldSchemaSpec {
  types: Readonly<Record<string, EntityTypeSpec>>;
  /** Entity ids are 0..maxEntities − 1. 1..65536. */
  maxEntities: number;
}

/** One field once its bits are derived. Arrays are owned by the schema. */
export interface FieldSchema {
  readonly name: string;
  readonly kind: FieldKind;
  /** First code of the field in the entity's codes, and how many codes it has. */
  readonly codeOffset: number;
  readonly codeCount: number;
  /** First float of the field in the entity's values, and how many. */
  readonly valueOffset: number;
  readonly valueCount: number;
  /** Bits of each code (orientation: 2 for the index, then the component bits). */
  readonly bits: Uint8Array;
  /** Per code: the range its integer code spans (position, scale, float). */
  readonly min: Float64Array;
  readonly max: Float64Array;
  /** Enum values, when an enum. */
  readonly values?: readonly string[];
  /** The pose schema, when a pose. */
  readonly pose?: SnapshotSchema;
  /** Largest error of a decoded value: per axis (position, scale, float), radians (orientation), 0 (exact kinds), the pose bound. */
  readonly errorBound: number;
}

/** An entity type once its bits are derived. */
export interface EntityTypeSchema {
  readonly name: string;
  readonly index: number;
  readonly fields: readonly FieldSchema[];
  readonly codeCount: number;
  readonly valueCount: number;
  /** Codes of an entity whose values are all the defaults ({@link defaultValues}): what a spawn is coded against. */
  readonly defaultCodes: Int32Array;
  /** Identity orientation, zero position (clamped into range), scale 1, min of ints/floats, false, first enum value, the pose's default. */
  readonly defaultValues: Float32Array;
  /** With a rigid body: the bound of any point's error over its extent. */
  readonly rigidBodyErrorBound: number;
  /** The rigid body, when the type has one: its fields, extent (radius of the sphere holding it) and precision. */
  readonly rigidBody?: {
    readonly position: FieldSchema;
    readonly orientation: FieldSchema;
    readonly halfExtents?: Vec3;
    readonly radius: number;
    readonly precision: number;
  };
  /** Bits of a full state of this type (every field sent), for sizing. */
  readonly fullBits: number;
}

/** What both ends of a world stream share. Built by {@link buildWorldSchema}; treat as read-only. */
export interface WorldSchema {
  readonly types: readonly EntityTypeSchema[];
  readonly maxEntities: number;
  /** Bits of an entity id. */
  readonly idBits: number;
  /** Bits of a type index. */
  readonly typeBits: number;
  /** Largest codes per entity over every type. */
  readonly codeStride: number;
  /** Hash of the whole description; keys packet checks, so two different schemas never decode each other's packets. */
  readonly hash: number;
}

/** Most bits of one position, scale or float code. */
export const WORLD_COMPONENT_MAX_BITS = 30;

function bad(message: string): NetError {
  return new NetError(NET_ERROR.BAD_ARGUMENT, message);
}

/** Fewest bits whose step over `extent` keeps every value within `precision` (half a step). */
export function boundedBits(extent: number, precision: number, where: string): number {
  if (!(extent >= 0) || !Number.isFinite(extent)) throw bad(`${where}: range must be finite with max ≥ min`);
  if (!(precision > 0) || !Number.isFinite(precision))
    throw bad(`${where}: precision must be a number above 0, got ${precision}`);
  if (extent === 0) return 0;
  // Half a step ≤ precision: 2^n − 1 ≥ extent / (2 · precision).
  const bits = Math.max(1, Math.ceil(Math.log2(extent / (2 * precision) + 1)));
  if (bits > WORLD_COMPONENT_MAX_BITS)
    throw bad(
      `${where}: range ${extent} at precision ${precision} needs ${bits} bits (most ${WORLD_COMPONENT_MAX_BITS})`,
    );
  // log2 can land a hair low; check the step itself.
  return extent / (2 ** bits - 1) / 2 <= precision ? bits : bits + 1;
}

/** Largest error per axis of a value on `bits` bits over `extent` (half a step; 0 for no range). */
function stepError(extent: number, bits: number): number {
  return bits === 0 ? 0 : extent / (2 ** bits - 1) / 2;
}

/** Fewest smallest-three bits whose rotation bound is within `maxAngle` radians. */
function orientationBitsFor(maxAngle: number, where: string): number {
  if (!(maxAngle > 0)) throw bad(`${where}: maxAngle must be above 0, got ${maxAngle}`);
  for (let bits = SMALLEST_THREE_MIN_BITS; bits <= SMALLEST_THREE_MAX_BITS; bits++)
    if (smallestThreeMaxAngle(bits) <= maxAngle) return bits;
  throw bad(`${where}: no orientation width up to ${SMALLEST_THREE_MAX_BITS} bits reaches ${maxAngle} radians`);
}

interface PositionChoice {
  positionBits: number[];
  orientationBits: number;
  bound: number;
}

/**
 * Position and orientation bits of a rigid body: every point at distance ≤ r from the
 * position moves by at most |position error| + 2·sin(θ/2)·r. Tries every orientation width
 * and gives the position the rest of the budget; keeps the fewest total bits.
 */
export function rigidBodyBits(min: Vec3, max: Vec3, radius: number, precision: number, where: string): PositionChoice {
  if (!(radius >= 0) || !Number.isFinite(radius)) throw bad(`${where}: the body's extent must be finite and ≥ 0`);
  if (!(precision > 0)) throw bad(`${where}: precision must be above 0, got ${precision}`);
  let best: PositionChoice | undefined,
    bestBits = Infinity;
  for (let ob = SMALLEST_THREE_MIN_BITS; ob <= SMALLEST_THREE_MAX_BITS; ob++) {
    const theta = smallestThreeMaxAngle(ob);
    const rotational = 2 * Math.sin(Math.min(Math.PI, theta) / 2) * radius;
    const left = precision - rotational;
    if (!(left > 0)) continue;
    // The position error is a vector of per-axis half steps: spread |e| ≤ left evenly, e_k = left/√3.
    const perAxis = left / Math.sqrt(3);
    let bits = 3 * ob + 2,
      ok = true;
    const positionBits: number[] = [];
    for (let k = 0; k < 3; k++) {
      const extent = max[k] - min[k];
      if (extent > 0 && Math.log2(extent / (2 * perAxis) + 1) > WORLD_COMPONENT_MAX_BITS) {
        ok = false;
        break;
      }
      const pb = extent > 0 ? boundedBits(extent, perAxis, where) : 0;
      positionBits.push(pb);
      bits += pb;
    }
    if (!ok) continue;
    if (bits < bestBits) {
      let e2 = 0;
      for (let k = 0; k < 3; k++) e2 += stepError(max[k] - min[k], positionBits[k]) ** 2;
      best = { positionBits, orientationBits: ob, bound: Math.sqrt(e2) + rotational };
      bestBits = bits;
    }
  }
  if (!best) throw bad(`${where}: no widths reach a precision of ${precision} over a radius of ${radius}`);
  return best;
}

// FNV-1a over 32-bit words, for the schema hash (a compact key, not a checksum).
function hashWords(h: number, values: readonly number[]): number {
  for (const v of values) {
    h ^= v | 0;
    h = Math.imul(h, 0x01000193);
    h ^= Math.floor(v * 1e6) | 0;
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

function hashString(h: number, s: string): number {
  const codes: number[] = [];
  for (let i = 0; i < s.length; i++) codes.push(s.charCodeAt(i));
  return hashWords(h, [s.length, ...codes]);
}

/**
 * Derives every field's bit counts from its range and precision. Throws {@link NetError}
 * `BAD_ARGUMENT` naming the type and field for a bad description (empty or inverted ranges,
 * a precision the widths cannot reach, an unknown field in a rigid body, too many ids).
 */
export function buildWorldSchema(spec: WorldSchemaSpec): WorldSchema {
  const typeNames = Object.keys(spec.types);
  if (typeNames.length === 0) throw bad('a world schema needs at least one entity type');
  if (!Number.isInteger(spec.maxEntities) || spec.maxEntities < 1 || spec.maxEntities > 65536) {
    throw bad(`maxEntities must be a whole number in 1..65536, got ${spec.maxEntities}`);
  }
  let hash = hashWords(0x811c9dc5, [spec.maxEntities, typeNames.length]);
  const types: EntityTypeSchema[] = [];
  typeNames.forEach((typeName, typeIndex) => {
    const typeSpec = spec.types[typeName];
    const names = Object.keys(typeSpec.fields);
    if (names.length === 0) throw bad(`entity type "${typeName}" has no fields`);
    const rigid = typeSpec.rigidBody;
    let rigidChoice: PositionChoice | undefined;
    if (rigid) {
      const where = `entity type "${typeName}" rigidBody`;
      const p = typeSpec.fields[rigid.position],
        o = typeSpec.fields[rigid.orientation];
      if (p?.kind !== 'position') throw bad(`${where}: "${rigid.position}" is not a position field`);
      if (o?.kind !== 'orientation') throw bad(`${where}: "${rigid.orientation}" is not an orientation field`);
      const radius = rigid.halfExtents ? Math.hypot(...rigid.halfExtents) : rigid.radius;
      if (radius === undefined) throw bad(`${where}: needs halfExtents or radius`);
      rigidChoice = rigidBodyBits(p.min, p.max, radius, rigid.precision, where);
    }
    const fields: FieldSchema[] = [];
    let codeOffset = 0,
      valueOffset = 0,
      fullBits = 0;
    const defaults: number[] = [];
    for (const name of names) {
      const f = typeSpec.fields[name];
      const where = `entity type "${typeName}" field "${name}"`;
      let kind: FieldKind,
        bits: number[],
        min: number[] = [],
        max: number[] = [],
        valueCount: number,
        errorBound = 0;
      let values: readonly string[] | undefined, pose: SnapshotSchema | undefined;
      const fieldDefaults: number[] = [];
      switch (f.kind) {
        case 'position': {
          kind = FIELD_KIND.POSITION;
          for (let k = 0; k < 3; k++)
            if (!(f.max[k] >= f.min[k]) || !Number.isFinite(f.max[k] - f.min[k]))
              throw bad(`${where}: axis ${k} range ${f.min[k]}..${f.max[k]} is not a finite range`);
          min = [...f.min];
          max = [...f.max];
          if (rigid && rigid.position === name) bits = rigidChoice!.positionBits;
          else {
            if (f.precision === undefined) throw bad(`${where}: needs a precision (or a rigidBody naming it)`);
            bits = [0, 1, 2].map((k) => boundedBits(f.max[k] - f.min[k], f.precision!, where));
          }
          errorBound = Math.max(...[0, 1, 2].map((k) => stepError(f.max[k] - f.min[k], bits[k])));
          valueCount = 3;
          for (let k = 0; k < 3; k++) fieldDefaults.push(Math.min(Math.max(0, f.min[k]), f.max[k]));
          break;
        }
        case 'orientation': {
          kind = FIELD_KIND.ORIENTATION;
          let ob: number;
          if (rigid && rigid.orientation === name) ob = rigidChoice!.orientationBits;
          else if (f.bits !== undefined) {
            if (!Number.isInteger(f.bits) || f.bits < SMALLEST_THREE_MIN_BITS || f.bits > SMALLEST_THREE_MAX_BITS) {
              throw bad(
                `${where}: bits must be a whole number in ${SMALLEST_THREE_MIN_BITS}..${SMALLEST_THREE_MAX_BITS}, got ${f.bits}`,
              );
            }
            ob = f.bits;
          } else if (f.maxAngle !== undefined) ob = orientationBitsFor(f.maxAngle, where);
          else throw bad(`${where}: needs bits or maxAngle (or a rigidBody naming it)`);
          bits = [2, ob, ob, ob];
          min = [0, 0, 0, 0];
          max = [0, 0, 0, 0];
          errorBound = smallestThreeMaxAngle(ob);
          valueCount = 4;
          fieldDefaults.push(0, 0, 0, 1);
          break;
        }
        case 'scale': {
          kind = FIELD_KIND.SCALE;
          const n = f.uniform === false ? 3 : 1;
          if (!(f.max >= f.min) || !Number.isFinite(f.max - f.min))
            throw bad(`${where}: range ${f.min}..${f.max} is not a finite range`);
          const b = boundedBits(f.max - f.min, f.precision, where);
          bits = Array(n).fill(b);
          min = Array(n).fill(f.min);
          max = Array(n).fill(f.max);
          errorBound = stepError(f.max - f.min, b);
          valueCount = n;
          for (let k = 0; k < n; k++) fieldDefaults.push(Math.min(Math.max(1, f.min), f.max));
          break;
        }
        case 'int': {
          kind = FIELD_KIND.INT;
          if (!Number.isInteger(f.min) || !Number.isInteger(f.max) || f.max < f.min)
            throw bad(`${where}: range ${f.min}..${f.max} must be whole numbers with max ≥ min`);
          const b = bitsRequired(f.max - f.min);
          if (b > 32) throw bad(`${where}: range ${f.min}..${f.max} needs more than 32 bits`);
          bits = [b];
          min = [f.min];
          max = [f.max];
          valueCount = 1;
          fieldDefaults.push(f.min);
          break;
        }
        case 'float': {
          kind = FIELD_KIND.FLOAT;
          if (!(f.max >= f.min) || !Number.isFinite(f.max - f.min))
            throw bad(`${where}: range ${f.min}..${f.max} is not a finite range`);
          const b = boundedBits(f.max - f.min, f.precision, where);
          bits = [b];
          min = [f.min];
          max = [f.max];
          errorBound = stepError(f.max - f.min, b);
          valueCount = 1;
          fieldDefaults.push(f.min);
          break;
        }
        case 'bool':
          kind = FIELD_KIND.BOOL;
          bits = [1];
          min = [0];
          max = [1];
          valueCount = 1;
          fieldDefaults.push(0);
          break;
        case 'enum': {
          kind = FIELD_KIND.ENUM;
          if (f.values.length < 1) throw bad(`${where}: an enum needs at least one value`);
          values = [...f.values];
          bits = [bitsRequired(f.values.length - 1)];
          min = [0];
          max = [f.values.length - 1];
          valueCount = 1;
          fieldDefaults.push(0);
          break;
        }
        case 'pose': {
          kind = FIELD_KIND.POSE;
          pose = f.schema;
          bits = Array.from(pose.codeBits);
          min = Array(bits.length).fill(0);
          max = Array(bits.length).fill(0);
          errorBound = pose.errorBound;
          valueCount = pose.boneCount * 10;
          fieldDefaults.push(...pose.defaultPose);
          if (bits.length !== pose.boneCount * CODE_STRIDE)
            throw bad(`${where}: pose schema codes do not match its bones`);
          break;
        }
        default:
          throw bad(`${where}: unknown kind "${String((f as { kind: unknown }).kind)}"`);
      }
      fields.push({
        name,
        kind,
        codeOffset,
        codeCount: bits.length,
        valueOffset,
        valueCount,
        bits: Uint8Array.from(bits),
        min: Float64Array.from(min),
        max: Float64Array.from(max),
        errorBound,
        ...(values ? { values } : {}),
        ...(pose ? { pose } : {}),
      });
      hash = hashString(hash, name);
      hash = hashWords(hash, [kind, ...bits, ...min, ...max]);
      if (pose) hash = hashWords(hash, [pose.hash]);
      if (values) for (const v of values) hash = hashString(hash, v);
      codeOffset += bits.length;
      valueOffset += valueCount;
      fullBits += bits.reduce((a, b) => a + b, 0);
      defaults.push(...fieldDefaults);
    }
    hash = hashString(hash, typeName);
    const type: EntityTypeSchema = {
      name: typeName,
      index: typeIndex,
      fields,
      codeCount: codeOffset,
      valueCount: valueOffset,
      defaultCodes: new Int32Array(codeOffset),
      defaultValues: Float32Array.from(defaults),
      rigidBodyErrorBound: rigidChoice ? rigidChoice.bound : 0,
      fullBits,
      ...(rigid
        ? {
            rigidBody: {
              position: fields.find((f) => f.name === rigid.position)!,
              orientation: fields.find((f) => f.name === rigid.orientation)!,
              ...(rigid.halfExtents ? { halfExtents: rigid.halfExtents } : {}),
              radius: rigid.halfExtents ? Math.hypot(...rigid.halfExtents) : rigid.radius!,
              precision: rigid.precision,
            },
          }
        : {}),
    };
    quantizeEntity(type, type.defaultValues, 0, type.defaultCodes, 0);
    types.push(type);
  });
  return {
    types,
    maxEntities: spec.maxEntities,
    idBits: bitsRequired(spec.maxEntities - 1),
    typeBits: bitsRequired(types.length - 1),
    codeStride: Math.max(...types.map((t) => t.codeCount)),
    hash,
  };
}

/** The type named `name`; throws {@link NetError} `BAD_ARGUMENT` when the schema has none. */
export function entityType(schema: WorldSchema, name: string): EntityTypeSchema {
  const t = schema.types.find((x) => x.name === name);
  if (!t)
    throw bad(`the world schema has no entity type "${name}" (types: ${schema.types.map((x) => x.name).join(', ')})`);
  return t;
}

/** The field named `name` of `type`; throws {@link NetError} `BAD_ARGUMENT` when it has none. */
export function entityField(type: EntityTypeSchema, name: string): FieldSchema {
  const f = type.fields.find((x) => x.name === name);
  if (!f) throw bad(`entity type "${type.name}" has no field "${name}"`);
  return f;
}
