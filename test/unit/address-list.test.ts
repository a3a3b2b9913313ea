// Address lists with CIDR ranges (words/address-list.ts): what WIKIEDGE_TRUSTED_PROXIES and
// WIKIEDGE_PURGE_ALLOW match a peer against.
import { describe, expect, it } from 'vitest';
import { AddressMatcher } from '../../src/words/address-list.js';

describe('AddressMatcher', () => {
  const m = new AddressMatcher(['192.0.2.7', '10.0.0.0/8', 'fd00::/8', '::1']);
  it.each([
    ['192.0.2.7', true],
    ['192.0.2.8', false],
    ['10.200.3.4', true],
    ['11.0.0.1', false],
    ['::ffff:10.1.2.3', true],
    ['::ffff:192.0.2.7', true],
    ['fd12:3456::1', true],
    ['FD12:3456::1', true],
    ['fe80::1', false],
    ['::1', true],
    ['', false],
    [undefined, false],
  ] as const)('%s → %s', (address, expected) => {
    expect(m.has(address)).toBe(expected);
    // Remembered answers are the same answers.
    expect(m.has(address)).toBe(expected);
  });

  it('an empty list matches nothing', () => {
    expect(new AddressMatcher([]).has('127.0.0.1')).toBe(false);
  });
});
