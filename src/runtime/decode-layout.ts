/**
 * The memory layout of the decode tables (as format.ts is the file's): the records
 * decode-tables.ts writes, the TypeScript decoder (sampler.ts) and the WebAssembly kernel
 * (kernel.wat) read, and the map of a kernel memory. A leaf module: it imports nothing, so
 * every module of the decode can import it. kernel.wat uses these numbers as literals and
 * names them in comments (test/runtime/wasm-kernel.test.ts checks its header against them).
 * The records are `const enum`s, as format.ts's tables are: the build writes their values
 * where they are used.
 */

/**
 * The decode buffer's records, in 32-bit words. A track record is
 * [meta, bits, offset0, step0, offset1, step1, offset2, step2]: `meta` holds the pose
 * offset (low {@link TABLE.POSE_BITS} bits), the kind, the STEP flag and whether the
 * components are raw floats; `bits` holds the bits of the three stored components (a byte
 * each) and the dropped component (top byte); a segment constant (rate 0) has 0 bits and
 * step 0. A segment header record is [where its packed keys are, bits per key, 1 when
 * every animated rotation of the segment drops w (else 0), 0 × 5]: the u32 index of the
 * keys in the file's words the TypeScript decoder reads, or, in a kernel memory, their byte
 * address in the file's copy there (the kernel reads them in place).
 */
// biome-ignore lint/suspicious/noConstEnum: see the file's comment
export const enum TABLE {
  RECORD = 8,
  POSE_BITS = 20,
  POSE_MASK = 0xfffff,
  // biome-ignore lint/suspicious/noDuplicateEnumValues: the kind sits just past the pose offset's bits
  KIND_SHIFT = 20,
  STEP = 1 << 22,
  RAW = 1 << 24,
}

/**
 * A clip's kernel record, thirteen 32-bit words: the bytes a key's fields span from its
 * first byte (its widest key's bits and up to seven before them, for the loads that touch a
 * cold key's lines); the byte address of the clip's {@link KERNEL_QUAD} table and of its
 * pose windows; the bytes of a segment's header and records (or lane layout); the count
 * of records the first pass reads (every animated track's, or with lane rows the tracks'
 * that are not rotations); 1 when an animated rotation is a STEP track; the bytes of the
 * record, windows and quad table together (read as one run); the pose's bytes; the window
 * count; with lane rows ({@link KERNEL_LANES}), the rotation count and the bytes from a
 * segment's header to its first row (else 0, 0); the byte address of the first segment's
 * header and the segments' stride in bytes.
 *
 * The kernel writes poses into the {@link KERNEL_STAGING} pose its memory's clips share.
 * When the clip last written there is another one, it first fills the staging pose with
 * identity (the 20-float pattern of shared/pose-layout.ts's identityFloat) and stores the
 * clip's windows: {@link KERNEL_WINDOW_BYTES} bytes each, a byte address then four floats,
 * covering every float that is neither animated nor identity. So a pose reads the clip's
 * few constants, not a whole pose of its own.
 */
// biome-ignore lint/suspicious/noConstEnum: see the file's comment
export const enum KERNEL_CLIP {
  KEY_BYTES = 0,
  QUADS = 1,
  WINDOWS = 2,
  RECORDS_BYTES = 3,
  COUNT = 4,
  STEPS = 5,
  CLIP_BYTES = 6,
  POSE_BYTES = 7,
  WINDOW_COUNT = 8,
  LANE_ROTATIONS = 9,
  LANE_ROWS = 10,
  SEGMENTS = 11,
  SEGMENT_BYTES = 12,
  WORDS = 13,
}

/**
 * Where key 1 is, in the low two bits of the kernel decode's `head` (wasm-kernel.ts): key
 * 0 alone (SAME); the next key of key 0's segment (NEXT); the first key of the next
 * segment (NEXT_SEGMENT); the clip's first key (FIRST, wrap looping from the last key).
 * Bits 2..4 of `head` hold key 0's first bit within its first byte.
 */
// biome-ignore lint/suspicious/noConstEnum: see the file's comment
export const enum KERNEL_KEY1 {
  SAME = 0,
  NEXT = 1,
  NEXT_SEGMENT = 2,
  FIRST = 3,
}

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
// biome-ignore lint/suspicious/noConstEnum: see the file's comment
export const enum KERNEL_QUAD {
  REFS = 0,
  STEP = 64,
  POSE = 80,
  BYTES = 96,
}

/**
 * Where a clip's segments have lane rows (decode-tables.ts lays them out for every clip the
 * kernel decodes unless a segment stores a rotation's raw floats), its rotations are not in
 * the records: each segment has, after the records of the other tracks and their fields'
 * first bits in a key, one row of {@link KERNEL_LANES.BYTES} bytes per four rotations
 * (rotation i in lane i & 3 of row i >> 2). Per stored component c, at COMPONENT · c (so the
 * kernel reads each component with the same code), four lanes each: the dequantisation
 * offsets (float32, OFFSET) and steps (STEP), and, for a key starting on a byte, the byte of
 * the key the field starts in (u16, BYTE), the field's width w (u8, WIDTH) and 2^(7 − its
 * first bit within that byte) (u8, WIDTH + 4); then the dropped components (u8, DROP). So,
 * for a key starting at bit s of its first byte, a lane's field is four bytes read from its
 * byte, times 2^(7 − first bit) and 2^(7 − s), shifted right by 14 and masked to w bits (w ≤
 * {@link LANE_MAX_BITS}): the lane pass reads four rotations per vector, shifting them all
 * by a constant.
 */
// biome-ignore lint/suspicious/noConstEnum: see the file's comment
export const enum KERNEL_LANES {
  OFFSET = 0,
  STEP = 16,
  BYTE = 32,
  WIDTH = 40,
  COMPONENT = 48,
  DROP = 144,
  BYTES = 160,
}

/**
 * Widest rotation field a lane row reads (bits): four bytes from the field's byte hold it
 * from bit s + f (s, the key's first bit within its first byte, and f, the field's first
 * bit within its byte, are at most 7 each), and multiplied up to start at bit 14 it must
 * end by bit 31. A clip with a wider rotation field (none on the corpus: 18 bits at most)
 * has no lane rows.
 */
export const LANE_MAX_BITS = 32 - 7 - 7;

// A kernel memory: the scratch (planes, mask table, owner word, sink), the staging pose, the
// world pass's room, then the clips' decode buffers from KERNEL_DATA_START.

/** The scratch's bytes, at the start of every kernel memory: the planes, then the mask table, the owner word and the sink. */
export const SCRATCH_BYTES = 1 << 17;
/** Address of the 16 bytes at the scratch's end where dummy lanes' rotations are written. */
export const KERNEL_SINK = SCRATCH_BYTES - 16;
/** Address of the word holding the kernel record address of the clip whose pose the staging pose holds (0: none). */
export const KERNEL_OWNER = SCRATCH_BYTES - 32;
/** Address of the table of (1 << w) − 1 for w = 0..32, written when the memory is made. */
export const KERNEL_MASKS = SCRATCH_BYTES - 256;
/**
 * Bytes of each of the scratch's eleven planes, four per rotation: rotation i's stored
 * components of key 0 at byte 4 · i of planes 0..2 and its dropped component at 3, key 1's
 * at 4..6 and 7; each key's rebuilt quaternion overwrites its four (key 0's x, y, z, w in
 * planes 0..3, key 1's in 4..7), and the slerp passes sign, theta² and u, then the two
 * weights, in planes 8..10. A quad's four lanes of each are one 16-byte vector.
 */
// `| 0` rather than Math.floor: a bundler can drop the arithmetic where the value is unused.
export const PLANE_BYTES = 16 * ((KERNEL_MASKS / (11 * 16)) | 0);
/** Most animated rotations a clip decoded by the kernel may have (the planes hold one each). */
export const KERNEL_MAX_ROTATIONS = PLANE_BYTES / 4;
/** Bytes of the identity pattern the staging pose is filled with: two bones of ten floats (shared/pose-layout.ts). */
export const IDENTITY_PERIOD_BYTES = 80;
/** Address of the staging pose, after the scratch in every kernel memory: the pose a decode writes, which the sampler copies out. */
export const KERNEL_STAGING = SCRATCH_BYTES;
const STAGING_BYTES = 1 << 16;
/** Most bones whose object-space matrices the kernel's world pass computes (more: crowd.ts does). */
export const KERNEL_MAX_WORLD_BONES = 1024;
/** Address of the world pass's unrounded matrices, 12 doubles per bone, after the staging pose. */
export const KERNEL_WORLD = KERNEL_STAGING + STAGING_BYTES;
/** Address of the floats the world pass writes, up to 16 per bone. */
export const KERNEL_WORLD_OUT = KERNEL_WORLD + 96 * KERNEL_MAX_WORLD_BONES;
/** Where a memory's clips start: after the scratch, the staging pose and the world pass's room. */
export const KERNEL_DATA_START = KERNEL_WORLD_OUT + 64 * KERNEL_MAX_WORLD_BONES;
/**
 * Most pose floats a clip decoded by the kernel may have: its identity fill (whole
 * patterns) and a window at its last float stay inside the staging pose.
 */
export const KERNEL_MAX_POSE_FLOATS =
  (IDENTITY_PERIOD_BYTES / 4) * (((STAGING_BYTES - 16) / IDENTITY_PERIOD_BYTES) | 0);
