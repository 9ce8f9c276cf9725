import { expect } from 'vitest';

import { ParseError } from '../../src/readers/errors.js';

/** Runs `promise` and returns the ParseError it rejects with (fails the test otherwise). */
export async function parseError(promise: Promise<unknown>): Promise<ParseError> {
  try {
    await promise;
  } catch (e) {
    expect(e).toBeInstanceOf(ParseError);
    return e as ParseError;
  }
  throw new Error('expected a ParseError');
}
