// Consistent with the wiki, through MediaWiki's own CDN PURGEs: with $wgCdnServers naming the
// gateway, MediaWiki sends a PURGE of each changed page's URLs through it before the write's
// answer. Every cached API answer that depends on the page is then fresh on the first read after
// the write's answer returned, for writes made straight at the wiki and through the gateway; the
// entries of unrelated pages stay hits.
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type RunningGateway, startGateway } from '../support/gateway.js';
import { header, http } from '../support/http.js';
import { ADMIN_PASS, ADMIN_USER, apiWrite, importImages, loginCookies, runJobs, setWikiToggle } from '../support/wiki.js';

const wiki = inject('wikiUrl');
const data = inject('wikiData');

describe('invalidation by the PURGEs MediaWiki sends', () => {
  let gw: RunningGateway;
  let admin: string;
  beforeAll(async () => {
    gw = await startGateway(wiki, {
      WIKIEDGE_UPLOAD_PATH: '/images',
      WIKIEDGE_MODULES: JSON.stringify({ filearchive: { shareAnonymousPrivate: true } }),
    });
    const { port } = new URL(gw.url);
    await setWikiToggle(data, { cdn: [`127.0.0.1:${port}`] });
    admin = await loginCookies(wiki, ADMIN_USER, ADMIN_PASS);
  });
  afterAll(async () => {
    await setWikiToggle(data, { cdn: [] });
    await gw.close();
  });

  const api = (q: string) => `${gw.apiUrl}?${q}&format=json&formatversion=2`;
  const read = async (q: string) => http(api(q));
  const content = async (title: string) => {
    const res = await read(`action=query&prop=revisions&rvprop=content&rvslots=main&titles=${encodeURIComponent(title)}`);
    const page = JSON.parse(res.body).query.pages[0];
    return { text: page.missing ? undefined : (page.revisions[0].slots.main.content as string), res };
  };
  /** Cache an answer, and check it is a hit now. */
  const cached = async (q: string) => {
    await gw.reboundsDone();
    await read(q);
    const again = await read(q);
    expect(header(again, 'x-cache'), q).toBe('hit');
    return JSON.parse(again.body);
  };
  const unrelated = async () => {
    const title = `Unrelated ${randomUUID()}`;
    await apiWrite(wiki, admin, { action: 'edit', title, text: 'untouched' });
    const q = `action=query&prop=info&titles=${encodeURIComponent(title)}`;
    await cached(q);
    return async () => expect(header(await read(q), 'x-cache'), 'an unrelated page stays a hit').toBe('hit');
  };

  it('an edit straight at the wiki: content, info, parse and the lists are fresh at once; unrelated pages stay hits', async () => {
    const title = `Purged ${randomUUID()}`;
    await apiWrite(wiki, admin, { action: 'edit', title, text: 'version one' });
    const stillHit = await unrelated();
    const t = encodeURIComponent(title);
    await cached(`action=query&prop=revisions&rvprop=content&rvslots=main&titles=${t}`);
    const info = await cached(`action=query&prop=info&titles=${t}`);
    await cached(`action=parse&page=${t}&prop=text`);
    await cached('action=query&list=recentchanges&rclimit=5&rcprop=title');
    await cached(`action=query&list=allpages&apprefix=${encodeURIComponent(title.slice(0, 12))}`);

    await apiWrite(wiki, admin, { action: 'edit', title, text: 'version two' });

    expect((await content(title)).text).toBe('version two');
    const infoAfter = JSON.parse((await read(`action=query&prop=info&titles=${t}`)).body);
    expect(infoAfter.query.pages[0].lastrevid).toBeGreaterThan(info.query.pages[0].lastrevid);
    expect((await read(`action=parse&page=${t}&prop=text`)).body).toContain('version two');
    const rc = JSON.parse((await read('action=query&list=recentchanges&rclimit=5&rcprop=title')).body);
    expect(rc.query.recentchanges[0].title).toBe(title);
    await stillHit();
  });

  it('a page created straight at the wiki shows in allpages at once', async () => {
    const prefix = `Fresh list ${randomUUID().slice(0, 8)}`;
    const q = `action=query&list=allpages&apprefix=${encodeURIComponent(prefix)}`;
    expect((await cached(q)).query.allpages).toEqual([]);
    await apiWrite(wiki, admin, { action: 'edit', title: `${prefix} a`, text: 'x' });
    expect(JSON.parse((await read(q)).body).query.allpages.map((p: { title: string }) => p.title)).toEqual([`${prefix} a`]);
  });

  it('a move straight at the wiki: both titles fresh', async () => {
    const from = `Move from ${randomUUID()}`;
    const to = `Move to ${randomUUID()}`;
    await apiWrite(wiki, admin, { action: 'edit', title: from, text: 'moving' });
    await cached(`action=query&prop=info&titles=${encodeURIComponent(from)}`);
    await cached(`action=query&prop=info&titles=${encodeURIComponent(to)}`);
    await apiWrite(wiki, admin, { action: 'move', from, to, noredirect: '1' });
    expect(JSON.parse((await read(`action=query&prop=info&titles=${encodeURIComponent(from)}`)).body).query.pages[0].missing).toBe(true);
    expect(JSON.parse((await read(`action=query&prop=info&titles=${encodeURIComponent(to)}`)).body).query.pages[0].missing).toBeUndefined();
  });

  it('a talk page created straight at the wiki: the subject`s talkid is fresh at once (the wiki purges both pages); an edit of the talk page leaves the subject`s answer', async () => {
    const title = `Subject ${randomUUID()}`;
    await apiWrite(wiki, admin, { action: 'edit', title, text: 'subject' });
    const q = `action=query&prop=info&inprop=talkid&titles=${encodeURIComponent(title)}`;
    expect((await cached(q)).query.pages[0].talkid).toBeUndefined();
    await apiWrite(wiki, admin, { action: 'edit', title: `Talk:${title}`, text: 'created' });
    expect(JSON.parse((await read(q)).body).query.pages[0].talkid).toEqual(expect.any(Number));
    await cached(q);
    await apiWrite(wiki, admin, { action: 'edit', title: `Talk:${title}`, text: 'edited' });
    const talk = await content(`Talk:${title}`);
    expect(talk.text).toBe('edited');
    expect(header(await read(q), 'x-cache'), 'the subject after its talk page`s edit').toBe('hit');
  });

  it('a delete and an undelete straight at the wiki: fresh each time', async () => {
    const title = `Deleted ${randomUUID()}`;
    await apiWrite(wiki, admin, { action: 'edit', title, text: 'to be deleted' });
    await cached(`action=query&prop=revisions&rvprop=content&rvslots=main&titles=${encodeURIComponent(title)}`);
    await apiWrite(wiki, admin, { action: 'delete', title });
    expect((await content(title)).text).toBeUndefined();
    await apiWrite(wiki, admin, { action: 'undelete', title });
    expect((await content(title)).text).toBe('to be deleted');
  });

  it('a page the gateway never heard of, deleted straight at the wiki: the lists that showed it are fresh (the deletion log names it)', async () => {
    const prefix = `Unseen ${randomUUID().slice(0, 8)}`;
    const title = `${prefix} a`;
    // Created while the wiki sends no PURGE: the gateway has never asked about the page.
    await setWikiToggle(data, { cdn: [] });
    try {
      await apiWrite(wiki, admin, { action: 'edit', title, text: 'never purged' });
    } finally {
      await setWikiToggle(data, { cdn: [`127.0.0.1:${new URL(gw.url).port}`] });
    }
    const q = `action=query&list=allpages&apprefix=${encodeURIComponent(prefix)}`;
    expect((await cached(q)).query.allpages.map((p: { title: string }) => p.title)).toEqual([title]);
    await apiWrite(wiki, admin, { action: 'delete', title });
    expect(JSON.parse((await read(q)).body).query.allpages).toEqual([]);
  });

  it('PURGEs of pages that never existed (anyone can have the wiki send them: PurgeAction) empty no list', async () => {
    const stillHit = await unrelated();
    const q = 'action=query&list=allpages&aplimit=3';
    await cached(q);
    for (let i = 0; i < 3; i++) {
      const res = await http(`${gw.url}/w/index.php?title=${encodeURIComponent(`Never existed ${randomUUID()}`)}&action=history`, { method: 'PURGE' });
      expect(res.status).toBe(200);
    }
    await gw.built.gateway.purgeConfirmations.settled();
    await gw.reboundsDone();
    expect(header(await read(q), 'x-cache')).toBe('hit');
    await stillHit();
  });

  it('an upload and a file deletion straight at the wiki: imageinfo and filearchive fresh', async () => {
    const name = `Purge-${randomUUID().slice(0, 8)}.png`;
    const dir = await mkdtemp(path.join(tmpdir(), 'wikiedge-upload-'));
    try {
      // A 1×1 PNG.
      const png = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');
      await (await import('node:fs/promises')).writeFile(path.join(dir, name), png);
      const iq = `action=query&prop=imageinfo&iiprop=size&titles=${encodeURIComponent(`File:${name}`)}`;
      expect((await cached(iq)).query.pages[0].missing).toBe(true);
      const fa = 'action=query&list=filearchive&falimit=max';
      await cached(fa);
      await importImages(data, dir);
      expect(JSON.parse((await read(iq)).body).query.pages[0].imageinfo[0].width).toBe(1);
      await apiWrite(wiki, admin, { action: 'delete', title: `File:${name}` });
      const archived = JSON.parse((await read(fa)).body).query.filearchive.map((f: { name: string }) => f.name);
      expect(archived).toContain(name);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('writes through the gateway: fresh for the writer and everyone, even a protection (MediaWiki purges nothing for it)', async () => {
    const title = `Protected ${randomUUID()}`;
    await apiWrite(gw.url, admin, { action: 'edit', title, text: 'x' });
    const q = `action=query&prop=info&inprop=protection&titles=${encodeURIComponent(title)}`;
    expect((await cached(q)).query.pages[0].protection).toEqual([]);
    await apiWrite(gw.url, admin, { action: 'protect', title, protections: 'edit=sysop', expiry: 'infinite' });
    const after = JSON.parse((await read(q)).body).query.pages[0].protection;
    expect(after.map((p: { type: string }) => p.type)).toEqual(['edit']);
  });

  it('a write posted as multipart/form-data through the gateway is read-your-writes too (the form read as PHP reads it)', async () => {
    const title = `Protected multipart ${randomUUID()}`;
    await apiWrite(gw.url, admin, { action: 'edit', title, text: 'x' });
    const q = `action=query&prop=info&inprop=protection&titles=${encodeURIComponent(title)}`;
    expect((await cached(q)).query.pages[0].protection).toEqual([]);
    const tokens = await http(`${gw.apiUrl}?action=query&meta=tokens&format=json`, { headers: { cookie: admin } });
    const form = new FormData();
    for (const [name, value] of Object.entries({ action: 'protect', title, protections: 'edit=sysop', expiry: 'infinite', format: 'json' }))
      form.append(name, value);
    form.append('token', JSON.parse(tokens.body).query.tokens.csrftoken as string);
    // Everything in the body, nothing in the query: the gateway must read the multipart form.
    const res = await fetch(gw.apiUrl, { method: 'POST', headers: { cookie: admin }, body: form });
    expect(((await res.json()) as { protect?: unknown }).protect).toBeDefined();
    const after = JSON.parse((await read(q)).body).query.pages[0].protection;
    expect(after.map((p: { type: string }) => p.type)).toEqual(['edit']);
  });

  it('a write whose form is too large to be held (streamed on as it came) still refreshes the lists any change alters', async () => {
    // A gateway of its own, which MediaWiki sends no PURGE to: what it refreshes, the write did.
    const small = await startGateway(wiki, { WIKIEDGE_REQUEST_BODY_BUFFER_BYTES: '1024' });
    try {
      const list = `${small.apiUrl}?action=query&list=allpages&apnamespace=0&aplimit=max&format=json&formatversion=2`;
      await http(list);
      expect(header(await http(list), 'x-cache')).toBe('hit');
      const title = `Streamed ${randomUUID()}`;
      const tokens = await http(`${small.apiUrl}?action=query&meta=tokens&format=json`, { headers: { cookie: admin } });
      const form = new FormData();
      for (const [name, value] of Object.entries({ action: 'edit', title, text: 'long '.repeat(1000), format: 'json' })) form.append(name, value);
      form.append('token', JSON.parse(tokens.body).query.tokens.csrftoken as string);
      const res = await fetch(small.apiUrl, { method: 'POST', headers: { cookie: admin }, body: form });
      expect(((await res.json()) as { edit?: { result?: string } }).edit?.result).toBe('Success');
      const after = await http(list);
      expect(header(after, 'x-cache')).toBe('miss');
      expect(JSON.parse(after.body).query.allpages.map((p: { title: string }) => p.title)).toContain(title);
    } finally {
      await small.close();
    }
  });

  it('an anonymous POST too large to be held (a parse of a long text), or any read given a token, empties no list', async () => {
    const small = await startGateway(wiki, { WIKIEDGE_REQUEST_BODY_BUFFER_BYTES: '1024' });
    try {
      const list = `${small.apiUrl}?action=query&list=allpages&apnamespace=0&aplimit=5&format=json&formatversion=2`;
      await http(list);
      expect(header(await http(list), 'x-cache')).toBe('hit');
      const form = new FormData();
      for (const [name, value] of Object.entries({ action: 'parse', text: 'long '.repeat(1000), contentmodel: 'wikitext', format: 'json' }))
        form.append(name, value);
      expect((await fetch(small.apiUrl, { method: 'POST', body: form })).status).toBe(200);
      const check = await http(`${small.apiUrl}?action=checktoken&type=csrf&token=x&format=json`, { method: 'POST' });
      expect(check.status).toBe(200);
      expect(header(await http(list), 'x-cache')).toBe('hit');
    } finally {
      await small.close();
    }
  });

  it('a template edit refreshes the parse of a page that transcludes it once the wiki`s job has run', async () => {
    const template = `Template:Purge tpl ${randomUUID().slice(0, 8)}`;
    const page = `Uses template ${randomUUID()}`;
    await apiWrite(wiki, admin, { action: 'edit', title: template, text: 'TEMPLATE ONE' });
    await apiWrite(wiki, admin, { action: 'edit', title: page, text: `{{${template.slice('Template:'.length)}}}` });
    await runJobs(data);
    const q = `action=parse&page=${encodeURIComponent(page)}&prop=text`;
    expect(JSON.stringify(await cached(q))).toContain('TEMPLATE ONE');
    // MediaWiki keeps its own parse unless it is older than page_touched, both to the second
    // (CacheTime::expired: `getCacheTime() < $touched`): a template edit whose job runs in the
    // second of that parse leaves the old text, straight at the wiki too. Start in the next one.
    await sleep(1_050 - (Date.now() % 1_000));
    await apiWrite(wiki, admin, { action: 'edit', title: template, text: 'TEMPLATE TWO' });
    await runJobs(data);
    expect((await read(q)).body).toContain('TEMPLATE TWO');
  });

  it('counts what it did', async () => {
    const text = (await http(`${gw.adminUrl}/metrics`)).body;
    expect(text).toMatch(/wikiedge_change_events_total\{source="purge",type="purge"\} [1-9]/);
    expect(text).toMatch(/wikiedge_invalidated_entries_total\{cause="purge"\} [1-9]/);
    // Two protections through the gateway: one form-encoded, one multipart.
    expect(text).toMatch(/wikiedge_change_events_total\{source="write",type="protect"\} 2/);
  });
});
