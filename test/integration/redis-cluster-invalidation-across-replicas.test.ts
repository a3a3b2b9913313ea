// Invalidation reaches both replicas when they share a Redis Cluster (WIKIEDGE_REDIS_CLUSTER_NODES,
// 3 masters + 3 replicas: test/support/redis-cluster.ts) in front of the real wiki: MediaWiki's
// PURGEs go to replica A only ($wgCdnServers), the change follower runs on both (one follows: its
// lease is a cluster key). An edit made straight at the wiki is fresh on B (its local tier, told
// over sharded pub/sub) and gone from the cluster on the first read after the edit's answer; with
// PURGEs off the follower brings both within a poll. The same cases as
// invalidation-across-replicas.test.ts on one redis-server.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type RunningGateway, startGateway } from '../support/gateway.js';
import { header, http } from '../support/http.js';
import { startCluster, type TestCluster } from '../support/redis-cluster.js';
import { FOLLOWER_POLL_MS, followerCaughtUp, metric, until } from '../support/replicas.js';
import { ADMIN_PASS, ADMIN_USER, apiWrite, loginCookies, setWikiToggle } from '../support/wiki.js';

const wiki = inject('wikiUrl');
const data = inject('wikiData');
/** A read that went to the wiki (`pass`: the follower's invalidation of the same edit overtook it). */
const MISSED = ['miss', 'pass'];

describe('invalidation across two replicas sharing a Redis Cluster', () => {
  let cluster: TestCluster;
  let a: RunningGateway;
  let b: RunningGateway;
  let admin: string;

  beforeAll(async () => {
    cluster = await startCluster();
    const env = {
      WIKIEDGE_REDIS_CLUSTER_NODES: cluster.seeds,
      WIKIEDGE_IDENTITY_SECRET: 'replicas-share-this-identity-secret',
      WIKIEDGE_REDIS_TIMEOUT_MS: '1000',
      WIKIEDGE_RC_FOLLOW: 'true',
      WIKIEDGE_RC_POLL_MS: String(FOLLOWER_POLL_MS),
    };
    [a, b] = await Promise.all([startGateway(wiki, env), startGateway(wiki, env)]);
    await until(
      'both followers up',
      async () => (await metric(a, /^wikiedge_change_follower_up (\d+)/m)) === 1 && (await metric(b, /^wikiedge_change_follower_up (\d+)/m)) === 1,
      30_000,
    );
    await setWikiToggle(data, { cdn: [`127.0.0.1:${new URL(a.url).port}`] });
    admin = await loginCookies(wiki, ADMIN_USER, ADMIN_PASS);
  }, 180_000);
  afterAll(async () => {
    await setWikiToggle(data, { cdn: [] });
    await Promise.all([a?.close(), b?.close()]);
    await cluster?.stop();
  });

  const contentQuery = (title: string) =>
    `action=query&prop=revisions&rvprop=content&rvslots=main&titles=${encodeURIComponent(title)}&format=json&formatversion=2`;
  // Each read waits for its store, which runs after its answer (steps/flow.ts fetchAndStore).
  const read = async (gw: RunningGateway, q: string) => {
    const res = await http(`${gw.apiUrl}?${q}`);
    await gw.built.gateway.afterAnswers.settled(10_000);
    return res;
  };
  const content = (body: string) => JSON.parse(body).query.pages[0].revisions[0].slots.main.content as string;

  it('one replica follows recentchanges (the lease on the cluster), the other is vouched for by it', async () => {
    const leaders = [await metric(a, /^wikiedge_change_follower_leader (\d+)/m), await metric(b, /^wikiedge_change_follower_leader (\d+)/m)];
    expect(leaders.toSorted()).toEqual([0, 1]);
  });

  it('an edit straight at the wiki, purged through A: fresh on B and A at once; unrelated entries stay hits', async () => {
    const title = `Cluster across ${randomUUID()}`;
    const other = `Cluster unrelated ${randomUUID()}`;
    await apiWrite(wiki, admin, { action: 'edit', title, text: 'one' });
    await apiWrite(wiki, admin, { action: 'edit', title: other, text: 'stays' });
    await followerCaughtUp([a, b]);
    const q = contentQuery(title);
    expect(header(await read(b, q), 'x-cache')).toBe('miss');
    expect(header(await read(b, q), 'x-cache')).toBe('hit');
    expect(header(await read(a, q), 'x-cache')).toBe('hit-shared');
    await read(b, contentQuery(other));
    expect(header(await read(b, contentQuery(other)), 'x-cache')).toBe('hit');

    await apiWrite(wiki, admin, { action: 'edit', title, text: 'two' });
    // The edit's answer came after MediaWiki's PURGE to A was answered: the cluster is clean, and B
    // heard it (or reads the cluster, which no longer has it).
    const onB = await read(b, q);
    expect(content(onB.body)).toBe('two');
    expect(MISSED).toContain(header(onB, 'x-cache'));
    expect(content((await read(a, q)).body)).toBe('two');
    expect(header(await read(b, contentQuery(other)), 'x-cache')).toBe('hit');
  });

  it('with PURGEs off, the follower (on whichever replica leads) makes both fresh within a poll or so', async () => {
    await setWikiToggle(data, { cdn: [] });
    try {
      const title = `Cluster followed ${randomUUID()}`;
      await apiWrite(wiki, admin, { action: 'edit', title, text: 'one' });
      await followerCaughtUp([a, b]);
      const q = contentQuery(title);
      await read(b, q);
      await read(a, q);
      expect(header(await read(b, q), 'x-cache')).toBe('hit');
      expect(header(await read(a, q), 'x-cache')).toBe('hit');
      await apiWrite(wiki, admin, { action: 'edit', title, text: 'two' });
      await until('both replicas fresh', async () => content((await read(b, q)).body) === 'two' && content((await read(a, q)).body) === 'two');
    } finally {
      await setWikiToggle(data, { cdn: [`127.0.0.1:${new URL(a.url).port}`] });
    }
  });
});
