// A statement-only edit of an entity (wbcreateclaim, wbsetclaim, wbsetclaimvalue, wbremoveclaims,
// wbsetqualifier, wbremovequalifiers, wbsetreference, wbremovereferences) does not evict the
// searches of its entity type (`t:item`: wbsearchentities, list=wbsearch) nor the site-and-title
// lookups that found nothing (`sl`): they match labels, aliases, ids and sitelinks and show labels
// and descriptions, which a statement edit does not change. It still invalidates `*`, its namespace and its page. Each
// source says so its own way: a recentchanges row by its summary's autocomment, a write through
// the gateway by its module (src/mediawiki/modules.ts WriteFacts.statementsOnly), a confirmed
// PURGE by the newest revision's summary when that revision is the only one since the page was
// last seen (src/invalidation/purge-confirmation.ts onlyStatementsSince). Anything else, or
// anything unsure (a hidden or unknown summary, a term edit, a creation, a deletion, a merge, a
// redirect), keeps the type tag; a sitelink edit its own way
// (test/unit/a-sitelink-edit-leaves-item-searches-cached.test.ts).
//
// The rows, answers and summaries below are copied as a real Wikibase REL1_39 (MediaWiki 1.39.17)
// gave them after the writes recorded in test/fixtures/wikibase/reference-answers.json (n=70 to 79):
// its list=recentchanges (rcprop=...|comment), the answers of wbsetlabel (70) and wbcreateclaim (72).
import { describe, expect, it } from 'vitest';
import pino from 'pino';
import { changeConfirmed, changeFromRow, changeFromWrite, type RecentChangeRow, statementsOnlyComment } from '../../src/policy/changes.js';
import {
  CONFIRM_WINDOW_MS,
  confirmationQuery,
  type PageNow,
  pagesOfAnswer,
  parentsQuery,
  PurgeConfirmations,
  revisionTimesOfAnswer,
} from '../../src/invalidation/purge-confirmation.js';
import type { Change } from '../../src/policy/changes.js';

/** Rows of the recorded list=recentchanges (formatversion=2) of Wikibase REL1_39, as answered. */
const ROWS: Record<string, RecentChangeRow> = {
  wbsetlabelQ7: {
    type: 'edit',
    ns: 120,
    title: 'Item:Q7',
    pageid: 17,
    revid: 33,
    rcid: 37,
    timestamp: '2026-11-28T20:12:45Z',
    comment: '/* wbsetlabel-set:1|de */ Potsdam (Stadt)',
  },
  wbsetlabelP2: {
    type: 'edit',
    ns: 122,
    title: 'Property:P2',
    pageid: 7,
    revid: 31,
    rcid: 35,
    timestamp: '2026-11-28T20:12:37Z',
    comment: '/* wbsetlabel-set:1|en */ population size',
  },
  redirectQ6: {
    type: 'edit',
    ns: 120,
    title: 'Item:Q6',
    pageid: 16,
    revid: 30,
    rcid: 34,
    timestamp: '2026-11-28T20:12:33Z',
    comment: '/* wbcreateredirect:0||Q6|Q1 */',
  },
  mergeIntoQ1: {
    type: 'edit',
    ns: 120,
    title: 'Item:Q1',
    pageid: 11,
    revid: 29,
    rcid: 33,
    timestamp: '2026-11-28T20:12:33Z',
    comment: '/* wbmergeitems-from:0||Q6 */',
  },
  deleteQ8: {
    type: 'log',
    ns: 120,
    title: 'Item:Q8',
    pageid: 18,
    revid: 0,
    rcid: 31,
    timestamp: '2026-11-28T20:12:27Z',
    comment: 'lab delete',
    logtype: 'delete',
    logaction: 'delete',
    logparams: {},
  },
  createQ9: {
    type: 'new',
    ns: 120,
    title: 'Item:Q9',
    pageid: 19,
    revid: 27,
    rcid: 30,
    timestamp: '2026-11-28T20:12:21Z',
    comment: '/* wbeditentity-create-item:0| */',
  },
  wbsetclaimvalueQ1: {
    type: 'edit',
    ns: 120,
    title: 'Item:Q1',
    pageid: 11,
    revid: 26,
    rcid: 29,
    timestamp: '2026-11-28T20:12:16Z',
    comment: '/* wbsetclaimvalue:1| */ [[Property:P2]]: 3,700,000',
  },
  wbcreateclaimQ3: {
    type: 'edit',
    ns: 120,
    title: 'Item:Q3',
    pageid: 13,
    revid: 25,
    rcid: 28,
    timestamp: '2026-11-28T20:12:11Z',
    comment: '/* wbcreateclaim-create:1| */ [[Property:P4]]: DE',
  },
  wbeditentityQ1: {
    type: 'edit',
    ns: 120,
    title: 'Item:Q1',
    pageid: 11,
    revid: 24,
    rcid: 27,
    timestamp: '2026-11-28T20:12:06Z',
    comment: '/* wbeditentity-update-languages-short:0||de */',
  },
};

/** A row of Item:Q1 with another summary (Wikibase's autocomment keys, SummaryFormatter). */
const q1Edit = (extra: Partial<RecentChangeRow>): RecentChangeRow => ({ ...ROWS['wbsetclaimvalueQ1']!, ...extra });

describe('a statement edit leaves item searches cached', () => {
  describe('a recentchanges row (the follower)', () => {
    it.each(['wbsetclaimvalueQ1', 'wbcreateclaimQ3'])('%s (recorded): any change, the namespace and the page, not t:item', (name) => {
      const row = ROWS[name]!;
      const tags = changeFromRow(row).tags;
      expect(tags).toEqual(expect.arrayContaining(['*', 'n:120', `p:${row.title}`, `i:${row.pageid}`]));
      expect(tags).not.toContain('t:item');
    });

    it.each([
      '/* wbsetclaim-create:1| */ [[Property:P1]]: [[Item:Q2]]',
      '/* wbsetclaim-update:2||1|2 */ [[Property:P159]]: [[Q3887146]]',
      '/* wbsetclaim-update-rank:1| */',
      '/* wbsetclaim-update-qualifiers:1||1 */',
      '/* wbsetclaim-update-references:1||1 */',
      '/* wbremoveclaims-remove:1| */ [[Property:P4135]]: 70',
      '/* wbsetqualifier-add:1| */ [[Property:P580]]: 1990',
      '/* wbsetqualifier-update:1| */',
      '/* wbremovequalifiers-remove:1| */',
      '/* wbsetreference-add:2| */ [[Property:P1433]]: [[Q3186921]]',
      '/* wbsetreference-set:1| */',
      '/* wbremovereferences-remove:1| */',
    ])('every statement module`s autocomment: %s', (comment) => {
      expect(statementsOnlyComment(comment, [])).toBe(true);
      expect(changeFromRow(q1Edit({ comment })).tags).not.toContain('t:item');
    });

    it.each(['wbsetlabelQ7', 'wbeditentityQ1', 'mergeIntoQ1', 'redirectQ6', 'createQ9', 'deleteQ8'])('%s (recorded) keeps t:item', (name) => {
      expect(changeFromRow(ROWS[name]!).tags).toContain('t:item');
    });

    it('a property`s label (recorded, rcid 35) keeps t:property', () => {
      expect(changeFromRow(ROWS['wbsetlabelP2']!).tags).toContain('t:property');
    });

    it.each([
      ['two titles linked', '/* wblinktitles-create:2| */ enwiki:Berlin, dewiki:Berlin'],
      ['wbeditentity, which may change anything', '/* wbeditentity-update:0| */'],
      ['an undo', '/* undo:0||26|Admin */'],
      ['an autocomment of a module not known here', '/* wbsetstatementrank-preferred:1| */'],
      ['a summary without an autocomment', 'fixed the population'],
      ['a statement autocomment after another (a typed summary)', '/* wbsetlabel-set:1|en */ /* wbsetclaimvalue:1| */'],
      ['an empty summary', ''],
    ])('%s keeps t:item', (_what, comment) => {
      expect(changeFromRow(q1Edit({ comment })).tags).toContain('t:item');
    });

    it('a summary hidden from anonymous readers (commenthidden, no comment) keeps t:item, and so does a row without one', () => {
      const { comment: _c, ...noComment } = ROWS['wbsetclaimvalueQ1']!;
      expect(changeFromRow({ ...noComment, commenthidden: true }).tags).toContain('t:item');
      expect(changeFromRow(noComment).tags).toContain('t:item');
      expect(changeFromRow({ ...ROWS['wbsetclaimvalueQ1']!, commenthidden: true }).tags).toContain('t:item');
    });

    it('a statement summary on a row that is not an edit (a creation) keeps t:item', () => {
      expect(changeFromRow(q1Edit({ type: 'new' })).tags).toContain('t:item');
    });
  });

  describe('a write through the gateway', () => {
    const params = (p: Record<string, string>) => (name: string) => p[name];

    it('wbcreateclaim (recorded, n=72): any change, the namespace and the page, not t:item', () => {
      const answer = {
        pageinfo: { lastrevid: 25 },
        success: 1,
        claim: {
          mainsnak: { snaktype: 'value', property: 'P4', datavalue: { value: 'DE', type: 'string' } },
          type: 'statement',
          id: 'Q3$0A2B428C-CAEA-4F3C-A931-70176FFDD482',
        },
      };
      const c = changeFromWrite(
        'wbcreateclaim',
        params({ action: 'wbcreateclaim', entity: 'Q3', property: 'P4', snaktype: 'value', value: '"DE"' }),
        undefined,
        answer,
      )!;
      expect(c.tags).toEqual(expect.arrayContaining(['*', 'p:Item:Q3', 'p:Q3']));
      expect(c.tags).not.toContain('t:item');
    });

    it.each(['wbremoveclaims', 'wbremovequalifiers', 'wbremovereferences'])('%s: not t:item', (action) => {
      const guid = 'Q3$0A2B428C-CAEA-4F3C-A931-70176FFDD482';
      const answer = { pageinfo: { lastrevid: 26 }, success: 1, claims: [guid] };
      const c = changeFromWrite(action, params({ action, claim: guid, statement: guid }), undefined, answer)!;
      expect(c.tags).toContain('*');
      expect(c.tags).not.toContain('t:item');
    });

    it('a statement write whose entity cannot be read: any change, but no entity type', () => {
      const c = changeFromWrite('wbcreateclaim', params({ action: 'wbcreateclaim' }), undefined, { success: 1 })!;
      expect(c.tags).toContain('*');
      expect(c.tags.filter((t) => t.startsWith('t:'))).toEqual([]);
    });

    it.each([
      [
        'wbsetlabel (recorded, n=70)',
        'wbsetlabel',
        { entity: { labels: { en: { language: 'en', value: 'Berlin (city)' } }, id: 'Q1', type: 'item', lastrevid: 23 }, success: 1 },
      ],
      ['wblinktitles', 'wblinktitles', { entity: { id: 'Q1', type: 'item', lastrevid: 41 }, success: 1 }],
      ['wbeditentity', 'wbeditentity', { entity: { id: 'Q1', type: 'item', lastrevid: 42 }, success: 1 }],
      [
        'wblinktitles creating an item of two pages',
        'wblinktitles',
        {
          entity: {
            id: 'Q9',
            type: 'item',
            lastrevid: 43,
            sitelinks: { enwiki: { site: 'enwiki', title: 'Berlin' }, dewiki: { site: 'dewiki', title: 'Berlin' } },
          },
          success: 1,
        },
      ],
    ])('%s keeps t:item', (_what, action, answer) => {
      expect(changeFromWrite(action, params({ action, id: 'Q1' }), undefined, answer)!.tags).toContain('t:item');
    });

    it('wblinktitles connecting a page to the item of the other (its answer shows the one sitelink added): sitelink lookups, not searches', () => {
      const answer = { entity: { id: 'Q1', type: 'item', lastrevid: 44, sitelinks: { dewiki: { site: 'dewiki', title: 'Berlin' } } }, success: 1 };
      const linked = params({ action: 'wblinktitles', fromsite: 'enwiki', fromtitle: 'Berlin', tosite: 'dewiki', totitle: 'Berlin' });
      const tags = changeFromWrite('wblinktitles', linked, undefined, answer)!.tags;
      expect(tags).toContain('sl');
      expect(tags).toContain('p:Item:Q1');
      expect(tags).not.toContain('t:item');
    });
  });

  describe('a PURGE the wiki confirms', () => {
    const NOW = Date.parse('2026-11-28T20:12:20Z');
    /** Item:Q1 as the wiki answers the question, its newest revision `revid` (parent `parentid`). */
    const q1 = (revid: number, parentid: number, comment?: string): PageNow => ({
      title: 'Item:Q1',
      missing: false,
      revid,
      parentid,
      revisionAt: NOW - 4_000,
      ...(comment !== undefined && { comment }),
    });

    /** A confirmer whose wiki answers each question with the next of `answers`; the changes it applied. */
    function confirmer(answers: PageNow[], askRevisions?: (revids: readonly number[]) => Promise<ReadonlyMap<number, number>>) {
      const applied: Change[] = [];
      const c = new PurgeConfirmations({
        ask: async () => ({ pages: [answers.shift()!], now: NOW }),
        ...(askRevisions && { askRevisions }),
        confirmed: (title, onlyStatements) => changeConfirmed(title, undefined, onlyStatements),
        apply: async (list) => void applied.push(...list),
        log: pino({ level: 'silent' }),
      });
      return {
        applied,
        purge: async () => {
          void c.note('Item:Q1');
          await c.settled();
          return applied.at(-1)!.tags;
        },
      };
    }

    it('the one revision since the last question is wbsetclaimvalue (recorded: rcid 29, revid 26 after 24): not t:item', async () => {
      const { purge } = confirmer([
        q1(24, 23, '/* wbeditentity-update-languages-short:0||de */'),
        q1(26, 24, '/* wbsetclaimvalue:1| */ [[Property:P2]]: 3,700,000'),
      ]);
      expect(await purge()).toContain('t:item');
      const tags = await purge();
      expect(tags).toEqual(expect.arrayContaining(['*', 'p:Item:Q1']));
      expect(tags).not.toContain('t:item');
    });

    it('a revision between the one seen last and the newest (the label may have changed there): t:item', async () => {
      const { purge } = confirmer([q1(24, 23, '/* wbsetclaimvalue:1| */'), q1(26, 25, '/* wbsetclaimvalue:1| */ [[Property:P2]]: 3,700,000')]);
      await purge();
      expect(await purge()).toContain('t:item');
    });

    it('a summary hidden from anonymous readers, or none: t:item', async () => {
      const { purge } = confirmer([q1(24, 23, '/* wbsetclaimvalue:1| */'), q1(26, 24)]);
      await purge();
      expect(await purge()).toContain('t:item');
    });

    it('the newest revision a label`s: t:item', async () => {
      const { purge } = confirmer([q1(24, 23, '/* wbsetclaimvalue:1| */'), q1(26, 24, '/* wbsetlabel-set:1|en */ Berlin (city)')]);
      await purge();
      expect(await purge()).toContain('t:item');
    });

    describe('a page never asked about before', () => {
      const newest = q1(26, 24, '/* wbsetclaimvalue:1| */ [[Property:P2]]: 3,700,000');
      const parentAt = (at: number) => async (revids: readonly number[]) => new Map(revids.map((r) => [r, at]));

      it('its parent made before the window (the newest is the only revision the PURGE can stand for): not t:item', async () => {
        const asked: number[][] = [];
        const { purge } = confirmer([newest], async (revids) => (asked.push([...revids]), parentAt(NOW - CONFIRM_WINDOW_MS - 10_000)(revids)));
        expect(await purge()).not.toContain('t:item');
        expect(asked).toEqual([[24]]);
      });

      it('its parent made within the window (a label may have changed there, its PURGE folded into this one): t:item', async () => {
        const { purge } = confirmer([newest], parentAt(NOW - 10_000));
        expect(await purge()).toContain('t:item');
      });

      it('the wiki cannot date the parent, or is not asked: t:item', async () => {
        expect(await confirmer([newest], async () => Promise.reject(new Error('down'))).purge()).toContain('t:item');
        expect(await confirmer([newest], async () => new Map()).purge()).toContain('t:item');
        expect(await confirmer([newest]).purge()).toContain('t:item');
      });

      it('its newest revision a label`s, or its first: t:item, and the parent is not asked about', async () => {
        const asked: number[] = [];
        const ask = async (revids: readonly number[]) => (asked.push(...revids), parentAt(0)(revids));
        expect(await confirmer([q1(26, 24, '/* wbsetlabel-set:1|en */ Berlin (city)')], ask).purge()).toContain('t:item');
        expect(await confirmer([q1(26, 0, '/* wbsetclaimvalue:1| */')], ask).purge()).toContain('t:item');
        expect(asked).toEqual([]);
      });

      it('the second question asks for the parents` ids and times; its answer is read', () => {
        const q = new URLSearchParams(parentsQuery([24, 17]));
        expect([q.get('prop'), q.get('revids'), q.get('rvprop')]).toEqual(['revisions', '24|17', 'ids|timestamp']);
        const times = revisionTimesOfAnswer({
          batchcomplete: true,
          query: {
            badrevids: { '17': { revid: 17, missing: true } },
            pages: [{ pageid: 11, ns: 120, title: 'Item:Q1', revisions: [{ revid: 24, parentid: 23, timestamp: '2026-11-28T20:12:06Z' }] }],
          },
        });
        expect([...times]).toEqual([[24, Date.parse('2026-11-28T20:12:06Z')]]);
      });
    });

    it('the question asks for each newest revision`s parent and summary; the answer`s are read, a hidden one is not', () => {
      expect(new URLSearchParams(confirmationQuery(['Item:Q1'])).get('rvprop')?.split('|')).toEqual(expect.arrayContaining(['ids', 'timestamp', 'comment']));
      const { pages } = pagesOfAnswer({
        curtimestamp: '2026-11-28T20:12:20Z',
        query: {
          pages: [
            {
              pageid: 11,
              ns: 120,
              title: 'Item:Q1',
              revisions: [{ revid: 26, parentid: 24, timestamp: '2026-11-28T20:12:16Z', comment: '/* wbsetclaimvalue:1| */ [[Property:P2]]: 3,700,000' }],
            },
            { pageid: 13, ns: 120, title: 'Item:Q3', revisions: [{ revid: 25, parentid: 17, timestamp: '2026-11-28T20:12:11Z', commenthidden: true }] },
          ],
        },
      });
      expect(pages).toEqual([
        {
          title: 'Item:Q1',
          missing: false,
          revid: 26,
          parentid: 24,
          revisionAt: Date.parse('2026-11-28T20:12:16Z'),
          comment: '/* wbsetclaimvalue:1| */ [[Property:P2]]: 3,700,000',
          pageid: 11,
        },
        { title: 'Item:Q3', missing: false, revid: 25, parentid: 17, revisionAt: Date.parse('2026-11-28T20:12:11Z'), pageid: 13 },
      ]);
    });
  });
});
