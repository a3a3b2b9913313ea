// Whose session a client holds after an answer (policy/session-users.ts sessionAfterAnswer):
// MediaWiki renews the session id on login, so the session a login request came with is no
// longer anyone's; the one the answer sets is the user's, named by the {prefix}UserName cookie
// the wiki sets with it (CookieSessionProvider) or by the answer itself (a bot password login).
import { describe, expect, it } from 'vitest';
import { identify, identityRules } from '../../src/mediawiki/identity.js';
import { sessionAfterAnswer } from '../../src/policy/session-users.js';
import { parsePhpQuery } from '../../src/mediawiki/php-input.js';

const RULES = identityRules({ cookiePrefix: 'wiki', sessionName: '', sessionJwtCookie: true, secret: Buffer.from('session-user-learned secret') });
const NOW = Date.parse('2026-11-27T12:00:00Z');
const slotOf = (cookie: string) => {
  const id = identify({ cookieHeader: cookie, credentialHeaderValues: [], treatAsUntrusted: false, query: parsePhpQuery(''), clientAddress: undefined }, RULES);
  return id.kind === 'session' ? id.slot : undefined;
};
const after = (requestCookie: string | undefined, setCookies: string[], named?: string) =>
  sessionAfterAnswer(requestCookie === undefined ? {} : { cookie: requestCookie }, setCookies, RULES, 'wiki', named, NOW);

describe('the session an answer leaves its client holding', () => {
  it('a login: the new session, named by the UserName cookie (raw URL encoding decoded)', () => {
    const learned = after('wiki_session=beforelogin0000000000000000000000', [
      'wiki_session=afterlogin00000000000000000000000; path=/; HttpOnly',
      'wikiUserID=17; expires=Sun, 27 Dec 2026 15:32:36 GMT; Max-Age=2592000; path=/; HttpOnly',
      'wikiUserName=Space%20name%20%C3%A9%2B%26; expires=Sun, 27 Dec 2026 15:32:36 GMT; Max-Age=2592000; path=/; HttpOnly',
    ]);
    expect(learned).toEqual({ slot: slotOf('wiki_session=afterlogin00000000000000000000000; wikiUserID=17; wikiUserName=Space+name'), user: 'Space name é+&' });
    expect(learned!.slot).not.toBe(slotOf('wiki_session=beforelogin0000000000000000000000'));
  });

  it('a bot password login sets its own session cookie and no UserName: the name the answer gives', () => {
    const learned = after('wiki_session=tokenfetch000000000000000000000', ['wiki_BPsession=botsession0000000000000000000000; path=/; HttpOnly'], 'Admin');
    expect(learned?.user).toBe('Admin');
    expect(learned?.slot).toBe(slotOf('wiki_session=tokenfetch000000000000000000000; wiki_BPsession=botsession0000000000000000000000'));
  });

  it('an answer that sets no credential cookie, or only deletes them (a logout), leaves nothing to learn', () => {
    expect(after('wiki_session=s0000000000000000000000000000000', ['UseDC=master; Max-Age=10; path=/'], 'LabUser')).toBeUndefined();
    expect(
      after('wiki_session=s0000000000000000000000000000000', ['wiki_session=deleted; expires=Thu, 01 Jan 1970 00:00:01 GMT; Max-Age=0; path=/'], 'LabUser'),
    ).toBeUndefined();
  });

  it('a session set with nobody named (an anonymous session for a login token): nothing learned', () => {
    expect(after(undefined, ['wiki_session=anon0000000000000000000000000000; path=/; HttpOnly'])).toBeUndefined();
  });

  it('the UserName the wiki sets wins over a name the answer gives', () => {
    expect(after(undefined, ['wiki_session=x0000000000000000000000000000000; path=/', 'wikiUserName=LabUser; path=/'], 'Someone')?.user).toBe('LabUser');
  });
});
