/**
 * vcl_recv + vcl_hash for api.php (src/policy/request.ts): two URLs share a key exactly when PHP's
 * `$_GET` is the same (php_default_treat_data: `&` only, last duplicate wins, `.`/space → `_`,
 * `+` is a space), requesters with different identities never share one, and the probe is added
 * where MediaWiki does not echo it back.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type ApiRequestFacts,
  applicableRule,
  cacheKey,
  canonicalQuery,
  classify,
  type KeyedHeaders,
  modulesOf,
  SMAXAGE_PROBE,
  shouldProbe,
  upstreamTarget,
} from '../../src/policy/request.js';
import { type Identity, identify, identityRules } from '../../src/mediawiki/identity.js';
import { parsePhpQuery } from '../../src/mediawiki/php-input.js';

const API = '/w/api.php';
const ANON: Identity = { kind: 'anonymous', loginSuppressed: false, carriesCredentials: false };
const PLAIN: KeyedHeaders = { treatAsUntrusted: undefined, forwardedProto: 'http', origin: undefined, acceptVariants: undefined };
const RULES = identityRules({
  cookiePrefix: 'wiki',
  sessionName: '',
  sessionJwtCookie: false,
  secret: Buffer.from('k'),
});

function sessionId(cookie: string): Identity {
  return identify({ cookieHeader: cookie, credentialHeaderValues: [], treatAsUntrusted: false, query: new Map(), clientAddress: undefined }, RULES);
}

function key(rawQuery: string, identity: Identity = ANON, headers: KeyedHeaders = PLAIN): string {
  return cacheKey(`${API}?${canonicalQuery(parsePhpQuery(rawQuery))}`, identity, headers);
}

function facts(over: Partial<ApiRequestFacts> & { rawQuery?: string }): ApiRequestFacts {
  return {
    method: 'GET',
    canonicalPath: true,
    ambiguousQuery: false,
    query: parsePhpQuery(over.rawQuery ?? 'action=query&meta=siteinfo&format=json'),
    identity: ANON,
    hasBody: false,
    rule: {},
    ...over,
  };
}

describe('canonicalQuery / cacheKey: same $_GET, same key', () => {
  it.each([
    ['order does not matter', 'a=1&b=2', 'b=2&a=1'],
    ['the last duplicate wins', 'a=1&a=2', 'a=2'],
    ['names are url-decoded', '%61ction=query', 'action=query'],
    ['`+` and %20 are both a space', 'titles=Main+Page', 'titles=Main%20Page'],
    ['`.` in a name becomes `_`', 'a.b=1', 'a_b=1'],
    ['a space in a name becomes `_`', 'a+b=1', 'a_b=1'],
    ['empty tokens are skipped', 'a=1&&b=2&', 'a=1&b=2'],
    ['a name without `=` has the empty value', 'a', 'a='],
    ['%zz stays literal, same as %25zz', 'a=%zz', 'a=%25zz'],
    ['lower- and upper-case hex escapes decode alike', 'a=%c3%a9', 'a=%C3%A9'],
    ['a NUL cuts the name', 'a%00b=1', 'a=1'],
  ])('%s: %j ≡ %j', (_what, x, y) => {
    expect(key(x)).toBe(key(y));
  });
});

describe('canonicalQuery / cacheKey: different $_GET, different key', () => {
  it.each([
    ['`;` is not a separator', 'action=query;list=x', 'action=query&list=x'],
    ['`,` is not a separator', 'a=1,b=2', 'a=1&b=2'],
    ['values are case-sensitive', 'a=X', 'a=x'],
    ['names are case-sensitive', 'A=1', 'a=1'],
    ['a trailing space in a value counts', 'a=1+', 'a=1'],
    ['%2B is a plus, + is a space', 'a=%2B', 'a=+'],
    ['a value containing `&` (encoded) is not two parameters', 'a=1%26b%3D2', 'a=1&b=2'],
    ['a value containing `=` is kept whole', 'a=b=c', 'a=b&c='],
  ])('%s: %j ≢ %j', (_what, x, y) => {
    expect(key(x)).not.toBe(key(y));
  });

  it('canonicalQuery has one spelling per meaning', () => {
    expect(canonicalQuery(parsePhpQuery('b=2&a.x=1&a=3&a=1'))).toBe('a=1&a_x=1&b=2');
  });
});

describe('identities and keyed headers', () => {
  const Q = 'action=query&meta=siteinfo&format=json';

  it('anonymous and a session holder never share a key', () => {
    expect(key(Q, ANON)).not.toBe(key(Q, sessionId('wiki_session=s1')));
  });

  it('two sessions never share a key', () => {
    expect(key(Q, sessionId('wiki_session=s1'))).not.toBe(key(Q, sessionId('wiki_session=s2')));
  });

  it('one session, two credential sets (another wikiToken): different keys', () => {
    expect(key(Q, sessionId('wiki_session=s1; wikiToken=a'))).not.toBe(key(Q, sessionId('wiki_session=s1; wikiToken=b')));
  });

  it('one session, same credentials: same key', () => {
    expect(key(Q, sessionId('wiki_session=s1; wikiUserID=1'))).toBe(key(Q, sessionId('wiki_session=s1')));
  });

  it('Treat-as-Untrusted present vs absent: different keys', () => {
    expect(key(Q, ANON, { ...PLAIN, treatAsUntrusted: '1' })).not.toBe(key(Q, ANON, PLAIN));
  });

  it('Treat-as-Untrusted present but EMPTY vs absent: different keys', () => {
    // BUG: cacheKey() writes `treatAsUntrusted ?? ''`, so an empty header value and no header give
    // the same key. MediaWiki treats them differently: getHeader('Treat-as-Untrusted') !== false is
    // true for '' (login suppressed, answer carries `MediaWiki-Login-Suppressed: true`), and
    // identityFromHeaders() agrees (`!== undefined`). Only the key conflates them.
    expect(key(Q, ANON, { ...PLAIN, treatAsUntrusted: '' })).not.toBe(key(Q, ANON, PLAIN));
  });

  it('X-Forwarded-Proto (effective protocol): different keys', () => {
    expect(key(Q, ANON, { ...PLAIN, forwardedProto: 'https' })).not.toBe(key(Q, ANON, PLAIN));
  });

  it('Origin (passed only when the request has an `origin` parameter): different keys', () => {
    const q = `${Q}&origin=https://a.example`;
    expect(key(q, ANON, { ...PLAIN, origin: 'https://a.example' })).not.toBe(key(q, ANON, { ...PLAIN, origin: 'https://b.example' }));
  });

  it('the key never carries a raw cookie value', () => {
    expect(key(Q, sessionId('wiki_session=RAWSESSIONVALUE'))).not.toContain('RAWSESSIONVALUE');
  });

  it('the key begins with its URL key and a newline, and no URL key holds a newline (the store keeps the URL key as a slice of the key)', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), fc.boolean(), (rawQuery, session) => {
        const urlKey = `${API}?${canonicalQuery(parsePhpQuery(rawQuery))}`;
        expect(urlKey).not.toContain('\n');
        const k = cacheKey(urlKey, session ? sessionId('wiki_session=abc') : ANON, PLAIN);
        expect(k.startsWith(`${urlKey}\n`)).toBe(true);
      }),
    );
    // A hundred property runs take milliseconds, but seconds on a machine as loaded as CI's can be.
  }, 60_000);
});

describe('classify', () => {
  it('a plain GET is looked up', () => {
    expect(classify(facts({}))).toEqual({ verdict: 'lookup' });
  });
  it('HEAD is looked up', () => {
    expect(classify(facts({ method: 'HEAD' }))).toEqual({ verdict: 'lookup' });
  });
  it.each(['POST', 'PUT', 'DELETE', 'OPTIONS', 'PURGE', 'get'])('%s → pass (method)', (method) => {
    expect(classify(facts({ method }))).toEqual({ verdict: 'pass', reason: 'method' });
  });
  it('a GET with a body → pass (request-body)', () => {
    expect(classify(facts({ hasBody: true }))).toEqual({ verdict: 'pass', reason: 'request-body' });
  });
  it('a query that begins with `?` (php -S and Apache disagree on it) is passed', () => {
    expect(classify(facts({ ambiguousQuery: true }))).toEqual({ verdict: 'pass', reason: 'ambiguous-query' });
  });
  it('a non-canonical path → pass (not-canonical-path)', () => {
    expect(classify(facts({ canonicalPath: false }))).toEqual({
      verdict: 'pass',
      reason: 'not-canonical-path',
    });
  });
  it.each(['action=query&titles[]=A&titles[]=B', 'action=query&callback[]=x', 'action[x]=query', 'action=query&a[b][c]=1', 'action=query&a.b[]=1'])(
    'array shape %j → pass (array-params)',
    (rawQuery) => {
      expect(classify(facts({ rawQuery }))).toEqual({ verdict: 'pass', reason: 'array-params' });
    },
  );
  it('`a[` is no array shape for PHP (it is `a_`): looked up', () => {
    expect(classify(facts({ rawQuery: 'action=query&a[=1' }))).toEqual({ verdict: 'lookup' });
  });
  it('array-shaped credentials → pass (credentials-unclear)', () => {
    expect(classify(facts({ identity: sessionId('wiki_session[a]=1') }))).toEqual({
      verdict: 'pass',
      reason: 'credentials-unclear',
    });
  });
  it('a module rule `pass` → pass (module-rule)', () => {
    expect(classify(facts({ rule: { pass: true } }))).toEqual({ verdict: 'pass', reason: 'module-rule' });
  });
  it('method is checked before everything else', () => {
    expect(classify(facts({ method: 'POST', canonicalPath: false, hasBody: true }))).toEqual({
      verdict: 'pass',
      reason: 'method',
    });
  });
});

describe('modulesOf / applicableRule', () => {
  it('action=query with list/prop/meta', () => {
    expect(modulesOf(parsePhpQuery('action=query&list=filearchive|allpages&meta=siteinfo'))).toEqual(['query', 'filearchive', 'allpages', 'siteinfo']);
  });
  it('no action is help', () => {
    expect(modulesOf(parsePhpQuery(''))).toEqual(['help']);
  });
  it('shareAnonymousPrivate only when every named module opted in', () => {
    const rules = { filearchive: { shareAnonymousPrivate: true } };
    expect(applicableRule(['query', 'filearchive'], rules).shareAnonymousPrivate).toBe(true);
    expect(applicableRule(['query', 'filearchive', 'userinfo'], rules).shareAnonymousPrivate).toBe(false);
    expect(applicableRule(['query'], rules).shareAnonymousPrivate).toBe(false);
  });
  it('the smallest ttlSeconds and any pass win', () => {
    const rules = { a: { ttlSeconds: 60 }, b: { ttlSeconds: 30, pass: true } };
    expect(applicableRule(['query', 'a', 'b'], rules)).toEqual({
      pass: true,
      shareAnonymousPrivate: false,
      ttlSeconds: 30,
    });
  });
  it('generator=X runs module X (ApiPageSet), so X is one of the modules', () => {
    // BUG: modulesOf() reads list/prop/meta only. `action=query&generator=allpages` runs allpages,
    // but a `pass` or `ttlSeconds` rule on allpages is not applied to it.
    expect(modulesOf(parsePhpQuery('action=query&generator=allpages&prop=info'))).toContain('allpages');
  });
  it('a multi-value starting with U+001F is split on U+001F (ParamValidator::explodeMultiValue)', () => {
    // BUG: modulesOf() splits on `|` only. MediaWiki runs filearchive AND allpages for this list, the
    // gateway sees one unknown module named "\x1ffilearchive\x1fallpages" (rules on either skipped).
    expect(modulesOf(parsePhpQuery('action=query&list=%1Ffilearchive%1Fallpages'))).toEqual(['query', 'filearchive', 'allpages']);
  });
});

describe('shouldProbe', () => {
  it.each([
    ['format=json', 'action=query&meta=siteinfo&format=json', true],
    ['format=xml', 'action=query&meta=siteinfo&format=xml', true],
    ['format=php', 'action=query&meta=siteinfo&format=php', true],
    ['format omitted (jsonfm HTML)', 'action=query&meta=siteinfo', false],
    ['format=jsonfm', 'action=query&meta=siteinfo&format=jsonfm', false],
    ['format=xmlfm', 'action=query&meta=siteinfo&format=xmlfm', false],
    ['format=rawfm', 'action=query&meta=siteinfo&format=rawfm', false],
    ['smaxage present', 'action=query&meta=siteinfo&format=json&smaxage=60', false],
    ['smaxage present but empty', 'action=query&meta=siteinfo&format=json&smaxage=', false],
    ['smaxage spelled s%6Daxage', 'action=query&meta=siteinfo&format=json&s%6Daxage=60', false],
    ['maxage alone is no smaxage', 'action=query&meta=siteinfo&format=json&maxage=60', true],
    ['no parameters at all (help HTML)', '', false],
  ])('%s → %s', (_what, rawQuery, expected) => {
    expect(shouldProbe(parsePhpQuery(rawQuery))).toBe(expected);
  });

  it('an unknown format (format=JSON) is rendered by jsonfm, which echoes the URL → no probe', () => {
    // BUG: isHtmlFormat() only knows the four *fm names. For an unregistered format ApiMain's
    // createErrorPrinter() falls back to API_DEFAULT_FORMAT (jsonfm), whose HTML header links to
    // the request's own $_GET (ApiFormatBase::closePrinter(), getFullRequestURL()) — so `smaxage=4242424` is shown to the client.
    expect(shouldProbe(parsePhpQuery('action=query&meta=siteinfo&format=JSON'))).toBe(false);
  });
});

describe('upstreamTarget', () => {
  it('appends &smaxage=<probe>', () => {
    expect(upstreamTarget(API, 'action=query&format=json', true)).toBe(`/w/api.php?action=query&format=json&smaxage=${SMAXAGE_PROBE}`);
  });
  it('an empty query gets no stray `&`', () => {
    expect(upstreamTarget(API, '', true)).toBe(`/w/api.php?smaxage=${SMAXAGE_PROBE}`);
  });
  it('a query ending with `&` gets no second `&`', () => {
    expect(upstreamTarget(API, 'format=json&', true)).toBe(`/w/api.php?format=json&smaxage=${SMAXAGE_PROBE}`);
  });
  it('without the probe the client target is unchanged, byte for byte', () => {
    expect(upstreamTarget(API, 'b=2&a=%41;c', false)).toBe('/w/api.php?b=2&a=%41;c');
    expect(upstreamTarget(API, '', false)).toBe('/w/api.php');
  });
  it('the appended probe is what PHP reads as smaxage', () => {
    const raw = 'action=query&meta=siteinfo&format=json&x=%';
    const target = upstreamTarget(API, raw, true);
    const sent = parsePhpQuery(target.slice(target.indexOf('?') + 1));
    expect(sent.get('smaxage')).toBe(String(SMAXAGE_PROBE));
    expect(sent.get('x')).toBe('%');
  });
});

describe('built-in module rules', () => {
  it('list=random and generator=random are passed (MediaWiki lets caches share them: a stored one was not random); the operator`s rule wins', () => {
    expect(applicableRule(['query', 'random'], {}).pass).toBe(true);
    expect(applicableRule(['query', 'random', 'info'], {}).pass).toBe(true);
    expect(applicableRule(['query', 'random'], { random: { pass: false, ttlSeconds: 5 } })).toMatchObject({ pass: false, ttlSeconds: 5 });
    expect(applicableRule(['query', 'allpages'], {}).pass).toBe(false);
    expect(applicableRule(['query', 'constructor'], {}).pass).toBe(false);
  });
});
