// A gateway that does not start because its Redis is not what the configuration says (here a
// replica: src/cache/redis/server-check.ts) must leave nothing of itself running. A reload
// refused so (SIGHUP with a WIKIEDGE_REDIS_URL that reaches a replica, a mistyped
// WIKIEDGE_REDIS_SENTINEL_MASTER) kept the half-built gateway's replica heartbeat
// (src/cache/redis/replica-acks.ts, every 2 s), and through it the storage, the apps and the
// upstream client, alive beside the serving one: one more per refused SIGHUP. Every interval the
// refused build sets must be cleared by the time it rejects.
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { answerPrivateEmptyJson } from '../support/gateway-on-fake.js';
import { type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.js';
import { startGateway } from '../support/gateway.js';
import { type RedisProcess, startServer } from '../support/redis-topology.js';

describe.runIf(existsSync('/usr/bin/redis-server'))('a start refused by Redis', () => {
  let fake: FakeUpstream;
  let primary: RedisProcess;
  let replica: RedisProcess;

  beforeAll(async () => {
    fake = await startFakeUpstream(answerPrivateEmptyJson);
    primary = await startServer();
    replica = await startServer(['--replicaof', '127.0.0.1', String(primary.port)]);
  }, 30_000);
  afterAll(async () => {
    await Promise.all([replica?.kill('SIGTERM'), primary?.kill('SIGTERM')]);
    await fake?.close();
  });

  it('clears every interval it set before it rejects', async () => {
    const set = new Set<unknown>();
    const realSet = globalThis.setInterval;
    const realClear = globalThis.clearInterval;
    const setSpy = vi.spyOn(globalThis, 'setInterval').mockImplementation(((...args: Parameters<typeof setInterval>) => {
      const t = realSet(...args);
      set.add(t);
      return t;
    }) as typeof setInterval);
    const clearSpy = vi.spyOn(globalThis, 'clearInterval').mockImplementation(((t: Parameters<typeof clearInterval>[0]) => {
      set.delete(t);
      realClear(t);
    }) as typeof clearInterval);
    let err: (Error & { key?: string }) | undefined;
    try {
      err = await startGateway(fake.url, {
        WIKIEDGE_IDENTITY_SECRET: 'redis-tests-share-this-identity-secret',
        WIKIEDGE_REDIS_URL: `redis://${replica.address}`,
      }).then(
        async (gw) => {
          await gw.close();
          return undefined;
        },
        (e: unknown) => e as Error & { key?: string },
      );
    } finally {
      setSpy.mockRestore();
      clearSpy.mockRestore();
    }
    expect(err?.name, 'the gateway started').toBe('RedisRefusal');
    expect(set.size, 'intervals the refused build left running').toBe(0);
  });
});
