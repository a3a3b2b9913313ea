/**
 * vcl_backend_response for api.php: may this answer be stored, where, for how long, and which
 * headers does the client get. Pure: headers and a clock in, a decision out.
 *
 * MediaWiki decides per request (includes/api/ApiMain.php, sendCacheHeaders()). With the smaxage
 * probe added to the request:
 *   public (or anon-public-user-private for an anonymous requester) → `…, public` + Vary incl. Cookie
 *   anon-public-user-private for a persisted session                → `private, …` + Vary incl. Cookie
 *   private                                                          → `private, …`, no Vary
 * and HeaderCallback::callback() rewrites any answer carrying Set-Cookie to
 * `private, max-age=0, s-maxage=0` (T127993); errors are always private (ApiMain::handleException).
 */
import type { Identity } from '../mediawiki/identity.js';
import type { CacheMode, NoStoreReason, Tier } from '../words/outcomes.js';

export type { CacheMode, NoStoreReason, Tier } from '../words/outcomes.js';
import type { ModuleRule } from '../config/config.js';
import { downstreamResponseHeaders, headerString } from '../http/forwarding.js';
import { parsePhpCookies } from '../mediawiki/php-input.js';
import { redactQuery } from '../http/redaction.js';
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
export type ResponseVerdict = StoreDecision | { readonly store: false; readonly reason: NoStoreReason; readonly mode: CacheMode };

export interface TtlSettings {
  readonly ttlPublicSeconds: number;
  readonly ttlSessionSeconds: number;
  readonly ttlMaxSeconds: number;
  readonly ttlJitterRatio: number;
}

/** Cache-Control directives in order: name (lower case) → value ('' when it has none). */
export function parseCacheControl(value: string | undefined): Map<string, string> {
  return value ? directivesOf(value.split(',')) : new Map<string, string>();
}

function directivesOf(parts: readonly string[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const part of parts) {
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

/**
 * What the verdict reads of an answer's headers, read once (policy/answer-policy.ts builds it
 * once per answer; evaluateAnswer for one question).
 */
export interface HeaderFacts {
  readonly status: number;
  readonly apiError: boolean;
  readonly setsCookie: boolean;
  /** The Cache-Control directives (parseCacheControl), and the header as one string. */
  readonly cc: ReadonlyMap<string, string>;
  readonly cacheControl: string | undefined;
  /** Its directives as written, trimmed (what unprobedCacheHeaders rewrites). */
  readonly ccParts: readonly string[];
  /** The names Vary lists, lower case. */
  readonly vary: readonly string[];
  readonly mode: CacheMode;
}

export function headerFacts(answer: UpstreamAnswer): HeaderFacts {
  const cacheControl = single(answer.headers['cache-control']);
  const { ccParts, cc } = cacheControlOf(cacheControl);
  const vary = varyNames(answer.headers);
  return {
    status: answer.status,
    apiError: answer.headers['mediawiki-api-error'] !== undefined,
    setsCookie: answer.headers['set-cookie'] !== undefined,
    cc,
    cacheControl,
    ccParts,
    vary,
    mode: modeOf(cc, vary),
  };
}

/**
 * A Cache-Control value's directives, read once per value: a wiki's answers carry a handful of
 * values (one per module and maxage/smaxage), read on every miss. Bounded: the values a client's
 * maxage and smaxage make are cleared with the rest once there are MAX_REMEMBERED.
 */
function cacheControlOf(cacheControl: string | undefined): { readonly ccParts: readonly string[]; readonly cc: ReadonlyMap<string, string> } {
  if (cacheControl === undefined || cacheControl === '') return NO_CACHE_CONTROL;
  let read = readCacheControls.get(cacheControl);
  if (read === undefined) {
    const ccParts = Object.freeze(cacheControl.split(',').map((d) => d.trim()));
    read = { ccParts, cc: directivesOf(ccParts) };
    if (readCacheControls.size >= MAX_REMEMBERED) readCacheControls.clear();
    readCacheControls.set(cacheControl, read);
  }
  return read;
}

const NO_CACHE_CONTROL = { ccParts: Object.freeze([]), cc: new Map<string, string>() };
const MAX_REMEMBERED = 256;
const readCacheControls = new Map<string, { readonly ccParts: readonly string[]; readonly cc: ReadonlyMap<string, string> }>();

function modeOf(cc: ReadonlyMap<string, string>, vary: readonly string[]): CacheMode {
  if (cc.has('public')) return 'public';
  if (cc.has('private')) return vary.includes('cookie') ? 'anon-public-user-private' : 'private';
  return 'unknown';
}

/** The mode MediaWiki chose for this requester, read back from its headers. */
export function inferMode(headers: UpstreamAnswer['headers']): CacheMode {
  return modeOf(parseCacheControl(single(headers['cache-control'])), varyNames(headers));
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
  /** The query has `origin` (storeVerdict's originKeyed). */
  originKeyed = false,
): ResponseVerdict {
  return storeVerdict(headerFacts(answer), requester, rule, ttl, ttl, random, false, originKeyed);
}

/** evaluateAnswer on headers read once: `defaults` are the TTLs the change signals allow, `limits` the operator's cap and jitter. */
export function storeVerdict(
  facts: HeaderFacts,
  requester: Identity,
  rule: ModuleRule,
  defaults: Pick<TtlSettings, 'ttlPublicSeconds' | 'ttlSessionSeconds'>,
  limits: Pick<TtlSettings, 'ttlMaxSeconds' | 'ttlJitterRatio'>,
  random: () => number,
  /** The request's own `smaxage` parameter made the answer's s-maxage (ApiMain::sendCacheHeaders). */
  clientChoseSmaxage = false,
  /** The key holds the request's Origin header: only when the query has `origin` (steps/recv.ts keyedHeadersOf). */
  originKeyed = false,
): ResponseVerdict {
  const { mode, cc } = facts;
  // Only complete successful answers; MediaWiki answers API errors with 200 + this header.
  if (facts.status !== 200) return { store: false, reason: 'status', mode };
  if (facts.apiError) return { store: false, reason: 'api-error', mode };
  // No Set-Cookie is ever stored, and an answer that sets one is this client's alone.
  if (facts.setsCookie) return { store: false, reason: 'set-cookie', mode };
  if (cc.has('no-store') || cc.has('no-cache')) return { store: false, reason: 'no-store', mode };
  // A Vary we cannot reproduce in the key (e.g. Accept-Language under an extension, or `*`).
  for (const name of facts.vary) if (!KEYED_VARY.has(name)) return { store: false, reason: 'vary', mode };
  // Origin is in the key only beside an `origin` parameter, the one MediaWiki answers CORS for
  // (ApiMain::handleCORS). An answer that varies on it without one (a web server's or an
  // extension's CORS headers echoing any Origin) would be one client's Origin for everyone
  // (docs/SECURITY.md class 55, test/in-process/attack-origin-header-decides-a-shared-answer.test.ts).
  if (!originKeyed && facts.vary.includes('origin')) return { store: false, reason: 'vary', mode };

  const cap = limits.ttlMaxSeconds;
  const jitter = (s: number): number => Math.max(1, Math.round(s * 1000 * (1 - limits.ttlJitterRatio * random())));

  if (requester.kind === 'session') {
    // Everything a session holder receives stays in that session's slot, whatever the mode:
    // an answer made with credentials never reaches another requester.
    // It is kept at most the session TTL, whatever max-age says: its max-age is the client's own
    // `maxage` parameter or the module's (ApiMain::sendCacheHeaders: `private, must-revalidate,
    // max-age=N`, or `public` with an explicit uselang), a hint for the client's own cache, while
    // the session TTL is what bounds a session's answers after a logout or a rights change the
    // gateway did not see. A public one too: `assert=user` passes only while the session lives
    // (commit 96cd392, test/integration/session-answer-bounded-by-the-session-ttl-whatever-its-max-age: a session logged out at the wiki kept being told
    // it was logged in for the hour its client's maxage asked for). A shorter max-age is kept
    // shorter; an operator's module rule decides for itself.
    const maxAge = seconds(cc.get('max-age'));
    const given = maxAge !== undefined && maxAge > 0 ? Math.min(maxAge, defaults.ttlSessionSeconds) : undefined;
    const s = Math.min(rule.ttlSeconds ?? given ?? defaults.ttlSessionSeconds, cap);
    return { store: true, tier: 'session', mode, ttlMs: jitter(s) };
  }

  // Anonymous requester: shared only when MediaWiki said public for this request.
  if (mode !== 'public') {
    if (mode === 'private' && rule.shareAnonymousPrivate) {
      const s = Math.min(rule.ttlSeconds ?? defaults.ttlPublicSeconds, cap);
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
  // A client's own smaxage never keeps a shared entry longer than the operator's default: any
  // client could otherwise store cache-busting answers for the longest TTL allowed, and fill the
  // shared tier's Redis with them (test/unit/attack-client-smaxage-lengthens-shared-entries.test.ts).
  const asked = fromWiki !== undefined && clientChoseSmaxage ? Math.min(fromWiki, defaults.ttlPublicSeconds) : fromWiki;
  const s = Math.min(rule.ttlSeconds ?? asked ?? defaults.ttlPublicSeconds, cap);
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
  return unprobedFrom(
    cacheControl.split(',').map((d) => d.trim()),
    cacheControl,
    expires,
  );
}

/** unprobedCacheHeaders on the directives already split (HeaderFacts.ccParts). */
function unprobedFrom(
  parts: readonly string[],
  cacheControl: string,
  expires: string | undefined,
): { cacheControl: string | undefined; expires: string | undefined } {
  const probeAt = parts.indexOf(`s-maxage=${SMAXAGE_PROBE}`);
  if (probeAt === -1) return { cacheControl, expires };
  const maxAge = parts.map((d) => /^max-age=(\d+)$/.exec(d)?.[1]).find((v) => v !== undefined);
  if (maxAge === undefined || Number(maxAge) === 0) {
    return { cacheControl: `private, must-revalidate, max-age=${maxAge ?? 0}`, expires: undefined };
  }
  const directives = [...parts];
  directives[probeAt] = 's-maxage=0';
  return { cacheControl: directives.join(', '), expires: EPOCH_PLUS_ONE };
}

/**
 * A per-session answer never tells downstream caches it is public: a shared cache behind us
 * would otherwise keep one user's answer for others.
 */
export function sessionCacheControl(cacheControl: string | undefined): string | undefined {
  if (!cacheControl) return cacheControl;
  return sessionFrom(parseCacheControl(cacheControl), cacheControl);
}

function sessionFrom(cc: ReadonlyMap<string, string>, cacheControl: string): string {
  if (!cc.has('public') && !cc.has('s-maxage')) return cacheControl;
  const maxAge = seconds(cc.get('max-age')) ?? 0;
  return `private, must-revalidate, max-age=${maxAge}`;
}

// ------------------------------------------------------------------------- the final verdict

/** What is known of an answer once its body has been read and inspected (steps/ask-wiki.ts). */
export interface InspectedFacts {
  /** The body was read whole (false: it streams on, past the inspection limit). */
  readonly complete: boolean;
  readonly bodyBytes: number;
  readonly maxEntryBytes: number;
  /** debuginfo was kept in the body (WIKIEDGE_DEBUGINFO=pass, or `off` with a body that may hold it). */
  readonly debuginfoKept: boolean;
  /** The body holds one of the request's credential values. */
  readonly echoesCredentials: boolean;
  /** The answer would be shared and holds the requester's own address (mediawiki/requester-address.ts). */
  readonly holdsRequesterAddress: boolean;
  /**
   * The wiki was sent the client's cookies and credential headers (a login-suppressed request
   * that carries credentials: http/forwarding.ts withoutCookies is off for it).
   */
  readonly fetchedWithClientCookies: boolean;
}

/**
 * evaluateAnswer's verdict, amended by what only the body tells: a body too large or still
 * streaming is not stored; one that kept debuginfo or echoes the request's credentials is never
 * stored; a shared answer that holds the requester's address is that requester's alone.
 *
 * And what everyone shares is only ever what the wiki answers a client without cookies (class
 * 28): an answer the wiki made with this client's cookies is not shared, whatever it says of
 * itself. A login-suppressed request (origin=*, callback=, Treat-as-Untrusted) that carries
 * credentials keeps its cookies so that the wiki loads its session and answers `private`
 * (class 16); but the wiki answers `public` when the "credential" loads no session (a
 * `wikiLoggedOut` cookie, any name the credential net takes for one), and the other cookies
 * (`resourceLoaderDebug`) shaped that answer: stored, it became every reader's (commit cabe6cf,
 * test/integration/attack-login-suppressed-cookie-poisoning.test.ts).
 */
export function finalVerdict(verdict: ResponseVerdict, facts: InspectedFacts): ResponseVerdict {
  if (!verdict.store) return verdict;
  const notStored = ((): NoStoreReason | undefined => {
    if (!facts.complete || facts.bodyBytes > facts.maxEntryBytes) return 'too-large';
    if (facts.debuginfoKept) return 'debuginfo';
    if (facts.echoesCredentials) return 'credential-echo';
    // In a session's slot too: a slot is only as private as the credential it is made of, and a
    // `wikiLoggedOut` cookie (a Unix time) or a name the credential net takes, with a value
    // anyone can send, gives two clients one slot, the wiki answering both as anonymous by
    // their address (docs/SECURITY.md class 54). A logged-in user's answers name the user, not
    // the address: what this costs them is a preview signed with `~~~`.
    if (facts.holdsRequesterAddress) return 'requester-address';
    if (verdict.tier === 'shared' && facts.fetchedWithClientCookies) return 'client-cookies';
    return undefined;
  })();
  return notStored ? { store: false, reason: notStored, mode: verdict.mode } : verdict;
}

// -------------------------------------------------------------------------------- the request

/**
 * A session holder may force a fresh answer for itself (RFC 9111 §5.2.1.4 `no-cache`, or
 * `Pragma: no-cache`); a client's no-cache never touches (and so never evicts) what everyone
 * shares.
 */
export function bypassesCache(tier: Tier, requestHeaders: Readonly<Record<string, string | string[] | undefined>>): boolean {
  return tier === 'session' && clientNoCache(requestHeaders);
}

export function clientNoCache(requestHeaders: Readonly<Record<string, string | string[] | undefined>>): boolean {
  const cc = headerString(requestHeaders['cache-control']) ?? '';
  return /(^|,)\s*no-cache\s*(,|$)/i.test(cc) || /no-cache/i.test(headerString(requestHeaders['pragma']) ?? '');
}

// ------------------------------------------------------------------------- the client's headers

/**
 * The headers the client gets, as the wiki would have sent them for the client's own request:
 * hop-by-hop ones, Set-Cookie (relayed apart, never stored), the wiki's request id and (the body
 * is always delivered decoded) Content-Encoding removed; our smaxage probe undone
 * (unprobedCacheHeaders); and for an answer kept in a session's slot, never `public`.
 */
export function responseHeaders(
  upstream: Readonly<Record<string, string | string[] | undefined>>,
  opts: { readonly probed: boolean; readonly perSession: boolean },
  /** The same answer's headers read already (answer-policy.ts): its Cache-Control is not parsed again. */
  facts?: HeaderFacts,
): Record<string, string | string[]> {
  const out = downstreamResponseHeaders(upstream, { dropLength: true });
  delete out['set-cookie'];
  delete out['x-request-id'];
  delete out['content-encoding'];
  const original = headerString(out['cache-control']);
  // The facts hold this Cache-Control unless a Connection header named it (dropped above).
  const read = facts !== undefined && original === facts.cacheControl ? facts : undefined;
  if (opts.probed && original) {
    const unprobed = read ? unprobedFrom(read.ccParts, original, headerString(out['expires'])) : unprobedCacheHeaders(original, headerString(out['expires']));
    if (unprobed.cacheControl === undefined) delete out['cache-control'];
    else out['cache-control'] = unprobed.cacheControl;
    if (unprobed.expires === undefined) delete out['expires'];
    else out['expires'] = unprobed.expires;
  }
  if (opts.perSession) {
    const now = headerString(out['cache-control']);
    const cc = now && read && now === original ? sessionFrom(read.cc, now) : sessionCacheControl(now);
    if (cc !== undefined) out['cache-control'] = cc;
    if (cc?.startsWith('private')) delete out['expires'];
  }
  return out;
}

// ------------------------------------------------------------------------- the representation

/**
 * An answer the gateway may send compressed varies by Accept-Encoding: it says so (RFC 9110
 * §12.5.5: "An origin server SHOULD send a Vary header field when its algorithm for selecting a
 * representation varies based on aspects of the request message other than the method and
 * target URI"), whatever coding this client gets, so that a cache downstream never hands the
 * gzip to a client that cannot read it. MediaWiki already names Accept-Encoding on its answers
 * (OutputPage::addVaryHeader; the real wiki in test/integration/compressed-answers.test.ts): then nothing changes. A `*`
 * already varies on everything.
 */
export function varyOnAcceptEncoding(headers: Readonly<Record<string, string | string[]>>): Readonly<Record<string, string | string[]>> {
  // A stored miss asks twice for the same (read-only) headers: for its answer (deliver.ts
  // representationOf) and for its entry (answer-policy.ts storedHeaders).
  if (headers === lastVaried.given) return lastVaried.varied;
  const varied = withAcceptEncoding(headers);
  lastVaried = { given: headers, varied };
  return varied;
}

let lastVaried: { readonly given: object | undefined; readonly varied: Readonly<Record<string, string | string[]>> } = { given: undefined, varied: {} };

function withAcceptEncoding(headers: Readonly<Record<string, string | string[]>>): Readonly<Record<string, string | string[]>> {
  const vary = headerString(headers['vary']);
  const names = (vary ?? '').split(',').map((n) => n.trim().toLowerCase());
  // Nothing to add: the same (read-only) headers, not a copy.
  if (names.includes('accept-encoding') || names.includes('*')) return headers;
  return { ...headers, vary: vary && vary.trim() !== '' ? `${vary}, Accept-Encoding` : 'Accept-Encoding' };
}

/**
 * The headers of one representation of an answer (`headers` are the identity one's): its
 * Content-Encoding, and a strong ETag made weak for an encoded one. RFC 9110 §8.8.3: a strong
 * validator "changes whenever the representation data changes", and the gzip of an answer is
 * other data than the answer; the weak tag still says the answers are equivalent (§8.8.1), which
 * is what nginx's gzip does. MediaWiki 1.39's api.php sends no validators at all
 * (ApiBase::getConditionalRequestData() returns null, and no core module overrides it, so
 * ApiMain::checkConditionalRequestHeaders() sends no ETag or Last-Modified on api.php): this is for an
 * extension module that does (CategoryTree's action=categorytree).
 */
export function representationHeaders(
  headers: Readonly<Record<string, string | string[]>>,
  coding: 'identity' | 'gzip' | 'br',
): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  // defineProperty: a header named __proto__ stays a header.
  for (const name in headers) Object.defineProperty(out, name, { value: headers[name]!, enumerable: true, writable: true, configurable: true });
  if (coding === 'identity') return out;
  out['content-encoding'] = coding;
  const etag = headerString(headers['etag']);
  if (etag !== undefined && etag.startsWith('"')) out['etag'] = `W/${etag}`;
  return out;
}

/**
 * What a requester that carries credentials is told, whatever the entry or answer says: the
 * Cache-Control to send instead and that Expires goes, or undefined to send it as it is.
 * - A session holder's answer (stored in its slot, or passed) was made with its credentials:
 *   never `public`.
 * - A request the wiki serves anonymously while it carries a session (callback=, origin=*,
 *   Treat-as-Untrusted) gets `private` from the wiki (ApiMain::sendCacheHeaders:
 *   anon-public-user-private with a persisted session), whatever shared entry answers it.
 */
export function requesterCacheControl(identity: Identity, cacheControl: string | undefined): string | undefined {
  // An `unsure` requester (credentials MediaWiki may read in a shape the gateway cannot:
  // mediawiki/identity.ts) is passed, and may be logged in: never told public either.
  const credentialed = identity.kind === 'session' || identity.kind === 'unsure' || (identity.kind === 'anonymous' && identity.carriesCredentials);
  if (!credentialed) return undefined;
  const cc = sessionCacheControl(cacheControl);
  if (cc === cacheControl && identity.kind === 'session') return undefined;
  return cc?.startsWith('private') ? cc : 'private, must-revalidate, max-age=0';
}

// ------------------------------------------------------------------------- change signals

/**
 * What the answer's dependencies (policy/dependencies.ts) change in the verdict: one of
 * them invalidated while it was fetched means it may predate the change (not stored); an answer
 * carrying the wiki's clock keeps it a few seconds at most, whatever the TTL of the rest; one
 * showing a protection or block that expires is kept no longer than that expiry.
 */
export function dependencyVerdict(
  verdict: StoreDecision,
  deps: { readonly clock: boolean; readonly expiresAt?: number },
  invalidatedMeanwhile: boolean,
  clockSeconds: number,
  now: number,
): ResponseVerdict {
  if (invalidatedMeanwhile) return { store: false, reason: 'invalidated', mode: verdict.mode };
  let ttlMs = verdict.ttlMs;
  if (deps.clock) ttlMs = Math.min(ttlMs, clockSeconds * 1000);
  // A protection or block the answer shows ends then, unsignalled (dependencies.ts showsExpiries).
  if (deps.expiresAt !== undefined) ttlMs = Math.min(ttlMs, Math.max(1_000, deps.expiresAt - now));
  return ttlMs === verdict.ttlMs ? verdict : { ...verdict, ttlMs };
}

/**
 * MediaWiki marks a writer's browser after every write (MediaWiki.php: `UseCDNCache=false` and
 * `UseDC=master`, Max-Age 10, unprefixed) precisely so that caches let it bypass them for a few
 * seconds and it reads its own write; the entry it refreshes is then fresh for everyone.
 */
export function writerBypasses(cookieHeader: string | undefined): boolean {
  if (cookieHeader === undefined || (!cookieHeader.includes('UseCDNCache') && !cookieHeader.includes('UseDC'))) return false;
  const cookies = parsePhpCookies(cookieHeader);
  return cookies.get('UseCDNCache') === 'false' || cookies.get('UseDC') === 'master';
}

// ------------------------------------------------------------------------------ the tiers

/**
 * Whether an entry may be written to Redis, where it is read by every replica and lies in clear
 * for its whole TTL: not when it carries tokens (`meta=tokens`: a session's CSRF token), nor when
 * its URL holds a secret parameter (`wltoken`, a `token`: the access log's list, which it
 * redacts), which would name a Redis key too (P u:<url key>). Such an entry is kept by the
 * replica that fetched it (commit 0d28de9, test/integration/redis-replicas.test.ts). The Redis tier asks
 * (redis/entries.ts), and so does the flow (no other replica's lock is worth waiting on for it).
 */
export function mayLeaveTheProcess(entry: { readonly modules: readonly string[]; readonly urlKey: string }): boolean {
  if (entry.modules.includes('tokens')) return false;
  const q = entry.urlKey.indexOf('?');
  return q === -1 || redactQuery(entry.urlKey.slice(q + 1)) === entry.urlKey.slice(q + 1);
}
