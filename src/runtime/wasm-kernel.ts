/**
 * The WebAssembly SIMD kernel: the whole-pose decode loop of sampler.ts as one function
 * (and, for crowds, the same followed by crowd.ts's object-space walk: {@link KernelWorld},
 * a second module that crowd.ts supplies, see {@link kernelWorld}). Their sources are
 * kernel.wat and kernel-world.wat, assembled at build time (scripts/assemble-kernel.mjs) into
 * kernel-wasm.ts; this module compiles them and places clips' decode tables in its memories
 * (laid out as decode-layout.ts says). Its poses are bit-identical to sampler.ts's
 * (test/runtime/wasm-kernel.test.ts holds the two to that on the fixtures). Used only
 * where the engine validates SIMD; sampler.ts keeps the TypeScript path otherwise.
 */
import { KERNEL_DATA_START, KERNEL_MASKS } from './decode-layout.js';
import { KERNEL_SHIFT, KERNEL_WASM } from './kernel-wasm.js';

/**
 * `decode(clip, head, key, alpha)`: decodes the pose a fraction `alpha` from key 0 to key 1
 * of the clip whose KERNEL_CLIP record (decode-layout.ts) is at byte `clip` of the kernel's
 * memory, into the memory's KERNEL_STAGING pose. `head` is the byte address of key 0's
 * segment header (a multiple of 32) plus where key 1 is (KERNEL_KEY1), `key` the byte
 * address of key 0's first byte: the sampler computes both from the key indices and the
 * clip's fixed segment and key strides (decode-tables.ts), so a cold decode loads the
 * segment's lines as soon as it loads the record, not after a table entry. Four arguments,
 * since each costs a conversion on the way into WebAssembly.
 */
export type KernelDecode = (clip: number, head: number, key: number, alpha: number) => void;

/**
 * `world(clip, k0, k1, alpha, parents, bones, rows)`: {@link KernelDecode}'s decode, then,
 * in the same call, the object-space matrices of the pose it wrote, bone by bone (parents
 * at byte `parents`, an i32 per bone, precede children): M[b] = M[parent] · T · R · S in
 * float64 with crowd.ts's objectSpace operations in its order, so the floats written are
 * that function's to the bit. The unrounded matrices are kept at KERNEL_WORLD (12
 * doubles per bone); each bone is written to KERNEL_WORLD_OUT as three rows of four
 * floats (`rows` 1) or a column-major 4×4.
 */
export type KernelWorld = (
  clip: number,
  head: number,
  key: number,
  alpha: number,
  parents: number,
  bones: number,
  rows: number,
) => void;

/**
 * A module's bytes from kernel-wasm.ts's characters: by default the kernel's (kernel.wat:
 * imports env.acos, env.sin and env.mem, exports `decode`); the world pass's
 * (kernel-world.wat: imports env.decode and env.mem, exports `world`) from KERNEL_WORLD_WASM.
 */
export function kernelBytes(text = KERNEL_WASM): Uint8Array<ArrayBuffer> {
  const bytes = new Uint8Array(text.length);
  for (let i = 0; i < bytes.length; i++) bytes[i] = text.charCodeAt(i) - KERNEL_SHIFT;
  return bytes;
}

/** `text`'s module compiled, or null where WebAssembly or its SIMD is missing. */
function compile(text: string): WebAssembly.Module | null {
  try {
    const bytes = kernelBytes(text);
    if (WebAssembly.validate(bytes)) return new WebAssembly.Module(bytes);
  } catch {
    /* no WebAssembly (a ReferenceError), or a page policy refusing it */
  }
  return null;
}

let compiled: WebAssembly.Module | null | undefined;

/** The compiled kernel, or null where WebAssembly or its SIMD is missing (then sampler.ts decodes). */
export function kernelModule(): WebAssembly.Module | null {
  if (compiled === undefined) compiled = compile(KERNEL_WASM);
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
const PAGE = 65536;

/** A kernel memory with its instance, as its clips' places share it. */
interface Arena {
  /** The memory (never grown, so views on its buffer stay valid). */
  readonly memory: WebAssembly.Memory;
  readonly decode: KernelDecode;
  /**
   * A view of `floats` floats at byte `address` of the memory (KERNEL_STAGING or
   * KERNEL_WORLD_OUT), where the kernel writes what a sampler copies out. One view
   * per address, length and memory, shared by its clips and their samplers: the object a
   * decode copies from is then one every decode in the memory touches, so it stays in
   * cache (a view per sampler or per clip is one more object to miss cold).
   */
  readonly view: (address: number, floats: number) => Float32Array;
  /** Bytes of the memory in use. */
  used: number;
}
let arena: Arena | undefined;

/** A place for one clip's decode buffer inside a kernel memory. */
export interface KernelPlace extends Omit<Arena, 'used'> {
  /** Byte offset of the place, a multiple of 64 (a cache line; the sampler's segment header addresses keep their low five bits free, KERNEL_KEY1). */
  readonly byteOffset: number;
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
    const grown =
      arena === undefined
        ? FIRST_ARENA_BYTES
        : Math.min(MAX_ARENA_BYTES, 2 * (arena.memory.buffer.byteLength - KERNEL_DATA_START));
    // Short of memory for a larger one, the smallest that holds the clip.
    const next = newArena(module, Math.max(size, grown)) ?? newArena(module, Math.max(size, FIRST_ARENA_BYTES));
    // No memory at all (or a page policy refusing instances): this clip decodes in TypeScript.
    if (next === undefined) return undefined;
    arena = next;
  }
  const byteOffset = arena.used;
  arena.used += size;
  return { ...arena, byteOffset };
}

/** The world pass's module, compiled once (null where it does not compile), and its instance on each kernel memory (null where it cannot be made). */
let worldModule: WebAssembly.Module | null | undefined;
const worlds = new WeakMap<WebAssembly.Memory, KernelWorld | null>();

/**
 * The world pass on the memory of `place` (one instance per memory, importing its decode),
 * or undefined where it cannot be made. `text` is kernel-wasm.ts's KERNEL_WORLD_WASM, which
 * crowd.ts passes: a page that plays clips without a crowd does not download it.
 */
export function kernelWorld(place: KernelPlace, text: string): KernelWorld | undefined {
  let world = worlds.get(place.memory);
  if (world === undefined) {
    if (worldModule === undefined) worldModule = compile(text);
    world = null;
    try {
      const env = { mem: place.memory, decode: place.decode };
      if (worldModule) world = (new WebAssembly.Instance(worldModule, { env }).exports as { world: KernelWorld }).world;
    } catch {
      /* a page policy refusing instances */
    }
    worlds.set(place.memory, world);
  }
  return world ?? undefined;
}

/** A kernel memory of `bytes` bytes after the scratch, with its instance; undefined when it cannot be made. */
function newArena(module: WebAssembly.Module, bytes: number): Arena | undefined {
  try {
    const memory = new WebAssembly.Memory({ initial: Math.ceil((KERNEL_DATA_START + bytes) / PAGE) });
    const instance = new WebAssembly.Instance(module, { env: { mem: memory, acos: Math.acos, sin: Math.sin } });
    // (1 << w) − 1 for w = 0..32: 2^32 − 1 wraps to −1 in an Int32Array.
    const masks = new Int32Array(memory.buffer, KERNEL_MASKS, 33);
    for (let w = 0; w < 33; w++) masks[w] = 2 ** w - 1;
    const { decode } = instance.exports as { decode: KernelDecode };
    // Views by address and float count, shared by every clip of the memory.
    const views = new Map<number, Float32Array>();
    return {
      memory,
      decode,
      view: (address, floats) => {
        const key = address * 0x100000 + floats;
        let v = views.get(key);
        if (v === undefined) {
          v = new Float32Array(memory.buffer, address, floats);
          views.set(key, v);
        }
        return v;
      },
      used: KERNEL_DATA_START,
    };
  } catch {
    return undefined;
  }
}
