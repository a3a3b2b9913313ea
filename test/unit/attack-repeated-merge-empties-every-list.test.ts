// wbmergeitems answers `"success":1` with both items' lastrevid whether or not it saved anything
// (MergeItems::mergeItems), with no `nochange`. Two items whose descriptions conflict in one
// language, merged with `ignoreconflicts=description`, keep the source's description: it never
// becomes empty, so no redirect is made, and merging them again saves nothing (WikiPageEntityStore
// makes no revision for equal content), while the answer still says success. Sent again and again
// by anyone allowed to merge, it emptied every list, every item search and every sitelink lookup
// on every replica at each request, as wbcreateredirect did (attack-repeated-redirect-empties-every-list).
// Now its change names the two items' pages alone and the lists go once the wiki confirms a new
// revision; `"redirected":1` (the source became a redirect, a revision: capture 76) proves it.
import { describe, expect, it } from 'vitest';
import { changeFromWrite } from '../../src/policy/changes.js';

const params = (p: Record<string, string>) => (name: string) => p[name];
const merge = params({ action: 'wbmergeitems', fromid: 'Q6', toid: 'Q1', ignoreconflicts: 'description', token: 'x+\\' });

/** A merge's answer (capture 76's shape), its `redirected` as given. */
const answer = (redirected: number) => ({
  success: 1,
  redirected,
  from: { id: 'Q6', type: 'item', lastrevid: 28 },
  to: { id: 'Q1', type: 'item', lastrevid: 29 },
});

describe('wbmergeitems', () => {
  it('that made no redirect: the pages of both items at once, their lists only once the wiki confirms', () => {
    const c = changeFromWrite('wbmergeitems', merge, undefined, answer(0))!;
    expect(c.tags).not.toContain('*');
    expect(c.tags).not.toContain('t:item');
    expect(c.tags).not.toContain('sl');
    expect(c.tags).toEqual(expect.arrayContaining(['p:Item:Q6', 'p:Item:Q1']));
    expect(c.confirm).toEqual(expect.arrayContaining(['Item:Q6', 'Item:Q1']));
  });

  it('that made the source a redirect (capture 76): everything it changed at once', () => {
    const c = changeFromWrite('wbmergeitems', merge, undefined, answer(1))!;
    expect(c.tags).toEqual(expect.arrayContaining(['*', 't:item', 'p:Item:Q6', 'p:Item:Q1']));
    expect(c.confirm ?? []).toEqual([]);
  });
});
