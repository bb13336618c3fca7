/**
 * After a build, tell a running server to rediscover plugins (POST /reload with the bearer
 * secret). Finds the server through <configDir>/server.pid; silently does nothing when no server
 * is running or reachable, or when the process on that port cannot prove it knows the secret
 * (server/protocol/handshake.ts): then the secret is not sent.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CLIENT_NONCE_HEADER, checkServerProof, randomHex } from '../../server/protocol/handshake.ts';
import { HOST } from '../../server/protocol/limits.ts';
import { readSecretSync, resolveConfigDir } from '../../server/protocol/local-files.ts';

export async function notifyServerReload(configDir: string = resolveConfigDir()): Promise<boolean> {
  let port: number;
  try {
    port = Number(JSON.parse(readFileSync(join(configDir, 'server.pid'), 'utf8')).port);
  } catch {
    return false;
  }
  if (!Number.isInteger(port) || port <= 0) return false;
  const secret = readSecretSync(configDir);
  if (!secret) return false;
  try {
    if (!(await provesSecret(port, secret))) return false;
    const res = await fetch(`http://${HOST}:${port}/reload`, {
      method: 'POST',
      headers: { authorization: `Bearer ${secret}` },
      signal: AbortSignal.timeout(5000),
    });
    await res.body?.cancel();
    return res.ok;
  } catch {
    return false;
  }
}

/** GET /ws-info with a fresh client nonce: whether the answer carries HMAC(secret, serverProofMessage(…)). */
async function provesSecret(port: number, secret: string): Promise<boolean> {
  const clientNonce = randomHex(16);
  const res = await fetch(`http://${HOST}:${port}/ws-info`, { headers: { [CLIENT_NONCE_HEADER]: clientNonce }, signal: AbortSignal.timeout(5000) });
  if (!res.ok) {
    await res.body?.cancel();
    return false;
  }
  return (await checkServerProof(secret, clientNonce, await res.json().catch(() => null))).ok;
}
