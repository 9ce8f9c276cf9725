/**
 * The base class of every error bonepress raises about its input. A leaf that imports
 * nothing, so that the runtime (src/runtime/) and the clip model (src/clip/) share it
 * without importing each other.
 */

/**
 * The base of bonepress's errors about what it was given (a file, a buffer, an option, a
 * packet, two clips that cannot be compared): a caller tells them apart from bugs with one
 * `instanceof`, and reads what it reports from these fields, never from a list of classes.
 *
 * Every subclass takes its constructor arguments in one order: the `code` (left out by the
 * classes that have a single one), the problem, then where it was found (a file, a line, a
 * byte or bit offset, a JSON path), the place optional.
 */
export abstract class BonepressError extends Error {
  // The fields are `declare`d: the constructor assigns each, so the build emits no list of them.
  /** Why, as a stable name (`SYNTAX`, `BAD_MAGIC`, `BAD_OPTION`…): serialized in JSON output, never renamed. */
  declare readonly code: string;
  /** The input at fault (a file path or an asset name), when the error knows it. */
  declare readonly file: string | undefined;
  /**
   * The message without the file's name, for a line that names the file already
   * (`bonepress: walk.bvh: line 212: expected 132 channel values, got 131`): the whole
   * message when the error names no file.
   */
  declare readonly detail: string;

  /**
   * `message` is what `Error.message` says; `place.file` the input it names and
   * `place.detail` the message without it (default: `message`).
   */
  protected constructor(
    code: string,
    message: string,
    place: { readonly file?: string; readonly detail?: string } = {},
  ) {
    super(message);
    this.code = code;
    this.file = place.file;
    this.detail = place.detail ?? message;
  }
}
