/**
 * Installs the built extension into `<config dir>/extension`, the folder the user loads once in
 * chrome://extensions. Files are copied only when the build's content hash changed, so Chrome's
 * copy is not touched on every start. The server's own files in that folder — `auth.json`
 * (state/secret.ts), `server.json` (written here: the port the extension bootstraps from) and
 * `adapters/` (plugins/) — are never deleted or overwritten by the copy.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { ServerContext } from './context.ts';
import { writeFileAtomic } from './state/atomic.ts';
import { ensureExtensionBuilt, SERVER_OWNED_NAMES } from '../extension/build.ts';

/** Hash of the installed build and the files it put there (to remove files a newer build dropped). */
const INSTALL_RECORD = '.opentabs-install.json';
export const SERVER_INFO_FILE = 'server.json';

interface InstallRecord {
  hash: string;
  files: string[];
}

function listFiles(root: string, rel = ''): string[] {
  const out: string[] = [];
  for (const name of readdirSync(join(root, rel)).sort()) {
    const r = rel ? `${rel}/${name}` : name;
    if (statSync(join(root, r)).isDirectory()) out.push(...listFiles(root, r));
    else out.push(r);
  }
  return out;
}

const isServerOwned = (rel: string) => (SERVER_OWNED_NAMES as readonly string[]).includes(rel.split('/')[0]);

/** Content hash of a built extension folder (paths + bytes). */
export function distHash(distDir: string): { hash: string; files: string[] } {
  const files = listFiles(distDir).filter((f) => !f.startsWith('.'));
  const h = createHash('sha256');
  for (const f of files) {
    h.update(f).update('\0').update(readFileSync(join(distDir, f))).update('\0');
  }
  return { hash: h.digest('hex'), files };
}

/** Copy `distDir` into `targetDir` when its hash changed; returns whether anything was copied. */
export async function syncExtensionFolder(distDir: string, targetDir: string): Promise<boolean> {
  const { hash, files } = distHash(distDir);
  const bad = files.find(isServerOwned);
  if (bad) throw new Error(`The extension build contains ${bad}, a name the server owns in the installed folder`);
  let previous: InstallRecord | null = null;
  try {
    previous = JSON.parse(readFileSync(join(targetDir, INSTALL_RECORD), 'utf8')) as InstallRecord;
  } catch {}
  const complete = previous?.hash === hash && files.every((f) => existsSync(join(targetDir, f)));
  if (complete) return false;
  mkdirSync(targetDir, { recursive: true, mode: 0o700 });
  for (const f of files) {
    const dest = join(targetDir, f);
    mkdirSync(dirname(dest), { recursive: true });
    await writeFileAtomic(dest, readFileSync(join(distDir, f)), 0o644);
  }
  // Files an older build installed that this one no longer has (never the server's own files).
  for (const f of previous?.files ?? []) {
    if (!files.includes(f) && !isServerOwned(f)) rmSync(join(targetDir, f), { force: true });
  }
  // Written last: an interrupted copy leaves the old record, so the next start copies again.
  await writeFileAtomic(join(targetDir, INSTALL_RECORD), JSON.stringify({ hash, files } satisfies InstallRecord));
  return true;
}

/** Write `server.json` {port} when it differs, so the extension finds a server on any port. */
export async function writeServerInfo(targetDir: string, port: number): Promise<void> {
  const path = join(targetDir, SERVER_INFO_FILE);
  const body = JSON.stringify({ port });
  try {
    if (readFileSync(path, 'utf8') === body) return;
  } catch {}
  mkdirSync(targetDir, { recursive: true, mode: 0o700 });
  await writeFileAtomic(path, body, 0o644);
}

export async function installExtension(ctx: ServerContext): Promise<{ dir: string; copied: boolean }> {
  const dir = join(ctx.configDir, 'extension');
  const dist = await ensureExtensionBuilt();
  const copied = await syncExtensionFolder(dist, dir);
  await writeServerInfo(dir, ctx.port);
  if (copied) ctx.log.info('extension_installed', { dir });
  return { dir, copied };
}
