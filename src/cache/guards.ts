/**
 * What an answer fetched before a purge must be checked against before it is stored after it.
 * A change names dependency tags (policy/dependencies.ts); a PURGE names a URL, a logout
 * or a rights change a session, the admin a module: each is recorded under a tag of its own
 * (the same invalidation log, cache/store.ts InvalidationLog locally and the `v:` keys in Redis,
 * redis/invalidations.ts), and an answer's guard tags are its dependency tags and these.
 *
 * Without them, a miss that asked the wiki just before `PURGE /w/api.php?…` (or a logout) and
 * got its answer just after would store the purged answer again, for the whole (long) TTL of a
 * followed wiki.
 *
 * Dependency tags are `*` or `<letter>:…` (dependencies.ts); these begin with `#`, so neither
 * can be taken for the other.
 */
import type { CacheEntry } from './entry.js';

export const urlGuard = (urlKey: string): string => `#url:${urlKey}`;
/**
 * Sessions by bucket, not one by one: any client with a session-like cookie makes a logout-like
 * eviction with every write it sends, and each records its guard (locally, and in Redis a key
 * kept GUARD_MS). The first two characters of the slot (an HMAC in base64url, mediawiki/identity.ts) make
 * 4,096 buckets: a bound on both, at the price of an answer of another session of the same
 * bucket, fetched during the eviction, not being stored that once.
 */
export const slotGuard = (slot: string): string => `#slot:${slot.slice(0, 2)}`;
export const moduleGuard = (module: string): string => `#module:${module}`;

/** What identifies an entry to the purges: its URL, its session, its modules, its dependencies. */
export type Guarded = Pick<CacheEntry, 'urlKey' | 'slot' | 'modules' | 'deps'>;

/** Every tag whose invalidation since a fetch began means its answer may predate a purge. */
export function guardTags(entry: Guarded): string[] {
  const tags = [...entry.deps, urlGuard(entry.urlKey)];
  if (entry.slot !== undefined) tags.push(slotGuard(entry.slot));
  for (const module of entry.modules) tags.push(moduleGuard(module));
  return tags;
}
