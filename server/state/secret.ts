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
import { adminSecretPath, readAdminSecretSync, readSecretSync, secretPath } from '../protocol/local-files.ts';

export { ADMIN_HEADER, adminSecretPath, isValidSecret, readAdminSecretSync, readSecretSync, secretPath } from '../protocol/local-files.ts';

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
 * The admin secret (answering approvals, changing plugin settings: the CLI's, never in an MCP
 * client's config), created on first start like the bearer secret, in the config folder itself
 * rather than in the extension folder Chrome loads.
 */
export async function loadOrCreateAdminSecret(dir: string): Promise<string> {
  const existing = readAdminSecretSync(dir);
  if (existing) {
    await chmod(adminSecretPath(dir), 0o600).catch(() => {});
    return existing;
  }
  const secret = randomHex(32);
  const text = JSON.stringify({ adminSecret: secret }) + '\n';
  await mkdir(dir, { recursive: true, mode: DIR_MODE });
  if (!existsSync(adminSecretPath(dir))) {
    const created = createFileOnceSync(adminSecretPath(dir), text, 0o600);
    if (created) return secret;
    const theirs = readAdminSecretSync(dir);
    if (theirs) return theirs;
  }
  await writeFileAtomic(adminSecretPath(dir), text, 0o600);
  return secret;
}

/**
 * A fresh secret (`opentabs config rotate-secret`), and a fresh admin secret with it; running
 * servers pick both up on reload.
 */
export async function rotateSecret(dir: string): Promise<string> {
  const secret = randomHex(32);
  await writeSecret(dir, secret);
  await writeFileAtomic(adminSecretPath(dir), JSON.stringify({ adminSecret: randomHex(32) }) + '\n', 0o600);
  return secret;
}
