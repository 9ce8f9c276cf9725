/**
 * A slow, obvious `.bpk` decoder written from docs/format.md alone, to check the fast one
 * (src/runtime/compressed-clip.ts) against. It imports nothing from src/: every field is
 * read with a DataView at the offset the spec gives, packed keys are read one bit at a
 * time, and the arithmetic is the spec's formulas written out. It trusts its input (no
 * validation beyond what it needs to find its way); it is for tests only.
 */

/** Track classes, by name. */
export type ReferenceTrackClass = 'default' | 'constant' | 'animated';

/** Everything the reference decoder reads from a file. */
export interface ReferenceClip {
  version: number;
  boneCount: number;
  sampleCount: number;
  sampleRate: number;
  startTime: number;
  duration: number;
  unit: string;
  parents: number[];
  /** Clip and bone names, when the file has the names section. */
  name?: string;
  boneNames?: string[];
  /** The glTF node of every bone, when the file has them. */
  nodeIndices?: number[];
  /** The time of every sample, when the file has the key-times section. */
  keyTimes?: number[];
  /** The additive record, when the file has one: mode, reference kind, frame, time. */
  additive?: { mode: number; reference: number; frame: number; time: number };
  /** Class of track `bone * 3 + kind`. */
  trackClasses: ReferenceTrackClass[];
  /** Per track: the source animates it (channel bitset). */
  channels: boolean[];
  /** Per track: held between samples (step bitset). */
  steps: boolean[];
  /** `rates[segment][animatedTrack]`: the rate byte's low 6 bits. */
  rates: number[][];
  /** `keys[k]`: 10 numbers per bone (rotation xyzw, translation xyz, scale xyz), float32-rounded. */
  keys: Float64Array[];
}

const UNITS = ['mm', 'cm', 'm', 'in', 'ft'];
const SEGMENT_SIZE = 16;

function align4(n: number): number {
  return Math.ceil(n / 4) * 4;
}

/** Decodes every sample of a `.bpk` file. Throws a plain Error on a file it cannot read. */
export function referenceDecode(input: Uint8Array): ReferenceClip {
  const bytes = Uint8Array.from(input); // a private, aligned copy
  const view = new DataView(bytes.buffer);

  // 1. Header.
  const HEADER_SIZE = 88;
  if (bytes.length < HEADER_SIZE) throw new Error('shorter than the header');
  if (view.getUint32(0, true) !== 0x1a4b5042) throw new Error('bad magic');
  const version = view.getUint16(4, true);
  if (version !== 6) throw new Error(`version ${version}`); // docs/format.md describes version 6
  const flags = view.getUint16(6, true);
  const hasNames = (flags & 1) !== 0;
  const hasNodeIndices = (flags & 4) !== 0;
  const hasKeyTimes = (flags & 8) !== 0;
  const isAdditive = (flags & 16) !== 0;
  if (view.getUint32(12, true) !== bytes.length) throw new Error('total size');
  const boneCount = view.getUint16(16, true);
  const unit = UNITS[view.getUint8(19)];
  const sampleCount = view.getUint32(20, true);
  const sampleRate = view.getFloat64(24, true);
  const segmentCount = view.getUint32(32, true);
  const animatedCount = view.getUint16(38, true);
  const startTime = view.getFloat64(40, true);
  const duration = view.getFloat64(48, true);
  const trackCount = 3 * boneCount;

  // Segments and seeking.
  let expectedSegments: number;
  if (sampleCount <= SEGMENT_SIZE) expectedSegments = 1;
  else if (sampleCount % SEGMENT_SIZE >= SEGMENT_SIZE / 2)
    expectedSegments = Math.floor(sampleCount / SEGMENT_SIZE) + 1;
  else expectedSegments = Math.floor(sampleCount / SEGMENT_SIZE);
  if (segmentCount !== expectedSegments) throw new Error('segment count');

  // 2. Parents.
  const parents: number[] = [];
  if (view.getUint32(56, true) !== HEADER_SIZE) throw new Error('parents offset');
  for (let b = 0; b < boneCount; b++) parents.push(view.getInt16(HEADER_SIZE + 2 * b, true));

  // 3. Bitsets: default, constant, channel, step.
  const bitsetsAt = align4(HEADER_SIZE + 2 * boneCount);
  if (view.getUint32(60, true) !== bitsetsAt) throw new Error('bitsets offset');
  const words = Math.ceil(trackCount / 32);
  const bitOf = (setAt: number, t: number) => (view.getUint32(setAt + 4 * Math.floor(t / 32), true) >>> (t % 32)) & 1;
  const trackClasses: ReferenceTrackClass[] = [];
  const channels: boolean[] = [];
  const steps: boolean[] = [];
  for (let t = 0; t < trackCount; t++) {
    const isDefault = bitOf(bitsetsAt, t) === 1;
    const isConstant = bitOf(bitsetsAt + 4 * words, t) === 1;
    trackClasses.push(isDefault ? 'default' : isConstant ? 'constant' : 'animated');
    channels.push(bitOf(bitsetsAt + 8 * words, t) === 1);
    steps.push(bitOf(bitsetsAt + 12 * words, t) === 1);
  }
  const animatedTracks: number[] = [];
  for (let t = 0; t < trackCount; t++) if (trackClasses[t] === 'animated') animatedTracks.push(t);
  if (animatedTracks.length !== animatedCount) throw new Error('animated track count');

  // 4. Constants: the base pose, which every key starts from.
  const base = new Float64Array(boneCount * 10);
  let at = bitsetsAt + 16 * words;
  if (view.getUint32(64, true) !== at) throw new Error('constants offset');
  for (let t = 0; t < trackCount; t++) {
    const bone = Math.floor(t / 3),
      kind = t % 3;
    const o = bone * 10 + [0, 4, 7][kind];
    if (trackClasses[t] === 'default') {
      if (kind === 0) base.set([0, 0, 0, 1], o);
      else if (kind === 1) base.set([0, 0, 0], o);
      else base.set([1, 1, 1], o);
    } else if (trackClasses[t] === 'constant') {
      const n = kind === 0 ? 4 : 3;
      const v: number[] = [];
      for (let c = 0; c < n; c++) {
        v.push(view.getFloat32(at, true));
        at += 4;
      }
      if (kind === 0) {
        const len = Math.sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2] + v[3] * v[3]);
        base.set(len > 0 ? v.map((x) => x * (1 / len)) : [0, 0, 0, 1], o);
      } else {
        base.set(v, o);
      }
    }
  }

  // 5. Clip ranges: [min, extent] per component, 4 components for rotations.
  if (view.getUint32(68, true) !== at) throw new Error('clip ranges offset');
  const clipRanges: Array<Array<[number, number]>> = [];
  for (const t of animatedTracks) {
    const ranges: Array<[number, number]> = [];
    if (t % 3 === 0) {
      for (let c = 0; c < 4; c++) {
        ranges.push([view.getUint16(at, true) / 32767 - 1, view.getUint16(at + 2, true) / 32767]);
        at += 4;
      }
    } else {
      for (let c = 0; c < 3; c++) {
        ranges.push([view.getFloat32(at, true), view.getFloat32(at + 4, true)]);
        at += 8;
      }
    }
    clipRanges.push(ranges);
  }

  // 6. Rotation references.
  if (view.getUint32(72, true) !== at) throw new Error('rotation references offset');
  const refs: Array<[number, number, number, number] | undefined> = [];
  for (const t of animatedTracks) {
    if (t % 3 !== 0) {
      refs.push(undefined);
      continue;
    }
    const x = view.getInt16(at, true) / 32767,
      y = view.getInt16(at + 2, true) / 32767,
      z = view.getInt16(at + 4, true) / 32767;
    const w2 = 1 - x * x - y * y - z * z;
    // Each component float32 (the rotation arithmetic is float32).
    refs.push([Math.fround(x), Math.fround(y), Math.fround(z), w2 > 0 ? Math.fround(Math.sqrt(w2)) : 0]);
    at += 6;
  }
  at = align4(at);

  // 7. Node indices (optional).
  let nodeIndices: number[] | undefined;
  if (hasNodeIndices) {
    if (view.getUint32(76, true) !== at) throw new Error('node indices offset');
    nodeIndices = [];
    for (let b = 0; b < boneCount; b++) nodeIndices.push(view.getUint32(at + 4 * b, true));
    at += 4 * boneCount;
  } else if (view.getUint32(76, true) !== 0) {
    throw new Error('node indices offset without node indices');
  }

  // 8. Key times (optional): f32 per sample, right after the node indices.
  let keyTimes: number[] | undefined;
  if (hasKeyTimes) {
    keyTimes = [];
    for (let k = 0; k < sampleCount; k++) keyTimes.push(view.getFloat32(at + 4 * k, true));
    at += 4 * sampleCount;
  }

  // 8b. Additive record (optional): 16 bytes right before the segments.
  let additive: ReferenceClip['additive'];
  if (isAdditive) {
    additive = {
      mode: view.getUint8(at),
      reference: view.getUint8(at + 1),
      frame: view.getUint32(at + 4, true),
      time: view.getFloat64(at + 8, true),
    };
    if (additive.mode !== 1 || additive.reference > 1 || view.getUint16(at + 2, true) !== 0)
      throw new Error('additive record');
    at += 16;
  }
  if (view.getUint32(80, true) !== at) throw new Error('segments offset');

  // 9. Segments.
  const keys: Float64Array[] = [];
  const rates: number[][] = [];
  for (let s = 0; s < segmentCount; s++) {
    const segmentStart = at;
    const keyCount = s === segmentCount - 1 ? sampleCount - SEGMENT_SIZE * s : SEGMENT_SIZE;
    const segmentRates: number[] = [];
    const drops: number[] = [];
    const bits: number[][] = [];
    for (let j = 0; j < animatedCount; j++) {
      const rateByte = bytes[segmentStart + j];
      const rate = rateByte & 0x3f;
      segmentRates.push(rate);
      drops.push(animatedTracks[j] % 3 === 0 ? rateByte >> 6 : 3);
      if (rate === 0) {
        bits.push([0, 0, 0]);
        continue;
      }
      if (rate === 32) {
        bits.push([32, 32, 32]);
        continue;
      }
      const extents = [0, 1, 2].map(
        (i) => (slotByte(segmentStart, j, i, 1) / 255) * clipRanges[j][storedComponent(i, drops[j])][1],
      );
      const widest = Math.max(...extents);
      bits.push(
        extents.map((e) => {
          const need = e * (2 ** rate - 1);
          let b = 0;
          while (b < rate && (2 ** b - 1) * widest < need) b++;
          return b;
        }),
      );
    }
    rates.push(segmentRates);
    const keyBits = bits.reduce((sum, b) => sum + b[0] + b[1] + b[2], 0);
    const dataStart = segmentStart + align4(7 * animatedCount);

    for (let k = 0; k < keyCount; k++) {
      const pose = Float64Array.from(base);
      let bit = k * keyBits;
      for (let j = 0; j < animatedCount; j++) {
        const t = animatedTracks[j];
        const bone = Math.floor(t / 3),
          kind = t % 3;
        const values: number[] = [];
        for (let i = 0; i < 3; i++) {
          const [clipMin, clipExtent] = clipRanges[j][storedComponent(i, drops[j])];
          const rate = segmentRates[j];
          if (rate === 0) {
            const q16 = slotByte(segmentStart, j, i, 0) + 256 * slotByte(segmentStart, j, i, 1);
            values.push(Math.fround(clipMin + (q16 / 65535) * clipExtent)); // segmentConstant: float32 by definition
            continue;
          }
          const q = readBitsOneByOne(dataStart, bit, bits[j][i]);
          bit += bits[j][i];
          if (rate === 32) {
            values.push(floatFromBitPattern(q));
            continue;
          }
          // Offset and step are float32 by definition; offset + q · step is float64.
          const offset = Math.fround(clipMin + (slotByte(segmentStart, j, i, 0) / 255) * clipExtent);
          const inverse = bits[j][i] === 0 ? 0 : 1 / (2 ** bits[j][i] - 1);
          const step = Math.fround((slotByte(segmentStart, j, i, 1) / 255) * clipExtent * inverse);
          values.push(offset + q * step);
        }
        if (kind === 0) {
          // Rotation arithmetic: every operation float32 (f), in the order the spec writes it.
          const f = Math.fround;
          const [a, b, c] = values.map(f);
          const t2 = f(f(f(1 - f(a * a)) - f(b * b)) - f(c * c));
          const d = t2 > 0 ? f(Math.sqrt(t2)) : 0;
          const delta = [a, b, c];
          delta.splice(drops[j], 0, d);
          const [dx, dy, dz, dw] = delta;
          const [rx, ry, rz, rw] = refs[j]!;
          const q = [
            f(f(f(f(rw * dx) + f(rx * dw)) + f(ry * dz)) - f(rz * dy)),
            f(f(f(f(rw * dy) - f(rx * dz)) + f(ry * dw)) + f(rz * dx)),
            f(f(f(f(rw * dz) + f(rx * dy)) - f(ry * dx)) + f(rz * dw)),
            f(f(f(f(rw * dw) - f(rx * dx)) - f(ry * dy)) - f(rz * dz)),
          ];
          const len2 = f(f(f(f(q[0] * q[0]) + f(q[1] * q[1])) + f(q[2] * q[2])) + f(q[3] * q[3]));
          const inv = f(1 / f(Math.sqrt(len2)));
          pose.set(len2 > 0 ? q.map((v) => f(v * inv)) : [0, 0, 0, 1], bone * 10);
        } else {
          pose.set(values, bone * 10 + (kind === 1 ? 4 : 7));
        }
      }
      keys.push(pose.map((v) => Math.fround(v)));
    }
    at = dataStart + 4 * Math.ceil((keyCount * keyBits) / 32);
  }

  // 10. Names.
  let name: string | undefined;
  let boneNames: string[] | undefined;
  if (hasNames) {
    if (view.getUint32(84, true) !== at) throw new Error('names offset');
    const decoder = new TextDecoder('utf-8', { fatal: true });
    const strings: string[] = [];
    for (let i = 0; i <= boneCount; i++) {
      const length = view.getUint16(at, true);
      strings.push(decoder.decode(bytes.subarray(at + 2, at + 2 + length)));
      at += 2 + length;
    }
    [name, ...boneNames] = strings;
    at = align4(at);
  } else if (view.getUint32(84, true) !== 0) {
    throw new Error('names offset without names');
  }
  if (at !== bytes.length) throw new Error('trailing bytes');
  return {
    version,
    boneCount,
    sampleCount,
    sampleRate,
    startTime,
    duration,
    unit,
    parents,
    name,
    boneNames,
    nodeIndices,
    keyTimes,
    additive,
    trackClasses,
    channels,
    steps,
    rates,
    keys,
  };

  /** Byte `byte` (0: min or low, 1: extent or high) of slot `slot` of animated track `j`'s range slot. */
  function slotByte(segmentStart: number, j: number, slot: number, byte: number): number {
    return bytes[segmentStart + animatedCount + 6 * j + 2 * slot + byte];
  }

  /** An unsigned integer of `count` bits at stream bit `bit`, least significant bit first. */
  function readBitsOneByOne(dataStart: number, bit: number, count: number): number {
    let value = 0;
    for (let i = 0; i < count; i++) {
      const p = bit + i;
      const b = (bytes[dataStart + Math.floor(p / 8)] >> (p % 8)) & 1;
      value += b * 2 ** i;
    }
    return value;
  }
}

/** The delta component that stored slot `slot` holds when `drop` is left out. */
function storedComponent(slot: number, drop: number): number {
  return slot < drop ? slot : slot + 1;
}

function floatFromBitPattern(pattern: number): number {
  const view = new DataView(new ArrayBuffer(4));
  view.setUint32(0, pattern, true);
  return view.getFloat32(0, true);
}
