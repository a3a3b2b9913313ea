// GET /cache?url= on the admin listener: every variant the gateway holds for a URL, given in any
// parameter order: the shared one and each session's, with its tier, identity kind, age, TTL left,
// size, stored codings and dependency tags; never a session's slot, cookie or credential.
import { describe, expect, it } from 'vitest';
import { gatewayOnFake } from '../support/gateway-on-fake.js';
import { ADMIN_TOKEN, adminGet, answerPublicOrSessionPrivate } from '../support/admin.js';
import { http } from '../support/http.js';

const COOKIE_A = 'wiki_session=aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa; wikiUserName=Alice; wikiToken=tokenofalice0123456789';
const COOKIE_B = 'wiki_session=bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb';
const SECRETS = ['aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa', 'bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb', 'tokenofalice0123456789', 'wiki_session', 'Alice'];

interface Variant {
  tier: string;
  part: string;
  identity: string;
  session?: number;
  ageSeconds: number;
  ttlSeconds: number;
  ttlLeftSeconds: number;
  bytes: number;
  bodyBytes: number;
  codings: string[];
  dependencies: string[];
  freshness: string;
  keyedHeaders: Record<string, string | null>;
}

describe('GET /cache', () => {
  const t = gatewayOnFake(answerPublicOrSessionPrivate(new Map()), { WIKIEDGE_ADMIN_TOKEN: ADMIN_TOKEN });
  const query = 'action=query&prop=info&titles=Main_Page&format=json';

  it('lists the shared variant and two sessions’ variants, and nothing that names a session', async () => {
    // Session A is known to be Alice's (as a userinfo answer would tell): its answer carries
    // her (policy/dependencies.ts userTag), which is shown without her name.
    const other = '/w/api.php?action=query&format=json&meta=siteinfo';
    await http(`${t.gw.apiUrl.replace('/w/api.php', '')}${other}`, { headers: { cookie: COOKIE_A } });
    await t.gw.built.gateway.afterAnswers.settled(10_000);
    const slotA = t.gw.built.gateway.store.variants(other).flatMap((v) => /\ns:([^\n]*):[^\n:]*\n/.exec(v.key)?.[1] ?? [])[0]!;
    t.gw.built.gateway.sessionUsers.note(slotA, 'Alice');
    expect((await http(`${t.gw.apiUrl}?${query}`)).headers['x-cache']).toBe('miss');
    expect((await http(`${t.gw.apiUrl}?${query}`, { headers: { cookie: COOKIE_A } })).headers['x-cache']).toBe('miss');
    expect((await http(`${t.gw.apiUrl}?${query}`, { headers: { cookie: COOKIE_B } })).headers['x-cache']).toBe('miss');

    // Asked in another parameter order than either request's.
    const natural = encodeURIComponent('/w/api.php?titles=Main_Page&format=json&prop=info&action=query');
    const res = await adminGet(t.gw.adminUrl, `/cache?url=${natural}`);
    expect(res.status).toBe(200);
    const view = JSON.parse(res.body) as { url: string; variants: Variant[] };
    expect(view.url).toBe('/w/api.php?action=query&format=json&prop=info&titles=Main_Page');
    const anonymous = view.variants.filter((v) => v.identity === 'anonymous');
    const sessions = view.variants.filter((v) => v.identity === 'session' || v.identity === 'user');
    expect(sessions.map((v) => v.identity).sort()).toEqual(['session', 'user']);
    expect(sessions.find((v) => v.identity === 'user')!.dependencies).toContain('u:(the session`s user)');
    expect(sessions.find((v) => v.identity === 'session')!.dependencies.filter((d) => d.startsWith('u:'))).toEqual([]);
    expect(anonymous).toHaveLength(1);
    expect(anonymous[0]).toMatchObject({ tier: 'local', part: 'shared', freshness: 'fresh', ttlSeconds: 300, codings: ['identity'] });
    expect(anonymous[0]!.keyedHeaders).toEqual({ forwardedProto: 'http', treatAsUntrusted: null, origin: null, acceptVariants: null });
    expect(anonymous[0]!.dependencies).toContain('p:Main Page');
    expect(sessions.map((v) => v.session).sort()).toEqual([1, 2]);
    for (const v of view.variants) {
      expect(v.ageSeconds).toBeGreaterThanOrEqual(0);
      expect(v.ttlLeftSeconds).toBeGreaterThan(0);
      expect(v.ttlLeftSeconds).toBeLessThanOrEqual(v.ttlSeconds);
      expect(v.bytes).toBeGreaterThan(v.bodyBytes);
      expect(v.bodyBytes).toBeGreaterThan(0);
    }
    for (const v of sessions) expect(v.part).toBe('session');

    // The raw body: no cookie value, cookie name, user name, token or session slot anywhere.
    const slots = t.gw.built.gateway.store.variants(view.url).flatMap((v) => /\ns:([^\n]*):[^\n:]*\n/.exec(v.key)?.[1] ?? []);
    expect(slots).toHaveLength(2);
    for (const secret of [...SECRETS, ...slots]) expect(res.body).not.toContain(secret);
  });

  it('a URL with nothing cached: 200, no variant, and a note saying so', async () => {
    const res = await adminGet(t.gw.adminUrl, `/cache?url=${encodeURIComponent('/w/api.php?action=query&meta=siteinfo&t=never')}`);
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body)).toMatchObject({ variants: [], note: 'nothing cached for this URL' });
  });

  it('no url=, or one that is not api.php: 400 saying why', async () => {
    const none = await adminGet(t.gw.adminUrl, '/cache');
    expect(none.status).toBe(400);
    expect(JSON.parse(none.body)).toEqual({ error: 'give url=<an api.php URL> (/w/api.php?…)' });
    const page = await adminGet(t.gw.adminUrl, `/cache?url=${encodeURIComponent('/w/index.php?title=Main_Page')}`);
    expect(page.status).toBe(400);
    expect(JSON.parse(page.body)).toEqual({ error: 'url= must be an api.php URL (/w/api.php?…)' });
  });
});
