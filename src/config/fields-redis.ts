/**
 * The shared Redis tier's keys: one entry each, in the README's order; FIELDS (fields.ts)
 * spreads them in after the process keys. Kept apart because how the tier is reached
 * (one URL, Sentinels, a cluster) grows with its backends.
 */
import { field } from './field.js';
import { bool, hostPortList, int, redisCredential, redisKeyPrefix, redisUrl, sentinelMasterName } from './parsers.js';
import { redactUrlPassword } from './redact.js';

export const REDIS_FIELDS = {
  redisUrl: field({
    env: 'WIKIEDGE_REDIS_URL',
    parse: redisUrl,
    default: '',
    unit: 'url',
    doc: '`redis://[user:password@]host:port[/db]` (or `rediss://`): turns on the shared Redis tier (see "Several replicas with Redis"); empty: local tier only. The password is redacted in the logged configuration. Not with `WIKIEDGE_REDIS_SENTINELS` or `WIKIEDGE_REDIS_CLUSTER_NODES`',
    describe: redactUrlPassword,
  }),
  redisSentinels: field({
    env: 'WIKIEDGE_REDIS_SENTINELS',
    parse: hostPortList,
    default: [],
    unit: 'list',
    doc: 'the Sentinels of a Redis primary with replicas, `host:port,host:port,...`: the shared tier asks them for the primary and follows a failover by itself (see "Redis Sentinel"); with `WIKIEDGE_REDIS_SENTINEL_MASTER`, instead of `WIKIEDGE_REDIS_URL`',
  }),
  redisSentinelMaster: field({
    env: 'WIKIEDGE_REDIS_SENTINEL_MASTER',
    parse: sentinelMasterName,
    default: '',
    unit: 'name',
    doc: 'the name the Sentinels monitor the primary under (`sentinel monitor <name> ...`); required with `WIKIEDGE_REDIS_SENTINELS`',
  }),
  redisClusterNodes: field({
    env: 'WIKIEDGE_REDIS_CLUSTER_NODES',
    parse: hostPortList,
    default: [],
    unit: 'list',
    doc: 'seed nodes of a Redis Cluster, `host:port,...`: the shared tier on the cluster, its keys hash-tagged by slot, purges on sharded pub/sub; it follows failovers by itself (see "Redis Cluster"); instead of `WIKIEDGE_REDIS_URL`, with the same user, password and TLS keys as Sentinels',
  }),
  redisUsername: field({
    env: 'WIKIEDGE_REDIS_USERNAME',
    parse: redisCredential,
    default: '',
    unit: 'name',
    doc: 'the ACL user for the Redis data nodes (with `WIKIEDGE_REDIS_SENTINELS` or `WIKIEDGE_REDIS_CLUSTER_NODES`, or with a `WIKIEDGE_REDIS_URL` that names none); empty: `default`',
  }),
  redisPassword: field({
    env: 'WIKIEDGE_REDIS_PASSWORD',
    parse: redisCredential,
    default: '',
    unit: 'text',
    secret: true,
    doc: 'the password for the Redis data nodes (with `WIKIEDGE_REDIS_SENTINELS` or `WIKIEDGE_REDIS_CLUSTER_NODES`, or with a `WIKIEDGE_REDIS_URL` that holds none)',
  }),
  redisSentinelPassword: field({
    env: 'WIKIEDGE_REDIS_SENTINEL_PASSWORD',
    parse: redisCredential,
    default: '',
    unit: 'text',
    secret: true,
    doc: "the password for the Sentinels themselves (their `requirepass`), when they have one; the data nodes' is `WIKIEDGE_REDIS_PASSWORD`",
  }),
  redisTls: field({
    env: 'WIKIEDGE_REDIS_TLS',
    parse: bool,
    default: false,
    unit: 'boolean',
    doc: 'TLS to the Sentinels and the data nodes they name (with `WIKIEDGE_REDIS_SENTINELS`), or to every cluster node (with `WIKIEDGE_REDIS_CLUSTER_NODES`); a single URL says `rediss://` instead, and is refused with this key',
  }),
  redisTimeoutMs: field({
    env: 'WIKIEDGE_REDIS_TIMEOUT_MS',
    parse: int(1, 10_000),
    default: 50,
    unit: 'ms',
    doc: 'bound on every Redis call made for a request; past it the request goes on without Redis and the tier is marked down',
  }),
  redisLockMs: field({
    env: 'WIKIEDGE_REDIS_LOCK_MS',
    parse: int(10, 600_000),
    default: 3_000,
    unit: 'ms',
    doc: "lifetime of the cross-replica fetch lock; also the longest a replica polls for the lock holder's entry (with `WIKIEDGE_COALESCE_WAIT_MS`)",
  }),
  redisKeyPrefix: field({
    env: 'WIKIEDGE_REDIS_KEY_PREFIX',
    parse: redisKeyPrefix,
    default: 'wikiedge:',
    unit: 'text',
    doc: 'prefix of every Redis key and of the purge channel (`<prefix>purge`); give each wiki its own when several share one Redis',
  }),
};
