/**
 * What the admin listener shows of the cache (GET /cache, GET /cache/stats): pure descriptions
 * of what the local tier holds, from its entries and their keys, never the session slot, a
 * cookie or a credential (a session's variants are numbered, not named).
 */
import { ageSeconds, type Freshness } from '../policy/freshness.js';
import { KEYED_FIELDS } from '../policy/request.js';
import { userTag } from '../policy/dependencies.js';
import type { Tier } from '../words/outcomes.js';
import type { CacheEntry } from './entry.js';

/** Who asked, as shown: the kind only. A session whose user this process knows is a user's. */
export type IdentityKind = 'anonymous' | 'session' | 'user' | 'unsure';

export function identityKind(kind: 'anonymous' | 'session' | 'unsure', user: string | undefined): IdentityKind {
  return kind === 'session' && user !== undefined ? 'user' : kind;
}

/** The stored forms of an entry: `identity` (the answer as it is), or `gzip` and, once made, `br`. */
export function codingsOf(entry: { readonly coding?: 'gzip' | undefined; readonly br?: Buffer | undefined }): string[] {
  if (entry.coding !== 'gzip') return ['identity'];
  return entry.br ? ['gzip', 'br'] : ['gzip'];
}

/** One variant of a URL as GET /cache shows it. */
export interface VariantView {
  /** Where it is held: this process's tier (`local`) or the one every replica shares. */
  readonly tier: 'local' | 'shared';
  /** The local tier's part: the one everybody shares, or the per-session one. */
  readonly part: Tier;
  readonly identity: IdentityKind;
  /** A session's variants numbered 1, 2, … in this answer only: never the slot. */
  readonly session?: number;
  /** The keyed request headers (policy/request.ts KEYED_FIELDS), each null when absent; null for the shared tier, which keeps keys hashed. */
  readonly keyedHeaders: Readonly<Record<string, string | null>> | null;
  readonly status: number;
  readonly freshness: Freshness;
  readonly ageSeconds: number;
  readonly ttlSeconds: number;
  /** Seconds until it is no longer fresh (0 once it is not). */
  readonly ttlLeftSeconds: number;
  /** Local: what it costs its tier's budget (tier.ts entrySize); shared: its encoded size there. */
  readonly bytes: number;
  /** The stored body (and br form) bytes. */
  readonly bodyBytes: number;
  readonly codings: readonly string[];
  readonly modules: readonly string[];
  readonly dependencies: readonly string[];
  /** The answer carries the wiki's clock: never served in grace (policy/freshness.ts). */
  readonly clock: boolean;
}

/** A variant as held: where, in which part, whose session (the slot, read here only), its keyed headers when known. */
export interface HeldVariant {
  readonly where: 'local' | 'shared';
  readonly part: Tier;
  readonly slot: string | undefined;
  /** Null for the shared tier, which keeps its keys hashed. */
  readonly keyedHeaders: Readonly<Record<string, string | null>> | null;
  readonly entry: CacheEntry;
  readonly bytes: number;
}

/** The local tier's variants of a URL (cache/store.ts variants), their slot and keyed headers read from their keys. */
export function localVariants(
  held: readonly { readonly tier: Tier; readonly key: string; readonly entry: CacheEntry; readonly bytes: number }[],
): HeldVariant[] {
  return held.map(({ tier, key, entry, bytes }) => {
    const parts = keyParts(key);
    return { where: 'local', part: tier, slot: parts.slot, keyedHeaders: parts.keyedHeaders, entry, bytes };
  });
}

/** The shared tier's variants of a URL (storage.ts SharedVariant): the slot is the entry's own. */
export function sharedVariants(held: readonly { readonly tier: Tier; readonly entry: CacheEntry; readonly bytes: number }[]): HeldVariant[] {
  return held.map(({ tier, entry, bytes }) => ({ where: 'shared', part: tier, slot: entry.slot, keyedHeaders: null, entry, bytes }));
}

/**
 * The parts of a cache key (policy/request.ts cacheKey: the URL key, `anon` or
 * `s:<slot>:<variant>`, then one line per keyed header, `-` when absent, `=value` when present);
 * test/unit/cache-inspection-key-parts.test.ts holds this to cacheKey.
 */
export function keyParts(key: string): { readonly urlKey: string; readonly slot: string | undefined; readonly keyedHeaders: Record<string, string | null> } {
  const lines = key.split('\n');
  const identity = lines[1] ?? 'anon';
  const slot = identity.startsWith('s:') ? identity.slice(2, identity.lastIndexOf(':')) : undefined;
  const keyedHeaders: Record<string, string | null> = {};
  KEYED_FIELDS.forEach((field, i) => {
    const line = lines[2 + i];
    keyedHeaders[field] = line === undefined || line === '-' ? null : line.slice(1);
  });
  return { urlKey: lines[0]!, slot, keyedHeaders };
}

/**
 * Every variant held for one URL, as shown: sessions numbered in the order met, the same number
 * for the same session within the answer (its local and shared copies alike).
 */
export function describeVariants(
  held: readonly HeldVariant[],
  now: number,
  freshness: (entry: CacheEntry) => Freshness,
  userOf: (slot: string) => string | undefined,
): VariantView[] {
  const sessions = new Map<string, number>();
  return held.map(({ where, part, slot, keyedHeaders, entry, bytes }) => {
    let session: number | undefined;
    if (slot !== undefined) {
      session = sessions.get(slot) ?? sessions.size + 1;
      sessions.set(slot, session);
    }
    const br = entry.br;
    return {
      tier: where,
      part,
      identity: identityKind(slot === undefined ? 'anonymous' : 'session', slot === undefined ? undefined : userOf(slot)),
      ...(session !== undefined && { session }),
      keyedHeaders,
      status: entry.status,
      freshness: freshness(entry),
      ageSeconds: ageSeconds(entry, now),
      ttlSeconds: entry.ttlMs / 1000,
      ttlLeftSeconds: Math.max(0, Math.floor((entry.storedAt + entry.ttlMs - now) / 1000)),
      bytes,
      bodyBytes: entry.body.length + (br ? br.length : 0),
      codings: codingsOf(entry),
      modules: entry.modules,
      dependencies: shownDependencies(entry.deps),
      clock: entry.clock === true,
    };
  });
}

/** Dependency tags as shown (GET /cache, POST /trace): a session's user (policy/dependencies.ts userTag) is not named. */
export function shownDependencies(deps: readonly string[]): string[] {
  return deps.map((tag) => (tag.startsWith(USER_TAG_PREFIX) ? USER_TAG_SHOWN : tag));
}
const USER_TAG_PREFIX = userTag('');
const USER_TAG_SHOWN = userTag('(the session`s user)');

/** Entries by module label and local tier part (GET /cache/stats). */
export function countByModule(
  parts: readonly { readonly part: Tier; readonly modules: readonly (readonly string[])[] }[],
  label: (modules: readonly string[]) => string,
): Record<string, Record<Tier, number>> {
  const counts: Record<string, Record<Tier, number>> = {};
  for (const { part, modules } of parts) {
    for (const m of modules) {
      const row = (counts[label(m)] ??= { shared: 0, session: 0 });
      row[part]++;
    }
  }
  return Object.fromEntries(Object.entries(counts).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}
