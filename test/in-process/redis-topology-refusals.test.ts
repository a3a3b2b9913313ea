// A gateway whose Redis is not what its configuration says refuses to start, with a message that
// names the key to set instead (src/cache/redis/server-check.ts), against real servers: a single
// URL that reaches a cluster node, a Sentinel or a replica; Sentinels that monitor no primary of
// the configured name; an address in WIKIEDGE_REDIS_SENTINELS that is a data node. Before, each
// of these connected, answered PING, then failed every command (a tier that flaps for ever).
// The built process itself exits 1 with that message as its one line.
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answerPrivateEmptyJson } from '../support/gateway-on-fake.js';
import { type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.js';
import { startGateway } from '../support/gateway.js';
import { inspector, type RedisProcess, startSentinel, startServer } from '../support/redis-topology.js';
import { built, mainJs } from '../support/spawned.js';
import { spawn } from 'node:child_process';

const SECRET = { WIKIEDGE_IDENTITY_SECRET: 'redis-tests-share-this-identity-secret' };

describe.runIf(existsSync('/usr/bin/redis-server'))('a Redis that is not what the configuration says', () => {
  let fake: FakeUpstream;
  let primary: RedisProcess;
  let replica: RedisProcess;
  let clusterNode: RedisProcess;
  let sentinel: RedisProcess;

  beforeAll(async () => {
    fake = await startFakeUpstream(answerPrivateEmptyJson);
    primary = await startServer();
    [replica, clusterNode, sentinel] = await Promise.all([
      startServer(['--replicaof', '127.0.0.1', String(primary.port)]),
      startServer(['--cluster-enabled', 'yes']),
      startSentinel('wikiedge', primary),
    ]);
  }, 30_000);
  afterAll(async () => {
    await Promise.all([replica?.kill('SIGTERM'), clusterNode?.kill('SIGTERM'), sentinel?.kill('SIGTERM'), primary?.kill('SIGTERM')]);
    await fake?.close();
  });

  /** The error startGateway (build()) rejects with. */
  const refusal = async (env: Record<string, string>) => {
    const err = await startGateway(fake.url, { ...SECRET, ...env }).then(
      async (gw) => {
        await gw.close();
        return undefined;
      },
      (e: unknown) => e as Error & { key?: string },
    );
    expect(err, 'the gateway started').toBeDefined();
    return err!;
  };

  it('a URL that reaches a cluster node (cluster_enabled:1) names WIKIEDGE_REDIS_CLUSTER_NODES, to be used instead', async () => {
    const err = await refusal({ WIKIEDGE_REDIS_URL: `redis://${clusterNode.address}` });
    expect(err.name).toBe('RedisRefusal');
    expect(err.key).toBe('WIKIEDGE_REDIS_CLUSTER_NODES');
    expect(err.message).toMatch(/^WIKIEDGE_REDIS_URL reaches a Redis Cluster node \(INFO says cluster_enabled:1\)/);
    expect(err.message).toMatch(/list the cluster's nodes in WIKIEDGE_REDIS_CLUSTER_NODES instead/);
  });

  it('a URL that reaches a Sentinel (redis_mode:sentinel) names WIKIEDGE_REDIS_SENTINELS', async () => {
    const err = await refusal({ WIKIEDGE_REDIS_URL: `redis://${sentinel.address}` });
    expect(err.key).toBe('WIKIEDGE_REDIS_SENTINELS');
    expect(err.message).toMatch(
      /^WIKIEDGE_REDIS_URL reaches a Redis Sentinel \(INFO says redis_mode:sentinel\).*WIKIEDGE_REDIS_SENTINELS.*WIKIEDGE_REDIS_SENTINEL_MASTER/,
    );
  });

  it('a URL that reaches a replica (role:slave) says so, and names the primary and WIKIEDGE_REDIS_SENTINELS', async () => {
    const err = await refusal({ WIKIEDGE_REDIS_URL: `redis://${replica.address}` });
    expect(err.key).toBe('WIKIEDGE_REDIS_URL');
    expect(err.message).toContain(`role:slave, of 127.0.0.1:${primary.port}`);
    expect(err.message).toContain('WIKIEDGE_REDIS_SENTINELS');
  });

  it('Sentinels that monitor no primary of that name name WIKIEDGE_REDIS_SENTINEL_MASTER and the names they know', async () => {
    const err = await refusal({ WIKIEDGE_REDIS_SENTINELS: sentinel.address, WIKIEDGE_REDIS_SENTINEL_MASTER: 'no-such-primary' });
    expect(err.key).toBe('WIKIEDGE_REDIS_SENTINEL_MASTER');
    expect(err.message).toBe(
      'WIKIEDGE_REDIS_SENTINEL_MASTER is "no-such-primary", but no Sentinel of WIKIEDGE_REDIS_SENTINELS monitors a primary of that name (they monitor: wikiedge)',
    );
  });

  it('an address in WIKIEDGE_REDIS_SENTINELS that is a data node, not a Sentinel, names WIKIEDGE_REDIS_SENTINELS', async () => {
    const err = await refusal({ WIKIEDGE_REDIS_SENTINELS: `${sentinel.address},${primary.address}`, WIKIEDGE_REDIS_SENTINEL_MASTER: 'wikiedge' });
    expect(err.key).toBe('WIKIEDGE_REDIS_SENTINELS');
    expect(err.message).toMatch(new RegExp(`^WIKIEDGE_REDIS_SENTINELS lists ${primary.address}, which is not a Redis Sentinel`));
  });

  it('the right Sentinels and name start (the primary they name is a plain Redis)', async () => {
    const gw = await startGateway(fake.url, { ...SECRET, WIKIEDGE_REDIS_SENTINELS: sentinel.address, WIKIEDGE_REDIS_SENTINEL_MASTER: 'wikiedge' });
    try {
      expect(gw.logs.filter((l) => l['redis'] === 'up')).toHaveLength(1);
      expect(gw.logs.filter((l) => l['redis'] === 'refused')).toHaveLength(0);
    } finally {
      await gw.close();
    }
    // The test's own look at the Sentinel: it did name the primary.
    const s = await inspector(sentinel.port);
    try {
      expect(await s.call('SENTINEL', 'get-master-addr-by-name', 'wikiedge')).toEqual(['127.0.0.1', String(primary.port)]);
    } finally {
      s.disconnect();
    }
  });

  /** dist/main.js with the URL of the cluster node: its exit code and stderr. */
  const run = async (env: Record<string, string> = {}) => {
    const child = spawn(process.execPath, [mainJs], {
      env: {
        PATH: process.env['PATH'] ?? '',
        WIKIEDGE_UPSTREAM: fake.url,
        WIKIEDGE_HOST: '127.0.0.1',
        WIKIEDGE_PORT: '0',
        WIKIEDGE_ADMIN_PORT: '0',
        WIKIEDGE_LOG_LEVEL: 'silent',
        WIKIEDGE_REDIS_URL: `redis://${clusterNode.address}`,
        ...SECRET,
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.stdout.resume();
    const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
    return { code, stderr };
  };

  it.runIf(built)(
    'a cluster (WIKIEDGE_WORKERS=2) exits 1 too: its workers refuse, and the primary stops',
    async () => {
      const { code, stderr } = await run({ WIKIEDGE_WORKERS: '2' });
      expect(code).toBe(1);
      expect(stderr).toContain('WIKIEDGE_REDIS_URL reaches a Redis Cluster node (INFO says cluster_enabled:1)');
    },
    45_000,
  );

  it.runIf(built)(
    'the process exits 1 with the refusal as its one line on stderr',
    async () => {
      const { code, stderr } = await run();
      expect(code).toBe(1);
      expect(stderr).toMatch(
        /^wikiedge: failed to start: WIKIEDGE_REDIS_URL reaches a Redis Cluster node \(INFO says cluster_enabled:1\): .*WIKIEDGE_REDIS_CLUSTER_NODES.*\n$/,
      );
      expect(stderr.split('\n')).toHaveLength(2);
    },
    30_000,
  );
});
