/**
 * `--json` output: one JSON document per command on stdout, nothing else there.
 */

/** Makes `value` JSON-safe: typed arrays become arrays, non-finite numbers become null. */
function replacer(_key: string, value: unknown): unknown {
  if (ArrayBuffer.isView(value) && !(value instanceof DataView))
    return Array.from(value as unknown as ArrayLike<number>);
  if (typeof value === 'number' && !Number.isFinite(value)) return null;
  return value;
}

/** Serialises `value` as indented JSON with a trailing newline (see {@link replacer} rules). */
export function renderJson(value: unknown): string {
  return JSON.stringify(value, replacer, 2) + '\n';
}
