/**
 * The gateway's parts, built once from the frozen config and handed to every step. I/O lives in
 * `upstream` and `store`; everything else here is configuration or a pure function.
 */
import type { Logger } from 'pino';
import { Registry } from 'prom-client';
import { Coalescer } from './cache/coalescer.js';
import { type PurgeSiblings, applyLocalPurge } from './cache/purge.js';
import { RedisTier } from './cache/redis-tier.js';
import { type CacheEntry, CacheStore } from './cache/store.js';
import type { Config } from './config.js';
import { AddressMatcher } from './address-list.js';
import { ClientBudget } from './limits/client-budget.js';
import { UpstreamGate } from './limits/upstream-gate.js';
import { DebuginfoMetrics } from './debuginfo/record.js';
import { type IdentityRules, cookieCredentialKind, identityRules } from './identity.js';
import { Metrics, RedisMetrics, moduleLabeller } from './metrics.js';
import type { CookieNames } from './set-cookie.js';
import { Upstream } from './upstream.js';

export type { RequestTarget } from './target.js';

export interface Gateway {
  readonly config: Config;
  readonly log: Logger;
  readonly upstream: Upstream;
  readonly store: CacheStore;
  /** The shared tier, when WIKIEDGE_REDIS_URL is set. */
  readonly redis: RedisTier | undefined;
  /** The other workers of this replica (cluster mode), told of purges when there is no Redis. */
  readonly siblings: PurgeSiblings | undefined;
  readonly coalescer: Coalescer<CacheEntry>;
  readonly registry: Registry;
  readonly metrics: Metrics;
  readonly debuginfoMetrics: DebuginfoMetrics;
  readonly identityRules: IdentityRules;
  readonly cookieNames: CookieNames;
  readonly moduleLabel: (modules: readonly string[]) => string;
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
}

export interface GatewayDeps {
  readonly now?: () => number;
  readonly random?: () => number;
  readonly registry?: Registry;
  readonly siblings?: PurgeSiblings;
}

export function createGateway(config: Config, log: Logger, deps: GatewayDeps = {}): Gateway {
  // timeOrigin is a getter that is fixed for the process: read it once, not on every clock read
  // (a fifth of the fresh-hit path's own time went to reading the clock that way).
  const timeOrigin = performance.timeOrigin;
  const now = deps.now ?? (() => timeOrigin + performance.now());
  const registry = deps.registry ?? new Registry();
  // The store reports evictions to the metrics, which read the store's sizes: tie the knot.
  const late: { metrics?: Metrics } = {};
  const store = new CacheStore({
    sharedMaxBytes: config.cacheSharedMaxBytes,
    sessionMaxBytes: config.cacheSessionMaxBytes,
    maxEntries: config.cacheMaxEntries,
    graceMs: config.graceSeconds * 1000,
    staleIfErrorMs: config.staleIfErrorSeconds * 1000,
    now,
    onEvict: (tier, reason, count) => late.metrics?.evicted(tier, reason, count),
  });
  const gate = new UpstreamGate(
    {
      maxConcurrent: config.upstreamMaxConcurrency,
      maxQueued: config.upstreamQueueMax,
      queueTimeoutMs: config.upstreamQueueTimeoutMs,
      perClientMax: config.clientMaxConcurrency,
    },
    (reason) => late.metrics?.upstreamRejected.inc({ reason }),
  );
  const metrics = new Metrics(registry, { tierStats: (tier) => store.stats(tier), gate });
  late.metrics = metrics;
  const redis = config.redisUrl
    ? new RedisTier({
        url: config.redisUrl,
        timeoutMs: config.redisTimeoutMs,
        lockMs: config.redisLockMs,
        keyPrefix: config.redisKeyPrefix,
        windows: { graceMs: config.graceSeconds * 1000, staleIfErrorMs: config.staleIfErrorSeconds * 1000 },
        now,
        log: log.child({ component: 'redis' }),
        metrics: new RedisMetrics(registry),
        onPurge: (message) => applyLocalPurge(store, message),
      })
    : undefined;
  const rules = identityRules({
    cookiePrefix: config.cookiePrefix,
    sessionName: config.sessionName,
    sessionJwtCookie: config.sessionJwtCookie,
    secret: config.identitySecret,
    credentialCookies: config.credentialCookies,
    harmlessCookies: config.harmlessCookies,
    credentialHeaders: config.credentialHeaders,
  });
  return {
    config,
    log,
    upstream: new Upstream({
      origin: config.upstream,
      connectTimeoutMs: config.upstreamConnectTimeoutMs,
      responseTimeoutMs: config.upstreamResponseTimeoutMs,
      connections: config.upstreamConnections,
    }),
    store,
    redis,
    siblings: deps.siblings,
    coalescer: new Coalescer<CacheEntry>(config.coalesceWaitMs),
    registry,
    metrics,
    debuginfoMetrics: new DebuginfoMetrics(registry),
    identityRules: rules,
    cookieNames: {
      sessionCookie: rules.sessionCookie,
      cookiePrefix: config.cookiePrefix,
      isCredential: (name) => cookieCredentialKind(name, rules) !== undefined,
    },
    moduleLabel: moduleLabeller(Object.keys(config.modules)),
    now,
    random: deps.random ?? Math.random,
    trusted: new AddressMatcher(config.trustedProxies),
    purgeAllowed: new AddressMatcher(config.purgeAllow),
    gate,
    budget: new ClientBudget({ ratePerSecond: config.clientMissRate, burst: config.clientMissBurst, maxClients: 100_000 }),
  };
}
