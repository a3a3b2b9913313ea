/**
 * The wiki's Set-Cookie lines on their way to the client (src/mediawiki/set-cookie.ts), against
 * WebResponse::setCookie() (includes/WebResponse.php): a deletion is only sent for a cookie that was in the
 * request's `$_COOKIE` (isset($_COOKIE[$name])), so the gateway drops any other deletion and relays
 * the rest byte for byte. Lines are copied from the captures.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { cookieCredentialKind, identityRules, requestCookieNames } from '../../src/mediawiki/identity.js';
import { type CookieLabel, cookieLabel, normalizeSetCookies } from '../../src/mediawiki/set-cookie.js';

const RULES = identityRules({ cookiePrefix: 'wiki', sessionName: '', sessionJwtCookie: true, secret: Buffer.from('x') });
const NAMES = {
  sessionCookie: 'wiki_session',
  cookiePrefix: 'wiki',
  isCredential: (name: string) => cookieCredentialKind(name, RULES) !== undefined,
};
/** `Date:` of captures 30–32 (Fri, 20 Nov 2026 21:55:24 GMT). */
const NOW = Date.parse('Fri, 20 Nov 2026 21:55:24 GMT');

const DEL = (name: string) => `${name}=deleted; expires=Thu, 01 Jan 1970 00:00:01 GMT; Max-Age=0; path=/; HttpOnly`;

function run(lines: string[], cookieHeader: string | undefined, now = NOW) {
  return normalizeSetCookies(lines, requestCookieNames(cookieHeader), NAMES, now);
}

describe('deletions', () => {
  it('wikiUserID=deleted is dropped when the client did not send wikiUserID', () => {
    const out = run([DEL('wikiUserID')], 'foo=bar');
    expect(out.relay).toEqual([]);
    expect(out.events).toEqual([{ event: 'dropped_deletion', cookie: 'UserID' }]);
  });

  it('wikiUserID=deleted is relayed when the client sent wikiUserID', () => {
    const out = run([DEL('wikiUserID')], 'wikiUserID=1');
    expect(out.relay).toEqual(['wikiUserID=deleted; expires=Thu, 01 Jan 1970 00:00:01 GMT; Max-Age=0; path=/; HttpOnly']);
    expect(out.events).toEqual([{ event: 'relayed_deletion', cookie: 'UserID' }]);
    expect(out.sessionEnded).toBe(false);
  });

  it('no Cookie header: all four unpersistSession() deletions are dropped (CookieSessionProvider::unpersistSession)', () => {
    const out = run([DEL('wiki_session'), DEL('wikiUserID'), DEL('wikiToken'), DEL('forceHTTPS')], undefined);
    expect(out.relay).toEqual([]);
    expect(out.events.map((e) => e.cookie)).toEqual(['session', 'UserID', 'Token', 'forceHTTPS']);
    expect(out.sessionEnded).toBe(false);
  });

  it('30-anon-stale-userid-token-cookies: the three deletions of sent cookies are relayed in order', () => {
    const lines = [DEL('wikiUserID'), DEL('wikiToken'), DEL('forceHTTPS')];
    const out = run(lines, 'wikiUserID=1; wikiUserName=Admin; wikiToken=0000; forceHTTPS=true');
    expect(out.relay).toEqual(lines);
    expect(out.events).toEqual([
      { event: 'relayed_deletion', cookie: 'UserID' },
      { event: 'relayed_deletion', cookie: 'Token' },
      { event: 'relayed_deletion', cookie: 'forceHTTPS' },
    ]);
  });

  it('32-anon-malformed-session-cookie: wiki_session=deleted for a sent session → sessionEnded', () => {
    const out = run([DEL('wiki_session')], 'wiki_session=xyz');
    expect(out.relay).toEqual([DEL('wiki_session')]);
    expect(out.sessionEnded).toBe(true);
    expect(out.sessionStarted).toBe(false);
  });

  it('55-user-logout: wiki_session and wikiUserID deleted, both sent → relayed, sessionEnded', () => {
    const out = run([DEL('wiki_session'), DEL('wikiUserID')], 'wiki_session=57nc4gmfmhrhs3au7q8hpmvtlrfbh6kv; wikiUserName=LabUser; wikiUserID=3');
    expect(out.relay).toEqual([DEL('wiki_session'), DEL('wikiUserID')]);
    expect(out.sessionEnded).toBe(true);
  });

  it('a session cookie sent as `wiki.session` is wiki_session in $_COOKIE: its deletion is relayed', () => {
    const out = run([DEL('wiki_session')], 'wiki.session=xyz');
    expect(out.relay).toEqual([DEL('wiki_session')]);
    expect(out.sessionEnded).toBe(true);
  });

  it('a sent cookie with an empty value is in $_COOKIE: its deletion is relayed', () => {
    expect(run([DEL('wikiToken')], 'wikiToken=').relay).toEqual([DEL('wikiToken')]);
  });

  it('an array-shaped sent cookie is in $_COOKIE too: its deletion is relayed', () => {
    expect(run([DEL('wikiUserID')], 'wikiUserID[a]=1').relay).toEqual([DEL('wikiUserID')]);
  });

  it('a deletion by Max-Age=0 alone (value not "deleted") of an unsent cookie is dropped', () => {
    expect(run(['wikiToken=; Max-Age=0; path=/', 'wikiToken=x; Max-Age=-1'], 'foo=1').relay).toEqual([]);
  });
});

describe('sessions', () => {
  it('31-anon-bogus-session-cookie: a new wiki_session → sessionStarted, relayed', () => {
    const line = 'wiki_session=476hsfb3a9bn9g06ci2gqnurr569o785; path=/; HttpOnly';
    const out = run([line], 'wiki_session=abcdefabcdefabcdefabcdefabcdefab');
    expect(out.sessionStarted).toBe(true);
    expect(out.sessionEnded).toBe(false);
    expect(out.relay).toEqual([line]);
    expect(out.events).toEqual([{ event: 'session_started', cookie: 'session' }]);
  });

  it('33-anon-logintoken: a session for a cookie-less client → sessionStarted', () => {
    const out = run(['wiki_session=1db3df8ho8mu094mhbigpuk6lcfnlsfg; path=/; HttpOnly'], undefined);
    expect(out.sessionStarted).toBe(true);
  });

  it('40-admin-action-login: all four lines relayed byte for byte, one session_started', () => {
    const lines = [
      'wiki_session=ksu15h6dvsk814h9t0q4ebthdogv0uoo; path=/; HttpOnly',
      'wikiUserID=1; expires=Wed, 19 May 2027 21:55:25 GMT; Max-Age=15552000; path=/; HttpOnly',
      'wikiUserName=Admin; expires=Wed, 19 May 2027 21:55:25 GMT; Max-Age=15552000; path=/; HttpOnly',
      'wikiToken=8c2eb295675fa4f4da9a4e05a442ed7c; expires=Wed, 19 May 2027 21:55:25 GMT; Max-Age=15552000; path=/; HttpOnly',
    ];
    const out = run(lines, 'wiki_session=kgic1304sv87gff3949maoucsufjlv8s', Date.parse('Fri, 20 Nov 2026 21:55:25 GMT'));
    expect(out.relay).toEqual(lines);
    expect(out.sessionStarted).toBe(true);
    expect(out.events).toEqual([{ event: 'session_started', cookie: 'session' }]);
  });
});

describe('attributes are relayed byte for byte', () => {
  it('odd spacing, case and extra attributes survive unchanged', () => {
    const lines = [
      'wikiUserID=deleted;expires=Thu, 01 Jan 1970 00:00:01 GMT;Max-Age=0;  path=/;HttpOnly; SameSite=None; Secure',
      'wiki_session=abc;   Path=/w;  Domain=.example.org; secure; httponly; SameSite=Lax',
    ];
    const out = run(lines, 'wikiUserID=1');
    expect(out.relay).toStrictEqual(lines);
  });

  it('74-cdn-admin-create: UseDC / UseCDNCache are relayed unchanged, with no event', () => {
    const lines = [
      'UseDC=master; expires=Fri, 20 Nov 2026 21:55:43 GMT; Max-Age=10; path=/; HttpOnly',
      'UseCDNCache=false; expires=Fri, 20 Nov 2026 21:55:43 GMT; Max-Age=10; path=/; HttpOnly',
    ];
    // `now` = the capture's Date: header.
    const out = run(lines, 'wiki_session=s', Date.parse('Fri, 20 Nov 2026 21:55:33 GMT'));
    expect(out.relay).toStrictEqual(lines);
    expect(out.events).toEqual([]);
  });

  it('Max-Age wins over Expires (RFC 6265 §5.3): `Max-Age=10` with an Expires already past is no deletion', () => {
    // BUG: parseSetCookie() calls a line a deletion when EITHER Max-Age <= 0 OR Expires <= now. The
    // wiki computes Expires from its own clock; with the gateway's clock 20 s ahead, 74-cdn-admin-create's
    // UseDC=master (Max-Age=10: the browser keeps it 10 s from receipt) counts as a deletion of a
    // cookie the client did not send and is dropped, losing MediaWiki's chronology protection.
    const line = 'UseDC=master; expires=Fri, 20 Nov 2026 21:55:43 GMT; Max-Age=10; path=/; HttpOnly';
    const out = run([line], 'wiki_session=s', Date.parse('Fri, 20 Nov 2026 21:55:53 GMT'));
    expect(out.relay).toStrictEqual([line]);
  });
});

describe('labels are bounded', () => {
  const ALLOWED: ReadonlySet<CookieLabel> = new Set<CookieLabel>([
    'session',
    'Token',
    'UserID',
    'UserName',
    'LoggedOut',
    'forceHTTPS',
    'sessionJwt',
    'BPsession',
    'credential',
    'other',
  ]);

  it.each([
    ['wiki_session', 'session'],
    ['wikiToken', 'Token'],
    ['wikiUserID', 'UserID'],
    ['wikiUserName', 'UserName'],
    ['wikiLoggedOut', 'LoggedOut'],
    ['forceHTTPS', 'forceHTTPS'],
    ['sessionJwt', 'sessionJwt'],
    ['UseDC', 'other'],
    ['UseCDNCache', 'other'],
    ['wiki_BPsession', 'BPsession'],
    // The credential net (mediawiki/identity.ts): a name that says token or session is a credential.
    ['otherwikiToken', 'credential'],
    ['wikiTokenX', 'credential'],
    ['wikimwuser-sessionId', 'other'],
    ['centralauth_Token', 'credential'],
    ['', 'other'],
  ])('%j → %s', (name, label) => {
    expect(cookieLabel(name, NAMES)).toBe(label);
  });

  it('any name maps into the closed set', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 40 }), (name) => {
        expect(ALLOWED.has(cookieLabel(name, NAMES))).toBe(true);
      }),
    );
  });

  it('any Set-Cookie line yields only labels of the closed set', () => {
    fc.assert(
      fc.property(fc.array(fc.string({ maxLength: 60 }), { maxLength: 5 }), fc.string({ maxLength: 40 }), (lines, cookie) => {
        const out = run(lines, cookie);
        for (const e of out.events) expect(ALLOWED.has(e.cookie)).toBe(true);
        // Nothing is invented: every relayed line is one of the wiki's, in order.
        let i = 0;
        for (const l of out.relay) {
          while (i < lines.length && lines[i] !== l) i++;
          expect(i).toBeLessThan(lines.length);
          i++;
        }
      }),
    );
  });
});
