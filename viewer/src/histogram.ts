/** The bit-rate histogram as SVG bars: one bar per bit rate used, count on top. */
import { formatBitRate } from './format.js';

const SVG = 'http://www.w3.org/2000/svg';

function el<K extends keyof SVGElementTagNameMap>(
  name: K,
  attrs: Record<string, string | number>,
  text?: string,
): SVGElementTagNameMap[K] {
  const node = document.createElementNS(SVG, name);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  if (text !== undefined) node.textContent = text;
  return node;
}

/** Draws `histogram` (bits → count; 32 = raw) into `svg`. An empty histogram draws a note. */
export function drawHistogram(svg: SVGSVGElement, histogram: Readonly<Record<number, number>>): void {
  svg.replaceChildren();
  const width = 260,
    height = 150,
    top = 14,
    bottom = 18;
  svg.setAttribute('viewBox', `0 0 ${width} ${height}`);
  const entries = Object.entries(histogram)
    .map(([bits, count]) => [Number(bits), count] as const)
    .filter(([, count]) => count > 0)
    .sort((a, b) => a[0] - b[0]);
  if (entries.length === 0) {
    svg.append(el('text', { x: width / 2, y: height / 2, 'text-anchor': 'middle' }, 'no animated tracks'));
    return;
  }
  const max = Math.max(...entries.map(([, c]) => c));
  const slot = width / entries.length;
  const bar = Math.max(2, Math.min(24, slot * 0.75));
  entries.forEach(([bits, count], i) => {
    const x = i * slot + (slot - bar) / 2;
    const h = ((height - top - bottom) * count) / max;
    const y = height - bottom - h;
    const rect = el('rect', { x, y, width: bar, height: Math.max(1, h) });
    rect.append(el('title', {}, `${formatBitRate(bits)} bits: ${count}`));
    svg.append(rect);
    svg.append(el('text', { x: x + bar / 2, y: y - 3, 'text-anchor': 'middle', class: 'count' }, String(count)));
    svg.append(el('text', { x: x + bar / 2, y: height - 5, 'text-anchor': 'middle' }, formatBitRate(bits)));
  });
}
