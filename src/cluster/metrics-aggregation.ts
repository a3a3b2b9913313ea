/**
 * The cluster's /metrics: every worker's registry summed into one exposition (prom-client's
 * AggregatorRegistry), so that Prometheus scrapes one target per machine as it does per single
 * process.
 *
 * Counters must never go down, or Prometheus reads a reset (rate() and increase() then count the
 * whole value again). Two things would make them:
 * - a worker that exits takes its counts with it: its last counters and histograms are kept as
 *   the retired sums (its gauges go: what it held is gone). A worker that drains (a shutdown, or
 *   replaced by a reload) hands over its final figures first, so nothing it counted is lost; one
 *   that dies counts with what it gave at the last scrape;
 * - a worker that does not answer a scrape in time: it counts with the figures it gave last.
 *
 * Workers are asked through an `ask` function (ipc-asks.ts in the primary), so that the
 * arithmetic can be tested with literal figures.
 */
import type { Logger } from 'pino';
import { AggregatorRegistry, type Aggregator, type Registry } from 'prom-client';
import type { MetricsJson } from './messages.js';

/** How long a scrape waits for each worker's figures. */
export const METRICS_ASK_MS = 5_000;

/**
 * Metrics that must not be summed across workers (prom-client sums by default; its own default
 * metrics carry their aggregator already). The cache gauges are summed on purpose: bytes held and
 * budget both become the whole machine's, so their ratio still means what it does per worker.
 */
export const AGGREGATORS: Readonly<Record<string, Aggregator>> = {
  // 1 only if every worker has the tier up: one worker without Redis is already a problem.
  wikiedge_redis_up: 'min',
  // By shard, alike: 0 when any worker cannot reach the shard's master (config/prometheus's
  // WikiedgeRedisShardDown asks for == 0; summed, a shard lost by one of two workers read 1).
  wikiedge_redis_shard_up: 'min',
  // An info metric is 1 for each combination any worker saw, not the number of workers.
  wikiedge_upstream_info: 'max',
  // The probe's, on the primary's own registry: counted once today; never summed should a
  // worker ever report it too.
  wikiedge_upstream_up: 'min',
};

/**
 * The single process's generations (generations.ts) are not workers: they share the process's
 * one listener, so a reload hands every open connection to the next gateway
 * (wikiedge_client_connections counts it there too) while the old one still counts those it had
 * until it retires. The newest generation holds them all: the highest, not the sum.
 */
export const GENERATION_AGGREGATORS: Readonly<Record<string, Aggregator>> = {
  ...AGGREGATORS,
  wikiedge_client_connections: 'max',
};

export interface Exposition {
  readonly contentType: string;
  readonly body: string;
}

export class ClusterMetrics<W extends { readonly id: number }> {
  /** Each worker's last figures, kept in case it does not answer (or dies) next time. */
  private readonly last = new Map<W, MetricsJson>();
  /** Counters and histograms of workers that exited, so the sums never go down. */
  private retired: MetricsJson = [];
  /** Workers retire() was called for: their answers are no longer taken. */
  private readonly gone = new WeakSet<W>();
  /** Retirements run one after another, and a scrape waits for them. */
  private retiring: Promise<void> = Promise.resolve();

  constructor(
    private readonly ask: (worker: W) => Promise<MetricsJson>,
    private readonly log: Logger,
    /** The primary's own metrics (the upstream probe's: it runs once, in the primary). */
    private readonly own?: Registry,
    /** How each metric that must not be summed is folded (AGGREGATORS, or GENERATION_AGGREGATORS). */
    private readonly aggregators: Readonly<Record<string, Aggregator>> = AGGREGATORS,
  ) {}

  /** Workers that handed over their final figures: no answer of theirs replaces those. */
  private readonly final = new WeakSet<W>();
  /** Workers told to drain (replaced by a reload, a generation retiring): see `leaving`. */
  private readonly leavingWorkers = new WeakSet<W>();

  /**
   * The worker is draining: it closes its Redis connection and its probe before it exits, so its
   * up states (the `min` gauges: wikiedge_redis_up, wikiedge_redis_shard_up) say 0 for a while
   * although nothing is down. They no longer count; its counters, histograms and other gauges
   * still do (a scrape in that window read wikiedge_redis_up 0 at every reload, and
   * WikiedgeRedisFlapping could fire on a reload of several workers).
   */
  leaving(worker: W): void {
    this.leavingWorkers.add(worker);
  }

  /** A worker's final figures, handed over just before it exits (worker-side.ts): what retire() folds. */
  keepFinal(worker: W, figures: MetricsJson): void {
    this.final.add(worker);
    this.last.set(worker, figures);
  }

  /**
   * The worker exited: fold its last counters and histograms into the retired sums. From this call
   * on a scrape counts its figures exactly once: from `last` until the fold is done, from the
   * retired sums after (both switched in one step), and an answer of it that arrives late is
   * dropped (else a scrape in flight would count it twice, then once: a counter going down).
   */
  retire(worker: W): void {
    this.gone.add(worker);
    this.retiring = this.retiring.then(async () => {
      const last = this.last.get(worker);
      if (last) this.retired = await foldRetired(this.retired, last);
      this.last.delete(worker);
    });
  }

  /**
   * Ask every live worker for its figures; the sum of them and of the retired ones. Summed in one
   * order: the retired sums, then the workers oldest first (ids only grow, and the oldest retire
   * first). Float addition rounds monotonically, so with the same order a sum never goes down
   * while its terms do not, and folding the oldest worker into the retired sums computes the very
   * same first addition; in another order a sum can come out a last bit lower (seen:
   * nodejs_gc_duration_seconds_sum 0.08148100800067187 -> ...186 when a worker went from
   * listening to draining), which Prometheus reads as a reset.
   */
  async exposition(unordered: readonly W[]): Promise<Exposition> {
    const workers = [...unordered].sort((a, b) => a.id - b.id);
    await this.retiring;
    const answers = await Promise.allSettled(workers.map((w) => this.ask(w)));
    const own = this.own ? [await this.own.getMetricsAsJSON()] : [];
    // From here to the sum, no await: the retired sums and `last` are read in one state.
    const parts: MetricsJson[] = [this.retired, ...own];
    const states = (worker: W, figures: MetricsJson): MetricsJson =>
      this.gone.has(worker) || this.final.has(worker) || this.leavingWorkers.has(worker) ? figures.filter((m) => this.aggregators[m.name] !== 'min') : figures;
    answers.forEach((a, i) => {
      const worker = workers[i]!;
      if (this.gone.has(worker)) {
        // Retired meanwhile: counted from `last` until its fold is done, by the retired sums after.
        const figures = this.last.get(worker);
        if (figures) parts.push(states(worker, figures));
        return;
      }
      // An answer to a scrape asked before the worker's final figures can be read after them (its
      // continuation runs once both IPC messages are in): it is older, and would lose what the
      // worker counted in between (reload-counters-never-go-down, WIKIEDGE_WORKERS=2, lost 2 and 6).
      if (a.status === 'fulfilled') {
        if (!this.final.has(worker)) this.last.set(worker, a.value);
      } else this.log.warn({ worker: worker.id, err: String(a.reason) }, 'metrics: a worker did not answer, its last figures are used');
      // A worker that did not answer still counts with what it said last: sums must not drop.
      const figures = this.last.get(worker);
      if (figures) parts.push(states(worker, figures));
    });
    const registry = sumWorkers(parts, this.aggregators);
    return { contentType: registry.contentType, body: await registry.metrics() };
  }
}

/** The registry that sums the parts, each metric with its aggregator (`aggregators`, else its own, else sum). */
export function sumWorkers(
  parts: readonly MetricsJson[],
  aggregators: Readonly<Record<string, Aggregator>> = AGGREGATORS,
): ReturnType<typeof AggregatorRegistry.aggregate> {
  const withAggregators = parts.map((part) =>
    part.map((metric) => {
      const aggregator = aggregators[metric.name];
      return aggregator ? { ...metric, aggregator } : metric;
    }),
  );
  return AggregatorRegistry.aggregate(withAggregators);
}

/** The retired sums with an exited worker's last counters and histograms added. */
export async function foldRetired(retired: MetricsJson, last: MetricsJson): Promise<MetricsJson> {
  // prom-client's types say MetricType (an enum); at run time `type` is 'counter', 'gauge', …
  const cumulative = last.filter((m) => ['counter', 'histogram'].includes(m.type as unknown as string));
  return AggregatorRegistry.aggregate([retired, cumulative]).getMetricsAsJSON();
}
