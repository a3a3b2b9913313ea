// GET /cache and /cache/stats in a cluster (cluster/inspect-workers.ts): the workers' answers
// merged, pure. One session seen by two workers and the shared tier has one number; its slot is
// not in the result; a worker that did not answer is listed with why.
import { describe, expect, it } from 'vitest';
import type { HeldVariants, LocalStats, SlottedVariant } from '../../src/apps/admin-inspect.js';
import type { VariantView } from '../../src/cache/inspect.js';
import { mergeCacheAnswers, sumStats } from '../../src/cluster/inspect-workers.js';

function variant(identity: VariantView['identity'], tier: 'local' | 'shared', slot?: string): SlottedVariant {
  const view: VariantView = {
    tier,
    part: slot === undefined ? 'shared' : 'session',
    identity,
    ...(slot !== undefined && { session: 7 }),
    keyedHeaders: null,
    status: 200,
    freshness: 'fresh',
    ageSeconds: 1,
    ttlSeconds: 60,
    ttlLeftSeconds: 59,
    bytes: 300,
    bodyBytes: 100,
    codings: ['identity'],
    modules: ['query+info'],
    dependencies: ['p:A'],
    clock: false,
  };
  return { view, slot };
}

const fulfilled = <T>(value: T): PromiseSettledResult<T> => ({ status: 'fulfilled', value });
const rejected = (why: string): PromiseSettledResult<never> => ({ status: 'rejected', reason: new Error(why) });

describe('merging the workers’ GET /cache answers', () => {
  it('marks each local copy with its worker, lists the shared tier once, numbers sessions across workers', () => {
    const first: HeldVariants = {
      local: [variant('anonymous', 'local'), variant('session', 'local', 'SLOT-B')],
      shared: [variant('session', 'shared', 'SLOT-A')],
    };
    const second: HeldVariants = { local: [variant('session', 'local', 'SLOT-A'), variant('session', 'local', 'SLOT-B')], shared: 'none' };
    const merged = mergeCacheAnswers('/w/api.php?a=1', [3, 4], [fulfilled(first), fulfilled(second)], true);
    expect(merged.variants.map((v) => [v.tier, (v as { worker?: number }).worker, v.session])).toEqual([
      ['local', 3, undefined],
      ['local', 3, 1],
      ['local', 4, 2],
      ['local', 4, 1],
      ['shared', undefined, 2],
    ]);
    expect(merged.workers).toBe(2);
    expect(merged.missedWorkers).toBeUndefined();
    expect(merged.sharedTier).toBeUndefined();
    expect(JSON.stringify(merged)).not.toContain('SLOT');
  });

  it('a worker that did not answer is listed; the first one missing leaves the shared tier unlisted, and says so', () => {
    const second: HeldVariants = { local: [variant('anonymous', 'local')], shared: 'none' };
    const merged = mergeCacheAnswers('/w/api.php?a=1', [3, 4], [rejected('worker 3: no answer within 5000 ms'), fulfilled(second)], true);
    expect(merged.missedWorkers).toEqual([{ worker: 3, error: 'worker 3: no answer within 5000 ms' }]);
    expect(merged.workers).toBe(1);
    expect(merged.sharedTier).toBe('not listed: the shared tier could not be asked');
    expect(merged.variants).toHaveLength(1);
  });

  it('nothing held anywhere: the note', () => {
    const none: HeldVariants = { local: [], shared: 'none' };
    expect(mergeCacheAnswers('/w/api.php?a=1', [1, 2], [fulfilled(none), fulfilled(none)], false)).toMatchObject({
      variants: [],
      note: 'nothing cached for this URL',
    });
  });
});

describe('summing the workers’ GET /cache/stats', () => {
  const stats = (n: number): LocalStats => ({
    local: { shared: { entries: n, bytes: 10 * n, budgetBytes: 1000, bodyBytes: 5 * n }, session: { entries: 1, bytes: 7, budgetBytes: 500, bodyBytes: 3 } },
    byModule: { 'query+info': { shared: n, session: 1 }, ...(n > 1 && { parse: { shared: 1, session: 0 } }) },
  });

  it('sums every part and module, and lists each worker', () => {
    const summed = sumStats([1, 2], [fulfilled(stats(1)), fulfilled(stats(2))]);
    expect(summed.local).toEqual({
      shared: { entries: 3, bytes: 30, budgetBytes: 2000, bodyBytes: 15 },
      session: { entries: 2, bytes: 14, budgetBytes: 1000, bodyBytes: 6 },
    });
    expect(summed.byModule).toEqual({ parse: { shared: 1, session: 0 }, 'query+info': { shared: 3, session: 2 } });
    expect(summed.workers.map((w) => w.worker)).toEqual([1, 2]);
    expect(summed.missedWorkers).toBeUndefined();
  });

  it('a worker that did not answer is listed, not counted', () => {
    const summed = sumStats([1, 2], [fulfilled(stats(2)), rejected('worker 2: worker exited')]);
    expect(summed.local.shared.entries).toBe(2);
    expect(summed.missedWorkers).toEqual([{ worker: 2, error: 'worker 2: worker exited' }]);
  });
});
