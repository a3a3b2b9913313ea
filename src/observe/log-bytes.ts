/**
 * JSON text written straight into a log batch's bytes, for the one line that is written per cache
 * hit (observe/access-log.ts AccessLog.hit). Everything here is plain JavaScript over a Uint8Array: no
 * string is built, nothing is allocated, and no call crosses into C++ (Buffer#write, latin1Write,
 * utf8Write each do; a writer made of those, tried (docs/BENCHMARKS.md, "A log line per hit, run O's code"), cost more than the
 * string it replaced). What a function cannot write exactly as JSON.stringify would (a character
 * outside printable ASCII, `"` or `\`; a number that is not a safe non-negative integer) it
 * refuses with -1, and the caller writes the line as a string instead: the bytes are always the
 * ones the string line would have had (test/unit/log-bytes-equal-the-string-line.test.ts).
 */

/** Printable ASCII but `"` and `\`: the characters a JSON string holds as themselves. */
function plain(c: number): boolean {
  return c >= 0x20 && c <= 0x7e && c !== 0x22 && c !== 0x5c;
}

/** `s` between quotes at `at` if every character is plain; the end, or -1 (nothing usable written). */
export function putPlainString(buf: Uint8Array, at: number, s: string, length = s.length): number {
  buf[at++] = 0x22;
  for (let i = 0; i < length; i++) {
    const c = s.charCodeAt(i);
    if (!plain(c)) return -1;
    buf[at++] = c;
  }
  buf[at++] = 0x22;
  return at;
}

/** The first `length` bytes of `bytes` at `at`; the end. */
export function putFirstBytes(buf: Uint8Array, at: number, bytes: Uint8Array, length: number): number {
  for (let i = 0; i < length; i++) buf[at + i] = bytes[i]!;
  return at + length;
}

/** The bytes of `bytes` at `at`; the end. */
export function putBytes(buf: Uint8Array, at: number, bytes: Uint8Array): number {
  // TypedArray#set is a memmove once past a few dozen bytes; short runs are cheaper copied here.
  const n = bytes.length;
  if (n > 32) {
    buf.set(bytes, at);
    return at + n;
  }
  for (let i = 0; i < n; i++) buf[at + i] = bytes[i]!;
  return at + n;
}

/** A non-negative safe integer in decimal, as String(n) writes it; the end, or -1. */
export function putUint(buf: Uint8Array, at: number, n: number): number {
  if (n >= 0 && n <= 0x7fffffff && (n | 0) === n) return putSmallUint(buf, at, n);
  if (!(n >= 0 && n <= Number.MAX_SAFE_INTEGER) || Math.floor(n) !== n) return -1;
  // Above 2^31: the digits below the last nine in integer arithmetic, then those nine.
  let high = Math.floor(n / 1e9);
  let low = n - high * 1e9;
  // n / 1e9 may round up to the next integer near 2^53.
  if (low < 0) {
    high--;
    low += 1e9;
  }
  at = putSmallUint(buf, at, high);
  for (let i = at + 8; i >= at; i--) {
    buf[i] = 0x30 + (low % 10);
    low = (low / 10) | 0;
  }
  return at + 9;
}

/** putUint for 0 <= n < 2^31, in 32-bit integer arithmetic (most counts a line carries). */
function putSmallUint(buf: Uint8Array, at: number, n: number): number {
  const digits = n < 10 ? 1 : n < 100 ? 2 : n < 1000 ? 3 : n < 10000 ? 4 : n < 100000 ? 5 : n < 1e6 ? 6 : n < 1e7 ? 7 : n < 1e8 ? 8 : n < 1e9 ? 9 : 10;
  const end = at + digits;
  for (let i = end - 1; i >= at; i--) {
    buf[i] = 0x30 + (n % 10);
    n = (n / 10) | 0;
  }
  return end;
}

/**
 * A count of microseconds as milliseconds, as String(us / 1000) writes it (`43` → `0.043`,
 * `1500` → `1.5`, `12000` → `12`): the division of an integer by 1000 is the double nearest to
 * that decimal, whose shortest round-trip form is the decimal itself (below 1e21, where
 * String() would turn to exponents). The end, or -1.
 */
export function putMicrosAsMillis(buf: Uint8Array, at: number, us: number): number {
  if (!(us >= 0 && us < 1e15) || Math.floor(us) !== us) return -1;
  const whole = Math.floor(us / 1000);
  let fraction = us - whole * 1000;
  at = putUint(buf, at, whole);
  if (fraction === 0) return at;
  buf[at++] = 0x2e;
  buf[at++] = 0x30 + Math.floor(fraction / 100);
  fraction %= 100;
  if (fraction === 0) return at;
  buf[at++] = 0x30 + Math.floor(fraction / 10);
  fraction %= 10;
  if (fraction === 0) return at;
  buf[at++] = 0x30 + fraction;
  return at;
}
