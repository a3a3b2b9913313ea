/**
 * identityFromHeaders() answers a request without credential headers at once, without
 * identify()'s parse: for every such request, and for those with credentials, it decides as
 * identify() does from the same facts.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { describe, expect, it } from 'vitest';
import { identify, identityFromHeaders, identityRules } from '../../src/mediawiki/identity.js';
import { parsePhpQuery } from '../../src/mediawiki/php-input.js';

const RULES = identityRules({
  cookiePrefix: 'wiki',
  sessionName: '',
  sessionJwtCookie: false,
  secret: Buffer.from('agrees'),
  credentialHeaders: ['x-sso-user'],
});

const HEADERS: IncomingHttpHeaders[] = [
  {},
  { 'user-agent': 'wrk' },
  { 'treat-as-untrusted': '1' },
  { 'treat-as-untrusted': '' },
  { cookie: '' },
  { cookie: 'wikiUserName=A' },
  { cookie: `wiki_session=${'b'.repeat(32)}` },
  { cookie: 'wiki_session=deleted' },
  { authorization: '' },
  { authorization: 'Bearer x' },
  { 'x-sso-user': 'alice' },
  { 'x-sso-user': ['alice', 'bob'] },
  { cookie: `wiki_session=${'b'.repeat(32)}`, 'treat-as-untrusted': '1' },
];
const QUERIES = ['action=query', 'action=query&callback=f', 'action=query&origin=*', 'action=query&origin=x', 'action=query&callback[]=f'];

describe('identityFromHeaders', () => {
  for (const headers of HEADERS) {
    for (const q of QUERIES) {
      it(`${JSON.stringify(headers)} ?${q}: as identify() decides`, () => {
        const query = parsePhpQuery(q);
        const credentialHeaderValues = RULES.credentialHeaders.map((name) => {
          const v = headers[name];
          return Array.isArray(v) ? v.join(', ') : v;
        });
        const expected = identify(
          {
            cookieHeader: headers.cookie,
            credentialHeaderValues,
            treatAsUntrusted: headers['treat-as-untrusted'] !== undefined,
            query,
            clientAddress: () => '192.0.2.1',
          },
          RULES,
        );
        expect(identityFromHeaders(headers, query, RULES, () => '192.0.2.1')).toEqual(expected);
      });
    }
  }
});
