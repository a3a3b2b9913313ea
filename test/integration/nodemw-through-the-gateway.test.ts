// A second real client library from the npm registry (nodemw 0.27, request's cookie jar, the
// legacy action=login with a bot password, form-encoded POSTs) through the gateway, beside an
// anonymous nodemw reader of the same pages: everything each sees is what it sees straight at
// the wiki. The bot's userinfo never reaches the anonymous reader; the anonymous reader's
// repeated read is answered by the gateway (the wiki sees it once) and still shows another
// user's edit and then the bot's own at once (the wiki's PURGEs through $wgCdnServers); the
// bot's read-modify-write after the other user's edit succeeds.
import { randomUUID } from 'node:crypto';
import nodemw from 'nodemw';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type RunningGateway, startGateway } from '../support/gateway.js';
import {
  ADMIN_PASS,
  ADMIN_USER,
  BOT_LOGIN,
  BOT_PASS,
  LAB_USER,
  LAB_USER_PASS,
  apiWrite,
  loginCookies,
  setWikiToggle,
  upstreamRequestCount,
} from '../support/wiki.js';

const wiki = inject('wikiUrl');
const data = inject('wikiData');

/** The parts of nodemw's Bot used here, as callbacks become promises (its own .d.ts leaves out `api`). */
interface NodemwBot {
  logIn(user: string, pass: string, cb: (err: Error | null, data?: unknown) => void): void;
  whoami(cb: (err: Error | null, info?: { id: number; name: string; anon?: unknown }) => void): void;
  getArticle(title: string, cb: (err: Error | null, content?: string) => void): void;
  edit(title: string, content: string, summary: string, cb: (err: Error | null, data?: { result?: string }) => void): void;
  getSiteInfo(props: string[], cb: (err: Error | null, info?: { general?: { sitename?: string } }) => void): void;
  api: { call(params: Record<string, string>, cb: (err: Error | null, data?: Record<string, unknown>) => void, method?: string): void };
}

function client(base: string): NodemwBot {
  const url = new URL(base);
  const Bot = nodemw as unknown as new (options: object) => NodemwBot;
  return new Bot({ protocol: 'http', server: url.hostname, port: Number(url.port), path: '/w', userAgent: 'wikiedge-test (nodemw)' });
}

function promised<T>(call: (cb: (err: Error | null, value?: T) => void) => void): Promise<T> {
  return new Promise((resolve, reject) => call((err, value) => (err ? reject(err) : resolve(value as T))));
}

/** A plain anonymous read of the page's text, no cache-busting parameter (getArticle adds `rand`). */
async function readText(reader: NodemwBot, title: string): Promise<string> {
  const answer = await promised<Record<string, unknown>>((cb) => reader.api.call({ action: 'query', prop: 'revisions', rvprop: 'content', titles: title }, cb));
  const pages = answer['pages'] as Record<string, { revisions?: { '*': string }[] }>;
  return Object.values(pages)[0]?.revisions?.[0]?.['*'] ?? '(none)';
}

/** Requests for this page's anonymous read that reached the wiki. */
const wikiReadsOf = (title: string) =>
  upstreamRequestCount(data, (line) => line.includes(encodeURIComponent(title)) && line.includes('rvprop=content') && !line.includes('rand='));

async function scenario(base: string) {
  const title = `Nodemw ${randomUUID()}`;
  const admin = await loginCookies(wiki, ADMIN_USER, ADMIN_PASS);
  await apiWrite(wiki, admin, { action: 'edit', title, text: 'start' });
  const anon = client(base);
  const bot = client(base);
  const before = await promised<{ id: number; name: string; anon?: unknown }>((cb) => anon.whoami(cb));
  await promised((cb) => bot.logIn(BOT_LOGIN, BOT_PASS, cb));
  const botInfo = await promised<{ id: number; name: string }>((cb) => bot.whoami(cb));
  const after = await promised<{ id: number; name: string; anon?: unknown }>((cb) => anon.whoami(cb));

  const wikiReadsBefore = await wikiReadsOf(title);
  const firstRead = await readText(anon, title);
  const secondRead = await readText(anon, title);
  const wikiReadsForTwo = (await wikiReadsOf(title)) - wikiReadsBefore;

  const other = await loginCookies(wiki, LAB_USER, LAB_USER_PASS);
  await apiWrite(wiki, other, { action: 'edit', title, text: 'changed by someone else' });
  const afterOtherEdit = await readText(anon, title);

  const botSaw = await promised<string>((cb) => bot.getArticle(title, cb));
  const edit = await promised<{ result?: string }>((cb) => bot.edit(title, `${botSaw} + bot`, 'nodemw through wikiedge', cb));
  const afterBotEdit = await readText(anon, title);
  const site = await promised<{ general?: { sitename?: string } }>((cb) => anon.getSiteInfo(['general'], cb));
  return {
    anonBefore: { id: before.id, anon: before.anon !== undefined },
    bot: { id: botInfo.id > 0, name: botInfo.name },
    anonAfter: { id: after.id, anon: after.anon !== undefined },
    reads: [firstRead, secondRead, afterOtherEdit],
    wikiReadsForTwo,
    botSaw,
    edit: edit.result,
    afterBotEdit,
    sitename: typeof site.general?.sitename,
  };
}

describe('nodemw through the gateway', () => {
  let gw: RunningGateway;
  beforeAll(async () => {
    gw = await startGateway(wiki);
    await setWikiToggle(data, { cdn: [`127.0.0.1:${new URL(gw.url).port}`] });
  });
  afterAll(async () => {
    await setWikiToggle(data, { cdn: [] });
    await gw.close();
  });

  const expected = (wikiReadsForTwo: number) => ({
    anonBefore: { id: 0, anon: true },
    bot: { id: true, name: ADMIN_USER },
    anonAfter: { id: 0, anon: true },
    reads: ['start', 'start', 'changed by someone else'],
    wikiReadsForTwo,
    botSaw: 'changed by someone else',
    edit: 'Success',
    afterBotEdit: 'changed by someone else + bot',
    sitename: 'string',
  });

  it('straight at the wiki (the reference): every read reaches it', async () => {
    expect(await scenario(wiki)).toEqual(expected(2));
  });

  it('through the gateway: the same answers, the repeated anonymous read answered from the cache', async () => {
    expect(await scenario(gw.url)).toEqual(expected(1));
  });
});
