/**
 * stripDebuginfo on `action=help&wrap=1` (src/mediawiki/debuginfo/help-wrap.ts): the top-level member, and
 * the toolbar's copy inside the help page that is the JSON string `help.help`. Fixture from a
 * throw-away lab wiki (Debian's MediaWiki 1.39.17, lab/setup.sh --debug, no cookies sent), see
 * test/fixtures/debuginfo/README.md.
 */
import { describe, expect, it } from 'vitest';
import { stripDebuginfo } from '../../src/mediawiki/debuginfo/strip.js';
import { debuginfoFixture, expectNoDebuginfo as assertNoLeak } from '../support/debuginfo-fixtures.js';

const fixture = (name: string): Buffer => debuginfoFixture(`${name}.gz`);

const JSON_TYPE = 'application/json; charset=utf-8';

describe('action=help&wrap=1', () => {
  it('action=help&wrap=1: the top-level member and the toolbar copy inside "help.help" go', () => {
    const on = fixture('help-wrap.json');
    const r = stripDebuginfo(on, JSON_TYPE);
    assertNoLeak(r.body);
    const parsed = JSON.parse(r.body.toString()) as { help: { help: string } };
    expect(parsed.help.help).toContain('<title>MediaWiki API help - LabWiki</title>');
  });
});
