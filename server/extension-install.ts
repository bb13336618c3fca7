/**
 * `opentabs start` installs the built extension into <config dir>/extension, where the user
 * loads it unpacked once. The copy and the server.json {port} the extension bootstraps from are
 * shared with the single-file executable (server/extension-files.ts); here the files come from
 * extension/dist, built first when missing or stale so a fresh clone needs no separate step.
 */
import { readdir } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import type { ServerContext } from './context.ts';
import { BUILD_INFO_FILE, ensureExtensionBuilt } from '../extension/build.ts';
import { installEmbeddedExtension, type EmbeddedFile } from './extension-files.ts';

async function listFiles(root: string): Promise<EmbeddedFile[]> {
  const out: EmbeddedFile[] = [];
  const entries = await readdir(root, { recursive: true, withFileTypes: true });
  for (const e of entries) {
    if (!e.isFile()) continue;
    // Node < 20.12 names the folder `path`, later ones `parentPath`.
    const parent = (e as { parentPath?: string }).parentPath ?? (e as { path?: string }).path ?? root;
    const abs = join(parent, e.name);
    const rel = relative(root, abs).split(sep).join('/');
    // The build record says nothing the browser needs; leaving it out keeps the hash about content.
    if (rel === BUILD_INFO_FILE) continue;
    out.push({ path: rel, file: abs });
  }
  return out;
}

/**
 * Copy extension/dist to <configDir>/extension when its content hash changed (never touching
 * auth.json, server.json or adapters/), then write server.json {port}.
 */
export async function installExtension(ctx: ServerContext): Promise<{ dir: string; copied: boolean }> {
  const dist = await ensureExtensionBuilt();
  const files = await listFiles(dist);
  if (!files.some((f) => f.path === 'manifest.json')) {
    throw new Error(`The built extension in ${dist} has no manifest.json; run \`npm run build:extension\``);
  }
  return installEmbeddedExtension(files, ctx.configDir, ctx.port);
}
