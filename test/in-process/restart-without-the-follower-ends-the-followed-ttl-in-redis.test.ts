// Replicas that followed recentchanges stored their answers in Redis for
// WIKIEDGE_TTL_FOLLOWED_SECONDS (1 h). Restarted with WIKIEDGE_RC_FOLLOW=false (or with the last
// follower gone while they run), nothing invalidates those entries any more, and every replica
// served them as fresh for up to an hour: no gap, no alert. A gateway that follows no changes now
// watches the follower's cursor in Redis (src/gateway/gateway.ts endFollowedTtlInRedis): once
// nobody has vouched for as long as a standby follower waits before its `stalled` gap, a
// `follower-off` gap, dated when the last follower's vouch ran out, everywhere (Redis'
// stale-before mark). While a follower polls on (another replica) no gap: its rows reach this
// replica over the purge channel.
import { existsSync } from 'node:fs';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CacheEntry } from '../../src/cache/entry.js';
import { loadConfig } from '../../src/config/config.js';
import type { Cursor } from '../../src/invalidation/follower.js';
import { createGateway, type Gateway } from '../../src/gateway/gateway.js';
import { answerPrivateEmptyJson } from '../support/gateway-on-fake.js';
import { type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.js';
import { startRedis, type TestRedis } from '../support/redis.js';
import { until } from '../support/until.js';

describe.runIf(existsSync('/usr/bin/redis-server'))('a gateway that follows no changes, started beside a Redis a follower vouched for', () => {
  let redis: TestRedis;
  let wiki: FakeUpstream;
  const gateways: Gateway[] = [];
  const lines: string[] = [];
  const log = pino({ level: 'info' }, { write: (line: string) => void lines.push(line) });
  let prefixes = 0;

  beforeAll(async () => {
    redis = await startRedis();
    wiki = await startFakeUpstream(answerPrivateEmptyJson);
  });
  afterAll(async () => {
    for (const gw of gateways) await gw.changes.close();
    await Promise.all(gateways.map((gw) => Promise.all([gw.storage.close(), gw.upstream.close()])));
    await wiki?.close();
    await redis?.stop();
  });

  async function replica(prefix: string, sink: string[] = lines): Promise<Gateway> {
    const config = loadConfig({
      WIKIEDGE_UPSTREAM: wiki.url,
      WIKIEDGE_REDIS_URL: redis.url,
      WIKIEDGE_REDIS_KEY_PREFIX: prefix,
      WIKIEDGE_REDIS_TIMEOUT_MS: '2000',
      WIKIEDGE_IDENTITY_SECRET: 'redis-tests-share-this-identity-secret',
      WIKIEDGE_RC_FOLLOW: 'false',
      // A follower's standby takes its `stalled` gap after max(this, the unhealthy time: 10 s),
      // and so does a replica that watches the cursor: 10 s here.
      WIKIEDGE_TTL_PUBLIC_SECONDS: '5',
    });
    const gw = createGateway(config, sink === lines ? log : pino({ level: 'info' }, { write: (line: string) => void sink.push(line) }));
    gateways.push(gw);
    await gw.storage.open(5_000);
    return gw;
  }

  const cursor = (polledAt: number): Cursor => ({ v: 2, ts: '2026-11-30T12:00:00Z', id: 7, floorTs: '2026-11-30T11:59:00Z', floorId: 0, seen: [], polledAt });

  function entry(name: string, storedAt: number): CacheEntry {
    return {
      status: 200,
      headers: { 'content-type': 'application/json' },
      body: Buffer.from(`{"${name}":true}`),
      storedAt,
      ttlMs: 3_600_000,
      urlKey: `/w/api.php?action=query&format=json&prop=info&titles=${name}`,
      modules: ['query', 'info'],
      slot: undefined,
      deps: [`p:${name}`],
    };
  }

  /** Redis GETs so far (the watchers' reads of the cursor among them). */
  async function cursorReads(): Promise<number> {
    const stats = await redis.command('INFO commandstats');
    return Number(/cmdstat_get:calls=(\d+)/.exec(stats)?.[1] ?? 0);
  }

  async function followerOffGaps(gw: Gateway): Promise<number> {
    const gaps = await gw.registry.getSingleMetric('wikiedge_change_follower_gaps_total')!.get();
    return gaps.values.find((v) => v.labels['reason'] === 'follower-off')?.value ?? -1;
  }

  it('nobody vouches any more: the entries stored while a follower did are not fresh, everywhere; those stored since are', async () => {
    const prefix = `restart-off-${++prefixes}:`;
    // A replica that was up before (it follows no changes either: it may read the cursor too,
    // and take the same gap, of the same date).
    const before = await replica(prefix);
    const now = Date.now();
    // The last follower vouched 30 s ago; it stayed healthy for 10 s more (the unhealthy time),
    // and nobody took its place within 10 s.
    const lastVouched = now - 30_000;
    await before.storage.followerState!.saveCursor(cursor(lastVouched));
    const followed = entry('Followed', now - 35_000);
    const since = entry('Since', now - 5_000);
    const key = (e: CacheEntry) => `${e.urlKey}\nanon\n-`;
    expect(await before.storage.store('shared', key(followed), followed, await before.storage.mark())).toBe(true);
    expect(await before.storage.store('shared', key(since), since, await before.storage.mark())).toBe(true);

    const restarted = await replica(prefix);
    // One of the two takes it (whichever reads the cursor first; both, if they read it at once),
    // the other finds it in Redis.
    await until(
      async () => (await followerOffGaps(before)) + (await followerOffGaps(restarted)),
      (n) => n >= 1,
    );
    // In Redis: the mark every replica applies, and those started later.
    expect(await redis.command(`GET ${prefix}stale-before`)).toContain(String(lastVouched + 10_000));
    // The replica that was up heard it on the purge channel.
    await until(
      async () => before.storage.freshness(followed),
      (f) => f !== 'fresh',
    );
    expect(before.storage.freshness(since)).toBe('fresh');
    const found = await restarted.storage.lookup('shared', key(followed));
    expect(found).toBeDefined();
    expect(restarted.storage.freshness(found!.entry)).not.toBe('fresh');
    const kept = await restarted.storage.lookup('shared', key(since));
    expect(restarted.storage.freshness(kept!.entry)).toBe('fresh');

    // A replica restarted later within the followed TTL finds the gap in Redis' mark: no gap of
    // its own (each would refuse every replica's stores under way and tell them all again).
    const own: string[] = [];
    const later = await replica(prefix, own);
    await until(
      async () => own.some((l) => l.includes('the gap for the last follower is in redis already')),
      (seen) => seen,
    );
    expect(await followerOffGaps(later)).toBe(0);
  });

  it('a follower polls on (another replica): no gap while it does; once it stops, the gap', async () => {
    const prefix = `restart-off-${++prefixes}:`;
    const leader = await replica(prefix);
    const state = leader.storage.followerState!;
    // The leader's polls, each saving its cursor. Its polledAt 8 s back: within the 10 s the
    // watching replica waits out before it reads the cursor again, with 2 s to spare for a busy
    // host between a poll and a read.
    let lastVouched = 0;
    const poll = () => state.saveCursor(cursor((lastVouched = Date.now() - 8_000)));
    await poll();
    const polls = setInterval(() => void poll(), 100);
    lines.length = 0;
    const restarted = await replica(prefix);
    const vouches = () => lines.filter((l) => l.includes('a follower vouches for what Redis holds')).length;
    try {
      await until(
        async () => vouches(),
        (n) => n > 0,
      );
      // Read again since (each watcher reads the cursor about every 2 s here), the leader still polling.
      const reads = await cursorReads();
      await until(
        async () => (await cursorReads()) - reads,
        (n) => n >= 3,
      );
      expect(await followerOffGaps(restarted)).toBe(0);
      expect(await followerOffGaps(leader)).toBe(0);
    } finally {
      clearInterval(polls);
    }
    // The leader stopped (restarted with the follower off, or gone): a replica that watches (the
    // restarted one, or the leader's own process, which follows no changes either) takes the
    // gap, dated when the leader's last vouch ran out.
    await until(
      async () => (await followerOffGaps(restarted)) + (await followerOffGaps(leader)),
      (n) => n >= 1,
    );
    expect(await redis.command(`GET ${prefix}stale-before`)).toContain(String(lastVouched + 10_000));
  });

  it('no follower ever vouched under this prefix: no gap', async () => {
    const prefix = `restart-off-${++prefixes}:`;
    const gw = await replica(prefix);
    await gw.storage.followerState!.loadCursor();
    expect(await followerOffGaps(gw)).toBe(0);
  });
});
