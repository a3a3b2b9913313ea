/**
 * The storage seam (cache/storage.ts) over this process's tiers alone (cache/store.ts): no other
 * replica to share with, wait for or tell. In a cluster without Redis the other workers of this
 * replica are told of purges and of whose sessions are whose through `siblings` (IPC).
 */
import type { Tier } from '../words/outcomes.js';
import type { PurgeMessage } from '../words/purge-message.js';
import type { Freshness } from '../policy/freshness.js';
import type { CacheEntry } from './entry.js';
import type { Guarded } from './guards.js';
import { type PurgeResult, type PurgeSiblings, type SessionBook, applyLocalPurge, purgeEverywhere } from './purge.js';
import type { CacheStore } from './store.js';
import type { FetchMark, Found, Led, OwedPurges, PurgeOptions, Storage } from './storage.js';

export interface LocalStorageOptions {
  /** The in-process tiers. */
  readonly store: CacheStore;
  /** Which sessions are whose, as this process learned it (policy/session-users.ts). */
  readonly users: SessionBook;
  /** The other workers of this replica (cluster mode). */
  readonly siblings?: PurgeSiblings;
}

export class LocalStorage implements Storage {
  readonly shared = false;
  readonly followerState = undefined;
  private readonly local: CacheStore;

  constructor(private readonly opts: LocalStorageOptions) {
    this.local = opts.store;
  }

  open(): Promise<void> {
    return Promise.resolve();
  }

  close(): Promise<void> {
    return Promise.resolve();
  }

  /** No shared tier: nothing is ever owed. */
  owesPurges(): boolean {
    return false;
  }

  /** No shared tier: nothing is ever owed. */
  takeOwed(): Promise<OwedPurges> {
    return Promise.resolve({ messages: [], overflow: false });
  }

  /** No shared tier to carry them to (a reload that turned Redis off): the old gateway's Redis is no longer ours. */
  adoptOwed(): void {}

  /** No shared tier: nothing is ever owed. */
  handOwedTo(): void {}

  lookup(tier: Tier, key: string): Found | undefined {
    const entry = this.local.get(tier, key);
    return entry && { entry, shared: false };
  }

  freshness(entry: CacheEntry): Freshness {
    return this.local.freshness(entry);
  }

  remove(tier: Tier, key: string): void {
    this.local.delete(tier, key);
  }

  fetchOnce<T>(_tier: Tier, _key: string, fetch: () => Promise<T>): Promise<Led<T>> {
    return fetch().then((fetched) => ({ fetched }));
  }

  refreshOnce<T>(_tier: Tier, _key: string, refresh: () => Promise<T>): Promise<T | undefined> {
    return refresh();
  }

  mark(): FetchMark {
    return { local: this.local.invalidationMark(), shared: undefined };
  }

  invalidatedSince(answer: Guarded, mark: FetchMark): boolean {
    return this.local.invalidatedSince(answer, mark.local);
  }

  store(tier: Tier, key: string, entry: CacheEntry, mark: FetchMark): boolean {
    return !this.local.invalidatedSince(entry, mark.local) && this.local.set(tier, key, entry);
  }

  purge(message: PurgeMessage, options: PurgeOptions = {}): Promise<PurgeResult> {
    const siblings = options.tellSiblings === false ? undefined : this.opts.siblings;
    return purgeEverywhere(this.local, undefined, message, siblings, this.opts.users, options.onClientPath);
  }

  purgeHere(message: PurgeMessage): number {
    return applyLocalPurge(this.local, message, this.opts.users);
  }

  userOfSession(slot: string): Promise<string | undefined> {
    return Promise.resolve(this.opts.users.userOf(slot));
  }

  noteSession(slot: string, user: string): void {
    this.opts.users.note(slot, user);
    // No shared tier to find it in: the siblings are told.
    this.opts.siblings?.sessionUser?.(slot, user);
  }
}
