// Changes whose signal (the PURGE MediaWiki sends, the recentchanges row the follower reads)
// does not name what they alter, found against the real wiki (fixed in commit e990bdb):
// - a page id read as missing, then created or undeleted: the change names the title;
// - a cascading protection of a page: the pages it transcludes are protected, unnamed;
// - a protection (or block) that expires: no signal at all;
// - a template edit: prop=revisions with rvparse/rvexpandtemplates renders it at once;
// - a rights change: siteinfo's members counted per group;
// - list=random: MediaWiki lets caches share it, and a stored answer was not random.
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type RunningGateway, startGateway } from '../support/gateway.js';
import { header, http } from '../support/http.js';
import { until } from '../support/until.js';
import { ADMIN_PASS, ADMIN_USER, apiWrite, LAB_USER, loginCookies, setWikiToggle } from '../support/wiki.js';

const wiki = inject('wikiUrl');
const data = inject('wikiData');

describe('what no change signal names', () => {
  let gw: RunningGateway;
  let admin: string;
  beforeAll(async () => {
    gw = await startGateway(wiki, { WIKIEDGE_RC_FOLLOW: 'true', WIKIEDGE_RC_POLL_MS: '250' });
    const { port } = new URL(gw.url);
    await setWikiToggle(data, { cdn: [`127.0.0.1:${port}`] });
    admin = await loginCookies(wiki, ADMIN_USER, ADMIN_PASS);
  });
  afterAll(async () => {
    await setWikiToggle(data, { cdn: [] });
    await gw.close();
  });

  const read = (q: string) => http(`${gw.apiUrl}?${q}&format=json&formatversion=2`);
  /**
   * Read until the answer is a hit. The follower applies the test's own writes a poll later: an
   * answer fetched while one that it depends on is applied is not stored (`pass`, notStored
   * `invalidated`), and read again.
   */
  const cached = async (q: string) => {
    await gw.reboundsDone();
    const hit = await until(
      () => read(q),
      (res) => header(res, 'x-cache') === 'hit',
    );
    return JSON.parse(hit.body);
  };

  it('a page id read as missing, then undeleted: its answer is fresh at once', async () => {
    const title = `Missing by id ${randomUUID()}`;
    const created = (await apiWrite(wiki, admin, { action: 'edit', title, text: 'here' })) as { edit: { pageid: number } };
    const id = created.edit.pageid;
    await apiWrite(wiki, admin, { action: 'delete', title });
    const q = `action=query&prop=info&pageids=${id}`;
    expect((await cached(q)).query.pages[0].missing).toBe(true);
    await apiWrite(wiki, admin, { action: 'undelete', title });
    const after = await read(q);
    expect(JSON.parse(after.body).query.pages[0].title).toBe(title);
  });

  it('a cascading protection reaches the protection of the template it covers', async () => {
    const id = randomUUID();
    const template = `Template:Cascaded ${id}`;
    const page = `Cascading ${id}`;
    await apiWrite(wiki, admin, { action: 'edit', title: template, text: 'tpl' });
    await apiWrite(wiki, admin, { action: 'edit', title: page, text: `{{Cascaded ${id}}}` });
    const q = `action=query&prop=info&inprop=protection&titles=${encodeURIComponent(template)}`;
    expect((await cached(q)).query.pages[0].protection).toEqual([]);
    await apiWrite(wiki, admin, { action: 'protect', title: page, protections: 'edit=sysop', cascade: '1', expiry: 'infinite' });
    const after = await until(
      async () => JSON.parse((await read(q)).body).query.pages[0].protection as { source?: string }[],
      (p) => p.length > 0,
    );
    expect(after[0]!.source).toBe(page);
  });

  it('a protection that expires: its answer is kept no longer than the expiry', async () => {
    const title = `Expiring ${randomUUID()}`;
    await apiWrite(wiki, admin, { action: 'edit', title, text: 'x' });
    // Far enough ahead that caching it (a rebound wait and two reads of the real wiki) ends first on a busy machine.
    await apiWrite(wiki, admin, { action: 'protect', title, protections: 'edit=sysop', expiry: '10 seconds' });
    const q = `action=query&prop=info&inprop=protection&titles=${encodeURIComponent(title)}`;
    const protectedNow = await cached(q);
    const expiry = Date.parse(protectedNow.query.pages[0].protection[0].expiry as string);
    await sleep(Math.max(0, expiry + 1_500 - Date.now()));
    // Past the expiry the gateway asks the wiki again, and answers what the wiki answers now.
    const after = await read(q);
    expect(header(after, 'x-cache')).not.toBe('hit');
    const direct = await http(`${wiki}/w/api.php?${q}&format=json&formatversion=2`);
    expect(JSON.parse(after.body).query.pages[0].protection).toEqual(JSON.parse(direct.body).query.pages[0].protection);
    // And a list of protected pages, which shows no expiry, keeps the short TTL whatever the follower says.
    const listed = await cached(`action=query&list=allpages&apprtype=edit&apnamespace=0&aplimit=max`);
    expect(listed.query.allpages.length).toBeGreaterThanOrEqual(0);
    const entry = [...gw.built.gateway.store.entries('shared')].find((e) => e.urlKey.includes('apprtype=edit'));
    expect(entry?.ttlMs).toBeLessThanOrEqual(60_000);
  });

  it('a template edit reaches prop=revisions rendered (rvparse) or expanded (rvexpandtemplates) at once', async () => {
    const id = randomUUID();
    const template = `Template:Rendered ${id}`;
    const page = `Rendering ${id}`;
    await apiWrite(wiki, admin, { action: 'edit', title: template, text: 'version one' });
    await apiWrite(wiki, admin, { action: 'edit', title: page, text: `{{Rendered ${id}}}` });
    const t = encodeURIComponent(page);
    const queries = [
      `action=query&prop=revisions&rvprop=content&rvparse=1&titles=${t}`,
      `action=query&prop=revisions&rvprop=content&rvexpandtemplates=1&titles=${t}`,
    ];
    for (const q of queries) expect(JSON.stringify(await cached(q))).toContain('version one');
    await apiWrite(wiki, admin, { action: 'edit', title: template, text: 'version two' });
    for (const q of queries) {
      const after = await read(q);
      expect(after.body, q).toContain('version two');
    }
  });

  it('a rights change reaches siteinfo`s members counted per group', async () => {
    const q = 'action=query&meta=siteinfo&siprop=usergroups&sinumberingroup=1';
    const count = (body: { query: { usergroups: { name: string; number?: number }[] } }) =>
      body.query.usergroups.find((g) => g.name === 'bureaucrat')?.number ?? 0;
    const before = count(await cached(q));
    const users = await http(`${wiki}/w/api.php?action=query&list=users&ususers=${LAB_USER}&usprop=groups&format=json&formatversion=2`);
    const was = (JSON.parse(users.body).query.users[0].groups as string[]).includes('bureaucrat');
    await apiWrite(wiki, admin, { action: 'userrights', user: LAB_USER, [was ? 'remove' : 'add']: 'bureaucrat', reason: 'wikiedge test' });
    try {
      await until(
        async () => count(JSON.parse((await read(q)).body)),
        (n) => n === before + (was ? -1 : 1),
      );
    } finally {
      await apiWrite(wiki, admin, { action: 'userrights', user: LAB_USER, [was ? 'add' : 'remove']: 'bureaucrat', reason: 'wikiedge test' });
    }
  });

  it('list=random and generator=random are never stored', async () => {
    for (const q of ['action=query&list=random&rnlimit=5', 'action=query&generator=random&grnlimit=5&prop=info']) {
      expect(header(await read(q), 'x-cache')).toBe('pass');
      expect(header(await read(q), 'x-cache')).toBe('pass');
    }
  });
});
