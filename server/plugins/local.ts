/**
 * `opentabs plugin add <path>` / `opentabs plugin remove <name>` on config.json, usable with or
 * without a running server (the CLI POSTs /reload afterwards when one is running).
 */
import { existsSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { OpenTabsError } from '../errors.ts';
import { ConfigStore } from '../state/config.ts';
import { loadPluginFolder } from './load.ts';

export interface AddLocalResult {
  path: string;
  /** Plugin name when the folder already loads (a build may still be missing). */
  name?: string;
  /** Why it does not load yet (e.g. not built), shown as a hint; the folder is added anyway. */
  warning?: string;
}

export async function addLocalPlugin(configDir: string, pathArg: string): Promise<AddLocalResult> {
  const path = resolve(pathArg);
  if (!existsSync(path) || !statSync(path).isDirectory()) throw new OpenTabsError('bad_request', `${path} is not a folder`, 400);
  if (!existsSync(resolve(path, 'package.json'))) throw new OpenTabsError('bad_request', `${path} has no package.json: not a plugin folder`, 400);
  const r = await loadPluginFolder(path, 'local');
  if (!r.ok && !r.name) throw new OpenTabsError('bad_request', `${path} is not an OpenTabs plugin: ${r.error}`, 400);
  const name = r.ok ? r.plugin.name : r.name!;
  const store = await ConfigStore.open(configDir);
  await store.update((d) => {
    if (!d.localPlugins.map((p) => resolve(configDir, p)).includes(path)) d.localPlugins.push(path);
    // Newly added plugins start at `ask` unless the user already chose.
    const perm = (d.permissions[name] ??= {});
    perm.default ??= 'ask';
  });
  return { path, name, ...(r.ok ? {} : { warning: r.error }) };
}

/** Remove a local plugin folder by plugin name or path. Returns the removed path. */
export async function removeLocalPlugin(configDir: string, nameOrPath: string): Promise<string> {
  const store = await ConfigStore.open(configDir);
  const paths = store.get().localPlugins.map((p) => resolve(configDir, p));
  let match = paths.find((p) => p === resolve(nameOrPath));
  if (!match) {
    for (const p of paths) {
      const r = await loadPluginFolder(p, 'local');
      if ((r.ok ? r.plugin.name : r.name) === nameOrPath) {
        match = p;
        break;
      }
    }
  }
  if (!match) throw new OpenTabsError('unknown_plugin', `No local plugin "${nameOrPath}" in config.json (see \`opentabs plugin list\`)`, 404);
  const target = match;
  await store.update((d) => {
    d.localPlugins = d.localPlugins.filter((p) => resolve(configDir, p) !== target);
  });
  return target;
}
