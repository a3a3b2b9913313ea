/**
 * Header rules for what crosses the gateway, as pure functions over header maps.
 *
 * Requests: RFC 9110 §7.6.1 — hop-by-hop headers and every header named in `Connection` are not
 * forwarded; `Proxy` is dropped (httpoxy, CVE-2016-5385). X-Forwarded-For is appended with the peer's
 * address, and a client's own X-Forwarded-* are believed only when the peer is a configured trusted
 * proxy (MediaWiki's WebRequest::getIP() then walks the chain itself, trusting $wgCdnServersNoPurge).
 *
 * `Host`: the upstream receives its own host (undici derives it from the origin), so a client's
 * Host cannot steer what MediaWiki builds; the client's Host travels as X-Forwarded-Host.
 */
import { randomBytes } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';

const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  // Not hop-by-hop, but never forwarded: httpoxy; Host is replaced; Expect is answered by Node itself
  // and undici refuses to send it.
  'proxy',
  'host',
  'expect',
  'http2-settings',
]);

/** Headers a shared answer must not depend on: the gateway fetches the full identity-encoded body. */
const NOT_FOR_SHARED_FETCH = new Set(['accept-encoding', 'if-none-match', 'if-match', 'if-modified-since', 'if-unmodified-since', 'if-range', 'range']);

export interface ForwardContext {
  /** The TCP peer's address. */
  peerAddress: string;
  /** The peer is a configured trusted proxy (its X-Forwarded-* are believed). */
  peerTrusted: boolean;
  /** Protocol of our own listener. */
  protocol: 'http' | 'https';
  requestId: string;
  /** The request is fetched to be stored: ask for the full, unencoded body. */
  sharedFetch: boolean;
  /**
   * The answer may be stored for every anonymous client (a credential-less request fetched for
   * the shared tier): the wiki gets no Cookie at all. A cookie that is no credential can still
   * change what the wiki answers while it marks the answer public with `Vary: Cookie`
   * (`resourceLoaderDebug`, read by ResourceLoader::inDebugMode() for every page head:
   * action=parse&prop=headhtml, the HTML formats; an extension's language cookie), and the key
   * has none of them: stored, one client's cookie would become everyone's answer. Fetched without
   * cookies, the stored answer is the one a client without cookies gets from the wiki, which is
   * what the requester gets from the cache anyway. Whether the answer will be stored is known
   * only once it has come, so an answer that is not (private, too large) is the cookieless one
   * too: an anonymous client's cookies never reach the wiki on a request the gateway may cache.
   * Nor do the credential headers (`credentialHeaders`, Authorization among them): a background
   * refresh of a shared entry, for the store alone, is made without any credential of the
   * request that found the entry in its grace window.
   */
  withoutCookies?: boolean;
  /** Dropped with the cookies (mediawiki/identity.ts IdentityRules.credentialHeaders, lower case). */
  credentialHeaders?: readonly string[];
}

function connectionListed(value: string | string[] | undefined): Set<string> | undefined {
  if (value === undefined) return undefined;
  const listed = new Set<string>();
  for (const part of (Array.isArray(value) ? value.join(',') : value).split(',')) {
    const name = part.trim().toLowerCase();
    if (name) listed.add(name);
  }
  return listed;
}

/**
 * The request headers the wiki will receive from the client (RFC 9110 §7.6.1: hop-by-hop headers
 * and every header named in `Connection` are removed by a proxy), before the gateway adds its
 * own. Everything that decides for the wiki's sake (identity, the cache key, the credential net)
 * reads this view, never the raw headers: a header the wiki never sees must not change the slot
 * (`Connection: Treat-as-Untrusted` with `Treat-as-Untrusted: 1` reaches the wiki without it,
 * and the wiki answers as the logged-in user).
 *
 * The raw object itself when `Connection` names nothing beyond keep-alive/close (nearly every
 * request): no copy on the hit path.
 */
export function forwardedView(incoming: IncomingHttpHeaders): IncomingHttpHeaders {
  const listed = connectionListed(incoming.connection);
  if (listed === undefined || onlyConnectionOptions(listed)) return incoming;
  const out: IncomingHttpHeaders = {};
  for (const name in incoming) {
    if (listed.has(name)) continue;
    out[name] = incoming[name];
  }
  return out;
}

/** `Connection: keep-alive` / `close`: options, not header names (nothing to remove). */
function onlyConnectionOptions(listed: ReadonlySet<string>): boolean {
  for (const name of listed) if (name !== 'keep-alive' && name !== 'close') return false;
  return true;
}

/** Whether `Connection` names a header (the fresh-hit path leaves such requests to the full one). */
export function connectionNamesHeaders(value: string | string[] | undefined): boolean {
  if (value === undefined) return false;
  if (typeof value === 'string') {
    const v = value.length <= 10 ? value.toLowerCase() : '';
    if (v === 'keep-alive' || v === 'close') return false;
  }
  const listed = connectionListed(value);
  return listed !== undefined && !onlyConnectionOptions(listed);
}

/** Header names the wiki is sent: letters, digits and dashes (Node gives them in lower case). */
const VALID_FORWARDED_NAME = /^[a-z0-9-]+$/;

/** The headers to send upstream for a client's request. */
export function upstreamRequestHeaders(raw: IncomingHttpHeaders, ctx: ForwardContext): Record<string, string | string[]> {
  // X-Forwarded-* named in Connection are dropped like any other: read them from the view too.
  const incoming = forwardedView(raw);
  const out: Record<string, string | string[]> = {};
  for (const name in incoming) {
    const value = incoming[name];
    if (value === undefined) continue;
    if (HOP_BY_HOP.has(name)) continue;
    // PHP's CGI-style servers (php -S, php-fpm behind most setups) give `X_Forwarded_Proto` and
    // `X-Forwarded-Proto` the same $_SERVER name (HTTP_X_FORWARDED_PROTO), which MediaWiki reads
    // (WebRequest::detectProtocol, getHeader): a header the gateway neither keys nor replaces by
    // that spelling would reach the wiki as one it does (Treat-as-Untrusted, X-Forwarded-*).
    // Dropped, as nginx and Apache drop them by default (test/unit/forwarded-view.test.ts); and so
    // is any name with another character PHP turns into `_` (`.`, a space) or that is no
    // letter, digit or dash.
    if (!VALID_FORWARDED_NAME.test(name)) continue;
    if (name.startsWith('x-forwarded-') || name === 'forwarded' || name === 'x-request-id') continue;
    if (ctx.sharedFetch && NOT_FOR_SHARED_FETCH.has(name)) continue;
    if (ctx.withoutCookies === true && (name === 'cookie' || ctx.credentialHeaders?.includes(name))) continue;
    out[name] = value;
  }
  const clientXff = ctx.peerTrusted ? headerString(incoming['x-forwarded-for']) : undefined;
  out['x-forwarded-for'] = clientXff ? `${clientXff}, ${ctx.peerAddress}` : ctx.peerAddress;
  const proto = ctx.peerTrusted ? headerString(incoming['x-forwarded-proto']) : undefined;
  out['x-forwarded-proto'] = proto === 'https' || proto === 'http' ? proto : ctx.protocol;
  const forwardedHost = ctx.peerTrusted ? headerString(incoming['x-forwarded-host']) : undefined;
  const host = forwardedHost ?? headerString(incoming.host);
  if (host) out['x-forwarded-host'] = host;
  out['x-request-id'] = ctx.requestId;
  return out;
}

/**
 * The effective X-Forwarded-Proto we send upstream: part of the cache key ($wgVaryOnXFP).
 * `incoming`: the forwarded view (forwardedView).
 */
export function effectiveForwardedProto(incoming: IncomingHttpHeaders, ctx: Omit<ForwardContext, 'requestId' | 'sharedFetch'>): string {
  const proto = ctx.peerTrusted ? headerString(incoming['x-forwarded-proto']) : undefined;
  return proto === 'https' || proto === 'http' ? proto : ctx.protocol;
}

/** Response headers from the wiki, minus hop-by-hop ones and those Node computes itself. */
export function downstreamResponseHeaders(
  upstream: Record<string, string | string[] | undefined>,
  opts: { dropLength: boolean },
): Record<string, string | string[]> {
  const listed = connectionListed(upstream['connection']);
  const out: Record<string, string | string[]> = {};
  for (const name in upstream) {
    const value = upstream[name];
    if (value === undefined) continue;
    if (HOP_BY_HOP.has(name) || listed?.has(name)) continue;
    if (opts.dropLength && name === 'content-length') continue;
    out[name] = value;
  }
  return out;
}

export function headerString(value: string | string[] | undefined): string | undefined {
  if (value === undefined) return undefined;
  return Array.isArray(value) ? value.join(', ') : value;
}

/**
 * X-Request-Id: the proxy in front's when it is a plain token and the peer is one of
 * WIKIEDGE_TRUSTED_PROXIES (as their X-Forwarded-For is), else generated: a client's own would
 * let it give its requests the ids of others' in the logs and at the wiki.
 * Generated ids are a random per-process prefix and a counter: unique across replicas and
 * restarts like a random id, but a string concatenation instead of 12 random bytes per request.
 */

const REQUEST_ID = /^[A-Za-z0-9._:@-]{1,128}$/;
const REQUEST_ID_PREFIX = randomBytes(6).toString('hex');
let requestCounter = 0;

/**
 * `peer` and `trusted` (WIKIEDGE_TRUSTED_PROXIES): the peer is matched against the list only when
 * there is an id to adopt (rare from clients); without `trusted` (a request Node's parser
 * refused) an id is always generated; the admin listener passes EVERY_PEER.
 */
export function requestIdOf(headers: IncomingHttpHeaders, peer?: string, trusted?: { has(address: string | undefined): boolean }): string {
  const given = headers['x-request-id'];
  if (typeof given === 'string' && trusted !== undefined && REQUEST_ID.test(given) && trusted.has(peer)) return given;
  requestCounter = (requestCounter + 1) % Number.MAX_SAFE_INTEGER;
  return `${REQUEST_ID_PREFIX}-${requestCounter.toString(36)}`;
}

/** The admin listener's peers are the operator's (probes, Prometheus, scripts): their ids are kept. */
export const EVERY_PEER = { has: (_address: string | undefined): boolean => true };
