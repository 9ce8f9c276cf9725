import { describe, expect, it } from 'vitest';
import { BONEPRESS_EXTENSION, readExtensionBones, type ExtensionJson } from '../../src/adapters/gltf-extension-def.js';

/** Reads `ext` against a file of three nodes and one buffer view whose bone tables are `skeletons`. */
function read(ext: Record<string, unknown>, skeletons?: unknown): ReturnType<typeof readExtensionBones> {
  const json: ExtensionJson = {
    nodes: [{}, {}, {}],
    bufferViews: [{}],
    extensions: skeletons === undefined ? undefined : { [BONEPRESS_EXTENSION]: { skeletons } },
  };
  return readExtensionBones(json, ext, (problem) => {
    throw new Error(problem);
  });
}

describe('readExtensionBones', () => {
  it('reads the bone table, then the node bones, then the weights', () => {
    const bones = read(
      { skeleton: 0, nodes: [2], weights: [{ node: 1, scales: [1, 2] }], bufferView: 0, additive: true },
      [{ joints: [0, 1], parents: [-1, 0] }],
    );
    expect(bones).toEqual({
      nodeIndices: [0, 1, 2],
      weights: [{ node: 1, scales: [1, 2], firstBone: 3 }],
      boneCount: 5,
      bufferView: 0,
      parents: [-1, 0],
      additive: true,
    });
  });

  it('refuses every reference outside the file and every malformed list with a message, never a crash', () => {
    const table = [{ joints: [0], parents: [-1] }];
    const cases: [Record<string, unknown>, unknown, RegExp][] = [
      [{ skeleton: 1, bufferView: 0 }, table, /skeleton 1 is not in the file's bone tables/],
      [{ skeleton: 0.5, bufferView: 0 }, table, /skeleton 0\.5 is not/],
      [{ skeleton: 0, bufferView: 0 }, undefined, /skeleton 0 is not/],
      [{ skeleton: 0, bufferView: 0 }, { length: 1 }, /skeleton 0 is not/],
      [{ skeleton: 0, bufferView: 0 }, [null], /bone table 0 has joints that are not node indices/],
      [{ skeleton: 0, bufferView: 0 }, [{ joints: [3], parents: [-1] }], /bone table 0 has joints/],
      [{ skeleton: 0, bufferView: 0 }, [{ joints: [0], parents: [] }], /bone table 0 needs one parent per joint/],
      [{ nodes: [-1], bufferView: 0 }, undefined, /nodes are not node indices/],
      [{ weights: [null], bufferView: 0 }, undefined, /weights need a node index and positive scales each/],
      [{ weights: [{ node: 0, scales: [0] }], bufferView: 0 }, undefined, /positive scales/],
      [{ bufferView: 1 }, undefined, /bufferView 1 is not in the file/],
      [{}, undefined, /bufferView undefined is not in the file/],
    ];
    for (const [ext, skeletons, message] of cases) expect(() => read(ext, skeletons)).toThrow(message);
  });
});
