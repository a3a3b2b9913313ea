// The single process reloads by building a second gateway beside the first (cluster/generations.ts):
// the two are siblings until the old one retires, each purge of either applied by the other. The
// follower took "has siblings" for "a worker of a cluster" and applied what it read to its own
// generation alone ('here', as a worker whose siblings each follow for themselves): an entry
// handed over to the new generation after the old follower read a row, before the new follower
// took the cursor on past that row, was never invalidated and served stale for the followed
// TTL. Only a worker of a cluster (WIKIEDGE_WORKERS > 1) keeps its follower's changes to itself.
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PurgeMessage } from '../../src/cache/purge.js';
import { loadConfig } from '../../src/config/load.js';
import { createGateway, type Gateway } from '../../src/gateway/gateway.js';
import { FakeRecentChanges } from '../support/fake-recentchanges.js';
import { type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.js';

describe('a follower with a sibling generation', () => {
  const wiki = new FakeRecentChanges();
  let fake: FakeUpstream;
  const gateways: Gateway[] = [];
  beforeAll(async () => {
    wiki.clock = Date.now();
    fake = await startFakeUpstream(wiki.handler);
  });
  afterAll(async () => {
    for (const gw of gateways) await gw.follower?.stop();
    await Promise.all(gateways.map((gw) => gw.upstream.close()));
    await fake?.close();
  });

  for (const [workers, reaches] of [
    ['1', true],
    ['2', false],
  ] as const) {
    it(`WIKIEDGE_WORKERS=${workers}: the rows it reads ${reaches ? 'reach' : 'do not reach'} the sibling`, async () => {
      const relayed: PurgeMessage[] = [];
      const config = loadConfig({ WIKIEDGE_UPSTREAM: fake.url, WIKIEDGE_RC_FOLLOW: 'true', WIKIEDGE_WORKERS: workers });
      const gw = createGateway(config, pino({ level: 'silent' }), { siblings: { publish: (m) => void relayed.push(m) } });
      gateways.push(gw);
      await gw.follower!.pollOnce();
      relayed.length = 0;
      wiki.clock = Date.now() + 1_000;
      wiki.add(`Edited ${workers}`, { at: wiki.clock });
      await gw.follower!.pollOnce();
      const tags = relayed.flatMap((m) => (m.kind === 'tags' ? [...m.tags] : []));
      if (reaches) expect(tags).toContain(`p:Edited ${workers}`);
      else expect(tags).toEqual([]);
    });
  }
});
