/**
 * config.json: permissions, plugin settings, local plugin paths, skip-permissions flag.
 * Written atomically (0600) and never drops keys this version does not know, so an older server
 * cannot erase settings written by a newer one (or by hand).
 */
import { chmod, readdir, rename, rm, stat } from './fs-async.ts';
import { NotRegularFileError, readRegularFileSync } from '../protocol/regular-file.ts';
import { isAbsolute, join } from 'node:path';
import type { Permission } from '../protocol/methods.ts';
import { OpenTabsError } from '../errors.ts';
import { STATE_SCHEMA_VERSION } from '../version.ts';
import { writeFileAtomic } from './atomic.ts';
import { isForbiddenKey } from '../protocol/plugin-manifest.ts';
import { MCP_SESSIONS_PER_MINUTE_MAX, PAGE_TOOLS_ALLOWED_MAX_PER_ORIGIN } from '../limits.ts';

export interface PluginPermissions {
  default?: Permission;
  tools?: Record<string, Permission>;
}

export interface ConfigData {
  schemaVersion: number;
  localPlugins: string[];
  permissions: Record<string, PluginPermissions>;
  pluginSettings: Record<string, Record<string, unknown>>;
  skipPermissions?: boolean;
  /** Built-in tools may use file:// pages (never the config dir). Set by the side panel or the CLI only. */
  allowFileUrls?: boolean;
  /** New MCP sessions (initialize) allowed per minute; absent = MCP_SESSION_RATE_LIMIT.max. */
  mcpSessionsPerMinute?: number;
  /**
   * Folders browser_upload_file may take files from (absolute paths; none by default, so no file
   * leaves the computer until the user names a folder). Set by the CLI only.
   */
  uploadFolders?: string[];
  /** Page tools (WebMCP) per origin ("https://app.example.com" → off|ask|auto); an origin not listed is `ask`. */
  pageOrigins?: Record<string, Permission>;
  /**
   * Per origin, the page tools the user allowed with a card's Always allow: tool name → hash of
   * what they were then (pageToolHash: name, description, input schema). Such an origin's `auto`
   * covers those tools only, as they were; one new or changed since asks again. An origin set to
   * `auto` otherwise (the side panel's select, the CLI, by hand, or a card of a version before
   * this key) has no entry here: `auto` for every tool. Versions that do not know the key keep it
   * and read the origin's `auto` as they always did.
   */
  pageToolsAllowed?: Record<string, Record<string, string>>;
  [unknownKey: string]: unknown;
}

const PERMISSIONS: readonly string[] = ['off', 'ask', 'auto'];

export function isPermission(p: unknown): p is Permission {
  return typeof p === 'string' && PERMISSIONS.includes(p);
}

/** A usable mcpSessionsPerMinute value: a whole number from 1 to MCP_SESSIONS_PER_MINUTE_MAX. */
export function isSessionsPerMinute(n: unknown): n is number {
  return typeof n === 'number' && Number.isInteger(n) && n >= 1 && n <= MCP_SESSIONS_PER_MINUTE_MAX;
}

export function configPath(dir: string): string {
  return join(dir, 'config.json');
}

export function defaultConfig(): ConfigData {
  return { schemaVersion: STATE_SCHEMA_VERSION, localPlugins: [], permissions: {}, pluginSettings: {} };
}

const isObject = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null && !Array.isArray(x);

/**
 * Coerce parsed JSON into ConfigData: known keys get their expected shape (bad entries are
 * dropped, not fatal), every other key is carried through untouched.
 */
export function normalizeConfig(raw: unknown): ConfigData {
  const src = isObject(raw) ? raw : {};
  const out: ConfigData = { ...src, ...defaultConfig() };
  if (typeof src.schemaVersion === 'number' && Number.isFinite(src.schemaVersion)) out.schemaVersion = src.schemaVersion;
  if (Array.isArray(src.localPlugins)) out.localPlugins = src.localPlugins.filter((p): p is string => typeof p === 'string' && p !== '');
  if (isObject(src.permissions)) {
    for (const [plugin, value] of Object.entries(src.permissions)) {
      // "__proto__" (an own key after JSON.parse) would replace the object's prototype here.
      if (!isObject(value) || isForbiddenKey(plugin)) continue;
      const entry: PluginPermissions = { ...value };
      if (!isPermission(value.default)) delete entry.default;
      if (isObject(value.tools)) {
        entry.tools = {};
        for (const [tool, p] of Object.entries(value.tools)) if (isPermission(p) && !isForbiddenKey(tool)) entry.tools[tool] = p;
      } else delete entry.tools;
      out.permissions[plugin] = entry;
    }
  }
  if (isObject(src.pluginSettings)) {
    for (const [plugin, value] of Object.entries(src.pluginSettings)) if (isObject(value) && !isForbiddenKey(plugin)) out.pluginSettings[plugin] = { ...value };
  }
  if ('skipPermissions' in src) {
    if (typeof src.skipPermissions === 'boolean') out.skipPermissions = src.skipPermissions;
    else delete out.skipPermissions;
  }
  if ('allowFileUrls' in src) {
    if (typeof src.allowFileUrls === 'boolean') out.allowFileUrls = src.allowFileUrls;
    else delete out.allowFileUrls;
  }
  if ('mcpSessionsPerMinute' in src) {
    if (isSessionsPerMinute(src.mcpSessionsPerMinute)) out.mcpSessionsPerMinute = src.mcpSessionsPerMinute;
    else delete out.mcpSessionsPerMinute;
  }
  if ('uploadFolders' in src) {
    // Only absolute paths count; anything else in the list is dropped, never guessed at.
    if (Array.isArray(src.uploadFolders)) out.uploadFolders = src.uploadFolders.filter((f): f is string => typeof f === 'string' && isAbsolute(f));
    else delete out.uploadFolders;
  }
  if ('pageOrigins' in src) {
    if (isObject(src.pageOrigins)) {
      const origins: Record<string, Permission> = {};
      for (const [origin, p] of Object.entries(src.pageOrigins)) if (isPermission(p) && normalizeOrigin(origin) === origin) origins[origin] = p;
      out.pageOrigins = origins;
    } else delete out.pageOrigins;
  }
  if ('pageToolsAllowed' in src) {
    if (isObject(src.pageToolsAllowed)) {
      const allowed: Record<string, Record<string, string>> = {};
      for (const [origin, tools] of Object.entries(src.pageToolsAllowed)) {
        if (!isObject(tools) || normalizeOrigin(origin) !== origin) continue;
        const kept: Record<string, string> = {};
        for (const [name, hash] of Object.entries(tools)) if (typeof hash === 'string' && /^[0-9a-f]{64}$/.test(hash) && !isForbiddenKey(name)) kept[name] = hash;
        allowed[origin] = kept;
      }
      out.pageToolsAllowed = allowed;
    } else delete out.pageToolsAllowed;
  }
  return out;
}

/**
 * The origin a page-tool permission is stored under: scheme://host[:port] of an http(s) URL or
 * origin, lowercased by the URL parser; null for anything else.
 */
export function normalizeOrigin(input: string): string | null {
  try {
    const u = new URL(input);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') return null;
    return u.origin;
  } catch {
    return null;
  }
}

type ReadResult = { kind: 'missing' } | { kind: 'ok'; data: ConfigData } | { kind: 'corrupt'; error: string } | { kind: 'notRegular'; what: string };

async function readConfigFile(path: string): Promise<ReadResult> {
  let text: string;
  try {
    // A FIFO, socket or device in config.json's place is not opened for reading: its open or its
    // read would never end (regular-file.ts). The file is small: read in one go.
    text = readRegularFileSync(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { kind: 'missing' };
    if (err instanceof NotRegularFileError) return { kind: 'notRegular', what: err.kind };
    throw err;
  }
  try {
    return { kind: 'ok', data: normalizeConfig(JSON.parse(text)) };
  } catch (err) {
    return { kind: 'corrupt', error: (err as Error).message };
  }
}

export class ConfigStore {
  private data: ConfigData;
  /** Serializes writes: each update sees the result of the one before it. */
  private chain: Promise<unknown> = Promise.resolve();
  /** Set when config.json could not be parsed and was moved aside (reported, not fatal). */
  lastLoadError: string | null = null;

  private constructor(
    readonly dir: string,
    data: ConfigData,
  ) {
    this.data = data;
  }

  get path(): string {
    return configPath(this.dir);
  }

  static async open(dir: string): Promise<ConfigStore> {
    const store = new ConfigStore(dir, defaultConfig());
    await removeStaleTempFiles(dir);
    await store.reload();
    return store;
  }

  /** Re-read config.json. A corrupt file is kept as config.json.corrupt-<time> and defaults are used. */
  async reload(): Promise<void> {
    const r = await readConfigFile(this.path);
    if (r.kind === 'ok') {
      this.data = r.data;
      this.lastLoadError = null;
      // Settings may hold credentials: a hand-made or older file is tightened to 0600.
      await chmod(this.path, 0o600).catch(() => {});
      return;
    }
    if (r.kind === 'missing') {
      this.data = defaultConfig();
      await this.write(this.data);
      return;
    }
    const aside = `${this.path}.corrupt-${Date.now()}`;
    await rename(this.path, aside).catch(() => {});
    this.lastLoadError =
      r.kind === 'notRegular'
        ? `config.json was ${r.what}, not a regular file; moved to ${aside} and started from defaults`
        : `config.json was not valid JSON (${r.error}); moved to ${aside} and started from defaults`;
    this.data = defaultConfig();
    await this.write(this.data);
  }

  get(): ConfigData {
    return this.data;
  }

  /**
   * Apply `mutate` to a fresh copy and persist it. Starts from the file on disk when it parses,
   * so edits made by the CLI while the server runs are not overwritten by a stale snapshot.
   */
  update(mutate: (draft: ConfigData) => void): Promise<void> {
    const run = async () => {
      const onDisk = await readConfigFile(this.path).catch(() => ({ kind: 'missing' }) as ReadResult);
      const draft = structuredClone(onDisk.kind === 'ok' ? onDisk.data : this.data);
      mutate(draft);
      const next = normalizeConfig(draft);
      await this.write(next);
      this.data = next;
    };
    const p = this.chain.then(run, run);
    this.chain = p.catch(() => {});
    return p;
  }

  /**
   * A write that fails (a full disk, a read-only folder, a folder where the file should be) leaves
   * config.json as it was (atomic.ts) and the change unmade; the error names the file and why.
   */
  private async write(data: ConfigData): Promise<void> {
    try {
      await writeFileAtomic(this.path, JSON.stringify(data, null, 2) + '\n', 0o600);
    } catch (err) {
      throw new OpenTabsError('internal', `Could not save ${this.path}: ${writeFailure(err)}; the change was not made`, { category: 'internal' });
    }
  }

  /** Effective permission; tool override > plugin default > fallback. */
  permissionFor(plugin: string, tool: string, fallback: Permission): Permission {
    // Own keys only: `tools.constructor` must not answer with Object's constructor.
    const perms = this.data.permissions;
    const entry = Object.hasOwn(perms, plugin) ? perms[plugin] : undefined;
    const tools = entry?.tools;
    return (tools && Object.hasOwn(tools, tool) ? tools[tool] : undefined) ?? entry?.default ?? fallback;
  }

  async setToolPermission(plugin: string, tool: string, p: Permission): Promise<void> {
    assertPermission(p);
    assertKey(plugin, 'plugin');
    assertKey(tool, 'tool');
    await this.update((d) => {
      const entry = (d.permissions[plugin] ??= {});
      (entry.tools ??= {})[tool] = p;
    });
  }

  /** Permission of the page tools of an origin (absent: `ask`). */
  originPermission(origin: string): Permission {
    const origins = this.data.pageOrigins;
    return (origins && Object.hasOwn(origins, origin) ? origins[origin] : undefined) ?? 'ask';
  }

  /**
   * Set by the user in the settings (the side panel's select, the CLI): `auto` then covers every
   * tool of the origin, so the tools a card allowed are forgotten (pageToolsAllowed).
   */
  async setOriginPermission(origin: string, p: Permission): Promise<void> {
    assertPermission(p);
    const o = normalizeOrigin(origin);
    if (o === null) throw new OpenTabsError('bad_request', `"${origin}" is not an http(s) origin (e.g. https://app.example.com)`);
    await this.update((d) => {
      (d.pageOrigins ??= {})[o] = p;
      if (d.pageToolsAllowed && Object.hasOwn(d.pageToolsAllowed, o)) delete d.pageToolsAllowed[o];
    });
  }

  /**
   * The page tools of an origin a card's Always allow covers (name → pageToolHash), or undefined
   * when its `auto` (if it is `auto`) covers every tool.
   */
  pageToolsAllowed(origin: string): Readonly<Record<string, string>> | undefined {
    const all = this.data.pageToolsAllowed;
    return all && Object.hasOwn(all, origin) ? all[origin] : undefined;
  }

  /**
   * A card's Always allow for a page tool: the origin becomes `auto` for `tools` (name →
   * pageToolHash: what the origin offers now), added to those allowed before; a tool of the
   * origin new or changed since is asked about again. An origin already `auto` for every tool
   * (set in the settings) stays so.
   */
  async allowPageTools(origin: string, tools: Record<string, string>): Promise<void> {
    const o = normalizeOrigin(origin);
    if (o === null) throw new OpenTabsError('bad_request', `"${origin}" is not an http(s) origin (e.g. https://app.example.com)`);
    await this.update((d) => {
      const everyTool = d.pageOrigins?.[o] === 'auto' && !(d.pageToolsAllowed && Object.hasOwn(d.pageToolsAllowed, o));
      (d.pageOrigins ??= {})[o] = 'auto';
      if (everyTool) return;
      const mine = ((d.pageToolsAllowed ??= {})[o] ??= {});
      for (const [name, hash] of Object.entries(tools)) {
        if (isForbiddenKey(name)) continue;
        delete mine[name];
        mine[name] = hash;
      }
      // Names a site dropped long ago go first: the list stays small.
      const names = Object.keys(mine);
      for (const name of names.slice(0, Math.max(0, names.length - PAGE_TOOLS_ALLOWED_MAX_PER_ORIGIN))) delete mine[name];
    });
  }

  async setPluginPermission(plugin: string, p: Permission): Promise<void> {
    assertPermission(p);
    assertKey(plugin, 'plugin');
    await this.update((d) => {
      (d.permissions[plugin] ??= {}).default = p;
    });
  }
}

function assertKey(name: string, what: string): void {
  if (isForbiddenKey(name)) throw new OpenTabsError('bad_request', `"${name}" cannot be a ${what} name`);
}

function assertPermission(p: unknown): asserts p is Permission {
  if (!isPermission(p)) throw new OpenTabsError('bad_request', `permission must be one of off, ask, auto (got ${JSON.stringify(p)})`);
}

/** Temp files older than this are left over from a crash mid-write (a live writer renames within ms). */
const STALE_TEMP_MS = 60_000;

/**
 * Remove `.config.json.<random>.tmp` files a killed writer left behind. Young ones are kept:
 * another process (the CLI) may be between its write and its rename right now.
 */
async function removeStaleTempFiles(dir: string): Promise<void> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return;
  }
  const now = Date.now();
  for (const name of names) {
    if (!/^\.config\.json\.[0-9a-f]+\.tmp$/.test(name)) continue;
    const p = join(dir, name);
    try {
      if (now - (await stat(p)).mtimeMs > STALE_TEMP_MS) await rm(p, { force: true });
    } catch {}
  }
}

/** Why a file could not be written, in words, with the system's text. */
export function writeFailure(err: unknown): string {
  const code = (err as NodeJS.ErrnoException | null)?.code;
  const text = String((err as Error | null)?.message ?? err);
  if (code === 'ENOSPC' || code === 'EDQUOT') return `the disk is full (${text})`;
  if (code === 'EACCES' || code === 'EPERM' || code === 'EROFS') return `its folder is not writable (${text})`;
  if (code === 'ENOTDIR' || code === 'EISDIR') return `a file or folder is in the way (${text})`;
  return text;
}
