/**
 * The whole-pose decode loop of sampler.ts as one WebAssembly SIMD function, assembled here
 * from its opcodes when first needed (the source is this file: no binary is stored, fetched
 * or generated at build time). It performs sampler.ts's float64 operations in the same
 * order, two lanes at a time where the two lanes are independent (the two keys' slerp
 * weights, the quaternion product's xy and zw halves, the normalisation), without fused or
 * relaxed operations, so its poses are bit-identical to sampler.ts's
 * (test/runtime/wasm-kernel.test.ts holds the two to that on the fixtures). Used only
 * where the engine validates SIMD; sampler.ts keeps the TypeScript path otherwise.
 */
import { SEGMENT_SIZE, TRACK_KIND } from './format.js';
import { SERIES_LIMIT } from './interpolate.js';
import { TABLE } from './decode-tables.js';

/**
 * `decode(clip, k0, k1, alpha)`: decodes the pose a fraction `alpha` from key k0 to key k1
 * (k0 alone when they are equal) of the clip whose {@link KERNEL_CLIP} record is at byte
 * `clip` of the kernel's memory, into the clip's kernel pose. Four arguments, since each
 * costs a conversion on the way into WebAssembly; the kernel finds the segments, reads
 * their headers and records itself, so the sampler touches none of its typed arrays.
 */
export type KernelDecode = (clip: number, k0: number, k1: number, alpha: number) => void;

/**
 * A clip's kernel record, eight 32-bit words: byte addresses of segment 0's header record,
 * of the decode buffer, of the first rotation reference and of the kernel pose; bytes
 * between segment headers; the animated track count; the last segment's index.
 */
export const KERNEL_CLIP = { SEGMENTS: 0, TABLE: 1, REFS: 2, POSE: 3, STRIDE: 4, COUNT: 5, LAST_SEGMENT: 6, WORDS: 8 } as const;

/** log2 of {@link SEGMENT_SIZE}. */
const SEGMENT_SHIFT = Math.log2(SEGMENT_SIZE);

const I32 = 0x7f, F64 = 0x7c, V128 = 0x7b;

/** Unsigned LEB128. */
function uleb(n: number): number[] {
  const out: number[] = [];
  do {
    let b = n & 0x7f;
    n >>>= 7;
    if (n !== 0) b |= 0x80;
    out.push(b);
  } while (n !== 0);
  return out;
}

/** Signed LEB128 of a 32-bit integer. */
function sleb(n: number): number[] {
  const out: number[] = [];
  for (;;) {
    const b = n & 0x7f;
    n >>= 7;
    if ((n === 0 && (b & 0x40) === 0) || (n === -1 && (b & 0x40) !== 0)) { out.push(b); return out; }
    out.push(b | 0x80);
  }
}

function f64Bytes(x: number): number[] {
  return Array.from(new Uint8Array(Float64Array.of(x).buffer));
}

/** A WebAssembly section: id, byte size, contents. */
function section(id: number, contents: number[]): number[] {
  return [id, ...uleb(contents.length), ...contents];
}

function vector(items: number[][]): number[] {
  return [...uleb(items.length), ...items.flat()];
}

function name(s: string): number[] {
  const b = Array.from(new TextEncoder().encode(s));
  return [...uleb(b.length), ...b];
}

/** Emits one function body's instructions. */
class Body {
  readonly code: number[] = [];
  op(...bytes: number[]): this { this.code.push(...bytes); return this; }
  get(l: number): this { return this.op(0x20, ...uleb(l)); }
  set(l: number): this { return this.op(0x21, ...uleb(l)); }
  i32(n: number): this { return this.op(0x41, ...sleb(n)); }
  f64(x: number): this { return this.op(0x44, ...f64Bytes(x)); }
  /** A load or store opcode with a memarg (alignment hint 0: any address). */
  mem(opcode: number, offset = 0): this { return this.op(opcode, 0, ...uleb(offset)); }
  simd(opcode: number, ...imm: number[]): this { return this.op(0xfd, ...uleb(opcode), ...imm); }
}

// Opcodes used below.
const OP = {
  block: 0x02, loop: 0x03, if: 0x04, else: 0x05, end: 0x0b, br: 0x0c, brIf: 0x0d, call: 0x10, select: 0x1b, void: 0x40,
  i32Load: 0x28, i64Load: 0x29, f32Load: 0x2a, f64Load: 0x2b, i32Store: 0x36, f32Store: 0x38,
  i32Eqz: 0x45, i32Eq: 0x46, i32Ne: 0x47, i32GtU: 0x4b, i32LeU: 0x4d,
  f64Lt: 0x63, f64Gt: 0x64,
  i32Add: 0x6a, i32Sub: 0x6b, i32Mul: 0x6c, i32And: 0x71, i32Or: 0x72, i32Shl: 0x74, i32ShrU: 0x76,
  i64ShrU: 0x88,
  f64Sqrt: 0x9f, f64Add: 0xa0, f64Sub: 0xa1, f64Mul: 0xa2, f64Div: 0xa3,
  i32WrapI64: 0xa7, i64ExtendI32U: 0xad, f32DemoteF64: 0xb6, f64ConvertI32U: 0xb8, f64PromoteF32: 0xbb, f32ReinterpretI32: 0xbe,
} as const;
const SIMD = {
  v128Load: 0x00, v128Store: 0x0b, v128Const: 0x0c, shuffle: 0x0d, f64x2Splat: 0x14, f64x2ExtractLane: 0x21, f64x2ReplaceLane: 0x22,
  v128Xor: 0x51, v128Store64Lane: 0x5b, f32x4DemoteF64x2Zero: 0x5e,
  f64x2Add: 0xf0, f64x2Sub: 0xf1, f64x2Mul: 0xf2, f64x2Div: 0xf3,
} as const;

// Parameters, then locals, by index.
const CLIP = 0, KI0 = 1, KI1 = 2, ALPHA = 3;
const PARAMS = 4;
const I32_LOCALS = [
  'h0', 'h1', 'table', 'refs', 'out', 'count', 'single', 'e', 'r0', 'r1', 'k0', 'k1', 'bit0', 'bit1', 'meta', 'bits0', 'bits1', 'a0', 'a1', 'a2', 'at', 'o', 'rot',
] as const;
const F64_LOCALS = ['c0', 'c1', 'c2', 'g0', 'g1', 'g2', 't', 'd', 'x', 'y', 'dot', 'sign', 'u', 'wa', 'wb', 'len2'] as const;
const V128_LOCALS = ['xy0', 'zw0', 'xy1', 'zw1', 'xy', 'zw', 'p', 'q', 's', 'ab', 'rx', 'ry', 'rz', 'rw'] as const;
const L: Record<(typeof I32_LOCALS)[number] | (typeof F64_LOCALS)[number] | (typeof V128_LOCALS)[number], number> = {} as never;
[...I32_LOCALS, ...F64_LOCALS, ...V128_LOCALS].forEach((n, i) => { L[n] = PARAMS + i; });
const R0 = L.r0, R1 = L.r1, K0 = L.k0, K1 = L.k1, BIT0 = L.bit0, BIT1 = L.bit1;
const H0 = L.h0, H1 = L.h1, TABLE_AT = L.table, REFS = L.refs, OUT = L.out, COUNT = L.count, SINGLE = L.single;

const SIGN = 0x80;
/** v128 constant bytes: lane 0's sign bit (a) and lane 1's (b) set. */
function signMask(a: boolean, b: boolean): number[] {
  const bytes = new Array<number>(16).fill(0);
  if (a) bytes[7] = SIGN;
  if (b) bytes[15] = SIGN;
  return bytes;
}
/** Shuffle that swaps the two float64 lanes of its first operand. */
const SWAP = [8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7];

/** Pushes the `width`-bit field (width ≤ 31, or 32 when `raw`) at bit local `at` of the packed keys at byte `keys`. */
function field(b: Body, keys: number, width: number, raw: boolean): void {
  // The 64 bits from the field's first word, shifted: the same low 32 bits sampler.ts joins from two words.
  b.get(keys).get(L.at).i32(5).op(OP.i32ShrU).i32(2).op(OP.i32Shl).op(OP.i32Add).mem(OP.i64Load)
    .get(L.at).i32(31).op(OP.i32And).op(OP.i64ExtendI32U).op(OP.i64ShrU).op(OP.i32WrapI64);
  if (!raw) b.i32(1).get(width).op(OP.i32Shl).i32(1).op(OP.i32Sub).op(OP.i32And);
}

/** Reads one key's three stored components (record at `rec`, packed keys at `keys`, bit local `bit`) into c0..c2. */
function readKey(b: Body, rec: number, keys: number, bit: number, c: readonly number[]): void {
  const widths = [L.a0, L.a1, L.a2];
  // Quantised components unless the record's meta says raw float32 bits.
  b.get(rec).mem(OP.i32Load).i32(TABLE.RAW).op(OP.i32And).op(OP.i32Eqz).op(OP.if, OP.void);
  for (const raw of [false, true]) {
    if (raw) b.op(OP.else);
    b.get(bit).set(L.at);
    for (let i = 0; i < 3; i++) {
      if (i > 0) b.get(L.at).get(widths[i - 1]).op(OP.i32Add).set(L.at);
      if (raw) {
        field(b, keys, widths[i], true);
        b.op(OP.f32ReinterpretI32, OP.f64PromoteF32).set(c[i]);
      } else {
        // offset + q · step
        b.get(rec).mem(OP.f32Load, 8 + 8 * i).op(OP.f64PromoteF32);
        field(b, keys, widths[i], false);
        b.op(OP.f64ConvertI32U).get(rec).mem(OP.f32Load, 12 + 8 * i).op(OP.f64PromoteF32).op(OP.f64Mul).op(OP.f64Add).set(c[i]);
      }
    }
  }
  b.op(OP.end);
  // bit += a0 + a1 + a2
  b.get(bit).get(L.a0).op(OP.i32Add).get(L.a1).op(OP.i32Add).get(L.a2).op(OP.i32Add).set(bit);
}

/** Splits the component bytes of a bits word (local) into a0..a2. */
function widthsOf(b: Body, bits: number): void {
  b.get(bits).i32(0xff).op(OP.i32And).set(L.a0);
  b.get(bits).i32(8).op(OP.i32ShrU).i32(0xff).op(OP.i32And).set(L.a1);
  b.get(bits).i32(16).op(OP.i32ShrU).i32(0xff).op(OP.i32And).set(L.a2);
}

/**
 * Rebuilds the dropped component of stored (c0, c1, c2) (dropped index: top byte of local
 * `bits`) and writes the quaternion as two vectors (x, y) and (z, w) (emitRotation's first lines).
 */
function quaternion(b: Body, c: readonly number[], bits: number, xy: number, zw: number): void {
  const drop = (): Body => b.get(bits).i32(24).op(OP.i32ShrU);
  // t = 1 − c0² − c1² − c2², d = t > 0 ? √t : 0
  b.f64(1).get(c[0]).get(c[0]).op(OP.f64Mul).op(OP.f64Sub).get(c[1]).get(c[1]).op(OP.f64Mul).op(OP.f64Sub)
    .get(c[2]).get(c[2]).op(OP.f64Mul).op(OP.f64Sub).set(L.t);
  b.get(L.t).op(OP.f64Sqrt).f64(0).get(L.t).f64(0).op(OP.f64Gt).op(OP.select).set(L.d);
  // Deltas from the clip's reference rotation nearly always drop w: (c0, c1), (c2, d).
  drop().i32(3).op(OP.i32Eq).op(OP.if, OP.void);
  b.get(c[0]).simd(SIMD.f64x2Splat).get(c[1]).simd(SIMD.f64x2ReplaceLane, 1).set(xy);
  b.get(c[2]).simd(SIMD.f64x2Splat).get(L.d).simd(SIMD.f64x2ReplaceLane, 1).set(zw);
  b.op(OP.else);
  // x = drop == 0 ? d : c0
  b.get(L.d).get(c[0]); drop().op(OP.i32Eqz).op(OP.select).set(L.x);
  // y = drop == 0 ? c0 : drop == 1 ? d : c1
  b.get(c[0]).get(L.d).get(c[1]); drop().i32(1).op(OP.i32Eq).op(OP.select); drop().op(OP.i32Eqz).op(OP.select).set(L.y);
  b.get(L.x).simd(SIMD.f64x2Splat).get(L.y).simd(SIMD.f64x2ReplaceLane, 1).set(xy);
  // z = drop <= 1 ? c1 : drop == 2 ? d : c2;  w = drop == 3 ? d : c2
  b.get(c[1]).get(L.d).get(c[2]); drop().i32(2).op(OP.i32Eq).op(OP.select); drop().i32(1).op(OP.i32LeU).op(OP.select)
    .simd(SIMD.f64x2Splat);
  b.get(L.d).get(c[2]); drop().i32(3).op(OP.i32Eq).op(OP.select).simd(SIMD.f64x2ReplaceLane, 1).set(zw);
  b.op(OP.end);
}

/**
 * normalise(ref · q) for q = (xy, zw), written as float32 at local `o`; the reference is
 * read at `refs`, which then moves to the next one. Lane by lane the terms and their order
 * are sampler.ts's (a − b is a + (−b) in IEEE 754, negation exact).
 */
function productAndStore(b: Body, xy: number, zw: number): void {
  for (const [lane, local] of [[0, L.rx], [8, L.ry], [16, L.rz], [24, L.rw]] as const) {
    b.get(REFS).mem(OP.f64Load, lane).simd(SIMD.f64x2Splat).set(local);
  }
  // A = (w, −z), B = (−y, x)
  const A = (): Body => b.get(zw).get(zw).simd(SIMD.shuffle, ...SWAP).simd(SIMD.v128Const, ...signMask(false, true)).simd(SIMD.v128Xor);
  const B = (): Body => b.get(xy).get(xy).simd(SIMD.shuffle, ...SWAP).simd(SIMD.v128Const, ...signMask(true, false)).simd(SIMD.v128Xor);
  const mul = (r: number, v: () => Body): Body => { b.get(r); v(); return b.simd(SIMD.f64x2Mul); };
  // (px, py) = ((rw·(x, y) + rx·A) + ry·(z, w)) + rz·B
  mul(L.rw, () => b.get(xy)); mul(L.rx, A).simd(SIMD.f64x2Add); mul(L.ry, () => b.get(zw)).simd(SIMD.f64x2Add); mul(L.rz, B).simd(SIMD.f64x2Add).set(L.p);
  // (pz, pw) = ((rw·(z, w) − rx·B) − ry·(x, y)) + rz·A
  mul(L.rw, () => b.get(zw)); mul(L.rx, B).simd(SIMD.f64x2Sub); mul(L.ry, () => b.get(xy)).simd(SIMD.f64x2Sub); mul(L.rz, A).simd(SIMD.f64x2Add).set(L.q);
  // len2 = px² + py² + pz² + pw², left to right
  b.get(L.p).get(L.p).simd(SIMD.f64x2Mul).set(L.s);
  b.get(L.q).get(L.q).simd(SIMD.f64x2Mul).set(L.ab);
  b.get(L.s).simd(SIMD.f64x2ExtractLane, 0).get(L.s).simd(SIMD.f64x2ExtractLane, 1).op(OP.f64Add)
    .get(L.ab).simd(SIMD.f64x2ExtractLane, 0).op(OP.f64Add).get(L.ab).simd(SIMD.f64x2ExtractLane, 1).op(OP.f64Add).set(L.len2);
  b.get(L.len2).f64(0).op(OP.f64Gt).op(OP.if, OP.void);
  // inv = 1 / √len2; each component · inv, rounded to float32
  b.f64(1).get(L.len2).op(OP.f64Sqrt).op(OP.f64Div).simd(SIMD.f64x2Splat).set(L.s);
  b.get(L.o).get(L.p).get(L.s).simd(SIMD.f64x2Mul).simd(SIMD.f32x4DemoteF64x2Zero).simd(SIMD.v128Store64Lane, 0, 0, 0);
  b.get(L.o).get(L.q).get(L.s).simd(SIMD.f64x2Mul).simd(SIMD.f32x4DemoteF64x2Zero).simd(SIMD.v128Store64Lane, 0, 8, 0);
  b.op(OP.else);
  for (let i = 0; i < 4; i++) b.get(L.o).op(0x43, ...Array.from(new Uint8Array(Float32Array.of(i === 3 ? 1 : 0).buffer))).mem(OP.f32Store, 4 * i);
  b.op(OP.end);
}

/**
 * A deferred rotation's scratch entry: key 0's quaternion as (x, y), (z, w) float64 pairs
 * at 0 and 16 (the slerp writes its result there), key 1's at 32 and 48, the pose address,
 * the reference's address and whether key 0 alone counts.
 */
const ENTRY = { POSE: 64, REF: 68, SINGLE: 72 } as const;

/**
 * Defers a rotation whose keys' quaternions are `vectors` (key 0's (x, y), (z, w), then
 * key 1's when not `single`) to the later passes: the slerp weights and blend, then the
 * reference product and normalisation. Splitting each rotation's long chain of dependent
 * operations in three lets the processor overlap the chains of neighbouring tracks.
 */
function defer(b: Body, vectors: readonly number[], single: number): void {
  vectors.forEach((v, i) => b.get(L.e).get(v).simd(SIMD.v128Store, 0, 16 * i));
  b.get(L.e).get(L.o).mem(OP.i32Store, ENTRY.POSE).get(L.e).get(REFS).mem(OP.i32Store, ENTRY.REF).get(L.e).i32(single).mem(OP.i32Store, ENTRY.SINGLE);
  b.get(L.e).i32(SCRATCH_ENTRY).op(OP.i32Add).set(L.e).get(REFS).i32(32).op(OP.i32Add).set(REFS);
}

/** Stores the three f64 locals `v` at the pose offset as float32. */
function store3(b: Body, v: (i: number) => void): void {
  for (let i = 0; i < 3; i++) { b.get(L.o); v(i); b.op(OP.f32DemoteF64).mem(OP.f32Store, 4 * i); }
}

/** The decode function's body (see {@link KernelDecode}). */
function decodeBody(): number[] {
  const b = new Body();
  const c = [L.c0, L.c1, L.c2], g = [L.g0, L.g1, L.g2];
  const word = (w: number): Body => b.get(CLIP).mem(OP.i32Load, 4 * w);
  word(KERNEL_CLIP.TABLE).set(TABLE_AT); word(KERNEL_CLIP.REFS).set(REFS); word(KERNEL_CLIP.POSE).set(OUT); word(KERNEL_CLIP.COUNT).set(COUNT);
  b.get(KI0).get(KI1).op(OP.i32Eq).set(SINGLE);
  b.i32(0).set(L.e);
  for (const [ki, h, r, k, bit] of [[KI0, H0, R0, K0, BIT0], [KI1, H1, R1, K1, BIT1]] as const) {
    // segment s = min(key / SEGMENT_SIZE, last); h = its header; the key's index in it stays in `at`.
    b.get(ki).i32(SEGMENT_SHIFT).op(OP.i32ShrU).set(L.at);
    word(KERNEL_CLIP.LAST_SEGMENT).get(L.at).get(L.at); word(KERNEL_CLIP.LAST_SEGMENT).op(OP.i32GtU).op(OP.select).set(L.at);
    word(KERNEL_CLIP.SEGMENTS).get(L.at); word(KERNEL_CLIP.STRIDE).op(OP.i32Mul).op(OP.i32Add).set(h);
    b.get(ki).get(L.at).i32(SEGMENT_SHIFT).op(OP.i32Shl).op(OP.i32Sub).set(L.at);
    // Header [packed-key word, bits per key]: records follow it, keys are at table + 4 · word.
    b.get(h).i32(TABLE.RECORD * 4).op(OP.i32Add).set(r);
    b.get(TABLE_AT).get(h).mem(OP.i32Load).i32(2).op(OP.i32Shl).op(OP.i32Add).set(k);
    b.get(L.at).get(h).mem(OP.i32Load, 4).op(OP.i32Mul).set(bit);
  }
  b.op(OP.block, OP.void).get(COUNT).op(OP.i32Eqz).op(OP.brIf, 0).op(OP.loop, OP.void);
  b.get(R0).mem(OP.i32Load).set(L.meta).get(R0).mem(OP.i32Load, 4).set(L.bits0);
  widthsOf(b, L.bits0);
  readKey(b, R0, K0, BIT0, c);
  // o = out + 4 · pose offset; rot = kind is rotation
  b.get(OUT).get(L.meta).i32(TABLE.POSE_MASK).op(OP.i32And).i32(2).op(OP.i32Shl).op(OP.i32Add).set(L.o);
  b.get(L.meta).i32(TABLE.KIND_SHIFT).op(OP.i32ShrU).i32(3).op(OP.i32And).i32(TRACK_KIND.ROTATION).op(OP.i32Eq).set(L.rot);
  b.get(R1).mem(OP.i32Load, 4).set(L.bits1);
  widthsOf(b, L.bits1);
  b.op(OP.block, OP.void);
  // One key (or a STEP track): key 1's bits are skipped.
  b.get(SINGLE).get(L.meta).i32(TABLE.STEP).op(OP.i32And).op(OP.i32Or).op(OP.if, OP.void);
  b.get(BIT1).get(L.a0).op(OP.i32Add).get(L.a1).op(OP.i32Add).get(L.a2).op(OP.i32Add).set(BIT1);
  b.get(L.rot).op(OP.if, OP.void);
  quaternion(b, c, L.bits0, L.xy0, L.zw0);
  defer(b, [L.xy0, L.zw0], 1);
  b.op(OP.else);
  store3(b, (i) => b.get(c[i]));
  b.op(OP.end).op(OP.br, 1).op(OP.end);
  // Two keys.
  readKey(b, R1, K1, BIT1, g);
  b.get(L.rot).op(OP.if, OP.void);
  quaternion(b, c, L.bits0, L.xy0, L.zw0);
  quaternion(b, g, L.bits1, L.xy1, L.zw1);
  defer(b, [L.xy0, L.zw0, L.xy1, L.zw1], 0);
  b.op(OP.else);
  // c + (g − c) · alpha
  store3(b, (i) => b.get(c[i]).get(g[i]).get(c[i]).op(OP.f64Sub).get(ALPHA).op(OP.f64Mul).op(OP.f64Add));
  b.op(OP.end);
  b.op(OP.end); // block of the track
  b.get(R0).i32(TABLE.RECORD * 4).op(OP.i32Add).set(R0).get(R1).i32(TABLE.RECORD * 4).op(OP.i32Add).set(R1);
  b.get(COUNT).i32(1).op(OP.i32Sub).set(COUNT).get(COUNT).op(OP.brIf, 0);
  b.op(OP.end, OP.end);

  // Second pass: slerp of every deferred two-key rotation, written over its key 0.
  // (alpha, beta)
  b.get(ALPHA).simd(SIMD.f64x2Splat).f64(1).get(ALPHA).op(OP.f64Sub).simd(SIMD.f64x2ReplaceLane, 1).set(L.ab);
  b.i32(0).set(L.at).op(OP.block, OP.void).get(L.e).op(OP.i32Eqz).op(OP.brIf, 0).op(OP.loop, OP.void);
  b.get(L.at).mem(OP.i32Load, ENTRY.SINGLE).op(OP.i32Eqz).op(OP.if, OP.void);
  b.get(L.at).simd(SIMD.v128Load, 0, 0).set(L.xy0).get(L.at).simd(SIMD.v128Load, 0, 16).set(L.zw0);
  b.get(L.at).simd(SIMD.v128Load, 0, 32).set(L.xy1).get(L.at).simd(SIMD.v128Load, 0, 48).set(L.zw1);
  // dot = x0x1 + y0y1 + z0z1 + w0w1, left to right
  b.get(L.xy0).get(L.xy1).simd(SIMD.f64x2Mul).set(L.p).get(L.zw0).get(L.zw1).simd(SIMD.f64x2Mul).set(L.q);
  b.get(L.p).simd(SIMD.f64x2ExtractLane, 0).get(L.p).simd(SIMD.f64x2ExtractLane, 1).op(OP.f64Add)
    .get(L.q).simd(SIMD.f64x2ExtractLane, 0).op(OP.f64Add).get(L.q).simd(SIMD.f64x2ExtractLane, 1).op(OP.f64Add).set(L.dot);
  b.f64(-1).f64(1).get(L.dot).f64(0).op(OP.f64Lt).op(OP.select).set(L.sign);
  b.f64(1).get(L.dot).get(L.sign).op(OP.f64Mul).op(OP.f64Sub).set(L.u);
  b.get(L.u).f64(SERIES_LIMIT).op(OP.f64Lt).op(OP.if, OP.void);
  // theta2 = u · (2 + u · (1/3 + u · (4/45 + u / 35)))
  b.get(L.u).f64(2).get(L.u).f64(1 / 3).get(L.u).f64(4 / 45).get(L.u).f64(35).op(OP.f64Div).op(OP.f64Add).op(OP.f64Mul)
    .op(OP.f64Add).op(OP.f64Mul).op(OP.f64Add).op(OP.f64Mul).set(L.t);
  // (sa, sb) = (alpha², beta²) · theta2
  b.get(L.ab).get(L.ab).simd(SIMD.f64x2Mul).get(L.t).simd(SIMD.f64x2Splat).simd(SIMD.f64x2Mul).set(L.s);
  // (wb, wa) = (alpha, beta) · (1 − (s/6)(1 − (s/20)(1 − (s/42)(1 − s/72))))
  const one = (): Body => b.f64(1).simd(SIMD.f64x2Splat);
  const over = (k: number): Body => b.get(L.s).f64(k).simd(SIMD.f64x2Splat).simd(SIMD.f64x2Div);
  b.get(L.ab);
  one(); over(6); one(); over(20); one(); over(42); one(); over(72).simd(SIMD.f64x2Sub)
    .simd(SIMD.f64x2Mul).simd(SIMD.f64x2Sub).simd(SIMD.f64x2Mul).simd(SIMD.f64x2Sub).simd(SIMD.f64x2Mul).simd(SIMD.f64x2Sub)
    .simd(SIMD.f64x2Mul).set(L.s);
  b.get(L.s).simd(SIMD.f64x2ExtractLane, 1).set(L.wa).get(L.s).simd(SIMD.f64x2ExtractLane, 0).set(L.wb);
  b.op(OP.else);
  // theta = acos(u > 1 ? 0 : 1 − u); wa = sin(beta·theta), wb = sin(alpha·theta)
  b.f64(0).f64(1).get(L.u).op(OP.f64Sub).get(L.u).f64(1).op(OP.f64Gt).op(OP.select).op(OP.call, 0).set(L.t);
  b.f64(1).get(ALPHA).op(OP.f64Sub).get(L.t).op(OP.f64Mul).op(OP.call, 1).set(L.wa);
  b.get(ALPHA).get(L.t).op(OP.f64Mul).op(OP.call, 1).set(L.wb);
  b.op(OP.end);
  b.get(L.wb).get(L.sign).op(OP.f64Mul).set(L.wb);
  // q = q0 · wa + q1 · wb
  b.get(L.at).get(L.xy0).get(L.wa).simd(SIMD.f64x2Splat).simd(SIMD.f64x2Mul).get(L.xy1).get(L.wb).simd(SIMD.f64x2Splat).simd(SIMD.f64x2Mul).simd(SIMD.f64x2Add)
    .simd(SIMD.v128Store, 0, 0);
  b.get(L.at).get(L.zw0).get(L.wa).simd(SIMD.f64x2Splat).simd(SIMD.f64x2Mul).get(L.zw1).get(L.wb).simd(SIMD.f64x2Splat).simd(SIMD.f64x2Mul).simd(SIMD.f64x2Add)
    .simd(SIMD.v128Store, 0, 16);
  b.op(OP.end);
  b.get(L.at).i32(SCRATCH_ENTRY).op(OP.i32Add).set(L.at).get(L.at).get(L.e).op(OP.i32Ne).op(OP.brIf, 0);
  b.op(OP.end, OP.end);

  // Third pass: reference product and normalisation of every deferred rotation, in order.
  b.i32(0).set(L.at).op(OP.block, OP.void).get(L.e).op(OP.i32Eqz).op(OP.brIf, 0).op(OP.loop, OP.void);
  b.get(L.at).mem(OP.i32Load, ENTRY.POSE).set(L.o).get(L.at).mem(OP.i32Load, ENTRY.REF).set(REFS);
  b.get(L.at).simd(SIMD.v128Load, 0, 0).set(L.xy).get(L.at).simd(SIMD.v128Load, 0, 16).set(L.zw);
  productAndStore(b, L.xy, L.zw);
  b.get(L.at).i32(SCRATCH_ENTRY).op(OP.i32Add).set(L.at).get(L.at).get(L.e).op(OP.i32Ne).op(OP.brIf, 0);
  b.op(OP.end, OP.end, OP.end);
  const locals = [[...uleb(I32_LOCALS.length), I32], [...uleb(F64_LOCALS.length), F64], [...uleb(V128_LOCALS.length), V128]];
  const body = [...vector(locals), ...b.code];
  return [...uleb(body.length), ...body];
}

/**
 * The kernel module's bytes: imports env.acos and env.sin (Math's, so the rare large-angle
 * slerp is the TypeScript path's to the bit) and env.mem, exports `decode`.
 */
export function kernelBytes(): Uint8Array<ArrayBuffer> {
  const types = section(1, vector([[0x60, 1, F64, 1, F64], [0x60, ...vector([I32, I32, I32, F64].map((t) => [t])), 0]]));
  const imports = section(2, vector([
    [...name('env'), ...name('acos'), 0x00, 0],
    [...name('env'), ...name('sin'), 0x00, 0],
    [...name('env'), ...name('mem'), 0x02, 0x00, 1],
  ]));
  const functions = section(3, vector([[1]]));
  const exports = section(7, vector([[...name('decode'), 0x00, 2]]));
  const code = section(10, vector([decodeBody()]));
  return new Uint8Array([0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, ...types, ...imports, ...functions, ...exports, ...code]);
}

let compiled: WebAssembly.Module | null | undefined;

/** The compiled kernel, or null where WebAssembly or its SIMD is missing (then sampler.ts decodes). */
export function kernelModule(): WebAssembly.Module | null {
  if (compiled === undefined) {
    compiled = null;
    try {
      const bytes = kernelBytes();
      if (typeof WebAssembly === 'object' && WebAssembly.validate(bytes)) compiled = new WebAssembly.Module(bytes);
    } catch {
      compiled = null;
    }
  }
  return compiled;
}

/**
 * Bytes of the first kernel memory; each next one is twice the last, up to
 * {@link MAX_ARENA_BYTES}. Clips' decode buffers are placed in a memory until it is full. A
 * page that opens a few clips reserves little, and one that opens hundreds gets few
 * memories: decodes that go from clip to clip then share a scratch that stays in cache, and
 * touch fewer instances and pages (cold whole-pose decode of the larger corpus clips, 220
 * copies each, took about a quarter less time with 16 MiB memories than with 1 MiB ones).
 * Untouched pages cost no physical memory.
 */
const FIRST_ARENA_BYTES = 1 << 20;
const MAX_ARENA_BYTES = 1 << 24;
/** Bytes of one deferred rotation in the scratch at the start of every kernel memory. */
const SCRATCH_ENTRY = 80;
/** The scratch's bytes. */
const SCRATCH_BYTES = 1 << 16;
/** Most animated rotations a clip decoded by the kernel may have (the scratch holds one entry each). */
export const KERNEL_MAX_ROTATIONS = Math.floor(SCRATCH_BYTES / SCRATCH_ENTRY);
const PAGE = 65536;

interface Arena {
  readonly memory: WebAssembly.Memory;
  readonly decode: KernelDecode;
  used: number;
}
let arena: Arena | undefined;

/** A place for one clip's decode buffer inside a kernel memory. */
export interface KernelPlace {
  /** The memory's buffer (never grown, so views on it stay valid). */
  readonly buffer: ArrayBuffer;
  /** Byte offset of the place, a multiple of 16. */
  readonly byteOffset: number;
  readonly decode: KernelDecode;
}

/**
 * Reserves `bytes` bytes (zeroed) in a kernel memory, or returns undefined when there is no
 * kernel. Memories are 1 MiB, then 2, 4… up to 16 MiB (more for a larger clip) and never
 * grow, since growing would detach every view on them; a memory is freed when no clip
 * placed in it is referenced (space of a clip that is gone is not reused meanwhile).
 */
export function kernelPlace(bytes: number): KernelPlace | undefined {
  const module = kernelModule();
  if (!module) return undefined;
  const size = Math.ceil(bytes / 16) * 16;
  if (!arena || arena.used + size > arena.memory.buffer.byteLength) {
    const grown = arena === undefined ? FIRST_ARENA_BYTES : Math.min(MAX_ARENA_BYTES, 2 * (arena.memory.buffer.byteLength - SCRATCH_BYTES));
    // Short of memory for a larger one, the smallest that holds the clip.
    const next = newArena(module, Math.max(size, grown)) ?? newArena(module, Math.max(size, FIRST_ARENA_BYTES));
    // No memory at all (or a page policy refusing instances): this clip decodes in TypeScript.
    if (next === undefined) return undefined;
    arena = next;
  }
  const byteOffset = arena.used;
  arena.used += size;
  return { buffer: arena.memory.buffer, byteOffset, decode: arena.decode };
}

/** A kernel memory of `bytes` bytes after the scratch, with its instance; undefined when it cannot be made. */
function newArena(module: WebAssembly.Module, bytes: number): Arena | undefined {
  try {
    const memory = new WebAssembly.Memory({ initial: Math.ceil((SCRATCH_BYTES + bytes) / PAGE) });
    const instance = new WebAssembly.Instance(module, { env: { mem: memory, acos: Math.acos, sin: Math.sin } });
    return { memory, decode: instance.exports.decode as KernelDecode, used: SCRATCH_BYTES };
  } catch {
    return undefined;
  }
}
