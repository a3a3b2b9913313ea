// dist/main.js as its own process on free loopback ports, for the tests about what the process
// does (signals, exit codes, its stdout): started with a minimal environment, ready when the
// admin listener answers.
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { closedPort } from './fake-upstream.js';
import { http } from './http.js';

export const mainJs = path.resolve(import.meta.dirname, '../../dist/main.js');
/** The built gateway exists (npm test builds it first); tests that spawn it run only then. */
export const built = existsSync(mainJs);

export interface SpawnedGateway {
  readonly child: ChildProcessWithoutNullStreams;
  readonly port: number;
  readonly adminPort: number;
  readonly url: string;
  readonly adminUrl: string;
  /** The exit code, once it has exited. */
  readonly exited: Promise<number | null>;
  stdout(): string;
  stderr(): string;
}

export async function spawnGateway(upstream: string, env: Record<string, string> = {}): Promise<SpawnedGateway> {
  const [port, adminPort] = [await closedPort(), await closedPort()];
  const child = spawn(process.execPath, [mainJs], {
    env: {
      PATH: process.env['PATH'] ?? '',
      WIKIEDGE_UPSTREAM: upstream,
      WIKIEDGE_HOST: '127.0.0.1',
      WIKIEDGE_PORT: String(port),
      WIKIEDGE_ADMIN_PORT: String(adminPort),
      ...env,
    },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const adminUrl = `http://127.0.0.1:${adminPort}`;
  // A deadline, not a count of tries: on a loaded 2-core machine a cluster's primary and workers
  // take far longer than the 5 s that 200 tries of 25 ms gave (its healthz waits for them).
  const deadline = Date.now() + 45_000;
  for (;;) {
    if (await http(`${adminUrl}/healthz`).then((r) => r.status === 200, () => false)) break;
    if (Date.now() > deadline || child.exitCode !== null) throw new Error(`the gateway did not come up within 45 s: ${stderr}`);
    await new Promise((r) => setTimeout(r, 25));
  }
  return {
    child,
    port,
    adminPort,
    url: `http://127.0.0.1:${port}`,
    adminUrl,
    exited,
    stdout: () => stdout,
    stderr: () => stderr,
  };
}
