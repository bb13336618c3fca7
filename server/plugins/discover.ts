/**
 * Discovery as a pure step (no server needed): load every candidate folder — local folders from
 * config.json first, then packages in <configDir>/plugins — and decide which plugin wins each
 * name. Used by PluginManager and by CLI commands that run without a server.
 */
import { resolve } from 'node:path';
import { loadPluginFolder, type LoadResult } from './load.ts';
import { CheckedManifests } from './schema-cache.ts';
import { folderIdentity, LoadedFolders } from './folder-cache.ts';
import { installedAdapters } from './adapters.ts';
import { installedPluginDirs } from './npm.ts';
import type { FailedPlugin, LoadedPlugin } from './types.ts';

export interface Discovered {
  /**
   * `adapterSource` is absent for a folder found unchanged (folder-cache.ts) whose adapter file is
   * already in <configDir>/extension: there is nothing to write, so it is not read.
   */
  plugins: { plugin: LoadedPlugin; adapterSource?: string }[];
  failed: FailedPlugin[];
  /** Non-fatal: shadowed or duplicate plugins. */
  errors: string[];
  localPaths: string[];
}

export function localPluginPaths(configDir: string, list: string[] | undefined): string[] {
  return [...new Set((list ?? []).map((p) => resolve(configDir, p)))];
}

/** A folder's load result; a folder found unchanged comes without its adapter's source. */
type Found = LoadResult | { ok: true; plugin: LoadedPlugin; adapterSource?: undefined };

/** One cache per config dir for the life of the process; it is re-saved after each discovery that added to it. */
const checkedByDir = new Map<string, CheckedManifests>();

/**
 * `readOnly`: use the manifest cache but never write it (CLI commands that only look; a process
 * that exits right after would otherwise cut the write short).
 */
export async function discoverPlugins(configDir: string, localPluginsFromConfig: string[] | undefined, opts: { readOnly?: boolean } = {}): Promise<Discovered> {
  const localPaths = localPluginPaths(configDir, localPluginsFromConfig);
  const npmDirs = await installedPluginDirs(configDir);
  const candidates = [
    ...localPaths.map((dir) => ({ dir, source: 'local' as const })),
    ...npmDirs.map((dir) => ({ dir, source: 'npm' as const })),
  ];
  // The checked manifests (schema-cache.ts) are opened for the first folder not found unchanged:
  // a start that finds every folder unchanged never reads them (≈ 1.5 ms, resolving Ajv's version).
  let checked: CheckedManifests | undefined;
  const checkedManifests = (): CheckedManifests => {
    if (!checked) {
      checked = checkedByDir.get(configDir);
      if (!checked) checkedByDir.set(configDir, (checked = CheckedManifests.open(configDir)));
    }
    return checked;
  };
  // loadPluginFolder reports every problem it knows as a result; anything else it meets is still
  // that one folder's failure, never the whole discovery's.
  const folders = LoadedFolders.open(configDir);
  let adapters: Set<string> | undefined;
  // A folder found unchanged is answered at once (no promise), the others when their files are read.
  const load = (dir: string, source: 'local' | 'npm'): Found | Promise<Found> => {
    // Identities first, then the reads: a file changed in between is seen as changed next time.
    const identity = folderIdentity(dir);
    const known = folders.lookup(dir, source, identity);
    if (known && (adapters ??= installedAdapters(configDir)).has(known.adapterFile)) return { ok: true, plugin: known };
    return loadPluginFolder(dir, source, checkedManifests()).then(
      (r) => {
        if (r.ok) folders.remember(dir, identity, r.plugin);
        return r;
      },
      (err: unknown) => ({ ok: false as const, error: `cannot be loaded: ${String((err as Error)?.message ?? err).slice(0, 300)}` }),
    );
  };
  // Load in parallel (disk only), then decide in order: local first, so a local plugin wins.
  const started = candidates.map((c) => load(c.dir, c.source));
  const found = started.some((r) => r instanceof Promise) ? await Promise.all(started) : (started as Found[]);
  if (!opts.readOnly) {
    void checked?.save();
    void folders.save();
  }
  const chosen = new Map<string, Discovered['plugins'][number]>();
  const failed: FailedPlugin[] = [];
  const errors: string[] = [];
  for (let i = 0; i < candidates.length; i++) {
    const { dir, source } = candidates[i]!;
    const r = found[i]!;
    if (!r.ok) {
      failed.push({ path: dir, error: r.error, ...(r.name ? { name: r.name } : {}) });
      continue;
    }
    // An npm alias (installed as opentabs-plugin-a, holding another package) would load under the
    // plugin name of the package inside, which is not what was installed.
    if (source === 'npm' && dir.split('/node_modules/').pop() !== r.plugin.packageName) {
      failed.push({ path: dir, error: `holds the package ${r.plugin.packageName}, installed under another name (an npm alias); install it by its own name`, name: r.plugin.name });
      continue;
    }
    const existing = chosen.get(r.plugin.name)?.plugin;
    if (existing) {
      errors.push(
        existing.source === 'local' && source === 'npm'
          ? `Plugin "${r.plugin.name}" installed from npm (${dir}) is shadowed by the local plugin at ${existing.path}`
          : `Plugin "${r.plugin.name}" at ${dir} ignored: a plugin with that name is already loaded from ${existing.path}`,
      );
      continue;
    }
    chosen.set(r.plugin.name, r.adapterSource === undefined ? { plugin: r.plugin } : { plugin: r.plugin, adapterSource: r.adapterSource });
  }
  return { plugins: [...chosen.values()], failed, errors, localPaths };
}
