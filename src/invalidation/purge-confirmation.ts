/**
 * Whether a purged page really changed. MediaWiki sends its CDN PURGEs after every change of a
 * page, and also after a tokenless, anonymous `action=purge` (ApiPurge needs no token; the wiki
 * allows 30 a minute per address, $wgRateLimits['purge']). A PURGE alone therefore invalidates
 * only the page's own answers (policy/changes.ts changeFromPurge). What depends on lists (its
 * namespace, searches of its entity type, any change) goes only once the wiki confirms the page
 * changed: asked straight at the wiki, in batches, whether the page's newest revision is new
 * (a new revid since the gateway last asked, or one made within CONFIRM_WINDOW_MS before the
 * PURGE arrived: edits, creations, moves and protections all make a revision) or the page is gone
 * (a deletion: gone since it was last seen, or, for a page never seen, named by the deletion or
 * move log within the window, goneSince; a log too long for one answer names only what it held). A purge of an unchanged page, or of one that never existed,
 * confirms nothing, however often it is sent.
 *
 * Each question asks about every page purged since the last one was sent (up to 50), so a burst
 * of edits costs one question and one class invalidation per batch, not one per page, and the
 * backlog stays what arrives while about one question is answered (up to QUESTIONS_AT_ONCE full
 * questions' worth): the PURGEs of a save are gathered for BATCH_MS; while a question is out,
 * those arriving after it wait for its answer and go in the next; 50 waiting start a further
 * question, at most QUESTIONS_AT_ONCE out together.
 *
 * A confirmed change names the page's entity type (what searches of it depend on) unless the wiki
 * shows it was one revision of the page's statements alone (onlyStatementsSince): the newest
 * revision's summary is a statement module's, and its parent is the revision the confirmer saw
 * last or, for a page it never asked about, older than the window (asked in a second question,
 * parentsQuery), so that no other revision is taken for this change. Several revisions since, or
 * a parent the wiki could not date, keep it: the question reads only the newest revision
 * (prop=revisions for many titles), which does not say what the ones before it changed.
 */
import type { Logger } from 'pino';
import { type Change, mayChangeDatatype, sitelinksOnlyComment, statementsOnlyComment } from '../policy/changes.js';

/**
 * A newest revision made this long before its PURGE arrived (the wiki's clock) is taken for the
 * change the PURGE follows. MediaWiki sends the PURGE right after the save, in a PRESEND deferred
 * update (includes/page/WikiPage.php onArticleEdit and onArticleCreate, called from
 * includes/Storage/DerivedPageDataUpdater.php doUpdates), so it arrives seconds after the
 * revision at most, however long the question then waits.
 */
export const CONFIRM_WINDOW_MS = 60_000;
/** PURGEs gathered into one question to the wiki (a save's PURGEs come together, pipelined). */
export const BATCH_MS = 10;
/**
 * How long the PURGE's answer waits for the confirmation. MediaWiki sends its PURGEs in a deferred
 * update (CdnCacheUpdate::purge), which under `php -S` runs before the write's answer: waiting
 * keeps lists fresh on the first read after a write there. Bounded, since a wiki with a single
 * PHP worker cannot answer the question while its worker waits for this PURGE's answer; the
 * confirmation goes on after it. A PURGE that finds more pages waiting than the next questions
 * take does not wait at all (QUESTIONS_AT_ONCE), so the wait never grows with a backlog.
 */
export const CONFIRM_WAIT_MS = 1_000;
/** Titles one question asks about (the API's limit for anonymous clients, ApiBase::LIMIT_SML1). */
export const TITLES_PER_QUESTION = 50;
/**
 * Encoded characters of titles one question carries, however many titles that is (one at least):
 * its URL stays well inside the 8 KB request line Apache and nginx accept by default, where 50
 * titles of 255 bytes of CJK (765 characters each, encoded) would not, and a question the wiki
 * refuses takes every page in it for changed.
 */
export const QUESTION_TITLE_CHARS = 4_000;
/**
 * Questions out at once, when more than one question's titles wait: 200 pages answered per round
 * trip to the wiki. Bounded, so that PURGEs outrunning even that wait here rather than become as
 * many requests at the wiki.
 */
export const QUESTIONS_AT_ONCE = 4;
/** Pages whose last revision the confirmer remembers (a bounded map: oldest forgotten first). */
const REMEMBERED = 20_000;

/** The answer to a question about pages (pagesOfAnswer). */
export interface PagesNow {
  readonly pages: readonly PageNow[];
  /** Titles the wiki says no page can have (`invalid`: too long, an illegal character): nothing changed them. */
  readonly invalid?: readonly string[];
  /** ms since the epoch, the wiki's clock */
  readonly now: number;
}

/** What the wiki says of a page now: its newest revision, or that it does not exist. */
export interface PageNow {
  readonly title: string;
  readonly missing: boolean;
  readonly revid?: number;
  /** ms since the epoch, the wiki's clock */
  readonly revisionAt?: number;
  /** The newest revision's parent (0 for a page's first revision). */
  readonly parentid?: number;
  /** The newest revision's edit summary; absent when hidden from anonymous readers. */
  readonly comment?: string;
  /** The newest revision's change tags (policy/changes.ts statementsOnlyComment: a revert's). */
  readonly tags?: readonly string[];
  /** The page's id (absent when it is gone): what answers naming it by id depend on (MediaInfo's `M123`). */
  readonly pageid?: number;
}

/** What the wiki's deletion and move logs say since a time (PurgeConfirmationOptions.askDeletions). */
export interface Deletions {
  /** The titles its rows name, as the wiki writes them (spaces, not underscores). */
  readonly titles: ReadonlySet<string>;
  /**
   * More rows than the answer held, or a row whose title a suppressor hid: a title not among them
   * may still have been deleted, and is not taken for deleted all the same (goneSince).
   */
  readonly truncated: boolean;
}

/** The gateway's clock and its timers: the process's own (processClock) unless a test gives one. */
export interface Clock {
  /** ms since the epoch */
  now(): number;
  /** Calls `fn` after `ms`, never holding the process open; what it returns cancels the call. */
  later(ms: number, fn: () => void): () => void;
}

export const processClock: Clock = {
  now: () => Date.now(),
  later: (ms, fn) => {
    const timer = setTimeout(fn, ms);
    timer.unref();
    return () => clearTimeout(timer);
  },
};

export interface PurgeConfirmationOptions {
  /** Ask the wiki about these titles; the wiki's clock (ms) with them. Throws when it cannot. */
  readonly ask: (titles: readonly string[]) => Promise<PagesNow>;
  /**
   * Ask the wiki when these revisions were made (ms since the epoch, the wiki's clock; a revision
   * it does not answer about is left out). Throws when it cannot. Without it, a page never asked
   * about before keeps its entity type (onlyStatementsSince).
   */
  readonly askRevisions?: (revids: readonly number[]) => Promise<ReadonlyMap<number, number>>;
  /**
   * Ask the wiki which pages its deletion and move logs say were deleted or moved away (a move
   * without a redirect leaves its source missing) since `since` (ms since the epoch, the wiki's
   * clock): their titles, and whether a log had more rows than one answer holds.
   * Throws when it cannot. Without it, a page the confirmer never saw that is gone confirms nothing
   * (confirmsChange).
   */
  readonly askDeletions?: (since: number) => Promise<Deletions>;
  /**
   * The change a confirmed page makes (policy/changes.ts changeConfirmed); `onlyStatements`: what
   * changed is one revision of its statements alone (onlyStatementsSince).
   */
  readonly confirmed: (title: string, onlyStatements: boolean, pageId?: number, existence?: boolean, onlySitelinks?: boolean) => Change;
  readonly apply: (changes: readonly Change[]) => Promise<unknown>;
  readonly log: Logger;
  readonly metrics?: { confirmation(outcome: 'confirmed' | 'unchanged' | 'unknown', n: number): void };
  /** processClock by default. */
  readonly clock?: Clock;
}

/**
 * Whether the wiki's answer about a page confirms a change. `before`: the page's state when the
 * confirmer last asked (pageState), undefined if it never did (or forgot); `wikiNow`: the wiki's
 * clock in the answer; `waitedMs`: how long, on the gateway's clock, from the PURGE's arrival to
 * the answer's.
 */
export function confirmsChange(before: string | undefined, page: PageNow, wikiNow: number, waitedMs: number): boolean {
  if (before !== undefined) return before !== pageState(page);
  // A page never seen that is gone may have just been deleted, or never have existed: anyone can
  // have the wiki send a PURGE of a page that does not exist (PurgeAction::onSubmit calls
  // WikiPage::doPurge, which sends it whether the page exists or not), or name one in a write.
  // Only the wiki's deletion and move logs tell them apart (goneSince).
  if (page.missing) return false;
  // wikiNow - waitedMs is the wiki's clock when the PURGE arrived, or a little earlier (the wiki
  // reads its clock before its answer reaches the gateway), which only widens the window. Each
  // clock is only compared with itself, so the skew between them does not count.
  return page.revisionAt !== undefined && wikiNow - waitedMs - page.revisionAt <= CONFIRM_WINDOW_MS;
}

/**
 * Whether all that a confirmed change of a page stands for is its newest revision, and that
 * revision changed statements alone (policy/changes.ts statementsOnlyComment). The newest
 * revision's parent must be the revision the confirmer saw last (`before`, pageState) or, for a
 * page it never asked about (`before` undefined), made before the window (`parentBeforeWindow`,
 * beforeWindow): otherwise other revisions (whose PURGEs this one may have been folded with) may
 * have changed its labels, and the answer shows only the newest. A creation (parent 0), a page
 * gone and a summary hidden or not a statement module's are not.
 */
export function onlyStatementsSince(before: string | undefined, page: PageNow, parentBeforeWindow = false): boolean {
  if (page.missing || page.parentid === undefined || page.parentid === 0 || !statementsOnlyComment(page.comment, page.tags)) return false;
  return before === undefined ? parentBeforeWindow : before === `r${page.parentid}`;
}

/** The same for a revision that changed an item's sitelinks alone (policy/changes.ts sitelinksOnlyComment). */
export function onlySitelinksSince(before: string | undefined, page: PageNow, parentBeforeWindow = false): boolean {
  if (page.missing || page.parentid === undefined || page.parentid === 0 || !sitelinksOnlyComment(page.comment, page.tags)) return false;
  return before === undefined ? parentBeforeWindow : before === `r${page.parentid}`;
}

/**
 * Whether a revision made at `at` (the wiki's clock) is older than the window a PURGE that
 * arrived `waitedMs` before the answer (dated `wikiNow`) confirms (confirmsChange): no change
 * this PURGE confirms is that revision's.
 */
export function beforeWindow(at: number, wikiNow: number, waitedMs: number): boolean {
  return wikiNow - waitedMs - at > CONFIRM_WINDOW_MS;
}

/** What the confirmer remembers of a page: its newest revision, or that it is gone. */
export function pageState(page: PageNow): string {
  return page.missing ? 'missing' : `r${page.revid ?? '?'}`;
}

/**
 * Whether a page never seen before that the wiki says is gone was deleted within the window
 * (beforeWindow) of the PURGE, or moved away: the deletion or move log names it. Only when it
 * does: a log with more rows than its answer held (`truncated`), or a wiki that cannot say, is no
 * proof. Any registered user makes the move log that long (a move of a page with its subpages
 * and their talk pages writes up to 202 rows for one rate-limit token: ApiMove, MovePage
 * moveSubpages), and any anonymous client makes the wiki send PURGEs of missing pages: each was
 * taken for a deletion, and emptied every list, its namespace's, its entity type's and, for a
 * property, every statement answer's datatypes (docs/SECURITY.md class 65,
 * test/unit/attack-move-log-flood-makes-purged-missing-pages-deletions.test.ts). A page deleted
 * then is known to the follower's row; without a follower its lists keep the short TTL.
 */
export function goneSince(page: PageNow, deletions: Deletions): boolean {
  return deletions.titles.has(page.title.replace(/_/g, ' '));
}

/**
 * Whether the page came to exist again or ceased to since it was last seen (`before`,
 * pageState): gone now and not seen gone before (a page never seen that is gone may just have
 * been deleted), or back after it was seen gone. A property's page takes its datatype with it
 * (changes.ts), and brings it back. A page seen gone that now exists through its first revision,
 * made within the window (`createdNow`, createdWithin), was created, not restored: no statement
 * shows a property that never existed, as no `new` row of the follower's carries a datatype
 * change (changes.ts changeFromRow). Seen gone is any page a PURGE named before it existed
 * (anyone can have the wiki send one: confirmsChange), or one a lagging replica answered for.
 */
export function existenceChanged(before: string | undefined, page: PageNow, createdNow = false): boolean {
  return page.missing ? before !== 'missing' : before === 'missing' && !createdNow;
}

/**
 * Whether the page's newest revision is its first, made within the window of a PURGE that
 * arrived `waitedMs` before the answer (beforeWindow): a creation. An undeletion restores its
 * revisions with their dates, so a restored page's first revision is older (unless it is
 * undeleted within the window of its creation: then taken for a creation, as the follower's rows
 * would tell).
 */
export function createdWithin(page: PageNow, wikiNow: number, waitedMs: number): boolean {
  return !page.missing && page.parentid === 0 && page.revisionAt !== undefined && !beforeWindow(page.revisionAt, wikiNow, waitedMs);
}

/** A page waiting for (or in) a question. */
interface Purged {
  /** When its first PURGE not yet asked about arrived (the gateway's clock). */
  readonly since: number;
  /** The PURGEs' answers waiting for the confirmation. */
  readonly waiters: (() => void)[];
}

export class PurgeConfirmations {
  /** Pages to ask about, oldest first (a Map keeps the order they were added in). */
  private readonly pending = new Map<string, Purged>();
  /**
   * Pages in a question not yet answered. Purged again meanwhile, a page waits in `pending` for
   * that answer before it is asked again: a later PURGE's answer never overtakes an earlier one's.
   */
  private readonly asking = new Map<string, Purged>();
  private readonly questions = new Set<Promise<void>>();
  private cancelBatch: (() => void) | undefined;
  private readonly lastSeen = new Map<string, string>();
  /**
   * The id each page had when last seen (up to REMEMBERED): a page the wiki says is gone has
   * none any more, yet answers naming it by id (MediaInfo's `M123`: entities.ts entityPageId)
   * depend on the id it had.
   */
  private readonly pageIds = new Map<string, number>();
  private readonly clock: Clock;

  constructor(private readonly opts: PurgeConfirmationOptions) {
    this.clock = opts.clock ?? processClock;
  }

  /**
   * A page was purged: ask the wiki (soon, with the others) whether it changed. Resolves once the
   * answer is applied, or after CONFIRM_WAIT_MS, whichever comes first; at once if more pages are
   * waiting than the next questions take.
   */
  note(title: string): Promise<void> {
    const waits = this.pending.size < QUESTIONS_AT_ONCE * TITLES_PER_QUESTION;
    let purged = this.pending.get(title);
    if (!purged) {
      purged = { since: this.clock.now(), waiters: [] };
      this.pending.set(title, purged);
    }
    const waiters = purged.waiters;
    const answered = waits
      ? new Promise<void>((resolve) => {
          const cancel = this.clock.later(CONFIRM_WAIT_MS, resolve);
          waiters.push(() => {
            cancel();
            resolve();
          });
        })
      : Promise.resolve();
    this.pump(false);
    return answered;
  }

  /** Resolves once every page noted so far has been asked about and applied (tests, shutdown). */
  async settled(): Promise<void> {
    while (this.pending.size > 0 || this.questions.size > 0) {
      this.cancelBatch?.();
      this.cancelBatch = undefined;
      this.pump(true);
      await Promise.all(this.questions);
    }
  }

  stop(): void {
    this.cancelBatch?.();
    this.cancelBatch = undefined;
    for (const purged of [...this.pending.values(), ...this.asking.values()]) for (const w of purged.waiters.splice(0)) w();
    this.pending.clear();
  }

  /**
   * Send the questions that are due. `gathered`: the PURGEs waiting have been gathered long enough
   * (BATCH_MS, or an answer came back meanwhile); a full question never waits for that.
   */
  private pump(gathered: boolean): void {
    while (this.questions.size < QUESTIONS_AT_ONCE) {
      const { titles, full } = this.askable();
      if (titles.length === 0) return;
      if (!full) {
        // Not full: those behind an unanswered question go in the next, sent once it is answered.
        if (this.questions.size > 0) return;
        if (!gathered) {
          this.cancelBatch ??= this.clock.later(BATCH_MS, () => {
            this.cancelBatch = undefined;
            this.pump(true);
          });
          return;
        }
      }
      this.ask(titles);
    }
  }

  /**
   * The oldest pages waiting that no unanswered question asks about, as many as one question takes
   * (TITLES_PER_QUESTION, QUESTION_TITLE_CHARS); `full` when it takes no more.
   */
  private askable(): { titles: string[]; full: boolean } {
    const titles: string[] = [];
    let chars = 0;
    for (const title of this.pending.keys()) {
      if (this.asking.has(title)) continue;
      // Joined by `|`, encoded `%7C`.
      const size = encodeURIComponent(title).length + 3;
      if (titles.length > 0 && chars + size > QUESTION_TITLE_CHARS) return { titles, full: true };
      titles.push(title);
      chars += size;
      if (titles.length === TITLES_PER_QUESTION) return { titles, full: true };
    }
    return { titles, full: false };
  }

  private ask(titles: readonly string[]): void {
    const asked = new Map<string, Purged>();
    for (const title of titles) {
      const purged = this.pending.get(title)!;
      this.pending.delete(title);
      this.asking.set(title, purged);
      asked.set(title, purged);
    }
    const question: Promise<void> = this.confirm(asked)
      .catch((err: unknown) => this.opts.log.error({ err: String(err) }, 'purged pages: applying a confirmed change failed'))
      .finally(() => {
        this.questions.delete(question);
        for (const [title, purged] of asked) {
          this.asking.delete(title);
          for (const w of purged.waiters.splice(0)) w();
        }
        this.pump(true);
      });
    this.questions.add(question);
  }

  private async confirm(asked: ReadonlyMap<string, Purged>): Promise<void> {
    const titles = [...asked.keys()];
    let answer: Awaited<ReturnType<PurgeConfirmationOptions['ask']>>;
    try {
      answer = await this.opts.ask(titles);
    } catch (err) {
      // The wiki could not say: take every page for changed (stale answers are worse than misses).
      this.opts.log.warn({ err: String(err), pages: titles.length }, 'purged pages: the wiki could not confirm a change; invalidating as if changed');
      this.opts.metrics?.confirmation('unknown', titles.length);
      // With the page id remembered: answers that name a page by id alone (a MediaInfo entity's)
      // go too. Not as a deletion: every statement answer would go with any property's page in
      // the question, at each failed question of a wiki already failing (a property deleted
      // meanwhile is the follower's row to see).
      await this.opts.apply(titles.map((t) => this.opts.confirmed(t, false, this.pageIds.get(t))));
      return;
    }
    const answeredAt = this.clock.now();
    // A title the answer adds (the normalized form of one asked) waited as long as the oldest.
    const oldest = Math.min(...[...asked.values()].map((p) => p.since));
    const changes: Change[] = [];
    let unchanged = 0;
    // A title no page can have: nothing changed it, and nothing cached shows a page by it.
    const answered = new Set<string>(answer.invalid ?? []);
    unchanged += answered.size;
    const confirmed: { page: PageNow; before: string | undefined; waited: number }[] = [];
    const goneUnseen: { page: PageNow; waited: number }[] = [];
    for (const page of answer.pages) {
      answered.add(page.title);
      const before = this.remember(page.title, pageState(page));
      if (page.pageid !== undefined) this.rememberId(page.title, page.pageid);
      const waited = Math.max(0, answeredAt - (asked.get(page.title)?.since ?? oldest));
      if (confirmsChange(before, page, answer.now, waited)) confirmed.push({ page, before, waited });
      else if (before === undefined && page.missing) goneUnseen.push({ page, waited });
      else unchanged++;
    }
    // Pages seen gone that are back, not made within the window: restored, or created before it.
    // Only the deletion log tells (its `restore` row): a page created long ago on a process whose
    // PURGE went to another replica or worker was taken for restored here, and a property's
    // "restoration" ends every statement answer (dt) at each purge an anonymous client asks for
    // (test/unit/attack-property-creation-taken-for-a-restoration-ends-every-statement-answer.test.ts).
    const backUnproven = confirmed.filter((c) => c.before === 'missing' && !c.page.missing && !createdWithin(c.page, answer.now, c.waited));
    // Pages never seen that are gone: deleted or moved away within the window, say the logs, or never there.
    let logged: Deletions = { titles: new Set(), truncated: false };
    if (goneUnseen.length > 0 || backUnproven.length > 0) {
      const waited = Math.max(...goneUnseen.map((g) => g.waited), ...backUnproven.map((c) => c.waited));
      logged = await this.deletedSince(answer.now - waited - CONFIRM_WINDOW_MS, goneUnseen.length + backUnproven.length);
      for (const g of goneUnseen) {
        if (goneSince(g.page, logged)) confirmed.push({ page: g.page, before: undefined, waited: g.waited });
        else unchanged++;
      }
    }
    // Reached only for a page seen missing that exists now (existenceChanged): the log decides.
    const restored = (page: PageNow): boolean => goneSince(page, logged);
    // Pages never asked about whose newest revision is a statement module's or a sitelink edit: when was its parent made?
    const parentsAt = await this.parentsAt(
      confirmed
        .filter((c) => c.before === undefined && (onlyStatementsSince(undefined, c.page, true) || onlySitelinksSince(undefined, c.page, true)))
        .map((c) => c.page.parentid!),
    );
    for (const { page, before, waited } of confirmed) {
      const parentAt = parentsAt.get(page.parentid ?? 0);
      const parentBeforeWindow = parentAt !== undefined && beforeWindow(parentAt, answer.now, waited);
      changes.push(
        this.opts.confirmed(
          page.title,
          onlyStatementsSince(before, page, parentBeforeWindow),
          page.pageid ?? (page.missing ? this.pageIds.get(page.title) : undefined),
          // Gone or back, or (a property's) its newest revision no Wikibase module's: its datatype
          // may have changed. Only the newest revision's summary is read: a datatype change
          // followed within one question by an API edit is the follower's to see (its rows are
          // one per revision); asking for every revision since would take a datatype change for
          // each burst of a bot's label edits of a property, evicting every statement answer.
          (existenceChanged(before, page, createdWithin(page, answer.now, waited)) && (page.missing || restored(page))) ||
            (!page.missing && mayChangeDatatype(page.comment, page.tags)),
          onlySitelinksSince(before, page, parentBeforeWindow),
        ),
      );
    }
    // A title the wiki did not answer about (a normalisation not reported): as if changed, as when
    // the wiki cannot say.
    for (const t of titles) if (!answered.has(t)) changes.push(this.opts.confirmed(t, false, this.pageIds.get(t)));
    this.opts.metrics?.confirmation('confirmed', changes.length);
    this.opts.metrics?.confirmation('unchanged', unchanged);
    if (changes.length > 0) await this.opts.apply(changes);
  }

  /**
   * What the deletion and move logs say since `since`; without the question, nothing deleted. When
   * the wiki cannot say, none is taken for deleted (goneSince): their own answers went with their
   * PURGEs.
   */
  private async deletedSince(since: number, pages: number): Promise<Deletions> {
    if (!this.opts.askDeletions) return { titles: new Set(), truncated: false };
    try {
      return await this.opts.askDeletions(since);
    } catch (err) {
      this.opts.log.warn(
        { err: String(err), pages },
        'purged pages: the wiki could not say whether the pages gone or back were deleted or restored; their lists wait for their TTL or the follower',
      );
      return { titles: new Set(), truncated: true };
    }
  }

  /** When the wiki made these revisions; none known when it cannot say (their pages keep their entity type). */
  private async parentsAt(revids: readonly number[]): Promise<ReadonlyMap<number, number>> {
    if (revids.length === 0 || !this.opts.askRevisions) return new Map();
    try {
      return await this.opts.askRevisions([...new Set(revids)]);
    } catch (err) {
      this.opts.log.warn(
        { err: String(err), revisions: revids.length },
        'purged pages: the wiki could not date the revisions before the newest; their entity types go',
      );
      return new Map();
    }
  }

  private rememberId(title: string, pageId: number): void {
    this.pageIds.delete(title);
    this.pageIds.set(title, pageId);
    if (this.pageIds.size > REMEMBERED) this.pageIds.delete(this.pageIds.keys().next().value!);
  }

  private remember(title: string, state: string): string | undefined {
    const before = this.lastSeen.get(title);
    this.lastSeen.delete(title);
    this.lastSeen.set(title, state);
    if (this.lastSeen.size > REMEMBERED) this.lastSeen.delete(this.lastSeen.keys().next().value!);
    return before;
  }
}

/**
 * The question: each page's newest revision (prop=revisions gives only the newest for many titles)
 * with its parent, its summary and its change tags (onlyStatementsSince), and the wiki's clock. A summary hidden
 * from anonymous readers comes as `commenthidden` with no `comment` (ApiQueryRevisionsBase::extractRevisionInfo).
 */
export function confirmationQuery(titles: readonly string[]): string {
  return `action=query&prop=revisions&rvprop=ids%7Ctimestamp%7Ccomment%7Ctags&curtimestamp=1&format=json&formatversion=2&titles=${encodeURIComponent(titles.join('|'))}`;
}

/** The second question (PurgeConfirmationOptions.askRevisions): when each revision was made, and the wiki's clock. */
export function parentsQuery(revids: readonly number[]): string {
  return `action=query&prop=revisions&rvprop=ids%7Ctimestamp&format=json&formatversion=2&revids=${revids.join('%7C')}`;
}

/**
 * The third question (PurgeConfirmationOptions.askDeletions), once per log: the deletion log's or
 * the move log's rows since a time (the wiki's clock), newest first, as many as one answer holds
 * (`lelimit=max`: 500 for an anonymous client, ApiBase::LIMIT_BIG1). A move row's title is the
 * page moved away. One log each, not every log: page creations are logged too (`create`), many a
 * second on a busy wiki. Deletions a suppressor hid (`suppress` log) are not in it.
 */
export function deletionsQuery(since: number, log: 'delete' | 'move'): string {
  const end = new Date(since).toISOString().replace(/\.\d{3}Z$/, 'Z');
  return `action=query&list=logevents&letype=${log}&leprop=title&lelimit=max&leend=${encodeURIComponent(end)}&format=json&formatversion=2`;
}

/** What two logs' answers say together. */
export function bothLogs(a: Deletions, b: Deletions): Deletions {
  return { titles: new Set([...a.titles, ...b.titles]), truncated: a.truncated || b.truncated };
}

/** The answer to deletionsQuery. */
export function deletionsOfAnswer(answer: unknown): Deletions {
  const a = (answer ?? {}) as { continue?: unknown; query?: { logevents?: { title?: unknown }[] } };
  if (!Array.isArray(a.query?.logevents)) throw new Error('the wiki did not answer the question about deletions');
  const titles = new Set<string>();
  let hidden = false;
  // A row whose action a suppressor hid comes without its title (`actionhidden`): it may be any page's.
  for (const row of a.query.logevents) {
    if (typeof row.title === 'string') titles.add(row.title);
    else hidden = true;
  }
  return { titles, truncated: a.continue !== undefined || hidden };
}

/** The answer to parentsQuery: each revision's time (ms, the wiki's clock); `badrevids` are left out. */
export function revisionTimesOfAnswer(answer: unknown): Map<number, number> {
  const a = (answer ?? {}) as { query?: { pages?: { revisions?: { revid?: number; timestamp?: string }[] }[] } };
  if (!Array.isArray(a.query?.pages)) throw new Error('the wiki did not answer the question about revisions');
  const times = new Map<number, number>();
  for (const p of a.query.pages) {
    for (const r of p.revisions ?? []) {
      const at = Date.parse(r.timestamp ?? '');
      if (typeof r.revid === 'number' && Number.isFinite(at)) times.set(r.revid, at);
    }
  }
  return times;
}

/** The answer to confirmationQuery, with titles as asked (normalized ones mapped back). */
export function pagesOfAnswer(answer: unknown): PagesNow {
  const a = (answer ?? {}) as {
    curtimestamp?: string;
    query?: {
      normalized?: { from: string; to: string }[];
      pages?: {
        title?: string;
        pageid?: number;
        missing?: boolean;
        invalid?: boolean;
        revisions?: { revid?: number; parentid?: number; timestamp?: string; comment?: string; commenthidden?: boolean; tags?: unknown }[];
      }[];
    };
  };
  const now = Date.parse(a.curtimestamp ?? '');
  if (!Number.isFinite(now) || !Array.isArray(a.query?.pages)) throw new Error('the wiki did not answer the question about purged pages');
  const asked = new Map<string, string[]>();
  for (const n of a.query?.normalized ?? []) asked.set(n.to, [...(asked.get(n.to) ?? []), n.from]);
  const pages: PageNow[] = [];
  const invalid: string[] = [];
  for (const p of a.query.pages) {
    if (typeof p.title !== 'string') continue;
    // ApiPageSet reports an invalid title as it was given (ApiPageSet::processTitlesArray).
    if (p.invalid) {
      invalid.push(p.title);
      continue;
    }
    const rev = p.revisions?.[0];
    const at = Date.parse(rev?.timestamp ?? '');
    const page: Omit<PageNow, 'title'> = {
      missing: p.missing === true,
      ...(typeof rev?.revid === 'number' && { revid: rev.revid }),
      ...(Number.isFinite(at) && { revisionAt: at }),
      ...(typeof rev?.parentid === 'number' && { parentid: rev.parentid }),
      ...(typeof rev?.comment === 'string' && rev.commenthidden !== true && { comment: rev.comment }),
      ...(Array.isArray(rev?.tags) && { tags: rev.tags.filter((t): t is string => typeof t === 'string') }),
      ...(typeof p.pageid === 'number' && p.pageid > 0 && { pageid: p.pageid }),
    };
    for (const title of [p.title, ...(asked.get(p.title) ?? [])]) pages.push({ title, ...page });
  }
  return { pages, ...(invalid.length > 0 && { invalid }), now };
}
