/**
 * Plugin folders loaded before, remembered across runs by the identity of their three files
 * (package.json, dist/tools.json, dist/adapter.js), so that a start finds an unchanged plugin with
 * three stat calls instead of reading, hashing and parsing its files: with 100 plugins of 20 tools
 * that is ≈ 10 ms of the start's time until the tools are listed.
 *
 * A file's identity is its device, inode, size, mtime and ctime (as git's index keeps them). Any
 * write to a file, and any rename or copy over it, gives it a new ctime, which no program can set
 * back (utimes sets mtime only), so an entry never stands for content it was not made from. Two
 * writes within one tick of the file system's clock keep the same timestamps, so a file changed
 * within FRESH_MS of being looked at is not remembered (it is loaded again next time, like git's
 * "racily clean" entries). The identities are taken before the files are read, so a file changed
 * while it is read is seen as changed next time.
 *
 * Only folders that loaded, under the code that loads them now, are remembered: the file is keyed
 * by a hash of that code (loader-key.ts), so a change to any check makes every folder be loaded
 * afresh. A missing, unreadable or malformed cache file counts as empty. Stored in
 * <config dir>/cache/loaded-plugins.json (written atomically, 0600).
 */
import { mkdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { readRegularFileSync } from '../protocol/regular-file.ts';
import { writeFileAtomic } from '../state/atomic.ts';
import { trackCacheWrite } from './schema-cache.ts';
import type { LoadedPlugin } from './types.ts';
import { loaderKey } from './loader-key.ts';
import { PLUGIN_FILES } from './load.ts';

const FILE = 'loaded-plugins.json';
/** The files whose identity stands for a plugin folder's content: all it is made of. */
export const FOLDER_FILES: readonly string[] = Object.values(PLUGIN_FILES);
/** A file changed this recently may change again within the same timestamp: not remembered yet. */
export const FRESH_MS = 2000;

/** The identities of a folder's files, or null if one cannot be stat'ed (the loader then says why). */
export function folderIdentity(dir: string, now: number = Date.now()): { ids: string[]; fresh: boolean } | null {
  const ids: string[] = [];
  let fresh = false;
  for (const f of FOLDER_FILES) {
    let s;
    try {
      s = statSync(join(dir, f));
    } catch {
      return null;
    }
    if (!s.isFile()) return null;
    // Times in ms with their fraction (a double keeps them to ≈ 0.2 µs); a change that close to
    // the last one is within FRESH_MS anyway. Plain stat calls: ≈ 25 % cheaper than bigint ones.
    ids.push(`${s.dev}:${s.ino}:${s.size}:${s.mtimeMs}:${s.ctimeMs}`);
    if (now - Math.max(s.mtimeMs, s.ctimeMs) < FRESH_MS) fresh = true;
  }
  return { ids, fresh };
}

interface Entry {
  ids: string[];
  plugin: LoadedPlugin;
}

export class LoadedFolders {
  /** Entries looked up or added in this discovery: the ones saved (the file holds current plugins). */
  private readonly used = new Map<string, Entry>();
  private dirty = false;

  private constructor(
    private readonly dir: string | null,
    private readonly entries: Map<string, Entry>,
  ) {}

  /** An empty cache that remembers nothing (the single-file binary, or no source to key by). */
  static none(): LoadedFolders {
    return new LoadedFolders(null, new Map());
  }

  static open(configDir: string): LoadedFolders {
    const key = loaderKey();
    if (key === null) return LoadedFolders.none();
    const dir = join(configDir, 'cache');
    const entries = new Map<string, Entry>();
    try {
      const data = JSON.parse(readRegularFileSync(join(dir, FILE))) as { key?: unknown; entries?: unknown };
      if (data.key === key && typeof data.entries === 'object' && data.entries !== null) {
        for (const [k, e] of Object.entries(data.entries as Record<string, unknown>)) if (isEntry(e)) entries.set(k, e);
      }
    } catch {}
    return new LoadedFolders(dir, entries);
  }

  /** The plugin this folder loaded to before, if none of its files has changed since. */
  lookup(folder: string, source: LoadedPlugin['source'], identity: { ids: string[] } | null): LoadedPlugin | undefined {
    const key = `${source}:${folder}`;
    const e = this.entries.get(key);
    if (!e || !identity || e.plugin.path !== folder || e.plugin.source !== source || e.ids.join('\n') !== identity.ids.join('\n')) return undefined;
    this.used.set(key, e);
    // Shared with the next save, as a loaded plugin's objects are: nothing changes them once made.
    return e.plugin;
  }

  /** Remember what a folder loaded to; `identity` was taken before its files were read. */
  remember(folder: string, identity: { ids: string[]; fresh: boolean } | null, plugin: LoadedPlugin): void {
    if (this.dir === null || !identity || identity.fresh) return;
    this.used.set(`${plugin.source}:${folder}`, { ids: identity.ids, plugin });
    this.dirty = true;
  }

  /** Write the folders of this discovery (dropping the others) when anything changed. */
  save(): Promise<void> {
    const key = loaderKey();
    const gone = [...this.entries.keys()].some((k) => !this.used.has(k));
    if (this.dir === null || key === null || (!this.dirty && !gone)) return Promise.resolve();
    this.dirty = false;
    const dir = this.dir;
    const text = asciiJson(JSON.stringify({ key, entries: Object.fromEntries(this.used) }));
    return trackCacheWrite(
      (async () => {
        try {
          mkdirSync(dir, { recursive: true, mode: 0o700 });
          await writeFileAtomic(join(dir, FILE), text, 0o600);
        } catch {
          // A cache that cannot be written only costs the next start its speed.
        }
      })(),
    );
  }
}

/**
 * JSON text with every character past ASCII written as a \u escape (outside strings JSON has none):
 * the same value when parsed. One such character (a dash in a tool's description) made the whole
 * file a two-byte-per-character string when read, and parsing it ≈ 25 % slower at every start
 * (1 MB, 2,000 tools: ≈ 1.4 ms).
 */
export function asciiJson(json: string): string {
  return json.replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

function isEntry(e: unknown): e is Entry {
  if (typeof e !== 'object' || e === null) return false;
  const { ids, plugin } = e as Partial<Entry>;
  return (
    Array.isArray(ids) &&
    ids.length === FOLDER_FILES.length &&
    ids.every((i) => typeof i === 'string') &&
    typeof plugin === 'object' &&
    plugin !== null &&
    typeof plugin.name === 'string' &&
    typeof plugin.path === 'string' &&
    typeof plugin.adapterFile === 'string' &&
    typeof plugin.adapterHash === 'string' &&
    Array.isArray(plugin.tools)
  );
}
