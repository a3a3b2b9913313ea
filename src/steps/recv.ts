/**
 * vcl_recv for api.php: what the request is. The query parsed as PHP will parse it, who is asking
 * (from the headers the wiki will receive), which modules run, which operator rules apply, and
 * the classification (pass, or look up). Pure but for the memo below.
 *
 * Most hits are anonymous requests without cookies, whose whole recv step is a function of the
 * method and target alone: remembered, so that the fresh-hit path (fresh-hit.ts) can find the
 * decision the full path made for such a request without making it again.
 */
import { variantPreferences } from '../mediawiki/accept-language.js';
import type { IncomingHttpHeaders } from 'node:http';
import type { FastifyRequest } from 'fastify';
import type { ModuleRule } from '../config/config.js';
import type { ErrorFormat } from '../words/errors.js';
import { connectionNamesHeaders, effectiveForwardedProto, forwardedView, headerString } from '../http/forwarding.js';
import type { Metrics } from '../observe/metrics.js';
import { type Identity, type IdentityRules, credentialValues, identityFromHeaders, mayCarryCredentials } from '../mediawiki/identity.js';
import { filtersByRequester } from '../mediawiki/modules.js';
import { clientAddress } from '../limits/client-key.js';
import type { AddressMatcher } from '../words/address-list.js';
import { type PhpArray, parsePhpQuery, phpStringParam, reachedMaxInputVars } from '../mediawiki/php-input.js';
import { queryIsAmbiguous, type RequestTarget } from '../words/target.js';
import { applicableRule, canonicalQuery, classify, type Classification, type KeyedHeaders, modulesOf } from '../policy/request.js';

/** A recognised api.php request: everything the later steps decide from. */
export interface ApiRequest {
  readonly target: RequestTarget;
  readonly query: PhpArray;
  readonly identity: Identity;
  readonly modules: readonly string[];
  readonly errorFormat: ErrorFormat;
  /** The api.php path and the query as PHP sees it, canonically ordered. */
  readonly urlKey: string;
  /** The operator's module rules that apply to this request. */
  readonly rule: ModuleRule;
  /** The request's credential values, for the net against answers that echo them (mediawiki/identity.ts). */
  readonly credentialValues: readonly string[];
}

export interface Recv {
  readonly api: ApiRequest;
  readonly classification: Classification;
  readonly moduleLabel: string;
}

const NO_VALUES: readonly string[] = Object.freeze([]);

/**
 * Remembered recv steps, bounded: when full the oldest is forgotten (a Map keeps its insertion
 * order), so a flood of unique URLs costs the work it would have cost anyway and the memo's
 * memory stays level. Clearing the whole memo when full made the process's RSS swing by ~15 MB
 * every few minutes under the soak's trickle of unique URLs (docs/SECURITY.md). A parsed request
 * holds ~2 KB: 2,000 of them keep the memo near 4 MB, full within a minute. A hot URL pushed out
 * comes back at its next request; the others are parsed per request, a few µs.
 */
const RECV_MEMO_MAX = 2_000;

/** A target's remembered recv steps, one per method (one object shape for all of them). */
interface RememberedRecvs {
  GET: Recv | undefined;
  HEAD: Recv | undefined;
}
/**
 * Keyed by the target alone, the method choosing within: the target string the HTTP parser made
 * is looked up as it is. `parsed` counts recv steps (up to two per target), which RECV_MEMO_MAX
 * bounds.
 */
interface RecvMemo {
  readonly targets: Map<string, RememberedRecvs>;
  /**
   * The targets in the order they were remembered, a ring of ORDER_SLOTS from `oldest`. A Map's
   * own oldest entry is found by iterating past the deleted ones before it: ~1.5 µs a unique
   * URL once the memo is full (bench/micro-miss.mjs recvMiss).
   */
  readonly order: (string | undefined)[];
  oldest: number;
  parsed: number;
}
/** Every target holds one recv step at least: at most RECV_MEMO_MAX + 1 before the oldest goes. */
const ORDER_SLOTS = RECV_MEMO_MAX + 1;
const recvMemo = new WeakMap<RecvParts, RecvMemo>();

/**
 * The memo slot for a request whose recv step depends on its method and target alone: GET or
 * HEAD, nothing that may carry credentials (Cookie, Authorization, the operator's credential
 * headers), no Treat-as-Untrusted, no header named in Connection (it would change what the wiki
 * receives), no body. Else undefined.
 */
function memoSlot(method: string, h: IncomingHttpHeaders, rules: IdentityRules): 'GET' | 'HEAD' | undefined {
  if (method !== 'GET' && method !== 'HEAD') return undefined;
  const plain = !mayCarryCredentials(h, rules) && h['treat-as-untrusted'] === undefined && !connectionNamesHeaders(h.connection) && !headersAnnounceBody(h);
  return plain ? method : undefined;
}

/** How many recv steps are remembered (for the test that floods the memo). */
export function recvMemoSize(parts: RecvParts): number {
  return recvMemo.get(parts)?.parsed ?? 0;
}

/** The recv step the full path already made for this request, if it is one it remembers. */
export function rememberedRecv(parts: RecvParts, method: string, h: IncomingHttpHeaders, upstreamPath: string): Recv | undefined {
  const slot = memoSlot(method, h, parts.identityRules);
  return slot === undefined ? undefined : recvMemo.get(parts)?.targets.get(upstreamPath)?.[slot];
}

/** Remember `recv` in its slot; when more than RECV_MEMO_MAX are held, forget the oldest targets. */
function remember(memo: RecvMemo, upstreamPath: string, slot: 'GET' | 'HEAD', recv: Recv): void {
  let remembered = memo.targets.get(upstreamPath);
  if (!remembered) {
    memo.targets.set(upstreamPath, (remembered = { GET: undefined, HEAD: undefined }));
    memo.order[(memo.oldest + memo.targets.size - 1) % ORDER_SLOTS] = upstreamPath;
  }
  if (remembered[slot] === undefined) memo.parsed++;
  remembered[slot] = recv;
  while (memo.parsed > RECV_MEMO_MAX) {
    const oldest = memo.order[memo.oldest]!;
    memo.order[memo.oldest] = undefined;
    memo.oldest = (memo.oldest + 1) % ORDER_SLOTS;
    const forgotten = memo.targets.get(oldest)!;
    memo.targets.delete(oldest);
    memo.parsed -= (forgotten.GET ? 1 : 0) + (forgotten.HEAD ? 1 : 0);
  }
}

/**
 * What recv reads: who is asking (the identity rules), the module table's rules and the api.php
 * path, the module label, and the count of credentials only the net recognised. Its memo is kept
 * per such object (the gateway's).
 */
export interface RecvParts {
  readonly identityRules: IdentityRules;
  /** The proxies whose X-Forwarded-For is believed: a slot of guessable credentials is bound to the client's address. */
  readonly trusted: AddressMatcher;
  readonly config: { readonly modules: Readonly<Record<string, ModuleRule>>; readonly apiPath: string };
  readonly metrics: Pick<Metrics, 'unknownCredentials'>;
  readonly moduleLabel: (modules: readonly string[]) => string;
}

export function recv(parts: RecvParts, request: FastifyRequest, target: RequestTarget): Recv {
  const slot = memoSlot(request.method, request.headers, parts.identityRules);
  let memo: RecvMemo | undefined;
  if (slot !== undefined) {
    memo = recvMemo.get(parts);
    if (!memo) recvMemo.set(parts, (memo = { targets: new Map(), order: new Array<string | undefined>(ORDER_SLOTS).fill(undefined), oldest: 0, parsed: 0 }));
    // Same method and target bytes: the same parse (the target object itself is equal too).
    const found = memo.targets.get(target.upstreamPath)?.[slot];
    if (found) return found;
  }
  const query = parsePhpQuery(target.rawQuery);
  // What the wiki will receive decides who is asking, not what the client sent.
  const view = forwardedView(request.headers);
  const identity = identityFromHeaders(view, query, parts.identityRules, () =>
    clientAddress(request.socket.remoteAddress, headerString(request.headers['x-forwarded-for']), parts.trusted),
  );
  if (identity.kind === 'session' && identity.unknownCredential) parts.metrics.unknownCredentials.inc();
  const modules = modulesOf(query);
  // An answer the wiki filters by who asks (feedrecentchanges&hidemyself leaves out the
  // requester's own changes: for an anonymous reader, those of its address) is that requester's
  // alone, though the wiki marks it public: it passes, whatever the operator's module rules
  // (mediawiki/modules.ts filtersByRequester; docs/SECURITY.md class 53).
  const operatorRule = applicableRule(modules, parts.config.modules);
  const rule: ModuleRule = filtersByRequester(modules, query) ? { ...operatorRule, pass: true } : operatorRule;
  const api: ApiRequest = {
    target,
    query,
    identity,
    modules,
    errorFormat: errorFormatOf(query),
    urlKey: `${parts.config.apiPath}?${canonicalQuery(query)}`,
    rule,
    credentialValues: slot === undefined ? credentialValues(view, parts.identityRules) : NO_VALUES,
  };
  const recv: Recv = {
    api,
    moduleLabel: parts.moduleLabel(modules),
    classification: classify({
      method: request.method,
      canonicalPath: target.rawPath === parts.config.apiPath,
      // Past max_input_vars the wiki (its php.ini may allow more) may read what the key does not.
      ambiguousQuery: queryIsAmbiguous(target.rawQuery) || reachedMaxInputVars(query),
      query,
      identity,
      hasBody: headersAnnounceBody(request.headers),
      rule,
    }),
  };
  if (memo && slot !== undefined) remember(memo, target.upstreamPath, slot, recv);
  return recv;
}

/**
 * The request headers a cache key accounts for (request.ts's KEYED_VARY), as the wiki will
 * receive them: `headers` is the forwarded view (http/forwarding.ts forwardedView).
 */
export function keyedHeadersOf(headers: IncomingHttpHeaders, peerAddress: string | undefined, peerTrusted: boolean, query: PhpArray): KeyedHeaders {
  return {
    treatAsUntrusted: headerString(headers['treat-as-untrusted']),
    forwardedProto: effectiveForwardedProto(headers, { peerAddress: peerAddress ?? '', peerTrusted, protocol: 'http' }),
    origin: query.has('origin') ? headerString(headers.origin) : undefined,
    acceptVariants: variantPreferences(headerString(headers['accept-language'])),
  };
}

/** RFC 9112 §6.3: a request has a body when it says Transfer-Encoding or a non-zero Content-Length. */
export function headersAnnounceBody(h: IncomingHttpHeaders): boolean {
  const length = h['content-length'];
  return h['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

function errorFormatOf(query: PhpArray): ErrorFormat {
  return {
    format: phpStringParam(query, 'format'),
    formatversion: phpStringParam(query, 'formatversion'),
    callback: phpStringParam(query, 'callback'),
    errorformat: phpStringParam(query, 'errorformat'),
  };
}
