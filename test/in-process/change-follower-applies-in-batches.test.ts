// Invalidations from a burst are applied in batches: the change follower hands its rows over in
// a bounded number of apply calls (APPLY_BATCH_ROWS rows each at most), and the change signals
// (src/invalidation/signals.ts) make one store invalidation of each call, the tags of all its rows
// merged, and name each user once however many rows name it (a mass block).
import pino from 'pino';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PurgeMessage } from '../../src/cache/purge.js';
import { APPLY_BATCH_ROWS } from '../../src/invalidation/follower.js';
import { ChangeSignals } from '../../src/invalidation/signals.js';
import { ChangeSignalMetrics } from '../../src/observe/change-metrics.js';
import { changeFromRow } from '../../src/policy/changes.js';
import type { FakeUpstream } from '../support/fake-upstream.js';
import { type FakeRecentChanges, followerOf, startFakeWiki } from '../support/fake-recentchanges.js';

const N = 10_000;

describe('invalidations from a burst are applied in batches', () => {
  let wiki: FakeRecentChanges;
  let server: FakeUpstream;
  beforeAll(async () => {
    ({ wiki, upstream: server } = await startFakeWiki());
  });
  afterAll(() => server.close());

  it(`${N} rows: at most ceil(N / APPLY_BATCH_ROWS) + 1 apply calls, every row in one of them`, async () => {
    wiki.rows.length = 0;
    wiki.add('History');
    const f = followerOf(server.url, { now: wiki.clock });
    try {
      await f.follower.pollOnce();
      f.applyCalls.length = 0;
      wiki.clock += 5_000;
      const t = wiki.clock;
      wiki.addMany(N, 'Row', () => t);
      await f.follower.pollOnce();
      expect(f.applyCalls.reduce((a, b) => a + b, 0)).toBe(N);
      expect(f.applyCalls.length).toBeLessThanOrEqual(Math.ceil(N / APPLY_BATCH_ROWS) + 1);
      expect(Math.max(...f.applyCalls)).toBeLessThanOrEqual(APPLY_BATCH_ROWS + 500);
    } finally {
      await f.close();
    }
  });

  it('the signals make one store invalidation of a batch, and one user purge per user named', async () => {
    const purges: PurgeMessage[] = [];
    const purge = (m: PurgeMessage) => (purges.push(m), Promise.resolve({ purged: 0 }));
    const signals = new ChangeSignals({
      purge,
      purgeHere: purge,
      metrics: new ChangeSignalMetrics(new Registry()),
      log: pino({ level: 'silent' }),
      now: () => Date.parse('2026-03-01T12:00:10Z'),
      shortTtl: { ttlPublicSeconds: 60, ttlSessionSeconds: 10 },
      followedTtl: { ttlPublicSeconds: 3_600, ttlSessionSeconds: 300 },
      reboundMs: 0,
    });
    const rows = Array.from({ length: APPLY_BATCH_ROWS }, (_, i) =>
      i % 2 === 0
        ? { type: 'edit', ns: 0, title: `Page ${i}`, pageid: i + 1, rcid: i + 1, timestamp: '2026-03-01T12:00:00Z' }
        : { type: 'log', ns: 2, title: 'User:Vandal', logtype: 'block', logaction: 'reblock', rcid: i + 1, timestamp: '2026-03-01T12:00:00Z' },
    );
    await signals.apply(rows.map((r) => changeFromRow(r)));
    expect(purges.filter((p) => p.kind === 'tags')).toHaveLength(1);
    expect(purges.filter((p) => p.kind === 'user')).toEqual([{ kind: 'user', user: 'Vandal' }]);
    const tags = purges.find((p) => p.kind === 'tags') as { readonly tags: readonly string[] };
    expect(tags.tags).toContain('p:Page 0');
    expect(tags.tags).toContain(`p:Page ${APPLY_BATCH_ROWS - 2}`);
  });
});
