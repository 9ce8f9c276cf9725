/**
 * The whole-pose decode loop of sampler.ts as one WebAssembly SIMD function (and, for
 * crowds, the same followed by crowd.ts's object-space walk: {@link KernelWorld}), assembled here
 * from its opcodes when first needed (the source is this file: no binary is stored, fetched
 * or generated at build time). It performs sampler.ts's operations in the same order, lane
 * by lane: a first pass reads every track's keys (float64, as sampler.ts; where lane rows
 * replace the rotations' records, {@link KERNEL_LANES}, it reads the other tracks' and a
 * lane pass the rotations', four at a time), then animated rotations are rebuilt, slerped,
 * multiplied by their references and normalised four at a time, one per float32 lane
 * (their arithmetic is float32 by definition, docs/format.md).
 * Nothing is fused or relaxed, so its poses are bit-identical to sampler.ts's
 * (test/runtime/wasm-kernel.test.ts holds the two to that on the fixtures). Used only
 * where the engine validates SIMD; sampler.ts keeps the TypeScript path otherwise.
 */
import { MAX_QUANTIZED_BITS, TRACK_KIND } from './format.js';
import { SERIES_LIMIT, SLERP_SERIES } from './interpolate.js';
import { TABLE } from './decode-tables.js';
import { POSE_STRIDE, identityFloat } from '../shared/pose-layout.js';

/**
 * `decode(clip, head, key, alpha)`: decodes the pose a fraction `alpha` from key 0 to key 1
 * of the clip whose {@link KERNEL_CLIP} record is at byte `clip` of the kernel's memory,
 * into the memory's {@link KERNEL_STAGING} pose. `head` is the byte address of key 0's
 * segment header (a multiple of 32) plus where key 1 is ({@link KERNEL_KEY1}), `key` the
 * byte address of key 0's first byte: the sampler computes both from the key indices and
 * the clip's fixed segment and key strides (decode-tables.ts), so a cold decode loads the
 * segment's lines as soon as it loads the record, not after a table entry. Four arguments,
 * since each costs a conversion on the way into WebAssembly.
 */
export type KernelDecode = (clip: number, head: number, key: number, alpha: number) => void;

/**
 * A clip's kernel record, thirteen 32-bit words: the bytes of each key (every key of the
 * clip's segments takes as many); the byte address of the clip's {@link KERNEL_QUAD} table
 * and of its pose windows; the bytes from a segment's header to its packed keys; the count
 * of records the first pass reads (every animated track's, or with lane rows the tracks'
 * that are not rotations); 1 when an animated rotation is a STEP track; the bytes of the
 * record, windows and quad table together (read as one run); the pose's bytes; the window
 * count; with lane rows ({@link KERNEL_LANES}), the rotation count and the bytes from a
 * segment's header to its first row (else 0, 0); the byte address of the first segment's
 * header and the segments' stride in bytes.
 *
 * The kernel writes poses into the {@link KERNEL_STAGING} pose its memory's clips share.
 * When the clip last written there is another one, it first fills the staging pose with
 * identity (the 20-float pattern of {@link identityFloat}) and stores the clip's windows:
 * 20 bytes each, a byte address then four floats, covering every float that is neither
 * animated nor identity. So a pose reads the clip's few constants, not a whole pose of its own.
 */
export const KERNEL_CLIP = {
  KEY_BYTES: 0, QUADS: 1, WINDOWS: 2, RECORDS_BYTES: 3, COUNT: 4, STEPS: 5, CLIP_BYTES: 6, POSE_BYTES: 7, WINDOW_COUNT: 8, LANE_ROTATIONS: 9, LANE_ROWS: 10,
  SEGMENTS: 11, SEGMENT_BYTES: 12, WORDS: 13,
} as const;

/**
 * Where key 1 is, in the low five bits of {@link KernelDecode}'s `head`: key 0 alone
 * (SAME); the next key of key 0's segment (NEXT); the first key of the next segment
 * (NEXT_SEGMENT); the clip's first key (FIRST, wrap looping from the last key).
 */
export const KERNEL_KEY1 = { SAME: 0, NEXT: 1, NEXT_SEGMENT: 2, FIRST: 3 } as const;

/** Bytes of a pose window: a byte address in the staging pose, then four floats stored there. */
export const KERNEL_WINDOW_BYTES = 20;

/**
 * The kernel decodes animated rotations four at a time, one per float32 lane: rotation i
 * (in track order) is lane i & 3 of quad i >> 2. What is fixed per quad is laid out at open
 * time in the clip's quad table, {@link KERNEL_QUAD.BYTES} bytes per quad: the four lanes'
 * references as float32 vectors (x, y, z, w at REFS + 16 · c), an all-ones 32-bit lane for
 * a STEP track at STEP, and the four lanes' pose addresses at POSE. The lanes past the last
 * rotation are dummies: reference zeros, written to {@link KERNEL_SINK}.
 */
export const KERNEL_QUAD = { REFS: 0, STEP: 64, POSE: 80, BYTES: 96 } as const;

/**
 * Where a clip's segments have lane rows (decode-tables.ts lays them out for every clip the
 * kernel decodes unless a segment stores a rotation's raw floats), its rotations are not in
 * the records: each segment has, after the records of the other tracks and their fields'
 * first bits in a key, one row of {@link KERNEL_LANES.BYTES} bytes per four rotations
 * (rotation i in lane i & 3 of row i >> 2), and its keys start on bytes. Per stored
 * component c, four lanes each: the dequantisation offsets (float32, OFFSET + 16 · c) and
 * steps (STEP + 16 · c), the byte of the key the field starts in (u16, BYTE + 8 · c), the
 * field's width w (u8, WIDTH + 8 · c) and 7 − its first bit within that byte (u8, WIDTH +
 * 8 · c + 4); then the dropped components (u8, DROP). So a lane's field is four bytes read
 * from its byte, times 2^(7 − first bit), shifted right by 7 and masked to w bits (w ≤
 * {@link MAX_QUANTIZED_BITS}, so it never passes bit 30): the lane pass reads four
 * rotations per vector.
 */
export const KERNEL_LANES = { OFFSET: 0, STEP: 48, BYTE: 96, WIDTH: 120, DROP: 144, BYTES: 160 } as const;

const I32 = 0x7f, I64 = 0x7e, F32 = 0x7d, F64 = 0x7c, V128 = 0x7b;

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

function f32Bytes(x: number): number[] {
  return Array.from(new Uint8Array(Float32Array.of(x).buffer));
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
  f32(x: number): this { return this.op(0x43, ...f32Bytes(x)); }
  /** A load or store opcode with a memarg (alignment hint 0: any address). */
  mem(opcode: number, offset = 0): this { return this.op(opcode, 0, ...uleb(offset)); }
  simd(opcode: number, ...imm: number[]): this { return this.op(0xfd, ...uleb(opcode), ...imm); }
}

// Opcodes used below.
const OP = {
  block: 0x02, loop: 0x03, if: 0x04, else: 0x05, end: 0x0b, br: 0x0c, brIf: 0x0d, call: 0x10, select: 0x1b, void: 0x40,
  i32Load: 0x28, i64Load: 0x29, i32Load16U: 0x2f, f32Load: 0x2a, f64Load: 0x2b, i32Store: 0x36, f32Store: 0x38, f64Store: 0x39,
  i32Eqz: 0x45, i32Eq: 0x46, i32Ne: 0x47, i32LtU: 0x49, i32GtU: 0x4b, i32GeS: 0x4e, i32GeU: 0x4f,
  f32Lt: 0x5d, f32Gt: 0x5e,
  i32Add: 0x6a, i32Sub: 0x6b, i32Mul: 0x6c, i32And: 0x71, i32Or: 0x72, i32Shl: 0x74, i32ShrU: 0x76,
  i64ShrU: 0x88,
  f32Sub: 0x93, f32Mul: 0x94, f64Add: 0xa0, f64Sub: 0xa1, f64Mul: 0xa2,
  i32WrapI64: 0xa7, i64ExtendI32U: 0xad, f32DemoteF64: 0xb6, f64ConvertI32U: 0xb8, f64PromoteF32: 0xbb, f32ReinterpretI32: 0xbe,
} as const;
const SIMD = {
  v128Load: 0x00, v128Store: 0x0b, v128Const: 0x0c, shuffle: 0x0d, f32x4Splat: 0x13, f32x4ExtractLane: 0x1f, f32x4ReplaceLane: 0x20,
  i32x4Eq: 0x37, f32x4Lt: 0x43, f32x4Gt: 0x44, v128Or: 0x50, v128Bitselect: 0x52, i32x4AllTrue: 0xa3,
  f32x4Sqrt: 0xe3, f32x4Add: 0xe4, f32x4Sub: 0xe5, f32x4Mul: 0xe6, f32x4Div: 0xe7,
  v128And: 0x4e, v128Load32Lane: 0x56, v128Load32Zero: 0x5c, v128Load64Zero: 0x5d, f32x4DemoteF64x2Zero: 0x5e, f64x2PromoteLowF32x4: 0x5f,
  i16x8ExtendLowU8x16: 0x89, i32x4ExtendLowU16x8: 0xa9, i32x4ExtendHighU16x8: 0xaa, i32x4Shl: 0xab, i32x4ShrU: 0xad, i32x4Add: 0xae, i32x4Sub: 0xb1,
  i32x4Mul: 0xb5, f64x2Add: 0xf0, f64x2Mul: 0xf2, i32x4TruncSatF32x4S: 0xf8, f64x2ConvertLowI32x4S: 0xfe,
} as const;

// Parameters, then locals, by index.
const CLIP = 0, HEAD = 1, KEY = 2, ALPHA = 3;
const PARAMS = 4;
const I32_LOCALS = [
  'h0', 'h1', 'key1', 'key1Is', 'keyBytes', 'recordsBytes', 'quads', 'count', 'single', 'e', 'r0', 'r1', 'k0', 'k1', 'bit0', 'bit1', 'meta', 'bits0', 'bits1', 'a0', 'a1', 'a2', 'sum',
  'at', 'o', 'rot', 'el', 'dropsW', 'shared', 'mask', 'quad', 'steps', 'touched', 'lanes', 'list', 'base0', 'base1', 'row',
] as const;
const I64_LOCALS = ['window', 'window1'] as const;
const F32_LOCALS = ['u', 't', 'alpha32', 'beta'] as const;
const F64_LOCALS = ['c0', 'c1', 'c2', 'g0', 'g1', 'g2', 'offset', 'step'] as const;
const V128_LOCALS = [
  'v0', 'v1', 'v2', 'vt', 'vd', 'drops', 'm0', 'm1', 'x0', 'y0', 'z0', 'w0', 'x1', 'y1', 'z1', 'w1', 'x', 'y', 'z', 'w',
  'al', 'be', 'aa', 'bb', 'dot', 'sign', 'vu', 'sa', 'sb', 'wa', 'wb', 'rx', 'ry', 'rz', 'rw', 'px', 'py', 'pz', 'pw', 'inv', 'pos', 'xy', 'zw', 'xy2', 'zw2',
  'one', 'zero', 'minusOne', 'two', 'third', 'fourOver45', 'over35', 's1', 's2', 's3', 's4', 'limit', 'drop0', 'drop1', 'drop2', 'drop3',
  'lmul', 'lmask', 'loffLo', 'loffHi', 'lstepLo', 'lstepHi', 'llo', 'lhi', 'lv', 'i127', 'i1',
] as const;
type LocalName = (typeof I32_LOCALS)[number] | (typeof I64_LOCALS)[number] | (typeof F32_LOCALS)[number] | (typeof F64_LOCALS)[number] | (typeof V128_LOCALS)[number];
const L: Record<LocalName, number> = {} as never;
[...I32_LOCALS, ...I64_LOCALS, ...F32_LOCALS, ...F64_LOCALS, ...V128_LOCALS].forEach((n, i) => { L[n] = PARAMS + i; });
const R0 = L.r0, R1 = L.r1, K0 = L.k0, K1 = L.k1, BIT0 = L.bit0, BIT1 = L.bit1;
const H0 = L.h0, H1 = L.h1, RECORDS_BYTES = L.recordsBytes, QUADS = L.quads, COUNT = L.count, SINGLE = L.single;

/** A v128 constant of four float32 lanes. */
function f32x4(a: number): number[] {
  const lane = f32Bytes(a);
  return [...lane, ...lane, ...lane, ...lane];
}
/** A v128 constant of four 32-bit integer lanes. */
function i32x4(n: number): number[] {
  return Array.from(new Uint8Array(Int32Array.of(n, n, n, n).buffer));
}

/**
 * Constant vectors, set in locals once per call: a v128.const inside the loops would be
 * materialised at every use. s1..s4 are the sine series' coefficients.
 */
const CONSTANTS = [
  [L.one, f32x4(1)], [L.zero, f32x4(0)], [L.minusOne, f32x4(-1)], [L.two, f32x4(2)],
  [L.third, f32x4(SLERP_SERIES.THETA[0])], [L.fourOver45, f32x4(SLERP_SERIES.THETA[1])], [L.over35, f32x4(SLERP_SERIES.THETA[2])],
  [L.s1, f32x4(SLERP_SERIES.SINE[0])], [L.s2, f32x4(SLERP_SERIES.SINE[1])], [L.s3, f32x4(SLERP_SERIES.SINE[2])], [L.s4, f32x4(SLERP_SERIES.SINE[3])],
  [L.limit, f32x4(SERIES_LIMIT)], [L.drop0, i32x4(0)], [L.drop1, i32x4(1)], [L.drop2, i32x4(2)], [L.drop3, i32x4(3)],
] as const;

/** Pushes the `width`-bit field (width ≤ 31, or 32 when `raw`) at bit local `at` of the packed keys at byte `keys`. */
function field(b: Body, keys: number, width: number, raw: boolean): void {
  // The 64 bits from the field's first word, shifted: the same low 32 bits sampler.ts joins from two words.
  b.get(keys).get(L.at).i32(5).op(OP.i32ShrU).i32(2).op(OP.i32Shl).op(OP.i32Add).mem(OP.i64Load)
    .get(L.at).i32(31).op(OP.i32And).op(OP.i64ExtendI32U).op(OP.i64ShrU).op(OP.i32WrapI64);
  if (!raw) b.i32(1).get(width).op(OP.i32Shl).i32(1).op(OP.i32Sub).op(OP.i32And);
}

/** Bits a 64-bit read from a field's first byte always holds (64 − 7). */
export const WINDOW_BITS = 57;

/**
 * Reads the three stored components of each key of `keys` ([bit local, window local, output
 * locals]) from one 64-bit window per key, at packed keys `keyWords`, for a record (`rec`)
 * with the WINDOW flag: each component's offset, step and mask are read once for all the
 * keys, each component is offset + q · step. Each key's bit local moves past its fields.
 */
function readWindows(b: Body, rec: number, keyWords: number, keys: readonly (readonly [number, number, readonly number[]])[]): void {
  const widths = [L.a0, L.a1, L.a2];
  for (const [bit, window] of keys) {
    b.get(keyWords).get(bit).i32(3).op(OP.i32ShrU).op(OP.i32Add).mem(OP.i64Load)
      .get(bit).i32(7).op(OP.i32And).op(OP.i64ExtendI32U).op(OP.i64ShrU).set(window);
  }
  for (let i = 0; i < 3; i++) {
    b.get(rec).mem(OP.f32Load, 8 + 8 * i).op(OP.f64PromoteF32).set(L.offset);
    b.get(rec).mem(OP.f32Load, 12 + 8 * i).op(OP.f64PromoteF32).set(L.step);
    // (1 << width) − 1 from the scratch's table: no variable shift.
    b.get(widths[i]).i32(2).op(OP.i32Shl).mem(OP.i32Load, KERNEL_MASKS).set(L.mask);
    for (const [, window, out] of keys) {
      b.get(L.offset).get(window).op(OP.i32WrapI64).get(L.mask).op(OP.i32And).op(OP.f64ConvertI32U).get(L.step).op(OP.f64Mul).op(OP.f64Add).set(out[i]);
      if (i < 2) b.get(window).get(widths[i]).op(OP.i64ExtendI32U).op(OP.i64ShrU).set(window);
    }
  }
  for (const [bit] of keys) b.get(bit).get(L.sum).op(OP.i32Add).set(bit);
}

/** Reads one key's three stored components (record at `rec`, packed keys at `keys`, bit local `bit`) into c0..c2. */
function readKey(b: Body, rec: number, keys: number, bit: number, c: readonly number[]): void {
  const widths = [L.a0, L.a1, L.a2];
  // Nearly always: one 64-bit window holds the three fields.
  b.get(rec).mem(OP.i32Load).i32(TABLE.WINDOW).op(OP.i32And).op(OP.if, OP.void);
  readWindows(b, rec, keys, [[bit, L.window, c]]);
  b.op(OP.else);
  // Field by field: raw float32 bits, or quantised components of more than WINDOW_BITS bits.
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
  b.get(bit).get(L.sum).op(OP.i32Add).set(bit);
  b.op(OP.end);
}

/** Splits the component bytes of a bits word (local) into a0..a2. */
function widthsOf(b: Body, bits: number): void {
  b.get(bits).i32(0xff).op(OP.i32And).set(L.a0);
  b.get(bits).i32(8).op(OP.i32ShrU).i32(0xff).op(OP.i32And).set(L.a1);
  b.get(bits).i32(16).op(OP.i32ShrU).i32(0xff).op(OP.i32And).set(L.a2);
  b.get(L.a0).get(L.a1).op(OP.i32Add).get(L.a2).op(OP.i32Add).set(L.sum);
}

/** Stores the three f64 values `v` pushes as float32 at the track's pose offset (o = out + 4 · pose offset). */
function store3(b: Body, v: (i: number) => void): void {
  b.get(L.meta).i32(TABLE.POSE_MASK).op(OP.i32And).i32(2).op(OP.i32Shl).i32(KERNEL_STAGING).op(OP.i32Add).set(L.o);
  for (let i = 0; i < 3; i++) { b.get(L.o); v(i); b.op(OP.f32DemoteF64).mem(OP.f32Store, 4 * i); }
}

/**
 * The scratch's eleven planes of {@link PLANE_BYTES} bytes, filled by the first pass or the
 * lane pass: rotation i's stored components of key 0 at byte 4 · i of planes C..C + 2, of
 * key 1 at G..G + 2 (key 0's again where key 0 alone counts), each key's dropped component
 * at DROP0 / DROP1. So a quad's four lanes of each are one 16-byte vector, at 16 · quad. The
 * steps after overwrite them with the rebuilt quaternions, key 0's x, y, z, w in planes
 * Q0..Q0 + 3, key 1's in Q1..Q1 + 3; the slerp's loops pass sign, u and theta², then the
 * two weights, in planes SIGN..SIGN + 2.
 */
const PLANE = { C: 0, G: 3, DROP0: 6, DROP1: 7, Q0: 0, Q1: 4, SIGN: 8 } as const;
/** Byte offset of plane `p` of {@link PLANE}. */
const plane = (p: number): number => p * PLANE_BYTES;

/** Parks the rotation just read, rounded to float32, at rotation address `e` of the planes (key 1 = `g` with bits `bits1`); e moves on. */
function park(b: Body, g: readonly number[], bits1: number): void {
  const c = [L.c0, L.c1, L.c2];
  for (let i = 0; i < 3; i++) b.get(L.e).get(c[i]).op(OP.f32DemoteF64).mem(OP.f32Store, plane(PLANE.C + i));
  for (let i = 0; i < 3; i++) b.get(L.e).get(g[i]).op(OP.f32DemoteF64).mem(OP.f32Store, plane(PLANE.G + i));
  // The dropped components, read only when a segment's rotations do not all drop w.
  b.get(L.dropsW).op(OP.i32Eqz).op(OP.if, OP.void);
  b.get(L.e).get(L.bits0).i32(24).op(OP.i32ShrU).mem(OP.i32Store, plane(PLANE.DROP0));
  b.get(L.e).get(bits1).i32(24).op(OP.i32ShrU).mem(OP.i32Store, plane(PLANE.DROP1));
  b.op(OP.end);
  b.get(L.e).i32(4).op(OP.i32Add).set(L.e);
}

/** Emits `body` once per quad, local `at` at its vectors' offset in the planes (16 · quad) and `quad` at its row of the quad table. */
function eachQuad(b: Body, body: () => void): void {
  b.i32(0).set(L.at).get(QUADS).set(L.quad).op(OP.block, OP.void).get(L.e).op(OP.i32Eqz).op(OP.brIf, 0).op(OP.loop, OP.void);
  body();
  b.get(L.quad).i32(KERNEL_QUAD.BYTES).op(OP.i32Add).set(L.quad);
  b.get(L.at).i32(16).op(OP.i32Add).set(L.at).get(L.at).get(L.e).op(OP.i32Ne).op(OP.brIf, 0);
  b.op(OP.end, OP.end);
}

/** Pushes `a` op `c` of two v128 locals (a two-operand SIMD instruction). */
function vop(b: Body, a: number, op: number, c: number): Body {
  return b.get(a).get(c).simd(op);
}

/**
 * Rebuilds the dropped component of the stored components in planes `first`..`first` + 2
 * (dropped indices in plane `drop`) of the quad at `at`, lane by lane emitRotation's first
 * lines, into `out` (x, y, z, w).
 */
function rebuild(b: Body, first: number, drop: number, out: readonly number[]): void {
  const v = [L.v0, L.v1, L.v2];
  for (let i = 0; i < 3; i++) b.get(L.at).simd(SIMD.v128Load, 0, ...uleb(plane(first + i))).set(v[i]);
  // t = 1 − c0² − c1² − c2², left to right; d = t > 0 ? √t : 0
  b.get(L.one);
  for (let i = 0; i < 3; i++) vop(b, v[i], SIMD.f32x4Mul, v[i]).simd(SIMD.f32x4Sub);
  b.set(L.vt);
  b.get(L.vt).simd(SIMD.f32x4Sqrt).get(L.zero).get(L.vt).get(L.zero).simd(SIMD.f32x4Gt)
    .simd(SIMD.v128Bitselect).set(L.vd);
  const [x, y, z, w] = out;
  // Both keys' segments drop w from every rotation (nearly always): (c0, c1, c2, d).
  b.get(L.dropsW).op(OP.if, OP.void);
  for (const [from, to] of [[v[0], x], [v[1], y], [v[2], z], [L.vd, w]]) b.get(from).set(to);
  b.op(OP.else);
  b.get(L.at).simd(SIMD.v128Load, 0, ...uleb(plane(drop))).set(L.drops);
  const eq = (k: number): Body => b.get(L.drops).get([L.drop0, L.drop1, L.drop2, L.drop3][k]).simd(SIMD.i32x4Eq);
  eq(0).set(L.m0); eq(1).set(L.m1);
  // x = drop == 0 ? d : c0
  b.get(L.vd).get(v[0]).get(L.m0).simd(SIMD.v128Bitselect).set(x);
  // y = drop == 0 ? c0 : drop == 1 ? d : c1
  b.get(v[0]).get(L.vd).get(v[1]).get(L.m1).simd(SIMD.v128Bitselect).get(L.m0).simd(SIMD.v128Bitselect).set(y);
  // z = drop <= 1 ? c1 : drop == 2 ? d : c2
  b.get(v[1]).get(L.vd).get(v[2]); eq(2).simd(SIMD.v128Bitselect).get(L.m0).get(L.m1).simd(SIMD.v128Or).simd(SIMD.v128Bitselect).set(z);
  // w = drop == 3 ? d : c2
  b.get(L.vd).get(v[2]); eq(3).simd(SIMD.v128Bitselect).set(w);
  b.op(OP.end);
}

/**
 * The first half of the slerp weights of the four lanes (slerpWeights lane by lane), from
 * dot in `dot`: sign, u = 1 − dot · sign into `vu`, and theta² by its series into `vt`.
 */
function theta(b: Body): void {
  // sign = dot < 0 ? −1 : 1; u = 1 − dot · sign
  b.get(L.minusOne).get(L.one).get(L.dot).get(L.zero).simd(SIMD.f32x4Lt).simd(SIMD.v128Bitselect).set(L.sign);
  b.get(L.one); vop(b, L.dot, SIMD.f32x4Mul, L.sign).simd(SIMD.f32x4Sub).set(L.vu);
  // theta2 = u · (2 + u · (1/3 + u · (4/45 + u · 1/35)))
  b.get(L.vu).get(L.two).get(L.vu).get(L.third).get(L.vu).get(L.fourOver45).get(L.vu).get(L.over35);
  b.simd(SIMD.f32x4Mul).simd(SIMD.f32x4Add).simd(SIMD.f32x4Mul).simd(SIMD.f32x4Add).simd(SIMD.f32x4Mul).simd(SIMD.f32x4Add).simd(SIMD.f32x4Mul)
    .set(L.vt);
}

/**
 * The second half: the slerp weights into wa, wb from `sign`, `vu` and theta² in `vt`: the
 * series on the common path, Math.acos and Math.sin (imported, on the float32 numbers,
 * results rounded to float32) for a lane past SERIES_LIMIT.
 */
function weights(b: Body): void {
  // sa = alpha² · theta2, sb = beta² · theta2
  vop(b, L.aa, SIMD.f32x4Mul, L.vt).set(L.sa);
  vop(b, L.bb, SIMD.f32x4Mul, L.vt).set(L.sb);
  // w = x · (1 + s · (−1/6 + s · (1/120 + s · (−1/5040 + s · 1/362880))))
  for (const [x, s, w] of [[L.al, L.sa, L.wb], [L.be, L.sb, L.wa]] as const) {
    b.get(x);
    for (const k of [L.one, L.s1, L.s2, L.s3]) b.get(k).get(s);
    b.get(L.s4);
    for (let i = 0; i < 4; i++) b.simd(SIMD.f32x4Mul).simd(SIMD.f32x4Add);
    b.simd(SIMD.f32x4Mul).set(w);
  }
  // A lane with u ≥ SERIES_LIMIT (or NaN): theta = acos(u > 1 ? 0 : 1 − u), wa = sin(beta·theta), wb = sin(alpha·theta).
  b.get(L.vu).get(L.limit).simd(SIMD.f32x4Lt).simd(SIMD.i32x4AllTrue).op(OP.i32Eqz).op(OP.if, OP.void);
  for (const lane of [0, 1, 2, 3]) {
    b.get(L.vu).simd(SIMD.f32x4ExtractLane, lane).set(L.u);
    b.get(L.u).f32(SERIES_LIMIT).op(OP.f32Lt).op(OP.i32Eqz).op(OP.if, OP.void);
    b.f32(0).f32(1).get(L.u).op(OP.f32Sub).get(L.u).f32(1).op(OP.f32Gt).op(OP.select)
      .op(OP.f64PromoteF32).op(OP.call, 0).op(OP.f32DemoteF64).set(L.t);
    b.get(L.wa).get(L.beta).get(L.t).op(OP.f32Mul).op(OP.f64PromoteF32).op(OP.call, 1).op(OP.f32DemoteF64)
      .simd(SIMD.f32x4ReplaceLane, lane).set(L.wa);
    b.get(L.wb).get(L.alpha32).get(L.t).op(OP.f32Mul).op(OP.f64PromoteF32).op(OP.call, 1).op(OP.f32DemoteF64)
      .simd(SIMD.f32x4ReplaceLane, lane).set(L.wb);
    b.op(OP.end);
  }
  b.op(OP.end);
  vop(b, L.wb, SIMD.f32x4Mul, L.sign).set(L.wb);
}

/**
 * normalise(ref · q) of the four lanes for q = (x, y, z, w), written at each lane's pose
 * address. Lane by lane the terms and their order are sampler.ts's.
 */
function productAndStore(b: Body): void {
  // The four lanes' references, (rx, ry, rz, rw).
  for (const [i, r] of [L.rx, L.ry, L.rz, L.rw].entries()) {
    b.get(L.quad).simd(SIMD.v128Load, 0, ...uleb(KERNEL_QUAD.REFS + 16 * i)).set(r);
  }
  const { x, y, z, w, rx, ry, rz, rw } = L;
  const term = (r: number, q: number): Body => vop(b, r, SIMD.f32x4Mul, q);
  const add = SIMD.f32x4Add, sub = SIMD.f32x4Sub;
  // px = rw·x + rx·w + ry·z − rz·y, and so on, left to right.
  const rows: [number, number, number, number, number, number, number][] = [
    [x, w, add, z, add, y, sub],
    [y, z, sub, w, add, x, add],
    [z, y, add, x, sub, w, add],
    [w, x, sub, y, sub, z, sub],
  ];
  const p = [L.px, L.py, L.pz, L.pw];
  rows.forEach(([q0, q1, op1, q2, op2, q3, op3], i) => {
    term(rw, q0); term(rx, q1).simd(op1); term(ry, q2).simd(op2); term(rz, q3).simd(op3).set(p[i]);
  });
  // len2 = px² + py² + pz² + pw², left to right; inv = 1 / √len2; a lane with len2 ≤ 0 writes identity.
  vop(b, L.px, SIMD.f32x4Mul, L.px);
  for (const q of [L.py, L.pz, L.pw]) vop(b, q, SIMD.f32x4Mul, q).simd(SIMD.f32x4Add);
  b.set(L.vt);
  b.get(L.one).get(L.vt).simd(SIMD.f32x4Sqrt).simd(SIMD.f32x4Div).set(L.inv);
  for (const q of p) vop(b, q, SIMD.f32x4Mul, L.inv).set(q);
  // The selects of identity only when a lane's len2 is not > 0 (a zero or NaN blend).
  b.get(L.vt).get(L.zero).simd(SIMD.f32x4Gt).set(L.pos);
  b.get(L.pos).simd(SIMD.i32x4AllTrue).op(OP.i32Eqz).op(OP.if, OP.void);
  for (const [q, otherwise] of [[L.px, L.zero], [L.py, L.zero], [L.pz, L.zero], [L.pw, L.one]]) {
    b.get(q).get(otherwise).get(L.pos).simd(SIMD.v128Bitselect).set(q);
  }
  b.op(OP.end);
  // Transposed to each lane's (x, y, z, w): (x0, y0, x1, y1), (x2, y2, x3, y3) and the same
  // of z, w, then halves of those.
  const lanes = (i: number, j: number): number[] => [4 * i, 4 * i + 1, 4 * i + 2, 4 * i + 3, 16 + 4 * i, 17 + 4 * i, 18 + 4 * i, 19 + 4 * i,
    4 * j, 4 * j + 1, 4 * j + 2, 4 * j + 3, 16 + 4 * j, 17 + 4 * j, 18 + 4 * j, 19 + 4 * j];
  b.get(L.px).get(L.py).simd(SIMD.shuffle, ...lanes(0, 1)).set(L.xy);
  b.get(L.px).get(L.py).simd(SIMD.shuffle, ...lanes(2, 3)).set(L.xy2);
  b.get(L.pz).get(L.pw).simd(SIMD.shuffle, ...lanes(0, 1)).set(L.zw);
  b.get(L.pz).get(L.pw).simd(SIMD.shuffle, ...lanes(2, 3)).set(L.zw2);
  const half = (h: number): number[] => Array.from({ length: 8 }, (_, i) => 8 * h + i);
  for (const lane of [0, 1, 2, 3]) {
    const [xy, zw] = lane < 2 ? [L.xy, L.zw] : [L.xy2, L.zw2];
    b.get(L.quad).mem(OP.i32Load, KERNEL_QUAD.POSE + 4 * lane);
    b.get(xy).get(zw).simd(SIMD.shuffle, ...half(lane & 1), ...half(lane & 1).map((i) => i + 16)).simd(SIMD.v128Store, 0, 0);
  }
}

/**
 * The lane pass: fills planes C and G (and the dropped components) of every quad from the
 * lane rows ({@link KERNEL_LANES}) of the keys' segments, for keys starting at bytes
 * `base0` and `base1`, four rotations at a time. Each component is offset + q · step in
 * float64, rounded to float32, as readWindows computes it, so the planes hold what the
 * first pass would park there, to the bit. Key 1 is read only for two keys; its segment's
 * parameters only when it is another segment.
 */
function lanePass(b: Body): void {
  const hiHalf = [8, 9, 10, 11, 12, 13, 14, 15, 8, 9, 10, 11, 12, 13, 14, 15];
  const lowHalves = [0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23];
  const promote = (from: number, lo: number, hi: number): void => {
    b.get(from).simd(SIMD.f64x2PromoteLowF32x4).set(lo);
    b.get(from).get(from).simd(SIMD.shuffle, ...hiHalf).simd(SIMD.f64x2PromoteLowF32x4).set(hi);
  };
  const bytes = [L.a0, L.a1, L.a2, L.sum];
  // Component c's four fields' bytes (into a0, a1, a2, sum), multipliers 2^(7 − first bit)
  // and masks 2^w − 1 (powers of two built as float32 exponents, then truncated), offsets
  // and steps, from the row at `row`.
  const params = (row: number, c: number): void => {
    bytes.forEach((l, i) => { b.get(row).mem(OP.i32Load16U, KERNEL_LANES.BYTE + 8 * c + 2 * i).set(l); });
    b.get(row).simd(SIMD.v128Load64Zero, 0, ...uleb(KERNEL_LANES.WIDTH + 8 * c)).simd(SIMD.i16x8ExtendLowU8x16).set(L.lv);
    b.get(L.lv).simd(SIMD.i32x4ExtendHighU16x8).get(L.i127).simd(SIMD.i32x4Add).i32(23).simd(SIMD.i32x4Shl).simd(SIMD.i32x4TruncSatF32x4S).set(L.lmul);
    b.get(L.lv).simd(SIMD.i32x4ExtendLowU16x8).get(L.i127).simd(SIMD.i32x4Add).i32(23).simd(SIMD.i32x4Shl).simd(SIMD.i32x4TruncSatF32x4S)
      .get(L.i1).simd(SIMD.i32x4Sub).set(L.lmask);
    b.get(row).simd(SIMD.v128Load, 0, ...uleb(KERNEL_LANES.OFFSET + 16 * c)).set(L.lv);
    promote(L.lv, L.loffLo, L.loffHi);
    b.get(row).simd(SIMD.v128Load, 0, ...uleb(KERNEL_LANES.STEP + 16 * c)).set(L.lv);
    promote(L.lv, L.lstepLo, L.lstepHi);
  };
  // Component c of the key at byte `key` into plane p.
  const read = (key: number, p: number): void => {
    for (let l = 0; l < 4; l++) {
      b.get(key).get(bytes[l]).op(OP.i32Add);
      if (l === 0) b.simd(SIMD.v128Load32Zero, 0, 0); else b.get(L.lv).simd(SIMD.v128Load32Lane, 0, 0, l);
      b.set(L.lv);
    }
    // The field's lowest bit to bit 7, then down to bit 0, the next fields' bits masked off.
    b.get(L.lv).get(L.lmul).simd(SIMD.i32x4Mul).i32(7).simd(SIMD.i32x4ShrU).get(L.lmask).simd(SIMD.v128And).set(L.lv);
    for (const [hi, step, off, out] of [[false, L.lstepLo, L.loffLo, L.llo], [true, L.lstepHi, L.loffHi, L.lhi]] as const) {
      b.get(L.lv);
      if (hi) b.get(L.lv).simd(SIMD.shuffle, ...hiHalf);
      b.simd(SIMD.f64x2ConvertLowI32x4S).get(step).simd(SIMD.f64x2Mul).get(off).simd(SIMD.f64x2Add).simd(SIMD.f32x4DemoteF64x2Zero).set(out);
    }
    b.get(L.at).get(L.llo).get(L.lhi).simd(SIMD.shuffle, ...lowHalves).simd(SIMD.v128Store, 0, ...uleb(plane(p)));
  };
  const drops = (row: number, p: number): void => {
    b.get(L.at).get(row).simd(SIMD.v128Load32Zero, 0, ...uleb(KERNEL_LANES.DROP)).simd(SIMD.i16x8ExtendLowU8x16).simd(SIMD.i32x4ExtendLowU16x8)
      .simd(SIMD.v128Store, 0, ...uleb(plane(p)));
  };
  b.simd(SIMD.v128Const, ...i32x4(127)).set(L.i127);
  b.simd(SIMD.v128Const, ...i32x4(1)).set(L.i1);
  // quad: key 0's row; o: key 1's (as far from it as their segments' headers).
  b.i32(0).set(L.at).get(H0).get(L.row).op(OP.i32Add).set(L.quad);
  b.get(L.lanes).i32(2).op(OP.i32Shl).i32(15).op(OP.i32Add).i32(-16).op(OP.i32And).set(L.el);
  b.op(OP.loop, OP.void);
  b.get(L.quad).get(H1).op(OP.i32Add).get(H0).op(OP.i32Sub).set(L.o);
  for (let c = 0; c < 3; c++) {
    params(L.quad, c);
    read(L.base0, PLANE.C + c);
    b.get(SINGLE).op(OP.i32Eqz).op(OP.if, OP.void);
    b.get(H0).get(H1).op(OP.i32Ne).op(OP.if, OP.void);
    params(L.o, c);
    b.op(OP.end);
    read(L.base1, PLANE.G + c);
    b.op(OP.end);
  }
  b.get(L.dropsW).op(OP.i32Eqz).op(OP.if, OP.void);
  drops(L.quad, PLANE.DROP0);
  drops(L.o, PLANE.DROP1);
  b.op(OP.end);
  b.get(L.quad).i32(KERNEL_LANES.BYTES).op(OP.i32Add).set(L.quad);
  b.get(L.at).i32(16).op(OP.i32Add).set(L.at).get(L.at).get(L.el).op(OP.i32LtU).op(OP.brIf, 0);
  b.op(OP.end);
}

/** Stores c + (g − c) · alpha of the f64 locals `c`, `g` at the pose offset as float32. */
function lerp3(b: Body, c: readonly number[], g: readonly number[]): void {
  store3(b, (i) => b.get(c[i]).get(g[i]).get(c[i]).op(OP.f64Sub).get(ALPHA).op(OP.f64Mul).op(OP.f64Add));
}

/** Loads a word of every 64-byte line from `start()` for `bytes()` bytes (at least one), or-ed into local `touched`. */
function touch(b: Body, start: () => Body, bytes: () => Body): void {
  start().i32(-64).op(OP.i32And).set(L.at);
  start(); bytes().op(OP.i32Add).set(L.el);
  b.op(OP.loop, OP.void);
  b.get(L.touched).get(L.at).mem(OP.i32Load).op(OP.i32Or).set(L.touched);
  b.get(L.at).i32(64).op(OP.i32Add).set(L.at).get(L.at).get(L.el).op(OP.i32LtU).op(OP.brIf, 0);
  b.op(OP.end);
}

/** The decode function's body (see {@link KernelDecode}). */
function decodeBody(): number[] {
  const b = new Body();
  const c = [L.c0, L.c1, L.c2], g = [L.g0, L.g1, L.g2];
  const word = (w: number): Body => b.get(CLIP).mem(OP.i32Load, 4 * w);
  word(KERNEL_CLIP.RECORDS_BYTES).set(RECORDS_BYTES); word(KERNEL_CLIP.QUADS).set(QUADS); word(KERNEL_CLIP.COUNT).set(COUNT); word(KERNEL_CLIP.STEPS).set(L.steps);
  word(KERNEL_CLIP.LANE_ROTATIONS).set(L.lanes); word(KERNEL_CLIP.KEY_BYTES).set(L.keyBytes);
  // Key 0's header and first byte come from the sampler; key 1's (h1, key1) follow from
  // where it is (KERNEL_KEY1). Fields' bits count from each key's first byte; where the keys
  // share a segment, both keys' from the first of the two in memory (one cursor, as the
  // first pass reads such keys; wrap looping goes back).
  b.get(HEAD).i32(31).op(OP.i32And).set(L.key1Is).get(HEAD).i32(-32).op(OP.i32And).set(H0);
  b.get(H0);
  b.get(H0); word(KERNEL_CLIP.SEGMENT_BYTES).op(OP.i32Add); word(KERNEL_CLIP.SEGMENTS);
  b.get(L.key1Is).i32(KERNEL_KEY1.NEXT_SEGMENT).op(OP.i32Eq).op(OP.select);
  b.get(L.key1Is).i32(KERNEL_KEY1.NEXT_SEGMENT).op(OP.i32LtU).op(OP.select).set(H1);
  b.get(KEY);
  b.get(KEY).get(L.keyBytes).op(OP.i32Add).get(H1).get(RECORDS_BYTES).op(OP.i32Add);
  b.get(L.key1Is).i32(KERNEL_KEY1.NEXT).op(OP.i32Eq).op(OP.select);
  b.get(L.key1Is).op(OP.i32Eqz).op(OP.select).set(L.key1);
  b.get(KEY).set(K0).get(L.key1).set(K1);
  b.get(L.key1Is).op(OP.i32Eqz).set(SINGLE);
  b.i32(0).set(L.e).i32(0).set(BIT0).i32(0).set(BIT1);
  b.get(H0).get(H1).op(OP.i32Eq).op(OP.if, OP.void);
  b.get(KEY).get(L.key1).get(KEY).get(L.key1).op(OP.i32LtU).op(OP.select).set(K0).get(K0).set(K1);
  b.get(KEY).get(K0).op(OP.i32Sub).i32(3).op(OP.i32Shl).set(BIT0);
  b.get(L.key1).get(K0).op(OP.i32Sub).i32(3).op(OP.i32Shl).set(BIT1);
  b.op(OP.end);
  // Key 1's record is found from key 0's cursor, in the rare path where the segments differ;
  // a1 keeps the bytes a key's fields span (and the 8 a field read may pass), a0 those of
  // both keys when key 1 is the next, for the early loads.
  b.get(H0).i32(TABLE.RECORD * 4).op(OP.i32Add).set(R0);
  b.get(L.keyBytes).i32(8).op(OP.i32Add).set(L.a1);
  b.get(L.keyBytes).get(L.key1Is).i32(KERNEL_KEY1.NEXT).op(OP.i32Eq).op(OP.i32Mul).get(L.a1).op(OP.i32Add).set(L.a0);
  // The staging pose holds another clip's pose: this clip's data may be in no cache. Every
  // line of its keys, records, kernel record, windows and quad table is loaded first:
  // independent loads, so the misses overlap instead of coming one after another as the
  // passes reach them (nothing waits for the header). Then identity and the clip's windows.
  b.i32(KERNEL_OWNER).mem(OP.i32Load).get(CLIP).op(OP.i32Ne).op(OP.if, OP.void);
  // Key 0's lines (and key 1's when it is the next) from the sampler's address, waiting for nothing.
  touch(b, () => b.get(KEY), () => b.get(L.a0));
  b.get(L.key1Is).i32(KERNEL_KEY1.NEXT_SEGMENT).op(OP.i32GeU).op(OP.if, OP.void);
  touch(b, () => b.get(L.key1), () => b.get(L.a1));
  b.op(OP.end);
  touch(b, () => b.get(H0), () => b.get(RECORDS_BYTES));
  b.get(H1).get(H0).op(OP.i32Ne).op(OP.if, OP.void);
  touch(b, () => b.get(H1), () => b.get(RECORDS_BYTES));
  b.op(OP.end);
  touch(b, () => b.get(CLIP), () => word(KERNEL_CLIP.CLIP_BYTES));
  // Stored once, so that no engine could drop the loads as unused.
  b.i32(KERNEL_SINK).get(L.touched).mem(OP.i32Store);
  b.i32(KERNEL_STAGING).set(L.at);
  word(KERNEL_CLIP.POSE_BYTES).i32(KERNEL_STAGING).op(OP.i32Add).set(L.el);
  b.op(OP.loop, OP.void);
  for (let v = 0; v < 5; v++) {
    const lanes = Array.from({ length: 4 }, (_, i) => f32Bytes(identityFloat(4 * v + i))).flat();
    b.get(L.at).simd(SIMD.v128Const, ...lanes).simd(SIMD.v128Store, 0, ...uleb(16 * v));
  }
  b.get(L.at).i32(IDENTITY_PERIOD_BYTES).op(OP.i32Add).set(L.at).get(L.at).get(L.el).op(OP.i32LtU).op(OP.brIf, 0);
  b.op(OP.end);
  word(KERNEL_CLIP.WINDOWS).set(L.at);
  word(KERNEL_CLIP.WINDOW_COUNT).i32(KERNEL_WINDOW_BYTES).op(OP.i32Mul).get(L.at).op(OP.i32Add).set(L.el);
  b.op(OP.block, OP.void).get(L.at).get(L.el).op(OP.i32Eq).op(OP.brIf, 0).op(OP.loop, OP.void);
  b.get(L.at).mem(OP.i32Load).get(L.at).simd(SIMD.v128Load, 0, 4).simd(SIMD.v128Store, 0, 0);
  b.get(L.at).i32(KERNEL_WINDOW_BYTES).op(OP.i32Add).set(L.at).get(L.at).get(L.el).op(OP.i32LtU).op(OP.brIf, 0);
  b.op(OP.end, OP.end);
  b.i32(KERNEL_OWNER).get(CLIP).mem(OP.i32Store);
  b.op(OP.end);
  b.get(H0).mem(OP.i32Load, 8).get(H1).mem(OP.i32Load, 8).op(OP.i32And).set(L.dropsW);
  b.i32(0).get(H0).get(H1).op(OP.i32Eq).get(SINGLE).op(OP.i32Eqz).op(OP.i32And).op(OP.i32Sub).set(L.shared);
  // With lane rows: the keys' first bits, and the other tracks' first bits in a key after their records.
  b.get(BIT0).set(L.base0).get(BIT1).set(L.base1);
  b.get(COUNT).i32(TABLE.RECORD * 4).op(OP.i32Mul).get(R0).op(OP.i32Add).set(L.list);
  // First pass, track by track: keys read; vectors interpolated and stored, rotations parked
  // (with lane rows, only the other tracks' records are here, each at its listed bit).
  b.op(OP.block, OP.void).get(COUNT).op(OP.i32Eqz).op(OP.brIf, 0).op(OP.loop, OP.void);
  b.get(L.lanes).op(OP.if, OP.void);
  b.get(L.base0).get(L.list).mem(OP.i32Load).op(OP.i32Add).set(BIT0);
  b.get(L.base1).get(L.list).get(H1).op(OP.i32Add).get(H0).op(OP.i32Sub).mem(OP.i32Load).op(OP.i32Add).set(BIT1);
  b.get(L.list).i32(4).op(OP.i32Add).set(L.list);
  b.op(OP.end);
  b.get(R0).mem(OP.i32Load).set(L.meta).get(R0).mem(OP.i32Load, 4).set(L.bits0);
  widthsOf(b, L.bits0);
  // rot = kind is rotation
  b.get(L.meta).i32(3 << TABLE.KIND_SHIFT).op(OP.i32And).i32(TRACK_KIND.ROTATION << TABLE.KIND_SHIFT).op(OP.i32Eq).set(L.rot);
  b.op(OP.block, OP.void);
  // Two keys of one segment (shared is all ones), not a STEP track, fields in one 64-bit
  // window: one record, two windows.
  b.get(L.shared).get(L.meta).op(OP.i32And).i32(TABLE.WINDOW | TABLE.STEP).op(OP.i32And).i32(TABLE.WINDOW).op(OP.i32Eq).op(OP.if, OP.void);
  readWindows(b, R0, K0, [[BIT0, L.window, c], [BIT1, L.window1, g]]);
  b.get(L.rot).op(OP.if, OP.void);
  park(b, g, L.bits0);
  b.op(OP.else);
  lerp3(b, c, g);
  b.op(OP.end).op(OP.br, 1).op(OP.end);
  readKey(b, R0, K0, BIT0, c);
  // Key 1's record: as far from key 0's as their segments' headers (the one loop cursor is R0).
  b.get(R0).get(H1).op(OP.i32Add).get(H0).op(OP.i32Sub).set(R1);
  b.get(R1).mem(OP.i32Load, 4).set(L.bits1);
  widthsOf(b, L.bits1);
  // One key (or a STEP track): key 1's bits are skipped.
  b.get(SINGLE).get(L.meta).i32(TABLE.STEP).op(OP.i32And).op(OP.i32Or).op(OP.if, OP.void);
  b.get(BIT1).get(L.sum).op(OP.i32Add).set(BIT1);
  b.get(L.rot).op(OP.if, OP.void);
  park(b, c, L.bits0);
  b.op(OP.else);
  store3(b, (i) => b.get(c[i]));
  b.op(OP.end).op(OP.br, 1).op(OP.end);
  // Two keys.
  readKey(b, R1, K1, BIT1, g);
  b.get(L.rot).op(OP.if, OP.void);
  park(b, g, L.bits1);
  b.op(OP.else);
  lerp3(b, c, g);
  b.op(OP.end);
  b.op(OP.end); // block of the track
  b.get(R0).i32(TABLE.RECORD * 4).op(OP.i32Add).set(R0);
  b.get(COUNT).i32(1).op(OP.i32Sub).set(COUNT).get(COUNT).op(OP.brIf, 0);
  b.op(OP.end, OP.end);
  // Then, with lane rows, the rotations, four at a time from the keys' first bytes.
  b.get(L.lanes).op(OP.if, OP.void);
  b.get(L.lanes).i32(2).op(OP.i32Shl).set(L.e);
  b.get(K0).get(L.base0).i32(3).op(OP.i32ShrU).op(OP.i32Add).set(L.base0);
  b.get(K1).get(L.base1).i32(3).op(OP.i32ShrU).op(OP.i32Add).set(L.base1);
  word(KERNEL_CLIP.LANE_ROWS).set(L.row);
  lanePass(b);
  b.op(OP.end);
  // The last quad's lanes past the last rotation (dummies) get zeros, not a previous decode's leftovers.
  b.get(L.e).i32(15).op(OP.i32And).op(OP.if, OP.void).op(OP.loop, OP.void);
  for (let i = 0; i < 6; i++) b.get(L.e).f32(0).mem(OP.f32Store, plane(PLANE.C + i));
  for (const p of [PLANE.DROP0, PLANE.DROP1]) b.get(L.e).i32(3).mem(OP.i32Store, plane(p));
  b.get(L.e).i32(4).op(OP.i32Add).set(L.e).get(L.e).i32(15).op(OP.i32And).op(OP.brIf, 0);
  b.op(OP.end, OP.end);

  // Then quad by quad: four lanes' rotations rebuilt, slerped, multiplied by their references and stored.
  for (const [local, bytes] of CONSTANTS) b.simd(SIMD.v128Const, ...bytes).set(local);
  b.get(ALPHA).op(OP.f32DemoteF64).set(L.alpha32);
  b.get(L.alpha32).simd(SIMD.f32x4Splat).set(L.al);
  b.f32(1).get(L.alpha32).op(OP.f32Sub).set(L.beta);
  b.get(L.beta).simd(SIMD.f32x4Splat).set(L.be);
  b.get(L.alpha32).get(L.alpha32).op(OP.f32Mul).simd(SIMD.f32x4Splat).set(L.aa);
  b.get(L.beta).get(L.beta).op(OP.f32Mul).simd(SIMD.f32x4Splat).set(L.bb);
  const q0 = [L.x0, L.y0, L.z0, L.w0], q1 = [L.x1, L.y1, L.z1, L.w1], q = [L.x, L.y, L.z, L.w];
  const load = (v: readonly number[], first: number): void => v.forEach((l, i) => b.get(L.at).simd(SIMD.v128Load, 0, ...uleb(plane(first + i))).set(l));
  const store = (v: readonly number[], first: number): void => v.forEach((l, i) => b.get(L.at).get(l).simd(SIMD.v128Store, 0, ...uleb(plane(first + i))));
  // Each step is its own loop over the quads, so the processor overlaps the quads' short
  // chains of dependent operations instead of waiting on one long chain per quad.
  eachQuad(b, () => {
    rebuild(b, PLANE.C, PLANE.DROP0, q0);
    b.get(SINGLE).op(OP.i32Eqz).op(OP.if, OP.void);
    rebuild(b, PLANE.G, PLANE.DROP1, q1);
    store(q1, PLANE.Q1);
    b.op(OP.end);
    store(q0, PLANE.Q0);
  });
  b.get(SINGLE).op(OP.i32Eqz).op(OP.if, OP.void);
  // The slerp in three loops (theta², weights, blend), each a shorter chain per quad, so
  // more quads overlap (one loop measured about a tenth slower, bench/notes.md).
  eachQuad(b, () => {
    load(q0, PLANE.Q0); load(q1, PLANE.Q1);
    // dot = x0x1 + y0y1 + z0z1 + w0w1, left to right
    vop(b, L.x0, SIMD.f32x4Mul, L.x1);
    for (const [p, r] of [[L.y0, L.y1], [L.z0, L.z1], [L.w0, L.w1]]) vop(b, p, SIMD.f32x4Mul, r).simd(SIMD.f32x4Add);
    b.set(L.dot);
    theta(b);
    store([L.sign, L.vu, L.vt], PLANE.SIGN);
  });
  eachQuad(b, () => {
    load([L.sign, L.vu, L.vt], PLANE.SIGN);
    weights(b);
    store([L.wa, L.wb], PLANE.SIGN);
  });
  eachQuad(b, () => {
    load([L.wa, L.wb], PLANE.SIGN);
    load(q0, PLANE.Q0); load(q1, PLANE.Q1);
    // q = q0 · wa + q1 · wb, or q0 for a STEP track
    for (let i = 0; i < 4; i++) {
      vop(b, q0[i], SIMD.f32x4Mul, L.wa); vop(b, q1[i], SIMD.f32x4Mul, L.wb).simd(SIMD.f32x4Add).set(q[i]);
    }
    b.get(L.steps).op(OP.if, OP.void);
    b.get(L.quad).simd(SIMD.v128Load, 0, ...uleb(KERNEL_QUAD.STEP)).set(L.m0);
    for (let i = 0; i < 4; i++) b.get(q0[i]).get(q[i]).get(L.m0).simd(SIMD.v128Bitselect).set(q[i]);
    b.op(OP.end);
    store(q, PLANE.Q0);
  });
  b.op(OP.end);
  eachQuad(b, () => {
    load(q, PLANE.Q0);
    productAndStore(b);
  });
  b.op(OP.end);
  const locals = [[...uleb(I32_LOCALS.length), I32], [...uleb(I64_LOCALS.length), I64], [...uleb(F32_LOCALS.length), F32], [...uleb(F64_LOCALS.length), F64], [...uleb(V128_LOCALS.length), V128]];
  const body = [...vector(locals), ...b.code];
  return [...uleb(body.length), ...body];
}

/**
 * `world(clip, k0, k1, alpha, parents, bones, rows)`: {@link KernelDecode}'s decode, then,
 * in the same call, the object-space matrices of the pose it wrote, bone by bone (parents
 * at byte `parents`, an i32 per bone, precede children): M[b] = M[parent] · T · R · S in
 * float64 with crowd.ts's objectSpace operations in its order, so the floats written are
 * that function's to the bit. The unrounded matrices are kept at {@link KERNEL_WORLD} (12
 * doubles per bone); each bone is written to {@link KERNEL_WORLD_OUT} as three rows of four
 * floats (`rows` 1) or a column-major 4×4.
 */
export type KernelWorld = (clip: number, head: number, key: number, alpha: number, parents: number, bones: number, rows: number) => void;

/** The world function's body (see {@link KernelWorld}). */
function worldBody(): number[] {
  const b = new Body();
  // The decode's parameters 0..3, then 4..6, then i32 locals 7..9, then f64 locals.
  const PARENTS = PARAMS, BONES = PARAMS + 1, ROWS = PARAMS + 2, BONE = PARAMS + 3, Q = PARAMS + 4, R = PARAMS + 5;
  const names = ['x', 'y', 'z', 'w', 'sx', 'sy', 'sz', 'x2', 'y2', 'z2', 'xx', 'xy', 'xz', 'yy', 'yz', 'zz', 'wx', 'wy', 'wz',
    'm0', 'm1', 'm2', 'm3', 'm4', 'm5', 'm6', 'm7', 'm8', 'tx', 'ty', 'tz', 'n0', 'n1', 'n2', 'n3', 'n4', 'n5', 'n6', 'n7', 'n8', 'ux', 'uy', 'uz'] as const;
  const F: Record<(typeof names)[number], number> = {} as never;
  names.forEach((n, i) => { F[n] = R + 1 + i; });
  const pose = (i: number): Body => b.get(BONE).i32(4 * POSE_STRIDE).op(OP.i32Mul).mem(OP.f32Load, KERNEL_STAGING + 4 * i).op(OP.f64PromoteF32);
  const parent = (i: number): Body => b.get(Q).mem(OP.f64Load, KERNEL_WORLD + 8 * i);
  const mul = (a: number, c: number): Body => b.get(a).get(c).op(OP.f64Mul);
  b.get(CLIP).get(HEAD).get(KEY).get(ALPHA).op(OP.call, 2);
  b.op(OP.block, OP.void).get(BONES).op(OP.i32Eqz).op(OP.brIf, 0).op(OP.loop, OP.void);
  (['x', 'y', 'z', 'w'] as const).forEach((n, i) => { pose(i).set(F[n]); });
  (['sx', 'sy', 'sz'] as const).forEach((n, i) => { pose(7 + i).set(F[n]); });
  (['tx', 'ty', 'tz'] as const).forEach((n, i) => { pose(4 + i).set(F[n]); });
  for (const [d, v] of [[F.x2, F.x], [F.y2, F.y], [F.z2, F.z]]) b.get(v).get(v).op(OP.f64Add).set(d);
  for (const [d, u, v] of [[F.xx, F.x, F.x2], [F.xy, F.x, F.y2], [F.xz, F.x, F.z2], [F.yy, F.y, F.y2], [F.yz, F.y, F.z2], [F.zz, F.z, F.z2],
    [F.wx, F.w, F.x2], [F.wy, F.w, F.y2], [F.wz, F.w, F.z2]]) mul(u, v).set(d);
  // Local R · S, column by column: (1 − (a + c)) · s or (a ± c) · s.
  const oneMinus = (a: number, c: number, sc: number, d: number): void => { b.f64(1).get(a).get(c).op(OP.f64Add).op(OP.f64Sub).get(sc).op(OP.f64Mul).set(d); };
  const pm = (a: number, c: number, add: boolean, sc: number, d: number): void => { b.get(a).get(c).op(add ? OP.f64Add : OP.f64Sub).get(sc).op(OP.f64Mul).set(d); };
  oneMinus(F.yy, F.zz, F.sx, F.m0); pm(F.xy, F.wz, true, F.sx, F.m1); pm(F.xz, F.wy, false, F.sx, F.m2);
  pm(F.xy, F.wz, false, F.sy, F.m3); oneMinus(F.xx, F.zz, F.sy, F.m4); pm(F.yz, F.wx, true, F.sy, F.m5);
  pm(F.xz, F.wy, true, F.sz, F.m6); pm(F.yz, F.wx, false, F.sz, F.m7); oneMinus(F.xx, F.yy, F.sz, F.m8);
  // A child: M[parent] · local, each sum left to right.
  b.get(BONE).i32(2).op(OP.i32Shl).get(PARENTS).op(OP.i32Add).mem(OP.i32Load).set(Q);
  b.get(Q).i32(0).op(OP.i32GeS).op(OP.if, OP.void);
  b.get(Q).i32(96).op(OP.i32Mul).set(Q);
  const m = [F.m0, F.m1, F.m2, F.m3, F.m4, F.m5, F.m6, F.m7, F.m8], n = [F.n0, F.n1, F.n2, F.n3, F.n4, F.n5, F.n6, F.n7, F.n8];
  for (let col = 0; col < 3; col++) {
    for (let row = 0; row < 3; row++) {
      parent(row).get(m[3 * col]).op(OP.f64Mul);
      parent(3 + row).get(m[3 * col + 1]).op(OP.f64Mul).op(OP.f64Add);
      parent(6 + row).get(m[3 * col + 2]).op(OP.f64Mul).op(OP.f64Add).set(n[3 * col + row]);
    }
  }
  const t = [F.tx, F.ty, F.tz], u = [F.ux, F.uy, F.uz];
  for (let row = 0; row < 3; row++) {
    parent(row).get(t[0]).op(OP.f64Mul);
    parent(3 + row).get(t[1]).op(OP.f64Mul).op(OP.f64Add);
    parent(6 + row).get(t[2]).op(OP.f64Mul).op(OP.f64Add);
    parent(9 + row).op(OP.f64Add).set(u[row]);
  }
  for (let i = 0; i < 9; i++) b.get(n[i]).set(m[i]);
  for (let i = 0; i < 3; i++) b.get(u[i]).set(t[i]);
  b.op(OP.end);
  // The bone's unrounded matrix, then its floats.
  b.get(BONE).i32(96).op(OP.i32Mul).set(Q);
  [...m, ...t].forEach((l, i) => { b.get(Q).get(l).mem(OP.f64Store, KERNEL_WORLD + 8 * i); });
  // Float i of the bone's output: a local rounded to float32, or a constant 0 or 1.
  const put = (v: number | '0' | '1', i: number): void => {
    b.get(R);
    if (v === '0' || v === '1') b.f32(Number(v)); else b.get(v).op(OP.f32DemoteF64);
    b.mem(OP.f32Store, KERNEL_WORLD_OUT + 4 * i);
  };
  b.get(ROWS).op(OP.if, OP.void);
  b.get(BONE).i32(48).op(OP.i32Mul).set(R);
  [F.m0, F.m3, F.m6, F.tx, F.m1, F.m4, F.m7, F.ty, F.m2, F.m5, F.m8, F.tz].forEach(put);
  b.op(OP.else);
  b.get(BONE).i32(64).op(OP.i32Mul).set(R);
  ([F.m0, F.m1, F.m2, '0', F.m3, F.m4, F.m5, '0', F.m6, F.m7, F.m8, '0', F.tx, F.ty, F.tz, '1'] as const).forEach(put);
  b.op(OP.end);
  b.get(BONE).i32(1).op(OP.i32Add).set(BONE).get(BONE).get(BONES).op(OP.i32LtU).op(OP.brIf, 0);
  b.op(OP.end, OP.end, OP.end);
  const locals = [[...uleb(3), I32], [...uleb(names.length), F64]];
  const body = [...vector(locals), ...b.code];
  return [...uleb(body.length), ...body];
}

/**
 * The kernel module's bytes: imports env.acos and env.sin (Math's, so the rare large-angle
 * slerp is the TypeScript path's to the bit) and env.mem, exports `decode` and `world`.
 */
export function kernelBytes(): Uint8Array<ArrayBuffer> {
  const decodeParams = [I32, I32, I32, F64];
  const types = section(1, vector([[0x60, 1, F64, 1, F64], [0x60, ...vector(decodeParams.map((t) => [t])), 0], [0x60, ...vector([...decodeParams, I32, I32, I32].map((t) => [t])), 0]]));
  const imports = section(2, vector([
    [...name('env'), ...name('acos'), 0x00, 0],
    [...name('env'), ...name('sin'), 0x00, 0],
    [...name('env'), ...name('mem'), 0x02, 0x00, 1],
  ]));
  const functions = section(3, vector([[1], [2]]));
  const exports = section(7, vector([[...name('decode'), 0x00, 2], [...name('world'), 0x00, 3]]));
  const code = section(10, vector([decodeBody(), worldBody()]));
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
/** The scratch's bytes, at the start of every kernel memory: the planes, then the mask table, the owner word and the sink. */
const SCRATCH_BYTES = 1 << 17;
/** Address of the 16 bytes at the scratch's end where dummy lanes' rotations are written. */
export const KERNEL_SINK = SCRATCH_BYTES - 16;
/** Address of the word holding the kernel record address of the clip whose pose the staging pose holds (0: none). */
const KERNEL_OWNER = SCRATCH_BYTES - 32;
/** Address of the table of (1 << w) − 1 for w = 0..32, written when the memory is made. */
const KERNEL_MASKS = SCRATCH_BYTES - 256;
/** Bytes of each of the scratch's eleven {@link PLANE}s: four per rotation. */
const PLANE_BYTES = 16 * Math.floor(KERNEL_MASKS / (11 * 16));
/** Most animated rotations a clip decoded by the kernel may have (the planes hold one each). */
export const KERNEL_MAX_ROTATIONS = PLANE_BYTES / 4;
/** Bytes of the identity pattern the staging pose is filled with: two bones. */
const IDENTITY_PERIOD_BYTES = 8 * POSE_STRIDE;
/** Address of the staging pose, after the scratch in every kernel memory: the pose a decode writes, which the sampler copies out. */
export const KERNEL_STAGING = SCRATCH_BYTES;
const STAGING_BYTES = 1 << 16;
/** Most bones whose object-space matrices the kernel's {@link KernelWorld} computes (more: crowd.ts does). */
export const KERNEL_MAX_WORLD_BONES = 1024;
/** Address of {@link KernelWorld}'s unrounded matrices, 12 doubles per bone, after the staging pose. */
const KERNEL_WORLD = KERNEL_STAGING + STAGING_BYTES;
/** Address of the floats {@link KernelWorld} writes, up to 16 per bone. */
export const KERNEL_WORLD_OUT = KERNEL_WORLD + 96 * KERNEL_MAX_WORLD_BONES;
/** Where a memory's clips start: after the scratch, the staging pose and the world pass's room. */
const DATA_START = KERNEL_WORLD_OUT + 64 * KERNEL_MAX_WORLD_BONES;
/**
 * Most pose floats a clip decoded by the kernel may have: its identity fill (whole
 * patterns) and a window at its last float stay inside the staging pose.
 */
export const KERNEL_MAX_POSE_FLOATS = (IDENTITY_PERIOD_BYTES / 4) * Math.floor((STAGING_BYTES - 16) / IDENTITY_PERIOD_BYTES);
const PAGE = 65536;

interface Arena {
  readonly memory: WebAssembly.Memory;
  readonly decode: KernelDecode;
  readonly world: KernelWorld;
  used: number;
  /** Views by address and float count, shared by every clip of the memory. */
  readonly views: Map<number, Float32Array>;
}
let arena: Arena | undefined;

/** A place for one clip's decode buffer inside a kernel memory. */
export interface KernelPlace {
  /** The memory's buffer (never grown, so views on it stay valid). */
  readonly buffer: ArrayBuffer;
  /** Byte offset of the place, a multiple of 64 (a cache line; the sampler's segment header addresses keep their low five bits free, {@link KERNEL_KEY1}). */
  readonly byteOffset: number;
  readonly decode: KernelDecode;
  readonly world: KernelWorld;
  /**
   * A view of `floats` floats at byte `address` of the memory ({@link KERNEL_STAGING} or
   * {@link KERNEL_WORLD_OUT}), where the kernel writes what a sampler copies out. One view
   * per address, length and memory, shared by its clips and their samplers: the object a
   * decode copies from is then one every decode in the memory touches, so it stays in
   * cache (a view per sampler or per clip is one more object to miss cold).
   */
  readonly view: (address: number, floats: number) => Float32Array;
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
  const size = Math.ceil(bytes / 64) * 64;
  if (!arena || arena.used + size > arena.memory.buffer.byteLength) {
    const grown = arena === undefined ? FIRST_ARENA_BYTES : Math.min(MAX_ARENA_BYTES, 2 * (arena.memory.buffer.byteLength - DATA_START));
    // Short of memory for a larger one, the smallest that holds the clip.
    const next = newArena(module, Math.max(size, grown)) ?? newArena(module, Math.max(size, FIRST_ARENA_BYTES));
    // No memory at all (or a page policy refusing instances): this clip decodes in TypeScript.
    if (next === undefined) return undefined;
    arena = next;
  }
  const byteOffset = arena.used;
  arena.used += size;
  const { memory, views } = arena;
  const view = (address: number, floats: number): Float32Array => {
    const key = address * 0x100000 + floats;
    let v = views.get(key);
    if (v === undefined) { v = new Float32Array(memory.buffer, address, floats); views.set(key, v); }
    return v;
  };
  return { buffer: memory.buffer, byteOffset, decode: arena.decode, world: arena.world, view };
}

/** A kernel memory of `bytes` bytes after the scratch, with its instance; undefined when it cannot be made. */
function newArena(module: WebAssembly.Module, bytes: number): Arena | undefined {
  try {
    const memory = new WebAssembly.Memory({ initial: Math.ceil((DATA_START + bytes) / PAGE) });
    const instance = new WebAssembly.Instance(module, { env: { mem: memory, acos: Math.acos, sin: Math.sin } });
    new Int32Array(memory.buffer, KERNEL_MASKS, 33).set(Array.from({ length: 33 }, (_, w) => (w === 32 ? -1 : (1 << w) - 1)));
    const { decode, world } = instance.exports as { decode: KernelDecode; world: KernelWorld };
    return { memory, decode, world, used: DATA_START, views: new Map() };
  } catch {
    return undefined;
  }
}
