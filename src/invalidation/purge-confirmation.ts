/**
 * Whether a purged page really changed. MediaWiki sends its CDN PURGEs after every change of a
 * page, and also after a tokenless, anonymous `action=purge` (ApiPurge needs no token; the wiki
 * allows 30 a minute per address, $wgRateLimits['purge']). A PURGE alone therefore invalidates
 * only the page's own answers (policy/changes.ts changeFromPurge). What depends on lists (its
 * namespace, searches of its entity type, any change) goes only once the wiki confirms the page
 * changed: asked straight at the wiki, in batches, whether the page's newest revision is new
 * (a new revid since the gateway last asked, or one made within CONFIRM_WINDOW_MS of the wiki's
 * clock: edits, creations, moves and protections all make a revision) or the page is gone (a
 * deletion). A purge of an unchanged page confirms nothing, however often it is sent.
 *
 * Many PURGEs within BATCH_MS (or up to 50 pages) are one question to the wiki and one
 * invalidation: a burst of edits costs one class invalidation per batch, not one per page.
 */
import type { Logger } from 'pino';
import type { Change } from '../policy/changes.js';

/** A newest revision this recent (the wiki's clock) is taken for the change the PURGE follows. */
export const CONFIRM_WINDOW_MS = 60_000;
/** PURGEs gathered into one question to the wiki (a save's PURGEs come together, pipelined). */
export const BATCH_MS = 10;
/**
 * How long the PURGE's answer waits for the confirmation. MediaWiki sends its PURGEs in a deferred
 * update (CdnCacheUpdate::purge), which under `php -S` runs before the write's answer: waiting
 * keeps lists fresh on the first read after a write there. Bounded, since a wiki with a single
 * PHP worker cannot answer the question while its worker waits for this PURGE's answer; the
 * confirmation goes on after it.
 */
export const CONFIRM_WAIT_MS = 1_000;
/** Titles one question asks about (the API's limit for anonymous clients, ApiBase::LIMIT_SML1). */
const TITLES_PER_QUESTION = 50;
/** Pages whose last revision the confirmer remembers (a bounded map: oldest forgotten first). */
const REMEMBERED = 20_000;

/** What the wiki says of a page now: its newest revision, or that it does not exist. */
export interface PageNow {
  readonly title: string;
  readonly missing: boolean;
  readonly revid?: number;
  /** ms since the epoch, the wiki's clock */
  readonly revisionAt?: number;
}

export interface PurgeConfirmationOptions {
  /** Ask the wiki about these titles; the wiki's clock (ms) with them. Throws when it cannot. */
  readonly ask: (titles: readonly string[]) => Promise<{ readonly pages: readonly PageNow[]; readonly now: number }>;
  /** The change a confirmed page makes (policy/changes.ts changeConfirmed). */
  readonly confirmed: (title: string) => Change;
  readonly apply: (changes: readonly Change[]) => Promise<unknown>;
  readonly log: Logger;
  readonly metrics?: { confirmation(outcome: 'confirmed' | 'unchanged' | 'unknown', n: number): void };
}

export class PurgeConfirmations {
  private pending = new Set<string>();
  private waiters: (() => void)[] = [];
  private timer: NodeJS.Timeout | undefined;
  private readonly lastSeen = new Map<string, string>();
  private inFlight: Promise<void> = Promise.resolve();

  constructor(private readonly opts: PurgeConfirmationOptions) {}

  /**
   * A page was purged: ask the wiki (soon, with the others) whether it changed. Resolves once the
   * answer is applied, or after CONFIRM_WAIT_MS, whichever comes first.
   */
  note(title: string): Promise<void> {
    this.pending.add(title);
    if (this.pending.size >= TITLES_PER_QUESTION) this.flushSoon(0);
    else this.flushSoon(BATCH_MS);
    return new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, CONFIRM_WAIT_MS);
      timer.unref();
      this.waiters.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  /** Resolves once every page noted so far has been asked about and applied (tests, shutdown). */
  async settled(): Promise<void> {
    while (this.pending.size > 0 || this.timer) {
      if (this.timer) {
        clearTimeout(this.timer);
        this.timer = undefined;
      }
      await this.flush();
    }
    await this.inFlight;
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.pending.clear();
    for (const w of this.waiters.splice(0)) w();
  }

  private flushSoon(ms: number): void {
    if (this.timer && ms > 0) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.flush();
    }, ms);
    this.timer.unref();
  }

  private flush(): Promise<void> {
    const titles = [...this.pending].slice(0, TITLES_PER_QUESTION);
    for (const t of titles) this.pending.delete(t);
    if (this.pending.size > 0) this.flushSoon(0);
    if (titles.length === 0) return this.inFlight;
    const waiters = this.pending.size === 0 ? this.waiters.splice(0) : [];
    // One question at a time, in order: a later PURGE's answer never overtakes an earlier one's.
    this.inFlight = this.inFlight
      .then(() => this.confirm(titles))
      .catch((err: unknown) => this.opts.log.error({ err: String(err) }, 'purged pages: applying a confirmed change failed'))
      .finally(() => {
        for (const w of waiters) w();
      });
    return this.inFlight;
  }

  private async confirm(titles: readonly string[]): Promise<void> {
    let answer: Awaited<ReturnType<PurgeConfirmationOptions['ask']>>;
    try {
      answer = await this.opts.ask(titles);
    } catch (err) {
      // The wiki could not say: take every page for changed (stale answers are worse than misses).
      this.opts.log.warn({ err: String(err), pages: titles.length }, 'purged pages: the wiki could not confirm a change; invalidating as if changed');
      this.opts.metrics?.confirmation('unknown', titles.length);
      await this.opts.apply(titles.map((t) => this.opts.confirmed(t)));
      return;
    }
    const changes: Change[] = [];
    let unchanged = 0;
    const answered = new Set<string>();
    for (const page of answer.pages) {
      answered.add(page.title);
      const state = page.missing ? 'missing' : `r${page.revid ?? '?'}`;
      const before = this.remember(page.title, state);
      const recent = page.revisionAt !== undefined && answer.now - page.revisionAt <= CONFIRM_WINDOW_MS;
      if (before === undefined ? page.missing || recent : before !== state) changes.push(this.opts.confirmed(page.title));
      else unchanged++;
    }
    // A title the wiki did not answer about (invalid, or a normalisation not reported): as if changed.
    for (const t of titles) if (!answered.has(t) && !answer.pages.some((p) => p.title === t)) changes.push(this.opts.confirmed(t));
    this.opts.metrics?.confirmation('confirmed', changes.length);
    this.opts.metrics?.confirmation('unchanged', unchanged);
    if (changes.length > 0) await this.opts.apply(changes);
  }

  private remember(title: string, state: string): string | undefined {
    const before = this.lastSeen.get(title);
    this.lastSeen.delete(title);
    this.lastSeen.set(title, state);
    if (this.lastSeen.size > REMEMBERED) this.lastSeen.delete(this.lastSeen.keys().next().value!);
    return before;
  }
}

/** The question: each page's newest revision (prop=revisions gives only the newest for many titles), and the wiki's clock. */
export function confirmationQuery(titles: readonly string[]): string {
  return `action=query&prop=revisions&rvprop=ids%7Ctimestamp&curtimestamp=1&format=json&formatversion=2&titles=${encodeURIComponent(titles.join('|'))}`;
}

/** The answer to confirmationQuery, with titles as asked (normalized ones mapped back). */
export function pagesOfAnswer(answer: unknown): { pages: PageNow[]; now: number } {
  const a = (answer ?? {}) as {
    curtimestamp?: string;
    query?: {
      normalized?: { from: string; to: string }[];
      pages?: { title?: string; missing?: boolean; invalid?: boolean; revisions?: { revid?: number; timestamp?: string }[] }[];
    };
  };
  const now = Date.parse(a.curtimestamp ?? '');
  if (!Number.isFinite(now) || !Array.isArray(a.query?.pages)) throw new Error('the wiki did not answer the question about purged pages');
  const asked = new Map<string, string[]>();
  for (const n of a.query?.normalized ?? []) asked.set(n.to, [...(asked.get(n.to) ?? []), n.from]);
  const pages: PageNow[] = [];
  for (const p of a.query.pages) {
    if (typeof p.title !== 'string' || p.invalid) continue;
    const rev = p.revisions?.[0];
    const at = Date.parse(rev?.timestamp ?? '');
    const page: Omit<PageNow, 'title'> = {
      missing: p.missing === true,
      ...(typeof rev?.revid === 'number' && { revid: rev.revid }),
      ...(Number.isFinite(at) && { revisionAt: at }),
    };
    for (const title of [p.title, ...(asked.get(p.title) ?? [])]) pages.push({ title, ...page });
  }
  return { pages, now };
}
