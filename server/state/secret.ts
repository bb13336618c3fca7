/**
 * The bearer secret shared by the server, the CLI and the extension: created and rotated here,
 * written atomically (its location and format: server/protocol/local-files.ts).
 */
import { closeSync, constants, existsSync, fsyncSync, linkSync, openSync, rmSync, writeSync } from 'node:fs';
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

/**
 * Create the secret file only if there is none (no file, no link), complete or not at all: written
 * to a temp file, then hard-linked to its name, which fails when another process made it first.
 * True when this call created it, false when the name was taken meanwhile, null when the
 * filesystem has no hard links.
 */
async function createSecretOnce(dir: string, secret: string): Promise<boolean | null> {
  await mkdir(join(dir, 'extension'), { recursive: true, mode: DIR_MODE });
  const path = secretPath(dir);
  const tmp = join(dir, 'extension', `.auth.json.${process.pid}.${randomHex(6)}.tmp`);
  const fd = openSync(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o600);
  try {
    writeSync(fd, JSON.stringify({ secret }) + '\n');
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  try {
    linkSync(tmp, path);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EEXIST' ? false : null;
  } finally {
    rmSync(tmp, { force: true });
  }
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

/** A fresh secret (`opentabs config rotate-secret`); running servers pick it up on reload. */
export async function rotateSecret(dir: string): Promise<string> {
  const secret = randomHex(32);
  await writeSecret(dir, secret);
  return secret;
}
