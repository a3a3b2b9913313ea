// The change follower hands a burst over in batches of up to 2,000 rows (follower.ts
// APPLY_BATCH_ROWS), merged into one purge by tags (invalidation/signals.ts apply). Sent as one
// channel message, a batch of ~700 article edits or ~1,400 item edits was over the 64 KiB a
// replica reads (purges.ts MAX_MESSAGE_CHARS): every other replica dropped it without a word, and
// kept serving what the batch changed for up to the followed TTL, while the follower reported
// healthy. Now such a purge goes out in messages under the bound, and a message a replica cannot
// read is counted (`wikiedge_redis_purge_messages_total{kind="unreadable"}`).
import pino from 'pino';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RedisTier } from '../../src/cache/redis-tier.js';
import { MAX_MESSAGE_CHARS, tagMessages } from '../../src/cache/redis/purges.js';
import { RedisMetrics } from '../../src/observe/metrics.js';
import type { PurgeMessage } from '../../src/words/purge-message.js';
import { REDIS_BACKENDS, redisInstalled, type RunningRedisBackend } from '../support/redis-backends.js';
import { until } from '../support/until.js';

/** The tags of `pages` edited articles and their talk pages and items, as a follower batch names them. */
function batchTags(pages: number): string[] {
  const tags = ['*', 'n:0', 'n:1', 'n:120'];
  for (let i = 0; i < pages; i++) tags.push(`p:Some_article_title_number_${i}`, `p:Talk:Some_article_title_number_${i}`, `i:${100_000 + i}`);
  return tags;
}

describe('a purge by tags as channel messages', () => {
  it('is cut into messages under the bound, every tag in one of them, in order', () => {
    const tags = batchTags(2_000);
    const messages = tagMessages(tags);
    expect(messages.length).toBeGreaterThan(1);
    for (const m of messages) expect(JSON.stringify({ ...m, from: 'abcdefabcdef', ack: '0123456789abcdef' }).length).toBeLessThan(MAX_MESSAGE_CHARS);
    expect(messages.flatMap((m) => (m.kind === 'tags' ? m.tags : []))).toEqual(tags);
    expect(tagMessages([])).toEqual([{ kind: 'tags', tags: [] }]);
  });
});

describe.runIf(redisInstalled).each(REDIS_BACKENDS)('a large purge by tags on %s', (_name, start) => {
  let backend: RunningRedisBackend;
  let a: RedisTier;
  let b: RedisTier;
  const heardB: PurgeMessage[] = [];
  const metricsB = new RedisMetrics(new Registry());

  beforeAll(async () => {
    backend = await start();
    a = backend.tier({ timeoutMs: 1_000, onPurge: () => 0 });
    b = backend.tier({
      timeoutMs: 1_000,
      log: pino({ level: 'silent' }),
      metrics: metricsB,
      onPurge: (m) => {
        heardB.push(m);
        return 0;
      },
    });
    expect(await a.ready(10_000)).toBe(true);
    expect(await b.ready(10_000)).toBe(true);
  }, 60_000);
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await backend?.stop();
  });

  it('reaches the other replica whole: every tag of a 2,000-row batch', async () => {
    // A small one first: the channel is up on both.
    expect(await a.purge({ kind: 'tags', tags: ['*', 'p:Main_Page'] })).not.toBeNull();
    await until(
      async () => heardB.some((m) => m.kind === 'tags'),
      (x) => x,
      10_000,
    );
    heardB.length = 0;
    const tags = batchTags(2_000);
    expect(await a.purge({ kind: 'tags', tags })).not.toBeNull();
    const heardTags = () => new Set(heardB.flatMap((m) => (m.kind === 'tags' ? m.tags : [])));
    await until(
      async () => heardTags().size,
      (n) => n === tags.length,
      10_000,
    );
    expect([...heardTags()].sort()).toEqual([...tags].sort());
  }, 60_000);

  it('counts a message it cannot read', async () => {
    const client = await backend.client();
    try {
      const text = JSON.stringify({ kind: 'tags', tags: ['x'.repeat(MAX_MESSAGE_CHARS)], from: 'someone' });
      if (backend.cluster) await (client as unknown as { spublish(c: string, m: string): Promise<number> }).spublish('wikiedge:purge', text);
      else await client.publish('wikiedge:purge', text);
      await until(
        async () => (await metricsB.purgeMessages.get()).values.find((v) => v.labels.kind === 'unreadable')?.value ?? 0,
        (n) => n >= 1,
        10_000,
      );
    } finally {
      client.disconnect();
    }
  }, 30_000);
});
