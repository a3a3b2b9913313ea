// A page the gateway never saw that the wiki says is missing was taken for a page just deleted:
// its PURGE's confirmation emptied every list, its namespace's and its entity type's, on every
// replica. Anyone could make one: MediaWiki sends a PURGE of a page that does not exist when a
// user purges it through index.php (PurgeAction::onSubmit calls WikiPage::doPurge, which does not
// ask whether the page exists), and a Wikibase write that saves nothing (a statement set to the
// value it has, open to anonymous clients) was read for entity ids in parameters its module does
// not define (`id=Q987654321|…`: Wikibase ignores them with a warning), each put in the queue of
// pages to confirm. Now a write's entities come from its own parameters and its answer
// (mediawiki/modules.ts WriteFacts.entityParameters), and a page never seen that is gone confirms
// a change only when the wiki's deletion log names it within the window
// (invalidation/purge-confirmation.ts goneSince).
import { describe, expect, it } from 'vitest';
import pino from 'pino';
import { ChangeSignals } from '../../src/invalidation/signals.js';
import { bothLogs, type Deletions, deletionsOfAnswer, deletionsQuery, PurgeConfirmations, type PageNow } from '../../src/invalidation/purge-confirmation.js';
import { changeConfirmed, changeFromPurge, changeFromWrite } from '../../src/policy/changes.js';
import type { PurgeMessage } from '../../src/cache/purge.js';

const NOW = Date.parse('2026-11-30T06:00:00Z');
const TTL = { ttlPublicSeconds: 60, ttlSessionSeconds: 10 };
/** What exists on the wiki: Q7, last edited a day ago. Every other page is missing. */
const EXISTING = new Set(['Item:Q7', 'Q7']);

function gateway(deletions: () => Deletions | Error) {
  const purged: string[][] = [];
  const deletionQuestions: number[] = [];
  const signals = new ChangeSignals({
    purge: async (m: PurgeMessage) => {
      if (m.kind === 'tags') purged.push([...m.tags]);
      return { purged: 0 };
    },
    purgeHere: async () => ({ purged: 0 }),
    metrics: { event: () => {}, invalidated: () => {}, lag: () => {} },
    log: pino({ level: 'silent' }),
    now: () => NOW,
    shortTtl: TTL,
    followedTtl: TTL,
    reboundMs: 0,
  });
  const confirmations = new PurgeConfirmations({
    ask: async (titles) => ({
      pages: titles.map(
        (title): PageNow => (EXISTING.has(title) ? { title, missing: false, revid: 33, revisionAt: NOW - 86_400_000 } : { title, missing: true }),
      ),
      now: NOW,
    }),
    askDeletions: async (since) => {
      deletionQuestions.push(since);
      const d = deletions();
      if (d instanceof Error) throw d;
      return d;
    },
    confirmed: (title, onlyStatements, pageId, existence) => changeConfirmed(title, undefined, onlyStatements, pageId, existence),
    apply: (list) => signals.apply(list),
    log: pino({ level: 'silent' }),
  });
  signals.confirmWith((title) => confirmations.note(title));
  return { signals, purged, confirmations, deletionQuestions };
}

const params = (p: Record<string, string>) => (name: string) => p[name];
const noDeletions = (): Deletions => ({ titles: new Set(), truncated: false });

describe('a Wikibase write naming entities in parameters its module does not define', () => {
  const ids = Array.from({ length: 2_000 }, (_, i) => `Q${987_654_321 + i}`).join('|');
  const sameValue = params({
    action: 'wbsetclaimvalue',
    claim: 'Q7$5627-AB',
    snaktype: 'value',
    value: '"Potsdam"',
    token: '+\\',
    id: ids,
    entity: 'Q987654320',
    fromid: 'Q5',
    from: 'Q6',
    lexemeId: 'L1',
  });
  const answer = { pageinfo: { lastrevid: 33 }, success: 1, claim: { id: 'Q7$5627-AB' } };

  it('names only the entity of its own parameter and its answer: no page to invalidate or ask about for the others', () => {
    const c = changeFromWrite('wbsetclaimvalue', sameValue, undefined, answer)!;
    expect(c.tags.toSorted()).toEqual(['p:Item:Q7', 'p:Q7']);
    expect(c.confirm?.toSorted()).toEqual(['Item:Q7', 'Q7']);
  });

  it('each module reads its own: wbsetlabel `id`, wbcreateclaim `entity`, wbmergeitems `fromid`/`toid`, wbremoveclaims every GUID of `claim`', () => {
    const of = (action: string, p: Record<string, string>, a: Record<string, unknown> = { success: 1 }) =>
      changeFromWrite(action, params({ action, ...p }), undefined, a)!
        .tags.filter((t) => /^p:Q/.test(t))
        .toSorted();
    expect(of('wbsetlabel', { id: 'Q3', entity: 'Q4', claim: 'Q5$x' })).toEqual(['p:Q3']);
    expect(of('wbcreateclaim', { entity: 'Q3', id: 'Q4' })).toEqual(['p:Q3']);
    expect(of('wbmergeitems', { fromid: 'Q3', toid: 'Q4', id: 'Q5' })).toEqual(['p:Q3', 'p:Q4']);
    expect(of('wbremoveclaims', { claim: 'Q3$a|Q4$b', statement: 'Q5$c' })).toEqual(['p:Q3', 'p:Q4']);
    expect(of('wbsetreference', { statement: 'Q3$a', claim: 'Q4$b' })).toEqual(['p:Q3']);
    // One value each where Wikibase takes one: `Q3|Q4` is no id.
    expect(of('wbsetlabel', { id: 'Q3|Q4' }, { success: 1, entity: { id: 'Q3' } })).toEqual(['p:Q3']);
  });

  it('empties no list, however often it is sent', async () => {
    const { signals, purged, confirmations } = gateway(noDeletions);
    for (let i = 0; i < 5; i++) await signals.apply([changeFromWrite('wbsetclaimvalue', sameValue, undefined, answer)!]);
    await confirmations.settled();
    expect(purged.flat()).not.toContain('*');
    expect(purged.flat().filter((t) => t.includes('Q98765'))).toEqual([]);
  });
});

describe('a PURGE of a page the gateway never saw, which the wiki says is missing', () => {
  it('confirms nothing when the deletion log does not name it (it never existed), however often it is sent', async () => {
    const { signals, purged, confirmations, deletionQuestions } = gateway(noDeletions);
    for (let i = 0; i < 30; i++) {
      await signals.apply([changeFromPurge(`Nonexistent ${i}`)]);
      await confirmations.note(`Nonexistent ${i}`);
    }
    await confirmations.settled();
    expect(purged.flat()).not.toContain('*');
    expect(purged.flat()).not.toContain('n:0');
    expect(deletionQuestions.length).toBeGreaterThan(0);
    // Asked from the start of the window on the wiki's clock.
    for (const since of deletionQuestions) expect(NOW - since).toBeGreaterThanOrEqual(60_000);
  });

  it('is a change when the deletion log names it: its lists, its namespace, its entity type', async () => {
    const { signals, purged, confirmations } = gateway(() => ({ titles: new Set(['Item:Q8 x']), truncated: false }));
    await signals.apply([changeFromPurge('Item:Q8_x')]);
    await confirmations.note('Item:Q8_x');
    await confirmations.settled();
    expect(purged.flat()).toEqual(expect.arrayContaining(['*', 'n:0']));
  });

  it('is no change when the log holds more rows than its answer, or the wiki cannot say (class 65: anyone can make the move log that long)', async () => {
    for (const d of [() => ({ titles: new Set<string>(), truncated: true }), () => new Error('down')]) {
      const { purged, confirmations } = gateway(d);
      await confirmations.note('Gone');
      await confirmations.settled();
      expect(purged.flat()).not.toContain('*');
    }
  });

  it('a page seen before and gone now is a change without asking the log', async () => {
    let gone = false;
    const questions: number[] = [];
    const applied: string[][] = [];
    const c = new PurgeConfirmations({
      ask: async (titles) => ({
        pages: titles.map((title): PageNow => (gone ? { title, missing: true } : { title, missing: false, revid: 3, revisionAt: NOW - 86_400_000 })),
        now: NOW,
      }),
      askDeletions: async (since) => {
        questions.push(since);
        return noDeletions();
      },
      confirmed: (title) => changeConfirmed(title),
      apply: async (list) => void applied.push(...list.map((ch) => [...ch.tags])),
      log: pino({ level: 'silent' }),
    });
    c.note('Page');
    await c.settled();
    gone = true;
    c.note('Page');
    await c.settled();
    expect(applied.flat()).toContain('*');
    expect(questions).toEqual([]);
  });
});

describe('the deletion and move log questions', () => {
  it('asks for the delete log and the move log (a move without a redirect leaves its source missing) since the time, as many rows as one answer holds', () => {
    for (const log of ['delete', 'move'] as const) {
      const q = new URLSearchParams(deletionsQuery(Date.parse('2026-11-30T05:59:00.123Z'), log));
      expect(Object.fromEntries(q)).toMatchObject({
        action: 'query',
        list: 'logevents',
        letype: log,
        lelimit: 'max',
        leend: '2026-11-30T05:59:00Z',
        format: 'json',
      });
    }
    expect(bothLogs({ titles: new Set(['A']), truncated: false }, { titles: new Set(['B']), truncated: true })).toEqual({
      titles: new Set(['A', 'B']),
      truncated: true,
    });
  });

  it('reads the titles, and whether the log went on', () => {
    const rows = { query: { logevents: [{ title: 'Item:Q8' }, { title: 'Property:P5' }] } };
    expect(deletionsOfAnswer(rows)).toEqual({ titles: new Set(['Item:Q8', 'Property:P5']), truncated: false });
    expect(deletionsOfAnswer({ ...rows, continue: { lecontinue: '20261130055900|7' } }).truncated).toBe(true);
    expect(() => deletionsOfAnswer({ error: { code: 'readapidenied' } })).toThrow();
    // A row whose action is hidden names no title: any page may be the one deleted.
    expect(deletionsOfAnswer({ query: { logevents: [{ title: 'Item:Q8' }, { actionhidden: true }] } }).truncated).toBe(true);
  });
});
