/**
 * The soak's verdict (bench/soak-verdict.mjs): RSS flat within 10 % after the warm-up, no fd
 * growth past the warm-up level and a small allowance, no status outside what each request kind
 * should get, no socket error, and every kind answered.
 */
import { describe, expect, it } from 'vitest';
import { type SoakSample, soakVerdict, statusTable, warmupSeconds } from '../../bench/soak-verdict.mjs';

/** One sample every 5 s over `seconds`, RSS and fds from the given functions of t. */
function samples(seconds: number, rssKB: (t: number) => number, fds: (t: number) => number): SoakSample[] {
  const out: SoakSample[] = [];
  for (let t = 0; t <= seconds; t += 5) out.push({ t, rssKB: rssKB(t), fds: fds(t) });
  return out;
}

const allKinds = {
  'hit 200': 76_000,
  'miss 200': 8000,
  'session 200': 8000,
  'post 200': 2000,
  'logout 200': 500,
  'page 200': 2000,
  'apierror 200': 1000,
  'malformed 400': 1000,
  'toolong 414': 500,
  'purge 200': 1000,
};

const flat = {
  samples: samples(
    600,
    (t) => (t < 60 ? 60_000 + t * 500 : 120_000 + (t % 20) * 100),
    () => 40,
  ),
  runSeconds: 600,
  got: allKinds,
  idleBefore: { fds: 22, admin: 1 },
  idleAfter: { fds: 21, admin: 0 },
};
const check = (v: ReturnType<typeof soakVerdict>, name: string) => v.checks.find((c) => c.name === name);

describe('soak verdict', () => {
  it('warm-up is 20 % of the run, at least 60 s, at most half of a short run', () => {
    expect(warmupSeconds(600)).toBe(120);
    expect(warmupSeconds(200)).toBe(60);
    expect(warmupSeconds(60)).toBe(30);
  });

  it('passes a run whose RSS only grew during the warm-up, with flat fds and only expected statuses', () => {
    const v = soakVerdict(flat);
    expect(v.pass).toBe(true);
    expect(v.rssMinKB).toBe(120_000);
    expect(v.rssMaxKB).toBe(121_500);
    expect(v.errors).toBe(0);
  });

  it('fails RSS that keeps growing after the warm-up by more than 10 %, and shows the trend', () => {
    const v = soakVerdict({
      ...flat,
      samples: samples(
        600,
        (t) => 100_000 + t * 50,
        () => 40,
      ),
    });
    expect(v.pass).toBe(false);
    expect(check(v, 'RSS flat after warm-up')?.pass).toBe(false);
    expect(v.rssTrend).toBeGreaterThan(1.1);
  });

  it('fails a bounded sawtooth wider than 10 % too (the criterion is max ÷ min), with a trend near 1', () => {
    const v = soakVerdict({
      ...flat,
      samples: samples(
        600,
        (t) => 150_000 + (t % 240) * 80,
        () => 40,
      ),
    });
    expect(check(v, 'RSS flat after warm-up')?.pass).toBe(false);
    expect(v.rssTrend).toBeCloseTo(1, 1);
  });

  it('fails fd counts that keep rising after the warm-up; pool jitter within the allowance passes', () => {
    const leaking = soakVerdict({
      ...flat,
      samples: samples(
        600,
        () => 100_000,
        (t) => 40 + Math.floor(t / 60),
      ),
    });
    expect(check(leaking, 'no fd growth under load')).toMatchObject({ pass: false });
    const poolJitter = soakVerdict({
      ...flat,
      samples: samples(
        600,
        () => 100_000,
        (t) => (t % 50 === 0 ? 47 : 40 + (t % 3)),
      ),
    });
    expect(poolJitter.pass).toBe(true);
  });

  it('fails when fds do not come back to the idle level after the load; the admin connection does not count', () => {
    expect(check(soakVerdict({ ...flat, idleAfter: { fds: 23, admin: 0 } }), 'fds back to idle after the load')?.pass).toBe(false);
    expect(soakVerdict({ ...flat, idleAfter: { fds: 22, admin: 1 } }).pass).toBe(true);
    expect(soakVerdict({ ...flat, idleAfter: undefined }).pass).toBe(false);
  });

  it('counts a status outside what a kind should get as an error, per kind', () => {
    const v = soakVerdict({ ...flat, got: { ...allKinds, 'hit 502': 3, 'malformed 200': 1 } });
    expect(v.pass).toBe(false);
    expect(v.errors).toBe(4);
    expect(v.table['hit']).toEqual({ total: 76_003, byStatus: { '200': 76_000, '502': 3 }, unexpected: 3 });
    expect(statusTable({ 'untagged 200': 2 })['untagged']?.unexpected).toBe(2);
  });

  it('counts wrk socket errors and timeouts, and gateway error log lines', () => {
    expect(soakVerdict({ ...flat, socketErrors: { connect: 0, read: 0, write: 0, timeout: 2 } }).errors).toBe(2);
    expect(soakVerdict({ ...flat, gatewayErrorLines: 1 }).pass).toBe(false);
  });

  it('fails a run in which some kind was never answered, or too short to have steady samples', () => {
    const { 'purge 200': _purge, ...noPurge } = allKinds;
    const v = soakVerdict({ ...flat, got: noPurge });
    expect(v.pass).toBe(false);
    expect(v.checks.find((c) => c.name === 'no errors')?.detail).toContain('no answers for: purge');
    expect(
      soakVerdict({
        ...flat,
        samples: samples(
          60,
          () => 1,
          () => 1,
        ),
      }).pass,
    ).toBe(false);
  });
});
