// A gateway listening on `::`, or a proxy passing a dual-stack socket's address, sends the wiki
// X-Forwarded-For `::ffff:203.0.113.7`. MediaWiki canonicalizes it (WebRequest::getIP,
// IPUtils::canonicalize) and names the anonymous user `203.0.113.7`: an answer printing that
// name is the requester's alone. The forms looked for held only IPv6 spellings, so such an
// answer could be shared with the requester's address in it.
import { describe, expect, it } from 'vitest';
import { mentionsAny, requesterAddressForms } from '../../src/mediawiki/requester-address.js';

describe('an IPv4-mapped requester address', () => {
  it('is looked for in its IPv4 form too', () => {
    for (const address of ['::ffff:203.0.113.7', '::FFFF:203.0.113.7', '0:0:0:0:0:ffff:cb00:7107', '::ffff:cb00:7107']) {
      const forms = requesterAddressForms(address);
      expect(forms, address).toContain('203.0.113.7');
      expect(mentionsAny(Buffer.from('[[Special:Contributions/203.0.113.7|203.0.113.7]]'), forms), address).toBe(true);
    }
  });

  it('mapped loopback is no requester', () => {
    expect(requesterAddressForms('::ffff:127.0.0.1')).not.toContain('127.0.0.1');
  });
});
