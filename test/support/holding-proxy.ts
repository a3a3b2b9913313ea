// An HTTP proxy in front of the real wiki that can hold one answer back: the wiki has answered
// (its answer is the state before whatever the test does next), but the gateway receives it only
// when the test releases it. For races such as "fetched before a change, stored after it".
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';

export interface HeldAnswer {
  /** Resolves once the wiki has answered the held request (its answer is now fixed). */
  readonly answered: Promise<void>;
  /** Let the answer go on to the gateway. */
  release(): void;
}

export interface HoldingProxy {
  readonly url: string;
  /** Hold back the answer to the next request whose URL contains `marker`. */
  hold(marker: string): HeldAnswer;
  close(): Promise<void>;
}

export async function startHoldingProxy(target: string): Promise<HoldingProxy> {
  const holds = new Map<string, { answered: () => void; released: Promise<void> }>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        const headers = { ...req.headers };
        delete headers['host'];
        delete headers['connection'];
        const up = await request(new URL(req.url ?? '/', target), {
          method: (req.method ?? 'GET') as 'GET',
          headers: headers as Record<string, string>,
          body: chunks.length > 0 ? Buffer.concat(chunks) : null,
        });
        const body = Buffer.from(await up.body.arrayBuffer());
        const marker = [...holds.keys()].find((m) => req.url?.includes(m));
        if (marker !== undefined) {
          const held = holds.get(marker)!;
          holds.delete(marker);
          held.answered();
          await held.released;
        }
        const out: Record<string, string | string[]> = {};
        for (const [k, v] of Object.entries(up.headers)) if (v !== undefined && k !== 'transfer-encoding' && k !== 'connection') out[k] = v;
        res.writeHead(up.statusCode, out);
        res.end(body);
      })().catch(() => res.destroy());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    hold(marker) {
      let answered!: () => void;
      let release!: () => void;
      const answeredP = new Promise<void>((r) => (answered = r));
      const released = new Promise<void>((r) => (release = r));
      holds.set(marker, { answered, released });
      return { answered: answeredP, release };
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
