/**
 * Discovery as a pure step (no server needed): load every candidate folder — local folders from
 * config.json first, then packages in <configDir>/plugins — and decide which plugin wins each
 * name. Used by PluginManager and by CLI commands that run without a server.
 */
import { resolve } from 'node:path';
import { loadPluginFolder, type LoadResult } from './load.ts';
import { CheckedManifests } from './schema-cache.ts';
import { installedPluginDirs } from './npm.ts';
import type { FailedPlugin, LoadedPlugin } from './types.ts';

export interface Discovered {
  plugins: { plugin: LoadedPlugin; adapterSource: string }[];
  failed: FailedPlugin[];
  /** Non-fatal: shadowed or duplicate plugins. */
  errors: string[];
  localPaths: string[];
}

export function localPluginPaths(configDir: string, list: string[] | undefined): string[] {
  return [...new Set((list ?? []).map((p) => resolve(configDir, p)))];
}

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
  // Load in parallel (disk only), then decide in order: local first, so a local plugin wins.
  let checked = checkedByDir.get(configDir);
  if (!checked) checkedByDir.set(configDir, (checked = CheckedManifests.open(configDir)));
  // loadPluginFolder reports every problem it knows as a result; anything else it meets is still
  // that one folder's failure, never the whole discovery's.
  const load = (dir: string, source: 'local' | 'npm'): Promise<LoadResult> =>
    loadPluginFolder(dir, source, checked).catch((err: unknown) => ({ ok: false as const, error: `cannot be loaded: ${String((err as Error)?.message ?? err).slice(0, 300)}` }));
  const results = await Promise.all(candidates.map(async (c) => ({ ...c, r: await load(c.dir, c.source) })));
  if (!opts.readOnly) void checked.save();
  const chosen = new Map<string, { plugin: LoadedPlugin; adapterSource: string }>();
  const failed: FailedPlugin[] = [];
  const errors: string[] = [];
  for (const { dir, source, r } of results) {
    if (!r.ok) {
      failed.push({ path: dir, error: r.error, ...(r.name ? { name: r.name } : {}) });
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
    chosen.set(r.plugin.name, { plugin: r.plugin, adapterSource: r.adapterSource });
  }
  return { plugins: [...chosen.values()], failed, errors, localPaths };
}
