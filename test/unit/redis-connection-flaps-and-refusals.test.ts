// The connection's own account of a tier that flaps (wikiedge_redis_down_total counts each fall
// from up, so an alert sees falls shorter than a scrape), of a server that is not what the
// configuration says (src/cache/redis/server-check.ts, read from INFO answers as Redis 7 writes
// them), and of a client ioredis gave up on by itself (connected again; only close() ends it).
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { serverMismatch } from '../../src/cache/redis/server-check.js';
import type { RedisTarget } from '../../src/cache/redis/target.js';
import { fakeRedisConnection } from '../support/redis.js';
import { until } from '../support/until.js';

const url: RedisTarget = { kind: 'url', url: 'redis://r:6379', username: '', password: '' };
const sentinel: RedisTarget = {
  kind: 'sentinel',
  sentinels: [{ host: 's', port: 26379 }],
  name: 'main',
  username: '',
  password: '',
  sentinelPassword: '',
  tls: false,
};
const info = (...lines: string[]) => ['# Server', 'redis_version:7.0.15', ...lines, ''].join('\r\n');

let open: ReturnType<typeof fakeRedisConnection>[] = [];
afterEach(async () => {
  await Promise.all(open.map((s) => s.connection.close()));
  open = [];
});
const setup = () => {
  const s = fakeRedisConnection(50);
  open.push(s);
  return s;
};

describe('a flapping tier', () => {
  it('wikiedge_redis_down_total counts each fall from up, not the start without Redis', async () => {
    const s = setup();
    expect(await s.value('wikiedge_redis_down_total')).toBe(0);
    for (let i = 1; i <= 3; i++) {
      expect(await s.up()).toBe(true);
      await s.connection.call('get', () => Promise.reject(new Error('ECONNRESET')));
      expect(s.connection.up).toBe(false);
      expect(await s.value('wikiedge_redis_down_total')).toBe(i);
    }
  });
});

describe('a client ioredis ended by itself', () => {
  it('is connected again, and the tier comes back; after close() it is not', async () => {
    const s = setup();
    expect(await s.up()).toBe(true);
    s.cmd.emit('close');
    s.cmd.end();
    await until(
      async () => s.cmd.connects,
      (n) => n === 1,
      5_000,
    );
    await until(
      async () => s.connection.up,
      (up) => up,
      5_000,
    );
    await s.connection.close();
    s.sub.end();
    await sleep(1_500);
    expect(s.sub.connects).toBe(0);
  });
});

describe('the server reached, from its INFO', () => {
  it('a plain primary passes, by URL or through Sentinels', () => {
    const plain = info('redis_mode:standalone', '# Replication', 'role:master', '# Cluster', 'cluster_enabled:0');
    expect(serverMismatch(url, plain)).toBeUndefined();
    expect(serverMismatch(sentinel, plain)).toBeUndefined();
  });

  it('a cluster node names WIKIEDGE_REDIS_CLUSTER_NODES either way', () => {
    const node = info('redis_mode:cluster', '# Cluster', 'cluster_enabled:1');
    expect(serverMismatch(url, node)?.key).toBe('WIKIEDGE_REDIS_CLUSTER_NODES');
    expect(serverMismatch(sentinel, node)?.message).toMatch(/^the primary "main" that WIKIEDGE_REDIS_SENTINELS name is a Redis Cluster node/);
  });

  it('cluster seed nodes that reach a plain Redis or a Sentinel name WIKIEDGE_REDIS_CLUSTER_NODES; a cluster node passes', () => {
    const seeds: RedisTarget = { kind: 'cluster', nodes: [{ host: 'n1', port: 7000 }], username: '', password: '', tls: false };
    expect(serverMismatch(seeds, info('redis_mode:cluster', '# Cluster', 'cluster_enabled:1'))).toBeUndefined();
    const plainRefusal = serverMismatch(seeds, info('redis_mode:standalone', '# Cluster', 'cluster_enabled:0'));
    expect(plainRefusal?.key).toBe('WIKIEDGE_REDIS_CLUSTER_NODES');
    expect(plainRefusal?.message).toMatch(/not a cluster node \(INFO says cluster_enabled:0\)/);
    expect(serverMismatch(seeds, info('redis_mode:sentinel'))?.message).toMatch(/INFO says redis_mode:sentinel/);
  });

  it('a Sentinel by URL names WIKIEDGE_REDIS_SENTINELS; a replica by URL names its primary', () => {
    expect(serverMismatch(url, info('redis_mode:sentinel', '# Sentinel', 'sentinel_masters:1'))?.key).toBe('WIKIEDGE_REDIS_SENTINELS');
    const replica = serverMismatch(url, info('redis_mode:standalone', '# Replication', 'role:slave', 'master_host:10.0.0.5', 'master_port:6379'));
    expect(replica?.key).toBe('WIKIEDGE_REDIS_URL');
    expect(replica?.message).toContain('role:slave, of 10.0.0.5:6379');
  });

  it('a replica through Sentinels is left to ioredis, which checks the role and asks again', () => {
    expect(serverMismatch(sentinel, info('redis_mode:standalone', '# Replication', 'role:slave'))).toBeUndefined();
  });

  it("a refusal prints as its message alone (main.ts prints a start failure's stack)", () => {
    const r = serverMismatch(url, info('redis_mode:sentinel'))!;
    expect(r.stack).toBe(r.message);
    expect(r.name).toBe('RedisRefusal');
  });
});
