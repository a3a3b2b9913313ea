// Two gateway replicas sharing a throw-away redis-server (or Redis Cluster: redis-backends.ts) in front of the real wiki, the change
// follower on both (one follows: the Redis lease); B reaches the wiki through a proxy that can
// hold an answer back (holding-proxy.ts), for races such as "fetched before a purge, received
// after it". And waits on their state, never on time: the suite runs on busy machines.
import { setTimeout as sleep } from 'node:timers/promises';
import { type RunningGateway, startGateway } from './gateway.js';
import { startHoldingProxy, type HoldingProxy } from './holding-proxy.js';
import { http } from './http.js';
import { oneRedis, type RedisBackendStart, type RunningRedisBackend } from './redis-backends.js';

export const FOLLOWER_POLL_MS = 250;

export interface Replicas {
  readonly redis: RunningRedisBackend;
  readonly proxy: HoldingProxy;
  /** Straight at the wiki. */
  readonly a: RunningGateway;
  /** Through the holding proxy. */
  readonly b: RunningGateway;
  close(): Promise<void>;
}

export async function startReplicas(wiki: string, start: RedisBackendStart = oneRedis): Promise<Replicas> {
  const redis = await start();
  const proxy = await startHoldingProxy(wiki);
  const env = {
    ...redis.env,
    WIKIEDGE_IDENTITY_SECRET: 'replicas-share-this-identity-secret',
    WIKIEDGE_RC_FOLLOW: 'true',
    WIKIEDGE_RC_POLL_MS: String(FOLLOWER_POLL_MS),
  };
  const [a, b] = await Promise.all([startGateway(wiki, env), startGateway(proxy.url, env)]);
  const replicas = {
    redis,
    proxy,
    a,
    b,
    async close() {
      await Promise.all([a.close(), b.close()]);
      await proxy.close();
      await redis.stop();
    },
  };
  await until(
    'both followers up',
    async () => (await metric(a, /^wikiedge_change_follower_up (\d+)/m)) === 1 && (await metric(b, /^wikiedge_change_follower_up (\d+)/m)) === 1,
  );
  return replicas;
}

/** The first value of a metric line's capture group; 0 when the line is not there (yet). */
export async function metric(gw: RunningGateway, line: RegExp): Promise<number> {
  const m = line.exec((await http(`${gw.adminUrl}/metrics`)).body);
  return m ? Number(m[1]) : 0;
}

/** Wait until `ready` says yes, polling; fails naming `what` after `boundMs`. */
export async function until(what: string, ready: () => Promise<boolean>, boundMs = 15_000): Promise<void> {
  const t0 = Date.now();
  while (!(await ready())) {
    if (Date.now() - t0 > boundMs) throw new Error(`${what}: not after ${boundMs} ms`);
    await sleep(25);
  }
}

/**
 * Wait until the follower (on whichever replica leads) has made a whole poll that began after
 * now, and the rebounds of what it applied are done too (RunningGateway.reboundsDone): the
 * changes made before this call are applied, and will not invalidate what is cached after it
 * returns. A poll that ended after now may have begun before; the next one did not.
 */
export async function followerCaughtUp(replicas: readonly RunningGateway[]): Promise<void> {
  const lastPoll = async () =>
    Math.max(...(await Promise.all(replicas.map((r) => metric(r, /^wikiedge_change_follower_last_success_timestamp_seconds (\S+)/m)))));
  const now = Date.now() / 1000;
  await until('a poll ended after now', async () => (await lastPoll()) > now);
  const ended = await lastPoll();
  await until('a poll begun after now ended', async () => (await lastPoll()) > ended);
  await Promise.all(replicas.map((r) => r.reboundsDone()));
}
