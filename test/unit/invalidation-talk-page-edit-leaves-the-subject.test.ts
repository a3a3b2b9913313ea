// An edit of a talk page changes nothing an answer about its subject page shows, and the other way
// round: MediaWiki purges both pages of a pair when one is created or deleted, and only the edited
// page on an edit (includes/page/WikiPage.php onArticleCreate, onArticleDelete, onArticleEdit:
// reference/mediawiki-1.39/SOURCE-NOTES.md). On a Wikibase repository, every edit of `Talk:Q42`
// (or `Item talk:Q42`) had evicted Q42's entity answers, through each of the three signals: the
// follower's row, the wiki's PURGE and the write relayed by the gateway (src/policy/changes.ts addPage).
import { describe, expect, it } from 'vitest';
import { modulesOf } from '../../src/policy/request.js';
import { dependenciesOf } from '../../src/policy/dependencies.js';
import { changeConfirmed, changeFromPurge, changeFromRow, changeFromWrite, type Change } from '../../src/policy/changes.js';
import { parsePhpQuery } from '../../src/mediawiki/php-input.js';
import { namespacesFromSiteinfo } from '../../src/mediawiki/titles.js';

const siteinfo = (itemNs: number) =>
  namespacesFromSiteinfo({
    namespaces: {
      '0': { id: 0, name: '', ...(itemNs === 0 && { defaultcontentmodel: 'wikibase-item' }) },
      '1': { id: 1, name: 'Talk', canonical: 'Talk' },
      '120': { id: 120, name: 'Item', canonical: 'Item', ...(itemNs === 120 && { defaultcontentmodel: 'wikibase-item' }) },
      '121': { id: 121, name: 'Item talk', canonical: 'Item talk' },
      '122': { id: 122, name: 'Property', canonical: 'Property', defaultcontentmodel: 'wikibase-property' },
      '123': { id: 123, name: 'Property talk', canonical: 'Property talk' },
    },
  });

const LAYOUTS = [
  { name: 'items in Item:', ns: siteinfo(120), item: 'Item:Q42', talk: 'Item talk:Q42' },
  { name: 'items in the main namespace', ns: siteinfo(0), item: 'Q42', talk: 'Talk:Q42' },
];

const params = (p: Record<string, string>) => (name: string) => p[name];
const touches = (change: Change | undefined, tags: readonly string[]) => change !== undefined && change.tags.some((t) => tags.includes(t));

describe.each(LAYOUTS)('with $name', ({ ns, item, talk }) => {
  const entityTags = () => {
    const query = parsePhpQuery('action=wbgetentities&ids=Q42&props=labels|claims&format=json');
    const answer = { entities: { Q42: { type: 'item', id: 'Q42', labels: {}, claims: {} } }, success: 1 };
    return dependenciesOf({ query, modules: modulesOf(query), override: undefined, answer: () => answer, namespaces: ns }).tags;
  };
  const row = (type: string, title: string, extra: Record<string, unknown> = {}) =>
    changeFromRow({ type, ns: title === talk ? (item === 'Q42' ? 1 : 121) : 0, title, rcid: 9, timestamp: '2026-12-01T10:00:00Z', ...extra }, ns);

  it('the entity answer depends on the item`s page, not on its talk page', () => {
    expect(entityTags()).toContain(`p:${item}`);
    expect(entityTags()).not.toContain(`p:${talk}`);
  });

  it('the follower`s row of a talk page edit leaves the entity answer; its creation and deletion take it', () => {
    expect(row('edit', talk).tags).toContain(`p:${talk}`);
    expect(touches(row('edit', talk), entityTags())).toBe(false);
    // The talk page coming to exist or going changes the subject's `talkid`.
    expect(touches(row('new', talk), entityTags())).toBe(true);
    expect(touches(row('log', talk, { logtype: 'delete', logaction: 'delete' }), entityTags())).toBe(true);
  });

  it('the wiki`s PURGE of the talk page leaves the entity answer (it purges the item`s URLs itself when they change)', () => {
    expect(changeFromPurge(talk, ns).tags).toEqual([`p:${talk}`]);
    expect(touches(changeFromPurge(talk, ns), entityTags())).toBe(false);
    // The PURGE confirmed: the talk page's lists, still not the entity, even when the wiki says
    // its text may have changed a datatype (`existence`: any revision no Wikibase module made).
    expect(touches(changeConfirmed(talk, ns), entityTags())).toBe(false);
    expect(touches(changeConfirmed(talk, ns, false, 18, true), entityTags())).toBe(false);
  });

  it('an edit of the talk page relayed by the gateway leaves the entity answer; one that creates it takes it', () => {
    const edited = changeFromWrite('edit', params({ action: 'edit', title: talk, token: 't' }), ns, {
      edit: { result: 'Success', pageid: 77, title: talk, contentmodel: 'wikitext', oldrevid: 80, newrevid: 81 },
    });
    expect(edited?.tags).toContain(`p:${talk}`);
    expect(touches(edited, entityTags())).toBe(false);
    for (const created of [true, '']) {
      const c = changeFromWrite('edit', params({ action: 'edit', title: talk, token: 't' }), ns, {
        edit: { result: 'Success', pageid: 77, title: talk, contentmodel: 'wikitext', new: created, newrevid: 81 },
      });
      expect(touches(c, entityTags()), `new: ${JSON.stringify(created)}`).toBe(true);
    }
    const deleted = changeFromWrite('delete', params({ action: 'delete', title: talk, token: 't' }), ns, { delete: { title: talk, reason: '', logid: 5 } });
    expect(touches(deleted, entityTags())).toBe(true);
  });

  it('an operator`s purge by title still takes both pages', () => {
    expect(changeFromPurge(talk, ns, true).tags).toContain(`p:${item}`);
  });
});

// Pages a write changed that its answer names only apart from its title fields (found in review
// of the change above: they had been reached through the pair alone, or not at all).
describe('pages a write changes beyond its answer`s titles', () => {
  it('action=delete&deletetalk=1: the talk page`s own answers, its lists once the wiki confirms it gone (there may have been none)', () => {
    const c = changeFromWrite('delete', params({ action: 'delete', title: 'Foo', deletetalk: '1', token: 't' }), undefined, {
      delete: { title: 'Foo', reason: '', logid: 5 },
    });
    expect(c?.tags).toEqual(expect.arrayContaining(['p:Foo', 'p:Talk:Foo', 'n:0']));
    expect(c?.tags).not.toContain('n:1');
    expect(c?.confirm).toEqual(['Talk:Foo']);
    const without = changeFromWrite('delete', params({ action: 'delete', title: 'Foo', token: 't' }), undefined, {
      delete: { title: 'Foo', reason: '', logid: 5 },
    });
    expect(without?.tags).not.toContain('n:1');
  });

  it('action=move&movesubpages=1: every subpage moved, and its talk page`s', () => {
    const c = changeFromWrite('move', params({ action: 'move', from: 'A', to: 'B', movesubpages: '1', movetalk: '1', token: 't' }), undefined, {
      move: {
        from: 'A',
        to: 'B',
        reason: '',
        talkfrom: 'Talk:A',
        talkto: 'Talk:B',
        subpages: [
          { from: 'A/1', to: 'B/1' },
          { from: 'A/2', errors: [{ code: 'articleexists' }] },
        ],
        'subpages-talk': [{ from: 'Talk:A/1', to: 'Talk:B/1' }],
      },
    });
    expect(c?.tags).toEqual(expect.arrayContaining(['p:A/1', 'p:B/1', 'p:Talk:A/1', 'p:Talk:B/1']));
    // Not moved (`errors`): nothing of it changed.
    expect(c?.tags).not.toContain('p:A/2');
  });
});
