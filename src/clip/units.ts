/**
 * Length units. A clip knows the unit its translations are in; thresholds and shell
 * distances are given with a unit and converted to the clip's.
 */
import { BonepressError } from '../shared/errors.js';

/** Supported length units. */
export const LENGTH_UNITS = ['mm', 'cm', 'm', 'in', 'ft'] as const;
/** A length unit name. */
export type LengthUnit = (typeof LENGTH_UNITS)[number];

/** Metres per unit. */
export const METRES_PER_UNIT: Readonly<Record<LengthUnit, number>> = {
  mm: 0.001,
  cm: 0.01,
  m: 1,
  in: 0.0254,
  ft: 0.3048,
};

/** A length with its unit, e.g. `{ value: 3, unit: 'cm' }`. */
export interface Length {
  readonly value: number;
  readonly unit: LengthUnit;
}

/** Thrown when a length or unit string cannot be understood. */
export class UnitError extends BonepressError {
  override readonly name = 'UnitError';
  declare readonly code: 'BAD_LENGTH';
  constructor(message: string) {
    super('BAD_LENGTH', message);
  }
}

/** True when `s` names a supported unit. */
export function isLengthUnit(s: string): s is LengthUnit {
  return (LENGTH_UNITS as readonly string[]).includes(s);
}

const LENGTH_RE = /^\s*([+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)\s*([a-z]+)?\s*$/;

/**
 * Parses `"0.01cm"`, `"3 cm"`, `"1m"`, `"30mm"`. A bare number takes `defaultUnit`
 * (no default: a bare number is an error). Negative, zero (unless `allowZero`), NaN and
 * infinite values are rejected with a {@link UnitError}.
 */
export function parseLength(text: string, defaultUnit?: LengthUnit, allowZero = false): Length {
  const m = LENGTH_RE.exec(text);
  if (!m) throw new UnitError(`"${text}" is not a length (expected a number and a unit, e.g. 0.01cm, 3cm, 1m)`);
  const value = Number(m[1]);
  const unitText = m[2];
  let unit: LengthUnit;
  if (unitText === undefined) {
    if (!defaultUnit) throw new UnitError(`"${text}" has no unit (expected one of ${LENGTH_UNITS.join(', ')})`);
    unit = defaultUnit;
  } else if (isLengthUnit(unitText)) {
    unit = unitText;
  } else {
    throw new UnitError(`"${text}": unknown unit "${unitText}" (expected one of ${LENGTH_UNITS.join(', ')})`);
  }
  if (!Number.isFinite(value) || value < 0 || (!allowZero && value === 0)) {
    throw new UnitError(`"${text}": a length must be a finite number greater than ${allowZero ? 'or equal to ' : ''}0`);
  }
  return { value, unit };
}

/** Converts a length into `unit`. */
export function convertLength(length: Length, unit: LengthUnit): number {
  if (length.unit === unit) return length.value;
  return (length.value * METRES_PER_UNIT[length.unit]) / METRES_PER_UNIT[unit];
}

/** Formats a length for humans, e.g. `0.0100cm`. */
export function formatLength(value: number, unit: LengthUnit, digits = 4): string {
  return `${value.toFixed(digits)}${unit}`;
}
