// What the wiki itself says identifies a user (scripts/wiki/vary-cookies.php: every session
// provider's vary cookies and headers, SessionManager::getVaryCookies()) is, cookie by cookie,
// a credential the gateway knows by itself: not one left to the credential net.
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, inject, it } from 'vitest';
import { cookieCredentialKind, identityRules } from '../../src/mediawiki/identity.js';

const execFileP = promisify(execFile);

describe('the wiki`s own vary cookies', () => {
  it('are all known credentials of the gateway`s default rules', async () => {
    const conf = path.join(inject('wikiData'), 'LocalSettings.php');
    const { stdout, stderr } = await execFileP('php', ['scripts/wiki/vary-cookies.php', '--conf', conf]);
    const report = JSON.parse(stdout) as { cookiePrefix: string; sessionName: string; varyCookies: string[]; varyHeaders: string[]; providers: string[] };
    expect(report.providers).toContain('MediaWiki\\Session\\BotPasswordSessionProvider');
    expect(report.varyCookies).toContain(`${report.cookiePrefix}_BPsession`);
    const rules = identityRules({ cookiePrefix: report.cookiePrefix, sessionName: report.sessionName, sessionJwtCookie: true, secret: Buffer.from('x') });
    for (const name of report.varyCookies) expect([name, cookieCredentialKind(name, rules)]).toEqual([name, 'known']);
    for (const h of report.varyHeaders) expect(rules.credentialHeaders).toContain(h);
    // Nothing to add for a default install: no WIKIEDGE_CREDENTIAL_COOKIES line.
    expect(stderr).toContain(`WIKIEDGE_COOKIE_PREFIX=${report.cookiePrefix}`);
    expect(stderr).not.toContain('WIKIEDGE_CREDENTIAL_COOKIES');
  });
});
