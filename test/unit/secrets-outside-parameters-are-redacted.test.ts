// Secrets that are not a parameter's value (docs/SECURITY.md, class 29): the e-mail
// confirmation links MediaWiki mails carry their token as a sub-page (the access log wrote it in
// clear), a Redis URL may carry its password as a query parameter (ioredis takes it; the logged
// configuration wrote it in clear), and entries holding tokens or a secret parameter lay in
// Redis in clear, the URL under a key name.
import { describe, expect, it } from 'vitest';
import { loggedUrl, REDACTED, redactSubpages } from '../../src/observe/access-log.js';
import { mayLeaveTheProcess } from '../../src/policy/policy.js';
import { redactUrlPassword } from '../../src/config/config.js';

const TOKEN = '0123456789abcdef0123456789abcdef';

describe('the token of an e-mail link, in the path or the title', () => {
  it.each([
    [`/w/index.php/Special:ConfirmEmail/${TOKEN}`, `/w/index.php/Special:ConfirmEmail/${REDACTED}`],
    [`/wiki/Special:InvalidateEmail/${TOKEN}`, `/wiki/Special:InvalidateEmail/${REDACTED}`],
    [`/w/index.php?title=Special:ConfirmEmail/${TOKEN}&x=1`, `/w/index.php?title=Special:ConfirmEmail/${REDACTED}&x=1`],
    [`/w/index.php?title=Special%3AConfirmEmail%2F${TOKEN}`, `/w/index.php?title=Special%3AConfirmEmail%2F${REDACTED}`],
    [`/wiki/Spezial:E-Mail_best%C3%A4tigen/${TOKEN}`, `/wiki/Spezial:E-Mail_best%C3%A4tigen/${REDACTED}`],
  ])('%s', (target, logged) => {
    expect(loggedUrl(target)).toBe(logged);
    expect(redactSubpages(target)).not.toContain(TOKEN);
  });

  it('leaves other titles and paths as received', () => {
    for (const target of [
      '/wiki/Main_Page',
      '/w/index.php?title=Special:ConfirmEmail',
      '/wiki/Deadbeef/cafe',
      `/wiki/Page_${TOKEN}`,
      '/w/api.php?action=query&titles=ConfirmEmail',
    ])
      expect(redactSubpages(target)).toBe(target);
  });
});

describe('the logged Redis URL', () => {
  it('redacts a password in the user-info part and in the query', () => {
    expect(redactUrlPassword('redis://:hunter2@127.0.0.1:6379/0')).not.toContain('hunter2');
    expect(redactUrlPassword('redis://127.0.0.1:46379/0?password=hunter2secret')).not.toContain('hunter2secret');
    expect(redactUrlPassword('redis://127.0.0.1:46379/0?password=hunter2secret')).toContain('password=REDACTED');
    expect(redactUrlPassword('redis://127.0.0.1:6379/2?db=2')).toBe('redis://127.0.0.1:6379/2?db=2');
  });
});

describe('what may be written to Redis', () => {
  it('not an entry carrying tokens, nor one whose URL holds a secret parameter', () => {
    expect(mayLeaveTheProcess({ modules: ['query', 'userinfo'], urlKey: '/w/api.php?action=query&format=json&meta=userinfo' })).toBe(true);
    expect(mayLeaveTheProcess({ modules: ['query', 'userinfo', 'tokens'], urlKey: '/w/api.php?action=query&format=json&meta=userinfo%7Ctokens' })).toBe(false);
    expect(mayLeaveTheProcess({ modules: ['query', 'watchlist'], urlKey: '/w/api.php?action=query&list=watchlist&wlowner=Admin&wltoken=Secret0123' })).toBe(
      false,
    );
    expect(mayLeaveTheProcess({ modules: ['feedwatchlist'], urlKey: '/w/api.php?action=feedwatchlist&wltoken%00=Secret0123' })).toBe(false);
  });
});
