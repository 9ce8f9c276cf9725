/**
 * The sample data beside the repository (`../shared/data/`, read-only, never copied in):
 * tests read a corpus from there when it is present and otherwise run the same checks on
 * generated stand-ins of the same shapes. `BONEPRESS_TEST_DATA=generated` makes them take
 * the stand-ins even where the data is present, so that CI checks both modes (.ci/run).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';

import { ROOT } from '../cli/run-cli.js';

/** Whether tests are told to use generated stand-ins only. */
export const GENERATED_ONLY = process.env.BONEPRESS_TEST_DATA === 'generated';

/** The folder `../shared/data/<name>` when it is present and in use, else undefined. */
export function sharedData(name: string): string | undefined {
  if (GENERATED_ONLY) return undefined;
  const dir = join(ROOT, '..', 'shared', 'data', name);
  return existsSync(dir) ? dir : undefined;
}
