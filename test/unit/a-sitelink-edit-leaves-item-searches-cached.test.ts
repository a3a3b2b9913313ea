// A change of an item's sitelinks alone evicted every item search (`t:item`): wbsetsitelink,
// wblinktitles connecting a page to an item, and the repository's own edits after a client wiki's
// page was moved or deleted (Wikibase client's UpdateRepoOnMove and UpdateRepoOnDelete:
// `clientsitelink-update`, `clientsitelink-remove`), many a minute on Wikidata. Searches
// (wbsearchentities, list=wbsearch: captures 16, 17, 19, 31, 32, 94) show ids, labels,
// descriptions, aliases and match info, never a sitelink. Only a site-and-title lookup that found
// no item reads sitelinks: it depends on its own tag (policy/dependencies.ts SITELINKS), which
// every change of an item but a statements-only one carries, and a sitelinks-only one instead of
// the type tag (policy/changes.ts sitelinksOnlyComment, modules.ts WriteFacts.sitelinksOnly,
// invalidation/purge-confirmation.ts onlySitelinksSince).
import { describe, expect, it } from 'vitest';
import pino from 'pino';
import { changeConfirmed, changeFromRow, changeFromWrite, type RecentChangeRow, sitelinksOnlyComment } from '../../src/policy/changes.js';
import { dependenciesOf, SITELINKS } from '../../src/policy/dependencies.js';
import { modulesOf } from '../../src/policy/request.js';
import { parsePhpQuery } from '../../src/mediawiki/php-input.js';
import { PurgeConfirmations, type PageNow } from '../../src/invalidation/purge-confirmation.js';

const NOW = Date.parse('2026-11-30T06:00:00Z');
const edit = (comment: string, extra: Partial<RecentChangeRow> = {}): RecentChangeRow => ({
  type: 'edit',
  ns: 0,
  title: 'Q1',
  pageid: 11,
  revid: 40,
  rcid: 50,
  timestamp: '2026-11-30T05:59:59Z',
  comment,
  ...extra,
});
const deps = (q: string, answer: unknown) => {
  const query = parsePhpQuery(`${q}&format=json`);
  return dependenciesOf({ query, modules: modulesOf(query), override: undefined, answer: () => answer }).tags;
};

describe('what depends on sitelinks', () => {
  it('a site-and-title lookup that found no item; a search does not', () => {
    expect(
      deps('action=wbgetentities&sites=enwiki&titles=Berlin', { entities: { '-1': { site: 'enwiki', title: 'Berlin', missing: '' } }, success: 1 }),
    ).toEqual([SITELINKS, 'p:Berlin']);
    expect(deps('action=wbsearchentities&search=Berl&language=en', { search: [], success: 1 })).not.toContain(SITELINKS);
  });
});

describe('a change of an item`s sitelinks alone', () => {
  it.each([
    ['wbsetsitelink', '/* wbsetsitelink-add:1|enwiki */ Berlin'],
    ['wbsetsitelink of badges', '/* wbsetsitelink-set-badges:1|enwiki */ Berlin'],
    ['wblinktitles connecting a page to an item', '/* wblinktitles-connect:2| */ enwiki:Berlin, dewiki:Berlin'],
    ['a client wiki`s page moved', '/* clientsitelink-update:0|enwiki|Berlin|Berlin, Germany */'],
    ['a client wiki`s page deleted', '/* clientsitelink-remove:1|enwiki */ Berlin'],
  ])('%s: the lookups go, the searches stay', (_what, comment) => {
    const tags = changeFromRow(edit(comment)).tags;
    expect(tags).toContain(SITELINKS);
    expect(tags).not.toContain('t:item');
    expect(tags).toEqual(expect.arrayContaining(['*', 'p:Q1']));
  });

  it('through the gateway: wbsetsitelink', () => {
    const c = changeFromWrite('wbsetsitelink', (n) => ({ action: 'wbsetsitelink', id: 'Q1', linksite: 'enwiki', linktitle: 'Berlin' })[n], undefined, {
      entity: { id: 'Q1', type: 'item', lastrevid: 40, sitelinks: { enwiki: { site: 'enwiki', title: 'Berlin' } } },
      success: 1,
    })!;
    expect(c.tags).toContain(SITELINKS);
    expect(c.tags).not.toContain('t:item');
  });

  it('a PURGE the wiki confirms: its newest revision a sitelink`s, all that changed since it was seen', async () => {
    const tagsOf = async (newest: Partial<PageNow>, parentMadeAt?: number) => {
      const applied: string[] = [];
      const c = new PurgeConfirmations({
        ask: async (titles) => ({
          pages: titles.map((title): PageNow => ({ title, missing: false, revid: 41, parentid: 40, revisionAt: NOW - 1_000, ...newest })),
          now: NOW,
        }),
        askRevisions: async (revids) => new Map(parentMadeAt === undefined ? [] : revids.map((r) => [r, parentMadeAt])),
        confirmed: (title, onlyStatements, pageId, datatypes, onlySitelinks) =>
          changeConfirmed(title, undefined, onlyStatements, pageId, datatypes, onlySitelinks),
        apply: async (list) => void applied.push(...list.flatMap((ch) => ch.tags)),
        log: pino({ level: 'silent' }),
      });
      c.note('Q1');
      await c.settled();
      return applied;
    };
    const sitelink = '/* clientsitelink-update:0|enwiki|Berlin|Berlin, Germany */';
    const alone = await tagsOf({ comment: sitelink }, NOW - 86_400_000);
    expect(alone).toContain(SITELINKS);
    expect(alone).not.toContain('t:item');
    // Its parent made within the window (another revision may have changed a label): the type tag too.
    expect(await tagsOf({ comment: sitelink }, NOW - 2_000)).toEqual(expect.arrayContaining([SITELINKS, 't:item']));
  });
});

describe('what still evicts the searches', () => {
  it.each([
    ['a new item made by wblinktitles', { type: 'new', comment: '/* wblinktitles-create:2| */ enwiki:Berlin, dewiki:Berlin' }],
    ['a revert of a sitelink edit', { comment: '/* wbsetsitelink-add:1|enwiki */ Berlin', tags: ['mw-undo'] }],
    ['a label', { comment: '/* wbsetlabel-set:1|en */ Berlin' }],
    ['wbeditentity', { comment: '/* wbeditentity-update:0| */' }],
  ])('%s: the type tag, and the lookups', (_what, row) => {
    const tags = changeFromRow(edit(row.comment, row as Partial<RecentChangeRow>)).tags;
    expect(tags).toEqual(expect.arrayContaining(['t:item', SITELINKS]));
  });

  it('a statements-only edit: neither', () => {
    const tags = changeFromRow(edit('/* wbsetclaimvalue:1| */ [[Property:P2]]: 5')).tags;
    expect(tags).not.toContain('t:item');
    expect(tags).not.toContain(SITELINKS);
  });

  it('reads autocomments as Wikibase writes them, and no other', () => {
    expect(sitelinksOnlyComment('/* wbsetsitelink-remove:1|enwiki */', undefined)).toBe(true);
    expect(sitelinksOnlyComment('moved /* clientsitelink-update:0| */', undefined)).toBe(false);
    expect(sitelinksOnlyComment(undefined, undefined)).toBe(false);
  });
});
