/**
 * The built-in tools as the server lists and validates them: each declaration
 * (server/protocol/browser-tools/) with its valibot input (and output) turned into JSON Schema
 * (json-schema.ts). Plain JSON data only: the start-up bundle (cli/server-bundle.ts) computes this
 * list when it is built and carries the result, so a bundled start neither builds the 69 valibot
 * schemas nor converts them (≈ 4 ms).
 * `risk` marks the tools the side panel flags: they run code, read or change cookies and page
 * storage, or record traffic that can hold private data.
 */
import type { Permission } from '../protocol/methods.ts';
import type { ToolAnnotations } from '../protocol/tool-annotations.ts';
import { BUILTIN_TOOLS, type BuiltinGroup } from '../protocol/browser-tools/index.ts';
import { toJson } from '../protocol/browser-tools/json-schema.ts';

export interface BrowserToolDef {
  /** browser_*, extension_* or plugin_* */
  name: string;
  description: string;
  /** JSON Schema (draft-07 subset Ajv accepts) for the arguments, generated from the declaration. */
  inputSchema: Record<string, unknown>;
  /** JSON Schema of structuredContent, when the declaration has an output schema. */
  outputSchema?: Record<string, unknown>;
  defaultPermission: Permission;
  group: BuiltinGroup;
  annotations: ToolAnnotations;
  /** Why this tool deserves care, shown in the side panel (absent for ordinary tools). */
  risk?: string;
  /** Served by the server itself (no extension round trip). Undefined for tools the extension runs. */
  servedBy?: 'server';
}

export const BROWSER_TOOLS: readonly BrowserToolDef[] = BUILTIN_TOOLS.map((d) => ({
  name: d.name,
  description: d.description,
  inputSchema: toJson(d.input),
  ...('output' in d && d.output ? { outputSchema: toJson(d.output) } : {}),
  defaultPermission: d.defaultPermission,
  group: d.group,
  annotations: d.annotations,
  ...('risk' in d && d.risk ? { risk: d.risk } : {}),
  ...('servedBy' in d && d.servedBy ? { servedBy: d.servedBy } : {}),
}));
