// A real MediaWiki client library from the npm registry (mwn 3) through the gateway: a bot's
// read-modify-write right after another user's edit succeeds with one edit request, as it does
// straight at the wiki. mwn reads the page (GET, cached in the bot's session slot) and edits with
// basetimestamp/starttimestamp from that read; a read served from before the other user's edit
// is an edit conflict. Retries are off, so a conflict fails the test instead of hiding in a retry.
import { randomUUID } from 'node:crypto';
import { Mwn } from 'mwn';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type RunningGateway, startGateway } from '../support/gateway.js';
import { ADMIN_PASS, ADMIN_USER, BOT_LOGIN, BOT_PASS, LAB_USER, LAB_USER_PASS, apiWrite, loginCookies, setWikiToggle } from '../support/wiki.js';

const wiki = inject('wikiUrl');
const data = inject('wikiData');

async function bot(apiUrl: string): Promise<Mwn> {
  const b = new Mwn({
    apiUrl,
    username: BOT_LOGIN,
    password: BOT_PASS,
    userAgent: 'wikiedge-test (mwn)',
    defaultParams: { assert: 'user' },
    editConfig: { conflictRetries: 0, suppressNochangeWarning: true },
    maxRetries: 0,
  });
  b.setRequestOptions({ timeout: 30_000 });
  await b.login();
  return b;
}

describe('mwn read-modify-write after another user`s edit', () => {
  let gw: RunningGateway;
  let other: string;
  beforeAll(async () => {
    gw = await startGateway(wiki);
    const { port } = new URL(gw.url);
    await setWikiToggle(data, { cdn: [`127.0.0.1:${port}`] });
    other = await loginCookies(wiki, LAB_USER, LAB_USER_PASS);
  });
  afterAll(async () => {
    await setWikiToggle(data, { cdn: [] });
    await gw.close();
  });

  async function scenario(apiUrl: string) {
    const title = `Mwn rmw ${randomUUID()}`;
    const admin = await loginCookies(wiki, ADMIN_USER, ADMIN_PASS);
    await apiWrite(wiki, admin, { action: 'edit', title, text: 'start' });
    const b = await bot(apiUrl);
    // The bot reads the page the way its edit() does (and so fills its session slot).
    const readQuery = {
      action: 'query',
      titles: title,
      prop: 'revisions',
      rvprop: ['content', 'timestamp'],
      rvslots: 'main',
      formatversion: '2',
      curtimestamp: true,
    };
    const first = await b.request(readQuery);
    expect(first.query?.pages?.[0]?.revisions?.[0]?.slots?.main?.content).toBe('start');
    // Another user edits, straight at the wiki.
    await apiWrite(wiki, other, { action: 'edit', title, text: 'changed by someone else' });
    // The bot's read-modify-write: one read, one edit request, no conflict.
    let seen = '';
    const result = await b.edit(title, (rev) => {
      seen = rev.content;
      return `${rev.content} + bot`;
    });
    expect(seen).toBe('changed by someone else');
    expect(result.result).toBe('Success');
    const after = await b.read(title);
    expect(after.revisions?.[0]?.content).toBe('changed by someone else + bot');
  }

  it('straight at the wiki (the reference)', async () => {
    await scenario(`${wiki}/w/api.php`);
  });

  it('through the gateway', async () => {
    await scenario(gw.apiUrl);
  });
});
