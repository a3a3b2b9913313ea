// Run dist/main.js with command-line options, as an operator would, on ports this test holds
// itself: a command that tried to listen would fail there, so exit 0 proves it did not.
import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll } from 'vitest';
import { createServer, type Server } from 'node:net';
import type { AddressInfo } from 'node:net';
import { mainJs } from './spawned.js';

export interface CliRun {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

export function runCli(args: readonly string[], env: Record<string, string>): CliRun {
  const run = spawnSync(process.execPath, [mainJs, ...args], {
    env: { PATH: process.env['PATH'] ?? '', ...env },
    encoding: 'utf8',
    timeout: 20_000,
  });
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}

/** A port held open by this process for as long as the test needs. */
export async function heldPort(): Promise<{ port: number; release(): Promise<void> }> {
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    release: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * For the describe block it is called in: the environment of a gateway on two ports this process
 * holds (a command that tried to listen would fail) in front of a wiki that does not exist (one
 * that asked it would fail too). Filled in before the block's tests run.
 */
export function offlineGatewayEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  const ports: Awaited<ReturnType<typeof heldPort>>[] = [];
  beforeAll(async () => {
    ports.push(await heldPort(), await heldPort());
    Object.assign(env, {
      WIKIEDGE_UPSTREAM: 'http://wiki.invalid:80',
      WIKIEDGE_HOST: '127.0.0.1',
      WIKIEDGE_PORT: String(ports[0]!.port),
      WIKIEDGE_ADMIN_PORT: String(ports[1]!.port),
    });
  });
  afterAll(async () => {
    for (const p of ports) await p.release();
  });
  return env;
}
