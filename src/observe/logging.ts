/**
 * pino, JSON in production. Credentials never reach a log line: cookie, authorization and
 * set-cookie are redacted wherever they appear, and request lines carry the URL with the values
 * of credential parameters replaced (observe/access-log.ts redactQuery).
 */
import pino, { type Logger } from 'pino';
import type { LogLevel } from '../config/config.js';

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

export function createLogger(level: LogLevel, opts: { pretty?: boolean; destination?: pino.DestinationStream } = {}): Logger {
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
 * exit (LineBuffer); what a SIGKILL or an out-of-memory kill leaves unwritten is at most those
 * 64 KiB (~200 request lines). A fatal line is written synchronously (pino calls flushSync() for it).
 *
 * Why 64 KiB: each asynchronous write is a trip through libuv's thread pool and back, ~35 µs of
 * CPU between the two threads here whatever its size; at 8 KiB (~28 request lines) that was
 * ~1.3 µs of every line, more than building the line (observe/access-log.ts). Measured with the access
 * log's hit line to /dev/null, the event loop turning every 20 lines: 2.2–2.5 µs of CPU per line
 * with 8 KiB batches, 1.5–1.7 with 16 or 32 KiB, 1.0–1.3 with 64 KiB. Synchronous writes were as
 * cheap, but a stuck reader of stdout would then stop the gateway; a slow one here only makes
 * sonic-boom hold more, up to MAX_PENDING_BYTES (then batches are dropped and counted:
 * droppedLogLines).
 */
function stdoutInBatches(): pino.DestinationStream {
  return batchedDestination(1);
}

const BATCH_BYTES = 64 * 1024;
/**
 * What sonic-boom may hold for a reader that does not keep up (16 MiB, ~50,000 request lines):
 * beyond it whole batches are dropped and counted (wikiedge_log_lines_dropped_total) rather
 * than held without bound or waited for.
 */
const MAX_PENDING_BYTES = 16 * 1024 * 1024;

/** Lines dropped because the reader of the log did not keep up (MAX_PENDING_BYTES), since start. */
let droppedLines = 0;
export function droppedLogLines(): number {
  return droppedLines;
}

/** A sonic-boom on `fd` (or path) fed by LineBuffer, BATCH_BYTES at a time. */
export function batchedDestination(dest: number | string, { flushEveryMs = 250 } = {}): LineBuffer {
  if (typeof dest === 'number') return new LineBuffer(dest === 1 ? standardOutput() : sonicBoom(dest), BATCH_BYTES, flushEveryMs);
  return new LineBuffer(sonicBoom(dest), BATCH_BYTES, flushEveryMs, { name: dest, open: () => sonicBoom(dest) });
}

function sonicBoom(dest: number | string): Destination {
  // sonic-boom's minLength just under a batch: a full batch is written at once; a remainder
  // handed over by the interval, flush() or flushSync() stays pending in sonic-boom, so that its
  // flush(cb) waits for the write and its flushSync() writes it (with minLength 0 the first
  // called back at once and the second found the lines already in an asynchronous write).
  // maxWrite (sonic-boom's largest write, 16 KiB by default) must stay above minLength. In
  // buffer mode sonic-boom writes a batch handed over alone as it is (no copy, no measuring).
  const sink = pino.destination({
    dest,
    sync: false,
    contentMode: 'buffer',
    minLength: BATCH_BYTES - 1,
    maxWrite: 2 * BATCH_BYTES,
    maxLength: MAX_PENDING_BYTES,
  });
  sink.on('drop', (batch: Buffer) => {
    for (let at = batch.indexOf(0x0a); at !== -1; at = batch.indexOf(0x0a, at + 1)) droppedLines++;
  });
  if (typeof dest === 'number') {
    // An EventEmitter's 'error' without a listener is thrown, and ends the process
    // (https://nodejs.org/api/events.html#error-events): a descriptor that cannot be written
    // (EPIPE, EIO) is said once; sonic-boom keeps what it holds (up to MAX_PENDING_BYTES, then
    // drops and counts) and tries again at the next flush. A file's errors: LineBuffer.failed.
    let told = false;
    sink.on('error', (err: Error) => {
      if (!told)
        tellOnStderr(
          { fd: dest, err: String(err) },
          `log: cannot write to file descriptor ${dest}; its lines are held and tried again, then dropped and counted`,
        );
      told = true;
    });
  }
  return sink;
}

/**
 * One sonic-boom on standard output for the whole process: the logger's batches and, after an
 * access-log file failed (LineBuffer.failed), that file's batches. One writer, so two batches
 * never interleave on a pipe (a write(2) above PIPE_BUF is not atomic, pipe(7)).
 */
let stdoutSink: Destination | undefined;
function standardOutput(): Destination {
  return (stdoutSink ??= sonicBoom(1));
}

/**
 * A line of pino's shape on standard error, synchronously (stderr is synchronous for files and
 * pipes, https://nodejs.org/api/process.html#a-note-on-process-io): what a log writer says about
 * itself cannot go through the writer that failed.
 */
function tellOnStderr(fields: Record<string, unknown>, msg: string): void {
  try {
    process.stderr.write(`${JSON.stringify({ level: 50, time: Date.now(), service: 'wikiedge', ...fields, msg })}\n`);
  } catch {
    // Standard error gone too: nothing more can be said.
  }
}

/** A file a LineBuffer appends to: opened again by name by reopen() after it failed. */
export interface LogFile {
  readonly name: string;
  open(): Destination;
}

type Destination = ReturnType<typeof pino.destination>;

/**
 * Lines encoded (UTF-8) straight into a batch buffer as they come, and the buffer handed to
 * sonic-boom when the next line would not fit. Gathering strings and joining them (what this
 * did before) went over every line four times after building it: V8 flattening the
 * concatenated line into the joined batch, sonic-boom's `Buffer.byteLength` of the batch, and
 * the UTF-8 encoding of the batch for fs.write; counted with callgrind in steady state, ~7,500
 * instructions per hit line to /dev/null, ~6,600 encoding each line here (docs/BENCHMARKS.md,
 * "A log line per hit, run O's code"; a writer putting the hit line's bytes into the buffer itself was tried: ~8,600).
 * A remainder is handed over every flushEveryMs, by flush() or by flushSync(), and waits in
 * sonic-boom below its minLength until the flush that follows (batchedDestination).
 */
export class LineBuffer implements pino.DestinationStream {
  /** The batch being filled: bytes [0, used) are lines. */
  private buf: Buffer;
  private used = 0;
  /** Where batches go: the file's sonic-boom, or standard output's once the file failed (failed()). */
  private sink: Destination;
  /** The file's sonic-boom failed: batches go to standard output until reopen() opens it again. */
  private fellBack = false;
  private readonly timer: NodeJS.Timeout;
  private readonly onExit = () => this.flushSync();

  constructor(
    sink: Destination,
    private readonly batchBytes: number,
    flushEveryMs: number,
    private readonly file?: LogFile,
  ) {
    this.sink = sink;
    if (file) this.watch(sink);
    this.buf = Buffer.allocUnsafeSlow(batchBytes);
    this.timer = setInterval(() => {
      try {
        this.handOver();
        this.sink.flush();
      } catch {
        // Destroyed: nothing more can be written (and a throw here would end the process).
      }
    }, flushEveryMs).unref();
    // pino flushes the sonic-boom it built when the process exits; the lines still held here
    // must reach it first, whichever exit handler runs first.
    process.on('exit', this.onExit);
  }

  /**
   * Every line held written, then the file let go (a reload away from it: observe/access-log.ts).
   * A buffer whose file failed writes to standard output's writer, which the process's own
   * logger shares: that one is never ended here.
   */
  close(): void {
    clearInterval(this.timer);
    process.off('exit', this.onExit);
    this.flushSync();
    if (this.fellBack) return;
    try {
      this.sink.end();
    } catch {
      // Already destroyed.
    }
  }

  write(line: string): boolean {
    // At most 3 bytes of UTF-8 per UTF-16 unit: a line that could not fit a batch is handed over
    // alone, after what was held; one that may not fit what is left first hands the batch over.
    const most = line.length * 3;
    if (most > this.batchBytes) {
      this.handOver(true);
      this.sink.write(Buffer.from(line, 'utf8') as unknown as string);
      return true;
    }
    if (this.batchBytes - this.used < most) this.handOver(true);
    this.used += this.buf.write(line, this.used);
    return true;
  }

  /**
   * For a writer that puts a line's bytes into the batch itself (observe/access-log.ts AccessLog.hit):
   * the batch, with room for `most` more bytes from `batchEnd` (what was held is handed over
   * first when it lacks that room); the line counts once `commit` is called with where it ends.
   * Null when a line of `most` bytes could never fit a batch: write it as a string instead.
   */
  reserve(most: number): Buffer | null {
    if (most > this.batchBytes) return null;
    if (this.batchBytes - this.used < most) this.handOver(true);
    return this.buf;
  }

  /** Where the next line's bytes go in the batch reserve() gave. */
  get batchEnd(): number {
    return this.used;
  }

  /** The line written after batchEnd ends at `end` (at most the room reserve() was asked for). */
  commit(end: number): void {
    this.used = end;
  }

  /** pino's logger.flush(cb). */
  flush(cb?: (err?: Error) => void): void {
    this.handOver();
    this.sink.flush(cb);
  }

  /**
   * Close the file and open it again by its name (SIGUSR1, as nginx reopens its logs): after
   * logrotate has moved it, new lines go to a new file of that name. What was written before
   * stays in the moved file; lines held here or in sonic-boom are written to the new one, so
   * none is lost (sonic-boom waits for a write under way before it reopens).
   */
  reopen(): void {
    this.handOver();
    if (this.file && this.fellBack) {
      // A sonic-boom whose file could not be opened has no name left to reopen: a new one.
      this.fellBack = false;
      this.sink = this.file.open();
      this.watch(this.sink);
      return;
    }
    try {
      this.sink.reopen();
    } catch (err) {
      if (this.file) this.failed(this.sink, err as Error);
    }
  }

  /** Whether the file failed and its lines go to standard output now (failed()). */
  get fallenBack(): boolean {
    return this.fellBack;
  }

  private watch(sink: Destination): void {
    sink.on('error', (err: Error) => this.failed(sink, err));
  }

  /**
   * The file could not be opened (ENOENT, EACCES, EROFS: a directory that is not there, a
   * read-only container) or written (ENOSPC): sonic-boom emits 'error', which without a
   * listener would end the process (https://nodejs.org/api/events.html#error-events) and
   * refuse every connection after. Said once on standard error; the lines from here on go to
   * standard output, as without WIKIEDGE_ACCESS_LOG_FILE, until SIGUSR1 opens the file again
   * (reopen()). What the failed sonic-boom held (at most MAX_PENDING_BYTES) is lost.
   * test/in-process/access-log-file-that-cannot-be-written-never-ends-the-process.test.ts.
   */
  private failed(sink: Destination, err: Error): void {
    if (sink !== this.sink || this.fellBack) return;
    this.fellBack = true;
    this.sink = standardOutput();
    // Its descriptor, if it has one, is let go: held, a disk filled by the log (ENOSPC) stayed
    // full after the file was removed, and every SIGUSR1 while fallen back kept one more.
    try {
      sink.destroy();
    } catch {
      // Not open: nothing to let go.
    }
    tellOnStderr(
      { file: this.file?.name, err: String(err) },
      `access log: cannot write to ${this.file?.name}; its lines go to standard output until SIGUSR1 reopens it`,
    );
  }

  flushSync(): void {
    this.handOver();
    try {
      this.sink.flushSync();
    } catch {
      // Not open yet, destroyed, or stdout gone (EPIPE): nothing more can be written.
    }
  }

  /**
   * `full`: the next line did not fit. Such a batch is a little short of BATCH_BYTES (write()
   * asks 3 bytes per char), below sonic-boom's minLength: flush() has it written at once.
   */
  private handOver(full = false): void {
    if (this.used === 0) return;
    const batch = this.buf.subarray(0, this.used);
    this.buf = Buffer.allocUnsafeSlow(this.batchBytes);
    this.used = 0;
    // sonic-boom's types say string; in buffer mode it takes Buffers.
    this.sink.write(batch as unknown as string);
    if (full) {
      try {
        this.sink.flush();
      } catch {
        // Destroyed: nothing more can be written.
      }
    }
  }
}

/**
 * Fastify's `childLoggerFactory` for the public listener: each request's `request.log` is a
 * stand-in that makes pino's child (with the request id bound) only when something logs through
 * it. Fastify's own factory made the child for every request, ~2 µs of a miss (pino serialises
 * the bindings at once; docs/BENCHMARKS.md, the miss profile), while the gateway's request line is
 * its own (observe/access-log.ts) and only a warning or an error ever goes through request.log.
 */
export function lazyRequestLogger(logger: Logger, bindings: pino.Bindings, options: pino.ChildLoggerOptions): Logger {
  return new LazyChild(logger, bindings, options) as unknown as Logger;
}

/** A pino logger's methods, delegated to the child made on first use. */
class LazyChild {
  private made: Logger | undefined;

  constructor(
    private readonly parent: Logger,
    private readonly childBindings: pino.Bindings,
    private readonly options: pino.ChildLoggerOptions,
  ) {}

  private get real(): Logger {
    return (this.made ??= this.parent.child(this.childBindings, this.options));
  }

  get level(): string {
    return this.made?.level ?? this.options.level ?? this.parent.level;
  }
  set level(level: string) {
    this.real.level = level;
  }
  isLevelEnabled(level: string): boolean {
    return this.made?.isLevelEnabled(level) ?? (this.options.level === undefined ? this.parent.isLevelEnabled(level) : this.real.isLevelEnabled(level));
  }
  bindings(): pino.Bindings {
    return this.real.bindings();
  }
  child(bindings: pino.Bindings, options?: pino.ChildLoggerOptions): Logger {
    return this.real.child(bindings, options);
  }
  fatal(...args: Parameters<pino.LogFn>): void {
    this.real.fatal(...args);
  }
  error(...args: Parameters<pino.LogFn>): void {
    this.real.error(...args);
  }
  warn(...args: Parameters<pino.LogFn>): void {
    this.real.warn(...args);
  }
  info(...args: Parameters<pino.LogFn>): void {
    this.real.info(...args);
  }
  debug(...args: Parameters<pino.LogFn>): void {
    this.real.debug(...args);
  }
  trace(...args: Parameters<pino.LogFn>): void {
    this.real.trace(...args);
  }
  silent(): void {}
}
