/**
 * A session's cache entries die with the session and with its writes, on every path (api.php
 * and everything streamed through, such as index.php's Special:UserLogout or an edit form):
 *
 * - an answer that deletes a credential cookie the client sent (a logout, a session that failed
 *   to load) ends the session: its entries go;
 * - any request other than GET/HEAD by a session holder may change what the session sees (an
 *   edit, a preference, a watchlist change): its entries go too.
 *
 * Evicted locally, in Redis and, through the purge channel or IPC, on every other replica and
 * worker (cache/purge.ts), before the answer is sent, so the client's next read is fresh.
 */
import type { Logger } from 'pino';
import type { Gateway } from './gateway.js';
import type { Identity } from './identity.js';

export interface SessionEvents {
  /** The answer deleted a credential cookie the client sent (set-cookie.ts sessionEnded). */
  readonly ended: boolean;
  /** The request was not a GET or HEAD. */
  readonly wrote: boolean;
}

export function wrote(method: string): boolean {
  return method !== 'GET' && method !== 'HEAD';
}

export async function settleSession(gw: Gateway, log: Logger, identity: Identity, events: SessionEvents): Promise<void> {
  if (identity.kind !== 'session' || (!events.ended && !events.wrote)) return;
  const result = await gw.purge({ kind: 'slot', slot: identity.slot });
  if (!events.ended) return;
  gw.metrics.cookie('logout_eviction', 'session');
  log.info(
    { evicted: result.purged, ...(result.redisPurged !== undefined && { redisEvicted: result.redisPurged }) },
    'session ended: its cache entries were evicted',
  );
}
