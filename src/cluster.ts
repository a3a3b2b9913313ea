/**
 * WIKIEDGE_WORKERS > 1: a node:cluster primary and its workers.
 *
 * - Each worker runs the whole gateway (app.ts's build() without the admin listener) on the shared
 *   public port, with its own local tier. The primary runs no gateway.
 * - The primary owns the admin listener (admin.ts's routes, the same as a single process):
 *   /metrics is the workers' registries aggregated (prom-client's AggregatorRegistry), /readyz
 *   asks a worker to probe the wiki, POST /purge reaches every worker over IPC (with Redis, one
 *   worker purges Redis; the others only their local tier).
 * - A worker that dies is restarted, after a delay that doubles while it keeps dying soon after
 *   its start (RESTART_BASE_MS up to RESTART_MAX_MS).
 * - SIGTERM/SIGINT: the primary's /readyz turns 503, every worker gets SIGTERM and drains as a
 *   single process does (app.ts), and the primary exits 0 once all of them have exited 0.
 *
 * Connections are accepted by the workers themselves from the shared listening socket
 * (SCHED_NONE: the kernel picks the worker), not dealt round-robin by the primary (SCHED_RR,
 * Node's default on Linux). Measured here with 2 workers (2 cores, wrk -t2 unpinned):
 * - keep-alive hits (wrk -c100): the same rate within noise (20.2k vs 19.5k, 17.7k vs 16.9k
 *   req/s): a kept-alive connection is handed over once, so the primary's hop costs nothing
 *   per request, and the split of connections was as uneven with both (43–63 % per worker);
 * - a connection per request (wrk -c50 -H 'Connection: close'): 3.2k req/s against 1.2k, as
 *   round-robin accepts every connection in the primary and passes it to a worker over IPC;
 * - a worker killed while the primary is handing it a connection: with round-robin that
 *   connection is never answered nor closed (Node's cluster waits for the dead worker's ack),
 *   so its client hangs until its own timeout; with the kernel's queue the other worker takes
 *   what the dead one did not accept.
 * With many workers the kernel's choice can be lopsided (Node's cluster docs);
 * NODE_CLUSTER_SCHED_POLICY=rr still selects round-robin.
 */
import cluster, { type Worker } from 'node:cluster';
import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { AggregatorRegistry, type Aggregator, type Registry } from 'prom-client';
import { type AdminBackend, type AdminPurgeResult, type Readiness, buildAdmin, probeWiki } from './admin.js';
import type { BuiltPublic } from './app.js';
import { type PurgeMessage, type PurgeResult, type PurgeSiblings, applyLocalPurge, purgeEverywhere } from './cache/purge.js';
import { type Config, loadConfig } from './config.js';

/** First restart delay of a worker that died; doubled for each death soon after a start. */
const RESTART_BASE_MS = 100;
const RESTART_MAX_MS = 10_000;
/** A worker that lived this long before dying is restarted after RESTART_BASE_MS again. */
const STABLE_AFTER_MS = 30_000;
/** On shutdown, how long past drain + grace the primary waits before it kills what is left. */
const SHUTDOWN_MARGIN_MS = 5_000;
const METRICS_ASK_MS = 5_000;
const PURGE_ASK_MS = 30_000;

/**
 * Metrics that must not be summed across workers (prom-client sums by default; its own default
 * metrics carry their aggregator already). The cache gauges are summed on purpose: bytes held and
 * budget both become the whole machine's, so their ratio still means what it does per worker.
 */
const AGGREGATORS: Readonly<Record<string, Aggregator>> = {
  // 1 only if every worker has the tier up: one worker without Redis is already a problem.
  wikiedge_redis_up: 'min',
  // An info metric is 1 for each combination any worker saw, not the number of workers.
  wikiedge_upstream_info: 'max',
};

/** What one registry exports (Registry.getMetricsAsJSON()), as it travels over IPC. */
type MetricsJson = Awaited<ReturnType<Registry['getMetricsAsJSON']>>;

// ------------------------------------------------------------------------------ IPC messages
type Ask = { op: 'metrics' } | { op: 'ready' } | { op: 'purge'; message: PurgeMessage; everywhere: boolean };
interface AskMessage {
  wikiedge: 'ask';
  id: number;
  ask: Ask;
}
interface AnswerMessage {
  wikiedge: 'answer';
  id: number;
  value?: unknown;
  error?: string;
}

/** From a worker: a purge it applied locally, for the primary to hand to every other worker. */
interface SiblingsPurgeMessage {
  wikiedge: 'siblings-purge';
  message: PurgeMessage;
}

function isSiblingsPurge(m: unknown): m is SiblingsPurgeMessage {
  return typeof m === 'object' && m !== null && (m as SiblingsPurgeMessage).wikiedge === 'siblings-purge';
}
function isAsk(m: unknown): m is AskMessage {
  return typeof m === 'object' && m !== null && (m as AskMessage).wikiedge === 'ask';
}
function isAnswer(m: unknown): m is AnswerMessage {
  return typeof m === 'object' && m !== null && (m as AnswerMessage).wikiedge === 'answer';
}

// ------------------------------------------------------------------------------ worker side
/**
 * In a worker: its purges (PURGE, logouts, a session holder's writes) reach the other workers
 * through the primary. Used only without Redis, whose channel already reaches every worker.
 */
export function siblingsOverIpc(): PurgeSiblings {
  return {
    publish: (message) => {
      process.send?.({ wikiedge: 'siblings-purge', message } satisfies SiblingsPurgeMessage);
    },
  };
}

/** In a worker: answer the primary's questions about this worker's gateway. */
export function answerPrimary(built: BuiltPublic): void {
  const gw = built.gateway;
  const answer = async (ask: Ask): Promise<unknown> => {
    switch (ask.op) {
      case 'metrics':
        return gw.registry.getMetricsAsJSON();
      case 'ready':
        return probeWiki(gw);
      case 'purge':
        return ask.everywhere
          ? purgeEverywhere(gw.store, gw.redis, ask.message)
          : ({ purged: applyLocalPurge(gw.store, ask.message) } satisfies PurgeResult);
    }
  };
  process.on('message', (m: unknown) => {
    if (!isAsk(m)) return;
    answer(m.ask).then(
      (value) => process.send?.({ wikiedge: 'answer', id: m.id, value } satisfies AnswerMessage),
      (err: unknown) => process.send?.({ wikiedge: 'answer', id: m.id, error: String(err) } satisfies AnswerMessage),
    );
  });
}

// ------------------------------------------------------------------------------ primary
interface Slot {
  readonly index: number;
  worker: Worker | undefined;
  startedAt: number;
  listening: boolean;
  /** Deaths in a row, each within STABLE_AFTER_MS of its start. */
  quickDeaths: number;
  restart: NodeJS.Timeout | undefined;
}

/** In the primary: fork the workers, serve the admin listener, restart and stop the workers. */
export async function runPrimary(config: Config, log: Logger): Promise<void> {
  if (!process.env['NODE_CLUSTER_SCHED_POLICY']) cluster.schedulingPolicy = cluster.SCHED_NONE;
  // Structured clone over IPC: metric values may be NaN or Infinity, which JSON would turn into null.
  cluster.setupPrimary({ serialization: 'advanced' });
  const primary = new Primary(config, log);
  await primary.start();
}

class Primary implements AdminBackend {
  shuttingDown = false;
  /** Set once every worker has listened: from then on a worker that dies is restarted. */
  private started = false;
  private readonly slots: Slot[];
  private readonly env: Record<string, string>;
  private readonly pending = new Map<number, { worker: Worker; settle: (a: AnswerMessage) => void }>();
  private nextAsk = 1;
  /** Each worker's last metrics answer, kept in case it does not answer (or dies) next time. */
  private readonly lastMetrics = new Map<Worker, MetricsJson>();
  /** Counters and histograms of workers that exited, so the sums never go down. */
  private retired: MetricsJson = [];
  /** Retirements run one after another, and a scrape waits for them. */
  private retiring: Promise<void> = Promise.resolve();
  private readonly admin: FastifyInstance;

  constructor(
    private readonly config: Config,
    private readonly log: Logger,
  ) {
    this.slots = Array.from({ length: config.workers }, (_, index) => ({
      index,
      worker: undefined,
      startedAt: 0,
      listening: false,
      quickDeaths: 0,
      restart: undefined,
    }));
    // Workers hold the caches: give them the malloc setting the store's slabs rely on
    // (cache/arena.ts), whoever started the primary.
    this.env = { MALLOC_MMAP_THRESHOLD_: process.env.MALLOC_MMAP_THRESHOLD_ ?? SLAB_FRIENDLY_MMAP_THRESHOLD, ...workerSecret(config) };
    this.admin = buildAdmin(log, this, { token: config.adminToken, apiPath: config.apiPath });
  }

  async start(): Promise<void> {
    process.on('SIGTERM', () => this.shutdown('SIGTERM'));
    process.on('SIGINT', () => this.shutdown('SIGINT'));
    // Every worker must be listening before the admin listener says so; one that dies first
    // means the configuration or the port is wrong: stop, as a single process would.
    await Promise.all(this.slots.map((slot) => this.fork(slot)));
    this.started = true;
    await this.admin.listen({ host: this.config.adminHost, port: this.config.adminPort });
    this.log.info(
      { workers: this.slots.length, public: `${this.config.host}:${this.config.port}`, admin: this.admin.server.address() },
      'wikiedge listening',
    );
  }

  /** Fork the slot's worker; resolves once it listens. */
  private fork(slot: Slot): Promise<void> {
    const worker = cluster.fork(this.env);
    slot.worker = worker;
    slot.startedAt = Date.now();
    slot.listening = false;
    return new Promise<void>((resolve) => {
      worker.on('message', (m: unknown) => {
        if (isAnswer(m)) this.pending.get(m.id)?.settle(m);
        else if (isSiblingsPurge(m)) this.relayPurge(worker, m.message);
      });
      worker.once('listening', () => {
        slot.listening = true;
        this.log.info({ worker: worker.id, pid: worker.process.pid }, 'worker listening');
        resolve();
      });
      worker.once('exit', (code, signal) => {
        if (!this.started && !this.shuttingDown) {
          process.stderr.write(`wikiedge: worker ${worker.id} exited (code ${code}, signal ${signal}) before listening\n`);
          this.stopAll('SIGTERM');
          process.exit(1);
        }
        this.exited(slot, worker, code, signal);
      });
    });
  }

  private exited(slot: Slot, worker: Worker, code: number | null, signal: string | null): void {
    slot.listening = false;
    slot.worker = undefined;
    for (const [id, p] of this.pending) {
      if (p.worker === worker) p.settle({ wikiedge: 'answer', id, error: 'worker exited' });
    }
    this.retiring = this.retiring.then(() => this.retire(worker));
    if (this.shuttingDown) {
      this.log.info({ worker: worker.id, pid: worker.process.pid, code, signal }, 'worker exited');
      return;
    }
    const lived = Date.now() - slot.startedAt;
    slot.quickDeaths = lived < STABLE_AFTER_MS ? slot.quickDeaths + 1 : 0;
    const delay = Math.min(RESTART_MAX_MS, RESTART_BASE_MS * 2 ** Math.max(0, slot.quickDeaths - 1));
    this.log.error(
      { worker: worker.id, pid: worker.process.pid, code, signal, livedMs: lived, restartInMs: delay },
      'worker died: restarting it',
    );
    slot.restart = setTimeout(() => {
      slot.restart = undefined;
      void this.fork(slot);
    }, delay);
  }

  /** Fold an exited worker's last counters and histograms into the retired sums. */
  private async retire(worker: Worker): Promise<void> {
    const last = this.lastMetrics.get(worker);
    this.lastMetrics.delete(worker);
    if (!last) return;
    // prom-client's types say MetricType (an enum); at run time `type` is 'counter', 'gauge', …
    const cumulative = last.filter((m) => ['counter', 'histogram'].includes(m.type as unknown as string));
    this.retired = await AggregatorRegistry.aggregate([this.retired, cumulative]).getMetricsAsJSON();
  }

  /** A worker's own purge, for every other worker's local tier (it has applied it already). */
  private relayPurge(from: Worker, message: PurgeMessage): void {
    for (const worker of this.listeningWorkers()) {
      if (worker === from) continue;
      this.ask(worker, { op: 'purge', message, everywhere: false }, PURGE_ASK_MS).catch((err: unknown) =>
        this.log.warn({ worker: worker.id, err: String(err) }, 'purge from a sibling: a worker did not answer'),
      );
    }
  }

  private listeningWorkers(): Worker[] {
    return this.slots.flatMap((s) => (s.listening && s.worker ? [s.worker] : []));
  }

  private ask(worker: Worker, ask: Ask, timeoutMs: number): Promise<unknown> {
    const id = this.nextAsk++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => settle({ wikiedge: 'answer', id, error: `no answer within ${timeoutMs} ms` }), timeoutMs);
      const settle = (a: AnswerMessage) => {
        clearTimeout(timer);
        this.pending.delete(id);
        if (a.error !== undefined) reject(new Error(`worker ${worker.id}: ${a.error}`));
        else resolve(a.value);
      };
      this.pending.set(id, { worker, settle });
      worker.send({ wikiedge: 'ask', id, ask } satisfies AskMessage, (err: Error | null) => {
        if (err) settle({ wikiedge: 'answer', id, error: err.message });
      });
    });
  }

  // ---------------------------------------------------------------- AdminBackend
  async readiness(): Promise<Readiness> {
    const worker = this.listeningWorkers()[0];
    if (!worker) return { ready: false, reason: 'no-worker-listening' };
    try {
      return (await this.ask(worker, { op: 'ready' }, this.config.readyTimeoutMs + 1_000)) as Readiness;
    } catch (err) {
      return { ready: false, error: (err as Error).message };
    }
  }

  async metrics(): Promise<{ contentType: string; body: string }> {
    await this.retiring;
    const workers = this.listeningWorkers();
    const answers = await Promise.allSettled(workers.map((w) => this.ask(w, { op: 'metrics' }, METRICS_ASK_MS)));
    const parts: MetricsJson[] = [this.retired];
    answers.forEach((a, i) => {
      const worker = workers[i]!;
      if (a.status === 'fulfilled') this.lastMetrics.set(worker, a.value as MetricsJson);
      else this.log.warn({ worker: worker.id, err: String(a.reason) }, 'metrics: a worker did not answer, its last figures are used');
      // A worker that did not answer still counts with what it said last: sums must not drop.
      const figures = this.lastMetrics.get(worker);
      if (figures) parts.push(figures);
    });
    for (const part of parts) {
      for (const metric of part) {
        const aggregator = AGGREGATORS[metric.name];
        if (aggregator) metric.aggregator = aggregator;
      }
    }
    const registry = AggregatorRegistry.aggregate(parts);
    return { contentType: registry.contentType, body: await registry.metrics() };
  }

  async purge(message: PurgeMessage): Promise<AdminPurgeResult> {
    const [leader, ...others] = this.listeningWorkers();
    let purged = 0;
    let answered = 0;
    let redisPurged: number | null | undefined = this.config.redisUrl ? null : undefined;
    // One worker purges Redis (and publishes on the channel) first, so that no worker refills
    // its local tier from Redis after its own purge; then every other worker's local tier.
    if (leader) {
      try {
        const r = (await this.ask(leader, { op: 'purge', message, everywhere: true }, PURGE_ASK_MS)) as PurgeResult;
        purged += r.purged;
        redisPurged = r.redisPurged;
        answered++;
      } catch (err) {
        this.log.warn({ worker: leader.id, err: String(err) }, 'purge: a worker did not answer');
      }
    }
    const rest = await Promise.allSettled(
      others.map((w) => this.ask(w, { op: 'purge', message, everywhere: false }, PURGE_ASK_MS)),
    );
    rest.forEach((r, i) => {
      if (r.status === 'fulfilled') {
        purged += (r.value as PurgeResult).purged;
        answered++;
      } else {
        this.log.warn({ worker: others[i]!.id, err: String(r.reason) }, 'purge: a worker did not answer');
      }
    });
    const asked = others.length + (leader ? 1 : 0);
    return {
      purged,
      ...(redisPurged !== undefined && { redisPurged }),
      workers: answered,
      missedWorkers: asked - answered,
    };
  }

  // ---------------------------------------------------------------- shutdown
  private shutdown(signal: string): void {
    if (this.shuttingDown) return;
    this.shuttingDown = true;
    this.log.info({ signal }, 'shutting down: /readyz is 503, every worker drains');
    for (const slot of this.slots) clearTimeout(slot.restart);
    const workers = this.slots.flatMap((s) => (s.worker ? [s.worker] : []));
    // Clean: exited 0 after draining, or ended by this SIGTERM while still starting (before its
    // handler was installed: it had no request yet).
    const exits = workers.map(
      (w) => new Promise<boolean>((resolve) => {
        if (w.isDead()) resolve(w.process.exitCode === 0);
        else w.once('exit', (code, signal) => resolve(code === 0 || signal === 'SIGTERM'));
      }),
    );
    this.stopAll('SIGTERM');
    const limitMs = this.config.shutdownDrainMs + this.config.shutdownGraceMs + SHUTDOWN_MARGIN_MS;
    const overdue = setTimeout(() => {
      this.log.error({ limitMs }, 'shutdown: workers still running past drain + grace: killing them');
      this.stopAll('SIGKILL');
    }, limitMs);
    Promise.all(exits).then(async (clean) => {
      clearTimeout(overdue);
      await this.admin.close();
      const ok = clean.every(Boolean);
      if (ok) this.log.info('shutdown complete');
      else this.log.error('shutdown: a worker did not exit cleanly');
      this.log.flush?.();
      process.exit(ok ? 0 : 1);
    }, (err: unknown) => {
      this.log.error({ err }, 'shutdown failed');
      process.exit(1);
    });
  }

  private stopAll(signal: NodeJS.Signals): void {
    for (const slot of this.slots) {
      const w = slot.worker;
      if (w && !w.isDead()) w.process.kill(signal);
    }
  }
}

/**
 * glibc raises its mmap threshold each time an mmapped block is freed, after which the store's
 * 128 KiB-1 MiB slabs come from the heap and a freed slab's memory is cut up by small
 * allocations instead of going back to the OS (a 100 MB store fed 400,000 1 KiB answers: RSS
 * 142 or 193 MB from run to run without, 127-128 MB every time with). A fixed threshold keeps
 * every slab a mapping of its own. Not lower: Node reads sockets into 64 KiB buffers, which
 * would then each be a mapping too.
 */
const SLAB_FRIENDLY_MMAP_THRESHOLD = '131072';

/**
 * Workers must share the key of the session slots' HMAC (a session's entries, in Redis and in
 * purge messages, are keyed by it). Without a configured WIKIEDGE_IDENTITY_SECRET each process
 * would draw its own at start, so the primary draws one and hands it to every worker. (A
 * configured secret loads the same twice; a drawn one never does.)
 */
function workerSecret(config: Config): Record<string, string> {
  if (loadConfig().identitySecret.equals(config.identitySecret)) return {};
  return { WIKIEDGE_IDENTITY_SECRET: randomBytes(32).toString('base64url') };
}
