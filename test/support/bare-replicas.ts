// Replicas of the gateway's storage with nothing around them: a CacheStore and a TieredStorage
// over a tier of its own on a Redis backend (redis-backends.ts), for the tests of what reaches
// Redis and the other replicas when Redis could not be reached (the purges a replica owes it),
// and one entry of the shared tier for them to hold.
import pino, { type Logger } from 'pino';
import { afterAll, beforeAll } from 'vitest';
import type { CacheEntry } from '../../src/cache/entry.js';
import { CacheStore } from '../../src/cache/store.js';
import { TieredStorage } from '../../src/cache/tiered-storage.js';
import type { RedisBackendStart, RunningRedisBackend } from './redis-backends.js';
import { SessionUsers } from '../../src/policy/session-users.js';
import { until } from './until.js';

export interface BareReplica {
  readonly storage: TieredStorage;
  readonly store: CacheStore;
}

export interface BareReplicas {
  /** The backend, once the file's beforeAll has started it. */
  readonly redis: RunningRedisBackend;
  /** One more replica, its shared tier under `keyPrefix`, open (it waits up to 5 s for Redis). */
  start(keyPrefix: string, log?: Logger): Promise<BareReplica>;
}

/**
 * Call at the top of a `describe.each(REDIS_BACKENDS)`: registers the beforeAll that starts the
 * backend, and the afterAll that resumes it (a case that failed may have left it paused), closes
 * every replica started, then stops it.
 */
export function bareReplicasOn(startBackend: RedisBackendStart): BareReplicas {
  let redis: RunningRedisBackend | undefined;
  const storages: TieredStorage[] = [];
  beforeAll(async () => {
    redis = await startBackend();
  }, 120_000);
  afterAll(async () => {
    redis?.resume();
    await Promise.all(storages.map((s) => s.close()));
    await redis?.stop();
  });
  const started = (): RunningRedisBackend => {
    if (!redis) throw new Error('bareReplicasOn: read `redis` inside a test, after beforeAll');
    return redis;
  };
  return {
    get redis() {
      return started();
    },
    async start(keyPrefix, log = pino({ level: 'silent' })) {
      const store = new CacheStore({ sharedMaxBytes: 1 << 22, sessionMaxBytes: 1 << 22, maxEntries: 1_000, graceMs: 0, staleIfErrorMs: 0, now: Date.now });
      const storage = new TieredStorage({ store, users: new SessionUsers(), now: Date.now, log }, (hooks) =>
        started().tier({ timeoutMs: 300, lockMs: 3_000, keyPrefix, ...hooks }),
      );
      storages.push(storage);
      await storage.open(5_000);
      return { storage, store };
    },
  };
}

/** An anonymous siteinfo answer at `url`, fresh for 10 minutes: its key in the shared tier, and a new entry each call. */
export function siteinfoEntry(url: string): { readonly key: string; entry(): CacheEntry } {
  return {
    key: `${url}\nanon\n-`,
    entry: () => ({
      status: 200,
      headers: { 'content-type': 'application/json' },
      body: Buffer.from('{"old":true}'),
      storedAt: Date.now(),
      ttlMs: 600_000,
      urlKey: url,
      modules: ['query', 'siteinfo'],
      slot: undefined,
      deps: ['*'],
    }),
  };
}

/** Until `replica` no longer holds `key` locally: a purge reached it over the shared tier's channel (at most 20 s). */
export async function untilPurgedFrom(replica: BareReplica, key: string): Promise<void> {
  await until(
    async () => replica.store.get('shared', key),
    (e) => e === undefined,
    20_000,
  );
}
