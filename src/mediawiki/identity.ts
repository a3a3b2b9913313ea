/**
 * Who is asking, decided exactly as MediaWiki 1.39 decides it, from the request's headers alone.
 *
 * - SessionManager::getVaryCookies() merges the vary cookies of **every** session provider
 *   (includes/session/SessionManager.php:410), and OutputPage::getCacheVaryCookies() adds
 *   `$wgCacheVaryCookies`. A default 1.39 install has two providers:
 *   - CookieSessionProvider::getVaryCookies() (line 315): `{prefix}Token`, `{prefix}LoggedOut`,
 *     the session cookie (`$wgSessionName ?: {prefix}_session`), `forceHTTPS`;
 *   - BotPasswordSessionProvider (`$wgEnableBotPasswords`, true by default):
 *     ImmutableSessionProviderWithCookie::getVaryCookies() (line 165) returns
 *     `{prefix}` + its sessionCookieName, `_BPsession` unless configured (BotPasswordSessionProvider.php:49):
 *     a client sending only `wiki_BPsession` is a logged-in bot.
 *   plus `sessionJwt` where JWT sessions are enabled, any `Authorization` header (OAuth's
 *   provider), and what the operator names for extension providers (CentralAuth's
 *   `centralauth_*`, a site's own `$wgCacheVaryCookies`, a header set by an SSO proxy).
 * - A conservative net, the way Wikimedia's edge does it (`[sS]ession|Token` in a cookie name):
 *   any other cookie whose name says session or token, and that is not known to be harmless, is
 *   a credential too. An unknown credential then costs a cache hit (the session tier, keyed by
 *   its value), never a leak into the shared tier.
 * - CookieSessionProvider::getCookie(): "PHP uses 'deleted' when deleting cookies. Only way to be
 *   sure is to treat it as non-existent." An empty value is treated the same way.
 * - Names are looked up in PHP's `$_COOKIE` (see mediawiki/php-input.ts), not in a generic parse.
 * - ApiMain::lacksSameOriginSecurity() (includes/api/ApiMain.php): `callback=` (JSONP), `origin=*` or a
 *   `Treat-as-Untrusted` header make MediaWiki replace the user with an anonymous one
 *   ("MediaWiki-Login-Suppressed: true"), so such requests are anonymous whatever they carry;
 *   the session is still loaded, so the wiki answers them `private` when they carry one.
 *
 * The headers read here are the ones the wiki will receive (http/forwarding.ts forwardedView): a
 * header named in `Connection` never reaches it, so it never decides who is asking.
 *
 * The slot that keys a session's cache entries is an HMAC of the credential values: raw values
 * never leave this module.
 */
import { createHmac } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { type PhpArray, parsePhpCookies, phpStringParam, reachedMaxInputVars } from './php-input.js';

export type Identity =
  | {
      readonly kind: 'anonymous';
      readonly loginSuppressed: boolean;
      /**
       * Login suppressed, but the request carries credentials: the wiki still loads the session
       * and answers with `private` Cache-Control (ApiMain::sendCacheHeaders, a-p-u-p with a
       * persisted session), so the client must get that too.
       */
      readonly carriesCredentials: boolean;
    }
  /**
   * `slot` groups everything of one session (the session cookie when there is one) so that a
   * logout evicts all of it; `variant` separates different credential sets within a slot.
   * `unknownCredential`: the net (not a known provider) made this a session.
   */
  | { readonly kind: 'session'; readonly slot: string; readonly variant: string; readonly unknownCredential: boolean }
  /** Credentials in a shape MediaWiki would not read as a plain string (e.g. `wiki_session[a]=`): never cached. */
  | { readonly kind: 'unsure' };

/** A cookie name, or a prefix when it ends in `*` (e.g. `centralauth_*`). */
export type CookieNamePattern = string;

export interface IdentityRules {
  readonly sessionCookie: string;
  /** Credential cookie names of the known providers (session cookie first) and the operator's exact names. */
  readonly credentialCookies: ReadonlySet<string>;
  /** Name prefixes of credential cookies (the operator's `name*` patterns). */
  readonly credentialCookiePrefixes: readonly string[];
  /**
   * Credential cookies of the known providers whose value is no secret: `{prefix}LoggedOut` (a
   * Unix time, CookieSessionProvider::setLoggedOutCookie) and `forceHTTPS` (`true`). Anyone can
   * send or plant the same value: a slot made of these alone is bound to the client's address.
   */
  readonly guessableCookies: ReadonlySet<string>;
  /** Names the net would take for credentials but that are known not to be (exact, or prefixes). */
  readonly harmlessCookies: ReadonlySet<string>;
  readonly harmlessCookiePrefixes: readonly string[];
  /** Request headers that carry credentials, lower case: `authorization` and the operator's. */
  readonly credentialHeaders: readonly string[];
  /** api.php query parameters that log a request in by themselves (`centralauthtoken`), as `$_GET` names them. */
  readonly credentialParams: readonly string[];
  readonly secret: Buffer;
}

export interface IdentityRuleOptions {
  readonly cookiePrefix: string;
  readonly sessionName: string;
  readonly sessionJwtCookie: boolean;
  readonly secret: Buffer;
  /** Credential cookies of extension providers and `$wgCacheVaryCookies` (names or `prefix*`). */
  readonly credentialCookies?: readonly CookieNamePattern[];
  /** Cookies the net must not take for credentials (names or `prefix*`), besides `{prefix}mwuser-sessionId`. */
  readonly harmlessCookies?: readonly CookieNamePattern[];
  /** Headers that carry credentials besides Authorization. */
  readonly credentialHeaders?: readonly string[];
  /** Query parameters that log a request in by themselves (WIKIEDGE_CREDENTIAL_PARAMS). */
  readonly credentialParams?: readonly string[];
}

/**
 * Cookies MediaWiki itself sets that the net's pattern matches but that authenticate nobody:
 * `{prefix}mwuser-sessionId`, a random id that mediawiki.user's `mw.user.sessionId()` keeps in
 * every browser with JavaScript (resources/src/mediawiki.user.js:164, through mw.cookie, which
 * adds `$wgCookiePrefix`, and an `ss0-` twin under `$wgUseSameSiteLegacyCookies`), read by
 * analytics only, never by a session provider. Taking it for a credential would turn every
 * browser's requests into per-session ones.
 */
function builtInHarmless(cookiePrefix: string): string[] {
  return [`${cookiePrefix}mwuser-sessionId`, `${cookiePrefix}ss0-mwuser-sessionId`];
}

export function identityRules(opts: IdentityRuleOptions): IdentityRules {
  const sessionCookie = opts.sessionName || `${opts.cookiePrefix}_session`;
  const exact = new Set([
    sessionCookie,
    `${opts.cookiePrefix}Token`,
    `${opts.cookiePrefix}LoggedOut`,
    'forceHTTPS',
    `${opts.cookiePrefix}_BPsession`,
    // $wgUseSameSiteLegacyCookies: mw.cookie and WebResponse also send `ss0-` twins without the
    // SameSite attribute, and CookieSessionProvider reads them (not in getVaryCookies()).
    `ss0-${sessionCookie}`,
    `${opts.cookiePrefix}ss0-Token`,
    `${opts.cookiePrefix}ss0-_BPsession`,
  ]);
  if (opts.sessionJwtCookie) exact.add('sessionJwt');
  const credentialPrefixes: string[] = [];
  for (const p of opts.credentialCookies ?? []) {
    if (p.endsWith('*')) credentialPrefixes.push(p.slice(0, -1));
    else exact.add(p);
  }
  const harmless = new Set<string>(builtInHarmless(opts.cookiePrefix));
  const harmlessPrefixes: string[] = [];
  for (const p of opts.harmlessCookies ?? []) {
    if (p.endsWith('*')) harmlessPrefixes.push(p.slice(0, -1));
    else harmless.add(p);
  }
  return {
    sessionCookie,
    credentialCookies: exact,
    guessableCookies: new Set([`${opts.cookiePrefix}LoggedOut`, 'forceHTTPS']),
    credentialCookiePrefixes: credentialPrefixes,
    harmlessCookies: harmless,
    harmlessCookiePrefixes: harmlessPrefixes,
    credentialHeaders: ['authorization', ...(opts.credentialHeaders ?? []).map((h) => h.toLowerCase())],
    credentialParams: opts.credentialParams ?? [],
    secret: opts.secret,
  };
}

/** Wikimedia's edge: `([sS]ession|Token)=` in the Cookie header means pass. Case-insensitive here. */
const LOOKS_LIKE_CREDENTIAL = /session|token/i;

/** How a cookie name counts: a known provider's credential, one the net caught, or neither. */
export function cookieCredentialKind(name: string, rules: IdentityRules): 'known' | 'net' | undefined {
  if (rules.credentialCookies.has(name)) return 'known';
  for (const p of rules.credentialCookiePrefixes) if (name.startsWith(p)) return 'known';
  if (!LOOKS_LIKE_CREDENTIAL.test(name)) return undefined;
  if (rules.harmlessCookies.has(name)) return undefined;
  for (const p of rules.harmlessCookiePrefixes) if (name.startsWith(p)) return undefined;
  return 'net';
}

/** The request facts identity depends on; `query` is PHP's `$_GET`. */
export interface IdentityInput {
  readonly cookieHeader: string | undefined;
  /** The credential headers' values in the order of `rules.credentialHeaders` (undefined: absent). */
  readonly credentialHeaderValues: readonly (string | undefined)[];
  readonly treatAsUntrusted: boolean;
  readonly query: PhpArray;
  /**
   * The client's address as the wiki will see it (limits/client-key.ts clientAddress), asked only
   * of a slot made of guessable credentials alone, which is bound to it. Undefined: not bound
   * (unit tests).
   */
  readonly clientAddress: (() => string) | undefined;
}

export function isLoginSuppressed(input: Pick<IdentityInput, 'query' | 'treatAsUntrusted'>): boolean {
  // WebRequest::getVal() returns the default for arrays, so only string values count.
  return input.treatAsUntrusted || phpStringParam(input.query, 'callback') !== undefined || phpStringParam(input.query, 'origin') === '*';
}

/** The credentials MediaWiki will read, as name/value pairs, or 'unsure'. */
export function credentialsOf(
  cookies: PhpArray,
  headerValues: readonly (string | undefined)[],
  rules: IdentityRules,
): { pairs: [string, string][]; unknown: boolean; secret: boolean } | 'unsure' {
  const pairs: [string, string][] = [];
  let unknown = false;
  let secret = false;
  for (const [name, value] of cookies) {
    const kind = cookieCredentialKind(name, rules);
    if (kind === undefined) continue;
    if (typeof value !== 'string') return 'unsure';
    if (value === '' || value === 'deleted') continue;
    pairs.push([name, value]);
    if (kind === 'net') unknown = true;
    else if (!rules.guessableCookies.has(name)) secret = true;
  }
  // A token MediaWiki's providers read (OAuth's `Bearer` and `OAuth`, an SSO proxy's header) is
  // a secret; `Authorization: Basic`, `Digest` or `Negotiate` is the web server's, which
  // MediaWiki does not read: one a whole office sends to a wiki behind a shared htpasswd has the
  // wiki answer each client by its address.
  rules.credentialHeaders.forEach((name, i) => {
    const value = headerValues[i];
    if (value === undefined || value === '') return;
    pairs.push([name, value]);
    if (name !== 'authorization' || !WEB_SERVER_AUTHORIZATION.test(value)) secret = true;
  });
  return { pairs, unknown, secret };
}

export function identify(input: IdentityInput, rules: IdentityRules): Identity {
  const cookies = input.cookieHeader ? parsePhpCookies(input.cookieHeader) : EMPTY;
  const suppressed = isLoginSuppressed(input);
  // A query parameter that logs the request in by itself (CentralAuth's `centralauthtoken`:
  // CentralAuthApiSessionProvider makes a session of it, for api.php alone): the answer is that
  // user's, and the token is spent on its first use while its URL may be replayed. Never
  // cached, told `private` (docs/SECURITY.md class 56).
  if (hasCredentialParam(input.query, rules)) return suppressed ? SUPPRESSED_WITH_CREDENTIALS : UNSURE;
  return identifyCookies(cookies, input.credentialHeaderValues, suppressed, rules, input.clientAddress);
}

/** Whether the query holds one of the parameters that log a request in (any value, any shape). */
export function hasCredentialParam(query: PhpArray, rules: IdentityRules): boolean {
  for (const name of rules.credentialParams) if (query.has(name)) return true;
  return false;
}

/** identify() for cookies as PHP read them (`$_COOKIE`). */
function identifyCookies(
  cookies: PhpArray,
  credentialHeaderValues: readonly (string | undefined)[],
  suppressed: boolean,
  rules: IdentityRules,
  clientAddress: (() => string) | undefined,
): Identity {
  // Cookies past max_input_vars: a wiki whose php.ini allows more reads credentials we did not
  // see (1,000 `a;` before a session cookie made a logged-in request look anonymous here).
  const credentials = reachedMaxInputVars(cookies) ? 'unsure' : credentialsOf(cookies, credentialHeaderValues, rules);
  if (suppressed) {
    // Whatever shape the credentials have, MediaWiki never reads them for the user; it still
    // loads the session, so any sign of one makes its answer private.
    const carriesCredentials = credentials === 'unsure' || credentials.pairs.length > 0;
    return { kind: 'anonymous', loginSuppressed: true, carriesCredentials };
  }
  if (credentials === 'unsure') return { kind: 'unsure' };
  const { pairs, unknown, secret } = credentials;
  if (pairs.length === 0) return ANONYMOUS;
  // The slot is the session a logout ends: the session cookie of a known provider when there is
  // one (cookie order does not matter), else every credential.
  const session = pairs.find(([name]) => name === rules.sessionCookie);
  const slotBasis = session ? [session] : [...pairs].sort(byName);
  // Credentials that hold no secret (a `wikiLoggedOut` time, a net-caught `x_token=1`) are
  // anyone's to send: two clients sending the same would share one slot, and the wiki, loading
  // no session for either, answers each by its own address (an IP block, a rate limit, a
  // `~~~` preview). Such a slot is also the client's address (docs/SECURITY.md class 54,
  // test/in-process/attack-guessable-credential-shares-a-session-slot.test.ts).
  if (!secret && clientAddress !== undefined) slotBasis.push([ADDRESS_PAIR_NAME, clientAddress()]);
  return {
    kind: 'session',
    slot: keyedHash(rules.secret, slotBasis),
    variant: keyedHash(rules.secret, [...pairs].sort(byName)),
    unknownCredential: unknown,
  };
}

/** Authorization schemes the web server in front of the wiki answers (RFC 7617, 7616, 4559), not a MediaWiki provider. */
const WEB_SERVER_AUTHORIZATION = /^\s*(?:basic|digest|negotiate)(?:\s|$)/i;

/** The name the client's address is hashed under in a guessable slot's basis: no cookie or header name holds a NUL. */
const ADDRESS_PAIR_NAME = '\0address';

const UNSURE: Identity = Object.freeze({ kind: 'unsure' });
const SUPPRESSED_WITH_CREDENTIALS: Identity = Object.freeze({ kind: 'anonymous', loginSuppressed: true, carriesCredentials: true });
const ANONYMOUS: Identity = Object.freeze({ kind: 'anonymous', loginSuppressed: false, carriesCredentials: false });
const SUPPRESSED_WITHOUT_CREDENTIALS: Identity = Object.freeze({ kind: 'anonymous', loginSuppressed: true, carriesCredentials: false });
const EMPTY: PhpArray = new Map();

function byName(a: [string, string], b: [string, string]): number {
  return a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0;
}

function keyedHash(secret: Buffer, pairs: [string, string][]): string {
  const mac = createHmac('sha256', secret);
  for (const [name, value] of pairs) mac.update(`${name.length}:${name}=${value.length}:${value};`);
  // 128 bits is far beyond any collision an attacker could search for.
  return mac.digest('base64url').slice(0, 22);
}

/** A cookie an answer sets (mediawiki/set-cookie.ts parseSetCookie): its value as sent, or its deletion. */
export interface CookieSet {
  readonly name: string;
  readonly value: string;
  readonly deletion: boolean;
}

/**
 * Who the client is once it holds the cookies an answer sets (a login's new session, a renewed
 * one): its request's cookies as PHP reads them, with the answer's set and deleted ones, taken
 * as its next request would be (not login-suppressed: that is a property of a request). Undefined
 * when the answer sets no credential cookie (the client stays who it was).
 */
export function identityAfterAnswer(headers: IncomingHttpHeaders, set: readonly CookieSet[], rules: IdentityRules): Identity | undefined {
  if (!set.some((cookie) => !cookie.deletion && cookieCredentialKind(cookie.name, rules) !== undefined)) return undefined;
  const cookies: PhpArray = new Map(headers.cookie ? parsePhpCookies(headers.cookie) : EMPTY);
  for (const cookie of set) {
    if (cookie.deletion) cookies.delete(cookie.name);
    // The value as PHP will read it back from the client's next Cookie header.
    else cookies.set(cookie.name, parsePhpCookies(`v=${cookie.value}`).get('v') ?? '');
  }
  const headerValues = credentialHeaderValues(headers, rules);
  // Credentials that hold no secret (a logout's `wikiLoggedOut`) make no session anyone's: the
  // wiki loads none for them, and the slot they make is bound to an address (identifyCookies).
  const credentials = credentialsOf(cookies, headerValues, rules);
  if (credentials !== 'unsure' && !credentials.secret) return undefined;
  return identifyCookies(cookies, headerValues, false, rules, undefined);
}

/** Cookie names present in the request, as PHP sees them (WebResponse::setCookie's "was in the request"). */
export function requestCookieNames(cookieHeader: string | undefined): ReadonlySet<string> {
  return cookieHeader ? new Set(parsePhpCookies(cookieHeader).keys()) : new Set();
}

/** Shorter values could occur in any answer by chance; session ids are 32 characters. */
const MIN_ECHO_LENGTH = 8;

/**
 * Values searched for in an answer, at most: each is a scan of the whole answer, synchronously,
 * and a client writes as many cookies as its head holds (~1,000 of 8 characters). A browser
 * sends a few per wiki of a family on one domain. More is not searched for: the answer is taken
 * as echoing one (mayEchoAny), never stored, and refused if it carried debuginfo
 * (test/unit/attack-credential-values-scanned-without-bound.test.ts).
 */
export const MAX_ECHO_VALUES = 32;

/** Whether an answer (latin1 bytes) may hold one of `values`: credentialValues' net, bounded. */
export function mayEchoAny(body: Buffer, values: readonly string[]): boolean {
  if (values.length > MAX_ECHO_VALUES) return true;
  for (const v of values) if (body.includes(v, 0, 'latin1')) return true;
  return false;
}

/**
 * The request's credential values as an answer could echo them (as sent, and as PHP decodes
 * them), long enough to recognise: the net for an answer that carries the request's own
 * credentials back (a debuginfo copy the stripper does not know). Empty for most requests.
 */
export function credentialValues(headers: IncomingHttpHeaders, rules: IdentityRules): string[] {
  const out = new Set<string>();
  const cookieHeader = headers.cookie;
  if (cookieHeader) {
    for (const [name, value] of parsePhpCookies(cookieHeader)) {
      if (typeof value === 'string' && value.length >= MIN_ECHO_LENGTH && cookieCredentialKind(name, rules)) out.add(value);
    }
    for (const part of cookieHeader.split(';')) {
      const eq = part.indexOf('=');
      if (eq === -1) continue;
      const name = part.slice(0, eq).trim().replace(/[. ]/g, '_');
      const value = part.slice(eq + 1).trim();
      if (value.length >= MIN_ECHO_LENGTH && cookieCredentialKind(name.replace(/\[.*$/, ''), rules)) out.add(value);
    }
  }
  for (const name of rules.credentialHeaders) {
    const value = headerValue(headers[name]);
    if (value !== undefined && value.length >= MIN_ECHO_LENGTH) out.add(value);
  }
  return [...out];
}

/** Whether a request may carry credentials at all, from its headers (the fresh-hit path's test). */
export function mayCarryCredentials(headers: IncomingHttpHeaders, rules: IdentityRules): boolean {
  if (headers.cookie !== undefined) return true;
  for (const name of rules.credentialHeaders) if (headers[name] !== undefined) return true;
  return false;
}

/**
 * `headers` must be what the wiki will receive (http/forwarding.ts forwardedView): a credential or a
 * Treat-as-Untrusted header that never reaches the wiki must not decide who is asking.
 * `clientAddress`: the client's address (limits/client-key.ts clientAddress), asked only of a
 * request that may carry credentials.
 */
export function identityFromHeaders(headers: IncomingHttpHeaders, query: PhpArray, rules: IdentityRules, clientAddress: () => string): Identity {
  const treatAsUntrusted = headers['treat-as-untrusted'] !== undefined;
  // No Cookie header and no credential header: no credentials, as identify() would conclude
  // without its parse, lists and objects (most requests).
  if (!mayCarryCredentials(headers, rules) && !hasCredentialParam(query, rules))
    return isLoginSuppressed({ query, treatAsUntrusted }) ? SUPPRESSED_WITHOUT_CREDENTIALS : ANONYMOUS;
  // A literal, not a spread of another object followed by more properties, which V8 builds in
  // its runtime rather than its fast object copy: ~1-2 µs a call (bench/micro-miss.mjs).
  return identify(
    { cookieHeader: headers.cookie, credentialHeaderValues: credentialHeaderValues(headers, rules), treatAsUntrusted, query, clientAddress },
    rules,
  );
}

/**
 * Who is asking, on a path other than api.php (index.php, a page view, Special:UserLogout):
 * only api.php suppresses a login for `callback=`, `origin=*` or Treat-as-Untrusted (ApiMain),
 * index.php reads the session whatever the request says, so a logout or a write there ends or
 * changes the session all the same.
 */
export function sessionIdentityFromHeaders(headers: IncomingHttpHeaders, rules: IdentityRules, clientAddress: () => string): Identity {
  return identify(
    { cookieHeader: headers.cookie, credentialHeaderValues: credentialHeaderValues(headers, rules), treatAsUntrusted: false, query: EMPTY, clientAddress },
    rules,
  );
}

/** The values of the headers besides Cookie that may carry credentials: `authorization` and the operator's. */
function credentialHeaderValues(headers: IncomingHttpHeaders, rules: IdentityRules): (string | undefined)[] {
  return rules.credentialHeaders.map((name) => headerValue(headers[name]));
}

function headerValue(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v.join(', ') : v;
}
