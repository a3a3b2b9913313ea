// While the change follower vouches, answers are stored for WIKIEDGE_TTL_FOLLOWED_SECONDS (1 h):
// the follower's rows invalidate them as the wiki changes. A single process's reload that turns
// WIKIEDGE_RC_FOLLOW off handed those entries to a gateway with nothing left to invalidate them,
// still fresh for up to an hour, with no gap, no log line and no alert. Now the old follower's
// stop takes a `follower-off` gap in the gateway that follows no changes (src/gateway/gateway.ts
// followerStopped), after the hand-over: they are refreshed at their next use. A reload that keeps
// following, or that never followed, keeps them fresh. The single process's generations, no Redis.
import pino from 'pino';
import { Registry } from 'prom-client';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { type Generation, Generations } from '../../src/cluster/generations.js';
import { ClusterMetrics, GENERATION_AGGREGATORS } from '../../src/cluster/metrics-aggregation.js';
import type { CacheEntry } from '../../src/cache/entry.js';
import type { Gateway } from '../../src/gateway/gateway.js';
import { answerPrivateEmptyJson } from '../support/gateway-on-fake.js';
import { FakeRecentChanges } from '../support/fake-recentchanges.js';
import { type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.js';
import { until } from '../support/until.js';

describe('a reload that turns the change follower off', () => {
  const wiki = new FakeRecentChanges();
  let fake: FakeUpstream;
  let gens: Generations | undefined;
  const log = pino({ level: 'silent' });
  const config = (follow: boolean) =>
    loadConfig({
      WIKIEDGE_UPSTREAM: fake.url,
      WIKIEDGE_HOST: '127.0.0.1',
      WIKIEDGE_PORT: '0',
      WIKIEDGE_ADMIN_PORT: '0',
      WIKIEDGE_SHUTDOWN_DRAIN_MS: '0',
      WIKIEDGE_RC_FOLLOW: String(follow),
      WIKIEDGE_RC_POLL_MS: '100',
    });

  beforeAll(async () => {
    // The wiki's clock is the gateway's: the follower's cursor is never behind it.
    wiki.clock = Date.now();
    fake = await startFakeUpstream((req, res) => {
      const url = req.url ?? '';
      if (url.includes('list=recentchanges') || url.includes('meta=siteinfo')) {
        wiki.clock = Date.now();
        return wiki.handler(req, res);
      }
      answerPrivateEmptyJson(req, res);
    });
  });
  afterEach(async () => {
    await gens?.close(config(false));
    gens = undefined;
  });
  afterAll(async () => {
    await fake?.close();
  });

  const URL = '/w/api.php?action=query&format=json&prop=info&titles=Followed';
  const KEY = `${URL}\nanon\n-`;

  /** An answer stored as a miss stores it: with the TTL defaults that apply now. */
  async function storeOne(gw: Gateway): Promise<CacheEntry> {
    const entry: CacheEntry = {
      status: 200,
      headers: { 'content-type': 'application/json' },
      body: Buffer.from('{"followed":true}'),
      storedAt: Date.now(),
      ttlMs: gw.changes.ttlDefaults().ttlPublicSeconds * 1000,
      urlKey: URL,
      modules: ['query', 'info'],
      slot: undefined,
      deps: ['p:Followed'],
    };
    expect(await gw.storage.store('shared', KEY, entry, await gw.storage.mark())).toBe(true);
    return entry;
  }

  async function start(follow: boolean): Promise<Gateway> {
    const metrics = new ClusterMetrics<Generation>((g) => g.built.gateway.registry.getMetricsAsJSON(), log, new Registry(), GENERATION_AGGREGATORS);
    gens = await Generations.start(config(follow), log, metrics, new Registry());
    const gw = gens.gateway.gateway;
    // Vouching: the long TTL defaults apply to what it stores.
    if (follow)
      await until(
        async () => gw.follower!.healthy,
        (healthy) => healthy,
      );
    return gw;
  }

  async function followerOffGaps(gw: Gateway): Promise<number> {
    const gaps = await gw.registry.getSingleMetric('wikiedge_change_follower_gaps_total')!.get();
    return gaps.values.find((v) => v.labels['reason'] === 'follower-off')?.value ?? -1;
  }

  it('on to off: what was stored under the followed TTL is handed over and refreshed at its next use, one gap', async () => {
    const old = await start(true);
    const entry = await storeOne(old);
    expect(entry.ttlMs).toBe(3_600_000);

    await gens!.replace(config(false));
    const next = gens!.gateway.gateway;
    expect(next.follower).toBeUndefined();
    const handed = next.store.get('shared', KEY);
    expect(handed, 'handed over').toBeDefined();
    expect(next.storage.freshness(handed!)).not.toBe('fresh');
    expect(await followerOffGaps(next)).toBe(1);
    // What the new gateway stores from now on is fresh, under the short TTL.
    const fresh = await storeOne(next);
    expect(fresh.ttlMs).toBe(next.config.ttlPublicSeconds * 1000);
    expect(next.storage.freshness(next.store.get('shared', KEY)!)).toBe('fresh');
  });

  it('on to on: the new follower vouches on, the entry stays fresh, no gap', async () => {
    const old = await start(true);
    await storeOne(old);
    await gens!.replace(config(true));
    const next = gens!.gateway.gateway;
    expect(next.storage.freshness(next.store.get('shared', KEY)!)).toBe('fresh');
    expect(await followerOffGaps(next)).toBe(0);
  });

  it('off to off: nothing was followed, the entry stays fresh, no gap', async () => {
    const old = await start(false);
    const entry = await storeOne(old);
    expect(entry.ttlMs).toBe(old.config.ttlPublicSeconds * 1000);
    await gens!.replace(config(false));
    const next = gens!.gateway.gateway;
    expect(next.storage.freshness(next.store.get('shared', KEY)!)).toBe('fresh');
    expect(await followerOffGaps(next)).toBe(0);
  });
});
