/**
 * ToolOutcome → MCP CallToolResult. Used by both /mcp and the gateway's opentabs_call, so a call
 * through the gateway returns exactly what the direct call returns.
 */
import type { ToolOutcome } from '../tools/call.ts';
import type { CatalogTool } from '../tools/catalog-types.ts';
import { mcpOutputSchema } from '../tools/catalog.ts';
import { TOOL_VALIDATORS } from '../tools/validate.ts';

export interface McpCallResult {
  [key: string]: unknown;
  content: ({ type: 'text'; text: string } | { type: 'image'; data: string; mimeType: string } | { type: 'resource'; resource: { uri: string; mimeType: string; blob: string } })[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

/** Files a tool returned (a PDF) as MCP embedded resources, after its text. */
function pushResources(content: McpCallResult['content'], resources: { uri: string; mimeType: string; blob: string }[] | undefined): void {
  if (resources) for (const r of resources) content.push({ type: 'resource', resource: { uri: r.uri, mimeType: r.mimeType, blob: r.blob } });
}

const isPlainObject = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null && !Array.isArray(x);

export function toMcpResult(o: ToolOutcome): McpCallResult {
  // A page tool's result is MCP content already (checked by the extension). Only a tool result's
  // own fields go on: a page writes it, and anything else at the top (resultType, inputRequests,
  // _meta …) is protocol the client acts on, not the page's to say.
  if (o.ok && o.tool.kind === 'page') return pageResult(o.value);
  if (o.ok && o.text !== undefined) {
    // Text by nature (a page snapshot): the model reads it as is, once.
    const content: McpCallResult['content'] = [{ type: 'text', text: o.text }];
    if (o.images) for (const img of o.images) content.push({ type: 'image', data: img.data, mimeType: img.mimeType });
    pushResources(content, o.resources);
    return { content, isError: false };
  }
  if (o.ok) {
    const value = o.value === undefined ? null : o.value;
    const content: McpCallResult['content'] = [{ type: 'text', text: JSON.stringify(value) }];
    if (o.images) for (const img of o.images) content.push({ type: 'image', data: img.data, mimeType: img.mimeType });
    pushResources(content, o.resources);
    // MCP requires structuredContent to be an object.
    const structuredContent = isPlainObject(value) ? value : { result: value };
    const mismatch = outputMismatch(o.tool, structuredContent);
    // The data still reaches the model, after the error, as text (no structuredContent to refuse).
    if (mismatch) return { content: [{ type: 'text', text: mismatch }, ...content], isError: true };
    return { content, structuredContent, isError: false };
  }
  const content: McpCallResult['content'] = [{ type: 'text', text: `${o.error.message} [${o.error.code}]` }];
  // A tool with an outputSchema promises that shape in structuredContent, and clients (the SDK's)
  // check it on errors too: its errors carry the text alone.
  if (o.tool?.outputSchema) return { content, isError: true };
  return { content, structuredContent: { error: o.error.toBody() }, isError: true };
}

/** A tool's outputSchema as tools/list lists it (what clients check results against), by the tool's schema object. */
const listedOutputSchemas = new WeakMap<object, Record<string, unknown>>();

/**
 * Why `structuredContent` does not match the tool's outputSchema (as listed), or null. A server
 * MUST return structured results that conform to the tool's output schema; a result that does not
 * is answered as a tool execution error saying so (as the reference SDK server does) followed by
 * the result as text, rather than passed on for the client to refuse as a protocol error. Patterns (`pattern`) are not run on the
 * server (validate.ts: PAGE_REGEXP): a page's data against a pattern could backtrack for hours.
 */
function outputMismatch(tool: CatalogTool, structuredContent: Record<string, unknown>): string | null {
  const schema = tool.outputSchema;
  if (!schema) return null;
  let listed = listedOutputSchemas.get(schema);
  if (!listed) listedOutputSchemas.set(schema, (listed = mcpOutputSchema(schema)));
  const failure = TOOL_VALIDATORS.validate(`${tool.name}#output`, listed, structuredContent);
  // A schema that does not compile is the tool's problem to report elsewhere, not a reason to drop its result.
  if (!failure || failure.schemaError) return null;
  return `Output validation error: the result of ${tool.name} does not match its outputSchema at ${failure.path || '/'}: ${failure.message}; the result as it came follows. [invalid_output]`;
}

function pageResult(value: unknown): McpCallResult {
  const v = value as Partial<McpCallResult> | null;
  if (!isPlainObject(v) || !Array.isArray(v.content)) {
    return mcpError('invalid_page_result', "The page tool's result is not MCP content ({ content: [{ type: 'text', text }] }).");
  }
  const out: McpCallResult = { content: v.content };
  if (isPlainObject(v.structuredContent)) out.structuredContent = v.structuredContent;
  if (typeof v.isError === 'boolean') out.isError = v.isError;
  return out;
}

/**
 * A result as a session of an older protocol revision can read it: content block types its
 * revision does not have (audio came in 2025-03-26, resource_link in 2025-06-18; a page tool may
 * return either) become text saying what was there, since a client of that revision refuses the
 * whole result over one block of a type it does not know. Later revisions get the result as is.
 */
export function forRevision(result: McpCallResult, protocolVersion: string): McpCallResult {
  if (protocolVersion >= '2025-06-18') return result;
  const known = protocolVersion >= '2025-03-26' ? ['text', 'image', 'audio', 'resource'] : ['text', 'image', 'resource'];
  const blocks = result.content as Record<string, unknown>[];
  if (blocks.every((b) => known.includes(b.type as string))) return result;
  const content = blocks.map((b) => {
    if (known.includes(b.type as string)) return b;
    const str = (k: string) => (typeof b[k] === 'string' ? (b[k] as string) : undefined);
    if (b.type === 'audio') {
      const bytes = Math.floor(((str('data') ?? '').length * 3) / 4);
      return { type: 'text', text: `[audio content (${str('mimeType') ?? 'unknown type'}, ${bytes} bytes) left out: protocol revision ${protocolVersion} has no audio content]` };
    }
    if (b.type === 'resource_link') {
      const name = str('title') ?? str('name') ?? str('uri');
      const details = [str('description'), str('mimeType')].filter(Boolean).join('; ');
      return { type: 'text', text: `Resource link: ${name} <${str('uri')}>${details ? ` (${details})` : ''}` };
    }
    return { type: 'text', text: `[${String(b.type).slice(0, 40)} content left out: protocol revision ${protocolVersion} does not have it]` };
  });
  return { ...result, content: content as McpCallResult['content'] };
}

/** An error result for problems found before callTool (e.g. the gateway's own arguments). */
export function mcpError(code: string, message: string): McpCallResult {
  return { content: [{ type: 'text', text: `${message} [${code}]` }], structuredContent: { error: { code, message } }, isError: true };
}
