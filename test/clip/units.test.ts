import { describe, expect, it } from 'vitest';

import { convertLength, formatLength, isLengthUnit, parseLength, UnitError } from '../../src/clip/units.js';

import { thrownBy } from '../utils/errors.js';

describe('parseLength', () => {
  it.each([
    ['0.01cm', 0.01, 'cm'],
    ['3cm', 3, 'cm'],
    ['1m', 1, 'm'],
    ['30mm', 30, 'mm'],
    [' 3 cm ', 3, 'cm'],
    ['.5in', 0.5, 'in'],
    ['1e-2m', 0.01, 'm'],
    ['2ft', 2, 'ft'],
  ])('parses %j', (text, value, unit) => {
    expect(parseLength(text)).toEqual({ value, unit });
  });

  it('gives a bare number the default unit, and rejects it without one', () => {
    expect(parseLength('2.5', 'cm')).toEqual({ value: 2.5, unit: 'cm' });
    expect(() => parseLength('2.5')).toThrow(/has no unit/);
  });

  it.each([
    ['', /is not a length/],
    ['cm', /is not a length/],
    ['abc', /is not a length/],
    ['1.2.3cm', /is not a length/],
    ['NaNcm', /is not a length/],
    ['3 c m', /is not a length/],
    ['3furlongs', /unknown unit "furlongs"/],
    ['-1cm', /greater than 0/],
    ['0cm', /greater than 0/],
    ['1e400cm', /finite number/],
  ])('rejects %j', (text, message) => {
    const error = thrownBy(() => parseLength(text, 'cm'), UnitError);
    expect(error.code).toBe('BAD_LENGTH');
    expect(error.message).toMatch(message);
  });

  it('accepts zero only when asked', () => {
    expect(parseLength('0mm', undefined, true)).toEqual({ value: 0, unit: 'mm' });
    expect(() => parseLength('-0.1mm', undefined, true)).toThrow(UnitError);
  });
});

describe('convertLength and helpers', () => {
  it('converts between units', () => {
    expect(convertLength({ value: 30, unit: 'mm' }, 'cm')).toBeCloseTo(3, 12);
    expect(convertLength({ value: 1, unit: 'm' }, 'cm')).toBeCloseTo(100, 12);
    expect(convertLength({ value: 0.01, unit: 'cm' }, 'm')).toBeCloseTo(0.0001, 15);
    expect(convertLength({ value: 1, unit: 'ft' }, 'in')).toBeCloseTo(12, 12);
    expect(convertLength({ value: 3, unit: 'cm' }, 'cm')).toBe(3);
  });

  it('knows its units and formats lengths', () => {
    expect(isLengthUnit('cm')).toBe(true);
    expect(isLengthUnit('km')).toBe(false);
    expect(formatLength(0.01, 'cm')).toBe('0.0100cm');
    expect(formatLength(1.23456, 'm', 2)).toBe('1.23m');
  });
});
