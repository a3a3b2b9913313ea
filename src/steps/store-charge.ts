/**
 * What a client's answers may add to a tier: the store budget of the client a request is served
 * as (limits/client-budget.ts StoreBudget), charged for its misses' entries (steps/flow.ts) and for
 * the br forms its hits ask for (compression/representations.ts makeBrotli). A session whose user
 * the gateway has not learned is charged to its address's such sessions together too: a made-up
 * session cookie costs nothing, an account does.
 *
 * Charged to the client as the gateway served it (its identity, from the headers the wiki is
 * sent), not as its raw headers read: a made-up session cookie or Authorization header listed in
 * Connection never reaches the wiki, the answer is stored in the shared tier, and each such
 * store went on a new session's full bucket (docs/SECURITY.md class 50,
 * test/in-process/attack-store-budget-evaded-with-a-connection-listed-cookie.test.ts). Every
 * shared store is an anonymous request's, charged to its address.
 */
import type { Identity } from '../mediawiki/identity.js';
import { clientAddress, clientKey, unknownSession } from '../limits/client-key.js';
import type { StoreBudget } from '../limits/client-budget.js';
import type { SessionUsers } from '../policy/session-users.js';
import type { AddressMatcher } from '../words/address-list.js';
import type { Tier } from '../words/outcomes.js';

export interface StoreChargeParts {
  readonly trusted: AddressMatcher;
  readonly sessionUsers: SessionUsers;
  readonly storeBudget: StoreBudget;
  readonly sessionStoreBudget: StoreBudget;
  readonly now: () => number;
}

/** The budget of the client (peer, X-Forwarded-For, identity) in `tier`. */
export interface StoreCharge {
  /** Whether it would take `bytes` now, changing nothing. */
  affords(bytes: number): boolean;
  /** Takes `bytes`; false when it does not take them. */
  take(bytes: number): boolean;
}

/** The client is decided now (its connection may be gone when the charge is made). */
export function storeCharge(parts: StoreChargeParts, peer: string | undefined, forwardedFor: string | undefined, identity: Identity, tier: Tier): StoreCharge {
  const address = clientAddress(peer, forwardedFor, parts.trusted);
  const client = clientKey(address, identity, (slot) => parts.sessionUsers.userOf(slot));
  const budget = tier === 'shared' ? parts.storeBudget : parts.sessionStoreBudget;
  const group = tier === 'session' && unknownSession(client) ? client.group : undefined;
  return {
    affords: (bytes) => budget.affords(client.key, bytes, parts.now(), group),
    take: (bytes) => budget.take(client.key, bytes, parts.now(), group),
  };
}
