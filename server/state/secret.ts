/**
 * The bearer secret shared by the server, the CLI and the extension: created and rotated here,
 * written atomically (its location and format: server/protocol/local-files.ts).
 */
import { existsSync } from 'node:fs';
import { chmod, mkdir } from './fs-async.ts';
import { dirname } from 'node:path';
import { createFileOnceSync, writeFileAtomic } from './atomic.ts';
import { randomHex } from '../protocol/handshake.ts';
import { DIR_MODE } from './paths.ts';
import { clientTokenPath, readClientTokenSync, readSecretSync, secretPath } from '../protocol/local-files.ts';

export { clientTokenPath, isValidSecret, readClientTokenSync, readSecretSync, secretPath } from '../protocol/local-files.ts';

/** `{"<key>": "<token>"}` written atomically, 0600, its folder made first (the secret's is the extension folder). */
async function writeTokenFile(path: string, key: string, token: string): Promise<void> {
  await mkdir(dirname(path), { recursive: true, mode: DIR_MODE });
  await writeFileAtomic(path, JSON.stringify({ [key]: token }) + '\n', 0o600);
}

/**
 * Reuse the token stored under `key` at `path`; create one when there is none (or the file is
 * corrupt). Two servers started at the same moment on a new config dir (two terminals, two
 * clients' stdio bridges) end with the same token: the second one finds the first one's file
 * (createFileOnceSync) instead of writing over it, so the server that won the port never holds a
 * token that is not the one on disk.
 */
async function loadOrCreateTokenFile(path: string, key: string, read: () => string | null): Promise<string> {
  const existing = read();
  if (existing) {
    await chmod(path, 0o600).catch(() => {});
    return existing;
  }
  const token = randomHex(32);
  if (!existsSync(path)) {
    await mkdir(dirname(path), { recursive: true, mode: DIR_MODE });
    if (createFileOnceSync(path, JSON.stringify({ [key]: token }) + '\n', 0o600)) return token;
    const theirs = read();
    if (theirs) return theirs;
  }
  await writeTokenFile(path, key, token);
  return token;
}

/** The bearer secret of auth.json (the user's: the CLI and the extension). */
export function loadOrCreateSecret(dir: string): Promise<string> {
  return loadOrCreateTokenFile(secretPath(dir), 'secret', () => readSecretSync(dir));
}

/**
 * The client token (what MCP client configs hold: MCP, tool calls, the read-only routes), in the
 * config folder itself rather than in the extension folder Chrome loads.
 */
export function loadOrCreateClientToken(dir: string): Promise<string> {
  return loadOrCreateTokenFile(clientTokenPath(dir), 'clientToken', () => readClientTokenSync(dir));
}

/**
 * A fresh secret (`opentabs config rotate-secret`), and a fresh client token with it; running
 * servers pick both up on reload.
 */
export async function rotateSecret(dir: string): Promise<string> {
  const secret = randomHex(32);
  await writeTokenFile(secretPath(dir), 'secret', secret);
  await writeTokenFile(clientTokenPath(dir), 'clientToken', randomHex(32));
  return secret;
}
