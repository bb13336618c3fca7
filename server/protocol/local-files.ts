/**
 * How local processes find a running OpenTabs: the state folder (`OPENTABS_CONFIG_DIR` or
 * `~/.opentabs`) and the bearer secret in `<dir>/extension/auth.json` (`{"secret": "<64 hex>"}`,
 * mode 0600). The server writes them (server/state/); the CLI and the plugin tooling read them.
 * `<dir>/admin.json` (`{"adminSecret": "<64 hex>"}`, mode 0600) holds a second secret that only
 * the CLI sends: the one that answers approvals and changes plugin settings (ADMIN_HEADER).
 */
import { join, resolve } from 'node:path';
import { readRegularFileSync } from './regular-file.ts';

/**
 * os.homedir(): on POSIX that is $HOME when it is set, read here without loading node:os (≈ 1 ms
 * of every start); otherwise (Windows, no $HOME) node:os decides.
 */
export function homeDir(): string {
  const home = process.platform === 'win32' ? undefined : process.env.HOME;
  return home ? home : (require('node:os') as typeof import('node:os')).homedir();
}

export function resolveConfigDir(): string {
  const fromEnv = process.env.OPENTABS_CONFIG_DIR;
  if (fromEnv && fromEnv.trim() !== '') return resolve(fromEnv);
  return join(homeDir(), '.opentabs');
}

const SECRET_RE = /^[0-9a-f]{64}$/;

export function secretPath(dir: string): string {
  return join(dir, 'extension', 'auth.json');
}

/**
 * The header that carries the admin secret, next to `Authorization: Bearer <secret>`. MCP client
 * configs hold only the bearer secret, so an agent that reads its client's config (or gets the
 * secret from its environment) and can send HTTP requests still cannot answer its own calls.
 */
export const ADMIN_HEADER = 'X-OpenTabs-Admin';

export function adminSecretPath(dir: string): string {
  return join(dir, 'admin.json');
}

export function isValidSecret(s: unknown): s is string {
  return typeof s === 'string' && SECRET_RE.test(s);
}

/** The stored secret, or null when the file is missing, not a regular file, or not a valid secret. */
export function readSecretSync(dir: string): string | null {
  let text: string;
  try {
    text = readRegularFileSync(secretPath(dir));
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

/** The stored admin secret, or null when the file is missing, not a regular file, or not a valid secret. */
export function readAdminSecretSync(dir: string): string | null {
  let text: string;
  try {
    text = readRegularFileSync(adminSecretPath(dir));
  } catch {
    return null;
  }
  try {
    const secret = (JSON.parse(text) as { adminSecret?: unknown })?.adminSecret;
    return isValidSecret(secret) ? secret : null;
  } catch {
    return null;
  }
}
