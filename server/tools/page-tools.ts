/**
 * Page tools (WebMCP): the tools web pages register, per tab, as the extension reports them
 * (`pageTools.update`, one message per change). Each becomes a catalog entry `tab<tabId>_<name>`
 * (MCP's name rules: [A-Za-z0-9_-], at most PAGE_TOOL_LISTED_NAME_MAX_CHARS), described as coming from
 * the page's origin, with the page's input schema once Ajv accepted it. Permissions are per origin
 * (config.json `pageOrigins`, default `ask`).
 *
 * Everything here came from a web page: schemas are checked before they are listed (a schema that
 * is not JSON Schema is refused, with the reason sent back for the page's console), characters a
 * reader does not see are written as \uXXXX in descriptions and schema titles, names never replace a
 * built-in or plugin tool, and a tab, an origin and all tabs together list at most
 * PAGE_TOOLS_MAX_PER_TAB / PAGE_TOOLS_MAX_PER_ORIGIN / PAGE_TOOLS_MAX_TOTAL tools.
 */
import { createHash } from 'node:crypto';
import type { ConfigStore } from '../state/config.ts';
import {
  MCP_TOOL_NAME_MAX_CHARS,
  PAGE_TOOL_SCHEMA_CACHE_BYTES,
  PAGE_TOOL_SCHEMA_CHECK_BURST_BYTES,
  PAGE_TOOL_SCHEMA_CHECK_BYTES_PER_SECOND,
  PAGE_TOOL_SCHEMA_MAX_DEPTH,
  PAGE_TOOLS_MAX_PER_ORIGIN,
  PAGE_TOOLS_MAX_PER_TAB,
  PAGE_TOOLS_MAX_TOTAL,
} from '../limits.ts';
import { PAGE_PLUGIN_PREFIX, pageOrigin, pageToolOriginLine, sanitizePageTool, type PageToolDescriptor } from '../protocol/page-tools.ts';
import { TokenBucket } from '../protocol/token-bucket.ts';
import type { CatalogTool } from './catalog-types.ts';
import { schemaProblem } from './schema-check.ts';
import { printable } from '../shown-text.ts';

interface PageToolEntry extends PageToolDescriptor {
  /** `tab<tabId>_<sanitised name>`, cut to PAGE_TOOL_LISTED_NAME_MAX_CHARS */
  fullName: string;
  /** pageToolHash of the tool as listed. */
  hash: string;
}

/**
 * What the user is shown of a page tool, as one hash: its name, its description (as listed) and
 * its input schema's JSON text. A card's Always allow is bound to it: a page that changes a tool's
 * description or arguments afterwards (or adds one) is asked about again.
 */
export function pageToolHash(name: string, description: string, schemaText: string): string {
  return createHash('sha256').update(JSON.stringify([name, description, schemaText])).digest('hex');
}

/** A schema text checked once: the object every tool sending that text shares (and its validator), and the verdict. */
interface CheckedSchema {
  schema: Record<string, unknown>;
  problem: string | null;
}

/**
 * Schemas checked before, by their JSON text, least recently used first out once their texts pass
 * PAGE_TOOL_SCHEMA_CACHE_BYTES. Pages send their whole list on every change and navigation, and
 * many tabs of one app send the same schemas: those are neither parsed nor checked again.
 */
class CheckedSchemas {
  private byText = new Map<string, CheckedSchema>();
  private chars = 0;

  get(text: string): CheckedSchema | undefined {
    const c = this.byText.get(text);
    if (c) {
      this.byText.delete(text);
      this.byText.set(text, c);
    }
    return c;
  }

  set(text: string, c: CheckedSchema): void {
    if (this.byText.has(text)) return;
    this.byText.set(text, c);
    this.chars += text.length;
    for (const oldest of this.byText.keys()) {
      if (this.chars <= PAGE_TOOL_SCHEMA_CACHE_BYTES) break;
      this.chars -= oldest.length;
      this.byText.delete(oldest);
    }
  }
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
  /** Not checked yet (the tab's budget for new schemas is spent): the list may be sent again after this long. */
  retryAfterMs?: number;
}

/** A page tool name under MCP's rules: other characters become "_". */
export function mcpSafeName(name: string): string {
  return name.replace(/[^A-Za-z0-9_-]/g, '_');
}

export class PageToolRegistry {
  private tabs = new Map<number, TabTools>();
  private checked = new CheckedSchemas();
  /** Per tab: bytes of new schema text it may still have checked. */
  private budgets = new Map<number, TokenBucket>();

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
      let othersCount = 0;
      for (const other of this.tabs.values()) {
        if (other.tabId === tabId) continue;
        othersCount += other.tools.length;
        if (other.origin === origin) originCount += other.tools.length;
      }
      const taken = new Set<string>();
      const catalog = this.catalog.current();
      const now = Date.now();
      const budget = this.budgetOf(tabId, now);
      // Characters of new schemas left unchecked for want of budget (they set retryAfterMs).
      let unchecked = 0;
      for (const raw of tools) {
        // A page sends its tools again on every registration change and navigation: a schema text
        // seen before keeps the object already checked (and with it its validator), unparsed.
        let text = '';
        let known: CheckedSchema | undefined;
        let overBudget = false;
        const s = sanitizePageTool(raw, (json) => {
          text = json;
          known = this.checked.get(json);
          if (known) return known.schema;
          // Over the budget nothing of it is parsed either.
          overBudget = json.length > budget.level(now);
          return overBudget ? {} : (JSON.parse(json) as Record<string, unknown>);
        });
        if (!s.ok) {
          refused.push({ name: s.name, reason: s.reason });
          continue;
        }
        const t = s.tool;
        if (accepted.some((a) => a.name === t.name)) continue;
        if (!known) {
          if (overBudget) {
            unchecked += text.length;
            refused.push({ name: t.name, reason: `not checked yet: this tab sent more new schemas than the server checks (${PAGE_TOOL_SCHEMA_CHECK_BYTES_PER_SECOND / 1024} KB a second); the list is sent again in a moment`, retryAfterMs: 0 });
            continue;
          }
          budget.take(text.length);
          known = { schema: t.inputSchema, problem: this.schemaRefusal(t.inputSchema) };
          // Checked (no deeper than PAGE_TOOL_SCHEMA_MAX_DEPTH): its descriptions and titles are shown.
          if (!known.problem) escapeSchemaText(known.schema);
          this.checked.set(text, known);
        }
        if (known.problem) {
          refused.push({ name: t.name, reason: `inputSchema is not valid JSON Schema: ${known.problem}` });
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
        if (othersCount + accepted.length >= PAGE_TOOLS_MAX_TOTAL) {
          refused.push({ name: t.name, reason: `the open tabs offer ${PAGE_TOOLS_MAX_TOTAL} page tools already (the limit for all tabs together)` });
          continue;
        }
        const fullName = uniqueName(tabId, t.name, taken);
        const existing = catalog.get(fullName);
        if (existing && existing.kind !== 'page') {
          refused.push({ name: t.name, reason: `its name ${fullName} is taken by a ${existing.kind === 'browser' ? 'built-in' : 'plugin'} tool` });
          continue;
        }
        taken.add(fullName);
        const description = printable(t.description);
        accepted.push({ ...t, description, fullName, hash: pageToolHash(t.name, description, text) });
      }
      if (unchecked > 0) {
        // When the budget will cover every schema left unchecked.
        const retryAfterMs = Math.max(1, budget.waitMs(unchecked, now));
        for (const r of refused) if (r.retryAfterMs !== undefined) r.retryAfterMs = retryAfterMs;
      }
    }
    const before = this.tabs.get(tabId);
    const next: TabTools | undefined = accepted.length > 0 && origin !== null ? { tabId, url, origin, tools: accepted } : undefined;
    if (!sameTools(before, next)) {
      if (next) this.tabs.set(tabId, next);
      else this.tabs.delete(tabId);
      this.catalog.rebuild('pageTools');
    }
    return { refused };
  }

  /** Tab `tabId`'s budget for checking new schemas (refilled for the time since its last use). */
  private budgetOf(tabId: number, now: number): TokenBucket {
    let b = this.budgets.get(tabId);
    if (!b) {
      // Tabs come and go: forget the ones whose budget has refilled anyway.
      if (this.budgets.size >= 1024) for (const [id, old] of this.budgets) if (old.level(now) >= old.burst) this.budgets.delete(id);
      b = new TokenBucket(PAGE_TOOL_SCHEMA_CHECK_BURST_BYTES, PAGE_TOOL_SCHEMA_CHECK_BYTES_PER_SECOND, now);
      this.budgets.set(tabId, b);
    }
    return b;
  }

  /** The extension went away: no tab's tools can be called any more. */
  clearAll(): void {
    if (this.tabs.size === 0) return;
    this.tabs.clear();
    this.catalog.rebuild('pageTools');
  }

  /** What the tabs of `origin` offer now, name → pageToolHash (a card's Always allow covers these). */
  offeredBy(origin: string): Record<string, string> {
    const out: Record<string, string> = {};
    for (const tab of this.tabs.values()) if (tab.origin === origin) for (const t of tab.tools) out[t.name] ??= t.hash;
    return out;
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
      const granted = config.originPermission(tab.origin);
      // `auto` from a card's Always allow covers the tools as the user allowed them (pageToolHash).
      const allowed = granted === 'auto' ? config.pageToolsAllowed(tab.origin) : undefined;
      for (const t of tab.tools) {
        if (seen.has(t.fullName)) continue;
        seen.add(t.fullName);
        const before = allowed && Object.hasOwn(allowed, t.name) ? allowed[t.name] : undefined;
        const asks = allowed !== undefined && before !== t.hash;
        const permission = asks ? 'ask' : granted;
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
          pageToolHash: t.hash,
          ...(asks ? { approvalNote: `${before === undefined ? 'New' : 'Changed'} since you chose Always allow ${tab.origin}: ${before === undefined ? 'the page added this tool since' : 'the page changed its description or arguments since'}, so it is asked about again` } : {}),
          ...(t.destructive ? { annotations: { destructiveHint: true } } : {}),
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
    const walked = walkSchema(schema);
    if (walked.tooDeep) return `the schema is nested more than ${PAGE_TOOL_SCHEMA_MAX_DEPTH} levels deep`;
    const invalid = schemaProblem(schema);
    if (invalid) return `schema is invalid: ${invalid}`.slice(0, 300);
    // The server does not run a page's regular expressions (validate.ts PAGE_REGEXP), so it could not tell which keys they name.
    if (walked.patternProperties) return 'patternProperties is not supported in page tool schemas; list the properties, or use additionalProperties';
    return walked.badPattern === null ? null : walked.badPattern.slice(0, 300);
  }
}

/** Whether two lists of one tab are the same (a schema object is shared by every sender of its text). */
function sameTools(a: TabTools | undefined, b: TabTools | undefined): boolean {
  if (!a || !b) return a === b;
  if (a.url !== b.url || a.origin !== b.origin || a.tools.length !== b.tools.length) return false;
  return a.tools.every((t, i) => {
    const u = b.tools[i]!;
    return t.name === u.name && t.fullName === u.fullName && t.description === u.description && t.inputSchema === u.inputSchema;
  });
}

interface Walked {
  /** Objects and arrays nest more than PAGE_TOOL_SCHEMA_MAX_DEPTH levels (the walk stopped there). */
  tooDeep: boolean;
  /** A `patternProperties` object appears somewhere. */
  patternProperties: boolean;
  /**
   * The first `pattern` that is not a regular expression (as Ajv would build it, with the u flag),
   * or null. Built, never run. Only keyword positions: a property named "pattern" is a key of
   * `properties`, whose value is a schema object; enum, const, default and examples are data.
   */
  badPattern: string | null;
}

/** One walk over a page's schema (at most 16 KB of JSON; never deeper than PAGE_TOOL_SCHEMA_MAX_DEPTH + 1). */
function walkSchema(schema: Record<string, unknown>): Walked {
  const out: Walked = { tooDeep: false, patternProperties: false, badPattern: null };
  const visit = (node: unknown, depth: number, data: boolean): void => {
    if (out.tooDeep || node === null || typeof node !== 'object') return;
    if (depth > PAGE_TOOL_SCHEMA_MAX_DEPTH) {
      out.tooDeep = true;
      return;
    }
    if (Array.isArray(node)) {
      for (const v of node) visit(v, depth + 1, data);
      return;
    }
    for (const k in node) {
      const v = (node as Record<string, unknown>)[k];
      if (k === 'patternProperties' && v !== null && typeof v === 'object' && !Array.isArray(v)) out.patternProperties = true;
      if (!data && k === 'pattern' && typeof v === 'string') {
        if (out.badPattern === null) {
          try {
            new RegExp(v, 'u');
          } catch (err) {
            out.badPattern = `pattern ${JSON.stringify(v).slice(0, 60)} is not a regular expression: ${(err as Error).message}`;
          }
        }
        continue;
      }
      visit(v, depth + 1, data || k === 'enum' || k === 'const' || k === 'default' || k === 'examples');
    }
  };
  visit(schema, 1, false);
  return out;
}

/**
 * The `description` and `title` keywords of a page's schema with the characters a reader does not
 * see (bidi overrides, zero-width and tag characters, variation selectors: UNSHOWN) written as
 * \uXXXX, in place, as the tool's own description is: both reach every MCP client's tool list,
 * where a page could hide text from the user who reads the list and not from the model (a line of
 * tag characters spells out instructions no client shows). Data (enum, const, default, examples)
 * and property names stay as they are: the agent must send them exactly.
 */
function escapeSchemaText(schema: Record<string, unknown>): void {
  const visit = (node: unknown, data: boolean): void => {
    if (node === null || typeof node !== 'object') return;
    if (Array.isArray(node)) {
      for (const v of node) visit(v, data);
      return;
    }
    const o = node as Record<string, unknown>;
    for (const k in o) {
      const v = o[k];
      if (!data && (k === 'description' || k === 'title') && typeof v === 'string') o[k] = printable(v);
      else visit(v, data || k === 'enum' || k === 'const' || k === 'default' || k === 'examples');
    }
  };
  visit(schema, false);
}

/**
 * The longest `tab<id>_<name>` listed. MCP allows MCP_TOOL_NAME_MAX_CHARS (64), but Cursor hides a
 * tool whose server name and tool name together reach 60 characters: with the server named
 * `opentabs` (as the README configures it) that is 51, the length plugin builds warn past. A page
 * cannot know its tab id (up to 10 digits), so its names are cut here instead: the catalog entry
 * keeps the page's own name (shortName) for the call.
 */
export const PAGE_TOOL_LISTED_NAME_MAX_CHARS = Math.min(MCP_TOOL_NAME_MAX_CHARS, 60 - 1 - 'opentabs'.length);

/**
 * `tab<id>_<name>` within PAGE_TOOL_LISTED_NAME_MAX_CHARS; a second tool that sanitises or is cut
 * to the same name gets `_2`, `_3`… (cut to make room), the first number no tool of the tab has.
 */
function uniqueName(tabId: number, name: string, taken: Set<string>): string {
  const prefix = `tab${tabId}_`;
  const base = (prefix + mcpSafeName(name)).slice(0, PAGE_TOOL_LISTED_NAME_MAX_CHARS);
  if (!taken.has(base)) return base;
  for (let i = 2; ; i++) {
    const suffix = `_${i}`;
    const candidate = base.slice(0, PAGE_TOOL_LISTED_NAME_MAX_CHARS - suffix.length) + suffix;
    if (!taken.has(candidate)) return candidate;
  }
}

/** The first line of every page tool result the agent gets (pageToolOriginLine). */
export function pageResultOriginLine(origin: string): string {
  return pageToolOriginLine(origin, 'result');
}

/**
 * A page tool's result (MCP content, checked by the extension) with pageResultOriginLine as its
 * first content block. Its structuredContent and other fields stay as the page sent them.
 */
export function markPageResult(value: unknown, origin: string): unknown {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return value;
  const v = value as Record<string, unknown>;
  if (!Array.isArray(v.content)) return value;
  return { ...v, content: [{ type: 'text', text: pageResultOriginLine(origin) }, ...v.content] };
}
