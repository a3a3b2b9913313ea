// The shared tier's Redis, whichever way it is deployed, for the tests that run one behaviour on
// each: one redis-server (WIKIEDGE_REDIS_URL) and a Redis Cluster of 3 masters with a replica
// each (WIKIEDGE_REDIS_CLUSTER_NODES, test/support/redis-cluster.ts). A test names its cases with
// `describe.each(REDIS_BACKENDS)` and starts the backend once for the file (beforeAll).
import { existsSync } from 'node:fs';
import type { RedisTier } from '../../src/cache/redis-tier.js';
import { bareRedisTier, startRedis } from './redis.js';
import { startCluster } from './redis-cluster.js';

const REDIS_SERVER = process.env['WIKIEDGE_TEST_REDIS_SERVER'] ?? '/usr/bin/redis-server';
/** The Debian package is installed: the tests that start real servers run. */
export const redisInstalled = existsSync(REDIS_SERVER);

export interface RunningRedisBackend {
  /** The gateway's environment that points it at this backend. */
  readonly env: Record<string, string>;
  /** A tier of its own over this backend, no gateway around it (test/support/redis.ts bareRedisTier). */
  tier(options?: Parameters<typeof bareRedisTier>[1]): RedisTier;
  /** Every server started again, empty (no persistence), answering. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

export type RedisBackendStart = () => Promise<RunningRedisBackend>;

async function oneRedis(): Promise<RunningRedisBackend> {
  const redis = await startRedis();
  return {
    env: { WIKIEDGE_REDIS_URL: redis.url },
    tier: (options) => bareRedisTier(redis.url, options),
    restart: () => redis.restart(),
    stop: () => redis.stop(),
  };
}

async function redisCluster(): Promise<RunningRedisBackend> {
  const cluster = await startCluster();
  const nodes = cluster.nodes.map((n) => ({ host: '127.0.0.1', port: n.port }));
  return {
    env: { WIKIEDGE_REDIS_CLUSTER_NODES: cluster.seeds },
    tier: (options) => bareRedisTier('', { target: { kind: 'cluster', nodes, username: '', password: '', tls: false }, ...options }),
    restart: () => cluster.restart(),
    stop: () => cluster.stop(),
  };
}

/** `[name, start]` per backend, for `describe.each`. */
export const REDIS_BACKENDS: readonly (readonly [string, RedisBackendStart])[] = [
  ['one Redis', oneRedis],
  ['a Redis Cluster', redisCluster],
];
