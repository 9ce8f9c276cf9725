import { describe, expect, it } from 'vitest';

import { PoseDumpError } from '../../src/readers/pose-dump.js';
import { ClipError } from '../../src/clip/skeleton.js';
import { UnitError } from '../../src/clip/units.js';
import { MetricError } from '../../src/metric/error-metric.js';
import { OptionsError } from '../../src/compress/options.js';
import { INTERNAL_ERROR, OutputError, isInputError, toFailure } from '../../src/node/failure.js';
import { ParseError } from '../../src/readers/errors.js';
import { BonepressError, FormatError } from '../../src/runtime/errors.js';
import { GltfExtensionError } from '../../src/gltf-transform/extension.js';
import { ManifestError } from '../../src/node/manifest.js';
import { CacheEntryError } from '../../src/node/cache.js';
import { NetError } from '../../src/net/bit-stream.js';
import { BenchError } from '../../src/bench/run.js';

describe('one error base class with a code', () => {
  const inputErrors: BonepressError[] = [
    new ParseError('SYNTAX', 'expected "{"', 'a.bvh', 3),
    new FormatError('BAD_MAGIC', 'not a .bpk', 0),
    new OptionsError('--shell-bone: no bone "X"'),
    new UnitError('no unit in "3"'),
    new PoseDumpError('rotations: expected an array', 'd.json'),
    new ClipError('BAD_SKELETON', 'bad parent'),
    new MetricError('20 samples, but a.bvh has 21'),
    new OutputError('OUTPUT_CLASH', 'its output x.bpk is the input x.bpk'),
    new GltfExtensionError(
      'expected an integer',
      'animations[0].extensions.BONEPRESS_animation_compression.bufferView',
    ),
    new ManifestError('BAD_MANIFEST', 'not JSON', 'm.json'),
    new CacheEntryError('cache entry: truncated'),
    new NetError('BAD_CHECKSUM', 'checksum mismatch', 12),
    new BenchError('EMPTY_CORPUS', 'no clip files in x'),
  ];

  it('every input error is a BonepressError with a code, and fails as input with that code', () => {
    for (const error of inputErrors) {
      expect(error).toBeInstanceOf(BonepressError);
      expect(error.code).toMatch(/^[A-Z_]+$/);
      expect(isInputError(error)).toBe(true);
      expect(toFailure('f', error).code).toBe(error.code);
    }
  });

  it('a failure reads the code and the message without the file from the base class alone', () => {
    for (const error of inputErrors)
      expect(toFailure('f', error)).toEqual({ file: 'f', code: error.code, message: error.detail });
    // The messages users see are the ones each class always wrote; `detail` drops only the file.
    const parse = new ParseError('BAD_VALUE', 'value "x" is not a number', 'walk.bvh', 212, 7);
    expect([parse.message, parse.detail, parse.file, parse.problem]).toEqual([
      'walk.bvh:212:7: value "x" is not a number',
      'line 212, column 7: value "x" is not a number',
      'walk.bvh',
      'value "x" is not a number',
    ]);
    const binary = new ParseError('TRUNCATED', 'corrupt GLB: chunk past the end', 'a.glb');
    expect([binary.message, binary.detail, binary.line]).toEqual([
      'a.glb: corrupt GLB: chunk past the end',
      'corrupt GLB: chunk past the end',
      0,
    ]);
    const dump = new PoseDumpError('rotations: expected an array', 'd.json');
    expect([dump.message, dump.detail, dump.file]).toEqual([
      'd.json: rotations: expected an array',
      'rotations: expected an array',
      'd.json',
    ]);
    const format = new FormatError('BAD_MAGIC', 'not a .bpk', 0);
    expect([format.message, format.detail, format.file, format.byteOffset]).toEqual([
      'not a .bpk (at byte 0)',
      'not a .bpk (at byte 0)',
      undefined,
      0,
    ]);
    expect(new NetError('BAD_CHECKSUM', 'checksum mismatch', 12).message).toBe('checksum mismatch (at bit 12)');
    expect(new ManifestError('BAD_MANIFEST', 'not JSON', 'm.json').message).toBe('m.json: not JSON');
    expect(new GltfExtensionError('expected an integer', 'animations[0]').message).toBe(
      'animations[0]: expected an integer',
    );
  });

  it('anything else is internal, with its stack', () => {
    const bug = new TypeError('x is undefined');
    expect(isInputError(bug)).toBe(false);
    expect(toFailure('f', bug)).toMatchObject({ code: INTERNAL_ERROR, message: 'x is undefined' });
    expect(toFailure('f', bug).stack).toContain('TypeError');
  });
});
