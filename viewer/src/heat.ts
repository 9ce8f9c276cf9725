/**
 * Heat-map colours: error 0 → cool blue, error = threshold → red, above the threshold →
 * magenta (the budget is broken). The legend is drawn from the same stops.
 */

/** Colour stops over [0, 1] of the threshold, as 0..1 RGB. */
const STOPS: readonly (readonly [number, number, number, number])[] = [
  [0.0, 0.19, 0.35, 0.85],
  [0.25, 0.17, 0.68, 0.87],
  [0.5, 0.36, 0.83, 0.42],
  [0.75, 0.99, 0.8, 0.24],
  [1.0, 0.9, 0.13, 0.11],
];

/** Colour of an error above the threshold. */
export const OVER_BUDGET: readonly [number, number, number] = [1, 0.2, 1];

/** Writes the colour of `error` on a scale whose top is `threshold` into `out` (0..1 RGB). */
export function heatColour(error: number, threshold: number, out: [number, number, number]): [number, number, number] {
  const x = threshold > 0 ? error / threshold : 0;
  if (x > 1 + 1e-9) {
    out[0] = OVER_BUDGET[0];
    out[1] = OVER_BUDGET[1];
    out[2] = OVER_BUDGET[2];
    return out;
  }
  const v = x < 0 ? 0 : x > 1 ? 1 : x;
  for (let i = 1; i < STOPS.length; i++) {
    const [p1, r1, g1, b1] = STOPS[i];
    if (v > p1 && i < STOPS.length - 1) continue;
    const [p0, r0, g0, b0] = STOPS[i - 1];
    const a = p1 > p0 ? (v - p0) / (p1 - p0) : 0;
    out[0] = r0 + (r1 - r0) * a;
    out[1] = g0 + (g1 - g0) * a;
    out[2] = b0 + (b1 - b0) * a;
    return out;
  }
  return out;
}

function css([r, g, b]: readonly number[]): string {
  return `rgb(${Math.round(r * 255)} ${Math.round(g * 255)} ${Math.round(b * 255)})`;
}

/** CSS gradient of the scale, left (0) to right (threshold). */
export function legendGradient(): string {
  return `linear-gradient(to right, ${STOPS.map(([p, r, g, b]) => `${css([r, g, b])} ${(p * 100).toFixed(0)}%`).join(', ')})`;
}

/** CSS colour of the over-budget swatch. */
export function overBudgetCss(): string {
  return css(OVER_BUDGET);
}
