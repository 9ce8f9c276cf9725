/**
 * The base class of every error bonepress raises about its input. A leaf that imports
 * nothing, so that the runtime (src/runtime/) and the clip model (src/clip/) share it
 * without importing each other.
 */

/**
 * The base of bonepress's errors about what it was given (a file, a buffer, an option, two
 * clips that cannot be compared): each carries a `code`, so a caller tells them apart from
 * bugs with one `instanceof` and never needs a list of classes.
 */
export abstract class BonepressError extends Error {
  abstract readonly code: string;
}
