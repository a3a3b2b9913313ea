/**
 * What a Redis Cluster looks like from this process, for the metrics: each shard's master
 * answering or not, errors by shard, the slot map read again, and a shard whose master changed (a
 * failover). Shards are named by an index, in the order of the first slot each owns: bounded
 * (MAX_SHARD_LABELS, then 'other'), and the same after a failover, since the promoted replica
 * takes its master's slots.
 */
import type { Cluster, Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { RedisMetrics } from '../../observe/metrics.js';

export const MAX_SHARD_LABELS = 16;
/** How often every master is asked for PING. */
const WATCH_MS = 5_000;

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
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly cluster: Cluster,
    private readonly metrics: RedisMetrics,
    private readonly log: Logger,
    private readonly timeoutMs: number,
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
      }
    });
    if (now.length > 0) this.masters = now;
  }

  private async ping(): Promise<void> {
    if (this.masters.length === 0) this.relabel();
    const nodes = new Map<string, Redis>();
    for (const node of this.cluster.nodes('master')) nodes.set(`${node.options.host}:${node.options.port}`, node);
    await Promise.all(
      this.masters.map(async (key, i) => {
        const node = nodes.get(key);
        const ok =
          node !== undefined &&
          (await Promise.race([
            node.ping().then(
              () => true,
              () => false,
            ),
            new Promise<boolean>((r) => setTimeout(() => r(false), Math.max(1_000, this.timeoutMs * 20)).unref()),
          ]));
        this.metrics.shardUp.set({ shard: shardLabel(i) }, ok ? 1 : 0);
      }),
    );
  }

  close(): void {
    clearInterval(this.timer);
  }
}
