/**
 * The two connections of the shared tier on a Redis Cluster (WIKIEDGE_REDIS_CLUSTER_NODES): the
 * command client is ioredis' `Cluster` (it learns the slots from the seed nodes, follows MOVED and
 * ASK, and refreshes the topology when a node fails: ioredis' lib/cluster/index.ts), typed as the
 * one-Redis client it stands in for, since connection.ts and the key modules use only the commands
 * both have; the subscriber is a ShardChannel (./shard-channel.ts).
 *
 * Offline queues are off at both levels, as for one Redis: a command while a slot has no
 * reachable master fails at once and the request goes on without Redis (connection.ts).
 */
import { Cluster, type Redis, type RedisOptions } from 'ioredis';
import { ShardChannel } from './shard-channel.js';
import { type RedisTarget, targetOptions } from './target.js';

export interface ClusterClients {
  readonly cluster: Cluster;
  readonly cmd: Redis;
  readonly sub: Redis;
}

export function clusterClients(target: Extract<RedisTarget, { kind: 'cluster' }>, base: RedisOptions): ClusterClients {
  const node = targetOptions(target, base);
  // The cluster client reconnects its nodes itself (clusterRetryStrategy).
  const { retryStrategy: _own, ...perNode } = node;
  const cluster = new Cluster(
    target.nodes.map((n) => ({ host: n.host, port: n.port })),
    {
      redisOptions: { ...perNode, connectionName: 'wikiedge', maxRetriesPerRequest: 0, autoResendUnfulfilledCommands: false },
      enableOfflineQueue: false,
      // Writes and reads go to masters: a replica may lag behind an invalidation.
      scaleReads: 'master',
      clusterRetryStrategy: (times) => Math.min(50 * times, 1_000),
      // A failover is seen at the first failed command, and between commands at least this often.
      slotsRefreshInterval: 2_000,
      slotsRefreshTimeout: Math.max(1_000, Number(base.connectTimeout ?? 1_000)),
      retryDelayOnFailover: 50,
      retryDelayOnClusterDown: 50,
      maxRedirections: 8,
      // Concurrent single-key commands (a purge's entries, a store's index sets) go out to each
      // node in one write instead of one per command.
      enableAutoPipelining: true,
    },
  );
  const sub = new ShardChannel(cluster, { ...node, connectionName: 'wikiedge-sub' });
  return { cluster, cmd: cluster as unknown as Redis, sub: sub as unknown as Redis };
}
