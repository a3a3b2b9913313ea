// One gateway in front of one stand-in wiki for a whole describe block: the setup most in-process
// tests share, started before the block's first test and closed after its last.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterAll, beforeAll } from 'vitest';
import { type FakeUpstream, startFakeUpstream } from './fake-upstream.js';
import { type RunningGateway, startGateway } from './gateway.js';

export interface GatewayOnFake {
  /** Set once the block's beforeAll has run: read them inside tests, not at collection time. */
  readonly fake: FakeUpstream;
  readonly gw: RunningGateway;
}

/** Call inside `describe`: registers the block's beforeAll/afterAll and returns the pair. */
export function gatewayOnFake(answer: (req: IncomingMessage, res: ServerResponse) => void, env: Record<string, string> = {}): GatewayOnFake {
  const pair: { fake?: FakeUpstream; gw?: RunningGateway } = {};
  beforeAll(async () => {
    pair.fake = await startFakeUpstream(answer);
    pair.gw = await startGateway(pair.fake.url, env);
  });
  afterAll(async () => {
    await pair.gw?.close();
    await pair.fake?.close();
  });
  return {
    get fake() {
      if (!pair.fake) throw new Error('gatewayOnFake: read `fake` inside a test, after beforeAll');
      return pair.fake;
    },
    get gw() {
      if (!pair.gw) throw new Error('gatewayOnFake: read `gw` inside a test, after beforeAll');
      return pair.gw;
    },
  };
}

/** The stand-in answer most tests need: a private (never cached) empty JSON object. */
export function answerPrivateEmptyJson(_req: IncomingMessage, res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'private, must-revalidate, max-age=0' });
  res.end('{}');
}
