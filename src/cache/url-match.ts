/**
 * Which URL keys an admin purge names by pattern or prefix (POST /purge on the admin listener).
 *
 * An admin purge's pattern over URL keys (`pattern=` on POST /purge): a glob whose only
 * wildcard is `*` (any run of characters, none included), matched against the whole key as
 * `GET /cache` shows it (the api.php path, `?`, the query canonically ordered and encoded:
 * policy/request.ts canonicalQuery). Nothing else is special, so that a key's own `?`, `[` or
 * `\` are literal, as they are to the operator who copied them.
 *
 * Bounded, with no regular expression: at most MAX_PATTERN_CHARS characters and MAX_STARS stars,
 * matched by finding the literal pieces between the stars left to right (leftmost-first is
 * exact for a glob whose only wildcard is `*`): time linear in the key for each piece, whatever
 * the pattern, where a regular expression built from it could backtrack for minutes (ReDoS).
 * The same pattern goes to Redis' SCAN MATCH (cache/redis/purges.ts), whose matcher does
 * backtrack on stars: the bound on stars keeps it short there too.
 */

import { parsePhpQuery } from '../mediawiki/php-input.js';
import { canonicalQuery } from '../policy/request.js';

export const MAX_PATTERN_CHARS = 1_024;
export const MAX_STARS = 8;

/** Why `pattern` cannot be used, or undefined when it can. */
export function urlPatternProblem(pattern: string): string | undefined {
  if (pattern.length > MAX_PATTERN_CHARS) return `pattern= is longer than ${MAX_PATTERN_CHARS} characters`;
  const stars = pattern.split('*').length - 1;
  if (stars > MAX_STARS) return `pattern= has ${stars} stars: at most ${MAX_STARS}`;
  if (pattern.replaceAll('*', '') === '') return 'pattern= matches every key: use all=1 to purge everything';
  return undefined;
}

/** Whether `key` matches `pattern` as a whole (see above: `*` any run, everything else literal). */
export function matchesUrlPattern(pattern: string, key: string): boolean {
  const pieces = pattern.split('*');
  const first = pieces[0]!;
  if (pieces.length === 1) return key === first;
  const last = pieces[pieces.length - 1]!;
  if (key.length < first.length + last.length || !key.startsWith(first) || !key.endsWith(last)) return false;
  let at = first.length;
  const end = key.length - last.length;
  for (let i = 1; i < pieces.length - 1; i++) {
    const piece = pieces[i]!;
    const found = key.indexOf(piece, at);
    if (found === -1 || found + piece.length > end) return false;
    at = found + piece.length;
  }
  return true;
}

/** The pattern as a Redis glob (SCAN MATCH): its stars kept, every other metacharacter escaped. */
export function redisGlobOf(pattern: string): string {
  return pattern
    .split('*')
    .map((piece) => piece.replace(/[*?[\]\\]/g, '\\$&'))
    .join('*');
}

/**
 * `prefix=` on POST /purge: which URL keys a prefix names. A key's query is canonically ordered
 * (policy/request.ts canonicalQuery), which no operator types, so a prefix with a query names
 * every key of its path whose query holds each of the prefix's parameters, in any order, the
 * last one possibly cut short (`…&list=all` names `list=allpages` too; `…&li` any parameter whose
 * name begins so). The parameters are read as PHP reads them and encoded as the key encodes them
 * (`prop=info|revisions` names the key's `prop=info%7Crevisions`). A key that begins with the
 * prefix as typed (the gateway's own order) is named too, and a prefix without a query is a
 * prefix of the key as it is.
 */
export function urlPrefixMatcher(prefix: string): (urlKey: string) => boolean {
  const q = prefix.indexOf('?');
  const segments = q === -1 ? [] : prefix.slice(q + 1).split('&');
  const last = segments.pop();
  if (last === undefined || (last === '' && segments.every((s) => s === ''))) return (key) => key.startsWith(prefix);
  const path = prefix.slice(0, q + 1);
  const whole = segments.filter((s) => s !== '').map(canonicalParameter);
  const cut = last === '' ? undefined : last.includes('=') ? canonicalParameter(last) : encodeURIComponent(decoded(last));
  return (key) => {
    if (key.startsWith(prefix)) return true;
    if (!key.startsWith(path)) return false;
    const params = key.slice(path.length).split('&');
    return whole.every((p) => params.includes(p)) && (cut === undefined || params.some((p) => p.startsWith(cut)));
  };
}

/**
 * One `name=value` as the key spells it: read as PHP reads a query (mediawiki/php-input.ts: `.`,
 * space and an unmatched `[` in a name become `_`) and encoded as the key encodes it
 * (policy/request.ts canonicalQuery). An array shape, which no key holds, names nothing.
 */
function canonicalParameter(segment: string): string {
  return canonicalQuery(parsePhpQuery(segment)) || '\u0000';
}

/** A query component decoded (`+` a space), a malformed escape left as it is. */
function decoded(s: string): string {
  const spaced = s.replace(/\+/g, ' ');
  try {
    return decodeURIComponent(spaced);
  } catch {
    return spaced;
  }
}
