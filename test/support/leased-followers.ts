// Replicas taking turns at following one wiki, on the real clock: a lease kept as LEASE_LUA keeps
// it (src/cache/redis/follower-state.ts) and one cursor store, both shared as Redis shares them,
// and the wiki reachable twice, once slowly, so that one replica's poll can outlast the lease
// while another's is quick.
import pino from 'pino';
import { Registry } from 'prom-client';
import { afterAll, beforeAll } from 'vitest';
import { ChangeFollower, type Cursor, type FollowerOptions, type Lease } from '../../src/invalidation/follower.js';
import { ChangeSignalMetrics } from '../../src/observe/change-metrics.js';
import { Upstream } from '../../src/upstream/upstream.js';
import { type FakeUpstream, startFakeUpstream } from './fake-upstream.js';
import { FakeRecentChanges } from './fake-recentchanges.js';

export interface SlowAndFastWiki {
  /** One wiki (its clock set to the real one before the file's first test) behind both servers. */
  readonly wiki: FakeRecentChanges;
  /** Answers each recentchanges page after `pageMs()` (read at each request), anything else at once. */
  readonly slow: FakeUpstream;
  /** Answers at once. */
  readonly fast: FakeUpstream;
}

/** Call at the top of a test file: registers the file's beforeAll/afterAll that start and close both servers. */
export function slowAndFastWiki(pageMs: () => number): SlowAndFastWiki {
  const wiki = new FakeRecentChanges();
  const servers: { slow?: FakeUpstream; fast?: FakeUpstream } = {};
  beforeAll(async () => {
    wiki.clock = Date.now();
    servers.slow = await startFakeUpstream((req, res) => void setTimeout(() => wiki.handler(req, res), req.url?.includes('recentchanges') ? pageMs() : 0));
    servers.fast = await startFakeUpstream(wiki.handler);
  });
  afterAll(async () => {
    await servers.slow?.close();
    await servers.fast?.close();
  });
  const started = (which: 'slow' | 'fast'): FakeUpstream => {
    const server = servers[which];
    if (!server) throw new Error(`slowAndFastWiki: read \`${which}\` inside a test, after beforeAll`);
    return server;
  };
  return {
    wiki,
    get slow() {
      return started('slow');
    },
    get fast() {
      return started('fast');
    },
  };
}

export interface LeasedReplicas {
  /** The id of each replica that saved the cursor, in order: tests empty it (length = 0). */
  readonly writers: string[];
  /** Replica `id`, following the wiki at `url` when it holds the lease. */
  follower(id: string, url: string): ChangeFollower;
  /** The lease expires now, whoever holds it (its holder's renewals did not reach Redis in time). */
  expireLease(): void;
}

/** The settings in which the lease tests' followers differ; the rest is as a gateway sets it, with 30 s timeouts. */
export type LeasedFollowerSettings = Pick<FollowerOptions, 'unhealthyAfterMs' | 'gapAfterMs' | 'pollBudgetMs'> &
  Partial<Pick<FollowerOptions, 'apply'>> & {
    /** While true, every renewal answers unknown without reaching the lease (a call that timed out). */
    readonly renewalsTimeOut?: () => boolean;
    /** The lease tells its duration (Lease.durationMs), as the gateway's does. */
    readonly tellsDuration?: boolean;
  };

/** Replicas sharing a lease of `leaseMs` and a cursor; each call to `follower` is one more replica. */
export function leasedReplicas(leaseMs: number, settings: LeasedFollowerSettings): LeasedReplicas {
  const lease = { holder: undefined as string | undefined, until: 0 };
  const leaseFor = (id: string): Lease => ({
    ...(settings.tellsDuration && { durationMs: leaseMs }),
    hold: () => {
      if (settings.renewalsTimeOut?.()) return Promise.resolve(undefined);
      const now = Date.now();
      if (lease.holder === undefined || now > lease.until || lease.holder === id) {
        lease.holder = id;
        lease.until = now + leaseMs;
        return Promise.resolve(true);
      }
      return Promise.resolve(false);
    },
    release: () => {
      if (lease.holder === id) lease.holder = undefined;
      return Promise.resolve();
    },
  });
  let stored: Cursor | undefined;
  const writers: string[] = [];
  const follower = (id: string, url: string) =>
    new ChangeFollower({
      upstream: new Upstream({ origin: new URL(url), connectTimeoutMs: 1_000, responseTimeoutMs: 30_000, connections: 2 }),
      apiPath: '/w/api.php',
      pollMs: 1_000,
      unhealthyAfterMs: settings.unhealthyAfterMs,
      gapAfterMs: settings.gapAfterMs,
      ...(settings.pollBudgetMs !== undefined && { pollBudgetMs: settings.pollBudgetMs }),
      requestTimeoutMs: 30_000,
      now: () => Date.now(),
      log: pino({ level: 'silent' }),
      metrics: new ChangeSignalMetrics(new Registry()),
      cursors: {
        load: () => Promise.resolve(stored),
        save: (c: Cursor) => {
          stored = c;
          writers.push(id);
          return Promise.resolve();
        },
      },
      lease: leaseFor(id),
      apply: settings.apply ?? (() => Promise.resolve()),
      expire: () => Promise.resolve(),
      namespaces: () => undefined,
    });
  const expireLease = () => {
    lease.until = 0;
    lease.holder = undefined;
  };
  return { writers, follower, expireLease };
}
