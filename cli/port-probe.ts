/**
 * Who answers on a local port (our server, nobody, something else) and the server a CLI command
 * talks to: the small facts both cli/server-client.ts and cli/port-holder.ts build on.
 */
import { HOST } from '../server/limits.ts';

export interface Target {
  configDir: string;
  port: number;
  url: string;
  /** 'last': no server runs; the port this config dir's server last listened on (extension/server.json). */
  portSource: 'flag' | 'env' | 'pidfile' | 'last' | 'default';
}

export type PortOwner = { kind: 'opentabs' } | { kind: 'free' } | { kind: 'other'; detail: string };

/** Who answers on a port: our server (GET /health → {"status":"ok"}), nobody, or something else. */
export async function probePort(port: number, timeoutMs = 2000): Promise<PortOwner> {
  try {
    const res = await fetch(`http://${HOST}:${port}/health`, { signal: AbortSignal.timeout(timeoutMs) });
    const text = await res.text();
    try {
      const body = JSON.parse(text);
      if (res.ok && body && body.status === 'ok') return { kind: 'opentabs' };
    } catch {}
    const server = res.headers.get('server');
    return { kind: 'other', detail: `an HTTP server answered GET /health with ${res.status}${server ? ` (Server: ${server})` : ''}` };
  } catch {
    // No HTTP answer: tell "nothing listening" from "something non-HTTP listening". (node:net is
    // loaded only here: ≈ 5–9 ms of module evaluation `opentabs start` on a free port never needs.)
    const { connect } = await import('node:net');
    return await new Promise<PortOwner>((resolve) => {
      const sock = connect({ host: HOST, port });
      const done = (r: PortOwner) => {
        sock.destroy();
        resolve(r);
      };
      sock.setTimeout(timeoutMs, () => done({ kind: 'other', detail: 'a process accepted the connection but did not answer HTTP' }));
      sock.once('connect', () => done({ kind: 'other', detail: 'a process accepted the connection but did not answer HTTP' }));
      sock.once('error', (e: NodeJS.ErrnoException) =>
        done(e.code === 'ECONNREFUSED' ? { kind: 'free' } : { kind: 'other', detail: `connecting failed: ${e.code ?? e.message}` }),
      );
    });
  }
}
