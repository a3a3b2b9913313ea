// A reload retires the old gateway while it may still owe its shared tier purges (made while Redis
// could not be reached: `redisPurged: null`, src/cache/tiered-storage.ts). The next gateway carries
// them once Redis answers (reload-carries-the-purges-the-old-gateway-owed) when it shares under
// the same WIKIEDGE_REDIS_KEY_PREFIX, even if the reload changed another of the keys that keep the
// local tier from being handed over (config/reload-keys.ts WIKI_KEYS): the Redis tier still holds
// what those purges removed, and it reads them. Under another prefix they are for a keyspace the
// next gateway does not use: it took them all the same, and carried them (a gap, a full purge:
// all of its new keyspace) where they were never meant to go. They stay with the old gateway,
// whose close tries them once more and logs how many it drops (src/cluster/generations.ts
// owedPurgesFollow). A purge the old gateway comes to owe after they were taken, while it closes,
// and that its close cannot carry, was dropped: the next gateway takes it once the old one has
// closed. The single process's generations, on one redis-server and on a Redis Cluster,
// stopped (SIGSTOP) and resumed (test/support/redis-backends.ts).
import pino from 'pino';
import { Registry } from 'prom-client';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { type Generation, Generations } from '../../src/cluster/generations.js';
import { ClusterMetrics, GENERATION_AGGREGATORS } from '../../src/cluster/metrics-aggregation.js';
import { bareReplicasOn, siteinfoEntry, untilPurgedFrom } from '../support/bare-replicas.js';
import { answerPrivateEmptyJson } from '../support/gateway-on-fake.js';
import { type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.js';
import { REDIS_BACKENDS, redisInstalled } from '../support/redis-backends.js';

describe.runIf(redisInstalled).each(REDIS_BACKENDS)('a reload while %s cannot be reached, with purges owed', (_name, start) => {
  const backend = bareReplicasOn(start);
  let wikiA: FakeUpstream;
  let wikiB: FakeUpstream;
  let gens: Generations | undefined;
  const lines: Record<string, unknown>[] = [];
  const log = pino({ level: 'info' }, { write: (s: string) => lines.push(JSON.parse(s)) });

  beforeAll(async () => {
    [wikiA, wikiB] = [await startFakeUpstream(answerPrivateEmptyJson), await startFakeUpstream(answerPrivateEmptyJson)];
  });
  afterEach(async () => {
    backend.redis.resume();
    await gens?.close(config(wikiA, 'any:'));
    gens = undefined;
    lines.length = 0;
  });
  afterAll(async () => {
    await Promise.all([wikiA?.close(), wikiB?.close()]);
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
      ...backend.redis.env,
    });

  /** The single process's generations (src/cluster/single.ts), its front listening on a free port. */
  async function generations(wiki: FakeUpstream, keyPrefix: string): Promise<Generations> {
    const metrics = new ClusterMetrics<Generation>((g) => g.built.gateway.registry.getMetricsAsJSON(), log, new Registry(), GENERATION_AGGREGATORS);
    gens = await Generations.start(config(wiki, keyPrefix), log, metrics, new Registry());
    await new Promise<void>((resolve) => gens!.front.listen(0, '127.0.0.1', resolve));
    return gens;
  }

  const URL = '/w/api.php?action=query&format=json&meta=siteinfo&prefixed=1';
  const { key: KEY, entry } = siteinfoEntry(URL);

  it('under another WIKIEDGE_REDIS_KEY_PREFIX the next gateway takes none of them; the old one says how many it drops', async () => {
    const g = await generations(wikiA, 'wiki-a:');
    backend.redis.pause();
    expect(await g.gateway.gateway.storage.purge({ kind: 'url', urlKey: URL })).toMatchObject({ redisPurged: null });

    await g.replace(config(wikiB, 'wiki-b:'));
    expect(await g.gateway.gateway.storage.takeOwed(), 'owed by the next gateway').toEqual({ messages: [], overflow: false });
    expect(lines.filter((l) => l['redisPurge'] === 'dropped')).toEqual([expect.objectContaining({ owed: 1, overflow: false })]);
  });

  it('under the same prefix, another wiki too, the next gateway carries them to Redis and the other replicas once Redis answers', async () => {
    const g = await generations(wikiA, 'same:');
    const other = await backend.start('same:');
    expect(await other.storage.store('shared', KEY, entry(), await other.storage.mark())).toBe(true);
    backend.redis.pause();
    expect(await g.gateway.gateway.storage.purge({ kind: 'url', urlKey: URL })).toMatchObject({ redisPurged: null });

    await g.replace(config(wikiB, 'same:'));
    expect(lines.filter((l) => l['redisPurge'] === 'dropped')).toEqual([]);
    backend.redis.resume();
    await untilPurgedFrom(other, KEY);
    expect(lines.some((l) => l['redisPurge'] === 'carried')).toBe(true);
  });

  it('a purge the old gateway comes to owe after its purges were taken (its follower, its confirmations and its channel run until its close) is handed on once it has closed', async () => {
    const g = await generations(wikiA, 'late:');
    const other = await backend.start('late:');
    expect(await other.storage.store('shared', KEY, entry(), await other.storage.mark())).toBe(true);
    backend.redis.pause();
    // Between the take and the close, as a poll of the retiring follower applies its rows.
    const old = g.gateway.gateway.storage;
    const take = old.takeOwed.bind(old);
    old.takeOwed = async () => {
      const taken = await take();
      old.takeOwed = take;
      expect(await old.purge({ kind: 'url', urlKey: URL })).toMatchObject({ redisPurged: null });
      return taken;
    };
    await g.replace(config(wikiB, 'late:'));
    expect(await old.takeOwed(), 'left with the old gateway').toEqual({ messages: [], overflow: false });
    backend.redis.resume();
    await untilPurgedFrom(other, KEY);
    expect(lines.some((l) => l['redisPurge'] === 'carried')).toBe(true);
  });
});
