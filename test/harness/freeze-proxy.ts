/**
 * A TCP proxy on 127.0.0.1 in front of the server whose connections can be frozen: they stop
 * forwarding in both directions without closing (no FIN, no RST), as a socket does across a
 * laptop's sleep or a network path that silently stops. Connections opened after freeze() are
 * forwarded as usual, so whatever reconnects gets through.
 *
 *   const proxy = await startFreezeProxy(srv.port);
 *   … connect through proxy.port …
 *   proxy.freeze();            // every connection open now goes silent
 *   proxy.stop();
 */
import { createConnection, createServer, type Server, type Socket } from 'node:net';

interface Pair {
  client: Socket;
  upstream: Socket;
  frozen: boolean;
  /** The first bytes the client sent (its request line). */
  head: string;
}

export interface FreezeProxy {
  port: number;
  /** Connections that are open and not frozen, with the request line they started with. */
  live(): { head: string }[];
  /** How many connections were ever opened. */
  readonly opened: number;
  /** Every connection open now stops forwarding, silently and for good; new ones are not affected. */
  freeze(): number;
  stop(): void;
}

export async function startFreezeProxy(targetPort: number): Promise<FreezeProxy> {
  const pairs = new Set<Pair>();
  let opened = 0;
  const server: Server = createServer((client) => {
    opened++;
    const upstream = createConnection({ host: '127.0.0.1', port: targetPort });
    const pair: Pair = { client, upstream, frozen: false, head: '' };
    pairs.add(pair);
    const drop = () => {
      // A frozen pair says nothing to either side, closing included.
      if (pair.frozen) return;
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on('data', (d: Buffer) => {
      if (!pair.head) pair.head = d.toString('latin1', 0, Math.min(d.length, 80)).split('\r\n')[0] ?? '';
      if (!pair.frozen) upstream.write(d);
    });
    upstream.on('data', (d: Buffer) => {
      if (!pair.frozen) client.write(d);
    });
    client.on('close', drop);
    upstream.on('close', drop);
    client.on('error', () => {});
    upstream.on('error', () => {});
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('the proxy has no port');
  return {
    port: address.port,
    live: () => [...pairs].filter((p) => !p.frozen && !p.client.destroyed).map((p) => ({ head: p.head })),
    get opened() {
      return opened;
    },
    freeze() {
      let n = 0;
      for (const p of pairs) {
        if (p.frozen) continue;
        p.frozen = true;
        // Stop reading too: what either side sends piles up in the kernel, as on a dead path.
        p.client.pause();
        p.upstream.pause();
        n++;
      }
      return n;
    },
    stop() {
      server.close();
      for (const p of pairs) {
        p.client.destroy();
        p.upstream.destroy();
      }
      pairs.clear();
    },
  };
}
