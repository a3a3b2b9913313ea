// What GET /cache reads back from a cache key (src/cache/inspect.ts keyParts) is what
// policy/request.ts cacheKey put in it: a change of the key's layout fails here first.
import { describe, expect, it } from 'vitest';
import { keyParts } from '../../src/cache/inspect.js';
import { cacheKey } from '../../src/policy/request.js';

describe('keyParts', () => {
  it('an anonymous key: the URL key, no slot, the keyed headers', () => {
    const key = cacheKey(
      '/w/api.php?action=query',
      { kind: 'anonymous', loginSuppressed: false, carriesCredentials: false },
      {
        forwardedProto: 'https',
        treatAsUntrusted: '',
        origin: undefined,
        acceptVariants: 'zh-tw;',
      },
    );
    expect(keyParts(key)).toEqual({
      urlKey: '/w/api.php?action=query',
      slot: undefined,
      keyedHeaders: { forwardedProto: 'https', treatAsUntrusted: '', origin: null, acceptVariants: 'zh-tw;' },
    });
  });

  it('a session’s key: its slot, told apart from its variant', () => {
    const key = cacheKey(
      '/w/api.php?action=query&meta=userinfo',
      { kind: 'session', slot: 'SlotHmac_x', variant: 'v1', unknownCredential: false },
      {
        forwardedProto: 'http',
        treatAsUntrusted: undefined,
        origin: 'https://example.org',
        acceptVariants: undefined,
      },
    );
    expect(keyParts(key)).toEqual({
      urlKey: '/w/api.php?action=query&meta=userinfo',
      slot: 'SlotHmac_x',
      keyedHeaders: { forwardedProto: 'http', treatAsUntrusted: null, origin: 'https://example.org', acceptVariants: null },
    });
  });
});
