// The recv step's memo (steps/recv.ts) forgets its oldest targets first when more than 2,000
// parsed requests are held, whichever methods they were remembered for.
import type { FastifyRequest } from 'fastify';
import { describe, expect, it } from 'vitest';
import { identityRules } from '../../src/mediawiki/identity.js';
import { moduleLabeller } from '../../src/observe/metrics.js';
import { recv, type RecvParts, recvMemoSize, rememberedRecv } from '../../src/steps/recv.js';
import { parseTarget } from '../../src/words/target.js';
import { AddressMatcher } from '../../src/words/address-list.js';

function gateway(): RecvParts {
  return {
    identityRules: identityRules({ cookiePrefix: 'wiki', sessionName: '', sessionJwtCookie: false, secret: Buffer.alloc(32, 1) }),
    trusted: new AddressMatcher([]),
    config: { modules: {}, apiPath: '/w/api.php' },
    metrics: { unknownCredentials: { inc() {} } } as unknown as RecvParts['metrics'],
    moduleLabel: moduleLabeller([]),
  };
}
const url = (i: number) => `/w/api.php?action=query&meta=siteinfo&format=json&requestid=${i}`;
const ask = (parts: RecvParts, method: 'GET' | 'HEAD', i: number) => recv(parts, { method, headers: {} } as unknown as FastifyRequest, parseTarget(url(i)));
const remembered = (parts: RecvParts, method: 'GET' | 'HEAD', i: number) => rememberedRecv(parts, method, {}, url(i)) !== undefined;

describe('the recv memo', () => {
  it('forgets the oldest targets first, again and again', () => {
    const parts = gateway();
    for (let i = 0; i < 7_000; i++) ask(parts, 'GET', i);
    expect(recvMemoSize(parts)).toBe(2_000);
    expect(remembered(parts, 'GET', 4_999)).toBe(false);
    for (let i = 5_000; i < 7_000; i++) expect(remembered(parts, 'GET', i)).toBe(true);
  });

  it('counts a target remembered for GET and HEAD twice, and forgets both together', () => {
    const parts = gateway();
    for (let i = 0; i < 1_000; i++) {
      ask(parts, 'GET', i);
      ask(parts, 'HEAD', i);
    }
    expect(recvMemoSize(parts)).toBe(2_000);
    // One more target: the oldest goes, its GET and its HEAD with it.
    ask(parts, 'GET', 1_000);
    expect(recvMemoSize(parts)).toBe(1_999);
    expect(remembered(parts, 'GET', 0)).toBe(false);
    expect(remembered(parts, 'HEAD', 0)).toBe(false);
    expect(remembered(parts, 'HEAD', 1)).toBe(true);
    expect(remembered(parts, 'GET', 1_000)).toBe(true);
  });

  it('answers a remembered request with the same recv step', () => {
    const parts = gateway();
    const first = ask(parts, 'GET', 1);
    expect(ask(parts, 'GET', 1)).toBe(first);
  });
});
