/**
 * A local plugin whose sources changed after its last build still runs the old build: calls then
 * behave as before the edit. `opentabs tool call` says so (on stderr) for the plugin it calls.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pluginNameFromPackage } from '../server/protocol/plugin-manifest.ts';
import { readConfigSnapshot } from './config-snapshot.ts';

const MAX_FILES = 2000;

/** Newest modification time of the files under dir (bounded), 0 when there are none. */
function newestMtime(dir: string): number {
  let newest = 0;
  let seen = 0;
  const walk = (d: string, depth: number) => {
    if (depth > 8 || seen >= MAX_FILES) return;
    let entries;
    try {
      entries = readdirSync(d, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      if (seen >= MAX_FILES) return;
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p, depth + 1);
      else if (e.isFile()) {
        seen++;
        try {
          newest = Math.max(newest, statSync(p).mtimeMs);
        } catch {}
      }
    }
  };
  walk(dir, 0);
  return newest;
}

/** The local plugin folder the tool belongs to when its src/ (or package.json) is newer than dist/tools.json, else null. */
export function staleLocalPlugin(configDir: string, toolName: string): string | null {
  for (const p of readConfigSnapshot(configDir).localPlugins) {
    const dir = resolve(configDir, p);
    let name: string | null = null;
    try {
      name = pluginNameFromPackage(String(JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).name));
    } catch {
      continue;
    }
    if (!name || !toolName.startsWith(`${name}_`)) continue;
    let built: number;
    try {
      built = statSync(join(dir, 'dist', 'tools.json')).mtimeMs;
    } catch {
      return null;
    }
    let pkg = 0;
    try {
      pkg = statSync(join(dir, 'package.json')).mtimeMs;
    } catch {}
    return Math.max(newestMtime(join(dir, 'src')), pkg) > built ? dir : null;
  }
  return null;
}
