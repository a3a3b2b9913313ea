/**
 * The single process's gateways, one generation after another, behind one listening socket that
 * never closes until shutdown: what lets WIKIEDGE_WORKERS=1 reload on SIGHUP without refusing a
 * connection (no new listener has to be bound), failing a request, or closing a connection (the
 * connections are the listener's, not a gateway's: a kept-alive client goes on, on the same
 * connection, with the new gateway).
 *
 * - The front: one node:http server, listening, with the settings the current gateway's own
 *   (never bound) server was given (apps/public-app.ts serverFactory: header size, timeouts).
 *   Each request goes to the gateway current when it arrives: the fresh-hit short cut
 *   (steps/fresh-hit.ts), else its Fastify router (`fastify.routing`), as the gateway's own
 *   server would.
 * - A reload (replace): build the next gateway from the new configuration (apps/app.ts build:
 *   its own upstream client, Redis connection, follower, metrics registry), hand it the old
 *   one's local tier while the old one serves (both tiers: same process, same identity secret),
 *   make it current (from the next request on), then retire the old one once what it still
 *   serves has been answered (within WIKIEDGE_SHUTDOWN_GRACE_MS) and fold its counters into the
 *   retired sums.
 * - Meanwhile the two are siblings: a purge applied by either (a PURGE, a logout, a write on its
 *   way through) is applied by the other (cache/purge.ts PurgeSiblings), and so is what either
 *   learns of whose sessions are whose.
 * - Metrics: /metrics is every live generation's registry summed with the retired ones' counters
 *   (metrics-aggregation.ts, as a cluster primary sums its workers), so no counter goes down;
 *   what is a state or a level of the process is not summed (GENERATION_AGGREGATORS: Redis up
 *   is the lowest of the live generations, open client connections the highest).
 *   What describes the process rather than a gateway (prom-client's process_* and nodejs_*, the
 *   event-loop lag) comes from one registry for the process's life (`processMetrics`), not from
 *   each generation: summed, the process's CPU would count twice.
 */
import { EventEmitter } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { setImmediate as nextTurn, setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { build, type BuiltPublic, ConnectionDrain } from '../apps/app.js';
import type { PurgeMessage, PurgeResult, PurgeSiblings } from '../cache/purge.js';
import { type Config, usesRedis } from '../config/config.js';
import { answerClientError } from '../steps/error-reply.js';
import { serveFreshHit, SHORT_PATH_METHODS } from '../steps/fresh-hit.js';
import type { Tier } from '../words/outcomes.js';
import type { ClusterMetrics } from './metrics-aggregation.js';
import { mayHandOver } from './reload.js';
import { redisTarget, sameRedis } from '../cache/redis/target.js';
import { HAND_OVER_LIMIT_MS } from './tier-hand-over.js';

/** One gateway and what the front keeps of it. */
export interface Generation {
  readonly id: number;
  readonly built: BuiltPublic;
  /** Stands for the listening server to this gateway's connection metrics (watchClientConnections). */
  readonly connections: EventEmitter;
  /** Requests it was handed and has not answered yet. */
  inFlight: number;
  /** Called when inFlight reaches 0, while it is being retired. */
  idle: (() => void) | undefined;
  /** A request it was handed is answered (or its client left): one function for all of them. */
  readonly answered: () => void;
  /** Its close, once begun: a shutdown during a reload closes the old gateway once, not twice. */
  closing?: Promise<void>;
  /**
   * Set by the reload that replaces it (replace): whether the purges it still owes its shared
   * tier go to the next gateway at its retirement (owedPurgesFollow), or stay with it.
   */
  handsOwedOn?: boolean;
  /** Set by the reload that replaces it: its local tier went to the next gateway (reload.ts mayHandOver), and so do its pending rebounds. */
  handedOver?: boolean;
}

/** The server settings a gateway's own server was given (apps/public-app.ts), applied to the front. */
const SERVER_SETTINGS = ['maxHeaderSize', 'keepAliveTimeout', 'headersTimeout', 'requestTimeout', 'timeout', 'maxRequestsPerSocket'] as const;

/** Entries handed over between two looks at the event loop: the front keeps serving meanwhile. */
const HAND_OVER_BATCH = 256;

/**
 * prom-client's default metrics (process_*, nodejs_*) and the event-loop lag (observe/metrics.ts
 * collectNodeMetrics): what every registry a gateway builds carries, and what is the process's.
 */
export function isProcessMetric(name: string): boolean {
  return !name.startsWith('wikiedge_') || name === 'wikiedge_event_loop_lag_seconds';
}

export interface HandOverCount {
  readonly offered: number;
  readonly taken: number;
  /** Why it stopped before the end (the time was up). */
  readonly stopped?: string;
}

export class Generations {
  readonly front: Server;
  /** Graceful close of the front (apps/app.ts): the same as a gateway's own listener's. */
  readonly drain: ConnectionDrain;
  private current!: Generation;
  private readonly draining = new Set<Generation>();
  /** The next gateway while it takes the old one's local tier over, before it serves. */
  private starting: Generation | undefined;
  private lastId = 0;

  private constructor(
    private readonly log: Logger,
    private readonly metrics: ClusterMetrics<Generation>,
    private readonly processMetrics: Registry,
  ) {
    this.front = createServer((req, res) => this.serve(req, res));
    // Requests Node's parser refuses (400, 431, 408) still say X-Cache and X-Request-Id, as in apps/public-app.ts.
    this.front.on('clientError', answerClientError);
    this.front.on('connection', (socket) => this.current.connections.emit('connection', socket));
    this.drain = new ConnectionDrain(this.front);
  }

  /** The first generation, and the front with its settings (not listening yet). */
  static async start(config: Config, log: Logger, metrics: ClusterMetrics<Generation>, processMetrics: Registry): Promise<Generations> {
    const g = new Generations(log, metrics, processMetrics);
    g.current = await g.generation(config);
    const own = g.current.built.publicApp.server;
    // connectionsCheckingInterval is read when the front starts listening: fixed from then on.
    takeSettings(g.front, own, [...SERVER_SETTINGS, 'connectionsCheckingInterval']);
    return g;
  }

  get gateway(): BuiltPublic {
    return this.current.built;
  }

  /** The generations that still drain, serve, or are about to serve: the ones a scrape asks and a purge reaches. */
  live(): Generation[] {
    return [...this.draining, this.current, ...(this.starting ? [this.starting] : [])];
  }

  /** An admin purge: the current gateway's (with Redis, everywhere), and the local tier of those still draining. */
  async purge(message: PurgeMessage): Promise<PurgeResult> {
    const gw = this.current.built.gateway;
    gw.metrics.purgeRequested('admin');
    // With Redis, what the other replicas removed is counted too (cache/purge.ts countReplicas).
    const result = await gw.storage.purge(message, { countReplicas: true });
    for (const g of this.live()) if (g !== this.current) g.built.gateway.storage.purgeHere(message);
    return result;
  }

  /**
   * A reload: the next gateway, built from `config`, takes the old one's local tier over while the
   * old one serves (a purge or a session learned meanwhile reaches both: live()), then serves from
   * the next request on; the old one is retired once it has answered what it holds. Throws (and
   * nothing changes) if the next gateway cannot be built.
   */
  async replace(config: Config): Promise<{ readonly handedOver: HandOverCount; readonly ms: number }> {
    const t0 = performance.now();
    const next = await this.generation(config);
    const old = this.current;
    old.handsOwedOn = owedPurgesFollow(old.built.gateway.config, config);
    this.starting = next;
    let handedOver: HandOverCount = { offered: 0, taken: 0 };
    try {
      // Not to a gateway of another wiki (reload.ts mayHandOver): its entries would be served as fresh.
      if (mayHandOver(this.log, old.built.gateway.config, config)) {
        old.handedOver = true;
        for (const [slot, user] of old.built.gateway.sessionUsers.entries()) next.built.gateway.sessionUsers.note(slot, user);
        handedOver = await handOver(old, next);
      }
    } finally {
      this.starting = undefined;
    }
    this.draining.add(old);
    this.current = next;
    takeSettings(this.front, next.built.publicApp.server);
    // Open connections count as the new gateway's now (wikiedge_client_connections), and are
    // counted once more in its wikiedge_client_connections_accepted_total.
    for (const socket of this.drain.sockets()) next.connections.emit('connection', socket);
    next.built.learnNamespaces();
    await this.retire(old, config.shutdownGraceMs);
    return { handedOver, ms: Math.round(performance.now() - t0) };
  }

  /**
   * Shutdown: /readyz is 503 already (the caller's state); after WIKIEDGE_SHUTDOWN_DRAIN_MS the
   * front stops accepting, connections are closed as they go quiet (within
   * WIKIEDGE_SHUTDOWN_GRACE_MS), then every gateway is closed.
   */
  async close(config: Config): Promise<void> {
    if (config.shutdownDrainMs > 0) {
      this.drain.answerWithConnectionClose();
      this.log.info({ drainMs: config.shutdownDrainMs }, 'shutting down: /readyz is 503, still serving until the drain delay is over');
      await sleep(config.shutdownDrainMs);
    }
    const closed = new Promise<void>((resolve) => this.front.once('close', () => resolve()));
    await this.drain.closeListener();
    const forceClose = setTimeout(() => {
      this.log.warn({ graceMs: config.shutdownGraceMs }, 'shutdown grace period over: closing remaining connections');
      this.front.closeAllConnections();
    }, config.shutdownGraceMs);
    forceClose.unref();
    try {
      await closed;
    } finally {
      clearTimeout(forceClose);
      this.drain.stop();
    }
    await Promise.all(this.live().map((g) => closeOnce(g)));
  }

  private serve(req: IncomingMessage, res: ServerResponse): void {
    const g = this.current;
    g.inFlight++;
    // `on`, not `once`: a response emits 'close' once (node:http emitCloseNT), and `once` would
    // wrap a new closure for every request (~0.2 µs per request, hits included: bench/micro-miss.mjs).
    res.on('close', g.answered);
    if (!SHORT_PATH_METHODS.has(req.method) || !this.front.listening || !serveFreshHit(g.built.gateway, req, res)) g.built.publicApp.routing(req, res);
  }

  private async generation(config: Config): Promise<Generation> {
    const id = ++this.lastId;
    // The process's metrics are the first generation's (collected once: gateway.ts processMetrics).
    const built = await build(config, this.log, { siblings: this.siblingsOf(id), processMetrics: id === 1 }, { admin: false });
    const registry = built.gateway.registry;
    for (const { name } of registry.getMetricsAsArray()) {
      if (!isProcessMetric(name)) continue;
      const metric = registry.getSingleMetric(name);
      if (id === 1 && metric) this.processMetrics.registerMetric(metric);
      registry.removeSingleMetric(name);
    }
    const connections = new EventEmitter();
    built.gateway.metrics.watchClientConnections(connections as Server);
    const g: Generation = {
      id,
      built,
      connections,
      inFlight: 0,
      idle: undefined,
      answered: () => {
        if (--g.inFlight === 0) g.idle?.();
      },
    };
    return g;
  }

  /** What generation `id` tells the others: the purges it applied, whose sessions it learned. */
  private siblingsOf(id: number): PurgeSiblings {
    const others = () => this.live().filter((g) => g.id !== id);
    return {
      publish: (message) => {
        for (const g of others()) g.built.gateway.storage.purgeHere(message);
      },
      sessionUser: (slot, user) => {
        for (const g of others()) g.built.gateway.sessionUsers.note(slot, user);
      },
    };
  }

  /** Wait until `old` has answered what it was handed (at most graceMs), close it, keep its counts. */
  private async retire(old: Generation, graceMs: number): Promise<void> {
    if (old.inFlight > 0) {
      const idle = new Promise<void>((resolve) => (old.idle = resolve));
      const late = await Promise.race([idle.then(() => false), sleep(graceMs, true, { ref: false })]);
      if (late) this.log.warn({ inFlight: old.inFlight, graceMs }, 'reload: the old gateway still had requests in flight past the grace period');
    }
    // Its rebounds not made yet (invalidation/signals.ts) the current gateway makes when they
    // are due, on the entries it took over: made by the old one at its close, they came early
    // and reached only its own tiers, and an answer read before the wiki's post-send updates,
    // handed over, was kept.
    if (old.handedOver) this.current.built.gateway.changes.adoptRebounds(old.built.gateway.changes.takeRebounds());
    // What it still owes its shared tier (purges Redis could not take) the current gateway carries
    // once Redis answers (cache/storage.ts takeOwed), when the purges are for the keyspace it uses
    // (owedPurgesFollow), and so what it comes to owe later and its close cannot carry (its
    // follower, purge confirmations and channel run until its close; a request past the grace
    // period), as they are: a stalled gap another follower vouched past is still dropped
    // (test/in-process/owed-purges-follow-the-redis-key-prefix-at-a-reload.test.ts). Else they
    // stay with the old gateway, whose close tries them once more against its own shared tier and
    // logs how many it drops (cache/tiered-storage.ts close).
    if (old.handsOwedOn) {
      const heir = this.current.built.gateway.storage;
      heir.adoptOwed(await old.built.gateway.storage.takeOwed());
      old.built.gateway.storage.handOwedTo((owed) => heir.adoptOwed(owed));
    }
    // Its Redis connection and probe close now: its up states no longer speak for the process.
    this.metrics.leaving(old);
    await closeOnce(old);
    const final = await old.built.gateway.registry.getMetricsAsJSON();
    // In one step: from now on a scrape counts it in the retired sums (metrics-aggregation.ts).
    this.metrics.keepFinal(old, final);
    this.metrics.retire(old);
    this.draining.delete(old);
    old.built.gateway.registry.clear();
  }
}

/**
 * Whether the purges a gateway of `before` still owes its shared tier are the next gateway's (of
 * `after`) to carry: when it shares the same Redis (cache/redis/target.ts sameRedis: another
 * server or database is another keyspace) under the same WIKIEDGE_REDIS_KEY_PREFIX. Under another
 * prefix they would remove entries of a keyspace they were never meant for (an owed gap, a full
 * purge, would expire all of it), and the old keyspace, which other replicas may still read,
 * would never get them; without Redis, nothing would carry them.
 *
 * Not mayHandOver (reload.ts), which refuses the local tier for any WIKI_KEYS change: under the
 * same prefix the Redis tier still holds the entries the purges were for, and the next gateway
 * reads them (as mayHandOver's warning says), so dropping the purges would serve what they
 * removed; a purge carried needlessly only costs a miss.
 * test/in-process/owed-purges-follow-the-redis-key-prefix-at-a-reload.test.ts.
 */
export function owedPurgesFollow(before: Config, after: Config): boolean {
  return usesRedis(after) && before.redisKeyPrefix === after.redisKeyPrefix && sameRedis(redisTarget(before), redisTarget(after));
}

/** Node reads these from the server per connection or request (maxHeaderSize too, though untyped). */
function closeOnce(g: Generation): Promise<void> {
  g.closing ??= g.built.retire();
  return g.closing;
}

function takeSettings(front: Server, from: Server, keys: readonly string[] = SERVER_SETTINGS): void {
  const [to, source] = [front as unknown as Record<string, unknown>, from as unknown as Record<string, unknown>];
  for (const key of keys) to[key] = source[key];
}

/** The old gateway's fresh entries, oldest first, adopted by the next one (cache/store.ts adopt). */
async function handOver(old: Generation, next: Generation): Promise<HandOverCount> {
  const t0 = performance.now();
  let offered = 0;
  let taken = 0;
  for (const tier of ['shared', 'session'] as const satisfies readonly Tier[]) {
    for (const [key, entry] of old.built.gateway.store.oldestFirst(tier)) {
      offered++;
      if (next.built.gateway.store.adopt(tier, key, entry)) taken++;
      if (offered % HAND_OVER_BATCH !== 0) continue;
      await nextTurn();
      if (performance.now() - t0 > HAND_OVER_LIMIT_MS) return { offered, taken, stopped: `not done within ${HAND_OVER_LIMIT_MS} ms` };
    }
  }
  return { offered, taken };
}
