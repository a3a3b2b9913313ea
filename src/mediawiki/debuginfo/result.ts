/**
 * What every format parser of strip.ts returns, and how it fails: the leaf the dispatcher and the
 * per-format modules share, so that none of them has to import another to say "stripped" or "refused".
 */

/** Where the stripped block was found; used as the `format` label of `wikiedge_debuginfo_stripped_total`. */
export type DebuginfoFormat = 'json' | 'jsonp' | 'xml' | 'php' | 'html' | 'wrappedhtml';
export const DEBUGINFO_FORMATS: readonly DebuginfoFormat[] = ['json', 'jsonp', 'xml', 'php', 'html', 'wrappedhtml'];

export interface StripResult {
  /** The answer without the block; the same Buffer when nothing was removed. */
  body: Buffer;
  /** The parsed block (for XML, PHP and HTML a best-effort object with the same fields). */
  debuginfo: Record<string, unknown> | undefined;
  /** Set when something was removed. */
  format?: DebuginfoFormat;
}

export class DebuginfoStripError extends Error {
  override readonly name = 'DebuginfoStripError';
}

export function fail(what: string, at: number): never {
  throw new DebuginfoStripError(`${what} at byte ${at}`);
}

/** The block's name, as `ApiResult::addValue( null, 'debuginfo', … )` writes it. */
export const WORD = Buffer.from('debuginfo');
/** The toolbar's copy in HTML pages (`MWDebug::getDebugHTML`) is spelled in camelCase. */
export const WORD_CAMEL = Buffer.from('debugInfo');
