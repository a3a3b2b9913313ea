// The shared tier's Redis, whichever way it is deployed, for the tests that run one behaviour on
// each: one redis-server (WIKIEDGE_REDIS_URL) and a Redis Cluster of 3 masters with a replica
// each (WIKIEDGE_REDIS_CLUSTER_NODES, test/support/redis-cluster.ts). A test names its cases with
// `describe.each(REDIS_BACKENDS)` and starts the backend once for the file (beforeAll).
import { existsSync } from 'node:fs';
import { Cluster, Redis } from 'ioredis';
import type { RedisTier } from '../../src/cache/redis-tier.js';
import { bareRedisTier, rawCommand, startRedis, type TestRedis } from './redis.js';
import { startCluster } from './redis-cluster.js';

const REDIS_SERVER = process.env['WIKIEDGE_TEST_REDIS_SERVER'] ?? '/usr/bin/redis-server';
/** The Debian package is installed: the tests that start real servers run. */
export const redisInstalled = existsSync(REDIS_SERVER);

export interface RunningRedisBackend {
  /** Whether keys are named for a cluster (src/cache/redis/keys.ts redisKeys(prefix, cluster)). */
  readonly cluster: boolean;
  /** The one redis-server (undefined on a cluster): for the cases that stop, kill or restart it. */
  readonly server?: TestRedis;
  /** The gateway's environment that points it at this backend. */
  readonly env: Record<string, string>;
  /** A tier of its own over this backend, no gateway around it (test/support/redis.ts bareRedisTier). */
  tier(options?: Parameters<typeof bareRedisTier>[1]): RedisTier;
  /** A client of its own for looking at keys (routed to their node on a cluster); disconnect it after. */
  client(): Promise<Redis | Cluster>;
  /** Every server stopped (SIGSTOP: connections open, no answer) / continued (SIGCONT). */
  pause(): void;
  resume(): void;
  /** One inline command sent to every server (every node of a cluster), their raw answers. */
  everyNode(line: string): Promise<string[]>;
  /** Every server started again, empty (no persistence), answering. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

function signal(pids: (number | undefined)[], name: 'SIGSTOP' | 'SIGCONT'): void {
  for (const pid of pids) if (pid !== undefined) process.kill(pid, name);
}

export type RedisBackendStart = () => Promise<RunningRedisBackend>;

export async function oneRedis(): Promise<RunningRedisBackend> {
  const redis = await startRedis();
  return {
    cluster: false,
    server: redis,
    env: { WIKIEDGE_REDIS_URL: redis.url },
    async client() {
      const c = new Redis(redis.url, { lazyConnect: true, maxRetriesPerRequest: 1 });
      c.on('error', () => undefined);
      await c.connect();
      return c;
    },
    tier: (options) => bareRedisTier(redis.url, options),
    pause: () => signal([redis.pid], 'SIGSTOP'),
    resume: () => signal([redis.pid], 'SIGCONT'),
    everyNode: async (line) => [await redis.command(line)],
    restart: () => redis.restart(),
    stop: () => redis.stop(),
  };
}

async function redisCluster(): Promise<RunningRedisBackend> {
  const cluster = await startCluster();
  const nodes = cluster.nodes.map((n) => ({ host: '127.0.0.1', port: n.port }));
  return {
    cluster: true,
    env: { WIKIEDGE_REDIS_CLUSTER_NODES: cluster.seeds },
    async client() {
      const c = new Cluster(nodes, { lazyConnect: true, redisOptions: { maxRetriesPerRequest: 1 } });
      c.on('error', () => undefined);
      await c.connect();
      return c;
    },
    tier: (options) => bareRedisTier('', { target: { kind: 'cluster', nodes, username: '', password: '', tls: false }, ...options }),
    // All six at once: no node sees another fail while it is stopped itself, so no failover.
    pause: () =>
      signal(
        cluster.nodes.map((n) => n.pid),
        'SIGSTOP',
      ),
    resume: () =>
      signal(
        cluster.nodes.map((n) => n.pid),
        'SIGCONT',
      ),
    everyNode: (line) => Promise.all(cluster.nodes.filter((n) => n.pid !== undefined).map((n) => rawCommand(n.port, line))),
    restart: () => cluster.restart(),
    stop: () => cluster.stop(),
  };
}

/** `[name, start]` per backend, for `describe.each`. */
export const REDIS_BACKENDS: readonly (readonly [string, RedisBackendStart])[] = [
  ['one Redis', oneRedis],
  ['a Redis Cluster', redisCluster],
];
