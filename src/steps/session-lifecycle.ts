/**
 * A session's cache entries die with the session and with its writes, on every path (api.php
 * and everything streamed through, such as index.php's Special:UserLogout or an edit form):
 *
 * - an answer that deletes a credential cookie the client sent (a logout, a session that failed
 *   to load) ends the session: its entries go;
 * - any request other than GET/HEAD by a session holder may change what the session sees (an
 *   edit, a preference, a watchlist change): its entries go too, and so do those of every other
 *   session of the same user the gateway knows of (policy/session-users.ts, and the shared
 *   tier's record of it with replicas). What one session writes, the user's others read: a preference
 *   or a watchlist change shows in their userinfo and watchlist answers, and a password changed
 *   through Special:ChangeCredentials ends them at the wiki (SpecialChangeCredentials calls
 *   SessionManager::invalidateSessionsForUser; observed on 1.39: the other session's next
 *   userinfo is anonymous), so their cached private answers must not outlive them.
 *
 * Evicted locally, in the shared tier and, through its purge channel or IPC, on every other
 * replica and worker (cache/storage.ts purge), before the answer is sent, so the client's next
 * read is fresh.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Logger } from 'pino';
import type { Storage } from '../cache/storage.js';
import type { Metrics } from '../observe/metrics.js';
import type { Identity, IdentityRules } from '../mediawiki/identity.js';
import type { CookieNames } from '../mediawiki/set-cookie.js';
import { sessionAfterAnswer } from '../policy/session-users.js';

export interface SessionEvents {
  /** The answer deleted a credential cookie the client sent (mediawiki/set-cookie.ts sessionEnded). */
  readonly ended: boolean;
  /** The request may have changed what the session sees (mediawiki/modules.ts `wrote`). */
  readonly wrote: boolean;
}

export async function settleSession(storage: Storage, metrics: Metrics, log: Logger, identity: Identity, events: SessionEvents): Promise<void> {
  if (identity.kind !== 'session' || (!events.ended && !events.wrote)) return;
  // Whose session it is, as an answer of the wiki said (userinfo, a login) to this process or,
  // with a shared tier, to any replica; never from the client's own cookies (a `UserName` cookie
  // names anyone). Unknown: only the session's own entries go, as before the user was learned.
  const user = events.wrote ? await storage.userOfSession(identity.slot) : undefined;
  const result = await storage.purge(
    user !== undefined
      ? { kind: 'user', user, slots: [identity.slot] }
      : // Unknown here: a sibling or replica that learned whose session it is ends the others.
        { kind: 'slot', slot: identity.slot, ...(events.wrote && { wrote: true }) },
    // The client's answer waits: bounded by WIKIEDGE_REDIS_TIMEOUT_MS (twice, with the lookup
    // of the session's user above), and the user's sessions are at most MAX_SESSIONS_PER_USER.
    { onClientPath: true },
  );
  if (!events.ended) return;
  metrics.cookie('logout_eviction', 'session');
  log.info(
    { evicted: result.purged, ...(result.redisPurged !== undefined && { redisEvicted: result.redisPurged }) },
    'session ended: its cache entries were evicted',
  );
}

/** What learning a session's user takes: the storage that shares it, the cookie rules, the clock. */
export interface SessionParts {
  readonly storage: Storage;
  readonly identityRules: IdentityRules;
  readonly cookieNames: CookieNames;
  readonly now: () => number;
}

/**
 * Which user a session belongs to, from what the wiki says (policy/session-users.ts): the
 * request's own session when `named` (userinfo's user, which the caller read from the answer
 * for `requestSlot`), and the session the answer leaves the client holding when it sets one (a
 * login through api.php or index.php, a renewed session): its `{prefix}UserName`, or `named`.
 * A rights change, a block or a write of that user then ends the session's entries.
 */
export function learnSessionUser(
  parts: SessionParts,
  headers: IncomingHttpHeaders,
  setCookie: string | string[] | undefined,
  requestSlot: string | undefined,
  named: string | undefined,
): void {
  if (requestSlot !== undefined && named !== undefined) parts.storage.noteSession(requestSlot, named);
  if (setCookie === undefined) return;
  const lines = Array.isArray(setCookie) ? setCookie : [setCookie];
  const after = sessionAfterAnswer(headers, lines, parts.identityRules, parts.cookieNames.cookiePrefix, named, parts.now());
  if (after && after.slot !== requestSlot) parts.storage.noteSession(after.slot, after.user);
}
