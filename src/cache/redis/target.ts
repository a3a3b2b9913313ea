/**
 * Where the shared tier's Redis is, as the configuration says it: one URL (WIKIEDGE_REDIS_URL) or
 * the Sentinels of a primary with replicas (WIKIEDGE_REDIS_SENTINELS + _SENTINEL_MASTER), with
 * the credentials and TLS of either, or the seed nodes of a Redis Cluster
 * (WIKIEDGE_REDIS_CLUSTER_NODES, ioredis' `Cluster`: connection.ts); and the ioredis options
 * that reach it.
 *
 * With Sentinels, ioredis asks them for the primary's address (SENTINEL get-master-addr-by-name),
 * checks that what it reached has the master role (ROLE), and asks again after every lost
 * connection: a failover ends in a reconnect to the new primary (ioredis'
 * lib/connectors/SentinelConnector/index.ts). A primary demoted without dying (SENTINEL FAILOVER,
 * a partition healed) answers writes with READONLY: that error drops the connection, and the
 * reconnect asks the Sentinels again.
 *
 * ioredis' `failoverDetector` (which drops the connection on the Sentinels' `+switch-master`) is
 * not used: its disconnect can land while the connector is resolving the primary after the old
 * one died, and a connector that fails there ends the client for good (Redis.connect sets status
 * `end`): the likely cause of one run of test/in-process/redis-sentinel-failover.test.ts in which
 * a gateway never connected again. connection.ts also connects again a client that ended by itself.
 */
import type { RedisOptions } from 'ioredis';
import type { Config } from '../../config/config.js';
import { splitHostPort } from '../../config/parsers.js';

export type RedisTarget =
  | { readonly kind: 'url'; readonly url: string; readonly username: string; readonly password: string }
  | {
      readonly kind: 'sentinel';
      readonly sentinels: readonly { readonly host: string; readonly port: number }[];
      readonly name: string;
      readonly username: string;
      readonly password: string;
      readonly sentinelPassword: string;
      readonly tls: boolean;
    }
  | {
      readonly kind: 'cluster';
      readonly nodes: readonly { readonly host: string; readonly port: number }[];
      readonly username: string;
      readonly password: string;
      readonly tls: boolean;
    };

type RedisConfig = Pick<
  Config,
  'redisUrl' | 'redisSentinels' | 'redisSentinelMaster' | 'redisClusterNodes' | 'redisUsername' | 'redisPassword' | 'redisSentinelPassword' | 'redisTls'
>;

/** The configured target, or undefined without Redis. */
export function redisTarget(config: RedisConfig): RedisTarget | undefined {
  const credentials = { username: config.redisUsername, password: config.redisPassword };
  if (config.redisUrl) return { kind: 'url', url: config.redisUrl, ...credentials };
  if (config.redisClusterNodes.length > 0)
    return { kind: 'cluster', nodes: config.redisClusterNodes.map((s) => splitHostPort(s)!), ...credentials, tls: config.redisTls };
  if (config.redisSentinels.length === 0) return undefined;
  return {
    kind: 'sentinel',
    sentinels: config.redisSentinels.map((s) => splitHostPort(s)!),
    name: config.redisSentinelMaster,
    ...credentials,
    sentinelPassword: config.redisSentinelPassword,
    tls: config.redisTls,
  };
}

/**
 * Whether two targets name the same Redis keyspace: the same server and database of a URL
 * (credentials and TLS aside), the same Sentinels' primary, the same cluster's seed nodes. What a
 * purge owed to one of them means nothing to another (cluster/generations.ts owedPurgesFollow).
 */
export function sameRedis(a: RedisTarget | undefined, b: RedisTarget | undefined): boolean {
  if (a === undefined || b === undefined || a.kind !== b.kind) return false;
  const nodes = (list: readonly { host: string; port: number }[]) =>
    list
      .map((n) => `${n.host.toLowerCase()}:${n.port}`)
      .sort()
      .join(',');
  if (a.kind === 'url' && b.kind === 'url') return keyspaceOfUrl(a.url) === keyspaceOfUrl(b.url);
  if (a.kind === 'sentinel' && b.kind === 'sentinel') return a.name === b.name && nodes(a.sentinels) === nodes(b.sentinels);
  return a.kind === 'cluster' && b.kind === 'cluster' && nodes(a.nodes) === nodes(b.nodes);
}

/** `host:port/db` of a redis:// or rediss:// URL (port 6379 and database 0 when left out). */
function keyspaceOfUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.hostname.toLowerCase()}:${u.port || '6379'}/${u.pathname.replace(/^\//, '') || '0'}`;
  } catch {
    return url;
  }
}

/** The target in words, for log lines and the client factory's first argument (no secret). */
export function describeTarget(target: RedisTarget): string {
  const list = (nodes: readonly { host: string; port: number }[]) =>
    nodes.map((s) => (s.host.includes(':') ? `[${s.host}]:${s.port}` : `${s.host}:${s.port}`)).join(',');
  if (target.kind === 'url') return 'WIKIEDGE_REDIS_URL';
  if (target.kind === 'cluster') return `cluster://${list(target.nodes)}`;
  return `sentinel://${target.name}@${list(target.sentinels)}`;
}

/**
 * The ioredis options that reach the target, on top of `base`. A URL's own user and password win
 * over these (ioredis fills only what the URL leaves out; config/load.ts refuses both at once).
 */
export function targetOptions(target: RedisTarget, base: RedisOptions): RedisOptions {
  const credentials: RedisOptions = {
    ...(target.username && { username: target.username }),
    ...(target.password && { password: target.password }),
  };
  // A primary demoted under a live connection answers writes with READONLY: reconnect (for a URL,
  // to whatever its name now resolves to: a managed endpoint moves to the new primary; for
  // Sentinel, asking the Sentinels). Without it every write failed on the same socket, the tier
  // flapped down and up on PING, and what it purged nowhere stayed in Redis
  // (RedisOptions.reconnectOnError in ioredis' README).
  const reconnectOnError = (err: Error) => err.message.startsWith('READONLY');
  if (target.kind === 'url') return { ...base, ...credentials, reconnectOnError };
  if (target.kind === 'cluster') return { ...base, ...credentials, ...(target.tls && { tls: {} }) };
  return {
    ...base,
    ...credentials,
    sentinels: target.sentinels.map((s) => ({ host: s.host, port: s.port })),
    name: target.name,
    role: 'master',
    ...(target.sentinelPassword && { sentinelPassword: target.sentinelPassword }),
    ...(target.tls && { tls: {}, sentinelTLS: {}, enableTLSForSentinelMode: true }),
    // Ask the Sentinels again as often as the data connection retries (ioredis' default is 10 ms × tries).
    sentinelRetryStrategy: (times: number) => Math.min(50 * times, 1_000),
    reconnectOnError,
  };
}
