/**
 * The metrics of MediaWiki's change signals (src/invalidation/): what arrived, what it removed,
 * how late, and the change follower's state. Its own module beside metrics.ts, whose purge
 * sources it counts purges under.
 */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { PurgeSource } from './metrics.js';
import { GAP_REASONS } from '../words/outcomes.js';

/** recentchanges types, core log types ($wgLogTypes, includes/MainConfigSchema.php) and write actions: the `type` label's closed set. */
const CHANGE_TYPES = new Set([
  'edit',
  'new',
  'categorize',
  'external',
  'purge',
  'log/delete',
  'log/move',
  'log/protect',
  'log/upload',
  'log/import',
  'log/merge',
  'log/rights',
  'log/block',
  'log/newusers',
  'log/managetags',
  'log/contentmodel',
  'log/pagelang',
  // Writes through the gateway (source=write), by action.
  'move',
  'delete',
  'undelete',
  'protect',
  'rollback',
  'upload',
  'filerevert',
  'mergehistory',
  'changecontentmodel',
  'setpagelanguage',
  'revisiondelete',
  'import',
  'managetags',
  'tag',
  // A Wikibase write through the gateway; a purged page the wiki confirmed changed.
  'wikibase',
  'confirmed',
]);

const PURGE_SOURCE_OF_CAUSE: Readonly<Record<string, PurgeSource>> = {
  follower: 'follower',
  write: 'write',
  user: 'user-rights',
  gap: 'gap',
};

/** MediaWiki's change signals (src/invalidation/): what arrived, what it removed, how late. */
export class ChangeSignalMetrics {
  readonly events: Counter<'source' | 'type'>;
  readonly invalidatedEntries: Counter<'cause'>;
  /** Entries invalidated by a change, by the module label of their request (bounded: mediawiki/modules.ts moduleLabeller). */
  readonly invalidatedByModule: Counter<'module'>;
  readonly lagSeconds: Histogram<'source'>;
  readonly followerUp: Gauge;
  readonly followerLeader: Gauge;
  readonly followerLastSuccess: Gauge;
  readonly followerCursorLag: Gauge;
  readonly followerPolls: Counter<'outcome'>;
  readonly followerGaps: Counter<'reason'>;
  private readonly purges: { purgeRequested(source: PurgeSource): void } | undefined;
  /** The follower's health as the TTL decision reads it now (followerHealth); undefined: the last poll's. */
  private upNow: (() => boolean) | undefined;

  constructor(
    registry: Registry,
    opts: {
      /** WIKIEDGE_RC_FOLLOW: the follower runs, and its gauges mean something (the alerts ask). */
      followerEnabled?: boolean;
      /** Where the purges the change signals ask for are counted (wikiedge_purge_requests_total). */
      purges?: { purgeRequested(source: PurgeSource): void };
    } = {},
  ) {
    const registers = [registry];
    this.purges = opts.purges;
    this.events = new Counter({
      name: 'wikiedge_change_events_total',
      help: 'Changes of the wiki the gateway learned of, by source (purge: a CDN PURGE; follower: a recentchanges row) and type (edit, new, log/<type>, categorize, external, purge).',
      labelNames: ['source', 'type'] as const,
      registers,
    });
    this.invalidatedByModule = new Counter({
      name: 'wikiedge_invalidated_entries_by_module_total',
      help: 'Cached entries removed because the wiki changed what they depend on, by the API module of their request (the module label of wikiedge_requests_total), in this process`s tiers.',
      labelNames: ['module'] as const,
      registers: [registry],
    });
    this.invalidatedEntries = new Counter({
      name: 'wikiedge_invalidated_entries_total',
      help: 'Cached entries removed because the wiki changed what they depend on, by cause (purge, follower, write, rebound: the second invalidation WIKIEDGE_REBOUND_PURGE_MS after a change, user: a user whose rights changed, gap: counted once per gap, entries refreshed at next use).',
      labelNames: ['cause'] as const,
      registers,
    });
    this.lagSeconds = new Histogram({
      name: 'wikiedge_invalidation_lag_seconds',
      help: "From a change (its recentchanges timestamp, the wiki's clock, 1 s resolution; a PURGE's arrival) to the removal of what depended on it, by source.",
      labelNames: ['source'] as const,
      buckets: [0.1, 0.25, 0.5, 1, 1.5, 2, 3, 5, 10, 30, 60, 300],
      registers,
    });
    // Aggregators: how a cluster's primary folds its workers' figures into one (sum by default,
    // which would make a timestamp of two workers twice the time).
    new Gauge({
      name: 'wikiedge_change_follower_enabled',
      help: '1 when the change follower is configured (WIKIEDGE_RC_FOLLOW), else 0: the other follower figures only mean something when it is.',
      aggregator: 'max',
      registers,
    }).set(opts.followerEnabled ? 1 : 0);
    // Read when scraped: set at the end of each poll only, it said 1 through a poll that outlasted
    // the unhealthy time, while the TTL decision (signals.ts, the follower's `healthy`) had gone
    // to the short defaults, and kept its last value after the follower stopped
    // (test/in-process/change-follower-up-is-the-health-the-ttls-read.test.ts).
    const upNow = () => this.upNow;
    this.followerUp = new Gauge({
      name: 'wikiedge_change_follower_up',
      help: '1 while the change follower vouches for what is cached (a poll succeeded lately, here or on the replica that follows), else 0: the short TTL defaults apply.',
      aggregator: 'min',
      registers,
      collect() {
        const up = upNow();
        if (up) this.set(up() ? 1 : 0);
      },
    });
    this.followerLeader = new Gauge({
      name: 'wikiedge_change_follower_leader',
      help: '1 while this replica holds the follower lease and polls the wiki.',
      aggregator: 'max',
      registers,
    });
    this.followerLastSuccess = new Gauge({
      name: 'wikiedge_change_follower_last_success_timestamp_seconds',
      help: 'When the change follower last polled the wiki successfully (or, on a standby replica, last saw the lease held).',
      aggregator: 'min',
      registers,
    });
    this.followerCursorLag = new Gauge({
      name: 'wikiedge_change_follower_lag_seconds',
      help: "How far behind the wiki's present the change follower's last poll ended: 0 when it read to the newest row, else the wiki's clock (curtimestamp) minus its cursor's timestamp. Past WIKIEDGE_RC_MAX_LAG_SECONDS it takes a gap (reason behind).",
      aggregator: 'max',
      registers,
    });
    this.followerPolls = new Counter({
      name: 'wikiedge_change_follower_polls_total',
      help: 'Change follower polls, by outcome (ok, error, standby: another replica follows).',
      labelNames: ['outcome'] as const,
      registers,
    });
    this.followerGaps = new Counter({
      name: 'wikiedge_change_follower_gaps_total',
      help: "Times the follower could not vouch that it saw every change, by reason (cursor-lost, clock, rc-purged, behind: a poll ended further behind the wiki's clock than WIKIEDGE_RC_MAX_LAG_SECONDS, stalled, row-unreadable: a page with no row the wiki would show, or a row whose page the wiki answers with an API error, follower-off: a reload turned the follower off, and what it vouched for was kept under the followed TTL, owed: a follower took up the cursor of another that owed the shared tier purges); each makes everything cached before it refresh at its next use.",
      labelNames: ['reason'] as const,
      registers,
    });
    // Every series from the start (a series that appears late loses its first increase to rate()).
    for (const cause of ['purge', 'follower', 'write', 'rebound', 'user', 'gap']) this.invalidatedEntries.inc({ cause }, 0);
    for (const source of ['purge', 'follower', 'write']) this.lagSeconds.zero({ source });
    for (const outcome of ['ok', 'error', 'standby']) this.followerPolls.inc({ outcome }, 0);
    for (const reason of GAP_REASONS) this.followerGaps.inc({ reason }, 0);
  }

  event(source: string, type: string): void {
    this.events.inc({ source, type: CHANGE_TYPES.has(type) ? type : type.startsWith('log/') ? 'log/other' : 'other' });
  }
  /**
   * Called once per purge the change signals make (invalidation/signals.ts): one per batch of
   * changes, one per user whose rights changed, one per gap. A PURGE's (cause `purge`) is counted
   * where the PURGE arrives, which also counts those that name no page.
   */
  invalidated(cause: string, count: number): void {
    this.invalidatedEntries.inc({ cause }, count);
    const source = PURGE_SOURCE_OF_CAUSE[cause];
    if (source) this.purges?.purgeRequested(source);
  }
  lag(source: string, seconds: number): void {
    this.lagSeconds.observe({ source }, seconds);
  }
  poll(outcome: 'ok' | 'error' | 'standby'): void {
    this.followerPolls.inc({ outcome });
  }
  gap(reason: string): void {
    this.followerGaps.inc({ reason });
  }
  /** The follower's health, read at each scrape (invalidation/follower.ts: false once it stopped). */
  followerHealth(up: () => boolean): void {
    this.upNow = up;
  }
  state(s: { healthy: boolean; leader: boolean; lastSuccessMs: number | undefined; cursorLagSeconds: number | undefined }): void {
    this.followerUp.set(s.healthy ? 1 : 0);
    this.followerLeader.set(s.leader ? 1 : 0);
    if (s.lastSuccessMs !== undefined) this.followerLastSuccess.set(s.lastSuccessMs / 1000);
    // A standby reads no rows: the leader's lag is the one that counts (replicas and workers are
    // aggregated with max). Left as it was, a replica that lost the lease exported its last lag
    // as a leader for ever (test/in-process/change-follower-standby-exports-no-stale-lag.test.ts).
    if (!s.leader) this.followerCursorLag.set(0);
    else if (s.cursorLagSeconds !== undefined) this.followerCursorLag.set(s.cursorLagSeconds);
  }
}
