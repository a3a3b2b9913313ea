// When the primary restarts a worker that died (src/cluster/restart-backoff.ts): the delay doubles
// with each death soon after a start, up to a ceiling; a worker that lived long enough resets it.
import { describe, expect, it } from 'vitest';
import { nextRestart, RESTART_MAX_MS, STABLE_AFTER_MS } from '../../src/cluster/restart-backoff.js';

describe('nextRestart', () => {
  it('restarts a first quick death after 100 ms', () => {
    expect(nextRestart(0, 50)).toEqual({ quickDeaths: 1, delayMs: 100 });
  });

  it('doubles the delay for each quick death in a row', () => {
    expect(nextRestart(1, 50)).toEqual({ quickDeaths: 2, delayMs: 200 });
    expect(nextRestart(2, 50)).toEqual({ quickDeaths: 3, delayMs: 400 });
    expect(nextRestart(6, 50)).toEqual({ quickDeaths: 7, delayMs: 6_400 });
  });

  it('never waits more than 10 s', () => {
    expect(RESTART_MAX_MS).toBe(10_000);
    expect(nextRestart(7, 50)).toEqual({ quickDeaths: 8, delayMs: 10_000 }); // not 12 800
    expect(nextRestart(1_000, 50)).toEqual({ quickDeaths: 1_001, delayMs: 10_000 }); // not Infinity
  });

  it('a worker that lived 30 s was healthy: its death starts the count again', () => {
    expect(STABLE_AFTER_MS).toBe(30_000);
    expect(nextRestart(5, 30_000)).toEqual({ quickDeaths: 0, delayMs: 100 });
    expect(nextRestart(5, 29_999)).toEqual({ quickDeaths: 6, delayMs: 3_200 });
  });

  it('a sequence: three quick deaths, a long life, a quick death', () => {
    let quickDeaths = 0;
    const delays = [10, 10, 10, 60_000, 10].map((livedMs) => {
      const r = nextRestart(quickDeaths, livedMs);
      quickDeaths = r.quickDeaths;
      return r.delayMs;
    });
    expect(delays).toEqual([100, 200, 400, 100, 100]);
  });
});
