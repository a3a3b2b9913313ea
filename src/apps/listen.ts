/**
 * Binding a listener, and saying plainly why it failed: one line naming the configuration key
 * and the address (`WIKIEDGE_PORT: cannot listen on 0.0.0.0:8080: the address is already in
 * use`), never a stack trace, as nginx says `bind() to 0.0.0.0:80 failed (98: Address already
 * in use)`. main.ts prints it and exits 1.
 */
import { Server } from 'node:http';
import { createServer } from 'node:net';
import type { FastifyInstance } from 'fastify';

/** The listener a key configures. */
export interface ListenerSpec {
  /** WIKIEDGE_PORT or WIKIEDGE_ADMIN_PORT. */
  readonly key: string;
  /** WIKIEDGE_HOST or WIKIEDGE_ADMIN_HOST: the key a failure of the address itself names. */
  readonly hostKey: string;
  readonly host: string;
  readonly port: number;
}

/** Failures of the address, not of the port: the host's key is named. */
const HOST_FAILURES: ReadonlySet<string | undefined> = new Set(['EADDRNOTAVAIL', 'ENOTFOUND', 'EAI_AGAIN', 'EAFNOSUPPORT', 'EINVAL']);

export class ListenError extends Error {
  /** The configuration key the failure names (WIKIEDGE_PORT, WIKIEDGE_HOST, WIKIEDGE_ADMIN_…). */
  readonly key: string;
  constructor(spec: ListenerSpec, cause: unknown) {
    const key = HOST_FAILURES.has((cause as NodeJS.ErrnoException | undefined)?.code) ? spec.hostKey : spec.key;
    super(`${key}: cannot listen on ${hostPort(spec)}: ${why(cause)}`, { cause });
    this.name = 'ListenError';
    this.key = key;
  }
}

function hostPort({ host, port }: ListenerSpec): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}

function why(err: unknown): string {
  const e = err as NodeJS.ErrnoException | undefined;
  switch (e?.code) {
    case 'EADDRINUSE':
      return 'the address is already in use (another process listens there)';
    case 'EACCES':
      return 'permission denied (ports below 1024 need privileges)';
    case 'EADDRNOTAVAIL':
      return 'the address is not one of this machine';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 'the host name does not resolve';
    case 'EAFNOSUPPORT':
      return 'this machine has no such address family (IPv6 turned off?)';
    default:
      return e?.message ?? String(err);
  }
}

/** Fastify's listen(), or a node:http server's, failing with a ListenError. */
export async function listenAs(app: FastifyInstance | Server, spec: ListenerSpec): Promise<void> {
  try {
    if (app instanceof Server) {
      await new Promise<void>((resolve, reject) => {
        app.once('error', reject);
        app.listen({ host: spec.host, port: spec.port }, () => {
          app.off('error', reject);
          resolve();
        });
      });
    } else {
      await app.listen({ host: spec.host, port: spec.port });
    }
  } catch (err) {
    throw new ListenError(spec, err);
  }
}

/**
 * Whether the address can be bound now: bound, then released at once. For a cluster primary,
 * whose workers bind the public port themselves and which binds its admin port only once they
 * listen: a port in use is then said before any worker starts.
 */
export async function checkCanListen(spec: ListenerSpec): Promise<void> {
  const server = createServer();
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen({ host: spec.host, port: spec.port, exclusive: true }, resolve);
    });
  } catch (err) {
    throw new ListenError(spec, err);
  } finally {
    if (server.listening) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
