// The storage seam's contract (src/cache/storage.ts), one suite run against every backend, the
// way undici runs one cache-store suite against its memory and SQLite stores: the local tier
// alone, the local tier in front of a real redis-server, in front of a real Redis Cluster
// (3 masters, 3 replicas: test/support/redis-cluster.ts), and in front of a primary with a
// replica behind three Sentinels (test/support/redis-topology.ts startSentinelSet). A new backend is one more entry in
// BACKENDS; cases about a second replica or a shared tier that stops answering run only where
// there is a shared tier.
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import pino from 'pino';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CacheEntry } from '../../src/cache/entry.js';
import { LocalStorage } from '../../src/cache/local-storage.js';
import { RedisTier } from '../../src/cache/redis-tier.js';
import type { SharedTier, SharedTierHooks, Storage } from '../../src/cache/storage.js';
import { CacheStore } from '../../src/cache/store.js';
import { TieredStorage } from '../../src/cache/tiered-storage.js';
import { RedisMetrics } from '../../src/observe/metrics.js';
import { SessionUsers } from '../../src/policy/session-users.js';
import type { Tier } from '../../src/words/outcomes.js';
import { startRedis } from '../support/redis.js';
import { startCluster, type TestCluster } from '../support/redis-cluster.js';
import { startSentinelSet, type TestSentinelSet } from '../support/redis-topology.js';

/** One process's storage, as gateway/gateway.ts builds it, and its local tier (to look at directly). */
interface Replica {
  readonly storage: Storage;
  readonly store: CacheStore;
}

/** A backend: replicas built on one shared tier (namespaced per test), and ways to break it. */
interface Backend {
  readonly name: string;
  /** Whether replicas share a tier (a second replica sees what the first stored). */
  readonly shared: boolean;
  readonly available: boolean;
  setUp(): Promise<void>;
  tearDown(): Promise<void>;
  /** A fresh namespace: replicas built with the same one share their tier. */
  namespace(): string;
  replica(namespace: string): Promise<Replica>;
  /** The shared tier stops answering / answers again (shared backends only). */
  breakShared?(): Promise<void>;
  repairShared?(): Promise<void>;
}

const GRACE = { graceMs: 0, staleIfErrorMs: 0 };

function localStore(): CacheStore {
  return new CacheStore({ sharedMaxBytes: 1 << 22, sessionMaxBytes: 1 << 22, maxEntries: 1_000, ...GRACE, now: Date.now });
}

const replicas: Storage[] = [];

const localAlone: Backend = {
  name: 'local alone',
  shared: false,
  available: true,
  setUp: () => Promise.resolve(),
  tearDown: () => Promise.resolve(),
  namespace: () => '',
  replica: () => {
    const store = localStore();
    return Promise.resolve({ store, storage: new LocalStorage({ store, users: new SessionUsers() }) });
  },
};

/** What a shared backend's servers can be asked: to stop answering, to come back, to stop for good. */
interface Servers {
  kill(): Promise<void>;
  restart(): Promise<void>;
  stop(): Promise<void>;
}

/** The local tier in front of a tier built by `tier(namespace, hooks)`: one Redis, or a Redis Cluster. */
function tieredBackend<S extends Servers>(
  name: string,
  available: boolean,
  start: () => Promise<S>,
  tier: (server: S, namespace: string, hooks: SharedTierHooks) => SharedTier,
): Backend {
  let server: S | undefined;
  return {
    name,
    shared: true,
    available,
    async setUp() {
      server = await start();
    },
    async tearDown() {
      await server?.stop();
    },
    namespace: () => `contract:${randomUUID()}:`,
    async replica(namespace) {
      const store = localStore();
      const storage = new TieredStorage({ store, users: new SessionUsers(), now: Date.now, log: pino({ level: 'silent' }) }, (hooks) =>
        tier(server!, namespace, hooks),
      );
      replicas.push(storage);
      await storage.open(5_000);
      return { store, storage };
    },
    breakShared: () => server!.kill(),
    repairShared: () => server!.restart(),
  };
}

const REDIS_SERVER = process.env['WIKIEDGE_TEST_REDIS_SERVER'] ?? '/usr/bin/redis-server';

const localAndRedis = tieredBackend(
  'local + Redis',
  existsSync(REDIS_SERVER),
  startRedis,
  (server, namespace, hooks) =>
    new RedisTier({
      url: server.url,
      // Generous: a loaded machine must not mark the tier down in a case that expects it up.
      timeoutMs: 2_000,
      lockMs: 3_000,
      keyPrefix: namespace,
      windows: GRACE,
      now: Date.now,
      log: pino({ level: 'silent' }),
      metrics: new RedisMetrics(new Registry()),
      ...hooks,
    }),
);

const tierOptions = (namespace: string, hooks: SharedTierHooks) => ({
  // Generous: a loaded machine must not mark the tier down in a case that expects it up.
  timeoutMs: 2_000,
  lockMs: 3_000,
  keyPrefix: namespace,
  windows: GRACE,
  now: Date.now,
  log: pino({ level: 'silent' }),
  metrics: new RedisMetrics(new Registry()),
  ...hooks,
});

const localAndCluster = tieredBackend<TestCluster>(
  'local + Redis Cluster',
  existsSync(REDIS_SERVER),
  () => startCluster(),
  (cluster, namespace, hooks) =>
    new RedisTier({
      url: '',
      target: { kind: 'cluster', nodes: cluster.nodes.map((n) => ({ host: '127.0.0.1', port: n.port })), username: '', password: '', tls: false },
      ...tierOptions(namespace, hooks),
    }),
);

const localAndSentinel = tieredBackend<TestSentinelSet>(
  'local + Redis behind Sentinel',
  existsSync(REDIS_SERVER),
  () => startSentinelSet(),
  (set, namespace, hooks) =>
    new RedisTier({
      url: '',
      target: {
        kind: 'sentinel',
        sentinels: set.sentinels.map((s) => ({ host: '127.0.0.1', port: s.port })),
        name: set.name,
        username: '',
        password: '',
        sentinelPassword: '',
        tls: false,
      },
      ...tierOptions(namespace, hooks),
    }),
);

const BACKENDS: readonly Backend[] = [localAlone, localAndRedis, localAndCluster, localAndSentinel];

const API = '/w/api.php';
let urls = 0;
/** A URL of its own for each use. */
const newUrl = (query = 'action=query&format=json&meta=siteinfo') => `${API}?${query}&n=${++urls}`;

/** A key as policy/request.ts cacheKey makes it: URL, identity slot, keyed headers. */
const keyOf = (urlKey: string, slot?: string, variant = '-') => `${urlKey}\n${slot ? `s:${slot}:0` : 'anon'}\n${variant}`;

function entry(urlKey: string, over: Partial<CacheEntry> = {}): CacheEntry {
  return {
    status: 200,
    headers: { 'content-type': 'application/json', 'cache-control': 's-maxage=60' },
    body: Buffer.from(JSON.stringify({ url: urlKey, n: Math.random() })),
    storedAt: Date.now(),
    ttlMs: 60_000,
    urlKey,
    modules: ['query', 'siteinfo'],
    slot: undefined,
    deps: ['*'],
    ...over,
  };
}

/** Stored as the flow stores a fetched answer: the mark noted first. */
async function put(storage: Storage, tier: Tier, key: string, e: CacheEntry): Promise<boolean> {
  const mark = await storage.mark();
  return storage.store(tier, key, e, mark);
}

describe.each(BACKENDS.map((b) => [b.name, b] as const))('storage contract: %s', (_name, backend) => {
  beforeAll(() => backend.setUp(), 120_000);
  afterAll(async () => {
    await Promise.all(replicas.splice(0).map((s) => s.close()));
    await backend.tearDown();
  });
  const it_ = it.runIf(backend.available);
  const itShared = it.runIf(backend.available && backend.shared);

  it_('store, then lookup: a hit from this process', async () => {
    const { storage } = await backend.replica(backend.namespace());
    const url = newUrl();
    const e = entry(url);
    expect(await put(storage, 'shared', keyOf(url), e)).toBe(true);
    const found = await storage.lookup('shared', keyOf(url));
    expect(found?.shared).toBe(false);
    expect(found?.entry.body.toString()).toBe(e.body.toString());
    expect(storage.freshness(found!.entry)).toBe('fresh');
  });

  it_('nothing owed to a shared tier that answers: takeOwed gives nothing, adoptOwed of nothing does nothing', async () => {
    const { storage } = await backend.replica(backend.namespace());
    expect(await storage.takeOwed()).toEqual({ messages: [], overflow: false });
    storage.adoptOwed({ messages: [], overflow: false });
    expect(await storage.takeOwed()).toEqual({ messages: [], overflow: false });
  });

  it_('a key never stored: a miss', async () => {
    const { storage } = await backend.replica(backend.namespace());
    expect(await storage.lookup('shared', keyOf(newUrl()))).toBeUndefined();
    expect(await storage.lookup('session', keyOf(newUrl(), 'Aa'))).toBeUndefined();
  });

  it_('a URL purge removes every variant of the URL, and nothing else', async () => {
    const ns = backend.namespace();
    const { storage } = await backend.replica(ns);
    const [url, other] = [newUrl(), newUrl()];
    for (const variant of ['-', '=en', '=de']) await put(storage, 'shared', keyOf(url, undefined, variant), entry(url));
    await put(storage, 'session', keyOf(url, 'Aa'), entry(url, { slot: 'Aa' }));
    await put(storage, 'shared', keyOf(other), entry(other));
    const result = await storage.purge({ kind: 'url', urlKey: url });
    expect(result.purged).toBe(4);
    for (const variant of ['-', '=en', '=de']) expect(await storage.lookup('shared', keyOf(url, undefined, variant))).toBeUndefined();
    expect(await storage.lookup('session', keyOf(url, 'Aa'))).toBeUndefined();
    expect(await storage.lookup('shared', keyOf(other))).toBeDefined();
    if (backend.shared) {
      // Gone from the shared tier too: a replica that starts now does not find it.
      const { storage: fresh } = await backend.replica(ns);
      expect(await fresh.lookup('shared', keyOf(url, undefined, '=en'))).toBeUndefined();
      expect(await fresh.lookup('shared', keyOf(other))).toBeDefined();
    }
  });

  it_('a tag invalidation removes only the entries tagged with it', async () => {
    const ns = backend.namespace();
    const { storage } = await backend.replica(ns);
    const [a, b] = [newUrl(), newUrl()];
    await put(storage, 'shared', keyOf(a), entry(a, { deps: ['p:0:Main_Page'] }));
    await put(storage, 'shared', keyOf(b), entry(b, { deps: ['p:0:Other'] }));
    await storage.purge({ kind: 'tags', tags: ['p:0:Main_Page'] });
    expect(await storage.lookup('shared', keyOf(a))).toBeUndefined();
    expect(await storage.lookup('shared', keyOf(b))).toBeDefined();
    if (backend.shared) {
      const { storage: fresh } = await backend.replica(ns);
      expect(await fresh.lookup('shared', keyOf(a))).toBeUndefined();
      expect((await fresh.lookup('shared', keyOf(b)))?.shared).toBe(true);
    }
  });

  it_('a session purge removes that session’s entries only', async () => {
    const ns = backend.namespace();
    const { storage } = await backend.replica(ns);
    const url = newUrl('action=query&format=json&meta=userinfo');
    for (const slot of ['Aa', 'Bb']) await put(storage, 'session', keyOf(url, slot), entry(url, { slot, modules: ['query', 'userinfo'] }));
    await storage.purge({ kind: 'slot', slot: 'Aa' });
    expect(await storage.lookup('session', keyOf(url, 'Aa'))).toBeUndefined();
    expect(await storage.lookup('session', keyOf(url, 'Bb'))).toBeDefined();
    if (backend.shared) {
      const { storage: fresh } = await backend.replica(ns);
      expect(await fresh.lookup('session', keyOf(url, 'Aa'))).toBeUndefined();
      expect(await fresh.lookup('session', keyOf(url, 'Bb'))).toBeDefined();
    }
  });

  it_('a user purge removes the sessions known to be the user’s', async () => {
    const { storage } = await backend.replica(backend.namespace());
    const url = newUrl('action=query&format=json&meta=userinfo');
    storage.noteSession('Aa', 'Alice');
    expect(await storage.userOfSession('Aa')).toBe('Alice');
    for (const slot of ['Aa', 'Bb']) await put(storage, 'session', keyOf(url, slot), entry(url, { slot, modules: ['query', 'userinfo'] }));
    await storage.purge({ kind: 'user', user: 'Alice' }, { onClientPath: true });
    expect(await storage.lookup('session', keyOf(url, 'Aa'))).toBeUndefined();
    expect(await storage.lookup('session', keyOf(url, 'Bb'))).toBeDefined();
  });

  it_('a module purge removes the entries that ran the module', async () => {
    const ns = backend.namespace();
    const { storage } = await backend.replica(ns);
    const [parse, query] = [newUrl('action=parse&format=json&page=Main_Page'), newUrl()];
    await put(storage, 'shared', keyOf(parse), entry(parse, { modules: ['parse'] }));
    await put(storage, 'shared', keyOf(query), entry(query));
    await storage.purge({ kind: 'module', module: 'parse' });
    expect(await storage.lookup('shared', keyOf(parse))).toBeUndefined();
    expect(await storage.lookup('shared', keyOf(query))).toBeDefined();
    if (backend.shared) {
      const { storage: fresh } = await backend.replica(ns);
      expect(await fresh.lookup('shared', keyOf(parse))).toBeUndefined();
    }
  });

  it_('a prefix purge removes the URLs under the prefix only; a purge of everything removes the rest', async () => {
    const ns = backend.namespace();
    const { storage } = await backend.replica(ns);
    const tag = `p${++urls}x`;
    const under = [`${API}?action=parse&page=${tag}_A&format=json`, `${API}?action=parse&page=${tag}_B&format=json`];
    const outside = newUrl();
    for (const u of [...under, outside]) await put(storage, 'shared', keyOf(u), entry(u));
    const result = await storage.purge({ kind: 'prefix', prefix: `${API}?action=parse&page=${tag}_` });
    expect(result.purged).toBe(2);
    for (const u of under) expect(await storage.lookup('shared', keyOf(u))).toBeUndefined();
    expect(await storage.lookup('shared', keyOf(outside))).toBeDefined();
    if (backend.shared) {
      expect(result.redisPurged).toBe(2);
      const { storage: fresh } = await backend.replica(ns);
      for (const u of under) expect(await fresh.lookup('shared', keyOf(u))).toBeUndefined();
      expect((await fresh.lookup('shared', keyOf(outside)))?.shared).toBe(true);
    }
    const all = await storage.purge({ kind: 'all' });
    expect(all.purged).toBe(1);
    if (backend.shared) {
      expect(all.redisPurged).toBe(1);
      const { storage: fresh } = await backend.replica(ns);
      expect(await fresh.lookup('shared', keyOf(outside))).toBeUndefined();
    }
  });

  it_('a prefix in natural parameter order and a pattern remove the keys they name, and only those', async () => {
    const ns = backend.namespace();
    const { storage } = await backend.replica(ns);
    const page = `q${++urls}y`;
    // Keys in the canonical order (policy/request.ts canonicalQuery): action, format, page.
    const named = `${API}?action=parse&format=json&page=${page}`;
    const otherPage = `${API}?action=parse&format=json&page=${page}z`;
    const otherAction = `${API}?action=query&format=json&page=${page}`;
    for (const u of [named, otherPage, otherAction]) await put(storage, 'shared', keyOf(u), entry(u));
    // As an operator types it: not the key's order; the last parameter whole.
    const byPrefix = await storage.purge({ kind: 'prefix', prefix: `${API}?page=${page}&action=parse&format=json` });
    expect(byPrefix.purged).toBe(1);
    expect(await storage.lookup('shared', keyOf(named))).toBeUndefined();
    expect(await storage.lookup('shared', keyOf(otherPage))).toBeDefined();
    const byPattern = await storage.purge({ kind: 'pattern', pattern: `${API}?action=*&page=${page}` });
    expect(byPattern.purged).toBe(1);
    expect(await storage.lookup('shared', keyOf(otherAction))).toBeUndefined();
    expect(await storage.lookup('shared', keyOf(otherPage))).toBeDefined();
    if (backend.shared) {
      expect(byPrefix.redisPurged).toBe(1);
      expect(byPattern.redisPurged).toBe(1);
      const { storage: fresh } = await backend.replica(ns);
      expect(await fresh.lookup('shared', keyOf(named))).toBeUndefined();
      expect(await fresh.lookup('shared', keyOf(otherAction))).toBeUndefined();
      expect((await fresh.lookup('shared', keyOf(otherPage)))?.shared).toBe(true);
    }
  });

  itShared('the shared tier lists every variant of a URL it holds (GET /cache on the admin port)', async () => {
    const { storage } = await backend.replica(backend.namespace());
    const url = newUrl();
    for (const variant of ['-', '=en']) await put(storage, 'shared', keyOf(url, undefined, variant), entry(url));
    await put(storage, 'session', keyOf(url, 'Aa'), entry(url, { slot: 'Aa' }));
    const listed = await storage.sharedVariants!(url, 10);
    expect(listed?.map((v) => v.tier).sort()).toEqual(['session', 'shared', 'shared']);
    for (const v of listed!) expect(v.entry.urlKey).toBe(url);
  });

  it_('an answer fetched before an invalidation is not stored after it', async () => {
    const ns = backend.namespace();
    const { storage } = await backend.replica(ns);
    const [byTag, byUrl, untouched] = [newUrl(), newUrl(), newUrl()];
    const mark = await storage.mark();
    // While the wiki was asked: an edit of the page, a PURGE of the URL.
    await storage.purge({ kind: 'tags', tags: ['p:0:Edited'] });
    await storage.purge({ kind: 'url', urlKey: byUrl });
    const tagged = entry(byTag, { deps: ['p:0:Edited'] });
    expect(storage.invalidatedSince(tagged, mark)).toBe(true);
    expect(await storage.store('shared', keyOf(byTag), tagged, mark)).toBe(false);
    expect(await storage.store('shared', keyOf(byUrl), entry(byUrl), mark)).toBe(false);
    expect(await storage.store('shared', keyOf(untouched), entry(untouched), mark)).toBe(true);
    expect(await storage.lookup('shared', keyOf(byTag))).toBeUndefined();
    expect(await storage.lookup('shared', keyOf(byUrl))).toBeUndefined();
    if (backend.shared) {
      const { storage: fresh } = await backend.replica(ns);
      expect(await fresh.lookup('shared', keyOf(byTag))).toBeUndefined();
      expect(await fresh.lookup('shared', keyOf(untouched))).toBeDefined();
    }
  });

  it_('an entry found dead is removed', async () => {
    const { storage } = await backend.replica(backend.namespace());
    const url = newUrl();
    // Stored with 200 ms left; dead (no grace here) by the time it is looked up.
    expect(await put(storage, 'shared', keyOf(url), entry(url, { storedAt: Date.now() - 59_800 }))).toBe(true);
    await new Promise((r) => setTimeout(r, 300));
    const found = await storage.lookup('shared', keyOf(url));
    if (found) {
      expect(storage.freshness(found.entry)).toBe('dead');
      storage.remove('shared', keyOf(url));
    }
    expect(await storage.lookup('shared', keyOf(url))).toBeUndefined();
  });

  it_('fetchOnce alone: this process fetches', async () => {
    const { storage } = await backend.replica(backend.namespace());
    const led = await storage.fetchOnce('shared', keyOf(newUrl()), () => Promise.resolve('fetched'), { waitMs: 1_000 });
    expect(led).toEqual({ fetched: 'fetched' });
    expect(await storage.refreshOnce('shared', keyOf(newUrl()), () => Promise.resolve('refreshed'))).toBe('refreshed');
  });

  itShared('a second replica finds the first one’s entry (hit-shared, then its own), and hears its purge', async () => {
    const ns = backend.namespace();
    const [one, two] = [await backend.replica(ns), await backend.replica(ns)];
    const url = newUrl();
    const e = entry(url);
    await put(one.storage, 'shared', keyOf(url), e);
    const first = await two.storage.lookup('shared', keyOf(url));
    expect(first?.shared).toBe(true);
    expect(first?.entry.body.toString()).toBe(e.body.toString());
    // The shared hit filled the second replica's local tier.
    expect(two.store.get('shared', keyOf(url))).toBeDefined();
    expect((await two.storage.lookup('shared', keyOf(url)))?.shared).toBe(false);
    // A purge on the first reaches the second's local tier (the shared tier's channel).
    await one.storage.purge({ kind: 'url', urlKey: url });
    await expect.poll(() => two.store.get('shared', keyOf(url)), { timeout: 5_000 }).toBeUndefined();
    expect(await two.storage.lookup('shared', keyOf(url))).toBeUndefined();
  });

  itShared('a gap recorded in the shared tier reaches every replica’s local tier', async () => {
    const ns = backend.namespace();
    const [one, two] = [await backend.replica(ns), await backend.replica(ns)];
    const url = newUrl();
    await put(two.storage, 'shared', keyOf(url), entry(url));
    await one.storage.purge({ kind: 'expire', before: Date.now() + 1 });
    await expect.poll(() => two.storage.freshness(two.store.get('shared', keyOf(url))!), { timeout: 5_000 }).not.toBe('fresh');
  });

  itShared('an invalidation on another replica keeps an answer fetched before it out of the shared tier', async () => {
    const ns = backend.namespace();
    const [one, two] = [await backend.replica(ns), await backend.replica(ns)];
    const url = newUrl();
    const mark = await one.storage.mark();
    await two.storage.purge({ kind: 'tags', tags: ['p:0:Edited_elsewhere'] });
    // Whether `one` has heard the purge yet or not (its local guard, or the shared tier's own).
    await one.storage.store('shared', keyOf(url), entry(url, { deps: ['p:0:Edited_elsewhere'] }), mark);
    const { storage: fresh } = await backend.replica(ns);
    expect(await fresh.lookup('shared', keyOf(url))).toBeUndefined();
  });

  itShared('fetchOnce across two replicas: one fetch, the other takes its entry', async () => {
    const ns = backend.namespace();
    const [one, two] = [await backend.replica(ns), await backend.replica(ns)];
    const url = newUrl();
    const key = keyOf(url);
    let fetches = 0;
    let started!: () => void;
    const fetching = new Promise<void>((r) => (started = r));
    let finish!: () => void;
    const finished = new Promise<void>((r) => (finish = r));
    const fetch = (storage: Storage) => async () => {
      fetches++;
      const mark = await storage.mark();
      started();
      await finished;
      await storage.store('shared', key, entry(url), mark);
      return 'fetched';
    };
    let waited = 0;
    const first = one.storage.fetchOnce('shared', key, fetch(one.storage), { waitMs: 10_000 });
    await fetching;
    const second = two.storage.fetchOnce('shared', key, fetch(two.storage), { waitMs: 10_000, waiting: () => waited++ });
    setTimeout(finish, 100);
    expect(await first).toEqual({ fetched: 'fetched' });
    const led = await second;
    expect('entry' in led && led.entry.urlKey).toBe(url);
    expect(fetches).toBe(1);
    expect(waited).toBe(1);
    // Kept locally by the replica that waited.
    expect(two.store.get('shared', key)).toBeDefined();
    // A background refresh: the replica that takes the lock refreshes, another one leaves it to it.
    const other = keyOf(newUrl());
    const holding = one.storage.refreshOnce('shared', other, () => new Promise((r) => setTimeout(() => r('one'), 300)));
    await new Promise((r) => setTimeout(r, 50));
    expect(await two.storage.refreshOnce('shared', other, () => Promise.resolve('two'))).toBeUndefined();
    expect(await holding).toBe('one');
  });

  // Last: it stops the shared tier.
  itShared('the shared tier down: lookups answer from the local tier, nothing throws', async () => {
    const ns = backend.namespace();
    const { storage } = await backend.replica(ns);
    const [held, missing, later] = [newUrl(), newUrl(), newUrl()];
    await put(storage, 'shared', keyOf(held), entry(held));
    await backend.breakShared!();
    try {
      expect((await storage.lookup('shared', keyOf(held)))?.shared).toBe(false);
      expect(await storage.lookup('shared', keyOf(missing))).toBeUndefined();
      expect(await storage.fetchOnce('shared', keyOf(missing), () => Promise.resolve('alone'), { waitMs: 1_000 })).toEqual({ fetched: 'alone' });
      expect(await put(storage, 'shared', keyOf(later), entry(later))).toBe(true);
      expect((await storage.lookup('shared', keyOf(later)))?.shared).toBe(false);
      const result = await storage.purge({ kind: 'url', urlKey: held });
      expect(result).toEqual({ purged: 1, redisPurged: null });
      expect(await storage.lookup('shared', keyOf(held))).toBeUndefined();
    } finally {
      await backend.repairShared!();
    }
  });
});
