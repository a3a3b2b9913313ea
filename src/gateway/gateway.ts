/**
 * The gateway's parts, built once from the frozen config and handed to every step. I/O lives in
 * `upstream` and `storage`; everything else here is configuration or a pure function. Which
 * storage (cache/storage.ts) is decided here, and only here: the local tier alone, or in front of
 * the Redis tier when WIKIEDGE_REDIS_URL is set.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import { Registry } from 'prom-client';
import { Coalescer } from '../cache/coalescer.js';
import type { PurgeSiblings } from '../cache/purge.js';
import { RedisTier } from '../cache/redis-tier.js';
import { redisTarget } from '../cache/redis/target.js';
import { LocalStorage } from '../cache/local-storage.js';
import type { SharedFollowerState, Storage } from '../cache/storage.js';
import { TieredStorage } from '../cache/tiered-storage.js';
import { type CacheEntry, CacheStore } from '../cache/store.js';
import type { Config } from '../config/config.js';
import { comparable, WIKI_KEYS } from '../config/reload-keys.js';
import { AddressMatcher } from '../words/address-list.js';
import { ClientBudget, sessionStoreBudgetOptions, StoreBudget, storeBudgetOptions, UncachedUnderWay } from '../limits/client-budget.js';
import { RefusalDelay } from '../limits/refusal-delay.js';
import { UpstreamGate } from '../limits/upstream-gate.js';
import { AccessLog } from '../observe/access-log.js';
import { DebuginfoMetrics } from '../mediawiki/debuginfo/record.js';
import { CompressionMetrics } from '../compression/metrics.js';
import { Representations } from '../compression/representations.js';
import { type IdentityRules, cookieCredentialKind, identityRules } from '../mediawiki/identity.js';
import { Metrics, RedisMetrics, moduleLabeller } from '../observe/metrics.js';
import { ChangeSignalMetrics } from '../observe/change-metrics.js';
import {
  PurgeConfirmations,
  confirmationQuery,
  deletionsOfAnswer,
  deletionsQuery,
  bothLogs,
  pagesOfAnswer,
  parentsQuery,
  revisionTimesOfAnswer,
} from '../invalidation/purge-confirmation.js';
import { changeConfirmed } from '../policy/changes.js';
import { ALWAYS_LEADER, ChangeFollower, type Cursor, cursorFromStored, MemoryCursorStore } from '../invalidation/follower.js';
import { SessionUsers } from '../policy/session-users.js';
import type { PolicySettings } from '../policy/answer-policy.js';
import { ChangeSignals, type Reach } from '../invalidation/signals.js';
import type { CookieNames } from '../mediawiki/set-cookie.js';
import { Upstream } from '../upstream/upstream.js';

export type { RequestTarget } from '../words/target.js';

/** Refused requests that may wait for their answer at once (refusal-delay.ts): a socket and a timer each. */
const REFUSALS_WAITING_MAX = 10_000;

export interface Gateway {
  readonly config: Config;
  readonly log: Logger;
  readonly upstream: Upstream;
  /**
   * This process's tiers, read directly only where nothing beyond the process is wanted: the
   * fresh-hit short cut, a reload's hand-over, the stored representations, the tier metrics.
   */
  readonly store: CacheStore;
  /** Lookup, fetch once across replicas, store, purge: the local tier, and Redis behind it when configured. */
  readonly storage: Storage;
  /** The other workers of this replica (cluster mode), told of purges when there is no Redis. */
  readonly siblings: PurgeSiblings | undefined;
  readonly coalescer: Coalescer<CacheEntry>;
  readonly registry: Registry;
  readonly metrics: Metrics;
  readonly debuginfoMetrics: DebuginfoMetrics;
  /** Stored answers in the codings clients take (src/compression/representations.ts). */
  readonly compression: Representations;
  readonly identityRules: IdentityRules;
  readonly cookieNames: CookieNames;
  readonly moduleLabel: (modules: readonly string[]) => string;
  /** What the cache policy reads of the configuration (policy/answer-policy.ts), read once. */
  readonly policy: PolicySettings;
  /** Milliseconds; injected so tests control time. */
  readonly now: () => number;
  readonly random: () => number;
  /** WIKIEDGE_TRUSTED_PROXIES: peers whose X-Forwarded-* are believed. */
  readonly trusted: AddressMatcher;
  /** WIKIEDGE_PURGE_ALLOW: peers that may send PURGE. */
  readonly purgeAllowed: AddressMatcher;
  /** Admission to the wiki: concurrency, queue, each client's share (limits/upstream-gate.ts). */
  readonly gate: UpstreamGate;
  /** Each client's budget of uncached requests (limits/client-budget.ts). */
  readonly budget: ClientBudget;
  /** The sessions of one address together (limits/client-key.ts), at WIKIEDGE_CLIENT_SESSIONS_PER_ADDRESS times one client's budget. */
  readonly groupBudget: ClientBudget;
  /** Each client's uncached requests under way: the budget refuses only a client asking in parallel. */
  readonly underWay: UncachedUnderWay;
  /** Each client's grace refreshes under way (steps/admission.ts refreshTurn), apart from its own requests. */
  readonly refreshing: UncachedUnderWay;
  /** Each client's budget of bytes its misses store in the shared tier (limits/client-budget.ts StoreBudget). */
  readonly storeBudget: StoreBudget;
  /** The same for the session tier, each address's sessions together bounded too. */
  readonly sessionStoreBudget: StoreBudget;
  /** How long a refused request waits for its 429 (limits/refusal-delay.ts). */
  readonly refusalDelay: RefusalDelay;
  /** MediaWiki's change signals applied (invalidation/signals.ts), and the TTL defaults they allow. */
  readonly changes: ChangeSignals;
  /** Which sessions belong to which user (policy/session-users.ts). */
  readonly sessionUsers: SessionUsers;
  /** The recentchanges follower, with WIKIEDGE_RC_FOLLOW (started and stopped by apps/app.ts). */
  readonly follower: ChangeFollower | undefined;
  /** Purged pages confirmed changed before lists go (invalidation/purge-confirmation.ts). */
  readonly purgeConfirmations: PurgeConfirmations;
  /** Stores still running after their answers went out, for closing to wait for (AfterAnswers below). */
  readonly afterAnswers: AfterAnswers;
  /** The access log's writer, with this gateway's format and file (closed with the gateway: apps/app.ts). */
  readonly accessLog: AccessLog;
}

export interface GatewayDeps {
  readonly now?: () => number;
  readonly random?: () => number;
  readonly registry?: Registry;
  readonly siblings?: PurgeSiblings;
  /**
   * Whether its registry collects the process's metrics (prom-client's defaults, the event-loop
   * lag): the first gateway of a process only (cluster/generations.ts). prom-client's default
   * metrics observe every GC through a PerformanceObserver they never let go: one more per
   * reload (test/in-process/reload-collects-the-process-metrics-once.test.ts).
   */
  readonly processMetrics?: boolean;
}

export function createGateway(config: Config, log: Logger, deps: GatewayDeps = {}): Gateway {
  // The access log's format and file (observe/access-log.ts), this gateway's own.
  const accessLog = AccessLog.open(log, { format: config.accessLogFormat, file: config.accessLogFile });
  // timeOrigin is a getter that is fixed for the process: read it once, not on every clock read
  // (a fifth of the fresh-hit path's own time went to reading the clock that way).
  const timeOrigin = performance.timeOrigin;
  const now = deps.now ?? (() => timeOrigin + performance.now());
  const registry = deps.registry ?? new Registry();
  // The store reports evictions to the metrics, which read the store's sizes: tie the knot.
  const late: { metrics?: Metrics; invalidatedByModule?: (modules: readonly string[]) => void } = {};
  const store = new CacheStore({
    sharedMaxBytes: config.cacheSharedMaxBytes,
    sessionMaxBytes: config.cacheSessionMaxBytes,
    maxEntries: config.cacheMaxEntries,
    graceMs: config.graceSeconds * 1000,
    staleIfErrorMs: config.staleIfErrorSeconds * 1000,
    now,
    onEvict: (tier, reason, count) => late.metrics?.evicted(tier, reason, count),
    onInvalidated: (modules) => late.invalidatedByModule?.(modules),
  });
  const refusalDelay = new RefusalDelay(config.clientRefusalDelayMs, REFUSALS_WAITING_MAX);
  const gate = new UpstreamGate(
    {
      maxConcurrent: config.upstreamMaxConcurrency,
      maxQueued: config.upstreamQueueMax,
      queueTimeoutMs: config.upstreamQueueTimeoutMs,
      perClientMax: config.clientMaxConcurrency,
      perGroupMax: config.clientMaxConcurrency * config.clientSessionsPerAddress,
    },
    (reason) => late.metrics?.upstreamRejected.inc({ reason }),
  );
  // The pool is read at scrape time, by when `upstream` (below) exists.
  const metrics = new Metrics(registry, {
    tierStats: (tier) => store.stats(tier),
    gate,
    pool: () => upstream.pool.stats,
    debuginfoParsed: config.debuginfo !== 'off',
    collectDefaults: deps.processMetrics !== false,
  });
  late.metrics = metrics;
  const changeMetrics = new ChangeSignalMetrics(registry, { followerEnabled: config.rcFollow, purges: metrics });
  const moduleLabel = moduleLabeller(Object.keys(config.modules));
  late.invalidatedByModule = (modules) => changeMetrics.invalidatedByModule.inc({ module: moduleLabel(modules) });
  const compression = newRepresentations(config, log, store, registry);
  const sessionUsers = new SessionUsers();
  const storageParts = { store, users: sessionUsers, siblings: deps.siblings, now, log };
  const redisAt = redisTarget(config);
  // Read by the watch of the follower's cursor (endFollowedTtlInRedis), which asks only while it is up.
  let redisTier: RedisTier | undefined;
  const storage: Storage = redisAt
    ? new TieredStorage(
        storageParts,
        (hooks) =>
          (redisTier = new RedisTier({
            url: config.redisUrl,
            target: redisAt,
            timeoutMs: config.redisTimeoutMs,
            lockMs: config.redisLockMs,
            keyPrefix: config.redisKeyPrefix,
            windows: { graceMs: config.graceSeconds * 1000, staleIfErrorMs: config.staleIfErrorSeconds * 1000 },
            now,
            log: log.child({ component: 'redis' }),
            metrics: new RedisMetrics(registry),
            ...hooks,
          })),
      )
    : new LocalStorage(storageParts);
  const changes = new ChangeSignals({
    purge: (message, options) => storage.purge(message, options?.rebound ? { oweIfUnreachable: false } : {}),
    purgeHere: (message) => Promise.resolve({ purged: storage.purgeHere(message) }),
    metrics: changeMetrics,
    log: log.child({ component: 'changes' }),
    now: () => Date.now(),
    shortTtl: { ttlPublicSeconds: config.ttlPublicSeconds, ttlSessionSeconds: config.ttlSessionSeconds },
    followedTtl: { ttlPublicSeconds: config.ttlFollowedSeconds, ttlSessionSeconds: config.ttlSessionFollowedSeconds },
    reboundMs: config.reboundPurgeMs,
  });
  const upstream = new Upstream({
    origin: config.upstream,
    connectTimeoutMs: config.upstreamConnectTimeoutMs,
    responseTimeoutMs: config.upstreamResponseTimeoutMs,
    connections: config.upstreamConnections,
  });
  const askWiki = async (query: string): Promise<unknown> => {
    const res = await upstream.request({
      method: 'GET',
      path: `${config.apiPath}?${query}`,
      headers: { 'user-agent': 'wikiedge-purge-confirmation', accept: 'application/json' },
      signal: AbortSignal.timeout(config.upstreamResponseTimeoutMs),
    });
    const text = await res.body.text();
    if (res.statusCode !== 200) throw new Error(`the wiki answered ${res.statusCode}`);
    return JSON.parse(text) as unknown;
  };
  const purgeConfirmations = new PurgeConfirmations({
    ask: async (titles) => pagesOfAnswer(await askWiki(confirmationQuery(titles))),
    askRevisions: async (revids) => revisionTimesOfAnswer(await askWiki(parentsQuery(revids))),
    askDeletions: async (since) => {
      const [deleted, moved] = await Promise.all(
        ['delete', 'move'].map(async (log) => deletionsOfAnswer(await askWiki(deletionsQuery(since, log as 'delete' | 'move')))),
      );
      return bothLogs(deleted!, moved!);
    },
    confirmed: (title, onlyStatements, pageId, existence, onlySitelinks) =>
      changeConfirmed(title, changes.namespaces, onlyStatements, pageId, existence, onlySitelinks),
    apply: (list) => changes.apply(list),
    log: log.child({ component: 'purge-confirmation' }),
  });
  // A write that may have saved nothing touches lists only once the wiki confirms its pages changed.
  changes.confirmWith((title) => purgeConfirmations.note(title));
  // A worker of a cluster, not a generation of the single process: the two generations of a
  // reload are siblings too, and the old one's follower must reach the new one's tier (test/in-
  // process/reload-single-process-follower-reaches-both-generations.test.ts).
  const follower = config.rcFollow ? newFollower(config, log, upstream, storage, changes, changeMetrics, config.workers > 1) : undefined;
  if (follower) changes.followWith(follower);
  else {
    const g: NotFollowing = { changes, metrics: changeMetrics, reach: storage.shared ? 'everywhere' : 'here', log: log.child({ component: 'changes' }) };
    notFollowing(g);
    if (storage.followerState) {
      const times = { unhealthyAfterMs: unhealthyAfter(config), gapAfterMs: gapAfter(config), followedTtlMs: config.ttlFollowedSeconds * 1000 };
      void endFollowedTtlInRedis(g, storage.followerState, { up: () => redisTier?.up === true, staleBefore: async () => redisTier?.staleBefore() }, times);
    }
  }
  const rules = identityRules({
    cookiePrefix: config.cookiePrefix,
    sessionName: config.sessionName,
    sessionJwtCookie: config.sessionJwtCookie,
    secret: config.identitySecret,
    credentialCookies: config.credentialCookies,
    harmlessCookies: config.harmlessCookies,
    credentialHeaders: config.credentialHeaders,
    credentialParams: config.credentialParams,
  });
  return {
    config,
    log,
    upstream,
    store,
    storage,
    siblings: deps.siblings,
    coalescer: new Coalescer<CacheEntry>(config.coalesceWaitMs),
    registry,
    metrics,
    debuginfoMetrics: new DebuginfoMetrics(registry),
    compression,
    identityRules: rules,
    cookieNames: {
      sessionCookie: rules.sessionCookie,
      cookiePrefix: config.cookiePrefix,
      isCredential: (name) => cookieCredentialKind(name, rules) !== undefined,
    },
    moduleLabel,
    policy: {
      ttlMaxSeconds: config.ttlMaxSeconds,
      ttlJitterRatio: config.ttlJitterRatio,
      ttlClockSeconds: config.ttlClockSeconds,
      maxEntryBytes: config.cacheMaxEntryBytes,
    },
    now,
    random: deps.random ?? Math.random,
    trusted: new AddressMatcher(config.trustedProxies),
    purgeAllowed: new AddressMatcher(config.purgeAllow),
    gate,
    budget: new ClientBudget({ ratePerSecond: config.clientMissRate, burst: config.clientMissBurst, maxClients: 100_000 }),
    groupBudget: new ClientBudget({
      ratePerSecond: config.clientMissRate * config.clientSessionsPerAddress,
      burst: config.clientMissBurst * config.clientSessionsPerAddress,
      maxClients: 100_000,
    }),
    underWay: new UncachedUnderWay(),
    refreshing: new UncachedUnderWay(),
    storeBudget: new StoreBudget(storeBudgetOptions(config)),
    sessionStoreBudget: new StoreBudget(sessionStoreBudgetOptions(config)),
    refusalDelay,
    changes,
    sessionUsers,
    follower,
    purgeConfirmations,
    afterAnswers: new AfterAnswers(),
    accessLog,
  };
}

/** Decoded answers for identity clients are kept in 1/16 of the shared tier's budget, beside it. */
function newRepresentations(config: Config, log: Logger, store: CacheStore, registry: Registry): Representations {
  const late: { r?: Representations } = {};
  const metrics = new CompressionMetrics(registry, { tierStats: (tier) => store.stats(tier), decodedBytes: () => late.r?.decodedBytes() ?? 0 });
  late.r = new Representations({
    store,
    metrics,
    decodedMaxBytes: Math.floor(config.cacheSharedMaxBytes / 16),
    brotliAfterHits: config.brotliAfterHits,
    log: log.child({ component: 'compression' }),
  });
  return late.r;
}

/**
 * The recentchanges follower: with a shared tier (Redis) its cursor lives there and one replica follows at a
 * time (a lease renewed every poll, taken over when its holder dies); without, the cursor lives
 * as long as the process, as its local tier does, and every worker of a cluster follows for
 * itself and applies what it reads to its own tier only (docs/OPERATIONS.md "Invalidation": a known cost,
 * one poll per worker).
 */
function newFollower(
  config: Config,
  log: Logger,
  upstream: Upstream,
  storage: Storage,
  changes: ChangeSignals,
  metrics: ChangeSignalMetrics,
  inCluster: boolean,
): ChangeFollower {
  const leaseMs = Math.max(5_000, config.rcPollMs * 5);
  const unhealthyAfterMs = unhealthyAfter(config);
  const state = storage.followerState;
  const reach = !storage.shared && inCluster ? 'here' : 'everywhere';
  return new ChangeFollower({
    upstream,
    apiPath: config.apiPath,
    pollMs: config.rcPollMs,
    unhealthyAfterMs,
    // Past the short TTL without a successful poll, entries the follower vouched for would have
    // expired without it: from then on they are refreshed at next use. Never before the follower
    // is unhealthy: a standby hears of the leader's polls only as they end, so with a short TTL
    // below the poll interval (or a leader's long poll through a burst) every standby took a gap,
    // everywhere, between two healthy polls.
    gapAfterMs: gapAfter(config),
    maxLagMs: config.rcMaxLagSeconds * 1000,
    requestTimeoutMs: config.upstreamResponseTimeoutMs,
    now: () => Date.now(),
    log: log.child({ component: 'change-follower' }),
    metrics,
    cursors: state ? { load: async () => (await state.loadCursor()) as Cursor | undefined, save: (c) => state.saveCursor(c) } : processCursor(config),
    lease: state ? { hold: () => state.holdLease(leaseMs), release: () => state.releaseLease(), durationMs: leaseMs } : ALWAYS_LEADER,
    apply: async (list) => {
      await changes.apply(list, reach);
    },
    owesPurges: () => storage.owesPurges(),
    expire: (before, reason) => changes.expire(before, reason, reach),
    namespaces: (ns) => changes.setNamespaces(ns),
    latestNamespaces: () => changes.namespaces,
    stopped: (lastVouched) => followerStopped(lastVouched),
  });
}

/** Nobody vouched for this long: a follower is not healthy, and the short TTL defaults apply. */
function unhealthyAfter(config: Config): number {
  return Math.max(10_000, config.rcPollMs * 5);
}

/** Nobody vouched for this long: a gap (newFollower's gapAfterMs says why). */
function gapAfter(config: Config): number {
  return Math.max(config.ttlPublicSeconds * 1000, unhealthyAfter(config));
}

/**
 * This process's gateways that follow no changes (WIKIEDGE_RC_FOLLOW=false), while they live,
 * each with where its gaps reach: its local tier, and with Redis the shared one too.
 */
const processNotFollowing = new Set<NotFollowing>();

interface NotFollowing {
  readonly changes: ChangeSignals;
  readonly metrics: ChangeSignalMetrics;
  readonly reach: Reach;
  readonly log: Logger;
  /** The instant of the last follower-off gap it took, or found taken (endFollowedTtlInRedis). */
  gapAt?: number;
}

function notFollowing(g: NotFollowing): void {
  for (const other of processNotFollowing) if (other.changes.isClosed) processNotFollowing.delete(other);
  processNotFollowing.add(g);
}

/**
 * A follower of this process stopped. When a gateway of the same process follows no changes, it
 * is a single process's reload that turned WIKIEDGE_RC_FOLLOW off (cluster/generations.ts
 * replace: the new gateway is built, takes the old one's local tier over, then the old one
 * retires and its follower stops here): what the old gateway stored while its follower vouched
 * was kept WIKIEDGE_TTL_FOLLOWED_SECONDS (invalidation/signals.ts ttlDefaults), handed over with
 * its storedAt, and nothing would invalidate it any more. So a gap, `follower-off`, dated now,
 * after the last poll and the whole hand-over: those entries are refreshed at their next use.
 * With Redis, not here: another replica may follow on (its changes reach this one over the purge
 * channel), and the watch of the follower's cursor takes the gap, everywhere, once nobody
 * vouches (endFollowedTtlInRedis). Not at a reload that keeps
 * following (no such gateway), nor when the follower never vouched (every entry was stored under
 * the short TTLs). test/in-process/reload-that-stops-following-ends-the-followed-ttl.test.ts.
 */
async function followerStopped(lastVouched: number | undefined): Promise<void> {
  if (lastVouched === undefined) return;
  for (const g of [...processNotFollowing]) {
    if (g.changes.isClosed) {
      processNotFollowing.delete(g);
      continue;
    }
    // With Redis another replica may follow on, whose changes reach this one over the purge
    // channel: a gap everywhere now would refresh every replica's entries for nothing. The watch
    // of the follower's cursor (endFollowedTtlInRedis) takes it once nobody vouches.
    if (g.reach !== 'here') continue;
    await followerOff(g, Date.now());
  }
}

async function followerOff(g: NotFollowing, before: number): Promise<void> {
  if (g.gapAt !== undefined && g.gapAt >= before) return;
  g.gapAt = before;
  g.metrics.gap('follower-off');
  // The old gateway's retirement goes on whatever happens here: a failure is logged, not thrown.
  await g.changes.expire(before, 'follower-off', g.reach).catch((err: unknown) => {
    g.log.error({ err: String(err) }, 'change signals: the follower-off gap could not be taken; purge everything (POST /purge?all=1)');
  });
}

/** While the gateway starts (its storage opens after it is built), the cursor is asked for again this often until Redis is up. */
const CURSOR_RETRY_MS = 1_000;
const CURSOR_RETRY_FOR_MS = 60_000;

/**
 * A gateway that follows no changes, beside a Redis tier, watches the follower's cursor there:
 * followers of the same key prefix (other replicas, this replica before a restart, the workers a
 * reload replaced) stored their answers in Redis for WIKIEDGE_TTL_FOLLOWED_SECONDS, and nothing
 * invalidates them once every follower has stopped. The cursor's `polledAt` is the last instant a
 * follower vouched (invalidation/follower.ts toCursor); every entry stored under the followed TTL
 * was stored before polledAt + the unhealthy time (a follower's `healthy`). Once the cursor has
 * not moved for as long as a standby follower waits before its `stalled` gap (`gapAfterMs`: a
 * follower back within it reads on from its cursor, as for an outage), a `follower-off` gap dated
 * polledAt + the unhealthy time, everywhere (Redis' stale-before mark: every replica, and those
 * started later), ends them and nothing stored since. The same date for every replica that
 * watches, one mark however many take it, and a replica that finds the mark there already (one
 * restarted later) takes none; none while a follower polls on (its rows reach this
 * replica over the purge channel), none once the followed TTL has run out since. One read of
 * Redis per `gapAfterMs` (60 s by default; 10 s while nobody follows).
 * test/in-process/restart-without-the-follower-ends-the-followed-ttl-in-redis.test.ts.
 */
async function endFollowedTtlInRedis(
  g: NotFollowing,
  state: SharedFollowerState,
  redis: { readonly up: () => boolean; readonly staleBefore: () => Promise<number | undefined> },
  times: { unhealthyAfterMs: number; gapAfterMs: number; followedTtlMs: number },
): Promise<void> {
  const { unhealthyAfterMs, gapAfterMs, followedTtlMs } = times;
  const started = Date.now();
  let vouching = false;
  while (!g.changes.isClosed) {
    let polledAt: number | undefined;
    try {
      // Not while the tier is down or not up yet (the gateway is built before its storage opens):
      // the cursor's read asks even a tier that is down, and a failure would take it down again.
      // What Redis holds is not served meanwhile.
      if (!redis.up()) throw new Error('redis is not up');
      polledAt = cursorFromStored(await state.loadCursor())?.polledAt;
    } catch {
      await sleep(Date.now() - started < CURSOR_RETRY_FOR_MS ? CURSOR_RETRY_MS : unhealthyAfterMs, undefined, { ref: false });
      continue;
    }
    if (g.changes.isClosed) return;
    // Nobody followed under this key prefix yet (or a cursor of another form: it vouched for nothing).
    if (polledAt === undefined) {
      await sleep(unhealthyAfterMs, undefined, { ref: false });
      continue;
    }
    const now = Date.now();
    // A cursor dated ahead of this clock (a replica's clock ahead) vouches until now at most:
    // never a sleep past gapAfterMs.
    polledAt = Math.min(polledAt, now);
    const due = polledAt + gapAfterMs;
    if (now < due) {
      if (!vouching)
        g.log.info({ lastVouched: new Date(polledAt).toISOString() }, 'change signals: a follower vouches for what Redis holds under the followed TTL');
      vouching = true;
      // Looked at again once this vouch is no longer enough: moved on, or the gap.
      await sleep(due - now, undefined, { ref: false });
      continue;
    }
    vouching = false;
    // Nobody vouches now. The follower that vouched last stopped, unless its gap was taken by
    // this watch before (followerOff's date).
    const end = polledAt + unhealthyAfterMs;
    const covered = (g.gapAt ?? -Infinity) >= end;
    if (!covered && now - end < followedTtlMs) {
      // Taken already by another replica, or by this one before a restart: Redis' mark says so.
      // Taken again, each restart of a replica within the followed TTL would refuse every
      // replica's stores under way (the gap's flush guard) and tell them all once more.
      const mark = await redis.staleBefore().catch(() => undefined);
      if (mark !== undefined && mark >= end) {
        g.gapAt = end;
        g.log.info({ lastVouched: new Date(polledAt).toISOString() }, 'change signals: the gap for the last follower is in redis already');
      } else {
        g.log.warn(
          { lastVouched: new Date(polledAt).toISOString() },
          'change signals: no follower vouches any more for what Redis holds under the followed TTL',
        );
        await followerOff(g, end);
      }
    }
    await sleep(unhealthyAfterMs, undefined, { ref: false });
  }
}

/**
 * Without a shared tier the cursor lives as long as the process, as the local tier does: one
 * store per wiki for every gateway the process builds. A single process's reload builds a new
 * gateway that takes the old one's local tier over (cluster/generations.ts replace); with a
 * cursor of its own it started with none, and its `cursor-lost` gap expired every entry just
 * handed over (invalidation/follower.ts). With this one it follows on from the old follower's
 * last poll. By wiki (config/reload-keys.ts WIKI_KEYS): a reload to another wiki hands nothing
 * over and starts without a cursor, as it must.
 * test/in-process/reload-single-process-keeps-the-follower-cursor.test.ts.
 */
const processCursors = new Map<string, MemoryCursorStore>();
function processCursor(config: Config): MemoryCursorStore {
  const wiki = WIKI_KEYS.map((key) => comparable(config[key])).join('\n');
  let cursors = processCursors.get(wiki);
  if (!cursors) processCursors.set(wiki, (cursors = new MemoryCursorStore()));
  return cursors;
}

/**
 * Work a request leaves running once its answer went out: a miss's compression and store
 * (steps/flow.ts fetchAndStore answers first, then stores). Closing the gateway waits for it,
 * within a bound, before it closes the Redis connection and the upstream pool the store and
 * the cross-replica lock's release still use (apps/app.ts closeGateway).
 */
export class AfterAnswers {
  private readonly pending = new Set<Running>();

  /**
   * Work begun, until its `done()`: the miss's one handler of its fetch calls it (steps/flow.ts
   * lookupOrFetch), so tracking a miss costs no promise of its own.
   */
  begin(): Running {
    const running = new Running(this.pending);
    this.pending.add(running);
    return running;
  }

  /** Tracks `work` until it settles; its outcome is its owner's to handle. */
  track(work: Promise<unknown>): void {
    const running = this.begin();
    work.then(
      () => running.done(),
      () => running.done(),
    );
  }

  /** How many are still running. */
  get size(): number {
    return this.pending.size;
  }

  /** Resolves once everything tracked now has settled, or after `boundMs`, whichever is first. */
  async settled(boundMs: number): Promise<void> {
    if (this.pending.size === 0) return;
    let timer: NodeJS.Timeout | undefined;
    const bound = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, boundMs);
      timer.unref();
    });
    await Promise.race([Promise.all([...this.pending].map((r) => r.ended())), bound]);
    clearTimeout(timer);
  }
}

/** One piece of work a request left running. */
export class Running {
  private end: Promise<void> | undefined;
  private resolve: (() => void) | undefined;
  private finished = false;

  constructor(private readonly pending: Set<Running>) {}

  done(): void {
    if (this.finished) return;
    this.finished = true;
    this.pending.delete(this);
    this.resolve?.();
  }

  /** Resolves when it is done: made only when someone waits (a closing gateway, a trace). */
  ended(): Promise<void> {
    if (this.finished) return Promise.resolve();
    return (this.end ??= new Promise((resolve) => (this.resolve = resolve)));
  }
}
