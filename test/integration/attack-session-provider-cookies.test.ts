// Security round 2, class 1 (identity: every session provider). SessionManager::getVaryCookies()
// merges every provider's cookies; a default 1.39 has BotPasswordSessionProvider, whose
// `{prefix}_BPsession` alone makes a request a logged-in bot. Its answers (higher limits,
// `assert=user` successes, with shareAnonymousPrivate even private data) must never enter the
// shared tier. And any cookie whose name says session or token, known or not, costs a cache
// hit rather than risking a leak (the credential net).
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type RunningGateway, startGateway } from '../support/gateway.js';
import { header, http } from '../support/http.js';
import { ADMIN_USER, botPasswordLogin } from '../support/wiki.js';

describe('a bot-password session (wiki_BPsession alone) is a session holder', () => {
  const wiki = inject('wikiUrl');
  let gw: RunningGateway;
  let bpCookie: string;
  beforeAll(async () => {
    gw = await startGateway(wiki, {
      WIKIEDGE_MODULES: JSON.stringify({ userinfo: { shareAnonymousPrivate: true } }),
    });
    const jar = await botPasswordLogin(wiki);
    const bp = jar.get('wiki_BPsession');
    if (!bp) throw new Error(`no wiki_BPsession after a bot-password login: ${[...jar.keys()].join(', ')}`);
    bpCookie = `wiki_BPsession=${bp}`;
  });
  afterAll(() => gw.close());

  it('the wiki serves it as the bot (the premise: MediaWiki logs it in)', async () => {
    const res = await http(`${wiki}/w/api.php?action=query&meta=userinfo&format=json`, { headers: { cookie: bpCookie } });
    expect(JSON.parse(res.body).query.userinfo.name).toBe(ADMIN_USER);
  });

  it('a public answer made for the bot (assert=user, bot limits) never reaches an anonymous client', async () => {
    const q = `${gw.apiUrl}?action=query&list=allpages&aplimit=max&assert=user&uselang=content&format=json&requestid=${randomUUID()}`;
    const bot = await http(q, { headers: { cookie: bpCookie } });
    expect(bot.status).toBe(200);
    expect(JSON.parse(bot.body).limits?.allpages).toBe(5000);
    expect(header(bot, 'cache-control') ?? '').not.toMatch(/public/);
    expect(gw.built.gateway.store.stats('shared').entries).toBe(0);
    const anon = await http(q);
    expect(header(anon, 'x-cache')).not.toBe('hit');
    expect(header(anon, 'mediawiki-api-error')).toBe('assertuserfailed');
  });

  it('with a module rule that shares anonymous private answers, the bot`s userinfo stays its own', async () => {
    const q = `${gw.apiUrl}?action=query&meta=userinfo&format=json&requestid=${randomUUID()}`;
    const bot = await http(q, { headers: { cookie: bpCookie } });
    expect(JSON.parse(bot.body).query.userinfo.name).toBe(ADMIN_USER);
    const anon = await http(q);
    expect(header(anon, 'x-cache')).not.toBe('hit');
    expect(JSON.parse(anon.body).query.userinfo.anon).toBeDefined();
  });

  it('the same bot request again is served from its own session slot', async () => {
    const q = `${gw.apiUrl}?action=query&list=allpages&assert=user&uselang=content&format=json&requestid=${randomUUID()}`;
    await http(q, { headers: { cookie: bpCookie } });
    const again = await http(q, { headers: { cookie: bpCookie } });
    expect(header(again, 'x-cache')).toBe('hit');
    expect(gw.built.gateway.store.stats('session').entries).toBeGreaterThan(0);
  });
});

describe('the credential net: a cookie that says session or token is never answered from the shared tier', () => {
  const wiki = inject('wikiUrl');
  let gw: RunningGateway;
  beforeAll(async () => {
    gw = await startGateway(wiki);
  });
  afterAll(() => gw.close());

  it.each(['centralauth_Session=abc123', 'centralauth_Token=abc123', 'otherwiki_session=abc123', 'SSOsession=abc123', 'myAccessToken=abc123'])(
    '%s: the shared entry is not served, and its answer is not shared',
    async (cookie) => {
      const q = `${gw.apiUrl}?action=query&meta=siteinfo&uselang=content&format=json&requestid=${randomUUID()}`;
      const anon = await http(q);
      expect(header(anon, 'x-cache')).toBe('miss');
      const shared = gw.built.gateway.store.stats('shared').entries;
      const withCookie = await http(q, { headers: { cookie } });
      expect(withCookie.status).toBe(200);
      expect(header(withCookie, 'x-cache')).not.toMatch(/^hit/);
      expect(gw.built.gateway.store.stats('shared').entries).toBe(shared);
      expect(header(withCookie, 'cache-control') ?? '').not.toMatch(/public/);
    },
  );

  it('harmless cookies ({prefix}mwuser-sessionId, ordinary ones) still get the shared entry', async () => {
    const q = `${gw.apiUrl}?action=query&meta=siteinfo&uselang=content&format=json&requestid=${randomUUID()}`;
    await http(q);
    const res = await http(q, { headers: { cookie: 'wikimwuser-sessionId=0123456789abcdef; VEE=wikitext' } });
    expect(header(res, 'x-cache')).toBe('hit');
  });

  it('requests caught by the net are counted', async () => {
    const res = await http(`${gw.adminUrl}/metrics`);
    expect(res.body).toMatch(/wikiedge_unknown_credentials_total [1-9]/);
  });
});
