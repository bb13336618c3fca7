/**
 * The bearer secret shared by the server, the CLI and the extension: created and rotated here,
 * written atomically (its location and format: server/protocol/local-files.ts).
 */
import { chmod, mkdir } from './fs-async.ts';
import { join } from 'node:path';
import { writeFileAtomic } from './atomic.ts';
import { randomHex } from '../protocol/handshake.ts';
import { DIR_MODE } from './paths.ts';
import { readSecretSync, secretPath } from '../protocol/local-files.ts';

export { isValidSecret, readSecretSync, secretPath } from '../protocol/local-files.ts';

async function writeSecret(dir: string, secret: string): Promise<void> {
  await mkdir(join(dir, 'extension'), { recursive: true, mode: DIR_MODE });
  await writeFileAtomic(secretPath(dir), JSON.stringify({ secret }) + '\n', 0o600);
}

/** Reuse the stored secret; create one on first start (or when the file is corrupt). */
export async function loadOrCreateSecret(dir: string): Promise<string> {
  const existing = readSecretSync(dir);
  if (existing) {
    await chmod(secretPath(dir), 0o600).catch(() => {});
    return existing;
  }
  const secret = randomHex(32);
  await writeSecret(dir, secret);
  return secret;
}

/** A fresh secret (`opentabs config rotate-secret`); running servers pick it up on reload. */
export async function rotateSecret(dir: string): Promise<string> {
  const secret = randomHex(32);
  await writeSecret(dir, secret);
  return secret;
}
