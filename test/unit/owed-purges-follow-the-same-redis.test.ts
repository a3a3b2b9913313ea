// A reload hands the purges the old gateway owes Redis to the next one only when they mean
// something there: the same Redis (server and database of a URL, the Sentinels' primary, the
// cluster's nodes) under the same WIKIEDGE_REDIS_KEY_PREFIX (src/cluster/generations.ts
// owedPurgesFollow, src/cache/redis/target.ts sameRedis). Pointed at another server or database
// with the prefix kept, the next gateway carried them into a keyspace they were never for, and
// the old one, which other replicas may still read during a rollout, never got them.
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { owedPurgesFollow } from '../../src/cluster/generations.js';

const config = (env: Record<string, string>) => loadConfig({ WIKIEDGE_UPSTREAM: 'http://wiki:80', WIKIEDGE_IDENTITY_SECRET: 's'.repeat(32), ...env });

describe('owed purges follow the same Redis', () => {
  it('the same URL, credentials aside, and the same prefix: handed on', () => {
    const before = config({ WIKIEDGE_REDIS_URL: 'redis://:old@redis-a:6379/0' });
    expect(owedPurgesFollow(before, config({ WIKIEDGE_REDIS_URL: 'redis://:new@REDIS-A:6379' }))).toBe(true);
  });

  it('another server or database, the prefix kept: not handed on', () => {
    const before = config({ WIKIEDGE_REDIS_URL: 'redis://redis-a:6379/0' });
    expect(owedPurgesFollow(before, config({ WIKIEDGE_REDIS_URL: 'redis://redis-b:6379/0' }))).toBe(false);
    expect(owedPurgesFollow(before, config({ WIKIEDGE_REDIS_URL: 'redis://redis-a:6379/1' }))).toBe(false);
    expect(owedPurgesFollow(before, config({ WIKIEDGE_REDIS_URL: 'redis://redis-a:6380/0' }))).toBe(false);
  });

  it('another prefix, or no Redis: not handed on', () => {
    const before = config({ WIKIEDGE_REDIS_URL: 'redis://redis-a:6379' });
    expect(owedPurgesFollow(before, config({ WIKIEDGE_REDIS_URL: 'redis://redis-a:6379', WIKIEDGE_REDIS_KEY_PREFIX: 'other:' }))).toBe(false);
    expect(owedPurgesFollow(before, config({}))).toBe(false);
  });

  it('Sentinels: the same primary name and Sentinels, in any order', () => {
    const before = config({ WIKIEDGE_REDIS_SENTINELS: 's1:26379,s2:26379', WIKIEDGE_REDIS_SENTINEL_MASTER: 'wiki' });
    expect(owedPurgesFollow(before, config({ WIKIEDGE_REDIS_SENTINELS: 's2:26379,s1:26379', WIKIEDGE_REDIS_SENTINEL_MASTER: 'wiki' }))).toBe(true);
    expect(owedPurgesFollow(before, config({ WIKIEDGE_REDIS_SENTINELS: 's1:26379,s2:26379', WIKIEDGE_REDIS_SENTINEL_MASTER: 'other' }))).toBe(false);
    expect(owedPurgesFollow(before, config({ WIKIEDGE_REDIS_URL: 'redis://s1:6379' }))).toBe(false);
  });

  it('a cluster: the same seed nodes', () => {
    const before = config({ WIKIEDGE_REDIS_CLUSTER_NODES: 'n1:7000,n2:7000,n3:7000' });
    expect(owedPurgesFollow(before, config({ WIKIEDGE_REDIS_CLUSTER_NODES: 'n3:7000,n1:7000,n2:7000' }))).toBe(true);
    expect(owedPurgesFollow(before, config({ WIKIEDGE_REDIS_CLUSTER_NODES: 'm1:7000,m2:7000,m3:7000' }))).toBe(false);
  });
});
