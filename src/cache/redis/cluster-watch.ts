/**
 * What a Redis Cluster looks like from this process, for the metrics: each shard's master
 * answering or not, errors by shard, the slot map read again, and a shard whose master changed (a
 * failover). Shards are named by an index, in the order of the first slot each owns: bounded
 * (MAX_SHARD_LABELS, then 'other'), and the same after a failover, since the promoted replica
 * takes its master's slots.
 *
 * It also notices a master that may have lost acknowledged writes, and hands that on as a gap
 * (`onDataLost`: nothing stored before now is vouched for, invalidations.ts expire). An entry's
 * index sets live on other masters than the entry (cluster-writes.ts): when a master loses them,
 * the entries they named, on the other masters, can no longer be found by any purge, logout or
 * invalidation, and would be served to every replica until their TTL. Two ways to lose them:
 *   - 'restart': the master at an address answers with another run_id (Redis draws a new one at
 *     every start: src/server.c initServerConfig, getRandomHexChars(server.runid, ...)). Without
 *     persistence it came back empty, and if that was within cluster-node-timeout no failover
 *     happened: its replica resynchronised from it, empty too
 *     (test/in-process/redis-cluster-master-restarting-empty-is-a-gap.test.ts);
 *   - 'failover': another node is a shard's master. Replication is asynchronous, so the
 *     promoted replica may lack the last writes its master acknowledged
 *     (https://redis.io/docs/latest/operate/oss_and_stack/management/scaling/#write-safety;
 *     test/in-process/redis-cluster-failover-that-lost-writes-is-a-gap.test.ts).
 * A master restarted with its data (RDB, AOF) is taken as a loss too: a refresh of everything at
 * its next use is the cost, rare and bounded, against answers no purge removes.
 */
import type { Cluster, Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { RedisMetrics } from '../../observe/metrics.js';
import type { DataLossGaps } from './data-loss-gaps.js';

export const MAX_SHARD_LABELS = 16;
/** How often every master is asked for its run_id (INFO server), which is also its PING. */
const WATCH_MS = 5_000;

/**
 * How index sets may have been lost (above); the `cause` label. 'store': a store failed part-way
 * and its entry could not be unlinked (cluster-writes.ts), so no set may name it. The one primary
 * of a URL or of Sentinels loses writes the same two ways (connection.ts).
 */
export type DataLoss = 'restart' | 'failover' | 'store';

/** The run_id of an `INFO server` answer, or undefined. Pure. */
export function runIdOf(info: string): string | undefined {
  return /^run_id:([0-9a-f]+)\s*$/m.exec(info)?.[1];
}

/** A master now answering with another run_id than the one last seen at its address restarted. Pure. */
export function restarted(seen: string | undefined, now: string | undefined): boolean {
  return seen !== undefined && now !== undefined && seen !== now;
}

/** The master of every shard, by shard index (the order of the first slot each owns). Pure. */
export function shardMasters(slots: readonly (readonly string[] | undefined)[]): string[] {
  const masters: string[] = [];
  for (const owners of slots) {
    const master = owners?.[0];
    if (master !== undefined && !masters.includes(master)) masters.push(master);
  }
  return masters;
}

export const shardLabel = (index: number): string => (index >= 0 && index < MAX_SHARD_LABELS ? String(index) : 'other');

export class ClusterWatch {
  private masters: string[] = [];
  /** The run_id last seen at each master's address. */
  private readonly runIds = new Map<string, string>();
  private readonly timer: NodeJS.Timeout;

  /** `gaps`: where a loss is handed on, to be recorded in every replica's invalidations. */
  constructor(
    private readonly cluster: Cluster,
    private readonly metrics: RedisMetrics,
    private readonly log: Logger,
    private readonly timeoutMs: number,
    private readonly gaps: DataLossGaps,
  ) {
    cluster.on('refresh', () => {
      metrics.topologyRefreshes.inc();
      this.relabel();
    });
    cluster.on('node error', (_err: unknown, key: string) => metrics.shardErrors.inc({ shard: this.labelOf(key) }));
    this.timer = setInterval(() => void this.ping(), WATCH_MS);
    this.timer.unref();
  }

  private labelOf(nodeKey: string): string {
    return shardLabel(this.masters.indexOf(nodeKey));
  }

  /** The slot map was read: a shard whose master is another node now has failed over. */
  private relabel(): void {
    const now = shardMasters(this.cluster.slots);
    now.forEach((master, i) => {
      const was = this.masters[i];
      if (was !== undefined && was !== master) {
        this.metrics.failovers.inc();
        this.log.warn({ redis: 'failover', shard: shardLabel(i), was, now: master }, 'redis cluster shard has a new master: the tier goes on with it');
        this.lost('failover', i, { was, now: master });
      }
    });
    if (now.length > 0) this.masters = now;
  }

  /** Index sets may have been lost: logged, counted, and a gap recorded. */
  lost(cause: DataLoss, shard?: number, detail: Record<string, string> = {}): void {
    this.metrics.shardDataLost.inc({ cause });
    this.log.warn(
      { redis: 'data-lost', cause, ...(shard !== undefined && { shard: shardLabel(shard) }), ...detail },
      'a redis cluster master may have lost index sets: nothing cached before now is vouched for, it is refreshed at next use on every replica',
    );
    this.gaps.owe();
  }

  private async ping(): Promise<void> {
    if (this.masters.length === 0) this.relabel();
    const nodes = new Map<string, Redis>();
    for (const node of this.cluster.nodes('master')) nodes.set(`${node.options.host}:${node.options.port}`, node);
    await Promise.all(
      this.masters.map(async (key, i) => {
        const node = nodes.get(key);
        const runId =
          node &&
          (await Promise.race([
            node.info('server').then(runIdOf, () => undefined),
            new Promise<undefined>((r) => setTimeout(() => r(undefined), Math.max(1_000, this.timeoutMs * 20)).unref()),
          ]));
        this.metrics.shardUp.set({ shard: shardLabel(i) }, runId !== undefined ? 1 : 0);
        if (runId === undefined) return;
        const seen = this.runIds.get(key);
        this.runIds.set(key, runId);
        if (restarted(seen, runId)) this.lost('restart', i, { node: key });
      }),
    );
  }

  /**
   * Ask every master now, once the tier is up (connection.ts markUp). Not at the cluster's
   * 'ready': INFO sent to every node then, beside the tier's first probe, kept the tier from
   * coming up within the 2 s a gateway waits at start (test/integration/redis-replicas.test.ts,
   * its "starts with the tier up on both replicas" on a Redis Cluster).
   */
  look(): void {
    setImmediate(() => void this.ping());
  }

  close(): void {
    clearInterval(this.timer);
  }
}
