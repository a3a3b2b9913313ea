// Against the real wiki (commit d53e733 and the fixes before it): answers that name pages
// in ways the dependency table missed stayed stale for the whole long TTL of a followed wiki.
// Each case here was reproduced stale before the fix (a `hit` on the old answer after the
// change); now the change reaches it: through the follower (PURGEs off), or through the write
// the gateway itself relayed.
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type RunningGateway, startGateway } from '../support/gateway.js';
import { header, http } from '../support/http.js';
import { followerCaughtUp } from '../support/replicas.js';
import { until } from '../support/until.js';
import { ADMIN_PASS, ADMIN_USER, apiWrite, loginCookies } from '../support/wiki.js';

const wiki = inject('wikiUrl');

describe('pages named every way an answer can name them', () => {
  let gw: RunningGateway;
  let admin: string;
  beforeAll(async () => {
    gw = await startGateway(wiki, { WIKIEDGE_RC_FOLLOW: 'true', WIKIEDGE_RC_POLL_MS: '250' });
    admin = await loginCookies(wiki, ADMIN_USER, ADMIN_PASS);
    await until(
      async () => (await http(`${gw.adminUrl}/metrics`)).body,
      (m) => /wikiedge_change_follower_up 1/.test(m),
    );
  });
  afterAll(() => gw.close());

  const get = (q: string) => http(`${gw.apiUrl}?${q}&format=json&formatversion=2`);
  /** Cached: read until a hit (the follower may drop the first answer, fetched around a change). */
  const cached = async (q: string) => {
    await gw.reboundsDone();
    return until(
      () => get(q),
      (r) => header(r, 'x-cache') === 'hit',
    );
  };

  it('a bare action=query&titles= of a missing page: its creation', async () => {
    const title = `Bare query ${randomUUID()}`;
    const q = `action=query&titles=${encodeURIComponent(title)}`;
    expect(JSON.parse((await cached(q)).body).query.pages[0].missing).toBe(true);
    await apiWrite(wiki, admin, { action: 'edit', title, text: 'now here' });
    await until(
      () => get(q),
      (r) => JSON.parse(r.body).query.pages[0].missing === undefined,
    );
  });

  it('revids= of a deleted revision (badrevids): its undeletion', async () => {
    const title = `Deleted revision ${randomUUID()}`;
    const edit = (await apiWrite(wiki, admin, { action: 'edit', title, text: 'kept' })) as { edit: { newrevid: number } };
    await apiWrite(wiki, admin, { action: 'delete', title });
    await followerCaughtUp([gw]);
    const q = `action=query&revids=${edit.edit.newrevid}&prop=revisions&rvprop=ids`;
    expect(JSON.parse((await cached(q)).body).query.badrevids).toBeDefined();
    await apiWrite(wiki, admin, { action: 'undelete', title });
    await until(
      () => get(q),
      (r) => JSON.parse(r.body).query.badrevids === undefined,
    );
  });

  it('list=allredirects by the targets` namespace: a redirect made in another namespace', async () => {
    const q = `action=query&list=allredirects&arnamespace=2&arprop=title&arlimit=max&x=${randomUUID()}`;
    await followerCaughtUp([gw]);
    await cached(q);
    const redirect = `Redirect to a user page ${randomUUID()}`;
    await apiWrite(wiki, admin, { action: 'edit', title: redirect, text: `#REDIRECT [[User:${ADMIN_USER}]]` });
    await until(
      () => get(q),
      (r) => header(r, 'x-cache') !== 'hit',
    );
  });

  it('prop=info&inprop=talkid: the talk page`s creation (recentchanges names the talk page only)', async () => {
    const title = `Subject ${randomUUID()}`;
    await apiWrite(wiki, admin, { action: 'edit', title, text: 'subject' });
    // The subject's own creation applied first: only the talk page's may refresh the entry.
    await followerCaughtUp([gw]);
    const q = `action=query&prop=info&inprop=talkid&titles=${encodeURIComponent(title)}`;
    expect(JSON.parse((await cached(q)).body).query.pages[0].talkid).toBeUndefined();
    await apiWrite(wiki, admin, { action: 'edit', title: `Talk:${title}`, text: 'talk' });
    await until(
      () => get(q),
      (r) => typeof JSON.parse(r.body).query.pages[0].talkid === 'number',
    );
  });

  it('action=purge by pageids through the gateway (no recentchanges row): the page`s answers at once', async () => {
    const title = `Purged by id ${randomUUID()}`;
    const created = (await apiWrite(wiki, admin, { action: 'edit', title, text: 'x' })) as { edit: { pageid: number } };
    await followerCaughtUp([gw]);
    const q = `action=query&prop=info&titles=${encodeURIComponent(title)}`;
    const before = JSON.parse((await cached(q)).body).query.pages[0].touched as string;
    // page_touched has one-second resolution.
    await sleep(1_100);
    await apiWrite(gw.url, admin, { action: 'purge', pageids: String(created.edit.pageid) });
    const after = await get(q);
    expect(header(after, 'x-cache')).not.toBe('hit');
    expect(JSON.parse(after.body).query.pages[0].touched).not.toBe(before);
  });
});
