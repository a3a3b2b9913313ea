// WIKIEDGE_WORKERS=2 on a Redis Cluster (3 masters, 3 replicas: test/support/redis-cluster.ts):
// the two worker processes share through the cluster as they do through one Redis. A URL one
// worker fetched (miss) is hit-shared in the other, which never asked the wiki; an admin purge
// of the URL removes it from both workers' local tiers and from the cluster, so the next answer
// in either worker is the wiki's again (a miss, a new version), never the purged copy.
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, adminPost } from '../support/admin.js';
import { type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.js';
import { header, http } from '../support/http.js';
import { startCluster, type TestCluster } from '../support/redis-cluster.js';
import { built, spawnGateway, type SpawnedGateway } from '../support/spawned.js';

const QUERY = 'action=query&prop=info&titles=Shared_through_the_cluster&format=json';

interface Answer {
  readonly worker: string;
  readonly cache: string | undefined;
  readonly version: number;
}

describe.runIf(built && existsSync('/usr/bin/redis-server'))('two workers sharing through a Redis Cluster', () => {
  let fake: FakeUpstream;
  let cluster: TestCluster;
  let gw: SpawnedGateway;
  /** How many times the stand-in wiki answered each URL: the version an answer carries. */
  const versions = new Map<string, number>();

  beforeAll(async () => {
    fake = await startFakeUpstream((req, res) => {
      const v = (versions.get(req.url!) ?? 0) + 1;
      versions.set(req.url!, v);
      res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 's-maxage=600, max-age=600, public' });
      res.end(JSON.stringify({ version: v }));
    });
    cluster = await startCluster();
    gw = await spawnGateway(fake.url, {
      WIKIEDGE_WORKERS: '2',
      WIKIEDGE_ADMIN_TOKEN: ADMIN_TOKEN,
      WIKIEDGE_REDIS_CLUSTER_NODES: cluster.seeds,
      WIKIEDGE_IDENTITY_SECRET: 'cluster-worker-tests-share-this-secret',
      // A call slower than its bound marks the tier down; on a busy 2-core machine 50 ms is not enough.
      WIKIEDGE_REDIS_TIMEOUT_MS: '1000',
      WIKIEDGE_LOG_HITS: 'false',
    });
  }, 120_000);

  afterAll(async () => {
    gw?.child.kill('SIGKILL');
    await gw?.exited;
    await fake?.close();
    await cluster?.stop();
  });

  /** How many times the wiki was asked the URL (it is also asked others: the gateway's probes). */
  const asked = () => [...versions].filter(([url]) => url.includes('Shared_through_the_cluster')).map(([, v]) => v);

  /** Ask on new connections until both workers have answered once; each worker's first answer. */
  async function firstAnswerOfEachWorker(): Promise<Answer[]> {
    const first = new Map<string, Answer>();
    for (let i = 0; i < 200 && first.size < 2; i++) {
      const res = await http(`${gw.url}/w/api.php?${QUERY}`, { headers: { connection: 'close' } });
      expect(res.status).toBe(200);
      const worker = (header(res, 'x-request-id') ?? '').split('-')[0]!;
      if (!first.has(worker)) first.set(worker, { worker, cache: header(res, 'x-cache'), version: (JSON.parse(res.body) as { version: number }).version });
    }
    expect(first.size).toBe(2);
    return [...first.values()];
  }

  it('a miss in one worker is hit-shared in the other; an admin purge removes it in both', async () => {
    const before = await firstAnswerOfEachWorker();
    // The other worker finds it in the cluster, or waits on the lock while the first stores it
    // (after its answer: steps/flow.ts fetchAndStore); either way the wiki is asked once.
    expect(before[0]!.cache).toBe('miss');
    expect(['hit-shared', 'coalesced']).toContain(before[1]!.cache);
    expect(before.map((a) => a.version)).toEqual([1, 1]);
    expect(asked()).toEqual([1]);

    const purge = await adminPost(gw.adminUrl, '/purge', { url: `/w/api.php?${QUERY}` });
    expect(purge.status).toBe(200);
    expect(JSON.parse(purge.body)).toMatchObject({ purged: 2, redisPurged: 1, workers: 2, missedWorkers: 0 });

    // Neither worker still holds the purged copy, nor finds it in the cluster: the first answer
    // after the purge is the wiki's second version, and the other worker shares that one.
    const after = await firstAnswerOfEachWorker();
    expect(after[0]!.cache).toBe('miss');
    expect(['hit-shared', 'coalesced']).toContain(after[1]!.cache);
    expect(after.map((a) => a.version)).toEqual([2, 2]);
    expect(asked()).toEqual([2]);
  });
});
