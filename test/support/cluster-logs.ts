// The JSON log lines of a spawned gateway (a line may still be on its way: only complete ones),
// and waiting on them without a clock: until a condition holds, or the gateway has exited.
import type { SpawnedGateway } from './spawned.js';

export function logLines(gw: SpawnedGateway): Record<string, unknown>[] {
  return gw
    .stdout()
    .split('\n')
    .slice(0, -1)
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

export function logged(gw: SpawnedGateway, msg: string | RegExp): Record<string, unknown>[] {
  return logLines(gw).filter((l) => (typeof msg === 'string' ? l['msg'] === msg : msg.test(String(l['msg']))));
}

export async function untilLogged(gw: SpawnedGateway, check: () => boolean | Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (gw.child.exitCode !== null || gw.child.signalCode !== null) throw new Error(`the gateway exited (signal ${gw.child.signalCode}): ${gw.stderr()}`);
    if (Date.now() > deadline) throw new Error(`timed out; log so far:\n${gw.stdout()}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
