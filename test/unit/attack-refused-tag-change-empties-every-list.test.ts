// ApiTag answers 200 with an item per revision; `status: "failure"` where ChangeTags refused the
// change (removing a software tag such as mw-undo: ChangeTags::canUpdateTags refuses before any
// rate limit is checked, and every registered user has `changetags`), `skipped` where it was not
// tried. The gateway took any item without `noop` or `status: "error"` for a change, so any
// account could empty every list on every replica, without limit. Only `status: "success"`
// without `noop` wrote a log entry (ApiTag::processIndividual: `actionlogid`).
import { describe, expect, it } from 'vitest';
import { changeFromWrite } from '../../src/policy/changes.js';

const params = (p: Record<string, string>) => (name: string) => p[name];
const request = params({ action: 'tag', revid: '1', remove: 'mw-undo', token: '+\\' });

describe('action=tag', () => {
  for (const status of ['failure', 'skipped', 'error']) {
    it(`an item with status "${status}": no list`, () => {
      const c = changeFromWrite('tag', request, undefined, { tag: [{ revid: 1, status, errors: [{ code: 'tags-update-remove-not-allowed-one' }] }] });
      expect(c?.tags ?? []).not.toContain('*');
    });
  }

  it('a success that changed nothing (noop): no list', () => {
    const c = changeFromWrite('tag', request, undefined, { tag: [{ revid: 1, status: 'success', noop: true }] });
    expect(c?.tags ?? []).not.toContain('*');
  });

  it('a success with its log entry: every list (the tag lists, the log)', () => {
    const c = changeFromWrite('tag', request, undefined, { tag: [{ revid: 1, status: 'success', actionlogid: 9, added: [], removed: ['x'] }] })!;
    expect(c.tags).toContain('*');
  });
});
