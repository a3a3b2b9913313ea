// A Wikibase write whose form the gateway could not read (1,001 dummy fields, or a body larger than
// it holds) is named by its answer alone, and every answer showing an entity was taken for
// wbeditentity's, which may change labels and so every search of the entity's type (`t:item`). An
// account setting a sitelink that way emptied every item search with each write. wbsetsitelink
// answers the entity with its sitelinks alone (SetSiteLink::addToOutput), and is now taken for what
// it is: the entity's page and the sitelink lookups, no search (policy/changes.ts confirmedWrite).
import { describe, expect, it } from 'vitest';
import { changeFromWrite, confirmedWrite } from '../../src/policy/changes.js';

describe('an unreadable write whose answer shows sitelinks alone', () => {
  const answer = {
    entity: { id: 'Q42', type: 'item', lastrevid: 78, sitelinks: { enwiki: { site: 'enwiki', title: 'Douglas Adams', badges: [] } } },
    success: 1,
  };

  it('is a sitelink write: no item search goes', () => {
    expect(confirmedWrite(answer)).toBe('wbsetsitelink');
    const c = changeFromWrite(confirmedWrite(answer)!, () => undefined, undefined, answer)!;
    expect(c.tags).toContain('p:Q42');
    expect(c.tags).not.toContain('t:item');
  });

  it('a whole entity, or terms, stay wbeditentity`s: their searches go', () => {
    const whole = { entity: { ...answer.entity, labels: {}, descriptions: {}, aliases: {}, claims: {} }, success: 1 };
    expect(confirmedWrite(whole)).toBe('wbeditentity');
    const label = { entity: { id: 'Q42', type: 'item', lastrevid: 79, labels: { en: { language: 'en', value: 'x' } } }, success: 1 };
    expect(confirmedWrite(label)).toBe('wbeditentity');
    expect(changeFromWrite('wbeditentity', () => undefined, undefined, label)!.tags).toContain('t:item');
  });
});
