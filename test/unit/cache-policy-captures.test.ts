/**
 * The storage verdict for every recorded answer of the MediaWiki 1.39 lab that bears on caching
 * (one test per recorded request, named by its number and the request it made).
 *
 * Each test feeds evaluateAnswer() the answer the wiki gives to the GATEWAY's request:
 *  - where the client sent `smaxage` (or used an HTML format) the gateway adds no probe, so the
 *    answer is the capture's literal Cache-Control / Vary / Expires / Set-Cookie /
 *    MediaWiki-API-Error lines;
 *  - where the gateway adds `smaxage=SMAXAGE_PROBE` (shouldProbe), the answer is built from
 *    ApiMain::sendCacheHeaders() (includes/api/ApiMain.php) and the test says how. The probe changes
 *    nothing for `private` answers, errors, a-p-u-p answers to a persisted session, or a module's
 *    own setCacheMaxAge() (it wins over the parameter, row 83 below). It changes a public answer:
 *    s-maxage ← probe, max-age ← maxage param (0), "not both 0" → `s-maxage=P, max-age=0, public`
 *    and `Expires:` Unix time 1 (min(P, 0) = 0). For those rows the test also checks that
 *    unprobedCacheHeaders() gives the client exactly the capture's Cache-Control and Expires.
 *
 * The requester is what identify() makes of the capture's Cookie names (dummy values), its query
 * and its Treat-as-Untrusted header. TTLs are exact: ttlJitterRatio 0 and random() = 0.
 *
 * Rows left out: 29b, 73, 73b (index.php, never served by this path), 60–67 (debuginfo: decided
 * by the caller once the body is read, not by evaluateAnswer), 79 (PURGE), and 72, 75, 76, 77
 * (X-Forwarded-For resolution: `meta=userinfo` with the same `private, must-revalidate,
 * max-age=0` and no Vary as 27, which stands for them here).
 */
import { describe, expect, it } from 'vitest';
import { evaluateAnswer, inferMode, type ResponseVerdict, type TtlSettings, unprobedCacheHeaders } from '../../src/policy/policy.js';
import { applicableRule, type Classification, classify, modulesOf, SMAXAGE_PROBE, shouldProbe } from '../../src/policy/request.js';
import type { ModuleRule } from '../../src/config/config.js';
import { type Identity, identify, identityRules } from '../../src/mediawiki/identity.js';
import { parsePhpQuery } from '../../src/mediawiki/php-input.js';
import { AnswerPolicy } from '../../src/policy/answer-policy.js';

const RULES = identityRules({
  cookiePrefix: 'wiki',
  sessionName: '',
  sessionJwtCookie: true,
  secret: Buffer.from('cache-policy-captures secret'),
});
const TTL: TtlSettings = {
  ttlPublicSeconds: 300,
  ttlSessionSeconds: 120,
  ttlMaxSeconds: 86_400,
  ttlJitterRatio: 0,
};
const ZERO = (): number => 0;

// Literal header values, copied from the captures.
const PRIV0 = 'private, must-revalidate, max-age=0';
const PRIV60 = 'private, must-revalidate, max-age=60';
const PUB60 = 's-maxage=60, max-age=60, public';
const VARY_PUB = 'Accept-Encoding, Treat-as-Untrusted, Cookie';
const EPOCH = 'Thu, 01 Jan 1970 00:00:00 GMT';
const EPOCH1 = 'Thu, 01 Jan 1970 00:00:01 GMT';
const COOKIE_REWRITE = 'private, max-age=0, s-maxage=0';
/** The public answer to a probed request without maxage (ApiMain::sendCacheHeaders(), constructed). */
const PROBED_PUBLIC = `s-maxage=${SMAXAGE_PROBE}, max-age=0, public`;

// The capture's cookie names with dummy values (jar/admin.jar, jar/user.jar, jar/anon.jar).
const ADMIN = 'wiki_session=adminsessionadminsessionadminsess; wikiUserName=Admin; wikiUserID=1; wikiToken=admintoken';
const USER = 'wiki_session=usersessionusersessionusersessi; wikiUserName=LabUser; wikiUserID=3';
const ANON_SESSION = 'wiki_session=anonsessionanonsessionanonsessi';

type Lines = ReadonlyArray<readonly [string, string]>;

interface Exchange {
  readonly method?: 'GET' | 'HEAD' | 'POST';
  /** The raw query string of the capture's request. */
  readonly query: string;
  readonly cookie?: string;
  readonly treatAsUntrusted?: boolean;
  /** Whether the gateway adds the smaxage probe for this query (checked against shouldProbe). */
  readonly probed: boolean;
  /** Who identify() must find (checked). */
  readonly requester: Identity['kind'];
  /** The wiki's answer to the gateway's request, header lines as sent. */
  readonly answer: Lines;
  readonly rule?: ModuleRule;
}

interface Outcome {
  readonly identity: Identity;
  readonly verdict: ResponseVerdict;
  readonly classification: Classification;
  readonly client: { cacheControl: string | undefined; expires: string | undefined };
}

function run(x: Exchange): Outcome {
  const query = parsePhpQuery(x.query);
  const identity = identify(
    {
      cookieHeader: x.cookie,
      credentialHeaderValues: [],
      treatAsUntrusted: x.treatAsUntrusted ?? false,
      query,
      clientAddress: undefined,
    },
    RULES,
  );
  expect(identity.kind, 'requester').toBe(x.requester);
  expect(shouldProbe(query), 'probe').toBe(x.probed);
  const headers: Record<string, string | string[]> = {};
  const setCookies: string[] = [];
  for (const [name, value] of x.answer) {
    const key = name.toLowerCase();
    if (key === 'set-cookie') setCookies.push(value);
    else headers[key] = value;
  }
  if (setCookies.length > 0) headers['set-cookie'] = setCookies;
  const rule = x.rule ?? applicableRule(modulesOf(query), {});
  const verdict = evaluateAnswer({ status: 200, headers }, identity, rule, TTL, ZERO, query.has('origin'));
  // The policy object the flow asks (answer-policy.ts) says the same from the same headers.
  const settings = { ...TTL, ttlClockSeconds: 5, maxEntryBytes: 1_048_576 };
  const policy = new AnswerPolicy(
    { status: 200, headers },
    { requester: identity, rule, probed: x.probed, path: 'store', defaults: TTL, settings, random: ZERO },
  );
  expect(policy.storable(), 'the policy object').toEqual(verdict);
  const classification = classify({
    method: x.method ?? 'GET',
    canonicalPath: true,
    ambiguousQuery: false,
    query,
    identity,
    hasBody: x.method === 'POST',
    rule,
  });
  const cc = headers['cache-control'] as string | undefined;
  const expires = headers['expires'] as string | undefined;
  const client = x.probed ? unprobedCacheHeaders(cc, expires) : { cacheControl: cc, expires };
  return { identity, verdict, classification, client };
}

const shared = (mode: string, seconds: number) => ({
  store: true,
  tier: 'shared',
  mode,
  ttlMs: seconds * 1000,
});
const session = (mode: string, seconds: number) => ({
  store: true,
  tier: 'session',
  mode,
  ttlMs: seconds * 1000,
});
const notStored = (reason: string, mode: string) => ({ store: false, reason, mode });

describe('anonymous captures 01–39', () => {
  it('01-anon-filearchive: private module, anonymous → not stored (private-anonymous)', () => {
    // Probed; `private` ignores the smaxage parameter, so the answer is the capture's.
    const r = run({
      query: 'action=query&list=filearchive&format=json',
      probed: true,
      requester: 'anonymous',
      answer: [['Cache-Control', PRIV0]],
    });
    expect(r.verdict).toEqual(notStored('private-anonymous', 'private'));
    expect(r.client).toEqual({ cacheControl: PRIV0, expires: undefined });
  });

  it('01-anon-filearchive (filearchive opted in with shareAnonymousPrivate): shared, operator TTL', () => {
    const r = run({
      query: 'action=query&list=filearchive&format=json',
      probed: true,
      requester: 'anonymous',
      answer: [['Cache-Control', PRIV0]],
      rule: applicableRule(['query', 'filearchive'], { filearchive: { shareAnonymousPrivate: true } }),
    });
    expect(r.verdict).toEqual(shared('private', 300));
  });

  it('02-anon-filearchive-maxage: private max-age=60, anonymous → not stored (private-anonymous)', () => {
    const r = run({
      query: 'action=query&list=filearchive&format=json&maxage=60&smaxage=60',
      probed: false,
      requester: 'anonymous',
      answer: [['Cache-Control', PRIV60]],
    });
    expect(r.verdict).toEqual(notStored('private-anonymous', 'private'));
  });

  it('03-anon-filearchive-faprop-description: permissiondenied → not stored (api-error)', () => {
    // Probed; errors are private whatever the parameters (ApiMain::handleException).
    const r = run({
      query: 'action=query&list=filearchive&faprop=description&format=json',
      probed: true,
      requester: 'anonymous',
      answer: [
        ['MediaWiki-API-Error', 'permissiondenied'],
        ['Cache-Control', PRIV0],
      ],
    });
    expect(r.verdict).toEqual(notStored('api-error', 'private'));
    expect(r.client).toEqual({ cacheControl: PRIV0, expires: undefined });
  });

  it('04-anon-siteinfo: probed answer is public → shared, operator TTL; client gets priv0, no Expires', () => {
    // Constructed: a-p-u-p, no persisted session → public branch; s-maxage=probe, max-age=0.
    const r = run({
      query: 'action=query&meta=siteinfo&format=json',
      probed: true,
      requester: 'anonymous',
      answer: [
        ['Vary', VARY_PUB],
        ['Expires', EPOCH1],
        ['Cache-Control', PROBED_PUBLIC],
      ],
    });
    expect(r.verdict).toEqual(shared('public', 300));
    expect(r.client).toEqual({ cacheControl: PRIV0, expires: undefined });
  });

  it('05-anon-siteinfo-maxage: public, shared, TTL from s-maxage', () => {
    const r = run({
      query: 'action=query&meta=siteinfo&format=json&maxage=60&smaxage=60',
      probed: false,
      requester: 'anonymous',
      answer: [
        ['Vary', VARY_PUB],
        ['Expires', 'Fri, 20 Nov 2026 21:56:19 GMT'],
        ['Cache-Control', PUB60],
      ],
    });
    expect(r.verdict).toEqual(shared('public', 60));
  });

  it('06-anon-siteinfo-smaxage-only: public with max-age=0, shared, TTL from s-maxage', () => {
    const r = run({
      query: 'action=query&meta=siteinfo&format=json&smaxage=60',
      probed: false,
      requester: 'anonymous',
      answer: [
        ['Vary', VARY_PUB],
        ['Expires', EPOCH1],
        ['Cache-Control', 's-maxage=60, max-age=0, public'],
      ],
    });
    expect(r.verdict).toEqual(shared('public', 60));
  });

  it('07-anon-siteinfo-uselang-user: probed answer is public → shared, operator TTL; client gets priv0', () => {
    // Constructed as 04: uselang=user downgrades to a-p-u-p, which is public for an anonymous requester.
    const r = run({
      query: 'action=query&meta=siteinfo&format=json&uselang=user',
      probed: true,
      requester: 'anonymous',
      answer: [
        ['Vary', VARY_PUB],
        ['Expires', EPOCH1],
        ['Cache-Control', PROBED_PUBLIC],
      ],
    });
    expect(r.verdict).toEqual(shared('public', 300));
    expect(r.client).toEqual({ cacheControl: PRIV0, expires: undefined });
  });

  it('08-anon-siteinfo-uselang-user-maxage: public, shared, TTL from s-maxage', () => {
    const r = run({
      query: 'action=query&meta=siteinfo&format=json&uselang=user&maxage=60&smaxage=60',
      probed: false,
      requester: 'anonymous',
      answer: [
        ['Vary', VARY_PUB],
        ['Expires', 'Fri, 20 Nov 2026 21:56:20 GMT'],
        ['Cache-Control', PUB60],
      ],
    });
    expect(r.verdict).toEqual(shared('public', 60));
  });

  it('09-anon-siteinfo-uselang-de-maxage: public, shared, TTL from s-maxage', () => {
    const r = run({
      query: 'action=query&meta=siteinfo&format=json&uselang=de&maxage=60&smaxage=60',
      probed: false,
      requester: 'anonymous',
      answer: [
        ['Vary', VARY_PUB],
        ['Expires', 'Fri, 20 Nov 2026 21:56:20 GMT'],
        ['Cache-Control', PUB60],
      ],
    });
    expect(r.verdict).toEqual(shared('public', 60));
  });

  it('10-anon-siteinfo-no-format-html: HTML, not probed, priv0 + Vary → not stored (zero-ttl)', () => {
    const r = run({
      query: 'action=query&meta=siteinfo',
      probed: false,
      requester: 'anonymous',
      answer: [
        ['Expires', EPOCH],
        ['Vary', VARY_PUB],
        ['Cache-Control', PRIV0],
      ],
    });
    expect(r.verdict).toEqual(notStored('zero-ttl', 'anon-public-user-private'));
  });

  it('11-anon-siteinfo-no-format-html-maxage: HTML with maxage/smaxage is public → shared, TTL 60', () => {
    const r = run({
      query: 'action=query&meta=siteinfo&maxage=60&smaxage=60',
      probed: false,
      requester: 'anonymous',
      answer: [
        ['Vary', VARY_PUB],
        ['Expires', 'Fri, 20 Nov 2026 21:56:20 GMT'],
        ['Cache-Control', PUB60],
      ],
    });
    expect(r.verdict).toEqual(shared('public', 60));
  });

  it('12-anon-unknown-action: badvalue → not stored (api-error)', () => {
    const r = run({
      query: 'action=nosuch&format=json',
      probed: true,
      requester: 'anonymous',
      answer: [
        ['MediaWiki-API-Error', 'badvalue'],
        ['Cache-Control', PRIV0],
      ],
    });
    expect(r.verdict).toEqual(notStored('api-error', 'private'));
    expect(r.client).toEqual({ cacheControl: PRIV0, expires: undefined });
  });

  it('13-anon-unknown-action-fv2: badvalue → not stored (api-error)', () => {
    const r = run({
      query: 'action=nosuch&format=json&formatversion=2',
      probed: true,
      requester: 'anonymous',
      answer: [
        ['MediaWiki-API-Error', 'badvalue'],
        ['Cache-Control', PRIV0],
      ],
    });
    expect(r.verdict).toEqual(notStored('api-error', 'private'));
    expect(r.client).toEqual({ cacheControl: PRIV0, expires: undefined });
  });

  it('14-anon-bad-param-value: badinteger → not stored (api-error)', () => {
    const r = run({
      query: 'action=query&list=filearchive&falimit=abc&format=json',
      probed: true,
      requester: 'anonymous',
      answer: [
        ['MediaWiki-API-Error', 'badinteger'],
        ['Cache-Control', PRIV0],
      ],
    });
    expect(r.verdict).toEqual(notStored('api-error', 'private'));
    expect(r.client).toEqual({ cacheControl: PRIV0, expires: undefined });
  });

  it('15-anon-unrecognized-param: a warning is no error; probed answer public → shared, operator TTL', () => {
    // Constructed as 04 (the capture has Vary, so siteinfo ran in a-p-u-p mode).
    const r = run({
      query: 'action=query&meta=siteinfo&bogus=1&format=json',
      probed: true,
      requester: 'anonymous',
      answer: [
        ['Vary', VARY_PUB],
        ['Expires', EPOCH1],
        ['Cache-Control', PROBED_PUBLIC],
      ],
    });
    expect(r.verdict).toEqual(shared('public', 300));
    expect(r.client).toEqual({ cacheControl: PRIV0, expires: undefined });
  });

  it('16-anon-bad-list-value: unknown list is a warning; probed answer public → shared, operator TTL', () => {
    // Constructed as 04: no submodule ran, ApiPageSet's 'public' is downgraded by uselang=user.
    const r = run({
      query: 'action=query&list=nosuchlist&format=json',
      probed: true,
      requester: 'anonymous',
      answer: [
        ['Vary', VARY_PUB],
        ['Expires', EPOCH1],
        ['Cache-Control', PROBED_PUBLIC],
      ],
    });
    expect(r.verdict).toEqual(shared('public', 300));
    expect(r.client).toEqual({ cacheControl: PRIV0, expires: undefined });
  });

  it('17-anon-siteinfo-fv2: public, shared, TTL from s-maxage', () => {
    const r = run({
      query: 'action=query&meta=siteinfo&format=json&formatversion=2&maxage=60&smaxage=60',
      probed: false,
      requester: 'anonymous',
      answer: [
        ['Vary', VARY_PUB],
        ['Expires', 'Fri, 20 Nov 2026 21:56:22 GMT'],
        ['Cache-Control', PUB60],
      ],
    });
    expect(r.verdict).toEqual(shared('public', 60));
  });

  it('18-anon-filearchive-fv2: private, anonymous → not stored (private-anonymous)', () => {
    const r = run({
      query: 'action=query&list=filearchive&format=json&formatversion=2',
      probed: true,
      requester: 'anonymous',
      answer: [['Cache-Control', PRIV0]],
    });
    expect(r.verdict).toEqual(notStored('private-anonymous', 'private'));
    expect(r.client).toEqual({ cacheControl: PRIV0, expires: undefined });
  });

  it('19-anon-post-siteinfo: POST is never looked up or stored, even when public (pass: method)', () => {
    // The parameters travel in the body; the URL has no query.
    const r = run({
      method: 'POST',
      query: '',
      probed: false,
      requester: 'anonymous',
      answer: [
        ['Vary', VARY_PUB],
        ['Expires', 'Fri, 20 Nov 2026 21:56:22 GMT'],
        ['Cache-Control', PUB60],
      ],
    });
    expect(r.classification).toEqual({ verdict: 'pass', reason: 'method' });
  });

  it('20-anon-head-siteinfo: HEAD is looked up; its (GET) answer is public → shared, TTL 60', () => {
    const r = run({
      method: 'HEAD',
      query: 'action=query&meta=siteinfo&format=json&maxage=60&smaxage=60',
      probed: false,
      requester: 'anonymous',
      answer: [
        ['Vary', VARY_PUB],
        ['Expires', 'Fri, 20 Nov 2026 21:56:22 GMT'],
        ['Cache-Control', PUB60],
      ],
    });
    expect(r.classification).toEqual({ verdict: 'lookup' });
    expect(r.verdict).toEqual(shared('public', 60));
  });

  it('21-anon-head-unknown-action: badvalue → not stored (api-error)', () => {
    const r = run({
      method: 'HEAD',
      query: 'action=nosuch&format=json',
      probed: true,
      requester: 'anonymous',
      answer: [
        ['MediaWiki-API-Error', 'badvalue'],
        ['Cache-Control', PRIV0],
      ],
    });
    expect(r.verdict).toEqual(notStored('api-error', 'private'));
    expect(r.client).toEqual({ cacheControl: PRIV0, expires: undefined });
  });

  it('22-anon-no-params: help HTML, not probed, priv0 + Vary Cookie → not stored (zero-ttl)', () => {
    const r = run({
      query: '',
      probed: false,
      requester: 'anonymous',
      answer: [
        ['Vary', 'Accept-Encoding, Cookie'],
        ['Expires', EPOCH],
        ['Cache-Control', PRIV0],
      ],
    });
    expect(r.verdict).toEqual(notStored('zero-ttl', 'anon-public-user-private'));
  });

  it('23-anon-errorformat-plaintext: badvalue → not stored (api-error)', () => {
    const r = run({
      query: 'action=nosuch&format=json&errorformat=plaintext',
      probed: true,
      requester: 'anonymous',
      answer: [
        ['MediaWiki-API-Error', 'badvalue'],
        ['Cache-Control', PRIV0],
      ],
    });
    expect(r.verdict).toEqual(notStored('api-error', 'private'));
    expect(r.client).toEqual({ cacheControl: PRIV0, expires: undefined });
  });

  it('24-anon-post-edit-no-token: POST → pass (method)', () => {
    const r = run({
      method: 'POST',
      query: '',
      probed: false,
      requester: 'anonymous',
      answer: [
        ['MediaWiki-API-Error', 'missingparam'],
        ['Cache-Control', PRIV0],
      ],
    });
    expect(r.classification).toEqual({ verdict: 'pass', reason: 'method' });
  });

  it('25-anon-get-edit: missingparam → not stored (api-error)', () => {
    const r = run({
      query: 'action=edit&title=Sandbox&text=x&format=json',
      probed: true,
      requester: 'anonymous',
      answer: [
        ['MediaWiki-API-Error', 'missingparam'],
        ['Cache-Control', PRIV0],
      ],
    });
    expect(r.verdict).toEqual(notStored('api-error', 'private'));
    expect(r.client).toEqual({ cacheControl: PRIV0, expires: undefined });
  });

  it('25b-anon-get-edit-with-token: mustpostparams → not stored (api-error)', () => {
    const r = run({
      query: 'action=edit&title=Sandbox&text=x&token=%2B%5C&format=json',
      probed: true,
      requester: 'anonymous',
      answer: [
        ['MediaWiki-API-Error', 'mustpostparams'],
        ['Cache-Control', PRIV0],
      ],
    });
    expect(r.verdict).toEqual(notStored('api-error', 'private'));
    expect(r.client).toEqual({ cacheControl: PRIV0, expires: undefined });
  });

  it('26-anon-origin-star: login suppressed, public → shared, TTL 60', () => {
    const r = run({
      query: 'action=query&meta=siteinfo&format=json&origin=*&maxage=60&smaxage=60',
      probed: false,
      requester: 'anonymous',
      answer: [
        ['MediaWiki-Login-Suppressed', 'true'],
        ['Access-Control-Allow-Origin', '*'],
        ['Access-Control-Allow-Credentials', 'false'],
        ['Access-Control-Expose-Headers', 'MediaWiki-API-Error, Retry-After, X-Database-Lag, MediaWiki-Login-Suppressed'],
        ['Vary', VARY_PUB],
        ['Expires', 'Fri, 20 Nov 2026 21:56:23 GMT'],
        ['Cache-Control', PUB60],
      ],
    });
    expect(r.identity).toEqual({ kind: 'anonymous', loginSuppressed: true, carriesCredentials: false });
    expect(r.verdict).toEqual(shared('public', 60));
  });

  it('27-anon-userinfo-xff-untrusted: userinfo is private → not stored (private-anonymous)', () => {
    const r = run({
      query: 'action=query&meta=userinfo&format=json',
      probed: true,
      requester: 'anonymous',
      answer: [['Cache-Control', PRIV0]],
    });
    expect(r.verdict).toEqual(notStored('private-anonymous', 'private'));
    expect(r.client).toEqual({ cacheControl: PRIV0, expires: undefined });
  });

  it('28-anon-format-xml: public → shared, TTL 60', () => {
    const r = run({
      query: 'action=query&meta=siteinfo&format=xml&maxage=60&smaxage=60',
      probed: false,
      requester: 'anonymous',
      answer: [
        ['Vary', VARY_PUB],
        ['Expires', 'Fri, 20 Nov 2026 21:56:23 GMT'],
        ['Cache-Control', PUB60],
      ],
    });
    expect(r.verdict).toEqual(shared('public', 60));
  });

  it('29-anon-allmessages: public → shared, TTL 60', () => {
    const r = run({
      query: 'action=query&meta=allmessages&ammessages=mainpage&format=json&maxage=60&smaxage=60',
      probed: false,
      requester: 'anonymous',
      answer: [
        ['Vary', VARY_PUB],
        ['Expires', 'Fri, 20 Nov 2026 21:56:24 GMT'],
        ['Cache-Control', PUB60],
      ],
    });
    expect(r.verdict).toEqual(shared('public', 60));
  });

  it('29c-anon-siteinfo-gzip: Vary Accept-Encoding is keyed → shared, TTL 60', () => {
    const r = run({
      query: 'action=query&meta=siteinfo&format=json&maxage=60&smaxage=60',
      probed: false,
      requester: 'anonymous',
      answer: [
        ['Vary', VARY_PUB],
        ['Expires', 'Fri, 20 Nov 2026 21:56:24 GMT'],
        ['Cache-Control', PUB60],
      ],
    });
    expect(r.verdict).toEqual(shared('public', 60));
  });

  it('29d-anon-if-modified-since: 200 without validators → shared, TTL 60', () => {
    const r = run({
      query: 'action=query&meta=siteinfo&format=json&maxage=60&smaxage=60',
      probed: false,
      requester: 'anonymous',
      answer: [
        ['Vary', VARY_PUB],
        ['Expires', 'Fri, 20 Nov 2026 21:56:24 GMT'],
        ['Cache-Control', PUB60],
      ],
    });
    expect(r.verdict).toEqual(shared('public', 60));
  });

  it('30-anon-stale-userid-token-cookies: Set-Cookie deletions → not stored (set-cookie)', () => {
    // wikiToken and forceHTTPS are vary cookies, so the gateway counts this requester as a session.
    const r = run({
      query: 'action=query&meta=siteinfo&format=json&maxage=60&smaxage=60',
      cookie: 'wikiUserID=1; wikiUserName=Admin; wikiToken=0000; forceHTTPS=true',
      probed: false,
      requester: 'session',
      answer: [
        ['Set-Cookie', 'wikiUserID=deleted; expires=Thu, 01 Jan 1970 00:00:01 GMT; Max-Age=0; path=/; HttpOnly'],
        ['Set-Cookie', 'wikiToken=deleted; expires=Thu, 01 Jan 1970 00:00:01 GMT; Max-Age=0; path=/; HttpOnly'],
        ['Set-Cookie', 'forceHTTPS=deleted; expires=Thu, 01 Jan 1970 00:00:01 GMT; Max-Age=0; path=/; HttpOnly'],
        ['Vary', VARY_PUB],
        ['Expires', EPOCH],
        ['Cache-Control', COOKIE_REWRITE],
      ],
    });
    expect(r.verdict).toMatchObject({ store: false, reason: 'set-cookie' });
  });

  it('31-anon-bogus-session-cookie: a new session is minted → not stored (set-cookie)', () => {
    const r = run({
      query: 'action=query&meta=siteinfo&format=json&maxage=60&smaxage=60',
      cookie: 'wiki_session=abcdefabcdefabcdefabcdefabcdefab',
      probed: false,
      requester: 'session',
      answer: [
        ['Set-Cookie', 'wiki_session=476hsfb3a9bn9g06ci2gqnurr569o785; path=/; HttpOnly'],
        ['Vary', VARY_PUB],
        ['Cache-Control', PRIV60],
      ],
    });
    expect(r.verdict).toEqual(notStored('set-cookie', 'anon-public-user-private'));
  });

  it('32-anon-malformed-session-cookie: session deleted → not stored (set-cookie)', () => {
    const r = run({
      query: 'action=query&meta=siteinfo&format=json&maxage=60&smaxage=60',
      cookie: 'wiki_session=xyz',
      probed: false,
      requester: 'session',
      answer: [
        ['Set-Cookie', 'wiki_session=deleted; expires=Thu, 01 Jan 1970 00:00:01 GMT; Max-Age=0; path=/; HttpOnly'],
        ['Vary', VARY_PUB],
        ['Expires', EPOCH],
        ['Cache-Control', COOKIE_REWRITE],
      ],
    });
    expect(r.verdict).toMatchObject({ store: false, reason: 'set-cookie' });
  });

  it('33-anon-logintoken: starts a session → not stored (set-cookie)', () => {
    // Probed; meta=tokens is private, the probe changes nothing.
    const r = run({
      query: 'action=query&meta=tokens&type=login&format=json',
      probed: true,
      requester: 'anonymous',
      answer: [
        ['Set-Cookie', 'wiki_session=1db3df8ho8mu094mhbigpuk6lcfnlsfg; path=/; HttpOnly'],
        ['Cache-Control', PRIV0],
      ],
    });
    expect(r.verdict).toMatchObject({ store: false, reason: 'set-cookie' });
    expect(r.client).toEqual({ cacheControl: PRIV0, expires: undefined });
  });

  it('34-anon-with-session-siteinfo-uselang-user: persisted session, private max-age=60 → session tier, TTL 60', () => {
    const r = run({
      query: 'action=query&meta=siteinfo&format=json&uselang=user&maxage=60&smaxage=60',
      cookie: ANON_SESSION,
      probed: false,
      requester: 'session',
      answer: [
        ['Vary', VARY_PUB],
        ['Cache-Control', PRIV60],
      ],
    });
    expect(r.verdict).toEqual(session('anon-public-user-private', 60));
  });

  it('35-anon-with-session-siteinfo-maxage: persisted session → session tier, TTL 60', () => {
    const r = run({
      query: 'action=query&meta=siteinfo&format=json&maxage=60&smaxage=60',
      cookie: ANON_SESSION,
      probed: false,
      requester: 'session',
      answer: [
        ['Vary', VARY_PUB],
        ['Cache-Control', PRIV60],
      ],
    });
    expect(r.verdict).toEqual(session('anon-public-user-private', 60));
  });

  it('36-anon-with-session-siteinfo-uselang-content-maxage: public, but a session holder → session tier, TTL 60', () => {
    const r = run({
      query: 'action=query&meta=siteinfo&format=json&uselang=content&maxage=60&smaxage=60',
      cookie: ANON_SESSION,
      probed: false,
      requester: 'session',
      answer: [
        ['Vary', VARY_PUB],
        ['Expires', 'Fri, 20 Nov 2026 21:56:25 GMT'],
        ['Cache-Control', PUB60],
      ],
    });
    expect(r.verdict).toEqual(session('public', 60));
  });

  it('37-anon-cookie-forceHTTPS-only: forceHTTPS deleted → not stored (set-cookie)', () => {
    const r = run({
      query: 'action=query&meta=siteinfo&format=json&maxage=60&smaxage=60',
      cookie: 'forceHTTPS=true',
      probed: false,
      requester: 'session',
      answer: [
        ['Set-Cookie', 'forceHTTPS=deleted; expires=Thu, 01 Jan 1970 00:00:01 GMT; Max-Age=0; path=/; HttpOnly'],
        ['Vary', VARY_PUB],
        ['Expires', EPOCH],
        ['Cache-Control', COOKIE_REWRITE],
      ],
    });
    expect(r.verdict).toMatchObject({ store: false, reason: 'set-cookie' });
  });

  it('38-anon-cookie-wikiToken-only: wikiToken deleted → not stored (set-cookie)', () => {
    const r = run({
      query: 'action=query&meta=siteinfo&format=json&maxage=60&smaxage=60',
      cookie: 'wikiToken=x',
      probed: false,
      requester: 'session',
      answer: [
        ['Set-Cookie', 'wikiToken=deleted; expires=Thu, 01 Jan 1970 00:00:01 GMT; Max-Age=0; path=/; HttpOnly'],
        ['Vary', VARY_PUB],
        ['Expires', EPOCH],
        ['Cache-Control', COOKIE_REWRITE],
      ],
    });
    expect(r.verdict).toMatchObject({ store: false, reason: 'set-cookie' });
  });

  it('39-anon-cookie-unrelated: foo and wikiUserName are no credentials → public, shared, TTL 60', () => {
    const r = run({
      query: 'action=query&meta=siteinfo&format=json&maxage=60&smaxage=60',
      cookie: 'foo=bar; wikiUserName=Bob',
      probed: false,
      requester: 'anonymous',
      answer: [
        ['Vary', VARY_PUB],
        ['Expires', 'Fri, 20 Nov 2026 21:56:25 GMT'],
        ['Cache-Control', PUB60],
      ],
    });
    expect(r.verdict).toEqual(shared('public', 60));
  });
});

describe('logged-in captures 40–59', () => {
  it('40-admin-action-login: POST → pass (method)', () => {
    const r = run({
      method: 'POST',
      query: '',
      cookie: 'wiki_session=kgic1304sv87gff3949maoucsufjlv8s',
      probed: false,
      requester: 'session',
      answer: [
        ['Set-Cookie', 'wiki_session=ksu15h6dvsk814h9t0q4ebthdogv0uoo; path=/; HttpOnly'],
        ['Cache-Control', PRIV0],
      ],
    });
    expect(r.classification).toEqual({ verdict: 'pass', reason: 'method' });
  });

  it('41-user-clientlogin: POST → pass (method)', () => {
    const r = run({
      method: 'POST',
      query: '',
      cookie: 'wiki_session=ee5a7sisou222bcs9j9bgqb93ihhk3i4',
      probed: false,
      requester: 'session',
      answer: [
        ['Set-Cookie', 'wiki_session=57nc4gmfmhrhs3au7q8hpmvtlrfbh6kv; path=/; HttpOnly'],
        ['Cache-Control', PRIV0],
      ],
    });
    expect(r.classification).toEqual({ verdict: 'pass', reason: 'method' });
  });

  it('42-admin-filearchive: private → session tier, operator session TTL (max-age=0 gives none)', () => {
    const r = run({
      query: 'action=query&list=filearchive&format=json',
      cookie: ADMIN,
      probed: true,
      requester: 'session',
      answer: [['Cache-Control', PRIV0]],
    });
    expect(r.verdict).toEqual(session('private', 120));
    expect(r.client).toEqual({ cacheControl: PRIV0, expires: undefined });
  });

  it('43-admin-filearchive-allprops: private → session tier, session TTL', () => {
    const r = run({
      query: 'action=query&list=filearchive&faprop=sha1%7Ctimestamp%7Cuser%7Csize%7Cdescription%7Cmime&format=json',
      cookie: ADMIN,
      probed: true,
      requester: 'session',
      answer: [['Cache-Control', PRIV0]],
    });
    expect(r.verdict).toEqual(session('private', 120));
    expect(r.client).toEqual({ cacheControl: PRIV0, expires: undefined });
  });

  it('44-user-filearchive: private → session tier, session TTL', () => {
    const r = run({
      query: 'action=query&list=filearchive&format=json',
      cookie: USER,
      probed: true,
      requester: 'session',
      answer: [['Cache-Control', PRIV0]],
    });
    expect(r.verdict).toEqual(session('private', 120));
    expect(r.client).toEqual({ cacheControl: PRIV0, expires: undefined });
  });

  it('45-user-filearchive-faprop-description: permissiondenied → not stored (api-error)', () => {
    const r = run({
      query: 'action=query&list=filearchive&faprop=description&format=json',
      cookie: USER,
      probed: true,
      requester: 'session',
      answer: [
        ['MediaWiki-API-Error', 'permissiondenied'],
        ['Cache-Control', PRIV0],
      ],
    });
    expect(r.verdict).toEqual(notStored('api-error', 'private'));
    expect(r.client).toEqual({ cacheControl: PRIV0, expires: undefined });
  });

  it('46-user-filearchive-faprop-description-fv2: permissiondenied → not stored (api-error)', () => {
    const r = run({
      query: 'action=query&list=filearchive&faprop=description&format=json&formatversion=2',
      cookie: USER,
      probed: true,
      requester: 'session',
      answer: [
        ['MediaWiki-API-Error', 'permissiondenied'],
        ['Cache-Control', PRIV0],
      ],
    });
    expect(r.verdict).toEqual(notStored('api-error', 'private'));
    expect(r.client).toEqual({ cacheControl: PRIV0, expires: undefined });
  });

  it('47-admin-siteinfo: a-p-u-p with a persisted session → session tier, session TTL', () => {
    // Probed; the persisted-session branch returns $privateCache before reading smaxage.
    const r = run({
      query: 'action=query&meta=siteinfo&format=json',
      cookie: ADMIN,
      probed: true,
      requester: 'session',
      answer: [
        ['Vary', VARY_PUB],
        ['Cache-Control', PRIV0],
      ],
    });
    expect(r.verdict).toEqual(session('anon-public-user-private', 120));
    expect(r.client).toEqual({ cacheControl: PRIV0, expires: undefined });
  });

  it('48-admin-siteinfo-maxage: private max-age=60 → session tier, TTL 60', () => {
    const r = run({
      query: 'action=query&meta=siteinfo&format=json&maxage=60&smaxage=60',
      cookie: ADMIN,
      probed: false,
      requester: 'session',
      answer: [
        ['Vary', VARY_PUB],
        ['Cache-Control', PRIV60],
      ],
    });
    expect(r.verdict).toEqual(session('anon-public-user-private', 60));
  });

  it('49-admin-siteinfo-uselang-user: persisted session → session tier, session TTL', () => {
    const r = run({
      query: 'action=query&meta=siteinfo&format=json&uselang=user',
      cookie: ADMIN,
      probed: true,
      requester: 'session',
      answer: [
        ['Vary', VARY_PUB],
        ['Cache-Control', PRIV0],
      ],
    });
    expect(r.verdict).toEqual(session('anon-public-user-private', 120));
    expect(r.client).toEqual({ cacheControl: PRIV0, expires: undefined });
  });

  it('50-admin-siteinfo-uselang-user-maxage: session tier, TTL 60', () => {
    const r = run({
      query: 'action=query&meta=siteinfo&format=json&uselang=user&maxage=60&smaxage=60',
      cookie: ADMIN,
      probed: false,
      requester: 'session',
      answer: [
        ['Vary', VARY_PUB],
        ['Cache-Control', PRIV60],
      ],
    });
    expect(r.verdict).toEqual(session('anon-public-user-private', 60));
  });

  it('51-user-siteinfo-maxage: session tier, TTL 60', () => {
    const r = run({
      query: 'action=query&meta=siteinfo&format=json&maxage=60&smaxage=60',
      cookie: USER,
      probed: false,
      requester: 'session',
      answer: [
        ['Vary', VARY_PUB],
        ['Cache-Control', PRIV60],
      ],
    });
    expect(r.verdict).toEqual(session('anon-public-user-private', 60));
  });

  it('52-user-siteinfo-uselang-user-maxage: session tier, TTL 60', () => {
    const r = run({
      query: 'action=query&meta=siteinfo&format=json&uselang=user&maxage=60&smaxage=60',
      cookie: USER,
      probed: false,
      requester: 'session',
      answer: [
        ['Vary', VARY_PUB],
        ['Cache-Control', PRIV60],
      ],
    });
    expect(r.verdict).toEqual(session('anon-public-user-private', 60));
  });

  it('53-admin-userinfo: private → session tier, session TTL', () => {
    const r = run({
      query: 'action=query&meta=userinfo&uiprop=groups&format=json',
      cookie: ADMIN,
      probed: true,
      requester: 'session',
      answer: [['Cache-Control', PRIV0]],
    });
    expect(r.verdict).toEqual(session('private', 120));
    expect(r.client).toEqual({ cacheControl: PRIV0, expires: undefined });
  });

  it('54-admin-origin-star: origin=* suppresses the login → anonymous, private → not stored', () => {
    const r = run({
      query: 'action=query&meta=userinfo&format=json&origin=*',
      cookie: ADMIN,
      probed: true,
      requester: 'anonymous',
      answer: [
        ['MediaWiki-Login-Suppressed', 'true'],
        ['Access-Control-Allow-Origin', '*'],
        ['Access-Control-Allow-Credentials', 'false'],
        ['Access-Control-Expose-Headers', 'MediaWiki-API-Error, Retry-After, X-Database-Lag, MediaWiki-Login-Suppressed'],
        ['Cache-Control', PRIV0],
      ],
    });
    expect(r.verdict).toEqual(notStored('private-anonymous', 'private'));
    expect(r.client).toEqual({ cacheControl: PRIV0, expires: undefined });
  });

  it('54b-admin-treat-as-untrusted: Treat-as-Untrusted suppresses the login → private → not stored', () => {
    const r = run({
      query: 'action=query&meta=userinfo&format=json',
      cookie: ADMIN,
      treatAsUntrusted: true,
      probed: true,
      requester: 'anonymous',
      answer: [
        ['MediaWiki-Login-Suppressed', 'true'],
        ['Cache-Control', PRIV0],
      ],
    });
    expect(r.verdict).toEqual(notStored('private-anonymous', 'private'));
    expect(r.client).toEqual({ cacheControl: PRIV0, expires: undefined });
  });

  it('54c-admin-jsonp-callback: callback= suppresses the login → private → not stored', () => {
    const r = run({
      query: 'action=query&meta=userinfo&format=json&callback=cb',
      cookie: ADMIN,
      probed: true,
      requester: 'anonymous',
      answer: [
        ['MediaWiki-Login-Suppressed', 'true'],
        ['Cache-Control', PRIV0],
      ],
    });
    expect(r.verdict).toEqual(notStored('private-anonymous', 'private'));
    expect(r.client).toEqual({ cacheControl: PRIV0, expires: undefined });
  });

  it('55-user-logout: POST → pass (method)', () => {
    const r = run({
      method: 'POST',
      query: '',
      cookie: USER,
      probed: false,
      requester: 'session',
      answer: [
        ['Set-Cookie', 'wiki_session=deleted; expires=Thu, 01 Jan 1970 00:00:01 GMT; Max-Age=0; path=/; HttpOnly'],
        ['Set-Cookie', 'wikiUserID=deleted; expires=Thu, 01 Jan 1970 00:00:01 GMT; Max-Age=0; path=/; HttpOnly'],
        ['Cache-Control', PRIV0],
      ],
    });
    expect(r.classification).toEqual({ verdict: 'pass', reason: 'method' });
  });

  it('56-after-logout-siteinfo: the stale session is replaced → not stored (set-cookie)', () => {
    const r = run({
      query: 'action=query&meta=siteinfo&format=json&maxage=60&smaxage=60',
      cookie: 'wikiUserName=LabUser; wiki_session=usersessionusersessionusersessi',
      probed: false,
      requester: 'session',
      answer: [
        ['Set-Cookie', 'wiki_session=6ftm6oidarr2qb6cog49smfu9mke25pm; path=/; HttpOnly'],
        ['Vary', VARY_PUB],
        ['Cache-Control', PRIV60],
      ],
    });
    expect(r.verdict).toEqual(notStored('set-cookie', 'anon-public-user-private'));
  });

  it('57-admin-siteinfo-uselang-content-maxage: public, session holder → session tier, TTL 60', () => {
    const r = run({
      query: 'action=query&meta=siteinfo&format=json&uselang=content&maxage=60&smaxage=60',
      cookie: ADMIN,
      probed: false,
      requester: 'session',
      answer: [
        ['Vary', VARY_PUB],
        ['Expires', 'Fri, 20 Nov 2026 21:56:26 GMT'],
        ['Cache-Control', PUB60],
      ],
    });
    expect(r.verdict).toEqual(session('public', 60));
  });

  it('58-admin-siteinfo-uselang-en-maxage: public, session holder → session tier, TTL 60', () => {
    const r = run({
      query: 'action=query&meta=siteinfo&format=json&uselang=en&maxage=60&smaxage=60',
      cookie: ADMIN,
      probed: false,
      requester: 'session',
      answer: [
        ['Vary', VARY_PUB],
        ['Expires', 'Fri, 20 Nov 2026 21:56:27 GMT'],
        ['Cache-Control', PUB60],
      ],
    });
    expect(r.verdict).toEqual(session('public', 60));
  });

  it('59-admin-siteinfo-uselang-content: probed answer public → session tier, session TTL; client gets priv0', () => {
    // Constructed: mode public (explicit uselang), s-maxage=probe, max-age=0 → public + Expires Unix 1.
    const r = run({
      query: 'action=query&meta=siteinfo&format=json&uselang=content',
      cookie: ADMIN,
      probed: true,
      requester: 'session',
      answer: [
        ['Vary', VARY_PUB],
        ['Expires', EPOCH1],
        ['Cache-Control', PROBED_PUBLIC],
      ],
    });
    expect(r.verdict).toEqual(session('public', 120));
    expect(r.client).toEqual({ cacheControl: PRIV0, expires: undefined });
  });
});

describe('CDN and module-max-age captures 70–83', () => {
  it('70-cdn-debug-anon-filearchive: private → not stored (private-anonymous)', () => {
    const r = run({
      query: 'action=query&list=filearchive&format=json',
      probed: true,
      requester: 'anonymous',
      answer: [['Cache-Control', PRIV0]],
    });
    expect(r.verdict).toEqual(notStored('private-anonymous', 'private'));
    expect(r.client).toEqual({ cacheControl: PRIV0, expires: undefined });
  });

  it('71-cdn-anon-siteinfo-maxage: $wgUseCdn changes nothing for api.php → shared, TTL 60', () => {
    const r = run({
      query: 'action=query&meta=siteinfo&format=json&maxage=60&smaxage=60',
      probed: false,
      requester: 'anonymous',
      answer: [
        ['Vary', VARY_PUB],
        ['Expires', 'Fri, 20 Nov 2026 21:56:32 GMT'],
        ['Cache-Control', PUB60],
      ],
    });
    expect(r.verdict).toEqual(shared('public', 60));
  });

  for (const [name, setCookieLine] of [
    ['74-cdn-admin-create', 'Set-Cookie: UseDC=master; expires=Fri, 20 Nov 2026 21:55:43 GMT; Max-Age=10; path=/; HttpOnly'],
    ['74b-cdn-admin-edit', 'Set-Cookie: UseDC=master; expires=Fri, 20 Nov 2026 21:55:45 GMT; Max-Age=10; path=/; HttpOnly'],
    ['74c-cdn-admin-delete', 'Set-Cookie: UseDC=master; expires=Fri, 20 Nov 2026 21:55:46 GMT; Max-Age=10; path=/; HttpOnly'],
    ['74d-cdnservers-usecdn-false-create', 'Set-Cookie: UseDC=master; expires=Fri, 20 Nov 2026 21:55:48 GMT; Max-Age=10; path=/; HttpOnly'],
  ] as const) {
    it(`${name}: a write is a POST → pass (method)`, () => {
      const r = run({
        method: 'POST',
        query: '',
        cookie: ADMIN,
        probed: false,
        requester: 'session',
        answer: [
          ['Set-Cookie', setCookieLine.slice('Set-Cookie: '.length)],
          ['Cache-Control', PRIV0],
        ],
      });
      expect(r.classification).toEqual({ verdict: 'pass', reason: 'method' });
    });
  }

  it('78-cdn-xfp-https: X-Forwarded-Proto is not in Vary → public, shared, TTL 60', () => {
    const r = run({
      query: 'action=query&meta=siteinfo&format=json&maxage=60&smaxage=60',
      probed: false,
      requester: 'anonymous',
      answer: [
        ['Vary', VARY_PUB],
        ['Expires', 'Fri, 20 Nov 2026 21:56:41 GMT'],
        ['Cache-Control', PUB60],
      ],
    });
    expect(r.verdict).toEqual(shared('public', 60));
  });

  it("80-anon-labbadges: the module's setCacheMaxAge(3600) wins over the probe → shared, TTL 3600", () => {
    // Probed, but s-maxage was already set by the module: the answer is the capture's.
    const r = run({
      query: 'action=labbadges&format=json',
      probed: true,
      requester: 'anonymous',
      answer: [
        ['Vary', VARY_PUB],
        ['Expires', 'Fri, 20 Nov 2026 22:55:42 GMT'],
        ['Cache-Control', 'max-age=3600, s-maxage=3600, public'],
      ],
    });
    expect(r.verdict).toEqual(shared('public', 3600));
    expect(r.client).toEqual({
      cacheControl: 'max-age=3600, s-maxage=3600, public',
      expires: 'Fri, 20 Nov 2026 22:55:42 GMT',
    });
  });

  it('81-admin-labbadges: a-p-u-p, persisted session → session tier, for the session TTL (not max-age=3600: a private answer is kept no longer)', () => {
    const r = run({
      query: 'action=labbadges&format=json',
      cookie: ADMIN,
      probed: true,
      requester: 'session',
      answer: [
        ['Vary', VARY_PUB],
        ['Cache-Control', 'private, must-revalidate, max-age=3600'],
      ],
    });
    // The session TTL of these tests (120 s): a private answer's max-age (the module's or the
    // client's `maxage`) does not lengthen how long a session's answer outlives a logout elsewhere.
    expect(r.verdict).toEqual(session('anon-public-user-private', 120));
    expect(r.client).toEqual({ cacheControl: 'private, must-revalidate, max-age=3600', expires: undefined });
  });

  // Kept no longer than the session TTL (120 here), however long the public max-age: a session's
  // answers must not outlive a logout the gateway did not see (commit 96cd392).
  it('82-admin-labbadges-uselang-content: public, session holder → session tier, TTL the session TTL', () => {
    const r = run({
      query: 'action=labbadges&format=json&uselang=content',
      cookie: ADMIN,
      probed: true,
      requester: 'session',
      answer: [
        ['Vary', VARY_PUB],
        ['Expires', 'Fri, 20 Nov 2026 22:55:42 GMT'],
        ['Cache-Control', 'max-age=3600, s-maxage=3600, public'],
      ],
    });
    expect(r.verdict).toEqual(session('public', 120));
    expect(r.client).toEqual({
      cacheControl: 'max-age=3600, s-maxage=3600, public',
      expires: 'Fri, 20 Nov 2026 22:55:42 GMT',
    });
  });

  it('83-anon-labbadges-maxage-param: the parameters are ignored → shared, TTL 3600', () => {
    const r = run({
      query: 'action=labbadges&format=json&maxage=60&smaxage=60',
      probed: false,
      requester: 'anonymous',
      answer: [
        ['Vary', VARY_PUB],
        ['Expires', 'Fri, 20 Nov 2026 22:55:42 GMT'],
        ['Cache-Control', 'max-age=3600, s-maxage=3600, public'],
      ],
    });
    expect(r.verdict).toEqual(shared('public', 3600));
  });
});

/** Facts from ApiMain::sendCacheHeaders() and the gateway's design that no single capture shows. */
describe('constructed from the source rules', () => {
  it('maxage=60 without smaxage: the client gets `s-maxage=0, max-age=60, public` and Expires Unix 1', () => {
    // Unprobed MediaWiki: s-maxage=0 (param default), max-age=60 → not both 0 → public,
    // Expires = time() + min(0, 60) = 0 → Unix time 1.
    const probed = unprobedCacheHeaders(`s-maxage=${SMAXAGE_PROBE}, max-age=60, public`, 'Fri, 20 Nov 2026 21:56:19 GMT');
    expect(probed).toEqual({ cacheControl: 's-maxage=0, max-age=60, public', expires: EPOCH1 });
  });

  it('the jitter stays within ttlJitterRatio below the TTL', () => {
    const answer = { status: 200, headers: { vary: VARY_PUB, 'cache-control': PUB60 } };
    const anon: Identity = { kind: 'anonymous', loginSuppressed: false, carriesCredentials: false };
    const ttl = { ...TTL, ttlJitterRatio: 0.1 };
    for (const x of [0, 0.25, 0.5, 0.999999]) {
      const v = evaluateAnswer(answer, anon, {}, ttl, () => x);
      expect(v.store).toBe(true);
      if (!v.store) continue;
      expect(v.ttlMs).toBeLessThanOrEqual(60_000);
      expect(v.ttlMs).toBeGreaterThanOrEqual(54_000);
    }
  });

  it('a Vary naming a header outside KEYED_VARY → not stored (vary)', () => {
    const answer = { status: 200, headers: { vary: `${VARY_PUB}, Accept-Language`, 'cache-control': PUB60 } };
    const v = evaluateAnswer(answer, { kind: 'anonymous', loginSuppressed: false, carriesCredentials: false }, {}, TTL, ZERO);
    expect(v).toEqual(notStored('vary', 'public'));
  });

  it('origin mismatch: 403 with `Cache-Control: no-cache` (ApiMain::handleCORS) → not stored (status)', () => {
    const answer = { status: 403, headers: { 'cache-control': 'no-cache' } };
    const v = evaluateAnswer(answer, { kind: 'anonymous', loginSuppressed: false, carriesCredentials: false }, {}, TTL, ZERO);
    expect(v).toEqual(notStored('status', 'unknown'));
  });

  it('anonymous, public with s-maxage=0 (client sent maxage=60&smaxage=0) → not stored (zero-ttl)', () => {
    const answer = {
      status: 200,
      headers: { vary: VARY_PUB, 'cache-control': 's-maxage=0, max-age=60, public' },
    };
    const v = evaluateAnswer(answer, { kind: 'anonymous', loginSuppressed: false, carriesCredentials: false }, {}, TTL, ZERO);
    expect(v).toEqual(notStored('zero-ttl', 'public'));
  });

  it('session holder, public with s-maxage=0 (uselang=content&maxage=60&smaxage=0) → per-session, max-age 60 s', () => {
    // The session tier is a private cache: like a browser it follows max-age, not s-maxage
    // (RFC 9111 §5.2.2.10: s-maxage applies to shared caches only).
    const answer = {
      status: 200,
      headers: { vary: VARY_PUB, 'cache-control': 's-maxage=0, max-age=60, public' },
    };
    const holder = identify({ cookieHeader: ADMIN, credentialHeaderValues: [], treatAsUntrusted: false, query: new Map(), clientAddress: undefined }, RULES);
    const v = evaluateAnswer(answer, holder, {}, TTL, ZERO);
    expect(v).toMatchObject({ store: true, tier: 'session', ttlMs: 60_000 });
  });

  it('inferMode reads the three modes back from the capture headers', () => {
    expect(inferMode({ 'cache-control': PUB60, vary: VARY_PUB })).toBe('public');
    expect(inferMode({ 'cache-control': PRIV60, vary: VARY_PUB })).toBe('anon-public-user-private');
    expect(inferMode({ 'cache-control': PRIV0 })).toBe('private');
  });
});
