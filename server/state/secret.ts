/**
 * The bearer secret shared by the server, the CLI and the extension:
 * `<dir>/extension/auth.json` = `{"secret": "<64 hex>"}`, mode 0600, written atomically.
 */
import { readFileSync } from 'node:fs';
import { chmod, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { writeFileAtomic } from './atomic.ts';
import { DIR_MODE } from './paths.ts';

const SECRET_RE = /^[0-9a-f]{64}$/;

export function secretPath(dir: string): string {
  return join(dir, 'extension', 'auth.json');
}

export function isValidSecret(s: unknown): s is string {
  return typeof s === 'string' && SECRET_RE.test(s);
}

/** The stored secret, or null when the file is missing or not a valid secret. */
export function readSecretSync(dir: string): string | null {
  let text: string;
  try {
    text = readFileSync(secretPath(dir), 'utf8');
  } catch {
    return null;
  }
  try {
    const secret = (JSON.parse(text) as { secret?: unknown })?.secret;
    return isValidSecret(secret) ? secret : null;
  } catch {
    return null;
  }
}

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
  const secret = randomBytes(32).toString('hex');
  await writeSecret(dir, secret);
  return secret;
}

/** A fresh secret (`opentabs config rotate-secret`); running servers pick it up on reload. */
export async function rotateSecret(dir: string): Promise<string> {
  const secret = randomBytes(32).toString('hex');
  await writeSecret(dir, secret);
  return secret;
}
