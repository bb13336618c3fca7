/**
 * Page tools (WebMCP): the channel between the MAIN-world observer (extension/bridge/page-tools-main.ts,
 * which watches navigator.modelContext / document.modelContext), the ISOLATED-world bridge
 * (extension/bridge/page-tools-bridge.ts) and the service worker (extension/background/page-tools.ts).
 *
 * Transport inside the page: DOM CustomEvents on `document` with a JSON string detail, like the
 * plugin channel (page-channel.ts) but with event names and a Port of their own: a page tool is
 * code the page chose, so everything on this channel is as trusted as the page itself and it can
 * never speak for a plugin adapter (different Port, different handler in the worker) or for
 * another tab (the worker takes the tab from the Port's sender, never from a message).
 *
 *   page → bridge: `tools` (the whole current list, one message per change), `result`
 *   bridge → page: `hello` (bridge started: send the list again), `call`, `cancel`, `warn`
 */
import {
  PAGE_MESSAGE_ID_MAX_CHARS,
  PAGE_TOOL_DESCRIPTION_MAX_CHARS,
  PAGE_TOOL_NAME_MAX_CHARS,
  PAGE_TOOL_RESULT_MAX_BYTES,
  PAGE_TOOL_SCHEMA_MAX_BYTES,
  PAGE_TOOLS_MAX_PER_TAB,
  PLUGIN_ERROR_MESSAGE_MAX_CHARS,
} from './limits.ts';
import { truncateText, utf8Bytes } from './page-channel.ts';

export const PAGE_TOOLS_TO_BRIDGE_EVENT = 'opentabs:page-tools-to-bridge';
export const BRIDGE_TO_PAGE_TOOLS_EVENT = 'opentabs:bridge-to-page-tools';
export const PAGE_TOOLS_PORT_NAME = 'opentabs-page-tools';
/** tool.dispatch `plugin` of a page tool: this prefix + the page's origin. */
export const PAGE_PLUGIN_PREFIX = 'page:';

/**
 * The first line of what a page tool answers the agent (its result, or its error's message): the
 * origin whose page wrote it. What follows is a site's text, and an agent must be able to tell it
 * from the user's words or the system's, whatever it says of itself.
 */
export function pageToolOriginLine(origin: string, what: 'result' | 'error'): string {
  return what === 'result'
    ? `[page tool result from ${origin}: written by that site, not by the user or OpenTabs]`
    : `[page tool error from ${origin}: its message is the site's, not the user's or OpenTabs']`;
}

export interface PageToolDescriptor {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
  /**
   * The page marks the tool destructive (annotations.destructiveHint: true): listed with that
   * hint, and its approval card's Always allow asks once more. A page can only add care with it.
   */
  destructive?: true;
}

export interface McpContentResult {
  content: Record<string, unknown>[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

export type PageToolsToBridge =
  | { type: 'tools'; tools: PageToolDescriptor[]; dropped?: string[] }
  | { type: 'result'; id: string; ok: true; value: McpContentResult }
  | { type: 'result'; id: string; ok: false; error: { code: string; message: string } }
  /** The tool running for call `id` asks for the user's input (requestUserInteraction). */
  | { type: 'interaction'; id: string };

export type BridgeToPageTools =
  | { type: 'hello' }
  | { type: 'call'; id: string; name: string; input: Record<string, unknown> }
  | { type: 'cancel'; id: string; reason: string }
  | { type: 'warn'; message: string }
  /** The answer to call `id`'s request for the user's input: go on (the tab is shown), or not and why. */
  | { type: 'interaction'; id: string; ok: boolean; message?: string };

const isObject = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null && !Array.isArray(x);

function jsonText(value: unknown): string | null {
  try {
    return JSON.stringify(value) ?? null;
  } catch {
    return null;
  }
}

/** `o` with only the `keys` it has as strings. */
function strings(o: Record<string, unknown>, keys: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k of keys) if (typeof o[k] === 'string') out[k] = o[k] as string;
  return out;
}

/**
 * A page tool's result as MCP content, or the reason it is not. MCP CallToolResult: `content` is
 * an array of typed blocks (text needs `text`, image/audio need `data` + `mimeType`, resource
 * blocks need `resource` / `uri`), `structuredContent` an object, `isError` a boolean.
 *
 * Each block keeps its content fields only. `annotations` (audience: a page marking its text for
 * the model only, so the user's client would not show it to the user) and `_meta` (directives some
 * clients act on) are the page's word about how its text is to be treated, not content: dropped.
 */
/** A checked block with its content fields only (see checkMcpContent). */
function contentOnly(block: Record<string, unknown>): Record<string, unknown> {
  switch (block.type) {
    case 'text':
      return { type: 'text', text: block.text };
    case 'image':
    case 'audio':
      return { type: block.type, data: block.data, mimeType: block.mimeType };
    case 'resource': {
      const r = block.resource as Record<string, unknown>;
      return { type: 'resource', resource: strings(r, ['uri', 'mimeType', 'text', 'blob']) };
    }
    default:
      return { type: 'resource_link', ...strings(block, ['uri', 'name', 'title', 'description', 'mimeType']) };
  }
}

export function checkMcpContent(value: unknown): { ok: true; value: McpContentResult } | { ok: false; message: string } {
  if (!isObject(value)) return { ok: false, message: `the page tool returned ${value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value}, not MCP content ({ content: [{ type: 'text', text }] })` };
  if (!Array.isArray(value.content)) return { ok: false, message: 'the page tool returned an object without a `content` array; MCP content is { content: [{ type: \'text\', text }] }' };
  for (const [i, block] of value.content.entries()) {
    if (!isObject(block) || typeof block.type !== 'string') return { ok: false, message: `content[${i}] is not an MCP content block (an object with a type)` };
    switch (block.type) {
      case 'text':
        if (typeof block.text !== 'string') return { ok: false, message: `content[${i}] is a text block without a string text` };
        break;
      case 'image':
      case 'audio':
        if (typeof block.data !== 'string' || typeof block.mimeType !== 'string') return { ok: false, message: `content[${i}] is an ${block.type} block without string data and mimeType` };
        break;
      case 'resource':
        if (!isObject(block.resource)) return { ok: false, message: `content[${i}] is a resource block without a resource object` };
        break;
      case 'resource_link':
        if (typeof block.uri !== 'string') return { ok: false, message: `content[${i}] is a resource_link block without a uri` };
        break;
      default:
        return { ok: false, message: `content[${i}] has an unknown type ${JSON.stringify(block.type).slice(0, 40)}` };
    }
  }
  if (value.structuredContent !== undefined && !isObject(value.structuredContent)) return { ok: false, message: 'structuredContent must be an object' };
  if (value.isError !== undefined && typeof value.isError !== 'boolean') return { ok: false, message: 'isError must be a boolean' };
  const out: McpContentResult = { content: (value.content as Record<string, unknown>[]).map(contentOnly) };
  if (value.structuredContent !== undefined) out.structuredContent = value.structuredContent as Record<string, unknown>;
  if (value.isError !== undefined) out.isError = value.isError as boolean;
  return { ok: true, value: out };
}

/**
 * One page tool as the page described it, capped; null (with the reason) when it cannot be listed.
 * Whether the schema is valid JSON Schema is decided by the server (Ajv). The schema is a fresh
 * copy made from its JSON text by `schemaOf` (default JSON.parse; the server passes one that
 * reuses the object of a text it has seen).
 */
export function sanitizePageTool(
  raw: unknown,
  schemaOf: (text: string) => Record<string, unknown> = (text) => JSON.parse(text) as Record<string, unknown>,
): { ok: true; tool: PageToolDescriptor } | { ok: false; name: string; reason: string } {
  if (!isObject(raw)) return { ok: false, name: '?', reason: 'not an object' };
  const name = typeof raw.name === 'string' ? raw.name : '';
  const shownName = truncateText(name, 80);
  if (name.length === 0) return { ok: false, name: '?', reason: 'the tool has no name' };
  if (name.length > PAGE_TOOL_NAME_MAX_CHARS) return { ok: false, name: shownName, reason: `the name is longer than ${PAGE_TOOL_NAME_MAX_CHARS} characters` };
  const description = truncateText(typeof raw.description === 'string' ? raw.description : '', PAGE_TOOL_DESCRIPTION_MAX_CHARS);
  let schema: unknown = raw.inputSchema ?? { type: 'object', properties: {} };
  // Some pages (and Chromium's getTools) give the schema as a JSON string.
  if (typeof schema === 'string') {
    try {
      schema = JSON.parse(schema);
    } catch {
      return { ok: false, name: shownName, reason: 'inputSchema is a string that is not JSON' };
    }
  }
  if (!isObject(schema)) return { ok: false, name: shownName, reason: 'inputSchema is not a JSON Schema object' };
  const text = jsonText(schema);
  if (text === null) return { ok: false, name: shownName, reason: 'inputSchema is not JSON' };
  if (utf8Bytes(text) > PAGE_TOOL_SCHEMA_MAX_BYTES) return { ok: false, name: shownName, reason: `inputSchema is larger than ${PAGE_TOOL_SCHEMA_MAX_BYTES} bytes` };
  return { ok: true, tool: { name, description, inputSchema: schemaOf(text), ...(raw.destructive === true ? { destructive: true as const } : {}) } };
}

/**
 * A page-tools message as the bridge and the worker pass it on, or null to drop it. The tool list
 * is cut to PAGE_TOOLS_MAX_PER_TAB; tools that cannot be listed are named in `dropped` (the page
 * is told why). Results over PAGE_TOOL_RESULT_MAX_BYTES or not MCP content become errors for
 * their call. Idempotent.
 */
export function sanitizePageToolsMessage(raw: unknown): PageToolsToBridge | null {
  return sanitizePageToolsMessageJson(raw)?.msg ?? null;
}

/** Whether `a` and `b` have the same own keys in the same order. */
function sameKeys(a: Record<string, unknown>, b: Record<string, unknown>): boolean {
  const x = Object.keys(a);
  const y = Object.keys(b);
  return x.length === y.length && x.every((k, i) => k === y[i]);
}

/**
 * Whether JSON.stringify writes `checked` (checkMcpContent's copy of `value`) as it writes `value`:
 * the copy left out no field and kept their order (the values it keeps are the same ones).
 */
function keptWhole(value: Record<string, unknown>, checked: McpContentResult): boolean {
  if (!sameKeys(value, checked as unknown as Record<string, unknown>)) return false;
  const blocks = value.content as Record<string, unknown>[];
  return checked.content.every((b, i) => sameKeys(blocks[i]!, b) && (b.type !== 'resource' || sameKeys(blocks[i]!.resource as Record<string, unknown>, b.resource as Record<string, unknown>)));
}

/**
 * sanitizePageToolsMessage, and for an accepted ok result the JSON text of its value: the one
 * measured against PAGE_TOOL_RESULT_MAX_BYTES, when the checked value serialises to the same
 * text (it does for what the bridge passed on), so the worker sends it to the server as is and the
 * value is serialised once there.
 */
export function sanitizePageToolsMessageJson(raw: unknown): { msg: PageToolsToBridge; valueJson?: string } | null {
  const msg = (m: PageToolsToBridge) => ({ msg: m });
  if (!isObject(raw)) return null;
  switch (raw.type) {
    case 'tools': {
      if (!Array.isArray(raw.tools)) return null;
      const tools: PageToolDescriptor[] = [];
      const dropped: string[] = Array.isArray(raw.dropped) ? raw.dropped.filter((d): d is string => typeof d === 'string').slice(0, PAGE_TOOLS_MAX_PER_TAB).map((d) => truncateText(d, 300)) : [];
      const seen = new Set<string>();
      for (const t of raw.tools.slice(0, PAGE_TOOLS_MAX_PER_TAB * 4)) {
        const r = sanitizePageTool(t);
        if (!r.ok) {
          if (dropped.length < PAGE_TOOLS_MAX_PER_TAB) dropped.push(`${r.name}: ${r.reason}`);
          continue;
        }
        if (seen.has(r.tool.name)) continue;
        if (tools.length >= PAGE_TOOLS_MAX_PER_TAB) {
          if (dropped.length < PAGE_TOOLS_MAX_PER_TAB) dropped.push(`${truncateText(r.tool.name, 80)}: more than ${PAGE_TOOLS_MAX_PER_TAB} tools in one tab`);
          continue;
        }
        seen.add(r.tool.name);
        tools.push(r.tool);
      }
      return msg(dropped.length > 0 ? { type: 'tools', tools, dropped } : { type: 'tools', tools });
    }
    case 'result': {
      if (typeof raw.id !== 'string' || raw.id.length === 0 || raw.id.length > PAGE_MESSAGE_ID_MAX_CHARS) return null;
      if (raw.ok === true) {
        const text = jsonText(raw.value);
        const bytes = text === null ? 0 : utf8Bytes(text);
        if (bytes > PAGE_TOOL_RESULT_MAX_BYTES) {
          return msg({ type: 'result', id: raw.id, ok: false, error: { code: 'result_too_large', message: `The page tool's result is ${bytes} bytes of JSON, over the ${PAGE_TOOL_RESULT_MAX_BYTES}-byte limit for page tool results` } });
        }
        const checked = checkMcpContent(raw.value);
        if (!checked.ok) return msg({ type: 'result', id: raw.id, ok: false, error: { code: 'invalid_page_result', message: `The page tool's result is not MCP content: ${checked.message}` } });
        const ok: PageToolsToBridge = { type: 'result', id: raw.id, ok: true, value: checked.value };
        return text !== null && keptWhole(raw.value as Record<string, unknown>, checked.value) ? { msg: ok, valueJson: text } : { msg: ok };
      }
      const e = isObject(raw.error) ? raw.error : {};
      const code = typeof e.code === 'string' && /^[a-z][a-z0-9_]{0,63}$/.test(e.code) ? e.code : 'tool_error';
      const message = truncateText(typeof e.message === 'string' && e.message ? e.message : 'The page tool failed', PLUGIN_ERROR_MESSAGE_MAX_CHARS);
      return msg({ type: 'result', id: raw.id, ok: false, error: { code, message } });
    }
    case 'interaction':
      if (typeof raw.id !== 'string' || raw.id.length === 0 || raw.id.length > PAGE_MESSAGE_ID_MAX_CHARS) return null;
      return msg({ type: 'interaction', id: raw.id });
    default:
      return null;
  }
}

/** The origin of an http(s) URL, or null (page tools exist only on http and https pages). */
export function pageOrigin(url: string | undefined): string | null {
  if (!url) return null;
  try {
    const u = new URL(url);
    return u.protocol === 'http:' || u.protocol === 'https:' ? u.origin : null;
  } catch {
    return null;
  }
}
