/**
 * How a morph weight's error and a transform's error share one bound. A skinned (or node-
 * moved) morphed vertex is the transform applied to p + Σ_t w_t·d_t, so its error is at most
 * the transform's error there plus Σ_t |Δw_t|·|d_t|: the two add. A clip that moves
 * transforms and morph weights holds the weights to {@link MORPH_WEIGHT_SHARE} of the bound
 * and its bones to the rest; a clip of weights alone gives them the whole bound.
 *
 * The compressor measures a weight as a bone whose translation x is the weight times its
 * scale (readers/gltf.ts). Measured against the transforms' share, (1 − s)·bound, a scale of
 * displacement·(1 − s)/s holds Σ_t |Δw_t|·|d_t| within s·bound. The reader and the three.js
 * binding of a loose clip both derive the scale here, so they agree.
 */

/**
 * Share of the error bound the morph weights may spend at a vertex. A quarter: a weight is one
 * number per sample against a rotation's three, and a bound k times tighter costs about
 * log2(k) bits per number, so with as many weights as rotating bones the bits are fewest at
 * s = 1/4 (n·log2(1/s) + 3n·log2(1/(1 − s)) is least there). docs/gltf.md, "Facial
 * animation", measures the choice.
 */
export const MORPH_WEIGHT_SHARE = 1 / 4;

/**
 * The scale of a morph-weight bone whose target moves vertices by at most `displacement` in
 * all (summed over the targets that move them; 0 when it moves none), when the clip also
 * moves transforms (`shared`) or not.
 */
export function morphWeightScale(displacement: number, shared: boolean): number {
  if (!(displacement > 0)) return 1;
  return shared ? (displacement * (1 - MORPH_WEIGHT_SHARE)) / MORPH_WEIGHT_SHARE : displacement;
}
