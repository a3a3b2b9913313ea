// Where a change is applied (src/invalidation/signals.ts): everywhere by default (Redis, this
// process, the other replicas and workers), or in this process only — what a worker of a cluster
// without Redis does with what its own follower read, since each of its siblings follows too.
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import type { PurgeMessage, PurgeResult } from '../../src/cache/purge.js';
import { changeFromRow } from '../../src/policy/changes.js';
import { ChangeSignals } from '../../src/invalidation/signals.js';

function signals() {
  const everywhere: PurgeMessage[] = [];
  const here: PurgeMessage[] = [];
  const s = new ChangeSignals({
    purge: (m): Promise<PurgeResult> => (everywhere.push(m), Promise.resolve({ purged: 1 })),
    purgeHere: (m): Promise<PurgeResult> => (here.push(m), Promise.resolve({ purged: 1 })),
    metrics: { event: () => undefined, invalidated: () => undefined, lag: () => undefined },
    log: pino({ level: 'silent' }),
    now: () => 0,
    shortTtl: { ttlPublicSeconds: 60, ttlSessionSeconds: 10 },
    followedTtl: { ttlPublicSeconds: 3600, ttlSessionSeconds: 300 },
    reboundMs: 0,
  });
  return { s, everywhere, here };
}
const edit = changeFromRow({ type: 'edit', ns: 0, title: 'Page', rcid: 1, timestamp: '2026-03-01T12:00:00Z' });
const block = changeFromRow({ type: 'log', ns: 2, title: 'User:Vandal', rcid: 2, timestamp: '2026-03-01T12:00:00Z', logtype: 'block', logaction: 'block' });

describe('the reach of a change', () => {
  it('everywhere by default: tags, users and gaps', async () => {
    const { s, everywhere, here } = signals();
    await s.apply([edit, block]);
    await s.expire(5, 'stalled');
    expect(everywhere.map((m) => m.kind)).toEqual(['tags', 'user', 'expire']);
    expect(here).toEqual([]);
  });

  it('here only: tags and gaps are not relayed', async () => {
    const { s, here } = signals();
    await s.apply([edit, block], 'here');
    await s.expire(5, 'stalled', 'here');
    expect(here.map((m) => m.kind)).toEqual(['tags', 'expire']);
  });

  it("here only, a user's rights change is relayed all the same: only this process may know which sessions are the user's", async () => {
    const { s, everywhere } = signals();
    await s.apply([edit, block], 'here');
    expect(everywhere).toEqual([{ kind: 'user', user: 'Vandal' }]);
  });
});
