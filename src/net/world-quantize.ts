/**
 * Entity values ↔ codes for a {@link WorldSchema} type: each field's floats become the
 * integer codes its bit counts allow, and back. The arithmetic is the pose snapshots'
 * (`quantizeComponentCode`, smallest-three, `PoseQuantizer`), so a sender knows exactly
 * what its receivers decode.
 */
import { FIELD_KIND, type EntityTypeSchema } from './world-schema.js';
import { PoseQuantizer, dequantizeComponentCode, dequantizePose } from './quantize.js';
import { decodeSmallestThree, encodeSmallestThree } from './smallest-three.js';
import type { SnapshotSchema } from './schema.js';

// One pose quantiser (and its scratch) per pose schema, made on first use.
const poseQuantizers = new WeakMap<SnapshotSchema, PoseQuantizer>();
function poseQuantizer(schema: SnapshotSchema): PoseQuantizer {
  let q = poseQuantizers.get(schema);
  if (!q) {
    q = new PoseQuantizer(schema);
    poseQuantizers.set(schema, q);
  }
  return q;
}

/**
 * Writes the codes of an entity of `type` whose values are `values[vo..]` into
 * `outCodes[co..]`. Values out of range are clamped; a zero quaternion codes identity.
 * Allocates nothing (a pose field's views aside).
 */
export function quantizeEntity(
  type: EntityTypeSchema,
  values: Float32Array,
  vo: number,
  outCodes: Int32Array,
  co: number,
): void {
  for (const f of type.fields) {
    const v = vo + f.valueOffset,
      c = co + f.codeOffset;
    switch (f.kind) {
      case FIELD_KIND.POSITION:
      case FIELD_KIND.SCALE:
      case FIELD_KIND.FLOAT:
        for (let k = 0; k < f.codeCount; k++) {
          // quantizeComponentCode written out: this runs for every entity of every tick.
          const bits = f.bits[k];
          if (bits === 0) {
            outCodes[c + k] = 0;
            continue;
          }
          const steps = 2 ** bits - 1,
            min = f.min[k];
          const q = Math.round(((values[v + k] - min) / (f.max[k] - min)) * steps);
          outCodes[c + k] = q > 0 ? (q < steps ? q : steps) : 0;
        }
        break;
      case FIELD_KIND.ORIENTATION:
        encodeSmallestThree(values[v], values[v + 1], values[v + 2], values[v + 3], f.bits[1], outCodes, c);
        break;
      case FIELD_KIND.INT:
      case FIELD_KIND.ENUM: {
        const x = Math.round(values[v]);
        outCodes[c] = (x > f.max[0] ? f.max[0] : x >= f.min[0] ? x : f.min[0]) - f.min[0];
        break;
      }
      case FIELD_KIND.BOOL:
        outCodes[c] = values[v] !== 0 ? 1 : 0;
        break;
      case FIELD_KIND.POSE:
        poseQuantizer(f.pose!).quantize(values.subarray(v, v + f.valueCount), outCodes.subarray(c, c + f.codeCount));
        break;
    }
  }
}

/** The values `codes[co..]` stand for into `outValues[vo..]`. Codes must be in range. Allocates nothing (a pose field's views aside). */
export function dequantizeEntity(
  type: EntityTypeSchema,
  codes: Int32Array,
  co: number,
  outValues: Float32Array,
  vo: number,
): void {
  for (const f of type.fields) {
    const v = vo + f.valueOffset,
      c = co + f.codeOffset;
    switch (f.kind) {
      case FIELD_KIND.POSITION:
      case FIELD_KIND.SCALE:
      case FIELD_KIND.FLOAT:
        for (let k = 0; k < f.codeCount; k++)
          outValues[v + k] =
            f.bits[k] === 0 ? f.min[k] : dequantizeComponentCode(codes[c + k], f.min[k], f.max[k], f.bits[k]);
        break;
      case FIELD_KIND.ORIENTATION:
        decodeSmallestThree(codes, c, f.bits[1], outValues, v);
        break;
      case FIELD_KIND.INT:
      case FIELD_KIND.ENUM:
        outValues[v] = codes[c] + f.min[0];
        break;
      case FIELD_KIND.BOOL:
        outValues[v] = codes[c];
        break;
      case FIELD_KIND.POSE:
        dequantizePose(f.pose!, codes.subarray(c, c + f.codeCount), outValues.subarray(v, v + f.valueCount));
        break;
    }
  }
}
