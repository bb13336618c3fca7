/**
 * Plugins as the CLI sees them without a server: local folders from config.json and packages
 * installed under <config dir>/plugins, loaded with the server's own loader. Also the coercion of
 * `key=value` strings into setting values per a plugin's configSchema.
 */
import { resolve } from 'node:path';
import { readConfigSnapshot } from './settings.ts';
import { installedPluginDirs } from '../server/plugins/npm.ts';
import { loadPluginFolder } from '../server/plugins/load.ts';
import type { ConfigField, ConfigSchema, LoadedPlugin } from '../server/plugins/types.ts';
import { CliError } from './output.ts';

export interface PluginEntry {
  path: string;
  source: 'local' | 'npm';
  plugin?: LoadedPlugin;
  name?: string;
  error?: string;
}

/** Every plugin folder the server would discover, loaded (or with the reason it cannot load). */
export async function scanPlugins(configDir: string): Promise<PluginEntry[]> {
  const local = readConfigSnapshot(configDir).localPlugins.map((p) => resolve(configDir, p));
  const npm = await installedPluginDirs(configDir);
  const out: PluginEntry[] = [];
  for (const [path, source] of [...local.map((p) => [p, 'local'] as const), ...npm.map((p) => [p, 'npm'] as const)]) {
    const r = await loadPluginFolder(path, source);
    out.push(r.ok ? { path, source, plugin: r.plugin, name: r.plugin.name } : { path, source, name: r.name, error: r.error });
  }
  return out;
}

/** The loaded plugin called `name` (local wins over npm, as in discovery). */
export async function findPlugin(configDir: string, name: string): Promise<LoadedPlugin> {
  const entries = await scanPlugins(configDir);
  const hit = entries.find((e) => e.plugin?.name === name);
  if (hit?.plugin) return hit.plugin;
  const broken = entries.find((e) => e.name === name);
  if (broken) throw new CliError(`Plugin "${name}" (${broken.path}) cannot be loaded: ${broken.error}`);
  const known = entries.map((e) => e.name).filter(Boolean);
  throw new CliError(`No plugin named "${name}" is installed or added.${known.length ? ` Known plugins: ${known.join(', ')}.` : ''} See \`opentabs plugin list\`.`);
}

/** Turn the string from `key=value` into the type the setting declares; errors name the key. */
export function coerceSetting(schema: ConfigSchema | undefined, key: string, raw: string): unknown {
  const field: ConfigField | undefined = schema?.[key];
  if (!field) {
    const known = Object.keys(schema ?? {});
    throw new CliError(`Unknown setting "${key}"${known.length ? `; this plugin's settings are: ${known.join(', ')}` : '; this plugin has no settings'}.`, 2);
  }
  // An empty value clears the setting (back to its default).
  if (raw === '') return null;
  switch (field.type) {
    case 'number': {
      const n = Number(raw);
      if (raw.trim() === '' || !Number.isFinite(n)) throw new CliError(`Setting "${key}" must be a number, got ${JSON.stringify(raw)}.`, 2);
      return n;
    }
    case 'boolean': {
      const v = raw.trim().toLowerCase();
      if (['true', 'yes', '1', 'on'].includes(v)) return true;
      if (['false', 'no', '0', 'off'].includes(v)) return false;
      throw new CliError(`Setting "${key}" must be true or false, got ${JSON.stringify(raw)}.`, 2);
    }
    case 'select':
      if (!(field.options ?? []).includes(raw)) {
        throw new CliError(`Setting "${key}" must be one of ${(field.options ?? []).join(', ')}; got ${JSON.stringify(raw)}.`, 2);
      }
      return raw;
    default:
      return raw;
  }
}
