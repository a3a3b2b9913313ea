// MediaInfo ids (`M123`) name their File: page by its id (src/mediawiki/entities.ts
// entityPageId): answers that show no title (wbgetclaims of M123, wbgetentities props=claims)
// depend on `i:123` alone. A PURGE names titles only, so a MediaInfo edit made at the wiki
// (whose PURGE of File:X is all that reaches a gateway without the follower) left them cached:
// the confirmation of the PURGE now names the page's id too (the wiki's answer to its question
// carries it: purge-confirmation.ts pagesOfAnswer, policy/changes.ts changeConfirmed). And a
// statement setter naming a MediaInfo id alone, whose answer cannot say whether it saved
// anything, no longer invalidates `*` at once (anyone allowed to edit could repeat a no-op).
import { describe, expect, it } from 'vitest';
import { changeConfirmed, changeFromWrite } from '../../src/policy/changes.js';
import { dependenciesOf } from '../../src/policy/dependencies.js';
import { modulesOf } from '../../src/policy/request.js';
import { parsePhpQuery } from '../../src/mediawiki/php-input.js';
import { pagesOfAnswer } from '../../src/invalidation/purge-confirmation.js';
import { DEFAULT_NAMESPACES } from '../../src/mediawiki/titles.js';

const tagsOf = (q: string, answer: unknown = {}) => {
  const query = parsePhpQuery(`${q}&format=json`);
  return dependenciesOf({ query, modules: modulesOf(query), override: undefined, answer: () => answer }).tags;
};

describe('a MediaInfo answer that shows no title', () => {
  it('is reached by the confirmation of its File: page`s PURGE', () => {
    const tags = tagsOf('action=wbgetclaims&entity=M123');
    expect(tags).toEqual(['i:123']);
    const { pages } = pagesOfAnswer({
      curtimestamp: '2026-11-29T10:00:00Z',
      query: { pages: [{ pageid: 123, ns: 6, title: 'File:Sunset.jpg', revisions: [{ revid: 9, parentid: 8, timestamp: '2026-11-29T09:59:59Z' }] }] },
    });
    expect(pages[0]!.pageid).toBe(123);
    const confirmed = changeConfirmed('File:Sunset.jpg', DEFAULT_NAMESPACES, false, pages[0]!.pageid);
    expect(confirmed.tags).toContain('i:123');
    expect(tags.some((t) => confirmed.tags.includes(t))).toBe(true);
  });
});

describe('a statement set on a MediaInfo id alone', () => {
  it('invalidates its page`s id at once, never any change (`*`)', () => {
    const params = new Map([
      ['action', 'wbsetclaimvalue'],
      ['claim', 'M123$5627445f-43cb-ed6d-3adb-760e85bd17ee'],
    ]);
    const change = changeFromWrite('wbsetclaimvalue', (n) => params.get(n), DEFAULT_NAMESPACES, { success: 1, pageinfo: { lastrevid: 10 }, claim: {} });
    expect(change?.tags).toContain('i:123');
    expect(change?.tags).not.toContain('*');
  });
});
