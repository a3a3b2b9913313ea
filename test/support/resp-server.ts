// A stand-in Redis: a few lines of RESP over a socket, for tests that need Redis to answer one
// command wrongly or not at all at an exact moment (a refused or unanswered SUBSCRIBE), which a
// real Redis cannot be made to do on cue.
import { createServer, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll } from 'vitest';

/** The commands in `text` (RESP arrays of bulk strings, as ioredis writes them); each chunk read is parsed alone. */
function commands(text: string): string[][] {
  const out: string[][] = [];
  const lines = text.split('\r\n');
  for (let i = 0; i < lines.length; i++) {
    if (!lines[i]!.startsWith('*')) continue;
    const n = Number(lines[i]!.slice(1));
    const args: string[] = [];
    for (let k = 0; k < n; k++) args.push(lines[i + 2 + 2 * k] ?? '');
    out.push(args);
    i += 2 * n;
  }
  return out;
}

/** A RESP bulk string. */
export const bulk = (s: string) => `$${Buffer.byteLength(s)}\r\n${s}\r\n`;

export interface RespServer {
  /** Set once the file's beforeAll has run: read it inside tests. */
  readonly port: number;
  /** How many connections it has accepted. */
  readonly connections: number;
}

/**
 * Call at the top of a test file: a server on 127.0.0.1 that hands every command to `answer` (its
 * name in lower case), started before the file's first test; after its last, the connections still
 * open are dropped and it is closed.
 */
export function respServer(answer: (socket: Socket, name: string, args: string[]) => void): RespServer {
  let server: Server | undefined;
  let port = 0;
  let connections = 0;
  const sockets = new Set<Socket>();
  beforeAll(async () => {
    const s = createServer((socket) => {
      connections++;
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => undefined);
      socket.on('data', (chunk) => {
        for (const [name, ...args] of commands(chunk.toString('utf8'))) answer(socket, name!.toLowerCase(), args);
      });
    });
    server = s;
    await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
    port = (s.address() as { port: number }).port;
  });
  afterAll(async () => {
    for (const socket of sockets) socket.destroy();
    if (server) await new Promise((resolve) => server!.close(resolve));
  });
  return {
    get port() {
      if (!port) throw new Error('respServer: read `port` inside a test, after beforeAll');
      return port;
    },
    get connections() {
      return connections;
    },
  };
}
