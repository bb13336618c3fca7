/**
 * The tool catalog: every tool a client can call (built-in browser tools + plugin tools), with
 * its effective permission, as one immutable snapshot. `rebuild()` makes a new snapshot and swaps
 * it in; calls already running keep the snapshot they resolved against. What is derived from a
 * snapshot (the serialized tools/list payloads) is cached on it, so the call path never
 * re-serializes per call; argument validators are kept with each tool's schema across snapshots
 * (validate.ts), so a new snapshot recompiles nothing it already had.
 */
import type { ConfigStore } from '../state/config.ts';
import type { ServerLog } from '../state/server-log.ts';
import type { PluginManager } from '../plugins/manager.ts';
import type { Permission } from '../protocol/methods.ts';
import { DEFAULT_PLUGIN_PERMISSION } from '../plugins/types.ts';
import { BROWSER_PLUGIN, BROWSER_TOOLS } from './browser-catalog.ts';
import { BUILTIN_VALIDATORS, PAGE_TOOL_VALIDATORS, TOOL_VALIDATORS, type ValidationFailure } from './validate.ts';
import { PageToolRegistry } from './page-tools.ts';
import type { CatalogTool, McpToolEntry, ToolListing } from './catalog-types.ts';

export type { CatalogTool, McpToolEntry, ToolListing } from './catalog-types.ts';

export const DISABLED_PREFIX = '[Disabled] ';

export class Catalog {
  readonly byName: Map<string, CatalogTool>;
  readonly byPlugin: Map<string, CatalogTool[]>;
  /** How many tools come from plugins (not built-ins, not pages): /health reports it. */
  readonly pluginToolCount: number;
  private mcpList?: { tools: McpToolEntry[] };
  private mcpListJson?: string;
  private listingCache = new Map<string, string>();

  constructor(
    readonly version: number,
    readonly tools: readonly CatalogTool[],
  ) {
    // One pass over the tools (2,069 of them at a start with 2,000 plugin tools, each made once
    // when a snapshot is made); a plugin's tools are consecutive, so its list is looked up once.
    const byName = new Map<string, CatalogTool>();
    const byPlugin = new Map<string, CatalogTool[]>();
    let pluginTools = 0;
    let plugin: string | undefined;
    let list: CatalogTool[] = [];
    for (const t of tools) {
      byName.set(t.name, t);
      if (t.plugin !== plugin) {
        plugin = t.plugin;
        const known = byPlugin.get(plugin);
        if (known) list = known;
        else byPlugin.set(plugin, (list = []));
      }
      list.push(t);
      if (t.kind === 'plugin') pluginTools++;
    }
    this.byName = byName;
    this.byPlugin = byPlugin;
    this.pluginToolCount = pluginTools;
  }

  /** The built-in tools, in catalog order. */
  get builtins(): readonly CatalogTool[] {
    return this.byPlugin.get(BROWSER_PLUGIN) ?? [];
  }

  get(name: string): CatalogTool | undefined {
    return this.byName.get(name);
  }

  /** Validate arguments; the validator is compiled on first use and kept with the schema (validate.ts). */
  validate(tool: CatalogTool, args: unknown): ValidationFailure | null {
    return (tool.kind === 'browser' ? BUILTIN_VALIDATORS : tool.kind === 'page' ? PAGE_TOOL_VALIDATORS : TOOL_VALIDATORS).validate(tool.name, tool.inputSchema, args);
  }

  /** The MCP tools/list result (same object every time for this version). */
  mcpToolsList(): { tools: McpToolEntry[] } {
    this.mcpList ??= { tools: this.tools.map(toMcpEntry) };
    return this.mcpList;
  }

  /** The tools array of MCP tools/list, serialized once per version. */
  mcpToolsListJson(): string {
    this.mcpListJson ??= JSON.stringify(this.mcpToolsList().tools);
    return this.mcpListJson;
  }

  listings(plugin?: string): ToolListing[] {
    const source = plugin === undefined ? this.tools : (this.byPlugin.get(plugin) ?? []);
    return source.map((t) => ({
      name: t.name,
      description: t.description,
      plugin: t.plugin,
      permission: t.permission,
      inputSchema: t.inputSchema,
    }));
  }

  /** `{"tools":[…]}` for GET /tools, serialized once per (version, filter). */
  listingsJson(plugin?: string): string {
    const key = plugin ?? '\u0000all';
    let json = this.listingCache.get(key);
    if (json === undefined) {
      json = JSON.stringify({ tools: this.listings(plugin) });
      // Bound the cache: filters are user input.
      if (this.listingCache.size < 256) this.listingCache.set(key, json);
    }
    return json;
  }
}

function toMcpEntry(t: CatalogTool): McpToolEntry {
  return {
    name: t.name,
    description: t.permission === 'off' ? DISABLED_PREFIX + t.description : t.description,
    inputSchema: mcpInputSchema(t.inputSchema, t.kind === 'browser'),
    ...(t.outputSchema ? { outputSchema: mcpOutputSchema(t.outputSchema) } : {}),
    ...(t.annotations ? { annotations: t.annotations } : {}),
  };
}

/** MCP requires `type: "object"` at the top of every input schema. `builtin`: see compactSchema. */
function mcpInputSchema(schema: Record<string, unknown>, builtin = false): Record<string, unknown> {
  const compact = compactSchema(schema, builtin) as Record<string, unknown>;
  if (compact.type === 'object') return compact;
  return { ...compact, type: 'object' };
}

/**
 * An output schema as listed, named by its content: `$id` is `urn:opentabs:schema:<hash>` unless
 * the schema has its own. Clients that validate structuredContent compile every outputSchema of a
 * tools/list (the official TypeScript SDK client does, ≈ 3–5 ms each, on every list); with an
 * `$id` that SDK compiles each schema once and reuses it for later lists. Naming by content keeps
 * that reuse correct: a changed schema gets a new `$id`.
 */
export function mcpOutputSchema(schema: Record<string, unknown>): Record<string, unknown> {
  const listed = mcpInputSchema(schema);
  if (typeof listed.$id === 'string') return listed;
  const { $id: _ignored, ...rest } = listed;
  return { $id: `urn:opentabs:schema:${Bun.hash(JSON.stringify(rest)).toString(36)}`, ...rest };
}

/**
 * The schema as the model sees it in tools/list: every byte there is paid in context on every
 * turn. Drops what carries no meaning for choosing arguments: `$schema` (added by the valibot
 * converter to every plugin tool), `additionalProperties: false`, empty `required` lists, trivial
 * lower bounds (minimum 0 or 1, minLength / minItems 1) and `type` beside an enum of strings.
 * For a built-in tool (`builtin`), also `pattern`, `maxLength`, `maxItems` and a `maximum` of
 * 100,000 or more: each built-in argument with a pattern says its form in its description
 * (`fNeN`, `'1-5, 8'`, `lowercase words joined by "-"`), and those caps only bound what no call
 * needs (a 1 MB script, 100 tab ids, a point 100,000 pixels away). Validation still runs against the full schema, so an argument out of
 * bounds, of the wrong form, or an extra one, gets a clear error naming it.
 */
function compactSchema(node: unknown, builtin = false): unknown {
  if (Array.isArray(node)) return node.map((n) => compactSchema(n, builtin));
  if (node === null || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(node as Record<string, unknown>)) {
    if (k === '$schema') continue;
    if (k === 'additionalProperties' && v === false) continue;
    if (k === 'required' && Array.isArray(v) && v.length === 0) continue;
    // Lower bounds that only say "not empty / not negative / at least one" tell a model nothing.
    if ((k === 'minLength' || k === 'minItems') && v === 1) continue;
    if (k === 'minimum' && (v === 0 || v === 1)) continue;
    if (builtin && (k === 'pattern' || k === 'maxLength' || k === 'maxItems' || (k === 'maximum' && typeof v === 'number' && v >= 100_000))) continue;
    // An enum of strings says its type itself.
    if (k === 'type' && v === 'string' && Array.isArray((node as { enum?: unknown }).enum) && ((node as { enum: unknown[] }).enum).every((e) => typeof e === 'string')) continue;
    // `properties` maps names to schemas: compact each value, keep every name.
    out[k] = k === 'properties' && v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).map(([name, sub]) => [name, compactSchema(sub, builtin)]))
      : compactSchema(v, builtin);
  }
  return out;
}

/**
 * What a rebuild is for: `config` — plugins, permissions or settings changed (the extension needs
 * them); `pageTools` — a page registered or dropped tools; `pluginUpdate` — one plugin's code was
 * rebuilt in place (the plugin manager sends that plugin alone to the extension).
 */
export type CatalogChange = 'config' | 'pageTools' | 'pluginUpdate';

/** What the catalog is built from: permissions (config) and the loaded plugins; a log for listener failures. */
export interface CatalogDeps {
  config: ConfigStore;
  plugins: Pick<PluginManager, 'list'>;
  log: ServerLog;
}

export class CatalogStore {
  private snapshot: Catalog;
  private version = 0;
  private listeners = new Set<(c: Catalog, change: CatalogChange) => void>();
  /** Tools web pages registered (WebMCP), per tab, as the extension reports them. */
  readonly pageTools: PageToolRegistry;

  constructor(private readonly deps: CatalogDeps) {
    this.pageTools = new PageToolRegistry(this, deps.config);
    this.snapshot = new Catalog(0, this.build());
  }

  current(): Catalog {
    return this.snapshot;
  }

  /**
   * New snapshot from BROWSER_TOOLS + plugins + permissions; listeners run after the swap. `change`
   * says what changed, so each listener does only what that needs: MCP sessions send list_changed
   * for any change; the hub re-syncs the extension (sync.full) only for `config`.
   */
  rebuild(change: CatalogChange = 'config'): Catalog {
    const next = new Catalog(++this.version, this.build());
    this.snapshot = next;
    for (const cb of this.listeners) {
      try {
        cb(next, change);
      } catch (err) {
        this.deps.log.error('catalog_listener_failed', { error: String((err as Error)?.message ?? err) });
      }
    }
    return next;
  }

  onChange(cb: (c: Catalog, change: CatalogChange) => void): () => void {
    this.listeners.add(cb);
    return () => this.listeners.delete(cb);
  }

  private build(): CatalogTool[] {
    const config = this.deps.config;
    const tools: CatalogTool[] = [];
    const seen = new Set<string>();
    // Objects made field by field, without a spread per tool: this runs for every tool at each
    // rebuild, the start's included (2,000 plugin tools: ≈ 1 ms less cold).
    for (const def of BROWSER_TOOLS) {
      const tool: CatalogTool = {
        name: def.name,
        plugin: BROWSER_PLUGIN,
        shortName: def.name,
        description: def.description,
        inputSchema: def.inputSchema,
        permission: config.permissionFor(BROWSER_PLUGIN, def.name, def.defaultPermission),
        kind: 'browser',
        annotations: def.annotations,
      };
      if (def.outputSchema) tool.outputSchema = def.outputSchema;
      if (def.servedBy) tool.servedBy = def.servedBy;
      tools.push(tool);
      seen.add(def.name);
    }
    const plugins = this.deps.plugins.list();
    for (const p of plugins) {
      for (const t of p.tools) {
        // A plugin tool can never shadow a built-in or an earlier plugin's tool.
        if (seen.has(t.fullName)) continue;
        seen.add(t.fullName);
        const tool: CatalogTool = {
          name: t.fullName,
          plugin: p.name,
          shortName: t.name,
          description: t.description,
          inputSchema: t.inputSchema,
          permission: config.permissionFor(p.name, t.name, DEFAULT_PLUGIN_PERMISSION),
          kind: 'plugin',
        };
        if (t.annotations) tool.annotations = t.annotations;
        tools.push(tool);
      }
    }
    // Page tools come last: `tab<id>_…` names never replace a built-in or plugin tool.
    for (const t of this.pageTools.catalogTools(seen)) tools.push(t);
    return tools;
  }
}
