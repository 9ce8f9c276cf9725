/**
 * Bit allocation of a schema: the error bound of a decoded pose, bone by bone
 * ({@link ErrorBound}), and the fewest bits per sent track that keep every bone within the
 * threshold ({@link allocateBits}).
 */
import { SMALLEST_THREE_MAX_BITS, SMALLEST_THREE_MIN_BITS, smallestThreeMaxAngle } from './smallest-three.js';
import type { TrackModel } from './track-model.js';

/** Most bits of a translation or scale component. */
export const COMPONENT_MAX_BITS = 24;

/** Quantisation error (half a step) of a component of extent `ext` on `bits` bits, with float32 rounding of `magnitude`. */
function componentError(ext: number, bits: number, magnitude: number): number {
  return ext / (2 * (2 ** bits - 1)) + magnitude * 2 ** -24;
}

/** Bits per sent track (0 where none is allocated) and the bound each bone ends with. */
export interface BitAllocation {
  rotation: Uint8Array;
  translation: Uint8Array;
  scale: Uint8Array;
  boneBounds: Float64Array;
}

enum TrackKind {
  Rotation,
  Translation,
  Scale,
}

/**
 * The error bound of {@link buildSnapshotSchema}, bone by bone. For bone b with parent p it
 * composes Θ (object linear-part error), σ (object linear-part size) and P (joint position
 * error), and E = P + Θ·shell:
 *   Θ_b = Θ_p·s + (σ_p + Θ_p)·(θ·s + Δs)   (σ_p·s·θ for a compensated, sent rotation)
 *   σ_b = σ_p·s,   P_b = P_p + Θ_p·|t| + (σ_p + Θ_p)·δ
 * with θ, δ, Δs the bone's rotation, translation and scale errors and s, |t| its largest
 * scale and translation. A change to one bone's tracks only changes its subtree, so
 * {@link probe} re-evaluates just that (into scratch) and {@link commit} keeps it.
 */
class ErrorBound {
  readonly theta: Float64Array;
  readonly sigma: Float64Array;
  readonly pos: Float64Array;
  readonly bone: Float64Array;
  /** Scratch of a probe, valid for the probed subtree. */
  readonly probeBone: Float64Array;
  private readonly probeTheta: Float64Array;
  private readonly probeSigma: Float64Array;
  private readonly probePos: Float64Array;
  /** Each bone and its descendants, ascending (parents before children). */
  readonly subtree: Int32Array[];

  constructor(
    private readonly m: TrackModel,
    private readonly compensate: boolean,
    private readonly a: BitAllocation,
  ) {
    const n = m.boneCount;
    this.theta = new Float64Array(n);
    this.sigma = new Float64Array(n);
    this.pos = new Float64Array(n);
    this.bone = new Float64Array(n);
    this.probeTheta = new Float64Array(n);
    this.probeSigma = new Float64Array(n);
    this.probePos = new Float64Array(n);
    this.probeBone = new Float64Array(n);
    const lists: number[][] = Array.from({ length: n }, (_, b) => [b]);
    for (let b = n - 1; b >= 0; b--) {
      const p = m.parents[b];
      if (p >= 0) lists[p].push(...lists[b]);
    }
    this.subtree = lists.map((list) => Int32Array.from(list.sort((x, y) => x - y)));
  }

  /** Recomputes every bone; returns the largest E. */
  evaluateAll(): number {
    let worst = 0;
    for (let b = 0; b < this.m.boneCount; b++) {
      this.step(
        b,
        this.theta,
        this.sigma,
        this.pos,
        this.bone,
        this.theta,
        this.sigma,
        this.pos,
        -1,
        TrackKind.Rotation,
        0,
      );
      if (this.bone[b] > worst) worst = this.bone[b];
    }
    return worst;
  }

  /**
   * Evaluates the subtree of `root` with the current allocation into the probe scratch
   * (`probeBone`), optionally with bone `root`'s `kind` error replaced by `error` (≥ 0).
   * Returns the largest E in the subtree.
   */
  probe(root: number, overrideKind = TrackKind.Rotation, error = -1): number {
    let worst = 0;
    const list = this.subtree[root];
    for (let k = 0; k < list.length; k++) {
      const b = list[k];
      // The subtree root reads its parent from the committed state, the rest from the probe.
      const fromProbe = b !== root;
      this.step(
        b,
        fromProbe ? this.probeTheta : this.theta,
        fromProbe ? this.probeSigma : this.sigma,
        fromProbe ? this.probePos : this.pos,
        this.probeBone,
        this.probeTheta,
        this.probeSigma,
        this.probePos,
        b === root && error >= 0 ? b : -1,
        overrideKind,
        error,
      );
      if (this.probeBone[b] > worst) worst = this.probeBone[b];
    }
    return worst;
  }

  /** Keeps the last {@link probe} of `root`'s subtree. */
  commit(root: number): void {
    for (const b of this.subtree[root]) {
      this.theta[b] = this.probeTheta[b];
      this.sigma[b] = this.probeSigma[b];
      this.pos[b] = this.probePos[b];
      this.bone[b] = this.probeBone[b];
    }
  }

  private step(
    b: number,
    parentTheta: Float64Array,
    parentSigma: Float64Array,
    parentPos: Float64Array,
    outBone: Float64Array,
    outTheta: Float64Array,
    outSigma: Float64Array,
    outPos: Float64Array,
    overrideBone: number,
    overrideKind: TrackKind,
    overrideError: number,
  ): void {
    const m = this.m,
      a = this.a;
    const p = m.parents[b];
    const thetaP = p >= 0 ? parentTheta[p] : 0,
      sigmaP = p >= 0 ? parentSigma[p] : 1,
      posP = p >= 0 ? parentPos[p] : 0;
    // A sent track without bits yet counts as exact (the sensitivity probes start there).
    let rot = m.rotationSent[b]
      ? a.rotation[b] > 0
        ? smallestThreeMaxAngle(a.rotation[b], m.rotationSmallNorm[b])
        : 0
      : m.rotationConstantError[b];
    let tr2 = 0,
      sc = 0;
    for (let c = 0; c < 3; c++) {
      const i = b * 3 + c;
      const te =
        m.translationExtent[i] > 0
          ? a.translation[i] > 0
            ? componentError(m.translationExtent[i], a.translation[i], m.translationMagnitude[i])
            : 0
          : m.translationConstantError[i];
      tr2 += te * te;
      const se =
        m.scaleExtent[i] > 0
          ? a.scale[i] > 0
            ? componentError(m.scaleExtent[i], a.scale[i], m.scaleMagnitude[b])
            : 0
          : m.scaleConstantError[i];
      if (se > sc) sc = se;
    }
    let tr = Math.sqrt(tr2);
    if (b === overrideBone) {
      if (overrideKind === TrackKind.Rotation) rot = overrideError;
      else if (overrideKind === TrackKind.Translation) tr = overrideError;
      else sc = overrideError;
    }
    const s = m.scaleMagnitude[b];
    // L_b = L_p·R·S: ΔL_b = ΔL_p·R·S + L'_p·(ΔR·S + R'·ΔS), with ‖L'_p‖ ≤ σ_p + Θ_p.
    const theta =
      this.compensate && m.rotationSent[b] ? sigmaP * s * rot : thetaP * s + (sigmaP + thetaP) * (rot * s + sc);
    // P_b = P_p + L_p·t: ΔP_b = ΔP_p + ΔL_p·t + L'_p·Δt.
    const pos = posP + thetaP * m.translationLength[b] + (sigmaP + thetaP) * tr;
    outTheta[b] = theta;
    outSigma[b] = sigmaP * s;
    outPos[b] = pos;
    outBone[b] = pos + theta * m.shell[b];
  }
}

interface Track {
  kind: TrackKind;
  bone: number;
  /** Index into the allocation array: bone for rotations, bone·3 + component otherwise. */
  slot: number;
  minBits: number;
  maxBits: number;
}

/**
 * The fewest bits per sent track of `m` that keep every bone's bound within `threshold`:
 * sensitivities, an even split of each bone's budget, raises where the bound still breaks,
 * then greedy lowering while it holds (see {@link buildSnapshotSchema}).
 */
export function allocateBits(m: TrackModel, compensate: boolean, threshold: number): BitAllocation {
  const boneCount = m.boneCount;
  const a: BitAllocation = {
    rotation: new Uint8Array(boneCount),
    translation: new Uint8Array(boneCount * 3),
    scale: new Uint8Array(boneCount * 3),
    boneBounds: new Float64Array(boneCount),
  };
  const tracks: Track[] = [];
  for (let b = 0; b < boneCount; b++) {
    if (m.rotationSent[b])
      tracks.push({
        kind: TrackKind.Rotation,
        bone: b,
        slot: b,
        minBits: SMALLEST_THREE_MIN_BITS,
        maxBits: SMALLEST_THREE_MAX_BITS,
      });
    for (let c = 0; c < 3; c++) {
      if (m.translationExtent[b * 3 + c] > 0)
        tracks.push({ kind: TrackKind.Translation, bone: b, slot: b * 3 + c, minBits: 1, maxBits: COMPONENT_MAX_BITS });
      if (m.scaleExtent[b * 3 + c] > 0)
        tracks.push({ kind: TrackKind.Scale, bone: b, slot: b * 3 + c, minBits: 1, maxBits: COMPONENT_MAX_BITS });
    }
  }
  const arrayOf = (t: Track): Uint8Array =>
    t.kind === TrackKind.Rotation ? a.rotation : t.kind === TrackKind.Translation ? a.translation : a.scale;
  const bound = new ErrorBound(m, compensate, a);

  // 1. Sensitivities: how much each bone's bound grows per unit of each bone track's error
  // (every sent track exact first: what is left is the constants' share).
  bound.evaluateAll();
  const fixed = Float64Array.from(bound.bone);
  const h = threshold * 1e-3;
  const kinds = [TrackKind.Rotation, TrackKind.Translation, TrackKind.Scale];
  const hasKind = new Uint8Array(boneCount * 3);
  for (const t of tracks) hasKind[t.bone * 3 + t.kind] = 1;
  const dependsOn = new Int32Array(boneCount); // sent bone tracks each bone's bound depends on
  const sensitivity = (d: number): number => (bound.probeBone[d] - fixed[d]) / h;
  for (let b = 0; b < boneCount; b++) {
    for (const k of kinds) {
      if (!hasKind[b * 3 + k]) continue;
      bound.probe(b, k, h);
      for (const d of bound.subtree[b]) if (sensitivity(d) > 1e-12) dependsOn[d]++;
    }
  }
  // 2. Even split: each bone track gets the tightest of its shares over the bones it reaches
  // (for a chain, even shares minimise the total bits). Goals first: probes read the bits.
  const goals = new Float64Array(boneCount * 3).fill(Infinity);
  for (let b = 0; b < boneCount; b++) {
    for (const k of kinds) {
      if (!hasKind[b * 3 + k]) continue;
      bound.probe(b, k, h);
      for (const d of bound.subtree[b]) {
        const c = sensitivity(d);
        if (c > 1e-12)
          goals[b * 3 + k] = Math.min(goals[b * 3 + k], Math.max(0, threshold - fixed[d]) / (dependsOn[d] * c));
      }
    }
  }
  for (const t of tracks) {
    const goal = goals[t.bone * 3 + t.kind];
    let bits = t.minBits;
    if (t.kind === TrackKind.Rotation) {
      while (bits < t.maxBits && smallestThreeMaxAngle(bits, m.rotationSmallNorm[t.bone]) > goal) bits++;
    } else {
      const ext = t.kind === TrackKind.Translation ? m.translationExtent : m.scaleExtent;
      const sentComponents = [0, 1, 2].filter((c) => ext[t.bone * 3 + c] > 0).length;
      const mag = t.kind === TrackKind.Translation ? m.translationMagnitude[t.slot] : m.scaleMagnitude[t.bone];
      while (bits < t.maxBits && componentError(ext[t.slot], bits, mag) > goal / Math.sqrt(sentComponents)) bits++;
    }
    arrayOf(t)[t.slot] = bits;
  }
  // 3. Raise where the nonlinear terms broke the bound: the best fix of the worst bone.
  for (let worst = bound.evaluateAll(); worst > threshold; ) {
    let worstBone = 0;
    for (let d = 0; d < boneCount; d++) if (bound.bone[d] > bound.bone[worstBone]) worstBone = d;
    let pick: Track | undefined,
      pickGain = 0;
    for (const t of tracks) {
      const bitsArr = arrayOf(t);
      if (bitsArr[t.slot] >= t.maxBits || !bound.subtree[t.bone].includes(worstBone)) continue;
      bitsArr[t.slot]++;
      bound.probe(t.bone);
      bitsArr[t.slot]--;
      const gain = bound.bone[worstBone] - bound.probeBone[worstBone];
      if (gain > pickGain) {
        pickGain = gain;
        pick = t;
      }
    }
    if (!pick) break; // every track at its widest: the threshold is out of reach
    arrayOf(pick)[pick.slot]++;
    worst = bound.evaluateAll();
  }
  // 4. Lower while every bone stays within the threshold, cheapest bits first: a bit's cost
  // is the largest share of any bone's remaining slack its removal uses, per component
  // saved. Each round prices every track, then lowers the cheapest few (one, for skeletons
  // under 20 tracks: exact greedy), re-checking each against the bound as it goes.
  if (bound.evaluateAll() <= threshold) {
    const costs = new Float64Array(tracks.length);
    const order = tracks.map((_, i) => i);
    const perRound = Math.max(1, Math.floor(tracks.length / 20));
    for (;;) {
      for (let i = 0; i < tracks.length; i++) {
        const t = tracks[i],
          bitsArr = arrayOf(t);
        costs[i] = Infinity;
        if (bitsArr[t.slot] <= t.minBits) continue;
        bitsArr[t.slot]--;
        const worst = bound.probe(t.bone);
        bitsArr[t.slot]++;
        if (worst > threshold) continue;
        let cost = 0;
        for (const d of bound.subtree[t.bone]) {
          const used = bound.probeBone[d] - bound.bone[d];
          if (used > 0) cost = Math.max(cost, used / Math.max(1e-300, threshold - bound.bone[d]));
        }
        costs[i] = t.kind === TrackKind.Rotation ? cost / 3 : cost;
      }
      order.sort((x, y) => costs[x] - costs[y] || x - y);
      let lowered = 0;
      for (let k = 0; k < order.length && lowered < perRound && Number.isFinite(costs[order[k]]); k++) {
        const t = tracks[order[k]],
          bitsArr = arrayOf(t);
        bitsArr[t.slot]--;
        if (bound.probe(t.bone) <= threshold) {
          bound.commit(t.bone);
          lowered++;
        } else bitsArr[t.slot]++;
      }
      if (lowered === 0) break;
    }
  }
  bound.evaluateAll();
  a.boneBounds.set(bound.bone);
  return a;
}
