/**
 * Every metric the gateway exports, declared once against an injected registry (never the global
 * one, so tests do not collide), with labels whose values come from closed sets.
 * Prometheus naming: one prefix, base units, `_total` on counters, `_info` for build metadata.
 */
import type { Server } from 'node:net';
import { type IntervalHistogram, monitorEventLoopDelay } from 'node:perf_hooks';
import { Counter, Gauge, Histogram, type Registry, collectDefaultMetrics } from 'prom-client';
import { buildInfo } from './build-info.js';
import { droppedLogLines } from './logging.js';
import type { EvictionReason, Tier } from '../words/outcomes.js';
import { TIERS } from '../words/outcomes.js';
import type { CookieEvent, CookieLabel } from '../mediawiki/set-cookie.js';
import type { UpstreamFailureKind } from '../words/errors.js';
import { RequestTally } from './request-metrics.js';

export { DISPOSITIONS, type Disposition } from '../words/outcomes.js';
export { moduleLabeller, UNKNOWN_MODULE } from '../mediawiki/modules.js';

/** Redis operations, the `op` label of wikiedge_redis_errors_total. */
export type RedisOp = 'get' | 'set' | 'lock' | 'unlock' | 'poll' | 'purge' | 'publish' | 'ping' | 'subscribe';
export const REDIS_OPS: readonly RedisOp[] = ['get', 'set', 'lock', 'unlock', 'poll', 'purge', 'publish', 'ping', 'subscribe'];
/** Reads of the Redis tier (concurrent lookups of one key share one): found (any freshness), not found, or Redis not usable (down, timeout, bad entry). */
export type RedisLookup = 'hit' | 'miss' | 'unavailable';
/** The cross-replica fetch lock: won (we fetch), lost (another replica fetches), unavailable. */
export type RedisLockOutcome = 'won' | 'lost' | 'unavailable';
/** What a replica that lost the lock ended with: the winner's entry, or its own fetch. */
export type RedisWaitOutcome = 'entry' | 'released' | 'timeout' | 'unavailable';

/** The shared Redis tier's health and traffic; registered only with WIKIEDGE_REDIS_URL or WIKIEDGE_REDIS_SENTINELS. */
export class RedisMetrics {
  readonly up: Gauge;
  readonly errors: Counter<'op'>;
  readonly lookups: Counter<'result'>;
  readonly locks: Counter<'outcome'>;
  readonly waits: Counter<'outcome'>;
  readonly purgeMessages: Counter<'kind'>;
  readonly stored: Counter<'tier'>;
  readonly channelResumed: Counter;
  readonly failovers: Counter;
  readonly downs: Counter;
  /** Redis Cluster only (cache/redis/cluster-watch.ts): `shard` is an index, '0' to '15', or 'other'. */
  readonly shardUp: Gauge<'shard'>;
  readonly shardErrors: Counter<'shard'>;
  readonly topologyRefreshes: Counter;
  /** Redis Cluster only: `cause` is 'restart', 'failover' or 'store' (cache/redis/cluster-watch.ts DataLoss). */
  readonly shardDataLost: Counter<'cause'>;
  /** Entry stores not sent to Redis; `reason` is only 'memory' (cache/redis/memory.ts). */
  readonly storesSkipped: Counter<'reason'>;

  constructor(registry: Registry) {
    const registers = [registry];
    this.up = new Gauge({
      name: 'wikiedge_redis_up',
      help: '1 when the shared Redis tier is in use, 0 while it is down (requests then use the local tier and the wiki).',
      registers,
    });
    this.errors = new Counter({
      name: 'wikiedge_redis_errors_total',
      help: 'Redis calls that failed or timed out, by operation.',
      labelNames: ['op'] as const,
      registers,
    });
    this.lookups = new Counter({
      name: 'wikiedge_redis_lookups_total',
      help: 'Reads of the Redis tier after a local miss, by result (hit, miss, unavailable); concurrent lookups of one key share one read.',
      labelNames: ['result'] as const,
      registers,
    });
    this.locks = new Counter({
      name: 'wikiedge_redis_locks_total',
      help: 'Cross-replica fetch lock attempts, by outcome (won, lost, unavailable).',
      labelNames: ['outcome'] as const,
      registers,
    });
    this.waits = new Counter({
      name: 'wikiedge_redis_lock_waits_total',
      help: 'Replicas that lost the lock, by how the wait ended (entry, released, timeout, unavailable).',
      labelNames: ['outcome'] as const,
      registers,
    });
    this.purgeMessages = new Counter({
      name: 'wikiedge_redis_purge_messages_total',
      help: 'Purge messages received on the Redis channel and applied to the local tier, by kind (unreadable: dropped, not applied).',
      labelNames: ['kind'] as const,
      registers,
    });
    this.stored = new Counter({
      name: 'wikiedge_redis_stored_total',
      help: 'Entries written to the Redis tier, by tier.',
      labelNames: ['tier'] as const,
      registers,
    });
    // Every series from the start (a series that appears late loses its first increase to rate()).
    this.up.set(0);
    for (const op of REDIS_OPS) this.errors.inc({ op }, 0);
    for (const result of ['hit', 'miss', 'unavailable']) this.lookups.inc({ result }, 0);
    for (const outcome of ['won', 'lost', 'unavailable']) this.locks.inc({ outcome }, 0);
    for (const outcome of ['entry', 'released', 'timeout', 'unavailable']) this.waits.inc({ outcome }, 0);
    this.channelResumed = new Counter({
      name: 'wikiedge_redis_channel_resumed_total',
      help: 'Times the purge channel was subscribed again after it was lost: purges sent meanwhile may be missed, so the local tier is refreshed at next use.',
      registers,
    });
    this.failovers = new Counter({
      name: 'wikiedge_redis_failovers_total',
      help: 'Times the tier came back on another primary than the one it used before (WIKIEDGE_REDIS_SENTINELS: a Sentinel failover; WIKIEDGE_REDIS_CLUSTER_NODES: a shard whose master changed), as this process saw it.',
      registers,
    });
    // A flapping tier can be up at every scrape: the gauge alone would not show it.
    this.downs = new Counter({
      name: 'wikiedge_redis_down_total',
      help: 'Times the shared Redis tier went from up to down (a failed call, three timeouts in a row, a lost connection).',
      registers,
    });
    this.shardUp = new Gauge({
      name: 'wikiedge_redis_shard_up',
      help: 'Redis Cluster: 1 while the master of a shard answers (INFO server, every 5 s), by shard (an index by the first slot it owns, stable across failovers).',
      labelNames: ['shard'] as const,
      registers,
    });
    this.shardErrors = new Counter({
      name: 'wikiedge_redis_shard_errors_total',
      help: 'Redis Cluster: errors of the connection to a node, by the shard it serves.',
      labelNames: ['shard'] as const,
      registers,
    });
    this.topologyRefreshes = new Counter({
      name: 'wikiedge_redis_topology_refreshes_total',
      help: 'Redis Cluster: times the slot map was read again (periodically, after MOVED, after a node failed).',
      registers,
    });
    this.shardDataLost = new Counter({
      name: 'wikiedge_redis_shard_data_lost_total',
      help: "Times Redis may have lost acknowledged writes (restart: another run_id at a master's address, or at the one primary's; failover: another master of a Redis Cluster shard, another primary named by the Sentinels, or a URL's primary found demoted and promoted again; store: a cluster store failed part-way and its entry could not be removed), each taken as a gap (everything cached before is refreshed at next use).",
      labelNames: ['cause'] as const,
      registers,
    });
    this.storesSkipped = new Counter({
      name: 'wikiedge_redis_stores_skipped_total',
      help: "Entries kept in the local tier only, not written to Redis, by reason (memory: a master's used_memory was, or the write would have gone, above 90 % of its maxmemory).",
      labelNames: ['reason'] as const,
      registers,
    });
    for (const kind of PURGE_KINDS) this.purgeMessages.inc({ kind }, 0);
    for (const tier of TIERS) this.stored.inc({ tier }, 0);
    this.storesSkipped.inc({ reason: 'memory' }, 0);
  }

  error(op: RedisOp): void {
    this.errors.inc({ op });
  }
  lookup(result: RedisLookup): void {
    this.lookups.inc({ result });
  }
  lock(outcome: RedisLockOutcome): void {
    this.locks.inc({ outcome });
  }
  wait(outcome: RedisWaitOutcome): void {
    this.waits.inc({ outcome });
  }
}

/** The kinds of purge (cache/redis/purges.ts PurgeMessage). */
// `unreadable`: a message no kind of which could be read (dropped, not applied: purges.ts onMessage).
const PURGE_KINDS = ['url', 'slot', 'module', 'prefix', 'pattern', 'all', 'tags', 'user', 'expire', 'unreadable'] as const;

/**
 * Who asked for a purge, the `source` label of wikiedge_purge_requests_total:
 * - admin: POST /purge on the admin listener;
 * - http-purge: a PURGE of an api.php URL on the public listener;
 * - page-url: a PURGE of a page's URL (what MediaWiki sends through $wgCdnServers);
 * - follower: changes read from the wiki's recentchanges;
 * - write: a write that passed through the gateway;
 * - user-rights: a user's rights changed or it was blocked (its sessions' entries go);
 * - gap: the change signals could not vouch for what is cached (everything older refreshes).
 */
export type PurgeSource = 'admin' | 'http-purge' | 'page-url' | 'follower' | 'write' | 'user-rights' | 'gap';
export const PURGE_SOURCES: readonly PurgeSource[] = ['admin', 'http-purge', 'page-url', 'follower', 'write', 'user-rights', 'gap'];

/** What the upstream connection gauges read from the client's pool (undici's Pool#stats). */
export interface PoolStats {
  /** Sockets open to the wiki. */
  readonly connected: number;
  /** Open sockets without a request on them. */
  readonly free: number;
}

/** What the cache gauges read from a tier (the store's stats()). */
export interface TierStats {
  readonly entries: number;
  readonly bytes: number;
  readonly budget: number;
  readonly slabBytes: number;
}

/**
 * A gauge by tier, read from the store's stats when scraped (the metrics are built before the
 * store they read, which is why `stats` may be absent: such a gauge stays empty).
 */
export function tierGauge<S>(registers: Registry[], stats: ((tier: Tier) => S) | undefined, name: string, help: string, pick: (s: S) => number): Gauge<'tier'> {
  return new Gauge({
    name,
    help,
    labelNames: ['tier'] as const,
    registers,
    collect() {
      if (!stats) return;
      for (const tier of TIERS) this.set({ tier }, pick(stats(tier)));
    },
  });
}

/** MediaWiki API error codes seen, bounded: after this many distinct codes the rest are `other`. */
const MAX_ERROR_CODES = 64;

export class Metrics {
  /** wikiedge_requests_total and wikiedge_request_duration_seconds (observe/request-metrics.ts). */
  readonly requests: RequestTally;
  readonly upstreamDuration: Histogram<'outcome'>;
  readonly upstreamRequests: Counter<'reason'>;
  readonly upstreamFailures: Counter<'kind'>;
  readonly evictions: Counter<'tier' | 'reason'>;
  readonly coalescedWaiters: Counter;
  readonly apiErrors: Counter<'code'>;
  readonly cookieNormalisations: Counter<'event' | 'cookie'>;
  readonly notStored: Counter<'reason'>;
  readonly unknownCredentials: Counter;
  readonly upstreamRejected: Counter<'reason'>;
  readonly purgeRequests: Counter<'source'>;
  private readonly clientConnections: Gauge;
  private readonly clientConnectionsAccepted: Counter;
  private readonly errorCodes = new Set<string>();
  private readonly methods = new Set(['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'OPTIONS', 'PATCH', 'PURGE']);

  constructor(
    readonly registry: Registry,
    opts: {
      /** Read at scrape time: a tier's figures (the store's stats(); metrics never import the store). */
      tierStats?: (tier: Tier) => TierStats;
      /** Read at scrape time: the upstream gate's turns in use and waiters. */
      gate?: { readonly active: number; readonly queued: number };
      /** Read at scrape time: the upstream client's sockets (undici's Pool#stats). */
      pool?: () => PoolStats;
      collectDefaults?: boolean;
      /** WIKIEDGE_DEBUGINFO: whether the wiki's debuginfo is read at all (`off`: the debuginfo metrics stay empty). */
      debuginfoParsed?: boolean;
    } = {},
  ) {
    const registers = [registry];
    if (opts.collectDefaults !== false) collectNodeMetrics(registry);
    new Gauge({
      name: 'wikiedge_debuginfo_enabled',
      help: "1 when the gateway reads the wiki's debuginfo (WIKIEDGE_DEBUGINFO strip or pass), 0 when it is off: the wikiedge_wiki_* metrics then stay empty.",
      aggregator: 'max',
      registers,
    }).set(opts.debuginfoParsed === false ? 0 : 1);
    new Gauge({
      name: 'wikiedge_build_info',
      help: 'Always 1: the gateway version, the commit it was built from and the Node.js version it runs on, as labels.',
      labelNames: ['version', 'commit', 'node_version'] as const,
      // Workers of one machine run the same build: 1, not the number of workers.
      aggregator: 'max',
      registers,
    }).set({ ...buildInfo() }, 1);
    this.requests = new RequestTally(registry);
    this.upstreamDuration = new Histogram({
      name: 'wikiedge_upstream_duration_seconds',
      help: 'Time the wiki took to answer (headers and body), by outcome.',
      labelNames: ['outcome'] as const,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    });
    this.upstreamRequests = new Counter({
      name: 'wikiedge_upstream_requests_total',
      help: 'Requests sent to the wiki, by why (miss, pass, refresh).',
      labelNames: ['reason'] as const,
      registers,
    });
    this.upstreamFailures = new Counter({
      name: 'wikiedge_upstream_failures_total',
      help: 'Requests to the wiki that failed, by kind.',
      labelNames: ['kind'] as const,
      registers,
    });
    this.evictions = new Counter({
      name: 'wikiedge_cache_evictions_total',
      help: 'Entries removed from a tier, by reason (size, expired, purge, logout, replaced, invalidated).',
      labelNames: ['tier', 'reason'] as const,
      registers,
    });
    this.coalescedWaiters = new Counter({
      name: 'wikiedge_coalesced_waiters_total',
      help: 'Requests that waited for an identical request already on its way to the wiki.',
      registers,
    });
    this.apiErrors = new Counter({
      name: 'wikiedge_api_errors_total',
      help: 'MediaWiki API errors (MediaWiki-API-Error header) by code.',
      labelNames: ['code'] as const,
      registers,
    });
    this.cookieNormalisations = new Counter({
      name: 'wikiedge_cookie_normalisations_total',
      help: 'Set-Cookie handling: dropped and relayed deletions, sessions started, logout evictions.',
      labelNames: ['event', 'cookie'] as const,
      registers,
    });
    this.notStored = new Counter({
      name: 'wikiedge_not_stored_total',
      help: 'Answers to cacheable requests that were not stored, by reason.',
      labelNames: ['reason'] as const,
      registers,
    });
    this.unknownCredentials = new Counter({
      name: 'wikiedge_unknown_credentials_total',
      help: 'Requests that the credential net (a cookie whose name says session or token, not of a known session provider) made session holders.',
      registers,
    });
    this.upstreamRejected = new Counter({
      name: 'wikiedge_upstream_rejected_total',
      help: 'Requests refused before reaching the wiki, by reason: client-budget (429, the client spent its uncached requests), client-share (429, too many of its requests waiting), queue-full and queue-timeout (503, the wiki is busy).',
      labelNames: ['reason'] as const,
      registers,
    });
    for (const reason of ['client-budget', 'client-share', 'queue-full', 'queue-timeout']) this.upstreamRejected.inc({ reason }, 0);
    this.purgeRequests = new Counter({
      name: 'wikiedge_purge_requests_total',
      help: 'Purges asked for, by source: admin (POST /purge), http-purge (PURGE of an api.php URL), page-url (PURGE of a page URL), follower (recentchanges), write (a write through the gateway), user-rights, gap.',
      labelNames: ['source'] as const,
      registers,
    });
    for (const source of PURGE_SOURCES) this.purgeRequests.inc({ source }, 0);
    this.clientConnections = new Gauge({
      name: 'wikiedge_client_connections',
      help: 'Client connections open on the public listener now.',
      registers,
    });
    this.clientConnectionsAccepted = new Counter({
      name: 'wikiedge_client_connections_accepted_total',
      help: 'Client connections accepted on the public listener.',
      registers,
    });
    let droppedSeen = 0;
    new Counter({
      name: 'wikiedge_log_lines_dropped_total',
      help: 'Log lines dropped because the reader of standard output did not keep up (16 MiB held at most).',
      registers,
      collect() {
        const dropped = droppedLogLines();
        if (dropped > droppedSeen) this.inc(dropped - droppedSeen);
        droppedSeen = dropped;
      },
    });
    const pool = opts.pool;
    new Gauge({
      name: 'wikiedge_upstream_connections',
      help: 'Connections open to the wiki now, by state: busy (a request on it) or idle (kept alive for the next one).',
      labelNames: ['state'] as const,
      registers,
      collect() {
        if (!pool) return;
        const stats = pool();
        this.set({ state: 'busy' }, stats.connected - stats.free);
        this.set({ state: 'idle' }, stats.free);
      },
    });
    const gate = opts.gate;
    new Gauge({
      name: 'wikiedge_upstream_in_flight',
      help: 'Requests on their way to the wiki now (at most WIKIEDGE_UPSTREAM_MAX_CONCURRENCY).',
      registers,
      collect() {
        if (gate) this.set(gate.active);
      },
    });
    new Gauge({
      name: 'wikiedge_upstream_queued',
      help: 'Requests waiting for a turn to the wiki now (at most WIKIEDGE_UPSTREAM_QUEUE_MAX).',
      registers,
      collect() {
        if (gate) this.set(gate.queued);
      },
    });
    const gauge = (name: string, help: string, pick: (s: TierStats) => number) => tierGauge(registers, opts.tierStats, name, help, pick);
    gauge('wikiedge_cache_entries', 'Entries held, by tier.', (s) => s.entries);
    gauge('wikiedge_cache_bytes', 'Bytes charged to the budget (entries, header sets, read entries, the entry table), by tier.', (s) => s.bytes);
    gauge('wikiedge_cache_budget_bytes', 'Byte budget, by tier.', (s) => s.budget);
    gauge(
      'wikiedge_cache_body_memory_bytes',
      'Memory allocated for stored bodies (slabs and large bodies), by tier: the live bodies plus the bounded slab waste.',
      (s) => s.slabBytes,
    );
  }

  method(m: string): string {
    return this.methods.has(m) ? m : 'other';
  }

  /** Count the connections of the public listener (accepted, and open now). */
  watchClientConnections(server: Server): void {
    const open = this.clientConnections;
    const accepted = this.clientConnectionsAccepted;
    server.on('connection', (socket: NodeJS.EventEmitter) => {
      accepted.inc();
      open.inc();
      socket.once('close', () => open.dec());
    });
  }

  purgeRequested(source: PurgeSource): void {
    this.purgeRequests.inc({ source });
  }

  apiError(header: string): void {
    for (const raw of header.split(',')) {
      const code = raw.trim();
      if (!code) continue;
      if (!this.errorCodes.has(code) && this.errorCodes.size >= MAX_ERROR_CODES) {
        this.apiErrors.inc({ code: 'other' });
        continue;
      }
      // MediaWiki's codes are short identifiers; anything else is folded.
      const label = /^[a-z0-9_-]{1,64}$/i.test(code) ? code : 'other';
      this.errorCodes.add(label);
      this.apiErrors.inc({ code: label });
    }
  }

  cookie(event: CookieEvent, cookie: CookieLabel): void {
    this.cookieNormalisations.inc({ event, cookie });
  }

  evicted(tier: Tier, reason: EvictionReason, count: number): void {
    this.evictions.inc({ tier, reason }, count);
  }

  upstreamFailure(kind: UpstreamFailureKind): void {
    this.upstreamFailures.inc({ kind });
  }
}

/**
 * Node.js and process metrics under the names prom-client, and every Node.js dashboard built on
 * it, use (process_cpu_seconds_total, nodejs_eventloop_lag_seconds, nodejs_heap_size_used_bytes,
 * ...), without the gateway's prefix. Except three gauges whose names end in `_total`, which
 * Prometheus reserves for counters (`promtool check metrics` refuses them): the same figures are
 * the sums of nodejs_active_handles, nodejs_active_requests and nodejs_active_resources by type.
 */
function collectNodeMetrics(registry: Registry): void {
  collectDefaultMetrics({ register: registry });
  for (const name of ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total']) registry.removeSingleMetric(name);
  eventLoopLag(registry);
}

/**
 * The event loop's lag: how late a timer set every LAG_RESOLUTION_MS fires, less that interval.
 * prom-client's nodejs_eventloop_lag_p50_seconds & co. are the interval itself (Node's
 * monitorEventLoopDelay records the time between firings): at its 10 ms resolution an idle loop
 * shows ~10 ms and a lag of a few ms hides under it. Here the resolution is subtracted, so an idle
 * loop shows ~0 and a 3 ms stall 3 ms; the figures are since the previous scrape.
 */
const LAG_RESOLUTION_MS = 10;
let lagMonitor: IntervalHistogram | undefined;

function eventLoopLag(registry: Registry): void {
  if (!lagMonitor) {
    lagMonitor = monitorEventLoopDelay({ resolution: LAG_RESOLUTION_MS });
    lagMonitor.enable();
  }
  const monitor = lagMonitor;
  const lag = (ns: number) => Math.max(0, ns / 1e9 - LAG_RESOLUTION_MS / 1e3);
  new Gauge({
    name: 'wikiedge_event_loop_lag_seconds',
    help: `How late the event loop ran a timer due every ${LAG_RESOLUTION_MS} ms, since the previous scrape, by stat (p50, p99, max): 0 when idle.`,
    labelNames: ['stat'] as const,
    // The worst worker is the one clients wait on.
    aggregator: 'max',
    registers: [registry],
    collect() {
      if (monitor.count === 0) return;
      this.set({ stat: 'p50' }, lag(monitor.percentile(50)));
      this.set({ stat: 'p99' }, lag(monitor.percentile(99)));
      this.set({ stat: 'max' }, lag(monitor.max));
      monitor.reset();
    },
  });
}
