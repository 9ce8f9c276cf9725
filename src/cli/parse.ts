/**
 * Argument parsers for commander options: each validates and throws commander's
 * InvalidArgumentError, so that a bad value is a usage error (exit 2) naming the option.
 */
import { InvalidArgumentError } from 'commander';

import { LENGTH_UNITS, isLengthUnit, parseLength, type LengthUnit } from '../clip/units.js';

/** Checks a length such as `0.01cm`, `3cm`, `1m`, `30mm`; returns the text unchanged. */
export function parseLengthArg(value: string): string {
  try {
    parseLength(value);
  } catch (error) {
    throw new InvalidArgumentError((error as Error).message);
  }
  return value;
}

/** Collects repeated `--shell-bone NAME=LENGTH` into a record by bone name. */
export function collectShellBone(value: string, previous: Record<string, string> = {}): Record<string, string> {
  const at = value.lastIndexOf('=');
  if (at <= 0) throw new InvalidArgumentError(`expected NAME=LENGTH (e.g. Hips=1m), got "${value}"`);
  const name = value.slice(0, at);
  const length = parseLengthArg(value.slice(at + 1));
  return { ...previous, [name]: length };
}

/** Parses a length unit name (`mm`, `cm`, `m`, `in`, `ft`). */
export function parseUnitArg(value: string): LengthUnit {
  if (!isLengthUnit(value)) throw new InvalidArgumentError(`expected one of ${LENGTH_UNITS.join(', ')}`);
  return value;
}

/** Parses a finite number greater than 0. */
export function parsePositiveArg(value: string): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n) || n <= 0) throw new InvalidArgumentError('expected a number greater than 0');
  return n;
}

/** Parses a finite number (any sign). */
export function parseNumberArg(value: string): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n)) throw new InvalidArgumentError('expected a finite number');
  return n;
}

/** Parses a whole number ≥ 1. */
export function parseCountArg(value: string): number {
  const n = Number(value);
  if (!/^\s*\d+\s*$/.test(value) || !Number.isSafeInteger(n) || n < 1) throw new InvalidArgumentError('expected a whole number >= 1');
  return n;
}

/** A `--shard i/n` value: slice `index` (1-based) of `count`. */
export interface Shard {
  readonly index: number;
  readonly count: number;
}

/** Parses `i/n` with 1 ≤ i ≤ n. */
export function parseShardArg(value: string): Shard {
  const m = /^\s*(\d+)\s*\/\s*(\d+)\s*$/.exec(value);
  if (!m) throw new InvalidArgumentError('expected i/n, e.g. 1/4');
  const index = Number(m[1]), count = Number(m[2]);
  if (count < 1 || index < 1 || index > count) throw new InvalidArgumentError(`expected 1 <= i <= n, got ${index}/${count}`);
  return { index, count };
}
