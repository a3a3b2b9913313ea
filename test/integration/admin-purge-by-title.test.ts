// POST /purge?title= on the admin listener, against the real wiki: every cached answer that depends
// on the page (its content, its info, its talk page's info) goes, as the wiki's own PURGE of the
// page removes them; an unrelated page's answer stays a hit. The title is read as MediaWiki reads
// one: any case of the namespace, underscores or spaces, a lowercase first letter.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type RunningGateway, startGateway } from '../support/gateway.js';
import { header, http } from '../support/http.js';
import { ADMIN_TOKEN, adminPost } from '../support/admin.js';
import { ADMIN_PASS, ADMIN_USER, apiWrite, loginCookies } from '../support/wiki.js';

const wiki = inject('wikiUrl');

describe('admin purge by page title', () => {
  let gw: RunningGateway;
  let admin: string;
  beforeAll(async () => {
    gw = await startGateway(wiki, { WIKIEDGE_ADMIN_TOKEN: ADMIN_TOKEN });
    admin = await loginCookies(wiki, ADMIN_USER, ADMIN_PASS);
  });
  afterAll(async () => {
    await gw.close();
  });

  const read = (q: string) => http(`${gw.apiUrl}?${q}&format=json&formatversion=2`);
  const cached = async (q: string) => {
    await gw.reboundsDone();
    await read(q);
    expect(header(await read(q), 'x-cache'), q).toBe('hit');
  };

  it('removes what depends on the page and its talk page, and leaves an unrelated page’s answer', async () => {
    const id = randomUUID();
    const title = `Purged by title ${id}`;
    const other = `Not purged ${id}`;
    for (const t of [title, other]) await apiWrite(wiki, admin, { action: 'edit', title: t, text: 'some text' });
    const dependent = [
      `action=query&prop=revisions&rvprop=content&rvslots=main&titles=${encodeURIComponent(title)}`,
      `action=query&prop=info&titles=${encodeURIComponent(title)}`,
      `action=query&prop=info&titles=${encodeURIComponent(`Talk:${title}`)}`,
      `action=parse&prop=text&page=${encodeURIComponent(title)}`,
    ];
    const unrelated = `action=query&prop=info&titles=${encodeURIComponent(other)}`;
    for (const q of [...dependent, unrelated]) await cached(q);

    // Spelled otherwise than the page is: lowercase first letter, underscores.
    const res = await adminPost(gw.adminUrl, '/purge', { title: `purged_by_title_${id}` });
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body)).toEqual({ purged: dependent.length });
    for (const q of dependent) expect(header(await read(q), 'x-cache'), q).toBe('miss');
    expect(header(await read(unrelated), 'x-cache')).toBe('hit');
  });

  it('the talk page’s title, in a lowercase namespace: the subject page’s answers go too', async () => {
    const title = `Talked about ${randomUUID()}`;
    await apiWrite(wiki, admin, { action: 'edit', title, text: 'subject' });
    const q = `action=query&prop=info&titles=${encodeURIComponent(title)}`;
    await cached(q);
    const res = await adminPost(gw.adminUrl, '/purge', { title: `talk:${title}` });
    expect(JSON.parse(res.body)).toEqual({ purged: 1 });
    expect(header(await read(q), 'x-cache')).toBe('miss');
  });
});
