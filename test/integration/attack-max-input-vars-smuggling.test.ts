// Security round 3 (docs/SECURITY.md, class 24; commit aee9aa7): PHP reads at most max_input_vars variables of a
// query string, a form body or the Cookie header; the gateway parsed them with PHP's default
// (1,000) and keyed on what it read. A wiki whose php.ini allows more (many raise it) reads past
// that: 997 × `&=` pushed a second `titles=` out of the gateway's sight but not the wiki's, and
// the wiki's answer about the attacker's page was stored under the clean URL for everyone; 1,000
// × `a;` before a session cookie made a logged-in request look anonymous, and its answer was
// stored in the shared tier. Past the limit the gateway now passes (never caches) and treats the
// cookies as credentials it cannot read.
import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type RunningGateway, startGateway } from '../support/gateway.js';
import { header, http } from '../support/http.js';
import { LAB_USER, LAB_USER_PASS, loginCookies } from '../support/wiki.js';

const data = inject('wikiData');
const wiki = inject('wikiUrl');

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
  });
}

describe('a wiki that reads more than 1,000 input variables', () => {
  let php: ChildProcess;
  let roomyWiki: string;
  let gw: RunningGateway;

  beforeAll(async () => {
    // The suite's wiki, served once more by a php -S whose max_input_vars is raised.
    const port = await freePort();
    php = spawn('php', ['-d', 'max_input_vars=5000', '-S', `127.0.0.1:${port}`, '-t', path.join(data, 'docroot'), path.join(data, 'router.php')], {
      stdio: 'ignore',
      env: { ...process.env, PHP_CLI_SERVER_WORKERS: '2' },
      // A group of its own: the workers outlive a SIGTERM to the master alone (scripts/wiki/stop.sh).
      detached: true,
    });
    roomyWiki = `http://127.0.0.1:${port}`;
    for (let i = 0; i < 200; i++) {
      const up = await http(`${roomyWiki}/w/api.php?action=query&format=json`).then(
        (r) => r.status === 200,
        () => false,
      );
      if (up) break;
      await sleep(50);
    }
    gw = await startGateway(roomyWiki);
  });
  afterAll(async () => {
    await gw?.close();
    if (php?.pid !== undefined) {
      const group = -php.pid;
      const exited = new Promise((resolve) => php.once('exit', resolve));
      process.kill(group, 'SIGTERM');
      await Promise.race([exited, sleep(5_000)]);
      try {
        process.kill(group, 'SIGKILL');
      } catch {
        // Gone already.
      }
    }
  });

  it('a query smuggling a second titles= past the 1,000th variable is passed, and the clean URL is not poisoned', async () => {
    const clean = 'action=query&titles=Main_Page&format=json&formatversion=2';
    const smuggled = `${clean}${'&='.repeat(997)}&titles=File:Lab-kept.png`;
    const attack = await http(`${gw.apiUrl}?${smuggled}`);
    // The wiki read the smuggled title (that is the threat); the gateway did not keep it.
    expect(JSON.parse(attack.body).query.pages[0].title).toBe('File:Lab-kept.png');
    expect(header(attack, 'x-cache')).toBe('pass');
    const victim = await http(`${gw.apiUrl}?${clean}`);
    expect(JSON.parse(victim.body).query.pages[0].title).toBe('Main Page');
  });

  it('1,000 cookies before a session cookie: not taken for an anonymous request, its answer not shared', async () => {
    const session = await loginCookies(wiki, LAB_USER, LAB_USER_PASS);
    // A public answer for a logged-in user (siteinfo), which only a user may have (assert=user).
    const q = `action=query&meta=siteinfo&siprop=namespaces&uselang=content&assert=user&format=json&formatversion=2&requestid=${Date.now()}`;
    const attack = await http(`${gw.apiUrl}?${q}`, { headers: { cookie: `${'a;'.repeat(1000)} ${session}` } });
    expect(JSON.parse(attack.body).error).toBeUndefined();
    expect(header(attack, 'x-cache')).toBe('pass');
    const anonymous = await http(`${gw.apiUrl}?${q}`);
    expect(JSON.parse(anonymous.body).error?.code).toBe('assertuserfailed');
  });
});
