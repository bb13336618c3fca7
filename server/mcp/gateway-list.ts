/**
 * The gateway's opentabs_list_tools. The gateway exists to keep the model's context small, so the
 * listing comes in two steps: without arguments, one line per tool (name, permission when not
 * `auto`, description) — 9 KB for the 69 built-ins where every input schema would be 42 KB; with
 * `plugin`, `query` or `tools`, only the matching tools, each with its input schema as tools/list
 * lists it (compact, with annotations).
 */
import type { Catalog, ToolListing } from '../tools/catalog.ts';
import { mcpError, type McpCallResult } from './results.ts';
import { suggestTools } from '../tools/suggest.ts';

/** At most this many names in `tools` (a listing, not a dump). */
const MAX_NAMED_TOOLS = 100;
const MAX_QUERY_CHARS = 200;

export const LIST_TOOLS_INPUT_SCHEMA = {
  type: 'object' as const,
  properties: {
    plugin: { type: 'string', description: 'Only this plugin\'s tools ("browser": the built-in browser tools)' },
    query: { type: 'string', description: 'Only tools whose name or description holds every word of this' },
    tools: { type: 'array', items: { type: 'string' }, description: 'Exactly these tools, by name' },
  },
  additionalProperties: false,
};

const HINT = 'Input schemas: opentabs_list_tools with {"plugin": "<name>"}, {"query": "<words>"} or {"tools": ["<name>", …]}.';

/** A GET /tools listing without its schema. */
type IndexEntry = Omit<ToolListing, 'inputSchema'>;

export function listTools(catalog: Catalog, rawArgs: unknown): McpCallResult {
  const bad = (path: string, what: string) => mcpError('invalid_arguments', `Invalid arguments for opentabs_list_tools at /${path}: ${what}.`);
  if (rawArgs !== undefined && rawArgs !== null && (typeof rawArgs !== 'object' || Array.isArray(rawArgs))) return bad('', 'the arguments must be an object');
  const args = (rawArgs ?? {}) as Record<string, unknown>;
  for (const key of Object.keys(args)) if (!(key in LIST_TOOLS_INPUT_SCHEMA.properties)) return bad(key, 'not an argument of opentabs_list_tools (plugin, query, tools)');
  const { plugin, query, tools: named } = args;
  if (plugin !== undefined && typeof plugin !== 'string') return bad('plugin', 'must be a string');
  if (query !== undefined && (typeof query !== 'string' || query.length > MAX_QUERY_CHARS)) return bad('query', `must be a string of at most ${MAX_QUERY_CHARS} characters`);
  if (named !== undefined && (!Array.isArray(named) || named.length > MAX_NAMED_TOOLS || named.some((n) => typeof n !== 'string'))) {
    return bad('tools', `must be a list of at most ${MAX_NAMED_TOOLS} tool names`);
  }
  if (typeof plugin === 'string' && !catalog.byPlugin.has(plugin)) {
    return mcpError('unknown_plugin', `Unknown plugin "${plugin}". Call opentabs_list_tools without arguments to see every tool.`);
  }
  const unknown = ((named as string[] | undefined) ?? []).filter((n) => !catalog.byName.has(n));
  if (unknown.length > 0) {
    const hints = unknown.length === 1 ? suggestTools(unknown[0]!, catalog.tools) : '';
    return mcpError('unknown_tool', `No tool named ${unknown.map((n) => `"${n}"`).join(', ')}.${hints} Call opentabs_list_tools without arguments to see every tool.`);
  }

  const words = typeof query === 'string' ? query.toLowerCase().split(/\s+/).filter(Boolean) : [];
  // A blank query narrows nothing: without another filter that is the index, not every schema.
  if (plugin === undefined && words.length === 0 && named === undefined) return index(catalog);

  const wanted = named ? new Set(named as string[]) : null;
  // The tools/list entries, in catalog order (entries[i] is catalog.tools[i] as tools/list has it).
  const entries = catalog.mcpToolsList().tools;
  const matches = catalog.tools.flatMap((t, i) => {
    if (typeof plugin === 'string' && t.plugin !== plugin) return [];
    if (wanted && !wanted.has(t.name)) return [];
    const text = `${t.name} ${t.description}`.toLowerCase();
    if (!words.every((w) => text.includes(w))) return [];
    return [{ ...entries[i]!, plugin: t.plugin, permission: t.permission }];
  });
  if (matches.length === 0) {
    const text = `No tool matches ${JSON.stringify(query)}${typeof plugin === 'string' ? ` in plugin "${plugin}"` : ''}. Call opentabs_list_tools without arguments to see every tool.`;
    return { content: [{ type: 'text', text }], structuredContent: { tools: [] }, isError: false };
  }
  return { content: [{ type: 'text', text: JSON.stringify(matches) }], structuredContent: { tools: matches }, isError: false };
}

/** Every tool in one line each; the structured form has the same fields. */
function index(catalog: Catalog): McpCallResult {
  const tools: IndexEntry[] = catalog.tools.map((t) => ({ name: t.name, plugin: t.plugin, permission: t.permission, description: t.description }));
  // One line per tool, whatever a description holds: a page tool's description comes from the
  // page, and a line break in it must not read as another tool's line.
  const lines = tools.map((t) => `${t.name}${t.permission === 'auto' ? '' : ` [${t.permission}]`}: ${t.description.replace(/\s+/g, ' ').trim()}`);
  const text = `${tools.length} tools ([ask]: the user approves each call; [off]: disabled by the user). ${HINT}\n${lines.join('\n')}`;
  return { content: [{ type: 'text', text }], structuredContent: { tools }, isError: false };
}
