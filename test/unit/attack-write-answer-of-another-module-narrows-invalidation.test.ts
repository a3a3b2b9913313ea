// Attack class 64: a write the gateway reads as one module while PHP runs another. A statement
// write (wbcreateclaim, …) or a sitelink write (wbsetsitelink) changes no label, description or
// alias, so its change leaves the searches of its entity type (`t:item`) cached
// (modules.ts WriteFacts.statementsOnly, sitelinksOnly). Both were taken from the module the
// gateway read in the request; every Wikibase write's answer is accepted for every Wikibase write
// module (`success: 1` and the keys they answer). A form PHP reads apart from the gateway (class
// 46 closed the known ways) naming wbcreateclaim to the gateway and wbsetlabel to PHP left every
// item search showing the old label. The answer decides now: a statement module answers no
// `entity` (captures 72, 73), a sitelink module an entity showing its sitelinks alone.
import { describe, expect, it } from 'vitest';
import { changeFromWrite } from '../../src/policy/changes.js';

const params = (p: Record<string, string>) => (name: string) => p[name];
/** wbsetlabel's answer as the real Wikibase gives it (capture 70). */
const LABEL_ANSWER = { entity: { labels: { en: { language: 'en', value: 'Berlin (city)' } }, id: 'Q1', type: 'item', lastrevid: 23 }, success: 1 };

describe('a write answer of another module than the one the gateway read', () => {
  // The statement setters (wbsetclaimvalue, …) are unproven: their lists go once the wiki
  // confirms the revision, whose summary then decides (purge-confirmation.ts); these two are trusted.
  it.each(['wbcreateclaim', 'wbremoveclaims'])('%s read, a label written: item searches go', (action) => {
    const c = changeFromWrite(action, params({ action, entity: 'Q1', claim: 'Q1$0A2B428C-CAEA-4F3C-A931-70176FFDD482' }), undefined, LABEL_ANSWER)!;
    expect(c.tags).toContain('*');
    expect(c.tags).toContain('t:item');
  });

  it('wbsetsitelink read, a label written: item searches go', () => {
    const c = changeFromWrite(
      'wbsetsitelink',
      params({ action: 'wbsetsitelink', id: 'Q1', linksite: 'enwiki', linktitle: 'Berlin' }),
      undefined,
      LABEL_ANSWER,
    )!;
    expect(c.tags).toContain('t:item');
  });

  it('wbsetsitelink answered with its sitelink alone (and nochange or not): item searches stay', () => {
    for (const extra of [{}, { nochange: '' }]) {
      const answer = {
        entity: { id: 'Q1', type: 'item', lastrevid: 40, sitelinks: { enwiki: { site: 'enwiki', title: 'Berlin', badges: [] } }, ...extra },
        success: 1,
      };
      const c = changeFromWrite('wbsetsitelink', params({ action: 'wbsetsitelink', id: 'Q1', linksite: 'enwiki', linktitle: 'Berlin' }), undefined, answer)!;
      expect(c.tags).toContain('p:Item:Q1');
      expect(c.tags).not.toContain('t:item');
    }
  });

  it('wbcreateclaim answered as a statement module answers (capture 72): item searches stay', () => {
    const answer = { pageinfo: { lastrevid: 25 }, success: 1, claim: { mainsnak: { snaktype: 'value', property: 'P4' }, type: 'statement', id: 'Q1$X' } };
    const c = changeFromWrite('wbcreateclaim', params({ action: 'wbcreateclaim', entity: 'Q1', property: 'P4', snaktype: 'value' }), undefined, answer)!;
    expect(c.tags).toContain('*');
    expect(c.tags).not.toContain('t:item');
  });

  it('wbcreateclaim read, a label set to what it was (capture 82: nochange): nothing but the page, however often', () => {
    const nullEdit = { entity: { labels: { en: { language: 'en', value: 'Potsdam' } }, id: 'Q7', type: 'item', lastrevid: 33, nochange: '' }, success: 1 };
    const c = changeFromWrite('wbcreateclaim', params({ action: 'wbcreateclaim', entity: 'Q7', property: 'P4', snaktype: 'value' }), undefined, nullEdit)!;
    expect(c.tags).not.toContain('*');
    expect(c.tags).not.toContain('t:item');
  });
});
