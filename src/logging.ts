/**
 * pino, JSON in production. Credentials never reach a log line: cookie, authorization and
 * set-cookie are redacted wherever they appear, and request lines carry the path, never the query.
 */
import pino, { type Logger } from 'pino';
import type { LogLevel } from './config.js';

export const REDACT_PATHS = [
  'req.headers.cookie',
  'req.headers.authorization',
  'res.headers["set-cookie"]',
  'headers.cookie',
  'headers.authorization',
  'headers["set-cookie"]',
  '*.cookie',
  '*.authorization',
  '*["set-cookie"]',
];

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
  return opts.destination ? pino(options, opts.destination) : pino(options);
}
