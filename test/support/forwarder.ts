// A TCP forwarder in front of the real wiki that a test can cut, to stop "the wiki" without
// stopping the shared one.
import net, { type AddressInfo, type Server, type Socket } from 'node:net';

export interface Forwarder {
  readonly url: string;
  cut(): Promise<void>;
  close(): Promise<void>;
}

export async function startForwarder(target: string): Promise<Forwarder> {
  const { hostname, port } = new URL(target);
  const sockets = new Set<Socket>();
  let cut = false;
  const server: Server = net.createServer((client) => {
    if (cut) return client.destroy();
    const upstream = net.connect(Number(port), hostname);
    sockets.add(client).add(upstream);
    client.pipe(upstream).pipe(client);
    const done = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('error', done).on('close', done);
    upstream.on('error', done).on('close', done);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    async cut() {
      cut = true;
      for (const s of sockets) s.destroy();
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
