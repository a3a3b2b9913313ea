// The request's own credential values are looked for in the answer (a debuginfo copy the
// stripper does not know, mediawiki/identity.ts credentialValues), one scan of the whole answer
// per value, synchronously. A client writes as many cookies whose names look like credentials as
// its head holds (~1,000 values of 8 characters under Node's 16 KiB): against a large answer,
// seconds of the event loop per request, every hit of the process waiting. Past MAX_ECHO_VALUES
// nothing is searched: the answer is taken as echoing one (never stored; refused if it carried
// debuginfo), which is where a request this strange belongs.
import { describe, expect, it } from 'vitest';
import { credentialValues, identityRules, MAX_ECHO_VALUES, mayEchoAny } from '../../src/mediawiki/identity.js';

const RULES = identityRules({ cookiePrefix: 'wiki', sessionName: '', sessionJwtCookie: false, secret: Buffer.alloc(32, 1) });

/** A large answer, and how many times it was searched. */
function countedBody(): { body: Buffer; scans: () => number } {
  const body = Buffer.alloc(1 << 20, 'a');
  let scans = 0;
  const includes = body.includes.bind(body);
  body.includes = ((...args: Parameters<Buffer['includes']>) => {
    scans++;
    return includes(...args);
  }) as Buffer['includes'];
  return { body, scans: () => scans };
}

describe('credential values of a request are searched for a bounded number of times', () => {
  const cookies = (n: number) => Array.from({ length: n }, (_, i) => `x${i}_token=v${String(i).padStart(8, '0')}`).join('; ');

  it('a thousand token cookies: no scan at all, and the answer counts as echoing one', () => {
    const values = credentialValues({ cookie: cookies(1_000) }, RULES);
    expect(values.length).toBeGreaterThan(MAX_ECHO_VALUES);
    const { body, scans } = countedBody();
    expect(mayEchoAny(body, values)).toBe(true);
    expect(scans()).toBe(0);
  });

  it('a browser`s few: each searched for, and an answer holding none is clean', () => {
    const values = credentialValues({ cookie: cookies(4) }, RULES);
    expect(values).toHaveLength(4);
    const { body, scans } = countedBody();
    expect(mayEchoAny(body, values)).toBe(false);
    expect(scans()).toBe(4);
    expect(mayEchoAny(Buffer.from(`{"echo":"${values[2]}"}`), values)).toBe(true);
  });
});
