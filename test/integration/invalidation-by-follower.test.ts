// Consistent with the wiki, through the change follower alone (WIKIEDGE_RC_FOLLOW, no PURGEs):
// a write made straight at the wiki, log events included (a protection, a block, a rights change,
// which MediaWiki purges nothing for), is seen at the follower's next poll and every cached
// answer that depends on it is fresh shortly after; the users whose rights changed lose their
// sessions' entries; while it is healthy the long TTL defaults apply.
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type RunningGateway, startGateway } from '../support/gateway.js';
import { header, http } from '../support/http.js';
import { ADMIN_PASS, ADMIN_USER, LAB_USER, LAB_USER_PASS, apiWrite, loginCookies } from '../support/wiki.js';

const wiki = inject('wikiUrl');
const POLL_MS = 250;

/**
 * The first answer of `read` that satisfies `fresh`, and how long it took to come. Generous
 * bound: the suite runs on busy machines; docs/BENCHMARKS.md measures the lag itself.
 */
async function untilFresh<T>(read: () => Promise<T>, fresh: (t: T) => boolean, boundMs = 15_000): Promise<{ value: T; ms: number }> {
  const t0 = Date.now();
  for (;;) {
    const value = await read();
    if (fresh(value)) return { value, ms: Date.now() - t0 };
    if (Date.now() - t0 > boundMs) throw new Error(`not fresh after ${boundMs} ms`);
    await sleep(50);
  }
}

describe('invalidation by the recentchanges follower', () => {
  let gw: RunningGateway;
  let admin: string;
  beforeAll(async () => {
    gw = await startGateway(wiki, { WIKIEDGE_RC_FOLLOW: 'true', WIKIEDGE_RC_POLL_MS: String(POLL_MS) });
    admin = await loginCookies(wiki, ADMIN_USER, ADMIN_PASS);
    await untilFresh(
      async () => (await http(`${gw.adminUrl}/metrics`)).body,
      (m) => /wikiedge_change_follower_up 1/.test(m),
    );
  });
  afterAll(() => gw.close());

  const read = (q: string, cookie?: string) => http(`${gw.apiUrl}?${q}&format=json&formatversion=2`, cookie ? { headers: { cookie } } : {});

  it('is healthy and applies the long TTL default', async () => {
    // A page of its own: a list such as allpages is invalidated by any page another test file
    // creates meanwhile (the suite shares the wiki), and an answer invalidated while it was
    // fetched is not stored (X-Cache pass, notStored "invalidated"; policy.ts).
    const id = randomUUID();
    const title = `Long TTL ${id}`;
    const stored = () => [...gw.built.gateway.store.entries('shared')];
    // Read until stored: a change the follower applies while the answer is on its way (any gap
    // it takes counts) leaves it unstored, `pass`, once.
    await untilFresh(
      () => read(`action=query&prop=info&titles=${encodeURIComponent(title)}`),
      () => stored().some((e) => e.urlKey.includes(id)),
    );
    const entry = stored().find((e) => e.urlKey.includes(id));
    expect(entry?.ttlMs).toBeGreaterThan(600_000);
  });

  it('keeps the short TTL for what jobs update unseen: the links tables (categories, categorymembers) and a page`s parse', async () => {
    // A template edit changes these for the pages that transclude it in jobs (RefreshLinksJob),
    // with no recentchanges row and no PURGE of an api.php URL.
    const id = randomUUID();
    const title = encodeURIComponent(`Short TTL ${id}`);
    const stored = () => [...gw.built.gateway.store.entries('shared')];
    for (const [q, marker] of [
      [`action=query&prop=categories&titles=${title}`, 'prop=categories'],
      [`action=query&list=categorymembers&cmtitle=Category:${title}`, 'list=categorymembers'],
      [`action=parse&page=Main_Page&prop=text&x=${id}`, 'action=parse'],
    ] as const) {
      const entryOf = () => stored().find((e) => e.urlKey.includes(id) && e.urlKey.includes(marker));
      await untilFresh(
        () => read(q),
        () => entryOf() !== undefined,
      );
      expect(entryOf()!.ttlMs, q).toBeLessThanOrEqual(60_000);
    }
  });

  it('an edit straight at the wiki: the content is fresh within a poll or so', async () => {
    const title = `Followed ${randomUUID()}`;
    await apiWrite(wiki, admin, { action: 'edit', title, text: 'one' });
    const q = `action=query&prop=revisions&rvprop=content&rvslots=main&titles=${encodeURIComponent(title)}`;
    // Cached and a hit: the follower may see the page's creation after the first read and drop
    // that entry (it cannot tell an answer fetched after a change from one fetched before), so
    // read until the entry holds.
    await untilFresh(
      () => read(q),
      (r) => r.body.includes('"content":"one"') && header(r, 'x-cache') === 'hit',
    );
    await apiWrite(wiki, admin, { action: 'edit', title, text: 'two' });
    const { ms } = await untilFresh(
      () => read(q),
      (r) => r.body.includes('"content":"two"'),
    );
    expect(ms).toBeLessThan(15_000);
  });

  it('a protection (no PURGE from MediaWiki) and the log list', async () => {
    const title = `Followed protect ${randomUUID()}`;
    await apiWrite(wiki, admin, { action: 'edit', title, text: 'x' });
    const q = `action=query&prop=info&inprop=protection&titles=${encodeURIComponent(title)}`;
    const logs = 'action=query&list=logevents&letype=protect&lelimit=5';
    await read(q);
    await read(logs);
    await apiWrite(wiki, admin, { action: 'protect', title, protections: 'edit=sysop', expiry: 'infinite' });
    await untilFresh(
      () => read(q),
      (r) => JSON.parse(r.body).query.pages[0].protection.length === 1,
    );
    await untilFresh(
      () => read(logs),
      (r) => JSON.parse(r.body).query.logevents.some((e: { title: string }) => e.title === title),
    );
  });

  it('a rights change of a user ends its sessions` cached answers, page answers included', async () => {
    const user = await loginCookies(wiki, LAB_USER, LAB_USER_PASS);
    // userinfo tells the gateway whose session this is.
    const who = `action=query&meta=userinfo&uiprop=groups&requestid=${randomUUID()}`;
    const before = JSON.parse((await read(who, user)).body).query.userinfo.groups as string[];
    // A page answer of that session: it depends on the page, not on the user's rights.
    const page = `action=query&prop=info&titles=Main%20Page&requestid=${randomUUID()}`;
    await read(page, user);
    expect(header(await read(page, user), 'x-cache')).toBe('hit');
    const adding = !before.includes('bot');
    await apiWrite(wiki, admin, { action: 'userrights', user: LAB_USER, [adding ? 'add' : 'remove']: 'bot', reason: 'wikiedge test' });
    try {
      await untilFresh(
        () => read(who, user),
        (r) => (JSON.parse(r.body).query.userinfo.groups as string[]).includes('bot') === adding,
      );
      await untilFresh(
        () => read(page, user),
        (r) => header(r, 'x-cache') === 'miss',
      );
    } finally {
      await apiWrite(wiki, admin, { action: 'userrights', user: LAB_USER, [adding ? 'remove' : 'add']: 'bot', reason: 'wikiedge test' });
    }
  });

  it('counts what it did', async () => {
    const text = (await http(`${gw.adminUrl}/metrics`)).body;
    expect(text).toMatch(/wikiedge_change_events_total\{source="follower",type="edit"\} [1-9]/);
    expect(text).toMatch(/wikiedge_change_events_total\{source="follower",type="log\/protect"\} [1-9]/);
    expect(text).toMatch(/wikiedge_invalidated_entries_total\{cause="user"\} [1-9]/);
    expect(text).toMatch(/wikiedge_change_follower_leader 1/);
    expect(text).toMatch(/wikiedge_invalidation_lag_seconds_count\{source="follower"\} [1-9]/);
  });
});
