/**
 * Hit lines as binary records, formatted on a thread of their own (log-thread.ts): Varnish's
 * design, where varnishd writes fixed records into a shared memory log and varnishncsa, a
 * process of its own, turns them into text. On the fresh-hit path a line built in the event
 * loop's thread cost the hit bench 25–35 % of its hits a second however cheaply it was built
 * (docs/BENCHMARKS.md, runs O to Q: 0.67–0.76× bare Fastify against the 0.90× issue 20 asks);
 * noting the hit's numbers in arrays cost 0–10 %. So the event loop now writes ~80 bytes of
 * numbers and references per hit into a ring in a SharedArrayBuffer, and the log thread makes
 * the JSON line from them: the same bytes, byte for byte, as the line written in the event
 * loop (test/unit/hit-line-from-records-equals-the-string-line.test.ts).
 *
 * Strings (the URL's line fragment, the client address, the user agent, the logger's
 * bindings) do not travel with every record: each is sent once, JSON-encoded, into a slot of a
 * table the log thread keeps (STRING record), and a hit names its slots. Slots are reused in
 * turn; a writer checks that the slot it remembers still holds its string (its generation)
 * and sends the string again when it does not. Records are read in the order they were written,
 * so a hit always finds the string its slot held when it was written.
 *
 * Both rings are single-producer, single-consumer: positions are published with Atomics (the
 * records' plain writes happen before the store of the position that covers them, ECMA-262
 * §29 "Memory Model"), and a record never wraps around the end of the buffer (a WRAP record
 * sends the reader back to the start).
 */
import { putBytes, putFirstBytes, putMicrosAsMillis, putUint } from './log-bytes.js';

// ------------------------------------------------------------------------------ the ring

/** Int32 words before the data: positions and signals. */
const WRITE = 0;
const READ = 1;
/** Bumped by a writer that found the ring over half full, for a reader waiting on it. */
const WAKE = 2;
/** A flush asked of the reader (a count), and the last one it finished: logging.ts at exit. */
const FLUSH_ASKED = 3;
const FLUSH_DONE = 4;
/** 1 once a writer has woken the reader, until the reader's next round: one wake a round. */
const WOKEN = 5;
const CONTROL_BYTES = 64;

/** Record kinds (the first int32 of a record). */
const HIT = 1;
const STRING = 2;
const WRAP = 3;
const BYTES = 4;

const align8 = (n: number): number => (n + 7) & ~7;

/**
 * A single-producer, single-consumer ring of 8-byte-aligned records in a SharedArrayBuffer,
 * usable from either side of a postMessage (its `buffer` is what crosses).
 */
export class RecordRing {
  readonly buffer: SharedArrayBuffer;
  private readonly control: Int32Array;
  readonly bytes: Uint8Array;
  readonly ints: Int32Array;
  readonly floats: Float64Array;
  readonly capacity: number;
  /** The writer's position, kept locally (only the writer moves it). */
  private writeAt: number;
  /** The reader's position, as the writer last read it (refreshed only when the ring looks full). */
  private readSeen: number;

  constructor(capacityOrBuffer: number | SharedArrayBuffer) {
    this.buffer =
      typeof capacityOrBuffer === 'number' ? new SharedArrayBuffer(CONTROL_BYTES + align8(capacityOrBuffer)) : capacityOrBuffer;
    this.capacity = this.buffer.byteLength - CONTROL_BYTES;
    this.control = new Int32Array(this.buffer, 0, CONTROL_BYTES / 4);
    this.bytes = new Uint8Array(this.buffer, CONTROL_BYTES);
    this.ints = new Int32Array(this.buffer, CONTROL_BYTES);
    this.floats = new Float64Array(this.buffer, CONTROL_BYTES);
    this.writeAt = Atomics.load(this.control, WRITE);
    this.readSeen = Atomics.load(this.control, READ);
  }

  // ---------------------------------------------------------------------------- writer side

  /**
   * Where a record of `size` bytes (8-aligned) goes, or -1 when the ring has no room for it.
   * The record is visible to the reader once publish() is called.
   */
  claim(size: number): number {
    let at = this.fit(size, this.readSeen);
    if (at === -1) {
      this.readSeen = Atomics.load(this.control, READ);
      at = this.fit(size, this.readSeen);
    }
    return at;
  }

  private fit(size: number, read: number): number {
    const w = this.writeAt;
    if (w >= read) {
      // Room before the end, keeping 8 bytes for a WRAP record.
      if (w + size + 8 <= this.capacity) return w;
      // Wrapping: the record must end before the reader's position (equal means empty).
      if (size < read) {
        this.ints[w >> 2] = WRAP;
        this.writeAt = 0;
        return 0;
      }
      return -1;
    }
    return w + size < read ? w : -1;
  }

  /** The record claimed at `at` is `size` bytes: the reader may have it. */
  publish(at: number, size: number): void {
    this.writeAt = at + size;
    Atomics.store(this.control, WRITE, this.writeAt);
  }

  /**
   * Wakes the reader before its interval is out when more than half the ring is waiting: once
   * a round (a wake is a system call).
   */
  wakeIfOverHalf(): void {
    const w = this.writeAt;
    const r = (this.readSeen = Atomics.load(this.control, READ));
    if ((w >= r ? w - r : this.capacity - r + w) > this.capacity / 2 && Atomics.load(this.control, WOKEN) === 0) {
      Atomics.store(this.control, WOKEN, 1);
      this.wake();
    }
  }

  /** Wakes a reader sleeping in sleep(). */
  wake(): void {
    Atomics.add(this.control, WAKE, 1);
    Atomics.notify(this.control, WAKE);
  }

  /** Asks the reader to read everything published so far; the number to wait for with flushed(). */
  askFlush(): number {
    const asked = Atomics.add(this.control, FLUSH_ASKED, 1) + 1;
    this.wake();
    return asked;
  }

  /** Whether the reader has read everything published before askFlush() returned `asked`. */
  flushed(asked: number): boolean {
    return Atomics.load(this.control, FLUSH_DONE) >= asked;
  }

  // ---------------------------------------------------------------------------- reader side

  /** The flush asked so far: read before draining, noted done after (noteFlushed). */
  flushAsked(): number {
    return Atomics.load(this.control, FLUSH_ASKED);
  }

  noteFlushed(asked: number): void {
    Atomics.store(this.control, FLUSH_DONE, asked);
  }

  /** Sleeps until woken (a ring over half full, a flush asked) or `ms` pass. */
  sleep(ms: number): void {
    Atomics.wait(this.control, WAKE, Atomics.load(this.control, WAKE), ms);
  }

  /** Whether records are waiting. */
  hasRecords(): boolean {
    return Atomics.load(this.control, READ) !== Atomics.load(this.control, WRITE);
  }

  /**
   * Every record published so far, in order: `each(kind, at)` with the record's byte offset,
   * returning the record's size. The space is given back to the writer after the last one.
   */
  drain(each: (kind: number, at: number) => number): number {
    Atomics.store(this.control, WOKEN, 0);
    const end = Atomics.load(this.control, WRITE);
    let r = Atomics.load(this.control, READ);
    let records = 0;
    while (r !== end) {
      const kind = this.ints[r >> 2]!;
      if (kind === WRAP) {
        r = 0;
        continue;
      }
      r += each(kind, r);
      records++;
    }
    Atomics.store(this.control, READ, r);
    return records;
  }
}

// ------------------------------------------------------------------------------ hit records

/**
 * A hit record: kind and reqId length (int32), time and µs (double), status and four slots
 * (int32), pad, bytes in and out (double); then the reqId.
 */
const HIT_FIXED = 64;
/** A STRING record: kind, slot, length, pad; then the JSON text. */
const STRING_FIXED = 16;
/** A BYTES record (lines made by the log thread): kind, length; then the bytes. */
const BYTES_FIXED = 8;

/** The slots a hit names (a slot index, or -1 for none: a hit without a user agent). */
export interface HitSlots {
  /** The logger's bindings and `,"reqId":` (what follows the time in every line). */
  afterTime: number;
  /** The URL's fragment and `,"status":` (access-log.ts AccessLog.hit). */
  fragment: number;
  /** The client address as a JSON string. */
  client: number;
  /** The user agent as a JSON string, or -1. */
  userAgent: number;
}

/**
 * The event loop's side: string slots handed out in turn and hit records written. What does not
 * fit is dropped and counted (the log thread is behind: a reader of the log that does not keep
 * up, or a CPU too busy for it), never waited for.
 */
export class HitRecordWriter {
  /** The generation each slot holds (0: never written). */
  private readonly generations: Int32Array;
  private nextSlot = 0;
  private generation = 0;
  /** Hits not recorded because the ring was full. */
  dropped = 0;

  constructor(
    readonly ring: RecordRing,
    readonly slots: number,
  ) {
    // A hit names four strings: with fewer slots than that it could never be written.
    if (slots < 8) throw new RangeError(`log records: ${slots} string slots (at least 8)`);
    this.generations = new Int32Array(slots);
  }

  /** Whether `slot` still holds the string that was given generation `generation`. */
  holds(slot: number, generation: number): boolean {
    return slot >= 0 && this.generations[slot] === generation;
  }

  /** The generation of what `slot` holds. */
  generationOf(slot: number): number {
    return this.generations[slot]!;
  }

  /** `json` (a JSON text's bytes) into the next slot; the slot, or -1 when the ring is full. */
  putString(json: Uint8Array): number {
    const size = align8(STRING_FIXED + json.length);
    if (size > this.ring.capacity / 4) return -1;
    const at = this.ring.claim(size);
    if (at === -1) return -1;
    const slot = this.nextSlot;
    const i = at >> 2;
    this.ring.ints[i] = STRING;
    this.ring.ints[i + 1] = slot;
    this.ring.ints[i + 2] = json.length;
    this.ring.bytes.set(json, at + STRING_FIXED);
    this.ring.publish(at, size);
    this.nextSlot = (slot + 1) % this.slots;
    this.generation = (this.generation % 0x7ffffffe) + 1;
    this.generations[slot] = this.generation;
    return slot;
  }

  /**
   * A hit: RECORDED; FULL (counted as dropped) when the ring has no room; NOT_PLAIN, with nothing
   * written, when `reqId` holds a character a JSON string cannot hold as itself (request-id.ts
   * makes none such, but the caller then writes the line itself).
   */
  putHit(
    slots: HitSlots,
    reqId: string,
    time: number,
    micros: number,
    status: number,
    bytesIn: number,
    bytesOut: number,
  ): HitRecorded {
    const size = align8(HIT_FIXED + reqId.length);
    const at = this.ring.claim(size);
    if (at === -1) {
      this.dropped++;
      return HitRecorded.FULL;
    }
    const { ints, floats, bytes } = this.ring;
    for (let c = 0, to = at + HIT_FIXED; c < reqId.length; c++) {
      const code = reqId.charCodeAt(c);
      if (code < 0x20 || code > 0x7e || code === 0x22 || code === 0x5c) return HitRecorded.NOT_PLAIN;
      bytes[to + c] = code;
    }
    const i = at >> 2;
    ints[i] = HIT;
    ints[i + 1] = reqId.length;
    floats[(at >> 3) + 1] = time;
    floats[(at >> 3) + 2] = micros;
    ints[i + 6] = status;
    ints[i + 7] = slots.afterTime;
    ints[i + 8] = slots.fragment;
    ints[i + 9] = slots.client;
    ints[i + 10] = slots.userAgent;
    floats[(at >> 3) + 6] = bytesIn;
    floats[(at >> 3) + 7] = bytesOut;
    this.ring.publish(at, size);
    this.ring.wakeIfOverHalf();
    return HitRecorded.RECORDED;
  }
}

/** What putHit did with a hit. */
export const HitRecorded = { RECORDED: 0, FULL: 1, NOT_PLAIN: 2 } as const;
export type HitRecorded = (typeof HitRecorded)[keyof typeof HitRecorded];

// ------------------------------------------------------------------------------ the line

const ascii = (s: string): Buffer => Buffer.from(s, 'latin1');
/** The fixed parts of a hit line (access-log.ts writes the same ones in the event loop). */
export const LINE_START = ascii('{"level":30,"time":');
export const MS = ascii(',"ms":');
export const CLIENT = ascii(',"client":');
export const UA = ascii(',"ua":');
export const BYTES_IN = ascii(',"bytesIn":');
export const BYTES_OUT = ascii(',"bytesOut":');
export const LINE_END = ascii(',"msg":"request"}\n');
/**
 * A line's bytes besides its strings and reqId: the fixed parts (88), quotes, and five numbers
 * and the ms, each at most 24 characters as String() writes a double.
 */
const LINE_FIXED_BYTES = 256;

/**
 * The log thread's side: reads hit and string records and writes each hit's line. `emit` takes
 * lines as a Uint8Array of whole lines (a view it must copy before it returns).
 */
export class HitLineFormatter {
  private readonly table: (Uint8Array | undefined)[];
  private out: Uint8Array;
  private used = 0;
  /** Hits whose slots held nothing (cannot happen unless records were lost): skipped and counted. */
  unreadable = 0;

  constructor(
    slots: number,
    private readonly emit: (lines: Uint8Array) => void,
    private readonly batchBytes = 64 * 1024,
  ) {
    this.table = new Array<Uint8Array | undefined>(slots).fill(undefined);
    this.out = new Uint8Array(batchBytes);
  }

  /** Every record waiting in `ring`, then what was formatted handed to `emit`. The hits read. */
  drain(ring: RecordRing): number {
    let hits = 0;
    ring.drain((kind, at) => {
      if (kind === STRING) {
        const i = at >> 2;
        const length = ring.ints[i + 2]!;
        this.table[ring.ints[i + 1]!] = ring.bytes.slice(at + STRING_FIXED, at + STRING_FIXED + length);
        return align8(STRING_FIXED + length);
      }
      if (kind === HIT) {
        hits++;
        return this.hit(ring, at);
      }
      throw new Error(`log records: unknown record kind ${kind} at ${at}`);
    });
    this.flush();
    return hits;
  }

  /** Hands over what is formatted. */
  flush(): void {
    if (this.used === 0) return;
    this.emit(this.out.subarray(0, this.used));
    this.used = 0;
  }

  private hit(ring: RecordRing, at: number): number {
    const { ints, floats, bytes } = ring;
    const i = at >> 2;
    const reqIdLength = ints[i + 1]!;
    const size = align8(HIT_FIXED + reqIdLength);
    const afterTime = this.table[ints[i + 7]!];
    const fragment = this.table[ints[i + 8]!];
    const client = this.table[ints[i + 9]!];
    const uaSlot = ints[i + 10]!;
    const ua = uaSlot === -1 ? undefined : this.table[uaSlot];
    if (afterTime === undefined || fragment === undefined || client === undefined || (uaSlot !== -1 && ua === undefined)) {
      this.unreadable++;
      return size;
    }
    const most = LINE_FIXED_BYTES + afterTime.length + reqIdLength + fragment.length + client.length + (ua?.length ?? 0);
    if (this.out.length - this.used < most) {
      this.flush();
      if (this.out.length < most) this.out = new Uint8Array(Math.max(most, this.batchBytes));
    }
    const buf = this.out;
    let to = putBytes(buf, this.used, LINE_START);
    to = putNumber(buf, to, floats[(at >> 3) + 1]!);
    to = putBytes(buf, to, afterTime);
    buf[to++] = 0x22;
    to = putFirstBytes(buf, to, bytes.subarray(at + HIT_FIXED), reqIdLength);
    buf[to++] = 0x22;
    to = putBytes(buf, to, fragment);
    to = putNumber(buf, to, ints[i + 6]!);
    to = putBytes(buf, to, MS);
    const micros = floats[(at >> 3) + 2]!;
    const end = putMicrosAsMillis(buf, to, micros);
    to = end < 0 ? putNumberText(buf, to, micros / 1000) : end;
    to = putBytes(buf, to, CLIENT);
    to = putBytes(buf, to, client);
    if (ua !== undefined) {
      to = putBytes(buf, to, UA);
      to = putBytes(buf, to, ua);
    }
    to = putBytes(buf, to, BYTES_IN);
    to = putNumber(buf, to, floats[(at >> 3) + 6]!);
    to = putBytes(buf, to, BYTES_OUT);
    to = putNumber(buf, to, floats[(at >> 3) + 7]!);
    this.used = putBytes(buf, to, LINE_END);
    return size;
  }
}

/** A number as String() writes it: by putUint when it is a count, else through the string (rare). */
function putNumber(buf: Uint8Array, at: number, n: number): number {
  const end = putUint(buf, at, n);
  return end < 0 ? putNumberText(buf, at, n) : end;
}

/** String(n), at most 24 ASCII characters (what LINE_FIXED_BYTES allows a number). */
function putNumberText(buf: Uint8Array, at: number, n: number): number {
  const text = String(n);
  for (let c = 0; c < text.length; c++) buf[at + c] = text.charCodeAt(c);
  return at + text.length;
}

// ------------------------------------------------------------------------------ lines back

/** Lines the log thread made, on their way back to the event loop's batches (logging.ts). */
export function putLines(ring: RecordRing, lines: Uint8Array): boolean {
  const size = align8(BYTES_FIXED + lines.length);
  const at = ring.claim(size);
  if (at === -1) return false;
  ring.ints[at >> 2] = BYTES;
  ring.ints[(at >> 2) + 1] = lines.length;
  ring.bytes.set(lines, at + BYTES_FIXED);
  ring.publish(at, size);
  return true;
}

/** Every batch of lines waiting in `ring`, each handed to `take` (a view: copy it). */
export function takeLines(ring: RecordRing, take: (lines: Uint8Array) => void): void {
  ring.drain((kind, at) => {
    if (kind !== BYTES) throw new Error(`log records: unknown record kind ${kind} at ${at}`);
    const length = ring.ints[(at >> 2) + 1]!;
    take(ring.bytes.subarray(at + BYTES_FIXED, at + BYTES_FIXED + length));
    return align8(BYTES_FIXED + length);
  });
}

