/**
 * How the viewer prints figures. Same precision as the CLI's summary table (ratio with 2
 * decimals; distances with 4 decimals, exponent form below 0.0001), so the page and
 * `bonepress compress` show the same digits. The e2e test formats the library's figures
 * with these functions and compares them with the page.
 */

/** `12.34`, or `–` when not finite. */
export function formatRatio(ratio: number): string {
  return Number.isFinite(ratio) ? ratio.toFixed(2) : '–';
}

/** `0.0071 cm`; `3.21e-5 cm` below 0.0001; `0 cm`. */
export function formatDistance(value: number, unit: string): string {
  if (!Number.isFinite(value)) return '–';
  if (value === 0) return `0 ${unit}`;
  if (Math.abs(value) < 1e-4) return `${value.toExponential(2)} ${unit}`;
  return `${value.toFixed(4)} ${unit}`;
}

/** `12,345 B (12.1 KiB)`. */
export function formatBytes(bytes: number): string {
  const exact = `${bytes.toLocaleString('en-US')} B`;
  if (bytes < 1024) return exact;
  const kib = bytes / 1024;
  return kib < 1024 ? `${exact} (${kib.toFixed(1)} KiB)` : `${exact} (${(kib / 1024).toFixed(2)} MiB)`;
}

/** `1.234 s`. */
export function formatSeconds(seconds: number): string {
  return `${seconds.toFixed(3)} s`;
}

/** Bit-rate histogram key as a label: `32` is raw float32. */
export function formatBitRate(bits: number): string {
  return bits === 32 ? 'raw' : String(bits);
}

/** `0.00025`, `0.0123`: `digits` significant digits, for legend ticks and the live error. */
export function formatSignificant(value: number, digits = 3): string {
  if (!Number.isFinite(value)) return '–';
  return value === 0 ? '0' : String(Number(value.toPrecision(digits)));
}
