/**
 * Adapter files in the installed extension folder: <configDir>/extension/adapters/<name>-<hash>.js.
 * The extension injects them by path, so a new hash means a new file; files no current plugin
 * refers to are removed after each discovery.
 */
import { mkdir, readdir, rm, stat } from '../state/fs-async.ts';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { ADAPTER_HASH_PLACEHOLDER } from '../protocol/page-channel.ts';
import { writeFileAtomic } from '../state/atomic.ts';

export function adaptersDir(configDir: string): string {
  return join(configDir, 'extension', 'adapters');
}

/** LoadedPlugin.adapterFile of a file in adaptersDir (`adapters/<name>-<hash>.js`, as load.ts names them). */
const asAdapterFile = (fileName: string) => `adapters/${fileName}`;

/** The adapter files installed now, as LoadedPlugin.adapterFile names them: one folder listing. */
export function installedAdapters(configDir: string): Set<string> {
  try {
    return new Set(readdirSync(adaptersDir(configDir), { withFileTypes: true }).flatMap((e) => (e.isFile() ? [asAdapterFile(e.name)] : [])));
  } catch {
    return new Set();
  }
}

/** Where a plugin's adapter file (`adapters/<name>-<hash>.js`, LoadedPlugin.adapterFile) is installed. */
export function adapterPath(configDir: string, adapterFile: string): string {
  return join(configDir, 'extension', adapterFile);
}

/** Write one adapter (skipped when the file for this hash is already there). */
export async function writeAdapter(configDir: string, adapterFile: string, source: string, hash: string): Promise<void> {
  const target = adapterPath(configDir, adapterFile);
  const exists = await stat(target).then(() => true, () => false);
  if (exists) return;
  await mkdir(adaptersDir(configDir), { recursive: true, mode: 0o700 });
  await writeFileAtomic(target, source.split(ADAPTER_HASH_PLACEHOLDER).join(hash), 0o644);
}

/** Remove adapter files that no loaded plugin uses any more. */
export async function pruneAdapters(configDir: string, keep: Set<string>): Promise<void> {
  const dir = adaptersDir(configDir);
  const names = await readdir(dir).catch(() => [] as string[]);
  await Promise.all(
    names
      .filter((n) => n.endsWith('.js') && !keep.has(asAdapterFile(n)))
      .map((n) => rm(join(dir, n), { force: true }).catch(() => {})),
  );
}
