/**
 * The words of a purge, shared by every tier, the purge fan-out between processes and replicas,
 * the admin listener and the access log. Its home is here, below the storage it describes, so
 * that nothing needs the Redis code to speak of a purge.
 */
/** What travels on the purge channel: never a cookie (slots are HMACs), never an entry. */
export type PurgeMessage =
  | { readonly kind: 'url'; readonly urlKey: string }
  /**
   * A session's entries. `wrote`: the session wrote, and its user was unknown to the sender: a
   * receiver that learned whose session it is evicts that user's other sessions too.
   */
  | { readonly kind: 'slot'; readonly slot: string; readonly wrote?: true }
  | { readonly kind: 'module'; readonly module: string }
  | { readonly kind: 'prefix'; readonly prefix: string }
  /** Every URL key matching a glob whose only wildcard is `*` (words/url-pattern.ts). */
  | { readonly kind: 'pattern'; readonly pattern: string }
  | { readonly kind: 'all' }
  /** A change: every entry depending on one of the tags (policy/dependencies.ts). */
  | { readonly kind: 'tags'; readonly tags: readonly string[] }
  /**
   * A user's rights changed: every entry of its sessions, those named in `slots` (what the
   * sender knew: its own SessionUsers and Redis' list) and those the receiver learned itself.
   */
  | { readonly kind: 'user'; readonly user: string; readonly slots?: readonly string[] }
  /**
   * A gap in the change signals: nothing stored before `before` (ms) is vouched for. `stalled`:
   * the gap of a follower that heard of no vouching poll for too long (follower.ts checkStalled);
   * owed to a shared tier this process could not reach, it is this process's alone when a
   * follower vouched past it meanwhile (tiered-storage.ts carryOwedNow). No other process reads
   * it (redis/purges.ts drops it): there, a gap is a gap.
   */
  | { readonly kind: 'expire'; readonly before: number; readonly stalled?: true };
