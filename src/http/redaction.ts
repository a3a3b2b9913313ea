/**
 * What is never written out as it came: the values of credential-carrying parameters and the
 * secrets MediaWiki puts in page titles. Used by the access log, and by the Redis tier to keep
 * entries that hold them in the process that fetched them (cache/redis/entries.ts).
 */

/**
 * Query parameters whose values are credentials, by name (lower case, as PHP names them: see
 * parameterName). MediaWiki's API takes tokens in the query as well as in the body: `token`,
 * `lgtoken`, `logintoken`, `createtoken`, `csrftoken`, `wltoken` (the watchlist feed's secret),
 * `centralauthtoken`, `OATHToken`; passwords as `lgpassword`, `password` and `retype`
 * (clientlogin, createaccount, changeauthenticationdata); OAuth 1.0a sends `oauth_token`,
 * `oauth_signature`, … and OAuth 2 `access_token`. Beyond MediaWiki: anything named like a
 * secret, a session, a key or a signature.
 */
const SECRET_PARAMETER =
  /(?:token|password|passwd|passphrase|secret|retype|session|sessionid|signature|credentials?|(?:api|access|private|secret|session)_?key)$|^oauth|^(?:auth|authorization|key|sig|pass|pwd|otp|code)$/;

/** A quick look before the parameter walk: none of the name parts SECRET_PARAMETER knows, and nothing encoded. */
const MAY_HOLD_SECRET = /token|pass|secret|retype|session|sig|cred|key|oauth|auth|otp|code|pwd|%|\+/i;

/** What replaces a credential's value. */
export const REDACTED = '[redacted]';

/**
 * The query with the value of every credential-carrying parameter replaced by `[redacted]`;
 * names, order and every other byte as received. Names are read as PHP reads them (decoded,
 * `+` a space, leading spaces dropped, `.` and space as `_`, `name[...]` as `name`; php-input.ts),
 * so an encoded name (`lg%70assword`) is recognised as what MediaWiki will take it for.
 */
export function redactQuery(rawQuery: string): string {
  if (rawQuery === '' || !MAY_HOLD_SECRET.test(rawQuery)) return rawQuery;
  const pairs = rawQuery.split('&');
  let changed = false;
  for (let i = 0; i < pairs.length; i++) {
    const pair = pairs[i]!;
    const eq = pair.indexOf('=');
    if (eq === -1) continue;
    if (SECRET_PARAMETER.test(parameterName(pair.slice(0, eq)))) {
      pairs[i] = `${pair.slice(0, eq + 1)}${REDACTED}`;
      changed = true;
    }
  }
  return changed ? pairs.join('&') : rawQuery;
}

/** A raw query parameter name as PHP registers it, lower case, without its `[...]` part. */
export function parameterName(raw: string): string {
  let name = raw;
  if (name.includes('%') || name.includes('+')) {
    name = name.replace(/\+/g, ' ').replace(/%([0-9A-Fa-f]{2})/g, (_m, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
  }
  // php_register_variable_ex takes the name as a C string: it ends at a (decoded) NUL, so
  // `wltoken%00=…` reaches MediaWiki as `wltoken`.
  const nul = name.indexOf('\0');
  if (nul !== -1) name = name.slice(0, nul);
  const bracket = name.indexOf('[');
  if (bracket !== -1) name = name.slice(0, bracket);
  return name.replace(/^ +/, '').replace(/[. ]/g, '_').toLowerCase();
}

/**
 * Secrets MediaWiki puts in a page title rather than a parameter: the e-mail confirmation and
 * invalidation links it mails (Special:ConfirmEmail/<token>, Special:InvalidateEmail/<token>,
 * in the path or in `title=`, the `/` encoded or not), and as a net any sub-page of 32 or more
 * hex digits (MWCryptRand::generateHex(32), whatever the local name of the page).
 */
const SECRET_SUBPAGE = /((?:ConfirmEmail|InvalidateEmail)(?:\/|%2F))[^/?&#]+|((?:\/|%2F))[0-9a-f]{32,}(?=$|[/?&#])/gi;

/** A path or target with the secrets of SECRET_SUBPAGE replaced by `[redacted]`. */
export function redactSubpages(target: string): string {
  if (!/Email|[0-9a-f]{32}/i.test(target)) return target;
  return target.replace(SECRET_SUBPAGE, (_m, named: string | undefined, slash: string | undefined) => `${named ?? slash}${REDACTED}`);
}
