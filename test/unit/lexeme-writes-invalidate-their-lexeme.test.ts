// WikibaseLexeme's write modules (wbladdform, wbleditformelements, wblremoveform, wbladdsense,
// wbleditsenseelements, wblremovesense, wblmergelexemes) were not in the module table: a form
// added through the gateway left the lexeme's cached answers (wbgetentities&ids=L1, its forms'
// searches) as they were until the wiki's own PURGE or the follower's next poll. Now each names
// its lexeme's page, from `lexemeId`, a form or sense id (`L1-F2` is kept on L1's page) or
// `source`/`target`, at once; their lists go once the wiki confirms a revision, as their
// answers never say whether they saved anything (src/mediawiki/modules.ts WIKIBASE_UNPROVEN_WRITE).
import { describe, expect, it } from 'vitest';
import { changeFromWrite } from '../../src/policy/changes.js';
import { writeFacts } from '../../src/mediawiki/modules.js';

const params = (p: Record<string, string>) => (name: string) => p[name];
const ok = (extra: Record<string, unknown> = {}) => ({ lastrevid: 40, success: 1, ...extra });

describe('WikibaseLexeme writes through the gateway', () => {
  it('are writes of the module table, of entities', () => {
    for (const m of ['wbladdform', 'wbleditformelements', 'wblremoveform', 'wbladdsense', 'wbleditsenseelements', 'wblremovesense', 'wblmergelexemes']) {
      expect(writeFacts(m)?.entities, m).toBe(true);
    }
  });

  it('wbladdform names its lexeme (lexemeId) at once, and its lists only once the wiki confirms', () => {
    const c = changeFromWrite(
      'wbladdform',
      params({ action: 'wbladdform', lexemeId: 'L1', data: '{}', token: 't' }),
      undefined,
      ok({ form: { id: 'L1-F3' } }),
    )!;
    expect(c.tags).toContain('p:Lexeme:L1');
    expect(c.tags).not.toContain('*');
    expect(c.tags).not.toContain('t:lexeme');
    expect(c.confirm).toContain('Lexeme:L1');
  });

  it('a form or sense id names the lexeme that keeps it (formId, senseId, id)', () => {
    const edit = changeFromWrite('wbleditformelements', params({ formId: 'L2-F1', data: '{}' }), undefined, ok({ form: { id: 'L2-F1' } }))!;
    expect(edit.tags).toContain('p:Lexeme:L2');
    const sense = changeFromWrite('wbleditsenseelements', params({ senseId: 'L5-S2', data: '{}' }), undefined, ok({ sense: { id: 'L5-S2' } }))!;
    expect(sense.tags).toContain('p:Lexeme:L5');
    const removed = changeFromWrite('wblremovesense', params({ id: 'L3-S1' }), undefined, ok())!;
    expect(removed.tags).toContain('p:Lexeme:L3');
    // Named by the answer alone (a request parameter PHP read otherwise).
    const added = changeFromWrite('wbladdsense', params({}), undefined, ok({ sense: { id: 'L7-S4' } }))!;
    expect(added.tags).toContain('p:Lexeme:L7');
  });

  it('wblmergelexemes names both lexemes (source, target)', () => {
    const c = changeFromWrite('wblmergelexemes', params({ source: 'L8', target: 'L9' }), undefined, { success: 1 })!;
    expect(c.tags).toEqual(expect.arrayContaining(['p:Lexeme:L8', 'p:Lexeme:L9']));
  });

  it('an answer that is not a success changes nothing', () => {
    expect(changeFromWrite('wbladdform', params({ lexemeId: 'L1' }), undefined, { error: { code: 'permissiondenied' } })).toBeUndefined();
  });
});
