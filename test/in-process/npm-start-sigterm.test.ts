// `npm start` leaves no orphan: npm runs the script under `sh -c`, and the script `exec`s node, so
// node is npm's own child. A SIGTERM to npm's pid (what a process manager sends to the process it
// started) reaches node through npm's signal forwarding; node drains (an in-flight request is
// answered 200) and exits, npm exits after it, and nothing listens any more.
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { closedPort, type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.js';
import { http } from '../support/http.js';
import { built } from '../support/spawned.js';

const root = path.resolve(import.meta.dirname, '../..');

/** The pids of a process's children (Linux: /proc/<pid>/task/<pid>/children). */
function childrenOf(pid: number): number[] {
  const text = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim();
  return text === '' ? [] : text.split(/\s+/).map(Number);
}

function commandLine(pid: number): string {
  return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim();
}

/** Every process under pid, children first. */
function descendantsOf(pid: number): number[] {
  return childrenOf(pid).flatMap((c) => [c, ...descendantsOf(c)]);
}

/** Running (a zombie has exited: only its parent has not collected it yet). */
function alive(pid: number): boolean {
  try {
    return !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, 'utf8'));
  } catch {
    return false;
  }
}

describe('npm start', () => {
  let fake: FakeUpstream | undefined;
  let npm: ChildProcess | undefined;
  /** What npm started, killed after the test if a failure left it running (the orphan this is about). */
  let started: number[] = [];
  afterEach(async () => {
    if (npm?.exitCode === null && npm.signalCode === null) npm.kill('SIGKILL');
    for (const pid of started) if (alive(pid)) process.kill(pid, 'SIGKILL');
    await fake?.close();
  });

  it.runIf(built && existsSync('/proc/self/task'))('SIGTERM to npm reaches node, which drains and exits: no orphan left listening', async () => {
    // A wiki that takes 500 ms: a request is in flight when the signal comes.
    fake = await startFakeUpstream((_req, res) => {
      setTimeout(() => {
        res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'private, must-revalidate, max-age=0' });
        res.end('{"batchcomplete":true}');
      }, 500);
    });
    const [port, adminPort] = [await closedPort(), await closedPort()];
    const npmStart = spawn('npm', ['start', '--silent'], {
      cwd: root,
      env: {
        PATH: process.env['PATH'] ?? '',
        HOME: process.env['HOME'] ?? '/tmp',
        WIKIEDGE_UPSTREAM: fake.url,
        WIKIEDGE_HOST: '127.0.0.1',
        WIKIEDGE_PORT: String(port),
        WIKIEDGE_ADMIN_PORT: String(adminPort),
        WIKIEDGE_LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    npm = npmStart;
    let stderr = '';
    npmStart.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    npmStart.stdout.resume();
    const npmExited = new Promise<number | null>((resolve) => npmStart.on('exit', (code) => resolve(code)));
    for (
      let i = 0;
      !(await http(`http://127.0.0.1:${adminPort}/healthz`).then(
        (r) => r.status === 200,
        () => false,
      ));
      i++
    ) {
      if (i === 400 || npmStart.exitCode !== null) throw new Error(`npm start did not come up: ${stderr}`);
      await new Promise((r) => setTimeout(r, 25));
    }

    started = descendantsOf(npmStart.pid!);
    // exec: npm's one child is node itself, not a shell waiting for it.
    const children = childrenOf(npmStart.pid!);
    expect(children).toHaveLength(1);
    const nodePid = children[0]!;
    expect(commandLine(nodePid)).toMatch(/node dist\/main\.js$/);

    const inFlight = http(`http://127.0.0.1:${port}/w/api.php?action=query&list=filearchive&format=json`);
    // In flight: the wiki has it (and takes 500 ms to answer).
    while (fake.requests.filter((r) => r.url?.includes('list=filearchive')).length === 0) await new Promise((r) => setTimeout(r, 10));
    npmStart.kill('SIGTERM');

    expect((await inFlight).status).toBe(200);
    expect(await npmExited).toBe(0);
    expect(alive(nodePid)).toBe(false);
    await expect(http(`http://127.0.0.1:${port}/w/api.php`)).rejects.toThrow();
    await expect(http(`http://127.0.0.1:${adminPort}/healthz`)).rejects.toThrow();
  });
});
