/**
 * How local processes find a running OpenTabs: the state folder (`OPENTABS_CONFIG_DIR` or
 * `~/.opentabs`) and the bearer secret in `<dir>/extension/auth.json` (`{"secret": "<64 hex>"}`,
 * mode 0600). The server writes them (server/state/); the CLI and the plugin tooling read them.
 * `<dir>/client-token.json` (`{"clientToken": "<64 hex>"}`, mode 0600, outside the extension folder
 * Chrome loads) holds the client token: what MCP client configs carry. It reaches MCP, tool calls
 * and the read-only routes; what only the user may do (the extension's /ws, answering approvals,
 * settings, reloads) takes the secret of auth.json.
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

/** The client token's file: in the config folder itself, not in the extension folder Chrome loads. */
export function clientTokenPath(dir: string): string {
  return join(dir, 'client-token.json');
}

export function isValidSecret(s: unknown): s is string {
  return typeof s === 'string' && SECRET_RE.test(s);
}

/** The 64-hex token under `key` of a JSON file, or null when it is missing, not a regular file, or not valid. */
function readTokenFileSync(path: string, key: string): string | null {
  let text: string;
  try {
    text = readRegularFileSync(path);
  } catch {
    return null;
  }
  try {
    const value = (JSON.parse(text) as Record<string, unknown> | null)?.[key];
    return isValidSecret(value) ? value : null;
  } catch {
    return null;
  }
}

/** The stored secret, or null when the file is missing, not a regular file, or not a valid secret. */
export function readSecretSync(dir: string): string | null {
  return readTokenFileSync(secretPath(dir), 'secret');
}

/** The stored client token, or null when the file is missing, not a regular file, or not a valid token. */
export function readClientTokenSync(dir: string): string | null {
  return readTokenFileSync(clientTokenPath(dir), 'clientToken');
}
