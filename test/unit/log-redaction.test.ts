// Credentials never reach a log line: cookies, authorization and set-cookie are censored
// wherever the gateway could log a headers object (top level, req/res, an error and its cause).
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/observe/logging.js';

function capture() {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(chunk.toString('utf8'));
      done();
    },
  });
  return { log: createLogger('info', { destination: sink }), lines };
}

const credentials = {
  cookie: 'wiki_session=SECRET-COOKIE',
  authorization: 'Bearer SECRET-TOKEN',
  'set-cookie': ['wiki_session=SECRET-SET; HttpOnly'],
  'proxy-authorization': 'Basic SECRET-PROXY',
  'content-type': 'application/json',
};

describe('log redaction', () => {
  it.each([
    ['top-level headers', { headers: credentials }],
    ['request headers', { req: { headers: credentials } }],
    ['response headers', { res: { headers: credentials } }],
  ])('censors credentials in %s', (_name, object) => {
    const { log, lines } = capture();
    log.info(object, 'line');
    expect(lines.join('')).not.toMatch(/SECRET/);
    expect(lines.join('')).toContain('[redacted]');
    expect(lines.join('')).toContain('application/json'); // the rest stays readable
  });

  it("censors the headers an error carries, and its cause's", () => {
    const { log, lines } = capture();
    const cause = Object.assign(new Error('upstream said no'), { headers: credentials });
    const err = Object.assign(new Error('fetch failed', { cause }), { headers: credentials });
    log.error({ err }, 'upstream failure');
    expect(lines.join('')).not.toMatch(/SECRET/);
    expect(lines.join('')).toContain('fetch failed');
  });
});
