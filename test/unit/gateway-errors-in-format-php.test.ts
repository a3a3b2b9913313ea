// A client that asks for format=php (old bots, PHP tools) reads the gateway's own errors as it
// reads the wiki's: PHP's serialize() of MediaWiki's error shape, with ApiFormatPhp's MIME type,
// not JSON it would fail to unserialize.
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { GatewayError, phpSerialize, renderApiError } from '../../src/words/errors.js';

const hasPhp = (() => {
  try {
    execFileSync('php', ['-v'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

/** What PHP makes of `text`: unserialize() then serialize() again (false: it could not read it). */
function throughPhp(text: string): string {
  return execFileSync('php', ['-r', '$v = unserialize($argv[1]); echo $v === false ? "false" : serialize($v);', '--', text], { encoding: 'utf8' });
}

describe('gateway errors for format=php', () => {
  const err = new GatewayError('wikiedge-upstream-unreachable');

  it('formatversion 1: the bc error, its docref under *, as application/vnd.php.serialized', () => {
    const r = renderApiError(err, { format: 'php' });
    expect(r.status).toBe(502);
    expect(r.headers['content-type']).toBe('application/vnd.php.serialized; charset=utf-8');
    expect(r.headers['mediawiki-api-error']).toBe('wikiedge-upstream-unreachable');
    expect(r.body).toBe(
      'a:1:{s:5:"error";a:3:{s:4:"code";s:29:"wikiedge-upstream-unreachable";s:4:"info";s:30:"The wiki could not be reached.";s:1:"*";s:69:"This error was produced by the wikiedge gateway in front of the wiki.";}}',
    );
  });

  it('errorformat=plaintext, formatversion 2: the errors list', () => {
    const r = renderApiError(err, { format: 'php', errorformat: 'plaintext', formatversion: '2' });
    expect(r.body).toBe(
      'a:2:{s:6:"errors";a:1:{i:0;a:3:{s:4:"code";s:29:"wikiedge-upstream-unreachable";s:4:"text";s:30:"The wiki could not be reached.";s:6:"module";s:4:"main";}}s:6:"docref";s:69:"This error was produced by the wikiedge gateway in front of the wiki.";}',
    );
  });

  it('string lengths are UTF-8 bytes, as PHP counts them', () => {
    expect(phpSerialize({ é: ['ü', 'a"b'] })).toBe('a:1:{s:2:"é";a:2:{i:0;s:2:"ü";i:1;s:3:"a"b";}}');
  });

  it.skipIf(!hasPhp).each([{}, { formatversion: '2' }, { errorformat: 'plaintext' }, { errorformat: 'plaintext', formatversion: '2' }])(
    'PHP reads it back unchanged (%o)',
    (fmt) => {
      const body = renderApiError(new GatewayError('wikiedge-bad-request', { info: 'Ünïcode "quoted" ; {braces}' }), { format: 'php', ...fmt }).body;
      expect(throughPhp(body)).toBe(body);
    },
  );
});
