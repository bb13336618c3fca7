/**
 * After a build, tell a running server to rediscover plugins (POST /reload with the bearer
 * secret). Finds the server through <configDir>/server.pid; silently does nothing when no server
 * is running or reachable.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
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
