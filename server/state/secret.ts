/**
 * The bearer secret shared by the server, the CLI and the extension: created and rotated here,
 * written atomically (its location and format: server/protocol/local-files.ts).
 */
import { existsSync } from 'node:fs';
import { chmod, mkdir } from './fs-async.ts';
import { join } from 'node:path';
import { createFileOnceSync, writeFileAtomic } from './atomic.ts';
import { randomHex } from '../protocol/handshake.ts';
import { DIR_MODE } from './paths.ts';
import { clientTokenPath, readClientTokenSync, readSecretSync, secretPath } from '../protocol/local-files.ts';

export { clientTokenPath, isValidSecret, readClientTokenSync, readSecretSync, secretPath } from '../protocol/local-files.ts';

async function writeSecret(dir: string, secret: string): Promise<void> {
  await mkdir(join(dir, 'extension'), { recursive: true, mode: DIR_MODE });
  await writeFileAtomic(secretPath(dir), JSON.stringify({ secret }) + '\n', 0o600);
}

/** Create the secret file only if there is none (createFileOnceSync: true, false when taken, null without hard links). */
async function createSecretOnce(dir: string, secret: string): Promise<boolean | null> {
  await mkdir(join(dir, 'extension'), { recursive: true, mode: DIR_MODE });
  return createFileOnceSync(secretPath(dir), JSON.stringify({ secret }) + '\n', 0o600);
}

/**
 * Reuse the stored secret; create one on first start (or when the file is corrupt). Two servers
 * started at the same moment on a new config dir (two terminals, two clients' stdio bridges) end
 * with the same secret: the second one finds the first one's file instead of writing over it, so
 * the server that won the port never holds a secret that is not the one on disk.
 */
export async function loadOrCreateSecret(dir: string): Promise<string> {
  const existing = readSecretSync(dir);
  if (existing) {
    await chmod(secretPath(dir), 0o600).catch(() => {});
    return existing;
  }
  const secret = randomHex(32);
  if (!existsSync(secretPath(dir))) {
    const created = await createSecretOnce(dir, secret);
    if (created) return secret;
    const theirs = readSecretSync(dir);
    if (theirs) return theirs;
  }
  await writeSecret(dir, secret);
  return secret;
}

/**
 * The client token (what MCP client configs hold: MCP, tool calls, the read-only routes), created
 * on first start like the secret, in the config folder itself rather than in the extension folder
 * Chrome loads. Two servers starting at once end with the same token, as with the secret.
 */
export async function loadOrCreateClientToken(dir: string): Promise<string> {
  const existing = readClientTokenSync(dir);
  if (existing) {
    await chmod(clientTokenPath(dir), 0o600).catch(() => {});
    return existing;
  }
  const token = randomHex(32);
  const text = JSON.stringify({ clientToken: token }) + '\n';
  await mkdir(dir, { recursive: true, mode: DIR_MODE });
  if (!existsSync(clientTokenPath(dir))) {
    const created = createFileOnceSync(clientTokenPath(dir), text, 0o600);
    if (created) return token;
    const theirs = readClientTokenSync(dir);
    if (theirs) return theirs;
  }
  await writeFileAtomic(clientTokenPath(dir), text, 0o600);
  return token;
}

/**
 * A fresh secret (`opentabs config rotate-secret`), and a fresh client token with it; running
 * servers pick both up on reload.
 */
export async function rotateSecret(dir: string): Promise<string> {
  const secret = randomHex(32);
  await writeSecret(dir, secret);
  await mkdir(dir, { recursive: true, mode: DIR_MODE });
  await writeFileAtomic(clientTokenPath(dir), JSON.stringify({ clientToken: randomHex(32) }) + '\n', 0o600);
  return secret;
}
