// The Redis tier's connection state machine (src/cache/redis/connection.ts), with a fake client:
// a call is bounded and never throws; a failure, or TIMEOUTS_BEFORE_DOWN timeouts in a row, mark
// the tier down (one log line, wikiedge_redis_up 0, wikiedge_redis_errors_total{op}); while down, calls return at once
// without reaching Redis; a PING probe brings it back (one log line).
import { afterEach, describe, expect, it } from 'vitest';
import { type RedisConnection, TIMEOUTS_BEFORE_DOWN } from '../../src/cache/redis/connection.js';
import { fakeRedisConnection } from '../support/redis.js';

const TIMEOUT_MS = 20;
const setup = () => fakeRedisConnection(TIMEOUT_MS);

let open: RedisConnection[] = [];
afterEach(async () => {
  await Promise.all(open.map((c) => c.close()));
  open = [];
});

async function upConnection() {
  const s = setup();
  open.push(s.connection);
  expect(await s.up()).toBe(true);
  return s;
}

describe('bounded Redis calls and the up/down state', () => {
  it('starts down until the connection is ready and a PING answers', async () => {
    const s = setup();
    open.push(s.connection);
    expect(s.connection.up).toBe(false);
    expect((await s.connection.call('get', () => Promise.resolve('x'))).ok).toBe(false);
    expect(await s.up()).toBe(true);
    expect(s.connection.up).toBe(true);
    expect(await s.upGauge()).toBe(1);
    expect(s.states('up')).toBe(1);
  });

  it('a call that answers in time resolves with its value', async () => {
    const s = await upConnection();
    expect(await s.connection.call('get', () => Promise.resolve('value'))).toEqual({ ok: true, value: 'value' });
    expect(s.connection.up).toBe(true);
  });

  it('a call that fails resolves as failed (never throws), counts the error and marks the tier down once', async () => {
    const s = await upConnection();
    expect(await s.connection.call('set', () => Promise.reject(new Error('READONLY')))).toEqual({ ok: false });
    expect(
      await s.connection.call('lock', () => {
        throw new Error('thrown synchronously');
      }),
    ).toEqual({ ok: false });
    expect(s.connection.up).toBe(false);
    expect(await s.errors('set')).toBe(1);
    expect(await s.upGauge()).toBe(0);
    expect(s.states('down')).toBe(1);
  });

  it('a call Redis does not answer resolves as failed after the bound, counted; the tier stays up', async () => {
    const s = await upConnection();
    const started = performance.now();
    const r = await s.connection.call('get', () => new Promise<string>(() => undefined));
    const elapsed = performance.now() - started;
    expect(r).toEqual({ ok: false });
    expect(elapsed).toBeGreaterThanOrEqual(TIMEOUT_MS - 1);
    expect(elapsed).toBeLessThan(TIMEOUT_MS + 1_000);
    expect(await s.errors('get')).toBe(1);
    expect(s.connection.up).toBe(true);
    expect(s.states('down')).toBe(0);
  });

  it(`${TIMEOUTS_BEFORE_DOWN} timeouts in a row mark the tier down; one answered in time starts the count again`, async () => {
    const s = await upConnection();
    const stalled = () => s.connection.call('get', () => new Promise<string>(() => undefined));
    for (let i = 1; i < TIMEOUTS_BEFORE_DOWN; i++) await stalled();
    expect(s.connection.up).toBe(true);
    expect((await s.connection.call('get', () => Promise.resolve('x'))).ok).toBe(true);
    for (let i = 1; i < TIMEOUTS_BEFORE_DOWN; i++) await stalled();
    expect(s.connection.up).toBe(true);
    await stalled();
    expect(s.connection.up).toBe(false);
    expect(await s.errors('get')).toBe(2 * (TIMEOUTS_BEFORE_DOWN - 1) + 1);
    expect(s.lines.find((l) => l['redis'] === 'down')).toMatchObject({ op: 'get', err: `redis get timed out after ${TIMEOUT_MS} ms` });
  });

  it('concurrent calls to a stalled Redis take the tier down in one burst', async () => {
    const s = await upConnection();
    await Promise.all(Array.from({ length: TIMEOUTS_BEFORE_DOWN }, () => s.connection.call('get', () => new Promise<string>(() => undefined))));
    expect(s.connection.up).toBe(false);
    expect(s.states('down')).toBe(1);
  });

  it('while down, calls return at once without reaching Redis', async () => {
    const s = await upConnection();
    await s.connection.call('get', () => Promise.reject(new Error('boom')));
    let reached = 0;
    const r = await s.connection.call('get', () => {
      reached++;
      return Promise.resolve('x');
    });
    expect(r.ok).toBe(false);
    expect(reached).toBe(0);
    expect(await s.errors('get')).toBe(1);
  });

  it('a PING probe brings the tier back once Redis answers again: one log line per change', async () => {
    const s = await upConnection();
    s.cmd.pingAnswer = 'never';
    await s.connection.call('get', () => Promise.reject(new Error('boom')));
    // The probe runs every max(250 ms, 5 × timeout); a PING past the bound keeps the tier down.
    await expect.poll(() => s.errors('ping'), { timeout: 3_000, interval: 20 }).toBeGreaterThanOrEqual(1);
    expect(s.connection.up).toBe(false);
    s.cmd.pingAnswer = 'now';
    await expect.poll(() => s.connection.up, { timeout: 2_000, interval: 20 }).toBe(true);
    expect(s.states('down')).toBe(1);
    expect(s.states('up')).toBe(2);
    expect(await s.upGauge()).toBe(1);
  });

  it('a closed connection calls nothing', async () => {
    const s = await upConnection();
    await s.connection.close();
    let reached = 0;
    const r = await s.connection.call('get', () => {
      reached++;
      return Promise.resolve('x');
    });
    expect(r.ok).toBe(false);
    expect(reached).toBe(0);
    expect(await s.upGauge()).toBe(0);
  });
});
