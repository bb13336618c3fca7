/**
 * Page tools (WebMCP): the tools web pages register, per tab, as the extension reports them
 * (`pageTools.update`, one message per change). Each becomes a catalog entry `tab<tabId>_<name>`
 * (MCP's name rules: [A-Za-z0-9_-], at most MCP_TOOL_NAME_MAX_CHARS), described as coming from
 * the page's origin, with the page's input schema once Ajv accepted it. Permissions are per origin
 * (config.json `pageOrigins`, default `ask`).
 *
 * Everything here came from a web page: schemas are checked before they are listed (a schema that
 * is not JSON Schema is refused, with the reason sent back for the page's console), names never replace a
 * built-in or plugin tool, and a tab and an origin list at most PAGE_TOOLS_MAX_PER_TAB /
 * PAGE_TOOLS_MAX_PER_ORIGIN tools.
 */
import type { ConfigStore } from '../state/config.ts';
import { MCP_TOOL_NAME_MAX_CHARS, PAGE_TOOL_SCHEMA_MAX_DEPTH, PAGE_TOOLS_MAX_PER_ORIGIN, PAGE_TOOLS_MAX_PER_TAB } from '../limits.ts';
import { PAGE_PLUGIN_PREFIX, pageOrigin, sanitizePageTool, type PageToolDescriptor } from '../protocol/page-tools.ts';
import type { CatalogTool } from './catalog-types.ts';
import { schemaProblem } from './schema-check.ts';

interface PageToolEntry extends PageToolDescriptor {
  /** `tab<tabId>_<sanitised name>` */
  fullName: string;
}

interface TabTools {
  tabId: number;
  url: string;
  origin: string;
  tools: PageToolEntry[];
}

export interface Refusal {
  name: string;
  reason: string;
}

/** A page tool name under MCP's rules: other characters become "_". */
export function mcpSafeName(name: string): string {
  return name.replace(/[^A-Za-z0-9_-]/g, '_');
}

export class PageToolRegistry {
  private tabs = new Map<number, TabTools>();

  /** `catalog` is the store that owns this registry: page tools are checked against it and rebuild it. */
  constructor(
    private readonly catalog: { current(): { get(name: string): CatalogTool | undefined }; rebuild(change: 'pageTools'): unknown },
    private readonly config: ConfigStore,
  ) {}

  /** Replace one tab's tools; rebuilds the catalog (one list_changed) when anything changed. */
  update(tabId: number, url: string, tools: PageToolDescriptor[]): { refused: Refusal[] } {
    const refused: Refusal[] = [];
    const origin = pageOrigin(url);
    const accepted: PageToolEntry[] = [];
    if (origin === null) {
      for (const t of tools) refused.push({ name: t.name, reason: 'page tools are only taken from http and https pages' });
    } else {
      let originCount = 0;
      for (const other of this.tabs.values()) if (other.tabId !== tabId && other.origin === origin) originCount += other.tools.length;
      const taken = new Set<string>();
      const catalog = this.catalog.current();
      // A page sends its tools again on every registration change and navigation: a schema it sent
      // before (same tool, same JSON) keeps the object already checked, and with it its validator.
      const prior = new Map((this.tabs.get(tabId)?.tools ?? []).map((p) => [p.name, p]));
      for (const raw of tools) {
        const s = sanitizePageTool(raw);
        if (!s.ok) {
          refused.push({ name: s.name, reason: s.reason });
          continue;
        }
        let t = s.tool;
        if (accepted.some((a) => a.name === t.name)) continue;
        const previous = prior.get(t.name);
        const unchanged = previous !== undefined && JSON.stringify(previous.inputSchema) === JSON.stringify(t.inputSchema);
        if (unchanged) t = { ...t, inputSchema: previous.inputSchema };
        const schemaProblem = unchanged ? null : this.schemaRefusal(t.inputSchema);
        if (schemaProblem) {
          refused.push({ name: t.name, reason: `inputSchema is not valid JSON Schema: ${schemaProblem}` });
          continue;
        }
        if (accepted.length >= PAGE_TOOLS_MAX_PER_TAB) {
          refused.push({ name: t.name, reason: `a tab may offer at most ${PAGE_TOOLS_MAX_PER_TAB} tools` });
          continue;
        }
        if (originCount + accepted.length >= PAGE_TOOLS_MAX_PER_ORIGIN) {
          refused.push({ name: t.name, reason: `the tabs of ${origin} offer ${PAGE_TOOLS_MAX_PER_ORIGIN} tools already (the limit per origin)` });
          continue;
        }
        const fullName = uniqueName(tabId, t.name, taken);
        const existing = catalog.get(fullName);
        if (existing && existing.kind !== 'page') {
          refused.push({ name: t.name, reason: `its name ${fullName} is taken by a ${existing.kind === 'browser' ? 'built-in' : 'plugin'} tool` });
          continue;
        }
        taken.add(fullName);
        accepted.push({ ...t, fullName });
      }
    }
    const before = this.tabs.get(tabId);
    const next: TabTools | undefined = accepted.length > 0 && origin !== null ? { tabId, url, origin, tools: accepted } : undefined;
    if (JSON.stringify(before ?? null) !== JSON.stringify(next ?? null)) {
      if (next) this.tabs.set(tabId, next);
      else this.tabs.delete(tabId);
      this.catalog.rebuild('pageTools');
    }
    return { refused };
  }

  /** The extension went away: no tab's tools can be called any more. */
  clearAll(): void {
    if (this.tabs.size === 0) return;
    this.tabs.clear();
    this.catalog.rebuild('pageTools');
  }

  /** Per tab: its origin and how many page tools it offers (plugin_list_tabs / browser_list_tabs). */
  summary(): { tabId: number; origin: string; url: string; tools: string[] }[] {
    return [...this.tabs.values()].map((t) => ({ tabId: t.tabId, origin: t.origin, url: t.url, tools: t.tools.map((x) => x.fullName) }));
  }

  /** Catalog entries, skipping any name already in `seen` (a built-in or plugin tool wins). */
  catalogTools(seen: Set<string>): CatalogTool[] {
    const out: CatalogTool[] = [];
    const config = this.config;
    for (const tab of this.tabs.values()) {
      const permission = config.originPermission(tab.origin);
      for (const t of tab.tools) {
        if (seen.has(t.fullName)) continue;
        seen.add(t.fullName);
        out.push({
          name: t.fullName,
          plugin: PAGE_PLUGIN_PREFIX + tab.origin,
          shortName: t.name,
          description: `[from ${tab.origin}] ${t.description}`,
          inputSchema: t.inputSchema,
          permission,
          kind: 'page',
          tabId: tab.tabId,
          origin: tab.origin,
          url: tab.url,
        });
      }
    }
    return out;
  }

  /**
   * Why this schema cannot be listed, or null when it is JSON Schema describing an object. Nothing
   * is compiled here: any web page sends these, as often as its update rate allows, and Ajv takes
   * ≈ 0.3 s for one 16 KB schema (32 tools, ten times a second, would hold the server for good).
   * Its validator is compiled on the tool's first call (validate.ts, kept by schema object).
   */
  private schemaRefusal(schema: Record<string, unknown>): string | null {
    if (schema.type !== undefined && schema.type !== 'object') return `the top level must be type "object" (tool arguments are an object), not ${JSON.stringify(schema.type).slice(0, 40)}`;
    if (nestedDeeperThan(schema, PAGE_TOOL_SCHEMA_MAX_DEPTH)) return `the schema is nested more than ${PAGE_TOOL_SCHEMA_MAX_DEPTH} levels deep`;
    const invalid = schemaProblem(schema);
    if (invalid) return `schema is invalid: ${invalid}`.slice(0, 300);
    // The server does not run a page's regular expressions (validate.ts PAGE_REGEXP), so it could not tell which keys they name.
    if (usesPatternProperties(schema)) return 'patternProperties is not supported in page tool schemas; list the properties, or use additionalProperties';
    const regex = badPattern(schema);
    return regex === null ? null : regex.slice(0, 300);
  }
}

/** Whether a `patternProperties` object appears anywhere in the schema (bounded by the schema's own size). */
function usesPatternProperties(node: unknown): boolean {
  if (Array.isArray(node)) return node.some(usesPatternProperties);
  if (node === null || typeof node !== 'object') return false;
  for (const [k, v] of Object.entries(node)) {
    if (k === 'patternProperties' && v !== null && typeof v === 'object' && !Array.isArray(v)) return true;
    if (usesPatternProperties(v)) return true;
  }
  return false;
}

/** Whether objects and arrays nest more than `max` levels (the schema is at most 16 KB of JSON, so the recursion is bounded). */
function nestedDeeperThan(node: unknown, max: number): boolean {
  if (node === null || typeof node !== 'object') return false;
  if (max <= 0) return true;
  return (Array.isArray(node) ? node : Object.values(node)).some((v) => nestedDeeperThan(v, max - 1));
}

/**
 * A `pattern` that is not a regular expression (as Ajv would build it, with the u flag), or null.
 * Built, never run. Only keyword positions: a property named "pattern" is a key of `properties`, whose value is a schema object.
 */
function badPattern(node: unknown): string | null {
  if (Array.isArray(node)) {
    for (const v of node) {
      const bad = badPattern(v);
      if (bad !== null) return bad;
    }
    return null;
  }
  if (node === null || typeof node !== 'object') return null;
  for (const [k, v] of Object.entries(node)) {
    if (k === 'pattern' && typeof v === 'string') {
      try {
        new RegExp(v, 'u');
      } catch (err) {
        return `pattern ${JSON.stringify(v).slice(0, 60)} is not a regular expression: ${(err as Error).message}`;
      }
    } else if (k !== 'enum' && k !== 'const' && k !== 'default' && k !== 'examples') {
      const bad = badPattern(v);
      if (bad !== null) return bad;
    }
  }
  return null;
}

/** `tab<id>_<name>` within MCP's length; a second tool that sanitises to the same name gets `_2`, `_3`… */
function uniqueName(tabId: number, name: string, taken: Set<string>): string {
  const prefix = `tab${tabId}_`;
  const base = (prefix + mcpSafeName(name)).slice(0, MCP_TOOL_NAME_MAX_CHARS);
  if (!taken.has(base)) return base;
  for (let i = 2; ; i++) {
    const suffix = `_${i}`;
    const candidate = base.slice(0, MCP_TOOL_NAME_MAX_CHARS - suffix.length) + suffix;
    if (!taken.has(candidate)) return candidate;
  }
}
