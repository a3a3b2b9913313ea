// How Redis is reached: one URL, Sentinels with the primary's name, or a cluster's seed nodes,
// each way exclusive with the others, and the credentials and TLS of the Sentinel and cluster
// forms as the URL has them. Nothing here connects (--check
// runs exactly this); what the server turns out to be is test/in-process/redis-topology-refusals.test.ts.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, describeConfig, loadConfig, usesRedis } from '../../src/config/config.js';
import { redisTarget, targetOptions } from '../../src/cache/redis/target.js';
import { scratchDir } from '../support/scratch.js';

const base = { WIKIEDGE_UPSTREAM: 'http://127.0.0.1:8080', WIKIEDGE_IDENTITY_SECRET: 'shared-by-every-replica' };
const sentinels = { ...base, WIKIEDGE_REDIS_SENTINELS: 's1:26379, s2:26379,[::1]:26380', WIKIEDGE_REDIS_SENTINEL_MASTER: 'wikiedge' };

function errorOf(env: Record<string, string>): ConfigError {
  try {
    loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw err;
  }
  throw new Error('expected a ConfigError');
}

describe('configuration of the way to Redis', () => {
  it('WIKIEDGE_REDIS_SENTINELS with WIKIEDGE_REDIS_SENTINEL_MASTER: the Sentinels, split', () => {
    const c = loadConfig(sentinels);
    expect(c.redisSentinels).toEqual(['s1:26379', 's2:26379', '[::1]:26380']);
    expect(usesRedis(c)).toBe(true);
    expect(redisTarget(c)).toMatchObject({
      kind: 'sentinel',
      name: 'wikiedge',
      sentinels: [
        { host: 's1', port: 26379 },
        { host: 's2', port: 26379 },
        { host: '::1', port: 26380 },
      ],
      tls: false,
    });
  });

  it('the Sentinel form needs the master name, the name needs Sentinels, and both need the identity secret', () => {
    expect(errorOf({ ...base, WIKIEDGE_REDIS_SENTINELS: 's1:26379' }).message).toMatch(
      /^WIKIEDGE_REDIS_SENTINEL_MASTER: is required with WIKIEDGE_REDIS_SENTINELS/,
    );
    expect(errorOf({ ...base, WIKIEDGE_REDIS_SENTINEL_MASTER: 'wikiedge' }).message).toMatch(
      /^WIKIEDGE_REDIS_SENTINEL_MASTER: is used only with WIKIEDGE_REDIS_SENTINELS/,
    );
    expect(errorOf({ ...sentinels, WIKIEDGE_IDENTITY_SECRET: '' }).message).toMatch(/^WIKIEDGE_IDENTITY_SECRET: is required with WIKIEDGE_REDIS_SENTINELS/);
  });

  it('every address is host:port (the port is required), the name a plain word', () => {
    for (const bad of ['s1', 's1:', 's1:0', 's1:70000', 'redis://s1:26379', '::1:26379', 's1:26379/0']) {
      expect(errorOf({ ...sentinels, WIKIEDGE_REDIS_SENTINELS: bad }).message, bad).toMatch(/^WIKIEDGE_REDIS_SENTINELS: must list host:port addresses/);
    }
    expect(errorOf({ ...sentinels, WIKIEDGE_REDIS_SENTINELS: ' , ' }).message).toMatch(/at least one/);
    expect(errorOf({ ...sentinels, WIKIEDGE_REDIS_SENTINEL_MASTER: 'my master' }).key).toBe('WIKIEDGE_REDIS_SENTINEL_MASTER');
  });

  it('WIKIEDGE_REDIS_CLUSTER_NODES: host:port addresses, the target a cluster of those seeds, with the credentials and TLS', () => {
    expect(errorOf({ ...base, WIKIEDGE_REDIS_CLUSTER_NODES: 'n1' }).message).toMatch(/^WIKIEDGE_REDIS_CLUSTER_NODES: must list host:port/);
    const config = loadConfig({ ...base, WIKIEDGE_REDIS_CLUSTER_NODES: 'n1:7000,[::1]:7001', WIKIEDGE_REDIS_PASSWORD: 'pw', WIKIEDGE_REDIS_TLS: 'true' });
    expect(redisTarget(config)).toEqual({
      kind: 'cluster',
      nodes: [
        { host: 'n1', port: 7000 },
        { host: '::1', port: 7001 },
      ],
      username: '',
      password: 'pw',
      tls: true,
    });
    expect(usesRedis(config)).toBe(true);
  });

  it('each way is exclusive with the others', () => {
    const url = { WIKIEDGE_REDIS_URL: 'redis://127.0.0.1:6390' };
    expect(errorOf({ ...sentinels, ...url }).message).toBe(
      'WIKIEDGE_REDIS_SENTINELS: must not be set together with WIKIEDGE_REDIS_URL: Redis is reached one way',
    );
    expect(errorOf({ ...base, ...url, WIKIEDGE_REDIS_CLUSTER_NODES: 'n1:7000' }).message).toBe(
      'WIKIEDGE_REDIS_CLUSTER_NODES: must not be set together with WIKIEDGE_REDIS_URL: Redis is reached one way',
    );
    expect(errorOf({ ...sentinels, WIKIEDGE_REDIS_CLUSTER_NODES: 'n1:7000' }).key).toBe('WIKIEDGE_REDIS_CLUSTER_NODES');
  });

  it('passwords and TLS: as the URL has them, secrets from _FILE, never in the described configuration', () => {
    const file = path.join(scratchDir('wikiedge-redis-secret-'), 'pw');
    writeFileSync(file, 'data-node-password\n');
    const c = loadConfig({
      ...sentinels,
      WIKIEDGE_REDIS_PASSWORD_FILE: file,
      WIKIEDGE_REDIS_SENTINEL_PASSWORD: 'sentinel-password',
      WIKIEDGE_REDIS_TLS: 'true',
    });
    const target = redisTarget(c)!;
    expect(target).toMatchObject({ password: 'data-node-password', sentinelPassword: 'sentinel-password', tls: true });
    expect(targetOptions(target, {})).toMatchObject({
      password: 'data-node-password',
      sentinelPassword: 'sentinel-password',
      tls: {},
      sentinelTLS: {},
      enableTLSForSentinelMode: true,
      name: 'wikiedge',
      role: 'master',
    });
    const described = JSON.stringify(describeConfig(c));
    expect(described).not.toContain('data-node-password');
    expect(described).not.toContain('sentinel-password');
  });

  it('a primary demoted under a live connection (READONLY): a URL target reconnects, as a Sentinel one does', () => {
    const readonly = new Error("READONLY You can't write against a read only replica.");
    for (const env of [{ ...base, WIKIEDGE_REDIS_URL: 'redis://127.0.0.1:6390/0' }, sentinels]) {
      const options = targetOptions(redisTarget(loadConfig(env))!, {});
      expect(options.reconnectOnError?.(readonly)).toBe(true);
      expect(options.reconnectOnError?.(new Error('ERR unknown command'))).toBe(false);
    }
  });

  it('a URL takes WIKIEDGE_REDIS_PASSWORD when it holds none, refuses two passwords, and says rediss:// for TLS', () => {
    const url = { ...base, WIKIEDGE_REDIS_URL: 'redis://127.0.0.1:6390/0' };
    expect(targetOptions(redisTarget(loadConfig({ ...url, WIKIEDGE_REDIS_PASSWORD: 'pw' }))!, {})).toMatchObject({ password: 'pw' });
    expect(errorOf({ ...base, WIKIEDGE_REDIS_URL: 'redis://:inline@127.0.0.1:6390', WIKIEDGE_REDIS_PASSWORD: 'pw' }).message).toMatch(
      /^WIKIEDGE_REDIS_PASSWORD: must not be set together with a password in WIKIEDGE_REDIS_URL/,
    );
    expect(errorOf({ ...url, WIKIEDGE_REDIS_TLS: 'true' }).message).toMatch(/^WIKIEDGE_REDIS_TLS: .*rediss:\/\//);
  });
});
