// The access log's URL keeps every parameter name and value as received except the values of
// parameters that carry credentials: MediaWiki's tokens (`token`, `*token`), passwords
// (`lgpassword`, `password`, `retype`), OAuth's `oauth_*`, and anything named like a secret.
// Names are read as PHP reads them, so an encoded name does not slip through.
import { describe, expect, it } from 'vitest';
import { loggedUrl, MAX_URL_CHARS, parameterName, REDACTED, redactQuery } from '../../src/observe/access-log.js';

describe('redacting credentials in the logged URL', () => {
  it.each([
    ['token=abc%2B%5C', `token=${REDACTED}`],
    ['action=edit&title=A&text=x&token=d3adb33f%2B%5C', `action=edit&title=A&text=x&token=${REDACTED}`],
    ['action=login&lgname=Bob&lgpassword=hunter2&lgtoken=123%2B%5C', `action=login&lgname=Bob&lgpassword=${REDACTED}&lgtoken=${REDACTED}`],
    [
      'action=clientlogin&username=Bob&password=p&logintoken=t&loginreturnurl=http://x/',
      `action=clientlogin&username=Bob&password=${REDACTED}&logintoken=${REDACTED}&loginreturnurl=http://x/`,
    ],
    ['action=createaccount&password=p&retype=p&createtoken=t', `action=createaccount&password=${REDACTED}&retype=${REDACTED}&createtoken=${REDACTED}`],
    ['action=feedwatchlist&wlowner=Bob&wltoken=secret', `action=feedwatchlist&wlowner=Bob&wltoken=${REDACTED}`],
    ['csrftoken=a&centralauthtoken=b&OATHToken=c', `csrftoken=${REDACTED}&centralauthtoken=${REDACTED}&OATHToken=${REDACTED}`],
    [
      'oauth_consumer_key=k&oauth_token=t&oauth_signature=s&oauth_nonce=n',
      `oauth_consumer_key=${REDACTED}&oauth_token=${REDACTED}&oauth_signature=${REDACTED}&oauth_nonce=${REDACTED}`,
    ],
    [
      'access_token=a&api_key=b&client_secret=c&newpassword=d',
      `access_token=${REDACTED}&api_key=${REDACTED}&client_secret=${REDACTED}&newpassword=${REDACTED}`,
    ],
  ])('%s', (query, expected) => {
    expect(redactQuery(query)).toBe(expected);
  });

  it('reads names as PHP does: encoded, with + or . for _, with [] or leading spaces', () => {
    expect(redactQuery('lg%70assword=x')).toBe(`lg%70assword=${REDACTED}`);
    expect(redactQuery('TOKEN=x&Token=y')).toBe(`TOKEN=${REDACTED}&Token=${REDACTED}`);
    expect(redactQuery('token[]=x&token[a]=y')).toBe(`token[]=${REDACTED}&token[a]=${REDACTED}`);
    expect(redactQuery('oauth.token=x&oauth+token=y&+token=z')).toBe(`oauth.token=${REDACTED}&oauth+token=${REDACTED}&+token=${REDACTED}`);
    expect(parameterName('%20lg.password[0]')).toBe('lg_password');
  });

  it('reads a name as PHP does up to a NUL (wltoken%00 reaches MediaWiki as wltoken)', () => {
    expect(redactQuery('action=feedwatchlist&wltoken%00=SECRETPW5&wlowner=Admin')).toBe(`action=feedwatchlist&wltoken%00=${REDACTED}&wlowner=Admin`);
    expect(redactQuery('password%00x=hunter2')).toBe(`password%00x=${REDACTED}`);
    expect(parameterName('lgtoken%00junk')).toBe('lgtoken');
  });

  it('leaves everything else as received, byte for byte', () => {
    for (const query of [
      '',
      'action=query&meta=siteinfo&format=json',
      'action=query&meta=tokens&type=csrf|login', // asks for tokens, carries none
      'action=query&list=categorymembers&cmtitle=Category:Tokens&cmstartsortkeyprefix=pass',
      'action=query&titles=Caf%C3%A9&prop=info&redirects',
      'a=1&&b&=c&token', // no value to redact
    ]) {
      expect(redactQuery(query)).toBe(query);
    }
  });

  it('logs the path, and the query redacted; a long URL is cut', () => {
    expect(loggedUrl('/w/api.php?action=logout&token=abc')).toBe(`/w/api.php?action=logout&token=${REDACTED}`);
    expect(loggedUrl('/wiki/Main_Page')).toBe('/wiki/Main_Page');
    const long = loggedUrl(`/w/api.php?token=secret&text=${'x'.repeat(10_000)}`);
    expect(long.length).toBe(MAX_URL_CHARS + 1);
    expect(long).toMatch(/…$/);
    expect(long).not.toContain('secret');
  });
});
