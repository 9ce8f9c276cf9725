import type { RawClip } from '../clip/raw-clip.js';
import type { ReadOptions } from './options.js';
import { ParseError, PARSE_ERROR } from './errors.js';

/**
 * Reads an ACL SJSON clip (`.acl.sjson`). Throws {@link ParseError} naming the file, line
 * and problem.
 */
export function readAclSjson(text: string, file: string, options: ReadOptions = {}): RawClip {
  void text; void options;
  throw new ParseError(file, 0, 'ACL SJSON reading is not available yet', PARSE_ERROR.UNSUPPORTED);
}
