/**
 * A compact binary form of a cache entry for the Redis tier: status, headers, body and the
 * metadata that decides freshness (storedAt, ttlMs) travel together, so every replica decides
 * freshness the same way (see freshness.ts).
 *
 *   magic "WE" · version u8 · tier u8 (0 shared, 1 session) · status u16 · storedAt f64 · ttlMs u32
 *   coding u8 (bit 0: gzip, then identityBytes varint, brBytes varint; clear: the answer as it
 *     is. Bit 1: the answer carries the wiki's clock, entry.ts `clock`)
 *   urlKey str · slot (flag u8, str) · modules (varint n, n × str) · deps (varint n, n × str)
 *   headers (varint n, n × (name str, kind varint: 0 = one value str, k+1 = k value strs))
 *   body: every remaining byte (with brBytes > 0, its last brBytes bytes are the br form)
 *
 * `str` is a varint byte length followed by UTF-8 (header values are latin1 strings from Node's
 * parser; UTF-8 round-trips them exactly). The body is not length-prefixed and never copied
 * into a text form: base64 in JSON would cost a third more, plus escaping of the headers.
 *
 * Version 3 carries the stored form (src/compression): Redis holds what the local tier holds,
 * the gzip (a third of the answer for real api.php answers), not the answer. Versions 1 and 2
 * are still read (as the answer as it is): entries written before an upgrade stay usable;
 * a replica not yet upgraded reads a version-3 entry as a miss. Bit 1 of the coding byte came
 * later in version 3: a replica that does not know it refuses such an entry (bad coding), a miss,
 * rather than read a clock answer without its flag; every other entry it still reads.
 */
import type { Tier } from '../words/outcomes.js';
import type { CacheEntry } from './entry.js';

const MAGIC0 = 0x57; // W
const MAGIC1 = 0x45; // E
/**
 * 2 added deps; 3 the coding (gzip, with the answer's length and a br form). A version-1 entry
 * (no deps) decodes as depending on any change.
 */
export const CODEC_VERSION = 3;

export class EntryCodecError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'EntryCodecError';
  }
}

function varintSize(n: number): number {
  let size = 1;
  while (n >= 0x80) {
    n = Math.floor(n / 0x80);
    size++;
  }
  return size;
}

class Writer {
  private offset = 0;
  constructor(readonly buf: Buffer) {}
  u8(n: number): void {
    this.buf[this.offset++] = n;
  }
  u16(n: number): void {
    this.buf.writeUInt16BE(n, this.offset);
    this.offset += 2;
  }
  u32(n: number): void {
    this.buf.writeUInt32BE(n, this.offset);
    this.offset += 4;
  }
  f64(n: number): void {
    this.buf.writeDoubleBE(n, this.offset);
    this.offset += 8;
  }
  varint(n: number): void {
    while (n >= 0x80) {
      this.buf[this.offset++] = (n & 0x7f) | 0x80;
      n = Math.floor(n / 0x80);
    }
    this.buf[this.offset++] = n;
  }
  str(s: string, bytes: number): void {
    this.varint(bytes);
    this.offset += this.buf.write(s, this.offset, bytes, 'utf8');
  }
  bytes(b: Buffer): void {
    b.copy(this.buf, this.offset);
    this.offset += b.length;
  }
  get position(): number {
    return this.offset;
  }
}

class Reader {
  private offset = 0;
  constructor(private readonly buf: Buffer) {}
  private need(n: number): void {
    if (this.offset + n > this.buf.length) throw new EntryCodecError('truncated entry');
  }
  u8(): number {
    this.need(1);
    return this.buf[this.offset++]!;
  }
  u16(): number {
    this.need(2);
    const v = this.buf.readUInt16BE(this.offset);
    this.offset += 2;
    return v;
  }
  u32(): number {
    this.need(4);
    const v = this.buf.readUInt32BE(this.offset);
    this.offset += 4;
    return v;
  }
  f64(): number {
    this.need(8);
    const v = this.buf.readDoubleBE(this.offset);
    this.offset += 8;
    return v;
  }
  varint(): number {
    let n = 0;
    let scale = 1;
    for (let i = 0; i < 8; i++) {
      const b = this.u8();
      n += (b & 0x7f) * scale;
      if (b < 0x80) return n;
      scale *= 0x80;
    }
    throw new EntryCodecError('bad varint');
  }
  str(): string {
    const len = this.varint();
    this.need(len);
    const s = this.buf.toString('utf8', this.offset, this.offset + len);
    this.offset += len;
    return s;
  }
  /** The rest, as an exact-size buffer of its own (never a view into the reply buffer). */
  rest(): Buffer {
    const len = this.buf.length - this.offset;
    const out = Buffer.allocUnsafeSlow(len);
    this.buf.copy(out, 0, this.offset);
    this.offset = this.buf.length;
    return out;
  }
}

/** Encode an entry of `tier`. Throws EntryCodecError for values the format cannot carry. */
export function encodeEntry(tier: Tier, entry: CacheEntry): Buffer {
  if (!Number.isInteger(entry.status) || entry.status < 0 || entry.status > 0xffff) throw new EntryCodecError('status out of range');
  if (!Number.isInteger(entry.ttlMs) || entry.ttlMs < 0 || entry.ttlMs > 0xffffffff) throw new EntryCodecError('ttlMs out of range');
  if (!Number.isFinite(entry.storedAt)) throw new EntryCodecError('storedAt is not finite');
  // Measure first, then write into one exact-size buffer.
  const strs: { s: string; n: number }[] = [];
  const add = (s: string) => {
    const n = Buffer.byteLength(s, 'utf8');
    strs.push({ s, n });
    return varintSize(n) + n;
  };
  let size = 2 + 1 + 1 + 2 + 8 + 4 + 1;
  const br = entry.coding ? entry.br : undefined;
  if (entry.coding) {
    if (!Number.isInteger(entry.identityBytes) || entry.identityBytes! < 0) throw new EntryCodecError('identityBytes missing');
    size += varintSize(entry.identityBytes!) + varintSize(br?.length ?? 0);
  }
  size += add(entry.urlKey);
  size += 1 + (entry.slot === undefined ? 0 : add(entry.slot));
  size += varintSize(entry.modules.length);
  for (const m of entry.modules) size += add(m);
  size += varintSize(entry.deps.length);
  for (const d of entry.deps) size += add(d);
  const names = Object.keys(entry.headers);
  size += varintSize(names.length);
  for (const name of names) {
    size += add(name);
    const v = entry.headers[name]!;
    if (Array.isArray(v)) {
      size += varintSize(v.length + 1);
      for (const item of v) size += add(item);
    } else {
      size += 1 + add(v as string);
    }
  }
  size += entry.body.length + (br?.length ?? 0);

  const w = new Writer(Buffer.allocUnsafeSlow(size));
  let i = 0;
  const next = () => {
    const { s, n } = strs[i++]!;
    w.str(s, n);
  };
  w.u8(MAGIC0);
  w.u8(MAGIC1);
  w.u8(CODEC_VERSION);
  w.u8(tier === 'shared' ? 0 : 1);
  w.u16(entry.status);
  w.f64(entry.storedAt);
  w.u32(entry.ttlMs);
  const clockBit = entry.clock ? 2 : 0;
  if (!entry.coding) w.u8(clockBit);
  else {
    w.u8(1 | clockBit);
    w.varint(entry.identityBytes!);
    w.varint(br?.length ?? 0);
  }
  next(); // urlKey
  if (entry.slot === undefined) w.u8(0);
  else {
    w.u8(1);
    next();
  }
  w.varint(entry.modules.length);
  for (let m = 0; m < entry.modules.length; m++) next();
  w.varint(entry.deps.length);
  for (let d = 0; d < entry.deps.length; d++) next();
  w.varint(names.length);
  for (const name of names) {
    next();
    const v = entry.headers[name]!;
    if (Array.isArray(v)) {
      w.varint(v.length + 1);
      for (let k = 0; k < v.length; k++) next();
    } else {
      w.varint(0);
      next();
    }
  }
  w.bytes(entry.body);
  if (br) w.bytes(br);
  if (w.position !== size) throw new EntryCodecError(`size mismatch: ${w.position} != ${size}`);
  return w.buf;
}

/** Decode what encodeEntry wrote. Throws EntryCodecError on anything else (other versions included). */
export function decodeEntry(buf: Buffer): { tier: Tier; entry: CacheEntry } {
  const r = new Reader(buf);
  if (r.u8() !== MAGIC0 || r.u8() !== MAGIC1) throw new EntryCodecError('not a wikiedge entry');
  const version = r.u8();
  if (version < 1 || version > CODEC_VERSION) throw new EntryCodecError(`unknown entry version ${version}`);
  const tierByte = r.u8();
  if (tierByte > 1) throw new EntryCodecError('bad tier');
  const tier: Tier = tierByte === 0 ? 'shared' : 'session';
  const status = r.u16();
  const storedAt = r.f64();
  const ttlMs = r.u32();
  let coded: { identityBytes: number; brBytes: number } | undefined;
  let clock: true | undefined;
  if (version >= 3) {
    const coding = r.u8();
    if (coding > 3) throw new EntryCodecError('bad coding');
    if ((coding & 1) === 1) coded = { identityBytes: r.varint(), brBytes: r.varint() };
    if ((coding & 2) === 2) clock = true;
  }
  const urlKey = r.str();
  const slot = r.u8() === 1 ? r.str() : undefined;
  const moduleCount = r.varint();
  const modules: string[] = [];
  for (let i = 0; i < moduleCount; i++) modules.push(r.str());
  const deps: string[] = [];
  if (version === 1) deps.push('*');
  else for (let i = r.varint(); i > 0; i--) deps.push(r.str());
  const headerCount = r.varint();
  const headers: Record<string, string | string[]> = {};
  for (let i = 0; i < headerCount; i++) {
    const name = r.str();
    const kind = r.varint();
    let value: string | string[];
    if (kind === 0) value = r.str();
    else {
      const values: string[] = [];
      for (let k = 0; k < kind - 1; k++) values.push(r.str());
      value = values;
    }
    // defineProperty: a header named __proto__ stays a header.
    Object.defineProperty(headers, name, { value, enumerable: true, writable: true, configurable: true });
  }
  const rest = r.rest();
  if (!coded) return { tier, entry: { status, headers, body: rest, storedAt, ttlMs, urlKey, modules, slot, deps, ...(clock && { clock }) } };
  if (coded.brBytes >= rest.length) throw new EntryCodecError('br form longer than the body');
  const split = rest.length - coded.brBytes;
  return {
    tier,
    entry: {
      status,
      headers,
      body: rest.subarray(0, split),
      coding: 'gzip',
      identityBytes: coded.identityBytes,
      ...(coded.brBytes > 0 && { br: rest.subarray(split) }),
      storedAt,
      ttlMs,
      urlKey,
      modules,
      slot,
      deps,
      ...(clock && { clock }),
    },
  };
}

/** The obvious alternative, for comparison in tests: JSON with the body in base64. */
export function encodeEntryJson(tier: Tier, entry: CacheEntry): Buffer {
  return Buffer.from(JSON.stringify({ tier, ...entry, body: entry.body.toString('base64') }), 'utf8');
}
