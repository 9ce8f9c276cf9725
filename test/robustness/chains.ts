/**
 * Hierarchies `n` joints deep in each source format, for the deep-hierarchy tests: one
 * chain, every joint animated, a few frames. Plain strings built once per test.
 */

/** A BVH chain: HIERARCHY on line 1, then four lines per joint (name, "{", OFFSET, CHANNELS). */
export function bvhChain(n: number, frames: number): string {
  const parts = ['HIERARCHY\n'];
  for (let i = 0; i < n; i++)
    parts.push(`${i === 0 ? 'ROOT' : 'JOINT'} j${i}\n{\nOFFSET 0 1 0\nCHANNELS 3 Zrotation Xrotation Yrotation\n`);
  parts.push('End Site\n{\nOFFSET 0 1 0\n}\n', '}\n'.repeat(n), `MOTION\nFrames: ${frames}\nFrame Time: 0.0333333\n`);
  for (let f = 0; f < frames; f++) {
    const values: string[] = [];
    for (let i = 0; i < n; i++) values.push(`${(f * 3 + i) % 11} ${i % 7} 0`);
    parts.push(values.join(' '), '\n');
  }
  return parts.join('');
}

/** A glTF node chain (node i's child is i + 1) whose last node has two rotation keys. */
export function gltfChain(n: number): string {
  const nodes = Array.from({ length: n }, (_, i) =>
    i + 1 < n
      ? { name: `j${i}`, children: [i + 1], translation: [0, 1, 0] }
      : { name: `j${i}`, translation: [0, 1, 0] },
  );
  const bin = Buffer.from(new Float32Array([0, 1 / 30, 0, 0, 0, 1, 0, 0.1, 0, 0.995]).buffer);
  return JSON.stringify({
    asset: { version: '2.0' },
    nodes,
    buffers: [{ byteLength: bin.byteLength, uri: `data:application/octet-stream;base64,${bin.toString('base64')}` }],
    bufferViews: [
      { buffer: 0, byteOffset: 0, byteLength: 8 },
      { buffer: 0, byteOffset: 8, byteLength: 32 },
    ],
    accessors: [
      { bufferView: 0, componentType: 5126, count: 2, type: 'SCALAR' },
      { bufferView: 1, componentType: 5126, count: 2, type: 'VEC4' },
    ],
    animations: [
      { channels: [{ sampler: 0, target: { node: n - 1, path: 'rotation' } }], samplers: [{ input: 0, output: 1 }] },
    ],
  });
}

/** An ACL SJSON chain: bone i on line 4 + i, then one rotation track per bone. */
export function sjsonChain(n: number, samples: number): string {
  const parts = [
    `version = 5\nclip = { name = "chain" num_samples = ${samples} sample_rate = 30 is_binary_exact = false }\nbones = [\n`,
  ];
  for (let i = 0; i < n; i++)
    parts.push(`{ name = "j${i}" parent = "${i > 0 ? `j${i - 1}` : ''}" bind_translation = [0, 1, 0] }\n`);
  parts.push(']\ntracks = [\n');
  for (let i = 0; i < n; i++) {
    const keys = Array.from({ length: samples }, (_, s) => `[0, ${(((i + s) % 5) / 100).toFixed(2)}, 0, 1]`).join(', ');
    parts.push(`{ name = "j${i}" rotations = [${keys}] }\n`);
  }
  parts.push(']\n');
  return parts.join('');
}
