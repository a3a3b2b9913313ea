/**
 * The purges a process keeps for the shared tier while it cannot carry them
 * (tiered-storage.ts owe), in the order they came, each once: every purge is a removal or a gap
 * mark, which the same one carried later repeats to no effect.
 *
 * A session's own purge (a write or a logout of a session whose user no process learned:
 * steps/session-lifecycle.ts) is kept apart, by slot, up to MAX_OWED_SLOTS: any client makes
 * one with each POST under a made-up session cookie, and counted with the rest they turned an
 * outage of the shared tier into a gap for every replica after a thousand such requests
 * (test/unit/owed-session-purges-are-no-gap-for-every-replica.test.ts). The rest, wiki changes and
 * operators' purges, up to MAX_OWED; past either bound, a gap instead.
 */
import type { PurgeMessage } from '../words/purge-message.js';

/** Purges other than a session's kept while the shared tier cannot carry them; past this many, a gap instead. */
export const MAX_OWED = 1_000;
/**
 * Sessions' own purges kept apart (by slot: a slot is 43 characters, ~150 bytes kept each); past
 * this many, a gap instead. A carry is one bounded call to the shared tier each.
 */
export const MAX_OWED_SLOTS = 20_000;

type SlotPurge = Extract<PurgeMessage, { kind: 'slot' }>;

export class OwedQueue {
  private ordered: PurgeMessage[] = [];
  /** The spelling of each purge in `ordered` (owedKey), for the one-of-each rule. */
  private readonly keys = new Set<string>();
  private readonly slots = new Map<string, SlotPurge>();

  get size(): number {
    return this.ordered.length + this.slots.size;
  }

  /** Kept (or already kept); false when its bound is reached: a gap must stand for it. */
  add(message: PurgeMessage): boolean {
    if (message.kind === 'slot') {
      if (!this.slots.has(message.slot) && this.slots.size >= MAX_OWED_SLOTS) return false;
      this.keepSlot(message);
      return true;
    }
    const key = owedKey(message);
    if (this.keys.has(key)) return true;
    if (this.ordered.length >= MAX_OWED) return false;
    this.ordered.push(message);
    this.keys.add(key);
    return true;
  }

  /**
   * The next to carry, no longer kept: the oldest of the rest, then the sessions'. The same purge
   * owed while it is carried is kept again: it may name what was stored after this one ran.
   */
  take(): PurgeMessage | undefined {
    const first = this.ordered.shift();
    if (first) {
      this.keys.delete(owedKey(first));
      return first;
    }
    for (const [slot, message] of this.slots) {
      this.slots.delete(slot);
      return message;
    }
    return undefined;
  }

  /**
   * A purge taken (above) that could not be carried: kept again (past the bounds: it was kept
   * before them), first of the rest; a session's with the `wrote` of either.
   */
  putBack(message: PurgeMessage): void {
    if (message.kind === 'slot') return this.keepSlot(message);
    const key = owedKey(message);
    if (this.keys.has(key)) return;
    this.ordered.unshift(message);
    this.keys.add(key);
  }

  /**
   * A session's purge kept, once per slot, with the `wrote` of either: a write's purge also ends
   * the user's other sessions where the user is known (tiered-storage.ts heard).
   */
  private keepSlot(message: SlotPurge): void {
    const kept = this.slots.get(message.slot);
    if (!kept || (message.wrote && !kept.wrote)) this.slots.set(message.slot, message);
  }

  /** Every purge kept, in carrying order, and none kept any more. */
  takeAll(): PurgeMessage[] {
    const all = [...this.ordered, ...this.slots.values()];
    this.clear();
    return all;
  }

  clear(): void {
    this.ordered = [];
    this.keys.clear();
    this.slots.clear();
  }
}

/** One spelling per purge: its fields in a fixed order (a user's slots as a set). */
function owedKey(message: PurgeMessage): string {
  switch (message.kind) {
    case 'user':
      return JSON.stringify([message.kind, message.user, [...new Set(message.slots ?? [])].sort()]);
    case 'tags':
      return JSON.stringify([message.kind, [...new Set(message.tags)].sort()]);
    case 'expire':
      return JSON.stringify([message.kind, message.before, message.stalled === true]);
    case 'all':
      return '["all"]';
    case 'url':
      return JSON.stringify([message.kind, message.urlKey]);
    case 'module':
      return JSON.stringify([message.kind, message.module]);
    case 'prefix':
      return JSON.stringify([message.kind, message.prefix]);
    case 'pattern':
      return JSON.stringify([message.kind, message.pattern]);
    case 'slot':
      return JSON.stringify([message.kind, message.slot, message.wrote === true]);
  }
}
