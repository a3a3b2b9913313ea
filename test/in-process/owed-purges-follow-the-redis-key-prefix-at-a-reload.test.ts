// A reload retires the old gateway while it may still owe its shared tier purges (made while Redis
// could not be reached: `redisPurged: null`, src/cache/tiered-storage.ts). The next gateway carries
// them once Redis answers (reload-carries-the-purges-the-old-gateway-owed) when it shares under
// the same WIKIEDGE_REDIS_KEY_PREFIX, even if the reload changed another of the keys that keep the
// local tier from being handed over (config/reload-keys.ts WIKI_KEYS): the Redis tier still holds
// what those purges removed, and it reads them. Under another prefix they are for a keyspace the
// next gateway does not use: it took them all the same, and carried them (a gap, a full purge:
// all of its new keyspace) where they were never meant to go. They stay with the old gateway,
// whose close tries them once more and logs how many it drops (src/cluster/generations.ts
// owedPurgesFollow). The single process's generations, on one redis-server and on a Redis Cluster,
// stopped (SIGSTOP) and resumed (test/support/redis-backends.ts).
import pino from 'pino';
import { Registry } from 'prom-client';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { CacheEntry } from '../../src/cache/entry.js';
import { CacheStore } from '../../src/cache/store.js';
import { TieredStorage } from '../../src/cache/tiered-storage.js';
import { loadConfig } from '../../src/config/config.js';
import { type Generation, Generations } from '../../src/cluster/generations.js';
import { ClusterMetrics, GENERATION_AGGREGATORS } from '../../src/cluster/metrics-aggregation.js';
import { SessionUsers } from '../../src/policy/session-users.js';
import { answerPrivateEmptyJson } from '../support/gateway-on-fake.js';
import { type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.js';
import { REDIS_BACKENDS, redisInstalled, type RunningRedisBackend } from '../support/redis-backends.js';
import { until } from '../support/until.js';

describe.runIf(redisInstalled).each(REDIS_BACKENDS)('a reload while %s cannot be reached, with purges owed', (_name, start) => {
  let redis: RunningRedisBackend;
  let wikiA: FakeUpstream;
  let wikiB: FakeUpstream;
  let gens: Generations | undefined;
  const storages: TieredStorage[] = [];
  const lines: Record<string, unknown>[] = [];
  const log = pino({ level: 'info' }, { write: (s: string) => lines.push(JSON.parse(s)) });

  beforeAll(async () => {
    redis = await start();
    [wikiA, wikiB] = [await startFakeUpstream(answerPrivateEmptyJson), await startFakeUpstream(answerPrivateEmptyJson)];
  }, 120_000);
  afterEach(async () => {
    redis?.resume();
    await gens?.close(config(wikiA, 'any:'));
    gens = undefined;
    lines.length = 0;
  });
  afterAll(async () => {
    redis?.resume();
    await Promise.all(storages.map((s) => s.close()));
    await Promise.all([wikiA?.close(), wikiB?.close()]);
    await redis?.stop();
  });

  const config = (wiki: FakeUpstream, keyPrefix: string) =>
    loadConfig({
      WIKIEDGE_UPSTREAM: wiki.url,
      WIKIEDGE_HOST: '127.0.0.1',
      WIKIEDGE_PORT: '0',
      WIKIEDGE_ADMIN_PORT: '0',
      WIKIEDGE_IDENTITY_SECRET: 'redis-tests-share-this-identity-secret',
      WIKIEDGE_REDIS_KEY_PREFIX: keyPrefix,
      WIKIEDGE_REDIS_TIMEOUT_MS: '300',
      WIKIEDGE_SHUTDOWN_DRAIN_MS: '0',
      ...redis.env,
    });

  /** The single process's generations (src/cluster/single.ts), its front listening on a free port. */
  async function generations(wiki: FakeUpstream, keyPrefix: string): Promise<Generations> {
    const metrics = new ClusterMetrics<Generation>((g) => g.built.gateway.registry.getMetricsAsJSON(), log, new Registry(), GENERATION_AGGREGATORS);
    gens = await Generations.start(config(wiki, keyPrefix), log, metrics, new Registry());
    await new Promise<void>((resolve) => gens!.front.listen(0, '127.0.0.1', resolve));
    return gens;
  }

  async function replica(keyPrefix: string) {
    const store = new CacheStore({ sharedMaxBytes: 1 << 22, sessionMaxBytes: 1 << 22, maxEntries: 1_000, graceMs: 0, staleIfErrorMs: 0, now: Date.now });
    const storage = new TieredStorage({ store, users: new SessionUsers(), now: Date.now, log: pino({ level: 'silent' }) }, (hooks) =>
      redis.tier({ timeoutMs: 300, lockMs: 3_000, keyPrefix, ...hooks }),
    );
    storages.push(storage);
    await storage.open(5_000);
    return { storage, store };
  }

  const URL = '/w/api.php?action=query&format=json&meta=siteinfo&prefixed=1';
  const KEY = `${URL}\nanon\n-`;
  const entry = (): CacheEntry => ({
    status: 200,
    headers: { 'content-type': 'application/json' },
    body: Buffer.from('{"old":true}'),
    storedAt: Date.now(),
    ttlMs: 600_000,
    urlKey: URL,
    modules: ['query', 'siteinfo'],
    slot: undefined,
    deps: ['*'],
  });

  it('under another WIKIEDGE_REDIS_KEY_PREFIX the next gateway takes none of them; the old one says how many it drops', async () => {
    const g = await generations(wikiA, 'wiki-a:');
    redis.pause();
    expect(await g.gateway.gateway.storage.purge({ kind: 'url', urlKey: URL })).toMatchObject({ redisPurged: null });

    await g.replace(config(wikiB, 'wiki-b:'));
    expect(await g.gateway.gateway.storage.takeOwed(), 'owed by the next gateway').toEqual({ messages: [], overflow: false });
    expect(lines.filter((l) => l['redisPurge'] === 'dropped')).toEqual([expect.objectContaining({ owed: 1, overflow: false })]);
  });

  it('under the same prefix, another wiki too, the next gateway carries them to Redis and the other replicas once Redis answers', async () => {
    const g = await generations(wikiA, 'same:');
    const other = await replica('same:');
    expect(await other.storage.store('shared', KEY, entry(), await other.storage.mark())).toBe(true);
    redis.pause();
    expect(await g.gateway.gateway.storage.purge({ kind: 'url', urlKey: URL })).toMatchObject({ redisPurged: null });

    await g.replace(config(wikiB, 'same:'));
    expect(lines.filter((l) => l['redisPurge'] === 'dropped')).toEqual([]);
    redis.resume();
    await until(
      async () => other.store.get('shared', KEY),
      (e) => e === undefined,
      20_000,
    );
    expect(lines.some((l) => l['redisPurge'] === 'carried')).toBe(true);
  });
});
