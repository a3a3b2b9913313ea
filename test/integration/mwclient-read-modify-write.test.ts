// A real MediaWiki client library from Debian (python3-mwclient 0.10) through the gateway: the
// issue's own case. A bot reads a page with `Page.text()`, another user edits it straight at the
// wiki, and the bot's `Page.text()` then `Page.edit()` succeeds with one edit request, as it does
// straight at the wiki. mwclient edits with basetimestamp from its last read: a read served from
// before the other user's edit is an edit conflict (EditError), and it never retries one.
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type RunningGateway, startGateway } from '../support/gateway.js';
import { ADMIN_PASS, ADMIN_USER, BOT_LOGIN, BOT_PASS, LAB_USER, LAB_USER_PASS, apiWrite, loginCookies, setWikiToggle } from '../support/wiki.js';

const wiki = inject('wikiUrl');
const data = inject('wikiData');
/** Debian's interpreter, where python3-mwclient lives (scripts/install-system-deps.sh). */
const PYTHON = process.env['WIKIEDGE_TEST_PYTHON'] ?? '/usr/bin/python3';
const SCRIPT = path.join(import.meta.dirname, '../support/mwclient-rmw.py');

interface Outcome {
  first: string;
  seen: string;
  result: string;
  error: string | null;
  edits: number;
  final: string;
}

async function scenario(botHost: string): Promise<Outcome> {
  const title = `Mwclient rmw ${randomUUID()}`;
  const admin = await loginCookies(wiki, ADMIN_USER, ADMIN_PASS);
  await apiWrite(wiki, admin, { action: 'edit', title, text: 'start' });
  const { stdout } = await promisify(execFile)(PYTHON, [SCRIPT, botHost, new URL(wiki).host, title], {
    env: { ...process.env, BOT_USER: BOT_LOGIN, BOT_PASS, OTHER_USER: LAB_USER, OTHER_PASS: LAB_USER_PASS },
    timeout: 60_000,
  });
  return JSON.parse(stdout) as Outcome;
}

describe('mwclient read-modify-write after another user`s edit', () => {
  let gw: RunningGateway;
  beforeAll(async () => {
    gw = await startGateway(wiki);
    await setWikiToggle(data, { cdn: [`127.0.0.1:${new URL(gw.url).port}`] });
  });
  afterAll(async () => {
    await setWikiToggle(data, { cdn: [] });
    await gw.close();
  });

  const expected = { first: 'start', seen: 'changed by someone else', result: 'Success', error: null, edits: 1, final: 'changed by someone else + bot' };

  it('straight at the wiki (the reference)', async () => {
    expect(await scenario(new URL(wiki).host)).toEqual(expected);
  });

  it('through the gateway', async () => {
    expect(await scenario(new URL(gw.url).host)).toEqual(expected);
  });
});
