// wbcreateredirect over a redirect that already points there saves nothing: Wikibase allows it
// (EntityRedirectCreationInteractor::checkCanCreateRedirect, "It's ok to override a redirect with
// a redirect"), WikiPageEntityStore::saveEntityContent makes no revision for equal content, and
// CreateRedirect answers `{"success":1,"redirect":"Q1"}` either way, with no `nochange`. Anonymous
// clients may call it (the default `item-redirect` right is `*`, token `+\`). Sent again and
// again, it emptied every list and every item search on every replica. Now its change names the
// two entities' pages alone, and the lists go once the wiki confirms a new revision, as for the
// statement setters (attack-null-statement-edit-empties-every-list.test.ts).
import { describe, expect, it } from 'vitest';
import { changeFromWrite } from '../../src/policy/changes.js';

const params = (p: Record<string, string>) => (name: string) => p[name];
const again = params({ action: 'wbcreateredirect', from: 'Q6', to: 'Q1', token: '+\\' });

describe('wbcreateredirect', () => {
  it('names the pages of both entities at once, and its lists only once the wiki confirms', () => {
    const c = changeFromWrite('wbcreateredirect', again, undefined, { success: 1, redirect: 'Q1' })!;
    expect(c.tags).not.toContain('*');
    expect(c.tags).not.toContain('t:item');
    expect(c.tags).toEqual(expect.arrayContaining(['p:Item:Q6', 'p:Item:Q1']));
    expect(c.confirm).toEqual(expect.arrayContaining(['Item:Q6']));
  });
});
