/**
 * What happens to the wiki's Set-Cookie lines on their way to the client.
 *
 * - MediaWiki unpersists the session on every anonymous request (SessionBackend::save →
 *   CookieSessionProvider::unpersistSession) and WebResponse::setCookie() drops a deletion for a
 *   cookie "not in the request". We apply the same rule again at the edge: a deletion of a cookie
 *   the client did not send is dropped, a deletion of one it did send is relayed (a logout or a
 *   failed session must still clear the browser).
 * - A new or changed session cookie means the answer belongs to this client alone: never stored.
 * - A deletion of a credential cookie (the session cookie, a bot-password session, any cookie a
 *   session provider reads: mediawiki/identity.ts) ends the session: its cache entries are evicted.
 * Attributes are relayed unchanged.
 */

import type { CookieSet } from './identity.js';

export type CookieEvent = 'dropped_deletion' | 'relayed_deletion' | 'session_started' | 'logout_eviction';

/** Bounded label values for metrics: cookie names folded to what MediaWiki sets. */
export type CookieLabel = 'session' | 'Token' | 'UserID' | 'UserName' | 'LoggedOut' | 'forceHTTPS' | 'sessionJwt' | 'BPsession' | 'credential' | 'other';

export interface CookieOutcome {
  /** Set-Cookie lines to send to the client. */
  readonly relay: string[];
  readonly events: { event: CookieEvent; cookie: CookieLabel }[];
  /** The wiki started, renewed or changed the session: the answer is this client's alone. */
  readonly sessionStarted: boolean;
  /** The wiki deleted a credential cookie the client sent: the session it held is over. */
  readonly sessionEnded: boolean;
}

export interface CookieNames {
  readonly sessionCookie: string;
  readonly cookiePrefix: string;
  /** Whether a cookie of this name is a credential (mediawiki/identity.ts cookieCredentialKind). */
  readonly isCredential: (name: string) => boolean;
}

/** A Set-Cookie line's cookie: its name as PHP will see it, its value as sent, whether it deletes the cookie. */
export function parseSetCookie(line: string, now: number): CookieSet {
  const semi = line.indexOf(';');
  const pair = semi === -1 ? line : line.slice(0, semi);
  const eq = pair.indexOf('=');
  const name = (eq === -1 ? pair : pair.slice(0, eq)).trim();
  const value = eq === -1 ? '' : pair.slice(eq + 1).trim();
  let maxAge: number | undefined;
  let expired = false;
  if (semi !== -1) {
    for (const attr of line.slice(semi + 1).split(';')) {
      const [k = '', v = ''] = attr.split('=', 2).map((s) => s.trim());
      const key = k.toLowerCase();
      if (key === 'max-age' && /^-?\d+$/.test(v)) maxAge = Number(v);
      if (key === 'expires') {
        const t = Date.parse(v);
        if (Number.isFinite(t) && t <= now) expired = true;
      }
    }
  }
  // RFC 6265 §5.3 step 3: Max-Age wins over Expires (our clock may run ahead of the wiki's).
  const deletion = value === 'deleted' || (maxAge !== undefined ? maxAge <= 0 : expired);
  // PHP stores cookie names with `.` and space turned into `_` (php_register_variable_ex); compare alike.
  return { name: name.replace(/[. ]/g, '_'), value, deletion };
}

export function cookieLabel(name: string, names: CookieNames): CookieLabel {
  if (name === names.sessionCookie) return 'session';
  if (name === 'forceHTTPS' || name === 'sessionJwt') return name;
  if (name.startsWith(names.cookiePrefix)) {
    const rest = name.slice(names.cookiePrefix.length);
    if (rest === 'Token' || rest === 'UserID' || rest === 'UserName' || rest === 'LoggedOut') return rest;
    if (rest === '_BPsession') return 'BPsession';
  }
  return names.isCredential(name) ? 'credential' : 'other';
}

export function normalizeSetCookies(lines: readonly string[], sentCookieNames: ReadonlySet<string>, names: CookieNames, now: number): CookieOutcome {
  const relay: string[] = [];
  const events: CookieOutcome['events'] = [];
  let sessionStarted = false;
  let sessionEnded = false;
  for (const line of lines) {
    const cookie = parseSetCookie(line, now);
    const label = cookieLabel(cookie.name, names);
    if (cookie.deletion) {
      if (!sentCookieNames.has(cookie.name)) {
        events.push({ event: 'dropped_deletion', cookie: label });
        continue;
      }
      events.push({ event: 'relayed_deletion', cookie: label });
      if (names.isCredential(cookie.name)) sessionEnded = true;
    } else if (label === 'session') {
      sessionStarted = true;
      events.push({ event: 'session_started', cookie: label });
    }
    relay.push(line);
  }
  return { relay, events, sessionStarted, sessionEnded };
}
