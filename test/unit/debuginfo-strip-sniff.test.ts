/**
 * stripDebuginfo's dispatcher (src/mediawiki/debuginfo/strip.ts) without a Content-Type: the format is told
 * from the first bytes, and a body it cannot place fails closed.
 */
import { describe, expect, it } from 'vitest';
import { DebuginfoStripError, stripDebuginfo } from '../../src/mediawiki/debuginfo/strip.js';

describe('synthetic shapes', () => {
  it('without a Content-Type the format is sniffed', () => {
    expect(stripDebuginfo(Buffer.from('{"a":1,"debuginfo":{}}'), undefined).body.toString()).toBe('{"a":1}');
    expect(stripDebuginfo(Buffer.from('a:1:{s:9:"debuginfo";a:0:{}}'), undefined).body.toString()).toBe('a:0:{}');
    expect(() => stripDebuginfo(Buffer.from('debuginfo'), undefined)).toThrow(DebuginfoStripError);
  });
});
