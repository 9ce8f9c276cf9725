/**
 * The bound of a clip that moves transforms and morph weights: the two errors add at a
 * morphed vertex, so the clip is compressed (and verified) against the transforms' share of
 * the caller's bound, 1 − MORPH_WEIGHT_SHARE, with its weights scaled to take the rest
 * (runtime/morph-share.ts), and its figures are restated as bounds on a vertex.
 */
import { parseLength, type Length } from '../clip/units.js';
import { MORPH_WEIGHT_SHARE } from '../runtime/morph-share.js';
import type { CompressStats } from './index.js';
import type { LengthInput } from './options.js';

/** `error` × the transforms' share. A malformed length is passed on as it is, for the compressor to refuse with its own message. */
export function transformShare(error: LengthInput): LengthInput {
  let length: Length;
  try {
    length = typeof error === 'string' ? parseLength(error) : error;
  } catch {
    return error;
  }
  return { value: length.value * (1 - MORPH_WEIGHT_SHARE), unit: length.unit };
}

/** The figures {@link atVertexBound} restates (those of compress stats and of verify's comparison). */
type ErrorFigures = Pick<CompressStats, 'threshold' | 'maxError' | 'shellMaxError' | 'p99Error' | 'meanError'> &
  Partial<Pick<CompressStats, 'sampleMaxError' | 'betweenMaxError'>>;

/**
 * Figures measured at {@link transformShare}, restated as bounds on a morphed vertex: a
 * bone's error e and a weight's measured error e' (a displacement of e'·s/(1 − s)) add to at
 * most max(e, e')/(1 − s); the threshold is the caller's again.
 */
export function atVertexBound<T extends ErrorFigures>(figures: T): T {
  const k = 1 / (1 - MORPH_WEIGHT_SHARE);
  const scaled = (x: number | undefined) => (x === undefined ? undefined : x * k);
  return {
    ...figures,
    threshold: figures.threshold * k,
    maxError: figures.maxError * k,
    shellMaxError: figures.shellMaxError * k,
    sampleMaxError: scaled(figures.sampleMaxError),
    betweenMaxError: scaled(figures.betweenMaxError),
    p99Error: figures.p99Error * k,
    meanError: figures.meanError * k,
  };
}
