/**
 * vcl_backend_response for api.php: may this answer be stored, where, for how long, and which
 * headers does the client get. Pure: headers and a clock in, a decision out.
 *
 * MediaWiki decides per request (ApiMain::sendCacheHeaders, SOURCE-NOTES §2). With the smaxage
 * probe added to the request:
 *   public (or anon-public-user-private for an anonymous requester) → `…, public` + Vary incl. Cookie
 *   anon-public-user-private for a persisted session                → `private, …` + Vary incl. Cookie
 *   private                                                          → `private, …`, no Vary
 * and HeaderCallback::callback() rewrites any answer carrying Set-Cookie to
 * `private, max-age=0, s-maxage=0` (T127993); errors are always private (ApiMain::handleException).
 */
import type { Identity } from '../identity.js';
import type { CacheMode, NoStoreReason, Tier } from '../outcomes.js';

export type { CacheMode, NoStoreReason, Tier } from '../outcomes.js';
import type { ModuleRule } from '../config.js';
import { KEYED_VARY, SMAXAGE_PROBE } from './request.js';


export interface UpstreamAnswer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
}

export interface StoreDecision {
  readonly store: true;
  readonly tier: Tier;
  readonly mode: CacheMode;
  readonly ttlMs: number;
}
export type ResponseVerdict =
  | StoreDecision
  | { readonly store: false; readonly reason: NoStoreReason; readonly mode: CacheMode };

export interface TtlSettings {
  readonly ttlPublicSeconds: number;
  readonly ttlSessionSeconds: number;
  readonly ttlMaxSeconds: number;
  readonly ttlJitterRatio: number;
}

/** Cache-Control directives in order: name (lower case) → value ('' when it has none). */
export function parseCacheControl(value: string | undefined): Map<string, string> {
  const out = new Map<string, string>();
  if (!value) return out;
  for (const part of value.split(',')) {
    const eq = part.indexOf('=');
    const name = (eq === -1 ? part : part.slice(0, eq)).trim().toLowerCase();
    if (!name) continue;
    out.set(
      name,
      eq === -1
        ? ''
        : part
            .slice(eq + 1)
            .trim()
            .replace(/^"|"$/g, ''),
    );
  }
  return out;
}

function seconds(value: string | undefined): number | undefined {
  if (value === undefined || !/^\d+$/.test(value)) return undefined;
  return Number(value);
}

function varyNames(headers: UpstreamAnswer['headers']): string[] {
  const raw = headers['vary'];
  if (raw === undefined) return [];
  return (Array.isArray(raw) ? raw.join(',') : raw)
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .filter(Boolean);
}

/** The mode MediaWiki chose for this requester, read back from its headers. */
export function inferMode(headers: UpstreamAnswer['headers']): CacheMode {
  const cc = parseCacheControl(single(headers['cache-control']));
  const varyCookie = varyNames(headers).includes('cookie');
  if (cc.has('public')) return 'public';
  if (cc.has('private')) return varyCookie ? 'anon-public-user-private' : 'private';
  return 'unknown';
}

function single(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v.join(', ') : v;
}

/**
 * Decide whether and where to store. `random` is injected (jitter) so tests are exact.
 * Size and debuginfo are checked by the caller, once the body is known.
 */
export function evaluateAnswer(
  answer: UpstreamAnswer,
  requester: Identity,
  rule: ModuleRule,
  ttl: TtlSettings,
  random: () => number,
): ResponseVerdict {
  const mode = inferMode(answer.headers);
  // Only complete successful answers; MediaWiki answers API errors with 200 + this header.
  if (answer.status !== 200) return { store: false, reason: 'status', mode };
  if (answer.headers['mediawiki-api-error'] !== undefined) return { store: false, reason: 'api-error', mode };
  // No Set-Cookie is ever stored, and an answer that sets one is this client's alone.
  if (answer.headers['set-cookie'] !== undefined) return { store: false, reason: 'set-cookie', mode };
  const cc = parseCacheControl(single(answer.headers['cache-control']));
  if (cc.has('no-store') || cc.has('no-cache')) return { store: false, reason: 'no-store', mode };
  // A Vary we cannot reproduce in the key (e.g. Accept-Language under an extension, or `*`).
  for (const name of varyNames(answer.headers))
    if (!KEYED_VARY.has(name)) return { store: false, reason: 'vary', mode };

  const cap = ttl.ttlMaxSeconds;
  const jitter = (s: number): number =>
    Math.max(1, Math.round(s * 1000 * (1 - ttl.ttlJitterRatio * random())));

  if (requester.kind === 'session') {
    // Everything a session holder receives stays in that session's slot, whatever the mode:
    // an answer made with credentials never reaches another requester.
    const maxAge = seconds(cc.get('max-age'));
    const given = maxAge !== undefined && maxAge > 0 ? maxAge : undefined;
    const s = Math.min(rule.ttlSeconds ?? given ?? ttl.ttlSessionSeconds, cap);
    return { store: true, tier: 'session', mode, ttlMs: jitter(s) };
  }

  // Anonymous requester: shared only when MediaWiki said public for this request.
  if (mode !== 'public') {
    if (mode === 'private' && rule.shareAnonymousPrivate) {
      const s = Math.min(rule.ttlSeconds ?? ttl.ttlPublicSeconds, cap);
      return { store: true, tier: 'shared', mode, ttlMs: jitter(s) };
    }
    return {
      store: false,
      reason: mode === 'anon-public-user-private' ? 'zero-ttl' : 'private-anonymous',
      mode,
    };
  }
  const sMaxAge = seconds(cc.get('s-maxage'));
  if (sMaxAge === 0) return { store: false, reason: 'zero-ttl', mode };
  // Our probe's value means the wiki set no max age of its own: the operator's default applies.
  const fromWiki = sMaxAge === undefined || sMaxAge === SMAXAGE_PROBE ? undefined : sMaxAge;
  const s = Math.min(rule.ttlSeconds ?? fromWiki ?? ttl.ttlPublicSeconds, cap);
  return { store: true, tier: 'shared', mode, ttlMs: jitter(s) };
}

const EPOCH_PLUS_ONE = 'Thu, 01 Jan 1970 00:00:01 GMT';

/**
 * The Cache-Control and Expires the client would have had for its own request, without our
 * probe. For `public` answers ApiMain::sendCacheHeaders() builds s-maxage from the smaxage
 * parameter (0 for the client), and "if both are 0" sends `private, must-revalidate, max-age=0`
 * (no Expires); otherwise Expires is time() + min(s-maxage, max-age), i.e. Unix time 1 when 0.
 */
export function unprobedCacheHeaders(
  cacheControl: string | undefined,
  expires: string | undefined,
): { cacheControl: string | undefined; expires: string | undefined } {
  if (!cacheControl) return { cacheControl, expires };
  const directives = cacheControl.split(',').map((d) => d.trim());
  const probeAt = directives.indexOf(`s-maxage=${SMAXAGE_PROBE}`);
  if (probeAt === -1) return { cacheControl, expires };
  const maxAge = directives.map((d) => /^max-age=(\d+)$/.exec(d)?.[1]).find((v) => v !== undefined);
  if (maxAge === undefined || Number(maxAge) === 0) {
    return { cacheControl: `private, must-revalidate, max-age=${maxAge ?? 0}`, expires: undefined };
  }
  directives[probeAt] = 's-maxage=0';
  return { cacheControl: directives.join(', '), expires: EPOCH_PLUS_ONE };
}

/**
 * A per-session answer never tells downstream caches it is public: a shared cache behind us
 * would otherwise keep one user's answer for others.
 */
export function sessionCacheControl(cacheControl: string | undefined): string | undefined {
  if (!cacheControl) return cacheControl;
  const cc = parseCacheControl(cacheControl);
  if (!cc.has('public') && !cc.has('s-maxage')) return cacheControl;
  const maxAge = seconds(cc.get('max-age')) ?? 0;
  return `private, must-revalidate, max-age=${maxAge}`;
}
