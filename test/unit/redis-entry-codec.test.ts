// The Redis tier's binary entry codec: exact round trips, exact-size bodies, refusal of anything
// else, and its size against JSON + base64 for a real siteinfo answer (figures printed).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CODEC_VERSION, decodeEntry, encodeEntry, encodeEntryJson, EntryCodecError } from '../../src/cache/entry-codec.js';
import type { CacheEntry } from '../../src/cache/store.js';
import { stripDebuginfo } from '../../src/mediawiki/debuginfo/strip.js';

const fixture = (name: string) => readFileSync(path.resolve(import.meta.dirname, '../fixtures/debuginfo', name));

/** test/fixtures/debuginfo/capture-61-siteinfo-fv1.json (anonymous siteinfo, MediaWiki 1.39.17) as the gateway stores it: debuginfo stripped,
 * client-facing headers as clientHeadersFor() leaves them (probe undone: private cache headers). */
function siteinfoEntry(): CacheEntry {
  const raw = fixture('capture-61-siteinfo-fv1.json');
  const body = Buffer.from(stripDebuginfo(raw, 'application/json; charset=utf-8').body);
  return {
    status: 200,
    headers: {
      date: 'Fri, 20 Nov 2026 21:55:30 GMT',
      'x-powered-by': 'PHP/8.2.35',
      'x-content-type-options': 'nosniff',
      'content-type': 'application/json; charset=utf-8',
      'x-frame-options': 'DENY',
      'content-disposition': 'inline; filename=api-result.json',
      vary: 'Accept-Encoding, Treat-as-Untrusted, Cookie',
      'cache-control': 'private, must-revalidate, max-age=0',
    },
    body,
    storedAt: 1_795_212_930_123.456,
    ttlMs: 54_321,
    urlKey: '/w/api.php?action=query&format=json&meta=siteinfo',
    modules: ['query', 'siteinfo'],
    slot: undefined,
    deps: ['p:Main Page', 'i:1', '*'],
  };
}

describe('entry codec', () => {
  it('round-trips a real siteinfo entry exactly, body in an exact-size buffer of its own', () => {
    const entry = siteinfoEntry();
    const encoded = encodeEntry('shared', entry);
    const { tier, entry: back } = decodeEntry(encoded);
    expect(tier).toBe('shared');
    expect(back).toEqual(entry);
    expect(back.body.equals(entry.body)).toBe(true);
    expect(back.body.byteLength).toBe(back.body.buffer.byteLength);
    expect(back.body.buffer).not.toBe(encoded.buffer);
  });

  it('is smaller than JSON + base64 for a real siteinfo answer (figures printed)', () => {
    const entry = siteinfoEntry();
    const binary = encodeEntry('shared', entry).length;
    const json = encodeEntryJson('shared', entry).length;
    const body = entry.body.length;
    const figures = {
      body,
      binary,
      binaryOverhead: binary - body,
      jsonBase64: json,
      jsonBase64Overhead: json - body,
      saved: json - binary,
      ratio: Number((binary / json).toFixed(3)),
    };
    console.log(`entry codec, siteinfo (capture-61-siteinfo-fv1.json): ${JSON.stringify(figures)}`);
    expect(binary).toBeLessThan(json);
    // Headers, metadata and lengths: a few hundred bytes on top of the body.
    expect(binary - body).toBeLessThan(600);
    expect(json).toBeGreaterThan(body * 1.33);
  });

  it('keeps header arrays, session slots, unicode and empty bodies', () => {
    const entry: CacheEntry = {
      status: 203,
      headers: { 'x-multi': ['a', 'b', ''], 'x-latin1': 'caf\u00e9', 'x-empty-list': [], __proto__x: 'y' },
      body: Buffer.alloc(0),
      storedAt: 0,
      ttlMs: 0,
      urlKey: '/w/api.php?action=query&titles=Z%C3%BCrich\u2028日本',
      modules: [],
      slot: 'c2xvdC1obWFj',
      deps: [],
    };
    expect(decodeEntry(encodeEntry('session', entry))).toEqual({ tier: 'session', entry });
  });

  it('keeps a header literally named __proto__ as a header', () => {
    const headers = JSON.parse('{"__proto__":"x","a":"b"}') as Record<string, string>;
    const entry = { ...siteinfoEntry(), headers };
    const back = decodeEntry(encodeEntry('shared', entry)).entry;
    expect(Object.keys(back.headers)).toEqual(['__proto__', 'a']);
    expect(Object.getPrototypeOf(back.headers)).toBe(Object.prototype);
  });

  it('round-trips arbitrary entries (property)', () => {
    // Well-formed strings only: lone surrogates are not UTF-8, and Node's HTTP parser never makes them.
    const str = fc.string({ unit: 'grapheme', maxLength: 40 });
    fc.assert(
      fc.property(
        fc.record({
          status: fc.integer({ min: 100, max: 599 }),
          headers: fc.dictionary(
            fc.string({ minLength: 1, maxLength: 20 }).filter((k) => k !== '__proto__'),
            fc.oneof(str, fc.array(str, { maxLength: 4 })),
          ),
          body: fc.uint8Array({ maxLength: 300 }).map((a) => Buffer.from(a)),
          storedAt: fc.double({ noNaN: true, noDefaultInfinity: true }),
          ttlMs: fc.integer({ min: 0, max: 0xffffffff }),
          urlKey: str,
          modules: fc.array(str, { maxLength: 3 }),
          slot: fc.option(str, { nil: undefined }),
          deps: fc.array(str, { maxLength: 4 }),
          clock: fc.option(fc.constant(true as const), { nil: undefined }),
        }),
        fc.constantFrom('shared' as const, 'session' as const),
        (entry, tier) => {
          const back = decodeEntry(encodeEntry(tier, entry));
          expect(back.tier).toBe(tier);
          expect(back.entry).toEqual(entry);
          expect(Object.is(back.entry.storedAt, entry.storedAt)).toBe(true);
        },
      ),
    );
  });

  it('refuses what it did not write: other magic, other versions, truncation', () => {
    const good = encodeEntry('shared', siteinfoEntry());
    expect(() => decodeEntry(Buffer.from('{"status":200}'))).toThrow(EntryCodecError);
    const next = Buffer.from(good);
    next[2] = CODEC_VERSION + 1;
    expect(() => decodeEntry(next)).toThrow(new RegExp(`version ${CODEC_VERSION + 1}`));
    // Cut inside the header block (the body has no length: only the prefix can be truncated).
    expect(() => decodeEntry(good.subarray(0, 40))).toThrow(EntryCodecError);
    expect(() => decodeEntry(Buffer.alloc(0))).toThrow(EntryCodecError);
  });

  it('a version-1 entry (written before dependencies were kept) decodes as depending on any change', () => {
    const e = { ...siteinfoEntry(), modules: ['zz-last-module-zz'], deps: [] };
    // Version 2 is version 3 without the coding byte after ttlMs (0: the answer as it is).
    const v3 = encodeEntry('shared', e);
    const v2 = Buffer.concat([v3.subarray(0, 18), v3.subarray(19)]);
    // Version 1 had no deps field: drop the one-byte empty list after the modules and mark it 1.
    const v1 = Buffer.concat([v2.subarray(0, 2), Buffer.from([1]), v2.subarray(3)]);
    const at = v2.indexOf(Buffer.from('zz-last-module-zz')) + 'zz-last-module-zz'.length;
    const old = Buffer.concat([v1.subarray(0, at), v1.subarray(at + 1)]);
    expect(decodeEntry(old).entry).toEqual({ ...e, deps: ['*'] });
  });

  it('refuses values the format cannot carry', () => {
    const e = siteinfoEntry();
    expect(() => encodeEntry('shared', { ...e, ttlMs: 1.5 })).toThrow(EntryCodecError);
    expect(() => encodeEntry('shared', { ...e, ttlMs: 2 ** 32 })).toThrow(EntryCodecError);
    expect(() => encodeEntry('shared', { ...e, status: 70_000 })).toThrow(EntryCodecError);
    expect(() => encodeEntry('shared', { ...e, storedAt: Number.NaN })).toThrow(EntryCodecError);
  });
});
