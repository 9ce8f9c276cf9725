import { describe, expect, it } from 'vitest';

import type { RawClip } from '../../src/clip/raw-clip.js';
import { readAclSjson, parseSjson } from '../../src/readers/acl-sjson.js';
import { ParseError } from '../../src/readers/errors.js';

/** Bits of a float64 as ACL's binary-exact writer prints them (upper-case hex, no padding). */
function hex(value: number): string {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, value);
  return view.getBigUint64(0).toString(16).toUpperCase();
}

const S = Math.SQRT1_2;

/** A small clip in the style of ACL's format reference, with bones listed child first. */
const CLIP = `// Raw clip, hand written
version = 5   // ACL 2.x

clip =
{
\tname = "wave"
\tnum_samples = 3
\tsample_rate = 30
\tis_binary_exact = false
\tadditive_format = "none"
}

/* Settings are ACL's own;
   bonepress ignores them. */
settings = {
\talgorithm_name = "uniformly_sampled"
\tsegmenting = { ideal_num_samples = 16, max_num_samples = 31 }
\terror_threshold: 0.01
}

bones =
[
\t{
\t\tname = "hand"
\t\tparent = "arm"
\t\tvertex_distance = 0.05
\t\tbind_translation = [ 0.3, 0.0, 0.0 ]
\t}
\t{
\t\tname = "root"
\t\tparent = ""
\t\tvertex_distance = 1.0
\t\tbind_rotation = [ 0.0, 0.0, 0.0, 1.0 ]
\t\tbind_translation = [ 0.0, 1.0, 0.0 ]
\t\tbind_scale = [ 1.0, 1.0, 1.0 ]
\t},
\t{ name: "arm", parent: "root", vertex_distance: 0.1, bind_rotation: [ 0, 0, ${S}, ${S} ], bind_translation: [ 0.2, 0, 0 ] }
]

tracks =
[
\t{
\t\tname = "root"
\t\ttranslations =
\t\t[
\t\t\t[ 0.0, 1.0, 0.0 ]
\t\t\t[ 0.5, 1.0, 0.0 ]
\t\t\t[ 1.0, 1.0, 0.0 ]
\t\t]
\t}
\t{
\t\tname = "hand"
\t\trotations = [ [ 0, 0, 0, 1 ], [ 0, 0, 0.5, 0.8660254 ], [ 0, 0, ${S}, ${S} ] ]
\t\tscales = [ [ 1, 1, 1 ], [ 2, 2, 2 ], [ 1, 1, 1 ] ]
\t}
]
`;

/** Sample s of one bone's track. */
function at(clip: RawClip, track: 'rotations' | 'translations' | 'scales', bone: number, s: number): number[] {
  const width = track === 'rotations' ? 4 : 3;
  const i = (bone * clip.sampleCount + s) * width;
  return Array.from(clip[track].subarray(i, i + width));
}

function parseError(text: string, file = 'bad.acl.sjson'): ParseError {
  try {
    readAclSjson(text, file);
  } catch (e) {
    expect(e).toBeInstanceOf(ParseError);
    return e as ParseError;
  }
  throw new Error('expected a ParseError');
}

describe('readAclSjson', () => {
  const clip = readAclSjson(CLIP, 'wave.acl.sjson');

  it('reads the clip header and orders bones parents first', () => {
    expect(clip.name).toBe('wave');
    expect(clip.sampleCount).toBe(3);
    expect(clip.sampleRate).toBe(30);
    expect(clip.unit).toBe('m');
    expect(clip.skeleton.boneNames).toEqual(['root', 'arm', 'hand']);
    expect(Array.from(clip.skeleton.parents)).toEqual([-1, 0, 1]);
  });

  it('takes vertex_distance as the shell distance and the bind transforms as the default pose', () => {
    expect(Array.from(clip.skeleton.shellDistances)).toEqual([1, 0.1, 0.05].map(Math.fround));
    const pose = Array.from(clip.skeleton.defaultPose);
    expect(pose.slice(0, 10)).toEqual([0, 0, 0, 1, 0, 1, 0, 1, 1, 1]);
    expect(pose.slice(10, 20)).toEqual([0, 0, S, S, 0.2, 0, 0, 1, 1, 1].map(Math.fround));
    expect(pose.slice(20, 30)).toEqual([0, 0, 0, 1, 0.3, 0, 0, 1, 1, 1].map(Math.fround));
  });

  it('reads tracks, and holds the bind value where an array or a whole track is missing', () => {
    expect(at(clip, 'translations', 0, 1)).toEqual([0.5, 1, 0]);
    expect(at(clip, 'rotations', 0, 2)).toEqual([0, 0, 0, 1]); // root has no rotations: bind
    expect(at(clip, 'rotations', 1, 1)).toEqual([0, 0, S, S].map(Math.fround)); // arm has no track: bind
    expect(at(clip, 'translations', 2, 2)).toEqual([0.3, 0, 0].map(Math.fround)); // hand has no translations: bind
    expect(at(clip, 'rotations', 2, 1)).toEqual([0, 0, 0.5, 0.8660254].map(Math.fround));
    expect(at(clip, 'scales', 2, 1)).toEqual([2, 2, 2]);
  });

  it('reads binary-exact hexadecimal float64 values bit for bit', () => {
    const q = [0.1, -0.2, 0.3];
    const w = Math.sqrt(1 - q[0] ** 2 - q[1] ** 2 - q[2] ** 2);
    const text = `version = 5
clip = { name = "exact", num_samples = 1, sample_rate = 60, is_binary_exact = true }
bones = [ { name = "root", parent = "", vertex_distance = "${hex(3)}", bind_translation = [ "${hex(0.1)}", "0", "${hex(-2.5)}" ] } ]
tracks = [ { name = "root", rotations = [ [ "${hex(q[0])}", "${hex(q[1])}", "${hex(q[2])}", "${hex(w)}" ] ] } ]`;
    const exact = readAclSjson(text, 'exact.acl.sjson', { unit: 'cm' });
    expect(exact.unit).toBe('cm');
    expect(exact.skeleton.shellDistances[0]).toBe(3);
    expect(Array.from(exact.skeleton.defaultPose.subarray(4, 7))).toEqual([0.1, 0, -2.5].map(Math.fround));
    expect(Array.from(exact.rotations)).toEqual([...q, w].map(Math.fround));
  });

  it('names a clip without a name after its file, and accepts an explicit root object', () => {
    const text = `{ version: 3, clip: { num_samples: 1, sample_rate: 30 }, bones: [ { name: "a", parent: "", vertex_distance: 1 } ] }`;
    const c = readAclSjson(text, 'some/dir/idle.acl.sjson');
    expect(c.name).toBe('idle');
    expect(Array.from(c.rotations)).toEqual([0, 0, 0, 1]);
  });
});

describe('readAclSjson: malformed input', () => {
  it('reports syntax errors with line and column', () => {
    const e = parseError('version = 5\nclip = {\n  name = "x"\n  num_samples = 2,,\n}\n');
    expect(e.line).toBe(4);
    expect(e.column).toBe(19);
    expect(e.message).toMatch(/^bad\.acl\.sjson:4:19: /);
    expect(parseError('version = 5\nclip = { name = "x\n}').message).toMatch(/bad\.acl\.sjson:2:17: unclosed string/);
    expect(parseError('version = 5\n/* never closed').code).toBe('TRUNCATED');
    expect(parseError('version = 5\nbones = [ { name = "a" }').message).toMatch(/unclosed array/);
    expect(parseError('version = 5\nversion = 6').message).toMatch(/2:1: duplicate key "version"/);
  });

  const header = 'version = 5\nclip = { name = "c", num_samples = 2, sample_rate = 30 }\n';
  const bone = (name: string, parent: string) => `{ name = "${name}", parent = "${parent}", vertex_distance = 1 }`;

  it('rejects a track with the wrong number of samples, at the array', () => {
    const text = `${header}bones = [ ${bone('a', '')} ]\ntracks = [ { name = "a"\n  rotations = [ [ 0, 0, 0, 1 ] ] } ]`;
    const e = parseError(text);
    expect(e.message).toBe('bad.acl.sjson:5:15: track "a" has 1 rotations, expected num_samples = 2');
  });

  it('(regression R1) checks every track against num_samples before allocating the clip', () => {
    // 2 bones × 20,000,000 samples is under the bone-sample limit, but one sample of data
    // cannot back it; allocating first took 1.6 GB. The short array is reported where it starts.
    const huge =
      'version = 5\nclip = { name = "c", num_samples = 20000000, sample_rate = 30 }\n' +
      `bones = [ ${bone('a', '')} ${bone('b', 'a')} ]\ntracks = [ { name = "a" }\n  { name = "b", scales = [ [ 1, 1, 1 ] ] } ]`;
    const e = parseError(huge);
    expect(e.code).toBe('TRUNCATED');
    expect(e.message).toBe('bad.acl.sjson:5:26: track "b" has 1 scales, expected num_samples = 20000000');
    // Too many samples is a mismatch, not a truncation.
    const long = `${header}bones = [ ${bone('a', '')} ]\ntracks = [ { name = "a", rotations = [ [ 0, 0, 0, 1 ] [ 0, 0, 0, 1 ] [ 0, 0, 0, 1 ] ] } ]`;
    expect(parseError(long).code).toBe('BAD_VALUE');
  });

  it('(regression R1) num_samples × bones over the limit is a LIMIT error at num_samples', () => {
    for (const [samples, bones] of [
      ['1000000000', 1],
      ['1e300', 1],
      ['1000000', 100],
    ] as const) {
      const boneList = Array.from({ length: bones }, (_, i) => bone(`b${i}`, i === 0 ? '' : `b${i - 1}`)).join(' ');
      const e = parseError(
        `version = 5\nclip = { name = "c", num_samples = ${samples}, sample_rate = 30 }\nbones = [ ${boneList} ]`,
      );
      expect(e.code, samples).toBe('LIMIT');
      expect([e.line, e.column], samples).toEqual([2, 36]);
      expect(e.problem).toMatch(/bone samples$/);
    }
  });

  it('rejects samples of the wrong width, non-numbers, zero quaternions and NaN hex', () => {
    const track = (key: string, samples: string) =>
      `${header}bones = [ ${bone('a', '')} ]\ntracks = [ { name = "a", ${key} = [ ${samples} ] } ]`;
    expect(parseError(track('translations', '[ 0, 0 ] [ 0, 0, 0 ]')).message).toMatch(
      /translations\[0\]: expected an array of 3 numbers/,
    );
    expect(parseError(track('scales', '[ 1, "x", 1 ] [ 1, 1, 1 ]')).message).toMatch(
      /scales\[0\]\[1\]: expected a number/,
    );
    expect(parseError(track('rotations', '[ 0, 0, 0, 0 ] [ 0, 0, 0, 1 ]')).message).toMatch(/zero quaternion/);
    const nan = `version = 5\nclip = { name = "c", num_samples = 1, sample_rate = 30, is_binary_exact = true }\nbones = [ { name = "a", parent = "", vertex_distance = "${hex(1)}", bind_scale = [ "7FF8000000000000", "0", "0" ] } ]`;
    expect(parseError(nan).message).toMatch(/bind_scale\[0\] is NaN/);
  });

  it('rejects unknown parents, parent cycles, duplicate bones and tracks for unknown bones', () => {
    expect(parseError(`${header}bones = [ ${bone('a', 'ghost')} ]`).message).toMatch(
      /3:\d+: bone "a" has parent "ghost", which is not a bone/,
    );
    expect(parseError(`${header}bones = [ ${bone('r', '')} ${bone('a', 'b')} ${bone('b', 'a')} ]`).message).toMatch(
      /its own ancestor/,
    );
    expect(parseError(`${header}bones = [ ${bone('a', '')} ${bone('a', '')} ]`).message).toMatch(
      /two bones are named "a"/,
    );
    expect(parseError(`${header}bones = [ ${bone('a', '')} ]\ntracks = [ { name = "b" } ]`).message).toMatch(
      /4:\d+: track "b" names no bone/,
    );
  });

  it('rejects missing sections, bad counts and rates, and what bonepress does not read', () => {
    expect(parseError('clip = {}').message).toMatch(/missing "version"/);
    expect(parseError('version = 9\nclip = {}').code).toBe('UNSUPPORTED');
    expect(parseError('version = 5\n').message).toMatch(/missing "clip"/);
    expect(parseError('version = 5\nclip = { name = "c", num_samples = 0, sample_rate = 30 }').message).toMatch(
      /num_samples must be a whole number ≥ 1/,
    );
    expect(parseError('version = 5\nclip = { name = "c", num_samples = 1, sample_rate = -30 }').message).toMatch(
      /sample_rate must be a positive number/,
    );
    expect(parseError(`${header}`).message).toMatch(/missing "bones"/);
    expect(parseError('version = 5\ntrack_list = { num_samples = 1, sample_rate = 30 }').code).toBe('UNSUPPORTED');
    const additive =
      'version = 5\nclip = { name = "c", num_samples = 1, sample_rate = 30, additive_format = "additive1" }';
    expect(parseError(additive).code).toBe('UNSUPPORTED');
  });
});

describe('parseSjson', () => {
  it('parses bare words, both separators, optional commas and escapes', () => {
    const doc = parseSjson(
      'type = float4f\nkey: "a\\"b\\u0041"\nlist = [1, 2 3,]\nflag = true\nnothing = null\nhex = [ 3F800000 ]',
      't.sjson',
    );
    const e = doc.root.entries;
    expect(e.get('type')).toMatchObject({ kind: 'string', value: 'float4f' });
    expect(e.get('key')).toMatchObject({ kind: 'string', value: 'a"bA' });
    expect(e.get('list')).toMatchObject({ kind: 'array', items: [{ value: 1 }, { value: 2 }, { value: 3 }] });
    expect(e.get('flag')).toMatchObject({ kind: 'boolean', value: true });
    expect(e.get('nothing')).toMatchObject({ kind: 'null' });
    expect(e.get('hex')).toMatchObject({ items: [{ kind: 'string', value: '3F800000' }] });
    expect(doc.position(e.get('list')!.pos)).toEqual({ line: 3, column: 8 });
  });
});
