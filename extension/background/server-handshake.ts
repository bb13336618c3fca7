/**
 * The extension's half of the handshake (server/protocol/handshake.ts) before the WebSocket
 * opens: read auth.json / server.json from the extension's own folder, then GET /ws-info and
 * check that the process on the port proves it knows the secret. Used by connection.ts.
 */
import { CLIENT_NONCE_HEADER, WAITING_HEADER, checkServerProof, randomHex } from '../../server/protocol/handshake.ts';

/** GET /ws-info must be answered within this long (the server answers at once). */
export const HANDSHAKE_FETCH_TIMEOUT_MS = 5_000;

/** A JSON file of the extension's own folder (the server writes auth.json and server.json there), or null. */
export async function readOwnJson<T>(file: string): Promise<T | null> {
  try {
    const res = await fetch(chrome.runtime.getURL(file), { cache: 'no-store' });
    if (!res.ok) return null;
    return (await res.json()) as T;
  } catch {
    return null;
  }
}

/**
 * GET /ws-info with a fresh client nonce and check the server's proof. Nothing derived from the
 * secret is sent before this succeeds; a wrong or missing proof means the process on the port is
 * not our server (or the secret was rotated and auth.json is re-read on the next attempt).
 */
export async function verifiedServer(
  port: number,
  secret: string,
  /** This browser waits while another one holds the server (said so, for the server's status). */
  waiting = false,
): Promise<{ ok: true; serverNonce: string; extensionConnected: boolean } | { ok: false; reason: 'server_not_running' | 'server_unverified'; detail: string }> {
  const clientNonce = randomHex(16);
  let res: Response;
  // Bounded: a process that accepts and never answers, or a pooled connection that died silently
  // (a laptop that slept), would otherwise hold the connect attempt, and every reconnect, forever.
  const signal = AbortSignal.timeout(HANDSHAKE_FETCH_TIMEOUT_MS);
  try {
    res = await fetch(`http://127.0.0.1:${port}/ws-info`, { headers: { [CLIENT_NONCE_HEADER]: clientNonce, ...(waiting ? { [WAITING_HEADER]: '1' } : {}) }, cache: 'no-store', signal });
  } catch {
    if (signal.aborted) {
      return { ok: false, reason: 'server_not_running', detail: `The process on 127.0.0.1:${port} did not answer GET /ws-info within ${HANDSHAKE_FETCH_TIMEOUT_MS / 1000} s; retrying` };
    }
    return { ok: false, reason: 'server_not_running', detail: `No OpenTabs server on 127.0.0.1:${port}: run \`opentabs start\`` };
  }
  const unverified = (why: string) => ({
    ok: false as const,
    reason: 'server_unverified' as const,
    detail: `The process on 127.0.0.1:${port} ${why}, so it is not trusted with the secret. If the OpenTabs server runs there, its secret differs from auth.json (rotated?); otherwise another program holds the port.`,
  });
  if (!res.ok) return unverified(`answered GET /ws-info with HTTP ${res.status} instead of a handshake`);
  let body: unknown;
  try {
    body = await res.json();
  } catch {
    if (signal.aborted) return unverified(`did not finish its answer to GET /ws-info within ${HANDSHAKE_FETCH_TIMEOUT_MS / 1000} s`);
    return unverified('answered GET /ws-info with something other than JSON');
  }
  // The same check the CLI and the stdio bridge run (one definition, server/protocol/handshake.ts).
  const proof = await checkServerProof(secret, clientNonce, body);
  if (!proof.ok) return unverified(`${proof.why} in auth.json`);
  return proof;
}
