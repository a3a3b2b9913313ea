/**
 * pino, JSON in production. Credentials never reach a log line: cookie, authorization and
 * set-cookie are redacted wherever they appear, and request lines carry the URL with the values
 * of credential parameters replaced (access-log.ts redactQuery).
 */
import pino, { type Logger } from 'pino';
import type { LogLevel } from './config.js';

/**
 * Where a credential could sit in what the gateway logs: headers objects at the top level, under
 * req/res, or carried by an error (undici's errors can hold the response's headers). Explicit
 * paths only: pino compiles them into a few property checks, while wildcards (`*.cookie`) walk
 * every logged object and tripled the cost of a request line (~5 → ~15 µs, measured here).
 */
const HEADER_HOLDERS = ['headers', 'req.headers', 'res.headers', 'err.headers', 'err.cause.headers'];
const CREDENTIAL_HEADERS = ['cookie', 'authorization', '["set-cookie"]', '["proxy-authorization"]'];
export const REDACT_PATHS = HEADER_HOLDERS.flatMap((holder) =>
  CREDENTIAL_HEADERS.map((name) => (name.startsWith('[') ? `${holder}${name}` : `${holder}.${name}`)),
);

export function createLogger(
  level: LogLevel,
  opts: { pretty?: boolean; destination?: pino.DestinationStream } = {},
): Logger {
  const options: pino.LoggerOptions = {
    level,
    base: { service: 'wikiedge' },
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
  };
  if (opts.pretty) {
    return pino({
      ...options,
      transport: { target: 'pino-pretty', options: { colorize: true, translateTime: 'HH:MM:ss.l' } },
    });
  }
  return pino(options, opts.destination ?? stdoutInBatches());
}

/**
 * Standard output, written in batches: a line per request was one write(2) per request, and a
 * system call is dear on these virtual machines (the miss path's profile spent ~10% in it).
 * Lines are held until 64 KiB gather or 250 ms pass, whichever is first, and are written out at
 * exit (LineBatches); what a SIGKILL or an out-of-memory kill leaves unwritten is at most those
 * 64 KiB (~200 request lines). A fatal line is written synchronously (pino calls flushSync() for it).
 *
 * Why 64 KiB: each asynchronous write is a trip through libuv's thread pool and back, ~35 µs of
 * CPU between the two threads here whatever its size; at 8 KiB (~28 request lines) that was
 * ~1.3 µs of every line, more than building the line (access-log.ts). Measured with the access
 * log's hit line to /dev/null, the event loop turning every 20 lines: 2.2–2.5 µs of CPU per line
 * with 8 KiB batches, 1.5–1.7 with 16 or 32 KiB, 1.0–1.3 with 64 KiB. Synchronous writes were as
 * cheap, but a stuck reader of stdout would then stop the gateway; a slow one here only makes
 * sonic-boom hold more.
 */
function stdoutInBatches(): pino.DestinationStream {
  return batchedDestination(1);
}

const BATCH_BYTES = 64 * 1024;

/** A sonic-boom on `fd` (or path) fed by LineBatches, BATCH_BYTES at a time. */
export function batchedDestination(dest: number | string, { flushEveryMs = 250 } = {}): LineBatches {
  // sonic-boom's minLength just under a batch: a full batch is written at once; a remainder
  // handed over by the interval, flush() or flushSync() stays pending in sonic-boom, so that its
  // flush(cb) waits for the write and its flushSync() writes it (with minLength 0 the first
  // called back at once and the second found the lines already in an asynchronous write).
  // maxWrite (sonic-boom's largest write, 16 KiB by default) must stay above minLength.
  return new LineBatches(
    pino.destination({ dest, sync: false, minLength: BATCH_BYTES - 1, maxWrite: 2 * BATCH_BYTES }),
    BATCH_BYTES,
    flushEveryMs,
  );
}

type Destination = ReturnType<typeof pino.destination>;

/**
 * Lines gathered here and handed to sonic-boom a batch at a time. sonic-boom measures, on every
 * write(), the UTF-8 length of the whole string it is gathering
 * (`Buffer.byteLength(bufs[bufs.length - 1])` in sonic-boom 4.2's write()), so gathering 8 KiB
 * there cost ~3 µs per request line, two thirds of it that measuring; handed whole batches it
 * costs ~1 µs (a line per hit: docs/BENCHMARKS.md). A full batch is written at once; a
 * remainder (handed over every flushEveryMs, by flush() or by flushSync()) waits in sonic-boom
 * below its minLength until the flush that follows (batchedDestination).
 */
export class LineBatches implements pino.DestinationStream {
  private lines: string[] = [];
  private chars = 0;

  constructor(
    private readonly sink: Destination,
    private readonly batchChars: number,
    flushEveryMs: number,
  ) {
    setInterval(() => {
      this.handOver();
      try {
        this.sink.flush();
      } catch {
        // Destroyed: nothing more can be written (and a throw here would end the process).
      }
    }, flushEveryMs).unref();
    // pino flushes the sonic-boom it built when the process exits; the lines still held here
    // must reach it first, whichever exit handler runs first.
    process.on('exit', () => this.flushSync());
  }

  write(line: string): boolean {
    this.lines.push(line);
    this.chars += line.length;
    if (this.chars >= this.batchChars) this.handOver();
    return true;
  }

  /** pino's logger.flush(cb). */
  flush(cb?: (err?: Error) => void): void {
    this.handOver();
    this.sink.flush(cb);
  }

  flushSync(): void {
    this.handOver();
    try {
      this.sink.flushSync();
    } catch {
      // Not open yet, destroyed, or stdout gone (EPIPE): nothing more can be written.
    }
  }

  private handOver(): void {
    if (this.lines.length === 0) return;
    const batch = this.lines.length === 1 ? this.lines[0]! : this.lines.join('');
    this.lines = [];
    this.chars = 0;
    this.sink.write(batch);
  }
}
