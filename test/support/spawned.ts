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

/** How long a spawned gateway may take to answer /healthz. */
const START_WAIT_MS = 45_000;

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

export interface SpawnOptions {
  /**
   * Run from the moment it is spawned, while it starts (a signal sent before it is up); awaited
   * with the start, and the start fails if it throws.
   */
  readonly whileStarting?: (gw: SpawnedGateway) => Promise<void>;
  /** Wait until /healthz answers (the default), or hand it back at once. */
  readonly untilUp?: boolean;
}

/** How often a start whose port was taken meanwhile is tried again on other ports. */
const PORT_TAKEN_TRIES = 3;
const PORT_TAKEN = /cannot listen on .*: the address is already in use/;

/**
 * The gateway on two ports free a moment ago. A port found free can be taken before the child
 * binds it: by another test's listener or, on loopback, by an outgoing connection, whose local
 * port comes from the same ephemeral range (a run of 69d5b35's suite failed so: "WIKIEDGE_ADMIN_PORT:
 * cannot listen on 127.0.0.1:46053: the address is already in use"). Such a start is tried again
 * on other ports; any other failure is the test's.
 */
export async function spawnGateway(upstream: string, env: Record<string, string> = {}, options: SpawnOptions = {}): Promise<SpawnedGateway> {
  for (let tries = 1; ; tries++) {
    try {
      return await spawnOnce(upstream, env, options);
    } catch (err) {
      if (tries >= PORT_TAKEN_TRIES || options.whileStarting || !PORT_TAKEN.test(String(err))) throw err;
    }
  }
}

async function spawnOnce(upstream: string, env: Record<string, string>, options: SpawnOptions): Promise<SpawnedGateway> {
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
  const gw: SpawnedGateway = {
    child,
    port,
    adminPort,
    url: `http://127.0.0.1:${port}`,
    adminUrl,
    exited,
    stdout: () => stdout,
    stderr: () => stderr,
  };
  const during = options.whileStarting?.(gw).then(
    () => undefined,
    (err: unknown) => err ?? new Error('whileStarting failed'),
  );
  if (options.untilUp === false) {
    const err = await during;
    if (err) child.kill('SIGKILL');
    if (err) throw err;
    return gw;
  }
  // A deadline, not a count of tries: on a loaded machine a primary and its workers take seconds.
  const deadline = Date.now() + START_WAIT_MS;
  for (;;) {
    if (
      await http(`${adminUrl}/healthz`).then(
        (r) => r.status === 200,
        () => false,
      )
    )
      break;
    // Ended by a signal, it has no exit code but a signal code.
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`the gateway exited before it came up (code ${child.exitCode}, signal ${child.signalCode}): ${stderr}`);
    }
    if (Date.now() > deadline) {
      // The caller never gets a handle to stop it: stopped here, or it outlives the test run.
      child.kill('SIGKILL');
      throw new Error(`the gateway did not come up within ${START_WAIT_MS} ms: ${stderr}`);
    }
    await new Promise((r) => setTimeout(r, 25));
  }
  const err = await during;
  // The caller never gets a handle to stop it, as above.
  if (err) child.kill('SIGKILL');
  if (err) throw err;
  return gw;
}
