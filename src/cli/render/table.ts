/**
 * Aligned plain-text tables for the terminal: one header row, a rule, body rows and
 * optional footer rows (TOTAL) under a second rule.
 */
import { convertLength, isLengthUnit } from '../../index.js';

/** Where a column's cells sit. */
export type Align = 'left' | 'right';

/** A column of a {@link renderTable} table. */
export interface Column {
  readonly header: string;
  /** Default `'left'`; use `'right'` for numbers. */
  readonly align?: Align;
}

/** Rows of a table; every row has one cell per column. */
export interface TableRows {
  readonly body: readonly (readonly string[])[];
  /** Rows under a rule after the body, e.g. a TOTAL row. */
  readonly footer?: readonly (readonly string[])[];
}

/** Width of `text` in terminal columns, counting one per code point. */
function widthOf(text: string): number {
  return [...text].length;
}

function pad(text: string, width: number, align: Align): string {
  const fill = ' '.repeat(Math.max(0, width - widthOf(text)));
  return align === 'right' ? fill + text : text + fill;
}

/**
 * Renders `rows` under `columns` as lines joined by `\n` (with a trailing newline), columns
 * separated by two spaces and padded to the widest cell. Missing cells count as empty;
 * trailing spaces are trimmed.
 */
export function renderTable(columns: readonly Column[], rows: TableRows): string {
  const all = [columns.map((c) => c.header), ...rows.body, ...(rows.footer ?? [])];
  const widths = columns.map((_, i) => Math.max(...all.map((row) => widthOf(row[i] ?? ''))));
  const line = (row: readonly string[]): string =>
    columns
      .map((c, i) => pad(row[i] ?? '', widths[i], c.align ?? 'left'))
      .join('  ')
      .trimEnd();
  const rule = widths.map((w) => '-'.repeat(w)).join('  ');
  const out = [line(columns.map((c) => c.header)), rule, ...rows.body.map(line)];
  if (rows.footer && rows.footer.length > 0) {
    if (rows.body.length > 0) out.push(rule);
    out.push(...rows.footer.map(line));
  }
  return out.join('\n') + '\n';
}

/**
 * Renders `label: value` pairs as two aligned columns without header (`info`, `verify`),
 * with a trailing newline.
 */
export function renderFields(fields: readonly (readonly [string, string])[]): string {
  const width = Math.max(0, ...fields.map(([label]) => widthOf(label)));
  return fields.map(([label, value]) => `${pad(label, width, 'left')}  ${value}`.trimEnd()).join('\n') + '\n';
}

/**
 * Formats a length for text output, the one format every command uses: converted from
 * `unit` to `display` (default: the same unit), three significant digits in plain decimals
 * without trailing zeros (`0.00999cm`, `0.01cm`, `3cm`), never an exponent. JSON output
 * keeps the numbers unformatted.
 */
export function formatDistance(value: number, unit: string, display: string = unit): string {
  const converted =
    unit !== display && isLengthUnit(unit) && isLengthUnit(display) ? convertLength({ value, unit }, display) : value;
  return `${formatSignificant(converted)}${display}`;
}

/** `value` with three significant digits in plain decimals, trailing zeros dropped; `-` when not finite. */
export function formatSignificant(value: number, digits = 3): string {
  if (!Number.isFinite(value)) return '-';
  if (value === 0) return '0';
  const magnitude = Math.floor(Math.log10(Math.abs(value)));
  const decimals = Math.min(15, Math.max(0, digits - 1 - magnitude));
  const text = value.toFixed(decimals);
  return text.includes('.') ? text.replace(/\.?0+$/, '') : text;
}

/** Formats a compression ratio for a cell: `12.34`, or `-` when undefined. */
export function formatRatio(ratio: number): string {
  return Number.isFinite(ratio) ? ratio.toFixed(2) : '-';
}

/** Formats seconds for a cell: `0.123s`. */
export function formatSeconds(seconds: number): string {
  return `${seconds.toFixed(3)}s`;
}
