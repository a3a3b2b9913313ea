// A purge in a cluster (src/cluster/purge-fan-out.ts): the leader purges Redis once, every other
// worker its local tier (with Redis before and after the leader); the admin's answer counts what was removed and which workers did
// not answer. A worker's own purge is relayed to its siblings. Workers are plain objects.
import type { Logger } from 'pino';
import { describe, expect, it } from 'vitest';
import type { PurgeMessage, PurgeResult } from '../../src/cache/purge.js';
import { PurgeFanOut, purgeOutcome } from '../../src/cluster/purge-fan-out.js';

const ok = (value: PurgeResult): PromiseSettledResult<PurgeResult> => ({ status: 'fulfilled', value });
const missed: PromiseSettledResult<PurgeResult> = { status: 'rejected', reason: new Error('worker 2: no answer within 30000 ms') };

describe('purgeOutcome', () => {
  it('without Redis: the sum of the local purges, and no redisPurged', () => {
    const r = purgeOutcome(ok({ purged: 3 }), [ok({ purged: 2 })], false);
    expect(r).toEqual({ purged: 5, workers: 2, missedWorkers: 0 });
    expect('redisPurged' in r).toBe(false);
  });

  it('with Redis: Redis’s count is the leader’s', () => {
    const r = purgeOutcome(ok({ purged: 3, redisPurged: 7 }), [ok({ purged: 2 }), ok({ purged: 0 })], true);
    // What the admin client reads, key order included.
    expect(JSON.stringify(r)).toBe('{"purged":5,"redisPurged":7,"workers":3,"missedWorkers":0}');
  });

  it('with Redis unreachable, the leader’s null is passed on', () => {
    expect(purgeOutcome(ok({ purged: 3, redisPurged: null }), [ok({ purged: 2 })], true)).toEqual({
      purged: 5,
      redisPurged: null,
      workers: 2,
      missedWorkers: 0,
    });
  });

  it('a leader that did not answer: Redis may not be purged (null), one worker missed', () => {
    expect(purgeOutcome(missed, [ok({ purged: 2 })], true)).toEqual({ purged: 2, redisPurged: null, workers: 1, missedWorkers: 1 });
    expect(purgeOutcome(missed, [ok({ purged: 2 })], false)).toEqual({ purged: 2, workers: 1, missedWorkers: 1 });
  });

  it('other workers that did not answer are counted as missed', () => {
    expect(purgeOutcome(ok({ purged: 1 }), [missed, ok({ purged: 4 }), missed], false)).toEqual({
      purged: 5,
      workers: 2,
      missedWorkers: 2,
    });
  });

  it('no worker listening: nothing purged, nobody missed, Redis not purged', () => {
    expect(purgeOutcome(undefined, [], false)).toEqual({ purged: 0, workers: 0, missedWorkers: 0 });
    expect(purgeOutcome(undefined, [], true)).toEqual({ purged: 0, redisPurged: null, workers: 0, missedWorkers: 0 });
  });
});

interface W {
  readonly id: number;
}
const message: PurgeMessage = { kind: 'all' };

/** Workers whose purge answers the test controls; every ask is recorded in order. */
function fanOut(withRedis: boolean, answer: (w: W, everywhere: boolean) => Promise<PurgeResult>) {
  const asked: { worker: number; everywhere: boolean }[] = [];
  const warnings: { worker: number; msg: string }[] = [];
  const log = { warn: (o: { worker: number }, msg: string) => warnings.push({ worker: o.worker, msg }) } as unknown as Logger;
  const purges = new PurgeFanOut<W>(
    (w, m, everywhere) => {
      expect(m).toBe(message);
      asked.push({ worker: w.id, everywhere });
      return answer(w, everywhere);
    },
    withRedis,
    log,
  );
  return { purges, asked, warnings };
}

describe('PurgeFanOut', () => {
  it('with Redis: the others purge their local tier before the leader (their copies counted), the leader everywhere, the others again after it', async () => {
    let leaderAnswers!: (r: PurgeResult) => void;
    let second = false;
    const f = fanOut(true, (w) =>
      w.id === 1 ? new Promise<PurgeResult>((resolve) => (leaderAnswers = resolve)) : Promise.resolve({ purged: second ? 1 : 3 }),
    );
    const result = f.purges.purge([{ id: 1 }, { id: 2 }, { id: 3 }], message);
    await new Promise((r) => setImmediate(r));
    expect(f.asked).toEqual([
      { worker: 2, everywhere: false },
      { worker: 3, everywhere: false },
      { worker: 1, everywhere: true },
    ]);
    second = true;
    leaderAnswers({ purged: 2, redisPurged: 9 });
    // 2 (leader) + 3 + 3 (before) + 1 + 1 (copies refilled meanwhile, after)
    expect(await result).toEqual({ purged: 10, redisPurged: 9, workers: 3, missedWorkers: 0 });
    expect(f.asked.slice(3)).toEqual([
      { worker: 2, everywhere: false },
      { worker: 3, everywhere: false },
    ]);
  });

  it('without Redis: the leader, then the others once', async () => {
    const f = fanOut(false, () => Promise.resolve({ purged: 2 }));
    expect(await f.purges.purge([{ id: 1 }, { id: 2 }], message)).toEqual({ purged: 4, workers: 2, missedWorkers: 0 });
    expect(f.asked).toEqual([
      { worker: 1, everywhere: true },
      { worker: 2, everywhere: false },
    ]);
  });

  it('a leader that does not answer: the others are still asked, and the miss is logged', async () => {
    const f = fanOut(true, (w) => (w.id === 1 ? Promise.reject(new Error('worker 1: worker exited')) : Promise.resolve({ purged: 1 })));
    expect(await f.purges.purge([{ id: 1 }, { id: 2 }], message)).toEqual({ purged: 2, redisPurged: null, workers: 1, missedWorkers: 1 });
    expect(f.warnings).toEqual([{ worker: 1, msg: 'purge: a worker did not answer' }]);
  });

  it('another worker that fails either of its two purges counts as missed', async () => {
    let calls = 0;
    const f = fanOut(true, (w) => (w.id === 2 && ++calls === 2 ? Promise.reject(new Error('worker 2: no answer')) : Promise.resolve({ purged: 1 })));
    expect(await f.purges.purge([{ id: 1 }, { id: 2 }], message)).toEqual({ purged: 1, workers: 1, missedWorkers: 1 });
  });

  it('relays a worker’s own purge to every other worker’s local tier', async () => {
    const f = fanOut(false, (w) => (w.id === 3 ? Promise.reject(new Error('worker 3: worker exited')) : Promise.resolve({ purged: 1 })));
    const workers = [{ id: 1 }, { id: 2 }, { id: 3 }];
    f.purges.relay(workers, workers[1]!, message);
    await new Promise((r) => setImmediate(r));
    expect(f.asked).toEqual([
      { worker: 1, everywhere: false },
      { worker: 3, everywhere: false },
    ]);
    expect(f.warnings).toEqual([{ worker: 3, msg: 'purge from a sibling: a worker did not answer' }]);
  });
});
