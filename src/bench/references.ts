/**
 * Reference figures of other tools (ACL, gltfpack, three.js) and the project's goals, all
 * measured on one corpus, read from `bench/references.json` (in the repository and the
 * package, with each figure's source). The bench prints them only beside a run over that
 * same corpus at the same settings: beside any other corpus they would mean nothing.
 */
import { readFileSync } from 'node:fs';

/** A figure's system: what it is called and where its numbers come from. */
interface ReferenceSystem {
  readonly label: string;
  readonly source: string;
}

/** What `bench/references.json` holds. */
export interface ReferenceFigures {
  readonly corpus: {
    readonly name: string;
    readonly description: string;
    readonly clips: number;
    readonly rawBytes: number;
    /** Threshold and shell the figures were measured at. */
    readonly error: string;
    readonly shell: string;
  };
  readonly acl: ReferenceSystem & { ratio: number; maxErrorCm: number; withinShare: number; compressMBps: number };
  readonly gltfpackC: ReferenceSystem & { ratio: number; maxErrorCm: number; withinShare: number };
  readonly gltfpackCC: ReferenceSystem & { ratio: number; maxErrorCm: number; withinShare: number };
  readonly three: ReferenceSystem & {
    sequentialUs: readonly [number, number];
    randomUs: readonly [number, number];
    clipBytes1901Samples: number;
  };
  readonly goals: {
    readonly ratio: number;
    readonly ratioNext: number;
    readonly speedupVsThreeSequential: number;
    readonly speedupVsThreeRandom: number;
    /** Raw MB/s on one worker. */
    readonly compressMBps: number;
    /** With 2 jobs, at least this many times the one-worker goal. */
    readonly poolFactor2Jobs: number;
    readonly source: string;
  };
}

/** `bench/references.json`, next to dist/ (or src/) in the repository and in the package. */
export const REFERENCES_URL = new URL('../../bench/references.json', import.meta.url);

/**
 * Reads the reference figures (default: {@link REFERENCES_URL}). Returns undefined when the
 * file is missing or is not a references file: the bench then prints its own figures only.
 */
export function loadReferences(url: URL | string = REFERENCES_URL): ReferenceFigures | undefined {
  try {
    const data = JSON.parse(readFileSync(url, 'utf8')) as ReferenceFigures;
    const corpus = data?.corpus;
    return typeof corpus?.clips === 'number' &&
      typeof corpus.rawBytes === 'number' &&
      typeof data.acl?.ratio === 'number'
      ? data
      : undefined;
  } catch {
    return undefined;
  }
}

/** What {@link referencesFor} needs of a run. */
export interface RunIdentity {
  readonly totals: { readonly clips: number; readonly rawBytes: number };
  readonly settings: { readonly error: string; readonly shell: string };
}

/**
 * `references` when `run` covered their corpus (same clip count and raw bytes) at their
 * threshold and shell, else undefined.
 */
export function referencesFor(
  run: RunIdentity,
  references: ReferenceFigures | null = loadReferences() ?? null,
): ReferenceFigures | undefined {
  if (!references) return undefined;
  const c = references.corpus;
  const same =
    run.totals.clips === c.clips &&
    run.totals.rawBytes === c.rawBytes &&
    run.settings.error.replace(/\s+/g, '') === c.error &&
    run.settings.shell.replace(/\s+/g, '') === c.shell;
  return same ? references : undefined;
}
