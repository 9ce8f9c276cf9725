import { describe, expect, it } from 'vitest';

import { PoseDumpError } from '../../src/readers/pose-dump.js';
import { ClipError } from '../../src/clip/skeleton.js';
import { UnitError } from '../../src/clip/units.js';
import { MetricError } from '../../src/metric/error-metric.js';
import { OptionsError } from '../../src/compress/options.js';
import { INTERNAL_ERROR, OutputError, isInputError, toFailure } from '../../src/node/failure.js';
import { ParseError } from '../../src/readers/errors.js';
import { BonepressError, FormatError } from '../../src/runtime/errors.js';

describe('one error base class with a code', () => {
  const inputErrors: BonepressError[] = [
    new ParseError('a.bvh', 3, 'expected "{"', 'SYNTAX'),
    new FormatError('BAD_MAGIC', 'not a .bpk', 0),
    new OptionsError('--shell-bone: no bone "X"'),
    new UnitError('no unit in "3"'),
    new PoseDumpError('d.json', 'rotations: expected an array'),
    new ClipError('bad parent', 'BAD_SKELETON'),
    new MetricError('20 samples, but a.bvh has 21'),
    new OutputError('OUTPUT_CLASH', 'its output x.bpk is the input x.bpk'),
  ];

  it('every input error is a BonepressError with a code, and fails as input with that code', () => {
    for (const error of inputErrors) {
      expect(error).toBeInstanceOf(BonepressError);
      expect(error.code).toMatch(/^[A-Z_]+$/);
      expect(isInputError(error)).toBe(true);
      expect(toFailure('f', error).code).toBe(error.code);
    }
  });

  it('anything else is internal, with its stack', () => {
    const bug = new TypeError('x is undefined');
    expect(isInputError(bug)).toBe(false);
    expect(toFailure('f', bug)).toMatchObject({ code: INTERNAL_ERROR, message: 'x is undefined' });
    expect(toFailure('f', bug).stack).toContain('TypeError');
  });
});
