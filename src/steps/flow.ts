/**
 * The path of an api.php request through the gateway, top to bottom, like Varnish's
 * vcl_recv → vcl_hash → vcl_hit/vcl_miss → vcl_backend_response → vcl_deliver. Each step is a
 * function that takes the facts it needs and returns its decision; serveApi sequences them, notes
 * the outcome in the request's record (once) and delivers:
 *
 *   recv      recv.ts: parse the query as PHP will, decide identity, classify (pass or lookup)
 *   hash      the key: canonical query + identity slot + keyed headers (request.ts cacheKey)
 *   lookup    the storage (cache/storage.ts): the local LRU, then the shared tier when one is
 *             configured (its hit fills the LRU: hit-shared), and
 *             what the entry's age means (lookupDecision): fresh → hit; in grace → stale and one
 *             background refresh; stale-if-error → kept as a fallback; dead → removed; none → miss
 *   coalesce  wait for an identical request already on its way in this process (bounded)
 *   admission a client whose budget of uncached requests is spent gets its stale entry, else
 *             429, before it takes a lock or leads a fetch (steps/admission.ts)
 *   fetch     across replicas, one asks the wiki, the others wait for its entry (bounded) and
 *             else ask themselves (the storage's fetchOnce; askWiki: a turn at the wiki, the
 *             answer read and inspected)
 *   store     what the answer's policy allows (policy/answer-policy.ts), where it allows, in its
 *             stored form: gzip when its client takes it (compressed once: http/codings.ts),
 *             else as it is, its gzip made by the first hit that takes it; decided before the
 *             answer goes out, written after
 *   deliver   deliver.ts: the representation the client's Accept-Encoding takes (406 when none,
 *             decided at recv), the stored or fresh headers, Age, X-Cache, the request id
 *
 * Passes (not cacheable by the request) go straight to the wiki and back, still inspected.
 * Decisions live in request.ts and policy.ts; this module only sequences them and does the I/O.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { CacheEntry } from '../cache/entry.js';
import { entrySize } from '../cache/store.js';
import { type StoreCharge, storeCharge } from './store-charge.js';
import type { Led } from '../cache/storage.js';
import type { Coalescer } from '../cache/coalescer.js';
import type { Metrics } from '../observe/metrics.js';
import { replyWithError } from './error-reply.js';
import { ClientClosedError, GatewayError } from '../words/errors.js';
import { type Coding, preferenceOf, prefersGzipToIdentity, compressible } from '../http/codings.js';
import { forwardedView, headerString } from '../http/forwarding.js';
import type { Gateway } from '../gateway/gateway.js';
import { budgetLeft, refreshTurn, refuse } from './admission.js';
import type { Disposition, Freshness, NoStoreReason, Tier } from '../words/outcomes.js';
import { clientLeaving, noteOutcome, noteTarget, type Outcome, wikiRequestHeaders } from './request-record.js';
import type { LeaveSignal } from '../limits/upstream-gate.js';
import type { RequestTarget } from '../words/target.js';
import { askWiki, MAX_INSPECT_BYTES } from './ask-wiki.js';
import { type Answer, deliverAnswer, deliverEntry, tooCostlyForAHit } from './deliver.js';
import { bypassesCache, mayLeaveTheProcess, writerBypasses } from '../policy/policy.js';
import { AnswerPolicy } from '../policy/answer-policy.js';
import { changesAreSignalled, dependenciesOf, diffsEntityContent, entityChangesUnnamed, userTag } from '../policy/dependencies.js';
import { type ApiRequest, keyedHeadersOf, recv } from './recv.js';
import { afterAnswer } from './after-answer.js';
import { type AnsweredDelivery, pass } from './pass.js';
import { cacheKey, shouldProbe, upstreamTarget } from '../policy/request.js';

/** What the steps decided for a request: what to deliver, and what the record notes. */
type Delivery = ({ readonly kind: 'entry'; readonly entry: CacheEntry } & Outcome) | AnsweredDelivery;

export async function serveApi(gw: Gateway, request: FastifyRequest, reply: FastifyReply, target: RequestTarget) {
  // ----------------------------------------------------------------------------------- recv
  const { api, classification, moduleLabel } = recv(gw, request, target);
  noteTarget(request, target, moduleLabel);
  // The codings the client takes (RFC 9110 §12.5.3): none of ours is 406, before anything is asked.
  const preference = preferenceOf(headerString(request.headers['accept-encoding']));
  if (preference === 'not-acceptable')
    return replyWithError(gw, request, reply, new GatewayError('wikiedge-not-acceptable'), { api: api.errorFormat, headers: VARY_ACCEPT_ENCODING });
  let delivery: Delivery;
  try {
    delivery =
      classification.verdict === 'pass' ? await pass(gw, request, reply, api, classification.reason) : await lookupOrFetch(gw, request, reply, api, preference);
  } catch (err) {
    // Counted as 499 by the record's close listener; no answer, no upstream failure.
    if (err instanceof ClientClosedError) return reply;
    return replyWithError(gw, request, reply, err, { api: api.errorFormat });
  }
  // -------------------------------------------------------------------------------- deliver
  if (delivery.kind === 'entry' && tooCostlyForAHit(delivery.entry, preference))
    return replyWithError(gw, request, reply, new GatewayError('wikiedge-not-acceptable'), { api: api.errorFormat, headers: VARY_ACCEPT_ENCODING });
  noteOutcome(request, delivery);
  const delivered = { disposition: delivery.disposition, identity: api.identity, preference };
  return delivery.kind === 'entry'
    ? deliverEntry(gw.compression, request, reply, delivery.entry, { ...delivered, now: gw.now() })
    : deliverAnswer(gw.compression, request, reply, delivery.answer, delivered);
}

/** A 406 depends on Accept-Encoding too. */
const VARY_ACCEPT_ENCODING = { vary: 'Accept-Encoding' };

/** A cached entry to deliver. */
function entry(entry: CacheEntry, disposition: Disposition): Delivery {
  return { kind: 'entry', entry, disposition };
}

async function lookupOrFetch(gw: Gateway, request: FastifyRequest, reply: FastifyReply, api: ApiRequest, preference: readonly Coding[]): Promise<Delivery> {
  // ----------------------------------------------------------------------------------- hash
  const key = hash(request, api);
  const tier: Tier = api.identity.kind === 'session' ? 'session' : 'shared';
  // A session holder's no-cache, or a writer MediaWiki marked for a few seconds after its edit
  // (read-your-writes): fetched fresh, and the entry refreshed.
  const bypass = bypassesCache(tier, request.headers) || writerBypasses(request.headers.cookie);

  // --------------------------------------------------------------------------------- lookup
  let fallback: CacheEntry | undefined;
  if (!bypass) {
    const looked = gw.storage.lookup(tier, key);
    const found = looked instanceof Promise ? await looked : looked;
    const decision = lookupDecision(found && gw.storage.freshness(found.entry));
    switch (decision) {
      case 'hit': {
        // An entry stored as it is gets its gzip when a client that prefers it first finds it
        // (representations.ts gzipFirst); a br client finding only gzip counts towards its br.
        const hit = gw.compression.gzipWanted(found!.entry, preference) ? await gw.compression.gzipFirstAsync(tier, key, found!.entry) : found!.entry;
        // The hit that completes the count has its br made, charged to its client's store budget (steps/store-charge.ts).
        if (preference[0] === 'br' && gw.compression.wantBrotli(hit)) gw.compression.makeBrotli(tier, key, hit, storeChargeOf(gw, request, api, tier));
        return entry(hit, found!.shared ? 'hit-shared' : 'hit');
      }
      case 'stale-and-refresh':
        refreshInBackground(gw, request, api, key, tier, found!.entry);
        return entry(found!.entry, 'stale');
      case 'keep-as-fallback':
        fallback = found!.entry;
        break;
      case 'remove':
        gw.storage.remove(tier, key);
        break;
      case 'miss':
        break;
    }
    // ----------------------------------------------------------------------------- coalesce
    const pending = coalesce(gw.coalescer, gw.metrics, key);
    const shared = pending && (await pending);
    if (shared) return entry(shared, 'coalesced');
  }

  // ------------------------------------------------------------------------------ admission
  // A client whose budget of uncached requests is spent: its stale entry if there is one,
  // else 429, before it could hold a lock or lead a fetch that others wait on.
  const budget = budgetLeft(gw, request.raw);
  if (!budget.ok) {
    // Not an answer carrying the wiki's clock: past its cap, only the wiki failing serves it (freshness.ts).
    if (fallback && !fallback.clock) return entry(fallback, 'stale');
    refuse(gw.metrics, budget.retryAfterSeconds);
  }

  // ---------------------------------------------------------------------------------- fetch
  // A login-suppressed request carrying credentials is fetched with its cookies, for itself
  // alone (policy.ts finalVerdict: never shared): it leads no fetch that others wait on.
  const forItself = api.identity.kind === 'anonymous' && api.identity.carriesCredentials;
  // An entry Redis will not hold (policy.ts mayLeaveTheProcess) is no other replica's to wait for.
  const alone = bypass || forItself || !mayLeaveTheProcess(api);
  // The client's answer is known before its entry is stored (fetchAndStore: compressed and
  // written after the answer went out); the fetch ends with the store, and so do the lock, the
  // lead that identical requests wait on, and what a closing gateway waits for: all settled by
  // the one handler below (a promise per step costs the miss; docs/BENCHMARKS.md).
  const running = gw.afterAnswers.begin();
  const leading = forItself ? undefined : gw.coalescer.begin(key);
  let answer!: (first: Fetched | Led<Stored>) => void;
  let fail!: (err: unknown) => void;
  const answers = new Promise<Fetched | Led<Stored>>((resolve, reject) => {
    answer = resolve;
    fail = reject;
  });
  let answeredEarly = false;
  const answered = (fetched: Fetched) => {
    answeredEarly = true;
    answer(fetched);
  };
  fetchOnceAcrossReplicas(gw, request, api, key, tier, alone, clientLeaving(request), preference, answered).then(
    (led) => {
      running.done();
      leading?.settle('entry' in led ? led.entry : led.fetched.entry);
      answer(led);
    },
    (err: unknown) => {
      running.done();
      leading?.settle(undefined);
      if (!answeredEarly) return fail(err);
      // The client has its answer: a failure of the compression or the store is no one's
      // answer any more. Logged and counted, never silent.
      gw.metrics.notStored.inc({ reason: 'store-failed' });
      request.log.warn({ err }, 'the store after the answer failed');
    },
  );
  let first: Fetched | Led<Stored>;
  try {
    first = await answers;
  } catch (err) {
    // stale-if-error: the wiki failed (or is too busy), the fallback answers.
    if (fallback && !(err instanceof ClientClosedError)) return entry(fallback, 'stale');
    throw err;
  }
  if ('fetched' in first) first = first.fetched.fetched;
  if ('entry' in first) return entry(first.entry, 'coalesced');
  const fetched = first;
  if (fallback && fetched.answer.status >= 500) {
    // Nobody reads this answer: a streamed body is drained (its turn at the wiki, and the
    // request's place among its client's, end with the stream).
    drainUnread(fetched.answer.body);
    return entry(fallback, 'stale');
  }
  return {
    kind: 'answer',
    answer: fetched.answer,
    disposition: fetched.storing ? (bypass ? 'bypass' : 'miss') : 'pass',
    notStored: fetched.notStored,
    upstreamMs: fetched.upstreamMs,
  };
}

/** The key, from the headers the wiki will receive. */
function hash(request: FastifyRequest, api: ApiRequest): string {
  const keyed = keyedHeadersOf(forwardedView(request.headers), request.socket.remoteAddress, request.edge.peerTrusted, api.query);
  return cacheKey(api.urlKey, api.identity, keyed);
}

/** What an entry found at lookup means, from its freshness (policy/freshness.ts). */
type LookupDecision = 'hit' | 'stale-and-refresh' | 'keep-as-fallback' | 'remove' | 'miss';

export function lookupDecision(freshness: Freshness | undefined): LookupDecision {
  switch (freshness) {
    case 'fresh':
      return 'hit';
    // Grace: served stale while one refresh runs (Varnish's grace).
    case 'grace':
      return 'stale-and-refresh';
    // Past grace but within stale-if-error: only if the wiki fails (RFC 5861 §4).
    case 'stale-if-error':
      return 'keep-as-fallback';
    case 'dead':
      return 'remove';
    case undefined:
      return 'miss';
  }
}

/**
 * An identical request already on its way in this process: its stored entry, when it stored one
 * for this very key (which names the identity slot), else undefined (ask the wiki ourselves).
 * Bounded by WIKIEDGE_COALESCE_WAIT_MS. None on its way: undefined at once, nothing awaited.
 */
function coalesce(coalescer: Coalescer<CacheEntry>, metrics: Metrics, key: string): Promise<CacheEntry | undefined> | undefined {
  const pending = coalescer.pending(key);
  if (!pending) return undefined;
  metrics.coalescedWaiters.inc();
  return pending;
}

/**
 * One fetch across replicas (the storage's fetchOnce: with Redis, the key's lock; the winner
 * fetches and stores, a loser waits for its fresh entry at most WIKIEDGE_COALESCE_WAIT_MS, then
 * fetches itself; the shared tier failing means fetching right away). A session holder's bypass
 * never waits for anyone, nor does a fetch for the requester alone (`alone`).
 */
function fetchOnceAcrossReplicas(
  gw: Gateway,
  request: FastifyRequest,
  api: ApiRequest,
  key: string,
  tier: Tier,
  alone: boolean,
  gone: LeaveSignal,
  preference: readonly Coding[],
  answered: (fetched: Fetched) => void,
): Promise<Led<Stored>> {
  const fetch = () => fetchAndStore(gw, request, api, key, tier, 'miss', gone, { preference, answered });
  // Without a tier shared with other replicas there is nobody else to wait for (local-storage.ts fetchOnce).
  if (alone || !gw.storage.shared) return fetch().then(ledByItself);
  return gw.storage.fetchOnce(tier, key, fetch, { waitMs: gw.config.coalesceWaitMs, waiting: () => gw.metrics.coalescedWaiters.inc() });
}

function ledByItself(fetched: Stored): Led<Stored> {
  return { fetched };
}

/**
 * One refresh of an entry in its grace window, in the background: the client was answered with
 * the stale entry already, so nothing here touches its record. With Redis, only the replica that
 * takes the lock refreshes; the others get its entry through Redis.
 */
function refreshInBackground(gw: Gateway, request: FastifyRequest, api: ApiRequest, key: string, tier: Tier, stale: CacheEntry): void {
  if (gw.coalescer.pending(key)) return;
  // Charged to the client whose hit starts it: a token of its budget of uncached requests
  // (steps/admission.ts refreshTurn), and the bytes it stores. A client whose store budget
  // would not take the entry leads no refresh: it would hold the lead (here, and the lock in
  // Redis) for an answer not stored, while the others' hits start none.
  const stores = storeChargeOf(gw, request, api, tier);
  if (!stores.affords(entrySize(key, stale))) return;
  const turn = refreshTurn(gw, request.raw);
  if (!turn) return;
  // The token is taken by the refresh that runs: with Redis, only once this replica has the
  // key's lock (a hit while another replica refreshes it costs its client nothing).
  // An entry some client took the gzip of is refreshed in gzip: its clients would make it again.
  const refresh = (): Promise<Stored | undefined> =>
    turn.charge()
      ? fetchAndStore(gw, request, api, key, tier, 'refresh', undefined, undefined, { gzipAtStore: stale.coding === 'gzip', stores })
      : Promise.resolve(undefined);
  // An entry Redis will not hold is refreshed by whoever holds it (policy.ts mayLeaveTheProcess).
  const work: Promise<Stored | undefined> = mayLeaveTheProcess(api) ? gw.storage.refreshOnce(tier, key, refresh) : refresh();
  void work.then(turn.done, turn.done);
  gw.coalescer.lead(key, () =>
    work.then(
      (f) => f?.entry,
      () => undefined,
    ),
  );
  work.then(
    (f) => {
      // Nobody reads a refresh's body.
      if (f) drainUnread(f.fetched.answer.body);
    },
    (err: unknown) => request.log.warn({ err: String(err) }, 'background refresh failed'),
  );
}

/** An answer's body nobody will read: a streamed one is drained, so that it ends and lets go of its turn. */
function drainUnread(body: Answer['body']): void {
  if (!Buffer.isBuffer(body)) (body as NodeJS.ReadableStream & { resume(): void }).resume();
}

/** A fetch's answer for the client: whether the verdict was to store it, or why not. */
interface Fetched {
  readonly answer: Answer;
  /** The policy's verdict was to store it (X-Cache `miss`); the entry is written after the answer goes out. */
  readonly storing: boolean;
  readonly notStored: NoStoreReason | undefined;
  readonly upstreamMs: number;
}

/** A fetch once its entry is stored: the entry kept, if the tier kept it. */
interface Stored {
  readonly fetched: Fetched;
  readonly entry: CacheEntry | undefined;
}

/** The client a miss answers: the codings it takes, and who is told the answer before the store. */
interface AnswerFirst {
  readonly preference: readonly Coding[];
  readonly answered: (fetched: Fetched) => void;
}

// ---------------------------------------------------------------------------- fetch + store
async function fetchAndStore(
  gw: Gateway,
  request: FastifyRequest,
  api: ApiRequest,
  key: string,
  tier: Tier,
  reason: 'miss' | 'refresh',
  /** The client left: stop waiting for a turn at the gate (a fetch under way goes on: others may share it). */
  gone?: LeaveSignal,
  /** A miss's client, answered before the entry is stored (none for a background refresh). */
  client?: AnswerFirst,
  /** A background refresh: stored in gzip again when the entry was (gzipAtStore), charged to `stores`. */
  refreshing?: { readonly gzipAtStore: boolean; readonly stores: StoreCharge },
): Promise<Stored> {
  const probe = shouldProbe(api.query);
  // A background refresh's answer is for the store alone: a shared one is always asked for
  // without cookies, whoever's request found the entry in its grace window.
  const withoutCookies = api.identity.kind === 'anonymous' && (reason === 'refresh' || !api.identity.carriesCredentials);
  const headers = wikiRequestHeaders(request, {
    sharedFetch: true,
    // A credential-less request's answer is stored for everyone: the wiki gets none of its
    // cookies (http/forwarding.ts withoutCookies). A login-suppressed one carrying credentials keeps
    // them: the wiki loads the session and answers `private`, as it must reach this client.
    withoutCookies,
    credentialHeaders: gw.identityRules.credentialHeaders,
  });
  // Noted before the wiki is asked: an answer whose dependencies are invalidated meanwhile may
  // predate the change, and is not stored (cache/store.ts InvalidationLog, redis/invalidations.ts).
  const marked = gw.storage.mark();
  const mark = marked instanceof Promise ? await marked : marked;
  // An answer carrying the wiki's clock is as old as the request for it (RFC 9111 §4.2.3,
  // response_delay): MediaWiki stamps curtimestamp before the module runs (includes/api/ApiMain.php
  // setupExecuteAction, addRequestedFields), and a slow module makes it older on arrival.
  const askedAt = gw.now();
  // HEAD is fetched as GET so the answer can serve both (RFC 9110 §9.3.2). Whole answers are
  // read while debuginfo may need stripping (an answer above the entry cap is then delivered,
  // not stored); with `off`, reading stops at the cap and the rest streams.
  const asked = await askWiki(
    gw,
    request,
    reason,
    { method: 'GET', path: upstreamTarget(gw.config.apiPath, api.target.rawQuery, probe), headers },
    gw.config.debuginfo === 'off' ? gw.config.cacheMaxEntryBytes : MAX_INSPECT_BYTES,
    gone,
  );
  const { res } = asked;
  const { inspected, cookies, json, settling } = afterAnswer(gw, request, api, asked, headers, false);
  if (settling) await settling;

  // ---------------------------------------------------------------------------------- store
  // One policy for this answer (policy/answer-policy.ts): the long TTL defaults only where the
  // change follower sees what the answer reads.
  const policy = new AnswerPolicy(
    { status: res.statusCode, headers: res.headers },
    {
      requester: api.identity,
      rule: api.rule,
      probed: probe,
      clientSmaxage: api.query.has('smaxage'),
      originKeyed: api.query.has('origin'),
      path: 'store',
      defaults: gw.changes.ttlDefaults(
        changesAreSignalled(api.modules, api.query, api.rule.dependsOn !== undefined) &&
          !entityChangesUnnamed(api.modules, api.query, gw.changes.namespaces) &&
          !diffsEntityContent(api.modules, api.query, json, gw.changes.namespaces),
      ),
      settings: gw.policy,
      random: gw.random,
    },
  );
  const body = inspected.body;
  const complete = Buffer.isBuffer(body);
  const slot = api.identity.kind === 'session' ? api.identity.slot : undefined;
  /** Whose session it is, as this process knows (the store decision below). */
  let sessionUser: string | undefined;
  const verdict = policy.verdict(
    {
      complete,
      bodyBytes: complete ? body.length : Infinity,
      debuginfoKept: inspected.debuginfoKept,
      echoesCredentials: inspected.echoesCredentials,
      holdsRequesterAddress: inspected.holdsRequesterAddress,
      fetchedWithClientCookies: !withoutCookies,
    },
    () => {
      const deps = dependenciesOf({
        query: api.query,
        modules: api.modules,
        override: api.rule.dependsOn,
        answer: json,
        namespaces: gw.changes.namespaces,
        now: gw.now(),
      });
      // A session's answer also depends on whose session it is, when this process knows: a
      // write, a rights change or a block of that user ends it (userTag), whichever of the
      // user's sessions the process still remembers.
      sessionUser = slot === undefined ? undefined : gw.sessionUsers.inUse(slot);
      const tags = sessionUser === undefined ? deps.tags : [...deps.tags, userTag(sessionUser)];
      // Written out: a spread followed by another property is built in V8's runtime, not its fast copy (bench/micro-miss.mjs).
      const invalidatedMeanwhile = gw.storage.invalidatedSince({ urlKey: api.urlKey, slot, modules: api.modules, deps: tags }, mark);
      return { tags, clock: deps.clock, expiresAt: deps.expiresAt, invalidatedMeanwhile };
    },
    gw.now(),
  );
  const clientHeaders = policy.responseHeaders();
  const answer: Answer = { status: res.statusCode, headers: clientHeaders, setCookies: cookies.relay, body };
  if (!verdict.store || !Buffer.isBuffer(body)) {
    const notStored = verdict.store ? 'too-large' : verdict.reason;
    gw.metrics.notStored.inc({ reason: notStored });
    const fetched: Fetched = { answer, storing: false, notStored, upstreamMs: asked.upstreamMs };
    client?.answered(fetched);
    return { fetched, entry: undefined };
  }
  // Compressed once, after debuginfo was stripped, when a client first takes the gzip: the
  // stored form (codings.ts) is what every hit is sent, and what Redis holds. A client that
  // takes gzip gets it now, and the entry is stored in it (as is a refresh of an entry some
  // client took the gzip of); any other miss is stored as it is, and its gzip is made by the first hit that takes it
  // (representations.ts gzipFirst): a miss nobody asks for again is never compressed.
  const madeNow = (client ? prefersGzipToIdentity(client.preference) : refreshing?.gzipAtStore === true) ? await gw.compression.storedForm(body) : undefined;
  const fetched: Fetched = {
    answer: madeNow
      ? { status: res.statusCode, headers: clientHeaders, setCookies: cookies.relay, body, stored: madeNow }
      : { status: res.statusCode, headers: clientHeaders, setCookies: cookies.relay, body, storedLater: true },
    storing: true,
    notStored: undefined,
    upstreamMs: asked.upstreamMs,
  };
  if (client) {
    client.answered(fetched);
    // The answer is written in the turns the flow takes from here (deliver.ts); the store
    // waits for the next one.
    await nextTurn();
  }
  const deps = verdict.dependencies;
  let tags = deps.tags;
  // Whose session it is, when only another replica learned it (the shared tier's record of it,
  // storage.ts userOfSession): asked once the client has its answer. The store's guard checks
  // the tag against the same mark.
  if (slot !== undefined && sessionUser === undefined && gw.storage.shared) {
    const user = await gw.storage.userOfSession(slot);
    if (user !== undefined) tags = [...tags, userTag(user)];
  }
  const entry: CacheEntry = {
    status: res.statusCode,
    ...(madeNow?.coding === 'gzip'
      ? { headers: policy.storedHeaders('gzip'), body: madeNow.body, coding: 'gzip', identityBytes: body.length }
      : // Its gzip may be made later: it varies on Accept-Encoding as the gzip one would (deliver.ts representationOf).
        { headers: policy.storedHeaders(!madeNow && compressible(body.length) ? 'gzip' : 'identity'), body }),
    storedAt: deps.clock ? askedAt : gw.now(),
    ttlMs: verdict.ttlMs,
    urlKey: api.urlKey,
    modules: api.modules,
    slot,
    deps: tags,
    ...(deps.clock && { clock: true }),
  };
  // A client's own miss spends its budget of bytes stored in its tier (limits/client-budget.ts StoreBudget):
  // past it the client has its answer (X-Cache `miss`) and the entry is not stored. A refresh
  // spends the budget of the client whose hit started it (refreshInBackground).
  const stores = client ? storeChargeOf(gw, request, api, tier) : refreshing?.stores;
  if (stores && !stores.take(entrySize(key, entry))) {
    gw.metrics.notStored.inc({ reason: 'client-budget' });
    return { fetched, entry: undefined };
  }
  // An invalidation that lands meanwhile is caught by the store's own guard against the same
  // mark (storage.ts store).
  const kept = gw.storage.store(tier, key, entry, mark);
  if (kept instanceof Promise ? await kept : kept) {
    // Made and found not worth it: no hit tries again.
    if (madeNow?.coding === 'identity') gw.compression.gzipNotWorthIt(tier, key);
    return { fetched, entry };
  }
  // Not kept: a change reached it while it was compressed or written, or the tier is too small for it.
  const notStored = gw.storage.invalidatedSince(entry, mark) ? 'invalidated' : 'too-large';
  gw.metrics.notStored.inc({ reason: notStored });
  return { fetched, entry: undefined };
}

/** The requester's budget of bytes stored in `tier` (steps/store-charge.ts). */
function storeChargeOf(gw: Gateway, request: FastifyRequest, api: ApiRequest, tier: Tier): StoreCharge {
  return storeCharge(gw, request.socket.remoteAddress, headerString(request.headers['x-forwarded-for']), api.identity, tier);
}

/** Resolves on the event loop's next turn (setImmediate), after the I/O of this one. */
function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
