/**
 * Argument parsers for commander options: each validates and throws commander's
 * InvalidArgumentError, so that a bad value is a usage error (exit 2) naming the option.
 */
import { InvalidArgumentError } from 'commander';

import {
  ERROR_METRICS,
  LENGTH_UNITS,
  isErrorMetric,
  isLengthUnit,
  parseLength,
  type ErrorMetric,
  type LengthUnit,
} from '../index.js';

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

/** Parses an error metric name (`vertices`, `shell`). */
export function parseMetricArg(value: string): ErrorMetric {
  if (!isErrorMetric(value)) throw new InvalidArgumentError(`expected one of ${ERROR_METRICS.join(', ')}`);
  return value;
}

/** Parses a finite number greater than 0. */
export function parsePositiveArg(value: string): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n) || n <= 0)
    throw new InvalidArgumentError('expected a number greater than 0');
  return n;
}

/** Parses a whole number ≥ 1. */
export function parseCountArg(value: string): number {
  const n = Number(value);
  if (!/^\s*\d+\s*$/.test(value) || !Number.isSafeInteger(n) || n < 1)
    throw new InvalidArgumentError('expected a whole number >= 1');
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
  const index = Number(m[1]),
    count = Number(m[2]);
  if (count < 1 || index < 1 || index > count)
    throw new InvalidArgumentError(`expected 1 <= i <= n, got ${index}/${count}`);
  return { index, count };
}

/** A number with an optional `ms` or `s` suffix; `bare` is the unit of a number without one. */
function parseDuration(value: string, bare: 's' | 'ms', allowNegative: boolean): number {
  const m = /^\s*([+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:e[+-]?\d+)?)\s*(ms|s)?\s*$/i.exec(value);
  const example = bare === 's' ? '1.5, 1.5s or 1500ms' : '100ms, 0.1s or 100';
  if (!m) throw new InvalidArgumentError(`expected a duration such as ${example}`);
  const unit = (m[2]?.toLowerCase() ?? bare) as 's' | 'ms';
  const n = Number(m[1]);
  if (!Number.isFinite(n)) throw new InvalidArgumentError('expected a finite duration');
  if (!allowNegative && n < 0) throw new InvalidArgumentError('expected a duration of 0 or more');
  const seconds = unit === 's' ? n : n / 1000;
  return bare === 's' ? seconds : seconds * 1000;
}

/** Parses a time in seconds: `1.5`, `1.5s` or `1500ms` (negative allowed: `--loop wrap`). */
export function parseSecondsArg(value: string): number {
  return parseDuration(value, 's', true);
}

/** Parses a duration in milliseconds: `100ms`, `0.1s` or a bare number of milliseconds. */
export function parseMillisecondsArg(value: string): number {
  return parseDuration(value, 'ms', false);
}
