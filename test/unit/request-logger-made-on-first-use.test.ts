// request.log on the public listener (observe/logging.ts lazyRequestLogger): pino's child with the
// request id bound is made only when a request logs through it, and then logs exactly what the
// child Fastify used to make would have: the parent's bindings, the request id, the redaction.
import { Writable } from 'node:stream';
import { describe, expect, it, vi } from 'vitest';
import { createLogger, lazyRequestLogger } from '../../src/observe/logging.js';

function capture(level: 'info' | 'warn' = 'info') {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString('utf8').split('\n')) if (line) lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return { log: createLogger(level, { destination: sink }), lines };
}

describe('a request logger', () => {
  it('makes no child until the request logs, then one, with the request id and the parent bindings', async () => {
    const { log, lines } = capture();
    const child = vi.spyOn(log, 'child');
    const requestLog = lazyRequestLogger(log, { reqId: 'r-1' }, {});
    expect(child).not.toHaveBeenCalled();
    expect(requestLog.level).toBe('info');
    expect(requestLog.isLevelEnabled('warn')).toBe(true);
    expect(requestLog.isLevelEnabled('debug')).toBe(false);
    expect(child).not.toHaveBeenCalled();

    requestLog.warn({ code: 'wikiedge-upstream-unreachable' }, 'gateway error');
    requestLog.error('second');
    expect(child).toHaveBeenCalledTimes(1);
    log.flush();
    await vi.waitFor(() => expect(lines).toHaveLength(2));
    expect(lines[0]).toMatchObject({ level: 40, service: 'wikiedge', reqId: 'r-1', code: 'wikiedge-upstream-unreachable', msg: 'gateway error' });
    expect(lines[1]).toMatchObject({ level: 50, reqId: 'r-1', msg: 'second' });
  });

  it('redacts what the parent redacts, and logs nothing below the parent level', async () => {
    const { log, lines } = capture('warn');
    const requestLog = lazyRequestLogger(log, { reqId: 'r-2' }, {});
    requestLog.info('not logged');
    requestLog.warn({ headers: { cookie: 'wiki_session=secret' } }, 'with headers');
    log.flush();
    await vi.waitFor(() => expect(lines).toHaveLength(1));
    expect(JSON.stringify(lines[0])).not.toContain('secret');
    expect(lines[0]).toMatchObject({ reqId: 'r-2', headers: { cookie: '[redacted]' } });
  });

  it("keeps a level of its own given at creation (a route's logLevel)", () => {
    const { log } = capture('info');
    const requestLog = lazyRequestLogger(log, { reqId: 'r-3' }, { level: 'error' });
    expect(requestLog.level).toBe('error');
    expect(requestLog.isLevelEnabled('warn')).toBe(false);
    expect(requestLog.bindings()).toMatchObject({ reqId: 'r-3' });
  });
});
