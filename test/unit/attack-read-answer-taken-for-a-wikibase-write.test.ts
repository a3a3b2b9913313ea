// Wikibase's read modules answer `"success": 1` too (wbgetentities beside `entities`,
// wbsearchentities beside `search`), and a Wikibase write was confirmed by `success` alone: a body
// PHP read as `action=wbgetentities` (the query string's) and the gateway as
// `action=wbremoveclaims&claim=Q1$a|Q2$a|…` (a field after a file part of the same name, which
// PHP does not register) had its 100,000 statements' entities invalidated, and with
// `action=wbeditentity` every search. Now a Wikibase write's answer must hold nothing a write's
// answer does not (policy/changes.ts WIKIBASE_WRITE_ANSWER_KEYS).
import { describe, expect, it } from 'vitest';
import { changeFromWrite } from '../../src/policy/changes.js';

const params = (p: Record<string, string>) => (name: string) => p[name];
const claims = Array.from({ length: 1_000 }, (_, i) => `Q${i + 1}$a`).join('|');

describe('a read module`s answer under a Wikibase write`s name', () => {
  it('wbgetentities` answer: no write', () => {
    const answer = { entities: { Q1: { id: 'Q1', type: 'item', missing: '' } }, success: 1 };
    expect(changeFromWrite('wbremoveclaims', params({ action: 'wbremoveclaims', claim: claims }), undefined, answer)).toBeUndefined();
    expect(changeFromWrite('wbeditentity', params({ action: 'wbeditentity', new: 'item', data: '{}' }), undefined, answer)).toBeUndefined();
  });

  it('wbsearchentities` answer: no write', () => {
    const answer = { searchinfo: { search: 'x' }, search: [], success: 1 };
    expect(changeFromWrite('wbsetlabel', params({ action: 'wbsetlabel', id: 'P1' }), undefined, answer)).toBeUndefined();
  });

  it('wbgetclaims` claims (an object, not a list of GUIDs): no write', () => {
    expect(changeFromWrite('wbremoveclaims', params({ claim: claims }), undefined, { claims: { P1: [] }, success: 1 })).toBeUndefined();
  });

  it('the writes` own answers still count', () => {
    const removed = changeFromWrite('wbremoveclaims', params({ claim: 'Q1$a' }), undefined, { pageinfo: { lastrevid: 9 }, success: 1, claims: ['Q1$a'] })!;
    expect(removed.tags).toContain('p:Q1');
    const merged = changeFromWrite('wblmergelexemes', params({ source: 'L8', target: 'L9' }), undefined, { success: 1 })!;
    expect(merged.tags).toEqual(expect.arrayContaining(['p:Lexeme:L8', 'p:Lexeme:L9']));
    const label = changeFromWrite('wbsetlabel', params({ id: 'Q5' }), undefined, {
      entity: { id: 'Q5', type: 'item', lastrevid: 3 },
      success: 1,
      warnings: {},
    })!;
    expect(label.tags).toContain('p:Q5');
  });
});
