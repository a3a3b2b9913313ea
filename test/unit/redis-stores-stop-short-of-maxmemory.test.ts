// The decisions of src/cache/redis/memory.ts, without Redis: a master at or above HIGH_WATER of
// its maxmemory takes no entry until a reading below LOW_WATER (hysteresis); a store that would
// cross HIGH_WATER, counting what this process wrote since the reading was asked, is skipped;
// a Redis without maxmemory takes everything, with one warning; on a cluster every master
// with a bound must have room. (The attack itself, on a real Redis:
// test/in-process/attack-cache-busting-fills-redis.test.ts.)
import pino from 'pino';
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { fullAfter, HIGH_WATER, LOW_WATER, RedisMemory, roomFor, storeBytes } from '../../src/cache/redis/memory.js';
import { memoryOf } from '../../src/cache/redis/server-check.js';
import { RedisMetrics } from '../../src/observe/metrics.js';

const MB = 1024 * 1024;
const info = (used: number, max: number) => `# Memory\r\nused_memory:${used}\r\nused_memory_human:x\r\nmaxmemory:${max}\r\nmaxmemory_policy:noeviction\r\n`;

describe('the decisions', () => {
  it('read used_memory and maxmemory from INFO', () => {
    expect(memoryOf(info(123, 456))).toEqual({ used: 123, max: 456 });
    expect(memoryOf('# Server\r\nredis_mode:standalone\r\n')).toBeUndefined();
  });

  it('full from HIGH_WATER up, until below LOW_WATER', () => {
    expect(fullAfter(false, 0.89 * 100 * MB, 100 * MB)).toBe(false);
    expect(fullAfter(false, HIGH_WATER * 100 * MB, 100 * MB)).toBe(true);
    expect(fullAfter(true, 0.87 * 100 * MB, 100 * MB)).toBe(true);
    expect(fullAfter(true, (LOW_WATER - 0.01) * 100 * MB, 100 * MB)).toBe(false);
    expect(fullAfter(true, 100 * MB, 0)).toBe(false);
  });

  it('room counts the writes since the reading and the store itself', () => {
    const m = { used: 80 * MB, max: 100 * MB, full: false, writtenSince: 0 };
    expect(roomFor(m, 5 * MB)).toBe(true);
    expect(roomFor({ ...m, writtenSince: 6 * MB }, 5 * MB)).toBe(false);
    expect(roomFor({ ...m, full: true }, 1)).toBe(false);
    expect(roomFor({ ...m, max: 0, used: 1_000 * MB }, 5 * MB)).toBe(true);
    expect(storeBytes(1_000, 3)).toBeGreaterThan(1_000);
  });
});

describe('RedisMemory', () => {
  const opened: RedisMemory[] = [];
  afterEach(() => opened.splice(0).forEach((m) => m.close()));

  function memory(answers: Map<string, string>) {
    const lines: Record<string, unknown>[] = [];
    const registry = new Registry();
    const m = new RedisMemory(
      () => [...answers.keys()].map((name) => ({ name, info: () => Promise.resolve(answers.get(name)!) })),
      1_000,
      new RedisMetrics(registry),
      pino({ level: 'info' }, { write: (s: string) => lines.push(JSON.parse(s)) }),
    );
    opened.push(m);
    const skipped = async () => (await registry.getSingleMetric('wikiedge_redis_stores_skipped_total')!.get()).values[0]!.value;
    return { m, lines, skipped };
  }

  it('skips a burst before it reaches the high-water mark, and resumes after a reading below the low one', async () => {
    const answers = new Map([['redis', info(50 * MB, 100 * MB)]]);
    const { m, lines, skipped } = memory(answers);
    await m.poll();
    // 40 MB of room below 90 %: 6 stores of 5 MB (each taken as 6.25 MB and more) go, the 7th not.
    let admitted = 0;
    for (let i = 0; i < 10; i++) if (m.admit(storeBytes(5 * MB, 2))) admitted++;
    expect(admitted).toBe(6);
    expect(await skipped()).toBe(4);
    expect(lines.filter((l) => l['redisMemory'] === 'full')).toHaveLength(1);
    // Redis says 92 %: full, even for a small store, until below 85 %.
    answers.set('redis', info(92 * MB, 100 * MB));
    await m.poll();
    expect(m.admit(100)).toBe(false);
    answers.set('redis', info(87 * MB, 100 * MB));
    await m.poll();
    expect(m.admit(100)).toBe(false);
    answers.set('redis', info(84 * MB, 100 * MB));
    await m.poll();
    expect(m.admit(100)).toBe(true);
    // Still one line: at most one a minute.
    expect(lines.filter((l) => l['redisMemory'] === 'full')).toHaveLength(1);
  });

  it('takes everything from a Redis without maxmemory, and says so once', async () => {
    const answers = new Map([['redis', info(500 * MB, 0)]]);
    const { m, lines } = memory(answers);
    await m.poll();
    await m.poll();
    expect(m.admit(storeBytes(100 * MB, 1))).toBe(true);
    expect(lines.filter((l) => l['redisMemory'] === 'unbounded')).toHaveLength(1);
  });

  it('on a cluster, skips when any master lacks room', async () => {
    const answers = new Map([
      ['10.0.0.1:7000', info(10 * MB, 100 * MB)],
      ['10.0.0.2:7000', info(95 * MB, 100 * MB)],
    ]);
    const { m } = memory(answers);
    await m.poll();
    expect(m.admit(100)).toBe(false);
    answers.set('10.0.0.2:7000', info(10 * MB, 100 * MB));
    await m.poll();
    expect(m.admit(100)).toBe(true);
  });
});
