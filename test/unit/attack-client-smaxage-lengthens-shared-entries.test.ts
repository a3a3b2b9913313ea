// MediaWiki sets a public answer's s-maxage from the request's own `smaxage` parameter
// (ApiMain::sendCacheHeaders), and the shared TTL followed it up to WIKIEDGE_TTL_MAX_SECONDS: any
// client sending `smaxage=86400` with cache-busting URLs stored answers for a day, within its
// budget of bytes stored per second (limits/client-budget.ts StoreBudget), until the shared tier's Redis was at
// its high-water mark and stored nothing more for anyone (cache/redis/memory.ts). A client's own
// smaxage now shortens a shared entry's life, never lengthens it past the operator's default.
import { describe, expect, it } from 'vitest';
import { headerFacts, storeVerdict } from '../../src/policy/policy.js';

const anonymous = { kind: 'anonymous', loginSuppressed: false, carriesCredentials: false } as const;
const answer = (sMaxAge: number) => ({
  status: 200,
  headers: {
    'content-type': 'application/json',
    'cache-control': `s-maxage=${sMaxAge}, max-age=0, public`,
    vary: 'Accept-Encoding, Treat-as-Untrusted, Cookie',
  },
});
const defaults = { ttlPublicSeconds: 60, ttlSessionSeconds: 10 };
const limits = { ttlMaxSeconds: 86_400, ttlJitterRatio: 0 };
const ttlSeconds = (sMaxAge: number, clientChose: boolean) => {
  const v = storeVerdict(headerFacts(answer(sMaxAge)), anonymous as never, {}, defaults, limits, () => 0, clientChose);
  return v.store ? v.ttlMs / 1000 : undefined;
};

describe('a client`s own smaxage', () => {
  it('keeps a shared entry no longer than the default TTL', () => {
    expect(ttlSeconds(86_400, true)).toBe(60);
  });
  it('may shorten it', () => {
    expect(ttlSeconds(30, true)).toBe(30);
  });
  it('a module`s own s-maxage (no smaxage parameter) is followed as before', () => {
    expect(ttlSeconds(3600, false)).toBe(3600);
  });
});
