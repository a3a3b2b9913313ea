// An edit whose summary opens with a statement module's autocomment leaves item searches cached
// (src/policy/changes.ts statementsOnlyComment). A revert's summary is its client's own: an
// undo through the API (Wikibase allows it on entity pages: RepoHooks::onApiCheckCanExecute) or a
// rollback, given `summary=/* wbsetclaimvalue:1| */`, reverted a label while both the follower's
// row and the PURGE's confirmation read it as statements alone, and item searches kept the old
// label for the followed TTL. A revert carries MediaWiki's revert tags (mw-undo, mw-rollback,
// mw-manual-revert: EditResult::getRevertTags; an undo merged over a stale base revision that is
// no clean undo carries mw-manual-revert alone): such a revision is never statements-only.
import { describe, expect, it } from 'vitest';
import { changeFromRow, statementsOnlyComment } from '../../src/policy/changes.js';
import { confirmationQuery, onlyStatementsSince, pagesOfAnswer } from '../../src/invalidation/purge-confirmation.js';
import { namespacesFromSiteinfo } from '../../src/mediawiki/titles.js';

const namespaces = namespacesFromSiteinfo({
  namespaces: {
    '0': { id: 0, name: '' },
    '120': { id: 120, name: 'Item', canonical: 'Item', defaultcontentmodel: 'wikibase-item' },
    '121': { id: 121, name: 'Item talk', canonical: 'Item talk' },
  },
});
const typed = '/* wbsetclaimvalue:1| */ undo of the label change';
const row = (tags: string[]) => ({
  type: 'edit',
  ns: 120,
  title: 'Item:Q1',
  pageid: 11,
  revid: 40,
  rcid: 50,
  timestamp: '2026-11-28T20:20:00Z',
  comment: typed,
  tags,
});

describe('a statement module`s autocomment typed on a revert', () => {
  it.each(['mw-undo', 'mw-rollback', 'mw-manual-revert'])('a follower row tagged %s keeps t:item', (tag) => {
    expect(changeFromRow(row([tag]), namespaces).tags).toContain('t:item');
    expect(statementsOnlyComment(typed, [tag])).toBe(false);
  });

  it('a row with other tags, or none, is read by its summary as before', () => {
    expect(changeFromRow(row([]), namespaces).tags).not.toContain('t:item');
    expect(changeFromRow(row(['mw-reverted', 'some-tool']), namespaces).tags).not.toContain('t:item');
  });

  it('the PURGE`s confirmation asks for the revision`s tags and reads a revert as not statements-only', () => {
    expect(decodeURIComponent(confirmationQuery(['Item:Q1']))).toContain('rvprop=ids|timestamp|comment|tags');
    const answer = (tags: string[]) => ({
      curtimestamp: '2026-11-28T20:20:05Z',
      query: {
        pages: [{ pageid: 11, ns: 120, title: 'Item:Q1', revisions: [{ revid: 40, parentid: 39, timestamp: '2026-11-28T20:20:00Z', comment: typed, tags }] }],
      },
    });
    const reverted = pagesOfAnswer(answer(['mw-undo'])).pages[0]!;
    expect(reverted.tags).toEqual(['mw-undo']);
    expect(onlyStatementsSince('r39', reverted)).toBe(false);
    expect(onlyStatementsSince('r39', pagesOfAnswer(answer([])).pages[0]!)).toBe(true);
  });
});
