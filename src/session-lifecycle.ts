/**
 * A session's cache entries die with the session and with its writes, on every path (api.php
 * and everything streamed through, such as index.php's Special:UserLogout or an edit form):
 *
 * - an answer that deletes a credential cookie the client sent (a logout, a session that failed
 *   to load) ends the session: its entries go;
 * - any request other than GET/HEAD by a session holder may change what the session sees (an
 *   edit, a preference, a watchlist change): its entries go too, and so do those of every other
 *   session of the same user the gateway knows of (invalidation/session-users.ts, and Redis'
 *   record of it with replicas). What one session writes, the user's others read: a preference
 *   or a watchlist change shows in their userinfo and watchlist answers, and a password changed
 *   through Special:ChangeCredentials ends them at the wiki (SpecialChangeCredentials calls
 *   SessionManager::invalidateSessionsForUser; observed on 1.39: the other session's next
 *   userinfo is anonymous), so their cached private answers must not outlive them.
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
  const user = events.wrote ? await userOfSession(gw, identity.slot) : undefined;
  const result = await gw.purge(
    user !== undefined
      ? { kind: 'user', user, slots: [identity.slot] }
      : // Unknown here: a sibling or replica that learned whose session it is ends the others.
        { kind: 'slot', slot: identity.slot, ...(events.wrote && { wrote: true }) },
  );
  if (!events.ended) return;
  gw.metrics.cookie('logout_eviction', 'session');
  log.info(
    { evicted: result.purged, ...(result.redisPurged !== undefined && { redisEvicted: result.redisPurged }) },
    'session ended: its cache entries were evicted',
  );
}

/**
 * Whose session `slot` is, as an answer of the wiki said (userinfo, a login) to this process or,
 * with Redis, to any replica; never from the client's own cookies (a `UserName` cookie names
 * anyone). Unknown: only the session's own entries go, as before the user was learned.
 */
async function userOfSession(gw: Gateway, slot: string): Promise<string | undefined> {
  return gw.sessionUsers.userOf(slot) ?? (await gw.redis?.sessionUser(slot));
}
