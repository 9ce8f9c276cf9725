/**
 * World snapshots: the game's entity state ({@link WorldState}, floats), its quantised form
 * ({@link WorldSnapshot}, codes, made once per tick whatever the number of clients), and the
 * delta body that turns a snapshot into bits against a baseline snapshot (or against an
 * empty world). Only entities whose codes differ from the baseline are listed, so an entity
 * at rest costs nothing (docs/net.md, "World snapshots").
 */
import { NET_ERROR, NetError, type BitStream } from './bit-stream.js';
import { FIELD_KIND, entityField, entityType, type EntityTypeSchema, type WorldSchema } from './world-schema.js';
import { dequantizeEntity, quantizeEntity } from './world-quantize.js';
import { SnapshotCodec } from './snapshot.js';
import type { SnapshotSchema } from './schema.js';

/** No entity under an id. */
export const NO_ENTITY = -1;

/**
 * The entities of a world as floats, by id: what a game writes each tick on the server and
 * what a client reads. Values of an entity of type T are `T.valueCount` floats at
 * `valueOffset(id)` (field layout: {@link FieldSchema.valueOffset}). Allocates
 * `maxEntities × the largest type's values` floats once.
 */
export class WorldState {
  /** Type index per id, or {@link NO_ENTITY}. */
  readonly types: Int16Array;
  readonly values: Float32Array;
  readonly valueStride: number;

  constructor(readonly schema: WorldSchema) {
    this.types = new Int16Array(schema.maxEntities).fill(NO_ENTITY);
    this.valueStride = Math.max(...schema.types.map((t) => t.valueCount));
    this.values = new Float32Array(schema.maxEntities * this.valueStride);
  }

  /** Offset of entity `id`'s values in {@link values}. */
  valueOffset(id: number): number {
    return id * this.valueStride;
  }

  /**
   * Creates entity `id` of type `typeName` with the type's default values (identity
   * orientation, …), replacing whatever had the id. Throws {@link NetError} `BAD_ARGUMENT`
   * for an id out of range or an unknown type.
   */
  spawn(id: number, typeName: string): void {
    this.checkId(id);
    const type = entityType(this.schema, typeName);
    this.types[id] = type.index;
    this.values.set(type.defaultValues, id * this.valueStride);
  }

  /** Removes entity `id` (nothing when there is none). */
  despawn(id: number): void {
    this.checkId(id);
    this.types[id] = NO_ENTITY;
  }

  /** The type of entity `id`, or undefined. */
  typeOf(id: number): EntityTypeSchema | undefined {
    const t = this.types[id];
    return t >= 0 ? this.schema.types[t] : undefined;
  }

  /**
   * A view of field `name` of entity `id` (a fresh subarray: cache it rather than calling
   * this per value). Throws {@link NetError} `BAD_ARGUMENT` when there is no such entity or field.
   */
  field(id: number, name: string): Float32Array {
    const type = this.typeOf(id);
    if (!type) throw new NetError(NET_ERROR.BAD_ARGUMENT, `no entity ${id}`);
    const f = entityField(type, name);
    const o = id * this.valueStride + f.valueOffset;
    return this.values.subarray(o, o + f.valueCount);
  }

  /** Copies every entity of `from` (same schema). */
  copyFrom(from: WorldState): void {
    this.types.set(from.types);
    this.values.set(from.values);
  }

  private checkId(id: number): void {
    if (!Number.isInteger(id) || id < 0 || id >= this.schema.maxEntities) {
      throw new NetError(NET_ERROR.BAD_ARGUMENT, `entity id ${id} is outside 0..${this.schema.maxEntities - 1}`);
    }
  }
}

/** A world quantised: type per id and `codeStride` codes per id. */
export class WorldSnapshot {
  readonly types: Int16Array;
  readonly codes: Int32Array;
  /** Hash of the types and codes ({@link rehash}); keys the check of deltas against this snapshot. */
  hash = 0;

  constructor(readonly schema: WorldSchema) {
    this.types = new Int16Array(schema.maxEntities).fill(NO_ENTITY);
    this.codes = new Int32Array(schema.maxEntities * schema.codeStride);
  }

  /** Quantises every entity of `state` into this snapshot and rehashes. */
  quantize(state: WorldState): this {
    const stride = this.schema.codeStride;
    this.types.set(state.types);
    for (let id = 0; id < this.types.length; id++) {
      const t = this.types[id];
      if (t >= 0) quantizeEntity(this.schema.types[t], state.values, id * state.valueStride, this.codes, id * stride);
    }
    this.rehash();
    return this;
  }

  /** Writes the values every entity's codes stand for into `out` (same schema). */
  dequantize(out: WorldState): WorldState {
    const stride = this.schema.codeStride;
    out.types.set(this.types);
    for (let id = 0; id < this.types.length; id++) {
      const t = this.types[id];
      if (t >= 0) dequantizeEntity(this.schema.types[t], this.codes, id * stride, out.values, id * out.valueStride);
    }
    return out;
  }

  /** Copies `from` (same schema), hash included. */
  copyFrom(from: WorldSnapshot): void {
    this.types.set(from.types);
    this.codes.set(from.codes);
    this.hash = from.hash;
  }

  /** Empties the world. */
  clear(): void {
    this.types.fill(NO_ENTITY);
    this.rehash();
  }

  /** Recomputes {@link hash} (never 0: 0 keys absolute packets). */
  rehash(): void {
    const stride = this.schema.codeStride;
    let h = 0x811c9dc5;
    for (let id = 0; id < this.types.length; id++) {
      const t = this.types[id];
      if (t < 0) continue;
      h = Math.imul(h ^ id, 0x01000193);
      h = Math.imul(h ^ t, 0x01000193);
      const n = this.schema.types[t].codeCount,
        o = id * stride;
      for (let k = 0; k < n; k++) h = Math.imul(h ^ this.codes[o + k], 0x01000193);
    }
    this.hash = h >>> 0 || 1;
  }
}

/** Largest code on n bits, n = 0..32. */
const CODE_MAX = Float64Array.from({ length: 33 }, (_, n) => 2 ** n - 1);

/** Most exp-Golomb parameter: 4 bits. */
const MAX_GOLOMB_K = 15;

/** Bits of `u` (0..2^31) in exp-Golomb code of order k. */
function golombBits(u: number, k: number): number {
  const q = Math.floor(u / 2 ** k) + 1;
  return 2 * (31 - Math.clz32(q)) + 1 + k;
}

/**
 * An unsigned integer in exp-Golomb code of order k: q = ⌊u / 2^k⌋ + 1 as n zeros and its
 * n + 1 bits, then the k low bits of u. A reader throws {@link NetError} `BAD_VALUE` past 31 zeros.
 */
export function serializeGolomb(stream: BitStream, u: number, k: number): number {
  if (stream.isWriting) {
    const q = Math.floor(u / 2 ** k) + 1;
    const n = Math.floor(Math.log2(q));
    for (let i = 0; i < n; i++) stream.serializeBits(0, 1);
    stream.serializeBits(1, 1);
    if (n > 0) stream.serializeBits(q - 2 ** n, n);
    if (k > 0) stream.serializeBits(u % 2 ** k, k);
    return u;
  }
  const at = stream.bitOffset;
  let n = 0;
  while (stream.serializeBits(0, 1) === 0) {
    if (++n > 31) throw new NetError(NET_ERROR.BAD_VALUE, 'exp-Golomb code longer than 31 bits', at);
  }
  const q = 2 ** n + (n > 0 ? stream.serializeBits(0, n) : 0);
  return (q - 1) * 2 ** k + (k > 0 ? stream.serializeBits(0, k) : 0);
}

function zigzag(d: number): number {
  return d >= 0 ? 2 * d : -2 * d - 1;
}

function unzigzag(u: number): number {
  return u % 2 === 0 ? u / 2 : -(u + 1) / 2;
}

/** What one delta body held, for statistics. */
export interface WorldBodyStats {
  /** Entities listed: spawned, despawned or changed. */
  changed: number;
  spawned: number;
  despawned: number;
}

/**
 * Which codes share an exp-Golomb parameter: per type, one slot per position, scale,
 * float and int code and per orientation component (an orientation's index has none).
 * -1: the code is not delta coded (bools flip, enums and poses have their own coding).
 */
function golombSlots(type: EntityTypeSchema): { slotOfCode: Int16Array; slotCount: number } {
  const slotOfCode = new Int16Array(type.codeCount).fill(-1);
  let n = 0;
  for (const f of type.fields) {
    if (
      f.kind === FIELD_KIND.POSITION ||
      f.kind === FIELD_KIND.SCALE ||
      f.kind === FIELD_KIND.FLOAT ||
      f.kind === FIELD_KIND.INT
    ) {
      for (let k = 0; k < f.codeCount; k++) slotOfCode[f.codeOffset + k] = n++;
    } else if (f.kind === FIELD_KIND.ORIENTATION) {
      for (let k = 1; k < 4; k++) slotOfCode[f.codeOffset + k] = n++;
    }
  }
  return { slotOfCode, slotCount: n };
}

/**
 * Delta bodies of world snapshots for one schema. Scratch is allocated once; a body
 * allocates nothing. Serialized layout (docs/net.md): changed-entity count and id gaps,
 * per type present its exp-Golomb parameters, then per listed entity its despawn, spawn or
 * changed fields. Never reorder.
 */
export class WorldCodec {
  private readonly changedIds: Int32Array;
  private readonly slots: { slotOfCode: Int16Array; slotCount: number }[];
  private readonly slotBase: Int32Array;
  private readonly costs: Float64Array; // per slot, per k
  private readonly ks: Uint8Array;
  private readonly present: Uint8Array;
  private readonly poseCodecs = new Map<SnapshotSchema, SnapshotCodec>();
  private gapCosts = new Float64Array(MAX_GOLOMB_K + 1);
  /** What the last body held. */
  readonly stats: WorldBodyStats = { changed: 0, spawned: 0, despawned: 0 };

  constructor(readonly schema: WorldSchema) {
    this.changedIds = new Int32Array(schema.maxEntities);
    this.slots = schema.types.map(golombSlots);
    this.slotBase = new Int32Array(schema.types.length);
    let total = 0;
    this.slots.forEach((s, t) => {
      this.slotBase[t] = total;
      total += s.slotCount;
    });
    this.costs = new Float64Array(total * (MAX_GOLOMB_K + 1));
    this.ks = new Uint8Array(total);
    this.present = new Uint8Array(schema.types.length);
    for (const type of schema.types)
      for (const f of type.fields)
        if (f.pose && !this.poseCodecs.has(f.pose)) this.poseCodecs.set(f.pose, new SnapshotCodec(f.pose));
  }

  /**
   * Writes or reads the body of `current` against `baseline` (null: an empty world). On a
   * reader `current` receives the decoded snapshot (not rehashed). A reader throws
   * {@link NetError} `BAD_VALUE` for a code out of range, an id past the last, a despawn
   * of an entity the baseline lacks, an unknown type; `PACKET_TRUNCATED` when bits run out.
   */
  serialize(stream: BitStream, current: WorldSnapshot, baseline: WorldSnapshot | null): void {
    const schema = this.schema,
      stride = schema.codeStride;
    const cur = current.codes,
      curTypes = current.types;
    const base = baseline ? baseline.codes : null,
      baseTypes = baseline ? baseline.types : null;
    const ids = this.changedIds;
    const stats = this.stats;
    stats.changed = 0;
    stats.spawned = 0;
    stats.despawned = 0;
    let count = 0;
    const maxId = schema.maxEntities;
    if (stream.isWriting) count = this.collect(current, baseline);
    count = stream.serializeInt(count, 0, maxId);
    // Id gaps, exp-Golomb with a parameter chosen for this packet.
    let kGap = 0;
    if (stream.isWriting && count > 0) {
      const costs = this.gapCosts.fill(0);
      let prev = -1;
      for (let i = 0; i < count; i++) {
        const gap = ids[i] - prev - 1;
        for (let k = 0; k <= MAX_GOLOMB_K; k++) costs[k] += golombBits(gap, k);
        prev = ids[i];
      }
      for (let k = 1; k <= MAX_GOLOMB_K; k++) if (costs[k] < costs[kGap]) kGap = k;
    }
    if (count > 0) kGap = stream.serializeBits(kGap, 4);
    let prev = -1;
    for (let i = 0; i < count; i++) {
      const at = stream.bitOffset;
      const gap = serializeGolomb(stream, stream.isWriting ? ids[i] - prev - 1 : 0, kGap);
      const id = prev + 1 + gap;
      if (id >= maxId) throw new NetError(NET_ERROR.BAD_VALUE, `entity id ${id} is past the last (${maxId - 1})`, at);
      ids[i] = id;
      prev = id;
    }
    // Exp-Golomb parameters of each type that has an updated entity in the packet.
    for (let t = 0; t < schema.types.length; t++) {
      const present = stream.serializeBool(this.present[t] === 1);
      this.present[t] = present ? 1 : 0;
      if (!present) continue;
      const b = this.slotBase[t];
      for (let s = 0; s < this.slots[t].slotCount; s++) this.ks[b + s] = stream.serializeBits(this.ks[b + s], 4);
    }
    if (stream.isReading) {
      // Unlisted entities keep the baseline's state.
      if (baseline) {
        curTypes.set(baseTypes!);
        cur.set(base!);
      } else curTypes.fill(-1);
    }
    for (let i = 0; i < count; i++) {
      const id = ids[i],
        o = id * stride;
      const had = baseTypes ? baseTypes[id] : -1;
      let spawn = had < 0;
      if (!spawn) {
        const alive = stream.serializeBool(curTypes[id] >= 0);
        if (!alive) {
          curTypes[id] = -1;
          stats.despawned++;
          stats.changed++;
          continue;
        }
        spawn = stream.serializeBool(curTypes[id] !== had);
        if (stream.isReading && !spawn) curTypes[id] = had;
      }
      stats.changed++;
      if (spawn) {
        stats.spawned++;
        const at = stream.bitOffset;
        const t = stream.serializeInt(curTypes[id], 0, (1 << schema.typeBits) - 1);
        if (t >= schema.types.length)
          throw new NetError(NET_ERROR.BAD_VALUE, `entity type ${t} of ${schema.types.length}`, at);
        curTypes[id] = t;
        this.serializeFull(stream, schema.types[t], cur, o);
      } else {
        this.serializeUpdate(stream, schema.types[had], cur, base!, o, this.slotBase[had]);
      }
    }
  }

  /** Writer: the changed ids into changedIds, the types present and each slot's best parameter. Returns the count. */
  private collect(current: WorldSnapshot, baseline: WorldSnapshot | null): number {
    const schema = this.schema,
      stride = schema.codeStride;
    const cur = current.codes,
      curTypes = current.types;
    const base = baseline ? baseline.codes : null,
      baseTypes = baseline ? baseline.types : null;
    const ids = this.changedIds,
      costs = this.costs,
      K = MAX_GOLOMB_K + 1;
    this.present.fill(0);
    costs.fill(0);
    let count = 0;
    for (let id = 0; id < curTypes.length; id++) {
      const t = curTypes[id],
        had = baseTypes ? baseTypes[id] : -1;
      if (t < 0 && had < 0) continue;
      if (t !== had) {
        ids[count++] = id;
        continue;
      }
      const type = schema.types[t],
        n = type.codeCount,
        o = id * stride;
      let same = true;
      for (let k = 0; k < n; k++)
        if (cur[o + k] !== base![o + k]) {
          same = false;
          break;
        }
      if (same) continue;
      ids[count++] = id;
      this.present[t] = 1;
      const slotOfCode = this.slots[t].slotOfCode,
        sb = this.slotBase[t];
      for (const f of type.fields) {
        const fo = o + f.codeOffset;
        let changed = false;
        for (let k = 0; k < f.codeCount; k++)
          if (cur[fo + k] !== base![fo + k]) {
            changed = true;
            break;
          }
        if (!changed) continue;
        if (f.kind === FIELD_KIND.ORIENTATION && cur[fo] !== base![fo]) continue; // sent in full
        for (let k = 0; k < f.codeCount; k++) {
          const slot = slotOfCode[f.codeOffset + k];
          if (slot < 0) continue;
          // Exp-Golomb of order g: 2·⌊log2(⌊u / 2^g⌋ + 1)⌋ + 1 + g bits.
          const u = zigzag(cur[fo + k] - base![fo + k]),
            row = (sb + slot) * K;
          for (let g = 0; g < K; g++) costs[row + g] += 2 * (31 - Math.clz32(Math.floor(u / 2 ** g) + 1)) + 1 + g;
        }
      }
    }
    for (let s = 0; s < this.ks.length; s++) {
      let best = 0;
      for (let g = 1; g < K; g++) if (costs[s * K + g] < costs[s * K + best]) best = g;
      this.ks[s] = best;
    }
    return count;
  }

  private checkCode(value: number, bits: number, at: number): void {
    if (value < 0 || value > CODE_MAX[bits])
      throw new NetError(NET_ERROR.BAD_VALUE, `code ${value} does not fit ${bits} bits`, at);
  }

  /** A spawned entity: per field a "not default" bit and then the field in full (a pose: its absolute body). */
  private serializeFull(stream: BitStream, type: EntityTypeSchema, cur: Int32Array, o: number): void {
    const def = type.defaultCodes;
    for (const f of type.fields) {
      const fo = o + f.codeOffset;
      if (f.kind === FIELD_KIND.POSE) {
        this.poseCodecs.get(f.pose!)!.serializeAbsolute(stream, cur.subarray(fo, fo + f.codeCount));
        continue;
      }
      let differs = false;
      if (stream.isWriting)
        for (let k = 0; k < f.codeCount; k++) if (cur[fo + k] !== def[f.codeOffset + k]) differs = true;
      if (!stream.serializeBool(differs)) {
        for (let k = 0; k < f.codeCount; k++) cur[fo + k] = def[f.codeOffset + k];
        continue;
      }
      for (let k = 0; k < f.codeCount; k++) {
        const at = stream.bitOffset;
        cur[fo + k] = stream.serializeBits(cur[fo + k], f.bits[k]);
        if (f.kind === FIELD_KIND.ENUM || f.kind === FIELD_KIND.INT) {
          if (cur[fo + k] > f.max[k] - f.min[k])
            throw new NetError(NET_ERROR.BAD_VALUE, `field "${f.name}" code ${cur[fo + k]} is past its range`, at);
        }
      }
    }
  }

  /** A changed entity: per field a "changed" bit, then its deltas. */
  private serializeUpdate(
    stream: BitStream,
    type: EntityTypeSchema,
    cur: Int32Array,
    base: Int32Array,
    o: number,
    slotBase: number,
  ): void {
    const slotOfCode = this.slots[type.index].slotOfCode,
      ks = this.ks;
    for (const f of type.fields) {
      const fo = o + f.codeOffset;
      let changed = false;
      if (stream.isWriting)
        for (let k = 0; k < f.codeCount; k++)
          if (cur[fo + k] !== base[fo + k]) {
            changed = true;
            break;
          }
      changed = stream.serializeBool(changed);
      if (!changed) {
        if (stream.isReading) for (let k = 0; k < f.codeCount; k++) cur[fo + k] = base[fo + k];
        continue;
      }
      switch (f.kind) {
        case FIELD_KIND.BOOL:
          cur[fo] = 1 - base[fo]; // changed: flipped
          break;
        case FIELD_KIND.ENUM: {
          const at = stream.bitOffset;
          cur[fo] = stream.serializeBits(cur[fo], f.bits[0]);
          if (cur[fo] > f.max[0])
            throw new NetError(NET_ERROR.BAD_VALUE, `field "${f.name}" value ${cur[fo]} of ${f.max[0] + 1}`, at);
          break;
        }
        case FIELD_KIND.POSE:
          this.poseCodecs
            .get(f.pose!)!
            .serializeDelta(stream, cur.subarray(fo, fo + f.codeCount), base.subarray(fo, fo + f.codeCount));
          break;
        case FIELD_KIND.ORIENTATION: {
          const bits = f.bits[1];
          if (!stream.serializeBool(stream.isWriting && cur[fo] === base[fo])) {
            cur[fo] = stream.serializeBits(cur[fo], 2);
            for (let k = 1; k < 4; k++) cur[fo + k] = stream.serializeBits(cur[fo + k], bits);
            break;
          }
          cur[fo] = base[fo];
          for (let k = 1; k < 4; k++)
            this.serializeComponent(stream, cur, base, fo + k, bits, ks[slotBase + slotOfCode[f.codeOffset + k]]);
          break;
        }
        default: {
          for (let k = 0; k < f.codeCount; k++) {
            const bits = f.bits[k];
            this.serializeComponent(stream, cur, base, fo + k, bits, ks[slotBase + slotOfCode[f.codeOffset + k]]);
            if (stream.isReading && f.kind === FIELD_KIND.INT && cur[fo + k] > f.max[k] - f.min[k]) {
              throw new NetError(
                NET_ERROR.BAD_VALUE,
                `field "${f.name}" code ${cur[fo + k]} is past its range`,
                stream.bitOffset,
              );
            }
          }
        }
      }
    }
  }

  private serializeComponent(
    stream: BitStream,
    cur: Int32Array,
    base: Int32Array,
    i: number,
    bits: number,
    k: number,
  ): void {
    const at = stream.bitOffset;
    const u = serializeGolomb(stream, stream.isWriting ? zigzag(cur[i] - base[i]) : 0, k);
    if (stream.isReading) {
      cur[i] = base[i] + unzigzag(u);
      this.checkCode(cur[i], bits, at);
    }
  }
}
