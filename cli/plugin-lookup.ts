/**
 * Plugins as the CLI sees them without a server (the server's own discovery, read-only), and the
 * coercion of `key=value` strings into setting values per a plugin's configSchema.
 */
import { discoverPlugins } from '../server/plugins/discover.ts';
import { isForbiddenKey } from '../server/protocol/plugin-manifest.ts';
import type { ConfigField, ConfigSchema, FailedPlugin, LoadedPlugin } from '../server/plugins/types.ts';
import { readConfigSnapshot } from './config-snapshot.ts';
import { CliError } from './output.ts';

export interface PluginScan {
  plugins: LoadedPlugin[];
  failed: FailedPlugin[];
  discoveryErrors: string[];
}

/** What the server would discover (same code), read-only: nothing is created or written. */
export async function scanPlugins(configDir: string): Promise<PluginScan> {
  const found = await discoverPlugins(configDir, readConfigSnapshot(configDir).localPlugins, { readOnly: true });
  return { plugins: found.plugins.map((p) => p.plugin), failed: found.failed, discoveryErrors: found.errors };
}

/** The plugin called `name` as discovery resolves it (a local folder wins over npm). */
export async function findPlugin(configDir: string, name: string): Promise<LoadedPlugin> {
  const scan = await scanPlugins(configDir);
  const hit = scan.plugins.find((p) => p.name === name);
  if (hit) return hit;
  const broken = scan.failed.find((f) => f.name === name);
  if (broken) throw new CliError(`Plugin "${name}" (${broken.path}) cannot be loaded: ${broken.error}`);
  const known = [...scan.plugins.map((p) => p.name), ...scan.failed.map((f) => f.name ?? f.path)];
  throw new CliError(`No plugin named "${name}" is installed or added.${known.length ? ` Known plugins: ${known.join(', ')}.` : ''} See \`opentabs plugin list\`.`);
}

/** Turn the string from `key=value` into the type the setting declares; errors name the key. */
export function coerceSetting(schema: ConfigSchema | undefined, key: string, raw: string): unknown {
  // Own keys only: `schema.__proto__` / `schema.constructor` are Object's, not a setting.
  if (isForbiddenKey(key)) throw new CliError(`"${key}" cannot be a setting name.`, 2);
  const field: ConfigField | undefined = schema && Object.hasOwn(schema, key) ? schema[key] : undefined;
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
