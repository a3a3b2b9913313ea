/**
 * Who is asking, from the request's Cookie header, Authorization, query and Treat-as-Untrusted,
 * against what MediaWiki 1.39 decides:
 *  - credentials are CookieSessionProvider::getVaryCookies(): `{prefix}Token`, `{prefix}LoggedOut`,
 *    the session cookie, `forceHTTPS` (+ `sessionJwt` where enabled), looked up in PHP's `$_COOKIE`
 *    (names with `.`/space mangled to `_`, first duplicate wins, names not url-decoded, values
 *    raw-url-decoded), with 'deleted' and '' treated as absent (CookieSessionProvider::getCookie);
 *  - `{prefix}UserID` / `{prefix}UserName` alone authenticate nobody (provideSessionInfo returns
 *    null without a session id or token);
 *  - ApiMain::lacksSameOriginSecurity() (includes/api/ApiMain.php): WebRequest::getVal('callback') !== null,
 *    getVal('origin') === '*', or any Treat-as-Untrusted header → anonymous. getVal() returns the
 *    default (null) for arrays, so `callback[]=x` does not suppress.
 */
import { describe, expect, it } from 'vitest';
import { type Identity, identify, identityRules, isLoginSuppressed } from '../../src/mediawiki/identity.js';
import { parsePhpQuery } from '../../src/mediawiki/php-input.js';

const SECRET = Buffer.from('identity-verdicts secret one');
const RULES = identityRules({
  cookiePrefix: 'wiki',
  sessionName: '',
  sessionJwtCookie: true,
  secret: SECRET,
});
const RULES_NO_JWT = identityRules({
  cookiePrefix: 'wiki',
  sessionName: '',
  sessionJwtCookie: false,
  secret: SECRET,
});

interface Req {
  cookie?: string;
  authorization?: string;
  query?: string;
  treatAsUntrusted?: boolean;
}

function who(req: Req, rules = RULES): Identity {
  return identify(
    {
      cookieHeader: req.cookie,
      credentialHeaderValues: [req.authorization],
      treatAsUntrusted: req.treatAsUntrusted ?? false,
      query: parsePhpQuery(req.query ?? ''),
      clientAddress: undefined,
    },
    rules,
  );
}

type Verdict = 'anonymous' | 'suppressed' | 'session' | 'unsure';

function verdictOf(id: Identity): Verdict {
  if (id.kind === 'anonymous') return id.loginSuppressed ? 'suppressed' : 'anonymous';
  return id.kind;
}

// [what it shows, Cookie header as PHP receives it, MediaWiki's verdict].
const COOKIE_TABLE: Array<[string, string, Verdict]> = [
  ['the session cookie', 'wiki_session=abc', 'session'],
  ["a '.' in the name: PHP makes `wiki.session` into wiki_session", 'wiki.session=abc', 'session'],
  ['a space in the name: PHP makes `wiki session` into wiki_session', 'wiki session=abc', 'session'],
  // MediaWiki reads no session from `wiki_session_`; the credential net still takes it for one
  // (a name that says session): a cache hit lost, never a leak.
  ['a space before `=` makes the name wiki_session_ (the net takes it)', 'wiki_session =abc', 'session'],
  ['leading spaces of a name are dropped', '   wiki_session=abc', 'session'],
  ['no space after `;`', 'foo=1;wiki_session=abc', 'session'],
  ['duplicates: the first wins, and a first `deleted` means absent', 'wiki_session=deleted; wiki_session=abc', 'anonymous'],
  ['duplicates: the first wins', 'wiki_session=abc; wiki_session=deleted', 'session'],
  ["'deleted' is absent", 'wiki_session=deleted', 'anonymous'],
  ['an empty value is absent', 'wiki_session=', 'anonymous'],
  ['no `=` at all is an empty value', 'wiki_session', 'anonymous'],
  ["'deleted' url-encoded is still 'deleted' after raw-url-decoding", 'wiki_session=%64eleted', 'anonymous'],
  ['cookie names are not url-decoded (the net still takes `%77iki_session`)', '%77iki_session=abc', 'session'],
  ['two Cookie header lines, joined by Node', ['foo=1', 'wiki_session=abc'].join('; '), 'session'],
  ['another prefix: the net takes it (another wiki, or an extension)', 'otherwiki_session=abc', 'session'],
  ['another prefix (Token): the net takes it', 'otherwikiToken=abc', 'session'],
  ['the bot-password session (BotPasswordSessionProvider, {prefix}_BPsession)', 'wiki_BPsession=abc', 'session'],
  ['CentralAuth-like names: the net takes them', 'centralauth_Session=abc', 'session'],
  ['{prefix}mwuser-sessionId (set by mediawiki.user in every browser) is harmless', 'wikimwuser-sessionId=abc', 'anonymous'],
  ['its SameSite-legacy twin too', 'wikiss0-mwuser-sessionId=abc', 'anonymous'],
  ['the SameSite-legacy session cookie is a credential', 'ss0-wiki_session=abc', 'session'],
  ['a harmless name alone changes nothing beside a session', 'wikimwuser-sessionId=abc; wiki_session=s', 'session'],
  ['an ordinary cookie without session/token in its name', 'VEE=wikitext; GeoIP=x', 'anonymous'],
  ['wikiToken is a vary cookie', 'wikiToken=t', 'session'],
  ['wikiLoggedOut is a vary cookie', 'wikiLoggedOut=20261120215525', 'session'],
  ['forceHTTPS is a vary cookie', 'forceHTTPS=true', 'session'],
  ['sessionJwt (JWT sessions enabled)', 'sessionJwt=eyJ0', 'session'],
  ['wikiUserID alone authenticates nobody', 'wikiUserID=1', 'anonymous'],
  ['wikiUserName alone authenticates nobody', 'wikiUserName=Admin', 'anonymous'],
  ['wikiUserID + wikiUserName without token or session', 'wikiUserID=1; wikiUserName=Admin', 'anonymous'],
  ['foo + wikiUserName: MediaWiki answers it public (no session id, no UserID: provideSessionInfo returns null)', 'foo=bar; wikiUserName=Bob', 'anonymous'],
  [
    'wikiToken and forceHTTPS among them (vary cookies; MediaWiki deletes the stale set: CookieSessionProvider::unpersistSession)',
    'wikiUserID=1; wikiUserName=Admin; wikiToken=0000; forceHTTPS=true',
    'session',
  ],
  ['array-shaped session cookie: MediaWiki would get an array', 'wiki_session[a]=1', 'unsure'],
  ['array-shaped token', 'wikiToken[]=1', 'unsure'],
  ['array-shaped forceHTTPS', 'forceHTTPS[x]=1', 'unsure'],
  ['array-shaped non-credential is ignored', 'wikiUserID[a]=1', 'anonymous'],
  ['`wiki.session[a]` is wiki_session[a]: unsure', 'wiki.session[a]=1', 'unsure'],
  ['unrelated cookies only', 'foo=bar; _ga=GA1.2.3', 'anonymous'],
];

describe('Cookie header → verdict', () => {
  it.each(COOKIE_TABLE)('%s: %j → %s', (_what, cookie, expected) => {
    expect(verdictOf(who({ cookie }))).toBe(expected);
  });

  it('sessionJwt is a known credential with JWT sessions, and only the net takes it without', () => {
    expect(who({ cookie: 'sessionJwt=eyJ0' })).toMatchObject({ kind: 'session', unknownCredential: false });
    expect(who({ cookie: 'sessionJwt=eyJ0' }, RULES_NO_JWT)).toMatchObject({ kind: 'session', unknownCredential: true });
  });

  it('the net marks what it caught; known providers are not marked', () => {
    expect(who({ cookie: 'wiki_session=abc' })).toMatchObject({ unknownCredential: false });
    expect(who({ cookie: 'wiki_BPsession=abc' })).toMatchObject({ unknownCredential: false });
    expect(who({ cookie: 'someSSOToken=abc' })).toMatchObject({ unknownCredential: true });
  });

  it('operator-named credential cookies (exact and prefix*) and harmless ones', () => {
    const rules = identityRules({
      cookiePrefix: 'wiki',
      sessionName: '',
      sessionJwtCookie: false,
      secret: SECRET,
      credentialCookies: ['centralauth_*', 'siteAuth'],
      harmlessCookies: ['analyticsSession*'],
    });
    expect(who({ cookie: 'centralauth_User=Admin' }, rules)).toMatchObject({ kind: 'session', unknownCredential: false });
    expect(who({ cookie: 'siteAuth=x' }, rules)).toMatchObject({ kind: 'session', unknownCredential: false });
    expect(verdictOf(who({ cookie: 'analyticsSession42=x' }, rules))).toBe('anonymous');
    // The operator's list adds to MediaWiki's own harmless cookie.
    expect(verdictOf(who({ cookie: 'wikimwuser-sessionId=x' }, rules))).toBe('anonymous');
  });

  it('operator-named credential headers', () => {
    const rules = identityRules({
      cookiePrefix: 'wiki',
      sessionName: '',
      sessionJwtCookie: false,
      secret: SECRET,
      credentialHeaders: ['X-Remote-User'],
    });
    const id = identify(
      { cookieHeader: undefined, credentialHeaderValues: [undefined, 'alice'], treatAsUntrusted: false, query: new Map(), clientAddress: undefined },
      rules,
    );
    expect(id.kind).toBe('session');
    expect(rules.credentialHeaders).toEqual(['authorization', 'x-remote-user']);
  });

  it('login suppressed with credentials: anonymous, but it carries them', () => {
    expect(who({ cookie: 'wiki_session=abc', query: 'callback=f' })).toEqual({
      kind: 'anonymous',
      loginSuppressed: true,
      carriesCredentials: true,
    });
    expect(who({ query: 'callback=f' })).toMatchObject({ carriesCredentials: false });
    expect(who({ cookie: 'wikimwuser-sessionId=1', query: 'callback=f' })).toMatchObject({ carriesCredentials: false });
  });

  it('$wgSessionName replaces {prefix}_session', () => {
    const rules = identityRules({
      cookiePrefix: 'wiki',
      sessionName: 'mysess',
      sessionJwtCookie: false,
      secret: SECRET,
    });
    expect(who({ cookie: 'mysess=abc' }, rules)).toMatchObject({ kind: 'session', unknownCredential: false });
    // Not the session cookie any more, but its name still says session: the net takes it.
    expect(who({ cookie: 'wiki_session=abc' }, rules)).toMatchObject({ kind: 'session', unknownCredential: true });
    expect(verdictOf(who({ cookie: 'wikiToken=abc' }, rules))).toBe('session');
  });

  it('no Cookie header, or an empty one', () => {
    expect(verdictOf(who({}))).toBe('anonymous');
    expect(verdictOf(who({ cookie: '' }))).toBe('anonymous');
  });
});

describe('Authorization', () => {
  it('any non-empty Authorization is a credential', () => {
    expect(verdictOf(who({ authorization: 'Bearer abc' }))).toBe('session');
  });
  it('an empty Authorization is none', () => {
    expect(verdictOf(who({ authorization: '' }))).toBe('anonymous');
  });
  it('login suppression wins over Authorization', () => {
    expect(verdictOf(who({ authorization: 'Bearer abc', query: 'origin=*' }))).toBe('suppressed');
  });
});

// [what it shows, query, Treat-as-Untrusted present, verdict for a request holding wiki_session].
const SUPPRESSION_TABLE: Array<[string, string, boolean, Verdict]> = [
  ['callback=x (JSONP)', 'action=query&callback=x', false, 'suppressed'],
  ['callback= (empty string is not null)', 'action=query&callback=', false, 'suppressed'],
  ['callback with no `=`', 'action=query&callback', false, 'suppressed'],
  ['callback[]=x: getVal() returns null for arrays', 'action=query&callback[]=x', false, 'session'],
  ['callback[a]=x: an array too', 'action=query&callback[a]=x', false, 'session'],
  ['origin=*', 'action=query&origin=*', false, 'suppressed'],
  ['origin=%2A decodes to *', 'action=query&origin=%2A', false, 'suppressed'],
  ['origin=https://a is credentialed CORS, not suppressed', 'action=query&origin=https://a', false, 'session'],
  ['origin[]=*: an array', 'action=query&origin[]=*', false, 'session'],
  ['origin=** is not *', 'action=query&origin=**', false, 'session'],
  ['a Treat-as-Untrusted header', 'action=query', true, 'suppressed'],
  ['call.back is PHP`s call_back, not callback', 'action=query&call.back=x', false, 'session'],
  ['last duplicate wins in $_GET: origin=*&origin=https://a', 'action=query&origin=*&origin=https://a', false, 'session'],
  ['last duplicate wins in $_GET: origin=https://a&origin=*', 'action=query&origin=https://a&origin=*', false, 'suppressed'],
];

describe('login suppression (ApiMain::lacksSameOriginSecurity)', () => {
  it.each(SUPPRESSION_TABLE)('%s: %j → %s', (_what, query, treatAsUntrusted, expected) => {
    expect(verdictOf(who({ cookie: 'wiki_session=abc; wikiToken=t', query, treatAsUntrusted }))).toBe(expected);
    expect(isLoginSuppressed({ query: parsePhpQuery(query), treatAsUntrusted })).toBe(expected === 'suppressed');
  });

  it('suppression also wins over an array-shaped credential (MediaWiki never reads it)', () => {
    expect(verdictOf(who({ cookie: 'wiki_session[a]=1', query: 'callback=x' }))).toBe('suppressed');
  });
});

describe('slot and variant', () => {
  function sessionOf(req: Req, rules = RULES): { slot: string; variant: string } {
    const id = who(req, rules);
    if (id.kind !== 'session') throw new Error(`expected a session, got ${id.kind}`);
    return { slot: id.slot, variant: id.variant };
  }

  it('same wiki_session, different wikiToken: same slot, different variant', () => {
    const a = sessionOf({ cookie: 'wiki_session=s1; wikiToken=t1' });
    const b = sessionOf({ cookie: 'wiki_session=s1; wikiToken=t2' });
    expect(a.slot).toBe(b.slot);
    expect(a.variant).not.toBe(b.variant);
  });

  it('wikiUserID/wikiUserName change neither slot nor variant (not credentials)', () => {
    const a = sessionOf({ cookie: 'wiki_session=s1; wikiToken=t1' });
    const b = sessionOf({ cookie: 'wiki_session=s1; wikiUserName=Admin; wikiUserID=1; wikiToken=t1' });
    expect(b).toEqual(a);
  });

  it('different sessions: different slots', () => {
    expect(sessionOf({ cookie: 'wiki_session=s1' }).slot).not.toBe(sessionOf({ cookie: 'wiki_session=s2' }).slot);
  });

  it('the value PHP decodes is what counts: %61bc is abc, but + stays + in cookies', () => {
    expect(sessionOf({ cookie: 'wiki_session=%61bc' })).toEqual(sessionOf({ cookie: 'wiki_session=abc' }));
    expect(sessionOf({ cookie: 'wiki.session=abc' })).toEqual(sessionOf({ cookie: 'wiki_session=abc' }));
    expect(sessionOf({ cookie: 'wiki_session=a+b' }).slot).not.toBe(sessionOf({ cookie: 'wiki_session=a%20b' }).slot);
  });

  it('a duplicate later cookie changes nothing (first wins)', () => {
    expect(sessionOf({ cookie: 'wiki_session=s1; wiki_session=s2' })).toEqual(sessionOf({ cookie: 'wiki_session=s1' }));
  });

  it('raw cookie values never appear in the slot or variant', () => {
    const session = 'RAWSESSIONVALUE0123456789abcdef';
    const token = 'RAWTOKENVALUE0123456789abcdef';
    const id = sessionOf({
      cookie: `wiki_session=${session}; wikiToken=${token}`,
      authorization: 'Bearer RAWAUTHVALUE',
    });
    for (const s of [id.slot, id.variant]) {
      for (const raw of [session, token, 'RAWAUTHVALUE', 'wiki_session', 'wikiToken']) expect(s).not.toContain(raw);
      expect(s).toMatch(/^[A-Za-z0-9_-]{22}$/);
    }
  });

  it('different secrets give different slots and variants', () => {
    const other = identityRules({
      cookiePrefix: 'wiki',
      sessionName: '',
      sessionJwtCookie: true,
      secret: Buffer.from('identity-verdicts secret two'),
    });
    const a = sessionOf({ cookie: 'wiki_session=s1; wikiToken=t1' });
    const b = sessionOf({ cookie: 'wiki_session=s1; wikiToken=t1' }, other);
    expect(a.slot).not.toBe(b.slot);
    expect(a.variant).not.toBe(b.variant);
  });

  it('without a session cookie the slot is keyed on all credentials', () => {
    const a = sessionOf({ cookie: 'wikiToken=t1' });
    const b = sessionOf({ cookie: 'wikiToken=t2' });
    expect(a.slot).not.toBe(b.slot);
  });

  it('name/value framing: moving characters between name and value never collides', () => {
    // `wikiToken=ab` vs `forceHTTPS=ab`: same value, different credential.
    expect(sessionOf({ cookie: 'wikiToken=ab' }).variant).not.toBe(sessionOf({ cookie: 'forceHTTPS=ab' }).variant);
  });
});
