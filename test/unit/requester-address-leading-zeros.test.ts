// requesterAddressForms rewrites only the IPv4 addresses with a leading zero in an octet: every
// other one is its own canonical form. The forms are those of IPUtils::sanitizeIP either way.
import { describe, expect, it } from 'vitest';
import { requesterAddressForms } from '../../src/mediawiki/requester-address.js';

describe('requesterAddressForms and leading zeros', () => {
  it.each([
    ['203.0.113.7', ['203.0.113.7']],
    ['0.1.2.3', ['0.1.2.3']],
    ['10.0.0.10', ['10.0.0.10']],
    ['100.64.0.1', ['100.64.0.1']],
    ['00.1.2.3', ['00.1.2.3', '0.1.2.3']],
    ['203.000.113.007', ['203.000.113.007', '203.0.113.7']],
    ['010.001.002.003', ['010.001.002.003', '10.1.2.3']],
    ['127.000.0.1', []],
    ['0127.0.0.1', []],
    ['256.0.0.1', []],
    ['0256.0.0.1', []],
  ])('%s → %j', (address, forms) => {
    expect(requesterAddressForms(address)).toEqual(forms);
  });
});
