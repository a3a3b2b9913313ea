/**
 * Who is asking, decided exactly as MediaWiki 1.39 decides it, from the request's headers alone.
 *
 * - The credentials are the cookies of CookieSessionProvider::getVaryCookies() (line 315):
 *   `{prefix}Token`, `{prefix}LoggedOut`, the session cookie (`$wgSessionName ?: {prefix}_session`),
 *   `forceHTTPS`, plus `sessionJwt` where JWT sessions are enabled, and any `Authorization` header
 *   (OAuth's session provider).
 * - CookieSessionProvider::getCookie(): "PHP uses 'deleted' when deleting cookies. Only way to be
 *   sure is to treat it as non-existent." An empty value is treated the same way.
 * - Names are looked up in PHP's `$_COOKIE` (see php/php-input.ts), not in a generic parse.
 * - ApiMain::lacksSameOriginSecurity() (SOURCE-NOTES §8): `callback=` (JSONP), `origin=*` or a
 *   `Treat-as-Untrusted` header make MediaWiki replace the user with an anonymous one
 *   ("MediaWiki-Login-Suppressed: true"), so such requests are anonymous whatever they carry.
 *
 * The slot that keys a session's cache entries is an HMAC of the credential values: raw values
 * never leave this module.
 */
import { createHmac } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { type PhpArray, parsePhpCookies, phpStringParam } from './php/php-input.js';

export type Identity =
  | { readonly kind: 'anonymous'; readonly loginSuppressed: boolean }
  /**
   * `slot` groups everything of one session (the session cookie when there is one) so that a
   * logout evicts all of it; `variant` separates different credential sets within a slot.
   */
  | { readonly kind: 'session'; readonly slot: string; readonly variant: string }
  /** Credentials in a shape MediaWiki would not read as a plain string (e.g. `wiki_session[a]=`): never cached. */
  | { readonly kind: 'unsure' };

export interface IdentityRules {
  readonly sessionCookie: string;
  /** Credential cookie names, session cookie first. */
  readonly credentialCookies: readonly string[];
  readonly secret: Buffer;
}

export function identityRules(opts: {
  cookiePrefix: string;
  sessionName: string;
  sessionJwtCookie: boolean;
  secret: Buffer;
}): IdentityRules {
  const sessionCookie = opts.sessionName || `${opts.cookiePrefix}_session`;
  const names = [sessionCookie, `${opts.cookiePrefix}Token`, `${opts.cookiePrefix}LoggedOut`, 'forceHTTPS'];
  if (opts.sessionJwtCookie) names.push('sessionJwt');
  return { sessionCookie, credentialCookies: names, secret: opts.secret };
}

/** The request facts identity depends on; `query` is PHP's `$_GET`. */
export interface IdentityInput {
  readonly cookieHeader: string | undefined;
  readonly authorization: string | undefined;
  readonly treatAsUntrusted: boolean;
  readonly query: PhpArray;
}

export function isLoginSuppressed(input: Pick<IdentityInput, 'query' | 'treatAsUntrusted'>): boolean {
  // WebRequest::getVal() returns the default for arrays, so only string values count.
  return (
    input.treatAsUntrusted ||
    phpStringParam(input.query, 'callback') !== undefined ||
    phpStringParam(input.query, 'origin') === '*'
  );
}

/** The credentials MediaWiki will read, as name/value pairs, or 'unsure'. */
export function credentialsOf(
  cookies: PhpArray,
  authorization: string | undefined,
  rules: IdentityRules,
): [string, string][] | 'unsure' {
  const found: [string, string][] = [];
  for (const name of rules.credentialCookies) {
    const value = cookies.get(name);
    if (value === undefined) continue;
    if (typeof value !== 'string') return 'unsure';
    if (value === '' || value === 'deleted') continue;
    found.push([name, value]);
  }
  if (authorization !== undefined && authorization !== '') found.push(['authorization', authorization]);
  return found;
}

export function identify(input: IdentityInput, rules: IdentityRules): Identity {
  if (isLoginSuppressed(input)) return { kind: 'anonymous', loginSuppressed: true };
  const cookies = input.cookieHeader ? parsePhpCookies(input.cookieHeader) : EMPTY;
  const credentials = credentialsOf(cookies, input.authorization, rules);
  if (credentials === 'unsure') return { kind: 'unsure' };
  if (credentials.length === 0) return { kind: 'anonymous', loginSuppressed: false };
  const session = credentials.find(([name]) => name === rules.sessionCookie);
  const slotBasis = session ? [session] : credentials;
  return {
    kind: 'session',
    slot: keyedHash(rules.secret, slotBasis),
    variant: keyedHash(rules.secret, credentials),
  };
}

const EMPTY: PhpArray = new Map();

function keyedHash(secret: Buffer, pairs: [string, string][]): string {
  const mac = createHmac('sha256', secret);
  for (const [name, value] of pairs) mac.update(`${name.length}:${name}=${value.length}:${value};`);
  // 128 bits is far beyond any collision an attacker could search for.
  return mac.digest('base64url').slice(0, 22);
}

/** Cookie names present in the request, as PHP sees them (WebResponse::setCookie's "was in the request"). */
export function requestCookieNames(cookieHeader: string | undefined): ReadonlySet<string> {
  return cookieHeader ? new Set(parsePhpCookies(cookieHeader).keys()) : new Set();
}

export function identityFromHeaders(
  headers: IncomingHttpHeaders,
  query: PhpArray,
  rules: IdentityRules,
): Identity {
  return identify(
    {
      cookieHeader: headers.cookie,
      authorization: headers.authorization,
      treatAsUntrusted: headers['treat-as-untrusted'] !== undefined,
      query,
    },
    rules,
  );
}
