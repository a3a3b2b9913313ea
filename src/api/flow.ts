/**
 * The path of an api.php request through the gateway, top to bottom, like Varnish's
 * vcl_recv → vcl_hash → vcl_hit/vcl_miss → vcl_backend_response → vcl_deliver:
 *
 *   recv     parse the query as PHP will, decide identity, classify (pass or lookup)
 *   hash     canonical query + identity slot + keyed headers
 *   lookup   local LRU, then Redis when configured (a Redis hit fills the LRU: hit-shared);
 *            fresh → hit; in grace → stale + one background refresh; dead → miss
 *   coalesce wait for an identical request already on its way in this process (bounded), then
 *            across replicas: one takes the Redis lock and fetches, the others poll Redis for
 *            its entry (bounded) and else fetch themselves
 *   fetch    ask the wiki (with the smaxage probe), read the body, strip debuginfo
 *   store    only what policy.ts allows, where it allows
 *   deliver  the stored headers, X-Cache, Age, the request id
 *
 * Decisions live in request.ts and policy.ts; this module only sequences them and does the I/O.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { decodeContent, readBounded } from '../body.js';
import { ageSeconds, replacesLocal } from '../cache/freshness.js';
import type { CacheEntry } from '../cache/store.js';
import { DebuginfoStripError, mayCarryDebuginfo, stripDebuginfo } from '../debuginfo/strip.js';
import {
  ClientClosedError,
  GatewayError,
  fromUpstreamFailure,
  failureKind,
  renderApiError,
  type ErrorFormat,
} from '../errors.js';
import {
  connectionNamesHeaders,
  downstreamResponseHeaders,
  effectiveForwardedProto,
  forwardedView,
  headerString,
  upstreamRequestHeaders,
} from '../forwarding.js';
import {
  type Identity,
  type IdentityRules,
  credentialValues,
  identityFromHeaders,
  mayCarryCredentials,
  requestCookieNames,
} from '../identity.js';
import type { Disposition } from '../outcomes.js';
import { type PhpArray, parsePhpQuery, phpStringParam } from '../php/php-input.js';
import { normalizeSetCookies } from '../set-cookie.js';
import type { ModuleRule } from '../config.js';
import type { Gateway, RequestTarget } from '../gateway.js';
import type { UpstreamRequest } from '../upstream.js';
import { settleSession, wrote } from '../session-lifecycle.js';
import { admit, releaseWith, requestBodyOf } from '../limits/admission.js';
import type { Logger } from 'pino';
import { queryIsAmbiguous } from '../target.js';
import {
  evaluateAnswer,
  type NoStoreReason,
  sessionCacheControl,
  type Tier,
  unprobedCacheHeaders,
} from './policy.js';
import { echoesRequester, mentionsAny, requesterAddressForms } from './requester-address.js';
import {
  applicableRule,
  cacheKey,
  canonicalQuery,
  classify,
  type KeyedHeaders,
  modulesOf,
  shouldProbe,
  upstreamTarget,
} from './request.js';

const NO_VALUES: readonly string[] = Object.freeze([]);

/** Upper bound for reading an api.php answer to strip debuginfo from it (not a cache limit). */
const MAX_INSPECT_BYTES = 64 * 1024 * 1024;

/** What the wiki answered, ready to deliver: headers already rewritten for the client. */
interface Answer {
  readonly status: number;
  readonly headers: Record<string, string | string[]>;
  readonly setCookies: readonly string[];
  readonly body: Buffer | NodeJS.ReadableStream;
  readonly stored: CacheEntry | undefined;
}

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
  /** The request's credential values, for the net against answers that echo them (identity.ts). */
  readonly credentialValues: readonly string[];
}

// ------------------------------------------------------------------------------------------ recv
export async function serveApi(
  gw: Gateway,
  request: FastifyRequest,
  reply: FastifyReply,
  target: RequestTarget,
) {
  const recv = recvOf(gw, request, target);
  const { api, classification } = recv;
  request.edge.module = recv.moduleLabel;
  try {
    if (classification.verdict === 'pass') {
      request.edge.passReason = classification.reason;
      return await pass(gw, request, reply, api);
    }
    return await lookupOrFetch(gw, request, reply, api);
  } catch (err) {
    // Counted as 499 by the close listener in app.ts; no answer, no upstream failure.
    if (err instanceof ClientClosedError) return reply;
    const gatewayError = err instanceof GatewayError ? err : fromUpstreamFailure(err);
    return deliverError(gw, request, reply, api, gatewayError);
  }
}

export interface Recv {
  readonly api: ApiRequest;
  readonly classification: ReturnType<typeof classify>;
  readonly moduleLabel: string;
}

/**
 * Most hits are anonymous requests without cookies, whose whole recv step is a function of the
 * target alone: remember it. Bounded, and when full the oldest is forgotten (a Map keeps its
 * insertion order): a flood of unique URLs costs the work it would have cost anyway, and the
 * memo's memory stays level. Clearing the whole memo when full made the process's RSS swing by
 * ~15 MB every few minutes under the soak's trickle of unique URLs (docs/SECURITY.md). A parsed
 * request holds ~2 KB: 2,000 of them keep the memo near 4 MB, full within a minute (10,000 took
 * 20 MB and minutes to fill). A hot URL pushed out comes back at its next request; the others
 * are parsed per request, a few µs.
 */
const RECV_MEMO_MAX = 2_000;

/** A target's remembered recv steps, one per method (one object shape for all of them). */
interface RememberedRecvs {
  GET: Recv | undefined;
  HEAD: Recv | undefined;
}
/**
 * Keyed by the target alone, the method choosing within: the target string the HTTP parser made
 * is looked up as it is, where a `${method} ${target}` key had to be built, flattened and hashed
 * anew on every hit. `parsed` counts recv steps (up to two per target), which RECV_MEMO_MAX bounds.
 */
interface RecvMemo {
  readonly targets: Map<string, RememberedRecvs>;
  parsed: number;
}
const recvMemo = new WeakMap<Gateway, RecvMemo>();

/**
 * The memo slot for a request whose recv step depends on its method and target alone (no
 * credentials: Cookie, Authorization; no Treat-as-Untrusted; GET or HEAD; no body), else undefined.
 */
function memoSlot(method: string, h: IncomingHttpHeaders, rules: IdentityRules): 'GET' | 'HEAD' | undefined {
  if (method !== 'GET' && method !== 'HEAD') return undefined;
  const plain =
    !mayCarryCredentials(h, rules) &&
    h['treat-as-untrusted'] === undefined &&
    !connectionNamesHeaders(h.connection) &&
    !headersAnnounceBody(h);
  return plain ? method : undefined;
}

/** How many recv steps are remembered (for the test that floods the memo). */
export function recvMemoSize(gw: Gateway): number {
  return recvMemo.get(gw)?.parsed ?? 0;
}

/** The recv step flow.ts already made for this request, if it is one it remembers. */
export function rememberedRecv(gw: Gateway, method: string, h: IncomingHttpHeaders, upstreamPath: string): Recv | undefined {
  const slot = memoSlot(method, h, gw.identityRules);
  return slot === undefined ? undefined : recvMemo.get(gw)?.targets.get(upstreamPath)?.[slot];
}

/** Remember `recv` in its slot; when more than RECV_MEMO_MAX are held, forget the oldest targets. */
function remember(memo: RecvMemo, upstreamPath: string, slot: 'GET' | 'HEAD', recv: Recv): void {
  let remembered = memo.targets.get(upstreamPath);
  if (!remembered) memo.targets.set(upstreamPath, (remembered = { GET: undefined, HEAD: undefined }));
  if (remembered[slot] === undefined) memo.parsed++;
  remembered[slot] = recv;
  while (memo.parsed > RECV_MEMO_MAX) {
    const [oldest, forgotten] = memo.targets.entries().next().value as [string, RememberedRecvs];
    memo.targets.delete(oldest);
    memo.parsed -= (forgotten.GET ? 1 : 0) + (forgotten.HEAD ? 1 : 0);
  }
}

function recvOf(gw: Gateway, request: FastifyRequest, target: RequestTarget): Recv {
  const slot = memoSlot(request.method, request.headers, gw.identityRules);
  let memo: RecvMemo | undefined;
  if (slot !== undefined) {
    memo = recvMemo.get(gw);
    if (!memo) recvMemo.set(gw, (memo = { targets: new Map(), parsed: 0 }));
    // Same method and target bytes: the same parse (the target object itself is equal too).
    const found = memo.targets.get(target.upstreamPath)?.[slot];
    if (found) return found;
  }
  const query = parsePhpQuery(target.rawQuery);
  // What the wiki will receive decides who is asking, not what the client sent.
  const view = forwardedView(request.headers);
  const identity = identityFromHeaders(view, query, gw.identityRules);
  if (identity.kind === 'session' && identity.unknownCredential) gw.metrics.unknownCredentials.inc();
  const modules = modulesOf(query);
  const rule = applicableRule(modules, gw.config.modules);
  const api: ApiRequest = {
    target,
    query,
    identity,
    modules,
    errorFormat: errorFormatOf(query),
    urlKey: `${gw.config.apiPath}?${canonicalQuery(query)}`,
    rule,
    credentialValues: slot === undefined ? credentialValues(view, gw.identityRules) : NO_VALUES,
  };
  const recv: Recv = {
    api,
    moduleLabel: gw.moduleLabel(modules),
    classification: classify({
      method: request.method,
      canonicalPath: target.rawPath === gw.config.apiPath,
      ambiguousQuery: queryIsAmbiguous(target.rawQuery),
      query,
      identity,
      hasBody: hasRequestBody(request),
      rule,
    }),
  };
  if (memo && slot !== undefined) remember(memo, target.upstreamPath, slot, recv);
  return recv;
}

// ---------------------------------------------------------------------------- hash + lookup
async function lookupOrFetch(gw: Gateway, request: FastifyRequest, reply: FastifyReply, api: ApiRequest) {
  const key = cacheKey(api.urlKey, api.identity, keyedHeaders(gw, request, api.query));
  const tier: Tier = api.identity.kind === 'session' ? 'session' : 'shared';
  // A session holder may force a fresh answer for itself; a client's no-cache never touches
  // (and so never evicts) what everyone shares.
  const bypass = tier === 'session' && clientNoCache(request);

  let staleFallback: CacheEntry | undefined;
  if (!bypass) {
    const found = await lookup(gw, tier, key);
    if (found) {
      const entry = found.entry;
      switch (gw.store.freshness(entry)) {
        case 'fresh':
          return deliverEntry(gw, request, reply, entry, found.shared ? 'hit-shared' : 'hit', api);
        case 'grace':
          refreshInBackground(gw, request, api, key, tier);
          return deliverEntry(gw, request, reply, entry, 'stale', api);
        case 'stale-if-error':
          staleFallback = entry;
          break;
        case 'dead':
          gw.store.delete(tier, key);
      }
    }
    const pending = gw.coalescer.pending(key);
    if (pending) {
      gw.metrics.coalescedWaiters.inc();
      const shared = await pending;
      if (shared) return deliverEntry(gw, request, reply, shared, 'coalesced', api);
      // The leader's answer was not for sharing (or it failed, or took too long): ask ourselves.
    }
  }

  // ---------------------------------------------------------------------------------- fetch
  const work = fetchOnceAcrossReplicas(gw, request, api, key, tier, bypass, clientGone(reply));
  gw.coalescer.lead(key, () =>
    work.then(
      (led) => ('entry' in led ? led.entry : led.answer.stored),
      () => undefined,
    ),
  );
  let led: Led;
  try {
    led = await work;
  } catch (err) {
    if (staleFallback) return deliverEntry(gw, request, reply, staleFallback, 'stale', api);
    throw err;
  }
  if ('entry' in led) return deliverEntry(gw, request, reply, led.entry, 'coalesced', api);
  const answer = led.answer;
  if (staleFallback && answer.status >= 500) return deliverEntry(gw, request, reply, staleFallback, 'stale', api);
  const disposition: Disposition = answer.stored ? (bypass ? 'bypass' : 'miss') : 'pass';
  return deliverAnswer(request, reply, answer, disposition, api);
}

/**
 * Local tier first; on a local miss (or a local entry past its TTL) the Redis tier, whose entry
 * is taken when it is newer than the local one and fills the local tier.
 */
async function lookup(
  gw: Gateway,
  tier: Tier,
  key: string,
): Promise<{ entry: CacheEntry; shared: boolean } | undefined> {
  const local = gw.store.get(tier, key);
  if (local && gw.store.freshness(local) === 'fresh') return { entry: local, shared: false };
  const remote = gw.redis ? await gw.redis.get(tier, key) : undefined;
  if (remote && (!local || replacesLocal(remote, local, gw.now())) && gw.store.freshness(remote) !== 'dead') {
    // Delivered as stored: the local copy counts a writer's clock ahead of ours from now (store.ts).
    const copied = gw.store.set(tier, key, remote) ? gw.store.get(tier, key) : undefined;
    return { entry: copied ?? remote, shared: true };
  }
  return local ? { entry: local, shared: false } : undefined;
}

/** What the leader of a miss ended with: its own answer, or the entry another replica stored. */
type Led = { readonly answer: Answer } | { readonly entry: CacheEntry };

/**
 * Without Redis: fetch. With Redis: take the key's lock (SET NX PX); the winner fetches, stores
 * (locally and in Redis) and releases it; a loser polls Redis for the winner's fresh entry, at
 * most WIKIEDGE_COALESCE_WAIT_MS (and the lock's lifetime), then fetches itself. Redis failing
 * at any step means fetching right away. A session holder's bypass never waits for anyone.
 */
async function fetchOnceAcrossReplicas(
  gw: Gateway,
  request: FastifyRequest,
  api: ApiRequest,
  key: string,
  tier: Tier,
  bypass: boolean,
  gone: AbortSignal,
): Promise<Led> {
  if (gw.redis && !bypass) {
    const lock = await gw.redis.lock(key);
    if (lock.kind === 'won') {
      try {
        return { answer: await fetchAndStore(gw, request, api, key, tier, 'miss', gone) };
      } finally {
        void gw.redis.unlock(key, lock.token);
      }
    }
    if (lock.kind === 'lost') {
      gw.metrics.coalescedWaiters.inc();
      const waited = await gw.redis.waitForEntry(
        tier,
        key,
        (e) => gw.store.freshness(e) === 'fresh',
        gw.config.coalesceWaitMs,
      );
      if (waited.entry) {
        gw.store.set(tier, key, waited.entry);
        return { entry: waited.entry };
      }
    }
  }
  return { answer: await fetchAndStore(gw, request, api, key, tier, 'miss', gone) };
}

function refreshInBackground(
  gw: Gateway,
  request: FastifyRequest,
  api: ApiRequest,
  key: string,
  tier: Tier,
) {
  if (gw.coalescer.pending(key)) return;
  const work = (async (): Promise<Answer | undefined> => {
    let token: string | undefined;
    if (gw.redis) {
      const lock = await gw.redis.lock(key);
      // Another replica refreshes this key; its entry reaches this one through Redis.
      if (lock.kind === 'lost') return undefined;
      if (lock.kind === 'won') token = lock.token;
    }
    try {
      return await fetchAndStore(gw, request, api, key, tier, 'refresh');
    } finally {
      if (token !== undefined) void gw.redis?.unlock(key, token);
    }
  })();
  gw.coalescer.lead(key, () =>
    work.then(
      (a) => a?.stored,
      () => undefined,
    ),
  );
  work.then(
    (a) => {
      // Nobody reads a refresh's body; release a streamed one.
      if (a && !Buffer.isBuffer(a.body)) (a.body as NodeJS.ReadableStream & { resume(): void }).resume();
    },
    (err: unknown) => request.log.warn({ err: String(err) }, 'background refresh failed'),
  );
}

// ------------------------------------------------------------------------------- fetch + store
async function fetchAndStore(
  gw: Gateway,
  request: FastifyRequest,
  api: ApiRequest,
  key: string,
  tier: Tier,
  reason: 'miss' | 'refresh',
  /** The client left: stop waiting for a turn at the gate (a fetch under way goes on: others may share it). */
  gone?: AbortSignal,
): Promise<Answer> {
  const probe = shouldProbe(api.query);
  const headers = upstreamRequestHeaders(request.headers, {
    peerAddress: request.socket.remoteAddress ?? '',
    peerTrusted: request.edge.peerTrusted,
    protocol: 'http',
    requestId: request.id,
    sharedFetch: true,
  });
  // HEAD is fetched as GET so the answer can serve both (RFC 9110 §9.3.2). Whole answers are
  // read while debuginfo may need stripping (an answer above the entry cap is then delivered,
  // not stored); with `off`, reading stops at the cap and the rest streams.
  const { res, read } = await askWiki(
    gw,
    request,
    reason,
    { method: 'GET', path: upstreamTarget(gw.config.apiPath, api.target.rawQuery, probe), headers },
    gw.config.debuginfo === 'off' ? gw.config.cacheMaxEntryBytes : MAX_INSPECT_BYTES,
    gone,
  );

  const inspected = inspectDebuginfo(gw, read.body, res.headers, api);
  const cookies = handleSetCookies(gw, request, res.headers['set-cookie']);
  await settleSession(gw, request.log as Logger, api.identity, { ended: cookies.sessionEnded, wrote: false });
  const rule = api.rule;
  let verdict = evaluateAnswer(
    { status: res.statusCode, headers: res.headers },
    api.identity,
    rule,
    gw.config,
    gw.random,
  );
  let notStored: NoStoreReason | undefined = verdict.store ? undefined : verdict.reason;
  if (verdict.store && !Buffer.isBuffer(inspected.body)) notStored = 'too-large';
  else if (verdict.store && (inspected.body as Buffer).length > gw.config.cacheMaxEntryBytes) notStored = 'too-large';
  if (verdict.store && inspected.debuginfoKept) notStored = 'debuginfo';
  if (verdict.store && inspected.echoesCredentials) notStored = 'credential-echo';
  // An anonymous answer that holds the requester's own address is that requester's alone.
  if (
    !notStored &&
    verdict.store &&
    verdict.tier === 'shared' &&
    (echoesRequester(api.query) ||
      (Buffer.isBuffer(inspected.body) &&
        mentionsAny(inspected.body, requesterAddressForms(headerString(headers['x-forwarded-for']) ?? ''))))
  )
    notStored = 'requester-address';
  if (notStored) verdict = { store: false, reason: notStored, mode: verdict.mode };

  const clientHeaders = clientHeadersFor(res.headers, probe, verdict.store && verdict.tier === 'session');
  if (res.headers['mediawiki-api-error'] !== undefined)
    gw.metrics.apiError(String(res.headers['mediawiki-api-error']));
  let stored: CacheEntry | undefined;
  if (verdict.store && Buffer.isBuffer(inspected.body)) {
    const entry: CacheEntry = {
      status: res.statusCode,
      headers: clientHeaders,
      body: inspected.body,
      storedAt: gw.now(),
      ttlMs: verdict.ttlMs,
      urlKey: api.urlKey,
      modules: api.modules,
      slot: api.identity.kind === 'session' ? api.identity.slot : undefined,
    };
    if (gw.store.set(tier, key, entry)) {
      stored = entry;
      // Bounded by WIKIEDGE_REDIS_TIMEOUT_MS; awaited so a replica asked next finds it.
      if (gw.redis) await gw.redis.set(tier, key, entry);
    } else notStored = 'too-large';
  }
  if (notStored) gw.metrics.notStored.inc({ reason: notStored });
  request.edge.notStored = notStored;
  return {
    status: res.statusCode,
    headers: clientHeaders,
    setCookies: cookies.relay,
    body: inspected.body,
    stored,
  };
}

// -------------------------------------------------------------------------------------- pass
/** Not cacheable: forward as the client sent it; the answer still loses debuginfo and stray cookies. */
async function pass(gw: Gateway, request: FastifyRequest, reply: FastifyReply, api: ApiRequest) {
  const controller = new AbortController();
  reply.raw.once('close', () => {
    if (!reply.raw.writableFinished) controller.abort();
  });
  const headers = upstreamRequestHeaders(request.headers, {
    peerAddress: request.socket.remoteAddress ?? '',
    peerTrusted: request.edge.peerTrusted,
    protocol: 'http',
    requestId: request.id,
    // api.php answers are read to strip debuginfo: ask for them unencoded.
    sharedFetch: gw.config.debuginfo !== 'off',
  });
  // Read before a turn at the wiki is taken: a slow body holds our socket, not the wiki's.
  const body = await requestBodyOf(gw, request.raw);
  const { res, read } = await askWiki(
    gw,
    request,
    'pass',
    {
      method: request.method,
      path: api.target.upstreamPath,
      headers,
      body,
      signal: controller.signal,
    },
    gw.config.debuginfo === 'off' ? 0 : MAX_INSPECT_BYTES,
  );
  const inspected = inspectDebuginfo(gw, read.body, res.headers, api);
  const cookies = handleSetCookies(gw, request, res.headers['set-cookie']);
  await settleSession(gw, request.log as Logger, api.identity, { ended: cookies.sessionEnded, wrote: wrote(request.method) });
  if (res.headers['mediawiki-api-error'] !== undefined)
    gw.metrics.apiError(String(res.headers['mediawiki-api-error']));
  const headersOut = downstreamResponseHeaders(res.headers, { dropLength: true });
  delete headersOut['set-cookie'];
  delete headersOut['x-request-id'];
  if (inspected.decoded) delete headersOut['content-encoding'];
  return deliverAnswer(
    request,
    reply,
    {
      status: res.statusCode,
      headers: headersOut,
      setCookies: cookies.relay,
      body: inspected.body,
      stored: undefined,
    },
    'pass',
    api,
  );
}

// ------------------------------------------------------------------------------------ helpers
/**
 * One request to the wiki and its body, read as far as `readLimit`. Failures are mapped (and
 * counted) once; a request whose client has left ends as ClientClosedError instead.
 */
async function askWiki(
  gw: Gateway,
  request: FastifyRequest,
  reason: 'miss' | 'refresh' | 'pass',
  upstreamRequest: UpstreamRequest,
  readLimit: number,
  waitSignal: AbortSignal | undefined = upstreamRequest.signal,
) {
  // A turn at the wiki first (limits/admission.ts): 429/503 without one, nothing sent.
  const release = await admit(gw, request.raw, reason === 'refresh' ? 'refresh' : 'uncached', waitSignal);
  let streaming = false;
  try {
    const started = gw.now();
    gw.metrics.upstreamRequests.inc({ reason });
    const failed = (err: unknown): Error =>
      upstreamRequest.signal?.aborted ? new ClientClosedError() : upstreamFailed(gw, err);
    let res: Awaited<ReturnType<Gateway['upstream']['request']>>;
    try {
      res = await gw.upstream.request(upstreamRequest);
    } catch (err) {
      throw failed(err);
    }
    const read = await readUpstreamBody(gw, res.body, res.headers, readLimit).catch((err: unknown) => {
      throw failed(err);
    });
    if (!read.complete && gw.config.debuginfo !== 'off') {
      throw new GatewayError('wikiedge-upstream-bad-response', { info: 'The answer is too large to inspect.' });
    }
    if (!read.complete) {
      // The rest streams to the client: the turn ends with it.
      releaseWith(read.body as NodeJS.ReadableStream, release);
      streaming = true;
    }
    gw.metrics.upstreamDuration.observe({ outcome: 'ok' }, (gw.now() - started) / 1000);
    request.edge.upstreamMs = gw.now() - started;
    return { res, read };
  } finally {
    if (!streaming) release();
  }
}

/** Aborts when the client goes away before its answer is complete. */
function clientGone(reply: FastifyReply): AbortSignal {
  const controller = new AbortController();
  reply.raw.once('close', () => {
    if (!reply.raw.writableFinished) controller.abort();
  });
  return controller.signal;
}

function upstreamFailed(gw: Gateway, err: unknown): GatewayError {
  const gatewayError = fromUpstreamFailure(err);
  gw.metrics.upstreamFailure(failureKind(gatewayError));
  return gatewayError;
}

interface ReadAnswer {
  readonly complete: boolean;
  readonly body: Buffer | NodeJS.ReadableStream;
  readonly decoded: boolean;
}

async function readUpstreamBody(
  gw: Gateway,
  body: NodeJS.ReadableStream & AsyncIterable<Buffer>,
  headers: Record<string, string | string[] | undefined>,
  limit: number,
): Promise<ReadAnswer> {
  const encoding = headerString(headers['content-encoding']);
  const read = await readBounded(body as never, limit);
  if (!read.complete) return { complete: false, body: read.stream, decoded: false };
  if (encoding && gw.config.debuginfo !== 'off') {
    return {
      complete: true,
      body: await decodeContent(read.body, encoding, MAX_INSPECT_BYTES),
      decoded: true,
    };
  }
  return { complete: true, body: read.body, decoded: false };
}

/**
 * strip: record, then remove; pass: record and keep (never stored); off: never parsed.
 * Then the net: an answer that still holds one of the request's credential values is never
 * stored, and refused (502) if it carried debuginfo (a copy the stripper did not remove).
 */
function inspectDebuginfo(
  gw: Gateway,
  body: Buffer | NodeJS.ReadableStream,
  headers: Record<string, string | string[] | undefined>,
  api: ApiRequest,
): Inspected {
  const decoded =
    Buffer.isBuffer(body) && headers['content-encoding'] !== undefined && gw.config.debuginfo !== 'off';
  if (!Buffer.isBuffer(body)) return { body, debuginfoKept: false, decoded, echoesCredentials: false };
  if (!mayCarryDebuginfo(body))
    return { body, debuginfoKept: false, decoded, echoesCredentials: echoes(body, api.credentialValues) };
  // `off` parses nothing, but an answer that may carry debuginfo (the requester's own cookies)
  // is still never stored: the cheap check above costs ~15 µs per 100 KB.
  if (gw.config.debuginfo === 'off') return { body, debuginfoKept: true, decoded, echoesCredentials: false };
  let result: ReturnType<typeof stripDebuginfo>;
  try {
    result = stripDebuginfo(body, headerString(headers['content-type']));
  } catch (err) {
    if (err instanceof DebuginfoStripError) throw uncleanable(err);
    throw err;
  }
  if (result.debuginfo) {
    gw.debuginfoMetrics.record(result.debuginfo, gw.moduleLabel(api.modules));
    warnDebugToolbarOnce(gw);
  }
  if (gw.config.debuginfo === 'pass') return { body, debuginfoKept: result.debuginfo !== undefined, decoded, echoesCredentials: false };
  if (result.format) gw.debuginfoMetrics.countStripped(result.format);
  // Fail closed: what carried debuginfo and still holds the request's credentials is never sent.
  if (echoes(result.body, api.credentialValues)) throw uncleanable(new DebuginfoStripError('a credential of the request is left'));
  return { body: result.body, debuginfoKept: false, decoded, echoesCredentials: false };
}

const toolbarWarned = new WeakSet<Gateway>();

/**
 * The gateway removes debuginfo from api.php answers only: with $wgDebugToolbar on, every
 * index.php page the wiki renders carries the toolbar's copy (the request's Cookie header, every
 * SQL query) and is streamed through as it is. Said once per process, loudly.
 */
function warnDebugToolbarOnce(gw: Gateway): void {
  if (toolbarWarned.has(gw)) return;
  toolbarWarned.add(gw);
  gw.log.warn(
    { wikiSetting: '$wgDebugToolbar' },
    'the wiki runs with $wgDebugToolbar on: api.php answers are cleaned, but every index.php page passing through carries the visitor\'s cookies and all SQL; turn it off in production',
  );
}

interface Inspected {
  readonly body: Buffer | NodeJS.ReadableStream;
  readonly debuginfoKept: boolean;
  readonly decoded: boolean;
  /** The answer holds one of the request's credential values: never stored. */
  readonly echoesCredentials: boolean;
}

function echoes(body: Buffer, values: readonly string[]): boolean {
  for (const v of values) if (body.includes(v, 0, 'latin1')) return true;
  return false;
}

function uncleanable(cause: Error): GatewayError {
  // An answer that may echo the request's cookies is never sent half-understood.
  return new GatewayError('wikiedge-upstream-bad-response', { cause, info: 'The answer could not be cleaned of debuginfo.' });
}

/** Set-Cookie lines to relay (set-cookie.ts), and whether they ended the client's session. */
function handleSetCookies(
  gw: Gateway,
  request: FastifyRequest,
  raw: string | string[] | undefined,
): { relay: string[]; sessionEnded: boolean } {
  if (raw === undefined) return { relay: [], sessionEnded: false };
  const lines = Array.isArray(raw) ? raw : [raw];
  const outcome = normalizeSetCookies(lines, requestCookieNames(request.headers.cookie), gw.cookieNames, Date.now());
  for (const e of outcome.events) gw.metrics.cookie(e.event, e.cookie);
  return { relay: outcome.relay, sessionEnded: outcome.sessionEnded };
}

/** The headers the client gets, as the wiki would have sent them for the client's own request. */
function clientHeadersFor(
  upstream: Record<string, string | string[] | undefined>,
  probed: boolean,
  perSession: boolean,
): Record<string, string | string[]> {
  const out = downstreamResponseHeaders(upstream, { dropLength: true });
  delete out['set-cookie'];
  delete out['x-request-id'];
  delete out['content-encoding'];
  if (probed) {
    const unprobed = unprobedCacheHeaders(headerString(out['cache-control']), headerString(out['expires']));
    if (unprobed.cacheControl === undefined) delete out['cache-control'];
    else out['cache-control'] = unprobed.cacheControl;
    if (unprobed.expires === undefined) delete out['expires'];
    else out['expires'] = unprobed.expires;
  }
  if (perSession) {
    const cc = sessionCacheControl(headerString(out['cache-control']));
    if (cc !== undefined) out['cache-control'] = cc;
    if (cc?.startsWith('private')) delete out['expires'];
  }
  return out;
}

function keyedHeaders(gw: Gateway, request: FastifyRequest, query: PhpArray): KeyedHeaders {
  return keyedHeadersOf(forwardedView(request.headers), request.socket.remoteAddress, request.edge.peerTrusted, query);
}

/**
 * The request headers a cache key accounts for (request.ts's KEYED_VARY), as the wiki will
 * receive them: `headers` is the forwarded view (forwarding.ts forwardedView).
 */
export function keyedHeadersOf(
  headers: IncomingHttpHeaders,
  peerAddress: string | undefined,
  peerTrusted: boolean,
  query: PhpArray,
): KeyedHeaders {
  return {
    treatAsUntrusted: headerString(headers['treat-as-untrusted']),
    forwardedProto: effectiveForwardedProto(headers, { peerAddress: peerAddress ?? '', peerTrusted, protocol: 'http' }),
    origin: query.has('origin') ? headerString(headers.origin) : undefined,
  };
}

function clientNoCache(request: FastifyRequest): boolean {
  const cc = headerString(request.headers['cache-control']) ?? '';
  return /(^|,)\s*no-cache\s*(,|$)/i.test(cc) || /no-cache/i.test(headerString(request.headers.pragma) ?? '');
}

export function hasRequestBody(request: FastifyRequest): boolean {
  return headersAnnounceBody(request.headers);
}

function headersAnnounceBody(h: IncomingHttpHeaders): boolean {
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

// ------------------------------------------------------------------------------------ deliver
function deliverEntry(
  gw: Gateway,
  request: FastifyRequest,
  reply: FastifyReply,
  entry: CacheEntry,
  disposition: Disposition,
  api: ApiRequest,
) {
  request.edge.disposition = disposition;
  const age = ageSeconds(entry, gw.now());
  reply.code(entry.status).headers(entry.headers);
  privatiseForRequester(reply, api.identity);
  reply.header('age', String(age));
  reply.header('x-cache', disposition);
  reply.header('x-request-id', request.id);
  return reply.send(entry.body);
}

function deliverAnswer(
  request: FastifyRequest,
  reply: FastifyReply,
  answer: Answer,
  disposition: Disposition,
  api: ApiRequest,
) {
  request.edge.disposition = disposition;
  reply.code(answer.status).headers(answer.headers);
  privatiseForRequester(reply, api.identity);
  if (answer.setCookies.length > 0) reply.header('set-cookie', answer.setCookies);
  reply.header('x-cache', disposition);
  reply.header('x-request-id', request.id);
  return reply.send(answer.body);
}

/**
 * Whatever reaches a requester that carries credentials never tells a cache between it and us
 * that it is public:
 * - a session holder's answer (stored in its slot, or passed: a write, an answer not stored)
 *   was made with its credentials;
 * - a request the wiki serves anonymously while it carries a session (callback=, origin=*,
 *   Treat-as-Untrusted with a session cookie) gets `private` from the wiki
 *   (ApiMain::sendCacheHeaders: anon-public-user-private with a persisted session), whatever the
 *   shared entry it is answered from says.
 */
function privatiseForRequester(reply: FastifyReply, identity: Identity): void {
  const credentialed = identity.kind === 'session' || (identity.kind === 'anonymous' && identity.carriesCredentials);
  if (!credentialed) return;
  const given = headerString(reply.getHeader('cache-control') as string | string[] | undefined);
  const cc = sessionCacheControl(given);
  if (cc === given && identity.kind === 'session') return;
  reply.header('cache-control', cc?.startsWith('private') ? cc : 'private, must-revalidate, max-age=0');
  reply.removeHeader('expires');
}

function deliverError(
  gw: Gateway,
  request: FastifyRequest,
  reply: FastifyReply,
  api: ApiRequest,
  err: GatewayError,
) {
  request.edge.disposition = 'error';
  request.edge.errorCode = err.code;
  if (err.status >= 500)
    request.log.warn({ code: err.code, cause: String(err.cause ?? '') }, 'upstream failure');
  const rendered = renderApiError(err, api.errorFormat);
  gw.metrics.apiError(err.code);
  reply.code(rendered.status).headers(rendered.headers);
  reply.header('x-cache', 'error');
  reply.header('x-request-id', request.id);
  return reply.send(rendered.body);
}
