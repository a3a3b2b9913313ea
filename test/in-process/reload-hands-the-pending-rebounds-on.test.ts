// A reload retires the old gateway while its change signals may still owe rebounds (a change's
// tags invalidated again WIKIEDGE_REBOUND_PURGE_MS later: src/invalidation/signals.ts). Made by
// the old gateway at its close, they came early and reached only its own tiers, while the entries
// it held (an answer read before the wiki's post-send updates among them) went to the next
// gateway with the hand-over and were kept. The next gateway now makes each when it was due, on
// what it serves from (src/cluster/generations.ts retire). The single process's generations, no
// Redis.
import pino from 'pino';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { type Generation, Generations } from '../../src/cluster/generations.js';
import { ClusterMetrics, GENERATION_AGGREGATORS } from '../../src/cluster/metrics-aggregation.js';
import { answerPrivateEmptyJson } from '../support/gateway-on-fake.js';
import { type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.js';
import type { CacheEntry } from '../../src/cache/entry.js';
import { until } from '../support/until.js';

describe('a reload with rebounds pending', () => {
  let wiki: FakeUpstream;
  let gens: Generations | undefined;
  const log = pino({ level: 'silent' });
  const config = () =>
    loadConfig({
      WIKIEDGE_UPSTREAM: wiki.url,
      WIKIEDGE_HOST: '127.0.0.1',
      WIKIEDGE_PORT: '0',
      WIKIEDGE_ADMIN_PORT: '0',
      WIKIEDGE_SHUTDOWN_DRAIN_MS: '0',
      WIKIEDGE_REBOUND_PURGE_MS: '3000',
    });

  beforeAll(async () => {
    wiki = await startFakeUpstream(answerPrivateEmptyJson);
  });
  afterAll(async () => {
    await gens?.close(config());
    await wiki?.close();
  });

  const URL = '/w/api.php?action=query&format=json&prop=info&titles=Rebound';
  const entry = (): CacheEntry => ({
    status: 200,
    headers: { 'content-type': 'application/json' },
    body: Buffer.from('{"old":true}'),
    storedAt: Date.now(),
    ttlMs: 600_000,
    urlKey: URL,
    modules: ['query', 'info'],
    slot: undefined,
    deps: ['p:Rebound'],
  });

  it('the next gateway makes them when they are due, on the entries it took over', async () => {
    const metrics = new ClusterMetrics<Generation>((g) => g.built.gateway.registry.getMetricsAsJSON(), log, new Registry(), GENERATION_AGGREGATORS);
    gens = await Generations.start(config(), log, metrics, new Registry());
    await new Promise<void>((resolve) => gens!.front.listen(0, '127.0.0.1', resolve));
    const old = gens.gateway.gateway;
    await old.changes.apply([{ source: 'purge', type: 'edit', tags: ['p:Rebound'], users: [], at: undefined }]);
    // Read in between, and kept: the change's own invalidation is behind it.
    const key = `${URL}\nanon\n-`;
    expect(await old.storage.store('shared', key, entry(), await old.storage.mark())).toBe(true);
    expect(old.changes.pendingRebounds).toBe(1);

    await gens.replace(config());
    const next = gens.gateway.gateway;
    expect(next).not.toBe(old);
    // Handed over with the local tier, then its rebound with the old gateway's retirement.
    expect(next.store.get('shared', key)).toBeDefined();
    await until(
      async () => next.changes.pendingRebounds,
      (n) => n === 1,
    );
    expect(old.changes.pendingRebounds).toBe(0);
    await until(
      async () => next.store.get('shared', key),
      (e) => e === undefined,
    );
  });
});
