/**
 * The TypeScript decoder: the pose decode of a clip the WebAssembly kernel does not decode
 * (no WebAssembly SIMD, `decoder: 'typescript'`, compact tables, or a clip too large for the
 * kernel's scratch). A {@link ClipSampler} holds one where it needs it. Its own module so a
 * page that only loads glTF assets carries it only if it asks for it (the glTF plugins
 * import clip.ts without it), while compressed-clip.ts imports it, so `CompressedClip.open`
 * is complete and synchronous.
 */
import { SEGMENT_SIZE, TRACK_KIND } from './format.js';
import { floatFromBits } from './bits.js';
import { ROTATION_ENTRY, ROTATION_SLOT, decodeRotations, lerp } from './interpolate.js';
import { writeSegmentRecords, type ClipTables } from './decode-tables.js';
import { TABLE } from './decode-layout.js';

const RECORD = TABLE.RECORD;

/**
 * One sampler's TypeScript decode over a clip's tables: its list of a pose's rotations and,
 * with compact tables, its two segment slots.
 */
export class TypeScriptDecoder {
  // The clip's tables and scalars, copied in so a decode reads this object and the clip's
  // buffer only (no chain of objects to miss in a cold cache).
  private readonly i32: Int32Array;
  private readonly f32: Float32Array;
  private readonly u32: Uint32Array;
  private readonly f64: Float64Array;
  private readonly t: ClipTables;
  private readonly count: number;
  private readonly segCount: number;
  private readonly refsAt: number;
  private readonly segAt: number;
  private readonly segStride: number;
  /** With compact tables: the segment whose records each of the two slots holds (-1: none). */
  private readonly slotSegment: Int32Array | undefined;
  /**
   * A pose's rotations, for interpolate.ts's decodeRotations: their keys' components and
   * their list.
   */
  private readonly rotationKeys: Float64Array;
  private readonly rotationList: Int32Array;

  /** Over the clip's tables `t` and its file's `bytes` (4-aligned: CompressedClip.open), where the packed keys are. */
  constructor(t: ClipTables, bytes: Uint8Array) {
    this.t = t;
    this.u32 = new Uint32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength >>> 2);
    if (t.compact) {
      // Compact tables: a buffer of its own holding the clip's base pose and references and
      // two segment slots; packed keys come straight from the file.
      const buffer = new ArrayBuffer(8 * Math.ceil((t.segAt + 2 * t.segStride) / 2));
      this.i32 = new Int32Array(buffer);
      this.f32 = new Float32Array(buffer);
      this.f64 = new Float64Array(buffer);
      this.i32.set(t.i32.subarray(0, t.segAt));
      this.slotSegment = Int32Array.of(-1, -1);
    } else {
      this.i32 = t.i32;
      this.f32 = t.f32;
      this.f64 = new Float64Array(t.i32.buffer, t.i32.byteOffset, t.i32.length >>> 1);
    }
    this.count = t.animated.count;
    this.segCount = t.segRates.length;
    this.refsAt = t.refsAt;
    this.segAt = t.segAt;
    this.segStride = t.segStride;
    const rotations = t.animated.rotations;
    this.rotationKeys = new Float64Array(ROTATION_SLOT * rotations);
    this.rotationList = new Int32Array(ROTATION_ENTRY * rotations);
  }

  /** Bytes held beyond the clip: the list of a pose's rotations (80 bytes a rotation) and, with compact tables, the two segment slots. */
  get byteLength(): number {
    const lists = this.rotationKeys.byteLength + this.rotationList.byteLength;
    return this.slotSegment ? lists + this.i32.byteLength + this.slotSegment.byteLength : lists;
  }

  /** With compact tables: builds segment `s`'s records in `slot` unless they are there; returns the slot's head. */
  private prepareSlot(s: number, slot: number): number {
    const head = this.segAt + slot * this.segStride;
    const held = this.slotSegment!;
    if (held[slot] !== s) {
      const src = this.t.compact!;
      writeSegmentRecords(src, s, this.i32, this.f32, head, src.segments.data[s] >>> 2);
      held[slot] = s;
    }
    return head;
  }

  /**
   * Decodes the animated tracks at keys (k0, k1) and `alpha` into `out`: a track of pose
   * offset o lands at out[offset + o]. Reads the
   * records of the keys' segments in order, then their packed keys (decode-tables.ts),
   * writes the other tracks and lists the rotations' keys for interpolate.ts's
   * decodeRotations, the arithmetic the compressor measures with.
   */
  decode(out: Float32Array, offset: number, k0: number, k1: number, alpha: number): void {
    const count = this.count;
    if (count === 0) return;
    const segCount = this.segCount;
    const single = k0 === k1;
    let s0 = (k0 / SEGMENT_SIZE) | 0;
    if (s0 >= segCount) s0 = segCount - 1;
    let s1 = (k1 / SEGMENT_SIZE) | 0;
    if (s1 >= segCount) s1 = segCount - 1;
    const i32 = this.i32,
      f32 = this.f32,
      f64 = this.f64,
      u32 = this.u32;
    const keys = this.rotationKeys,
      list = this.rotationList;
    let n = 0;
    let h0: number, h1: number;
    if (this.slotSegment === undefined) {
      h0 = this.segAt + s0 * this.segStride;
      h1 = this.segAt + s1 * this.segStride;
    } else {
      // Two slots, and the keys' segments never share one (wrapping pairs the last with the first).
      h0 = this.prepareSlot(s0, s0 & 1);
      h1 = s1 === s0 ? h0 : this.prepareSlot(s1, (s0 & 1) ^ 1);
    }
    // Packed keys: word index of the segment's first word, and the key's bit inside the segment.
    const d0 = i32[h0],
      d1 = i32[h1];
    let bit0 = (k0 - s0 * SEGMENT_SIZE) * i32[h0 + 1];
    let bit1 = (k1 - s1 * SEGMENT_SIZE) * i32[h1 + 1];
    let ref = this.refsAt;
    for (let j = 0, r0 = h0 + RECORD, r1 = h1 + RECORD; j < count; j++, r0 += RECORD, r1 += RECORD) {
      const meta = i32[r0],
        bits0 = i32[r0 + 1],
        bits1 = i32[r1 + 1];
      // Key 0's three stored components, then key 1's unless key 0 alone is read.
      const raw0 = (meta & TABLE.RAW) !== 0;
      const a0 = bits0 & 0xff,
        a1 = (bits0 >>> 8) & 0xff;
      const c0 = component(u32, d0, bit0, a0, f32, r0 + 2, raw0),
        c1 = component(u32, d0, bit0 + a0, a1, f32, r0 + 4, raw0),
        c2 = component(u32, d0, bit0 + a0 + a1, (bits0 >>> 16) & 0xff, f32, r0 + 6, raw0);
      bit0 += keyBits(bits0);
      const at = bit1;
      bit1 += keyBits(bits1);
      const o = (meta & TABLE.POSE_MASK) + offset;
      const rotation = ((meta >>> TABLE.KIND_SHIFT) & 3) === TRACK_KIND.ROTATION;
      if (single || (meta & TABLE.STEP) !== 0) {
        // A STEP track holds key 0 until the next sample; key 1's bits are skipped.
        if (rotation) {
          listRotation(keys, list, n++, c0, c1, c2, bits0 >>> 24, -1, ref, o);
          ref += 4;
        } else {
          out[o] = c0;
          out[o + 1] = c1;
          out[o + 2] = c2;
        }
        continue;
      }
      const raw1 = (i32[r1] & TABLE.RAW) !== 0;
      const e0 = bits1 & 0xff,
        e1 = (bits1 >>> 8) & 0xff;
      const g0 = component(u32, d1, at, e0, f32, r1 + 2, raw1),
        g1 = component(u32, d1, at + e0, e1, f32, r1 + 4, raw1),
        g2 = component(u32, d1, at + e0 + e1, (bits1 >>> 16) & 0xff, f32, r1 + 6, raw1);
      if (rotation) {
        const k = ROTATION_SLOT * n + 4;
        keys[k] = g0;
        keys[k + 1] = g1;
        keys[k + 2] = g2;
        listRotation(keys, list, n++, c0, c1, c2, bits0 >>> 24, bits1 >>> 24, ref, o);
        ref += 4;
      } else {
        out[o] = lerp(c0, g0, alpha);
        out[o + 1] = lerp(c1, g1, alpha);
        out[o + 2] = lerp(c2, g2, alpha);
      }
    }
    decodeRotations(keys, list, n, alpha, f64, out);
  }
}

/**
 * Lists rotation `n` for decodeRotations (interpolate.ts): key 0's components (`c0`, `c1`,
 * `c2`) into its slot of `keys`, and its entry: the keys' dropped components (`drop1` -1
 * for key 0 alone), its reference index and its pose offset.
 */
function listRotation(
  keys: Float64Array,
  list: Int32Array,
  n: number,
  c0: number,
  c1: number,
  c2: number,
  drop0: number,
  drop1: number,
  ref: number,
  o: number,
): void {
  const k = ROTATION_SLOT * n,
    e = ROTATION_ENTRY * n;
  keys[k] = c0;
  keys[k + 1] = c1;
  keys[k + 2] = c2;
  list[e] = drop0;
  list[e + 1] = drop1;
  list[e + 2] = ref;
  list[e + 3] = o;
}

/** Bits of a key's three stored components, from a track record's `bits` word (decode-layout.ts). */
function keyBits(bits: number): number {
  return (bits & 0xff) + ((bits >>> 8) & 0xff) + ((bits >>> 16) & 0xff);
}

/**
 * A stored component of `width` bits at bit `at` of the packed keys from word `d`:
 * offset + q · step with the record's offset and step at `f32[r]`, `f32[r + 1]`, or the
 * raw float. Two words cover any field of ≤ 32 bits; the second word's shift is split so a
 * field starting on a word boundary takes none of it.
 */
function component(
  u32: Uint32Array,
  d: number,
  at: number,
  width: number,
  f32: Float32Array,
  r: number,
  raw: boolean,
): number {
  const w = d + (at >>> 5),
    sh = at & 31;
  const q = (u32[w] >>> sh) | ((u32[w + 1] << 1) << (31 - sh));
  return raw ? floatFromBits(q >>> 0) : f32[r] + (q & ((1 << width) - 1)) * f32[r + 1];
}
