import { expect } from 'vitest';

import { ParseError } from '../../src/readers/errors.js';

/** Runs `fn` and returns the error it throws, checked to be a `type` (fails the test otherwise). */
export function thrownBy<E extends Error>(fn: () => unknown, type: abstract new (...args: never[]) => E): E {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(type);
    return e as E;
  }
  throw new Error(`expected a ${type.name}`);
}

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
