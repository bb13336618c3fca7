/**
 * MCP tool annotations (https://modelcontextprotocol.io/specification/2025-06-18/server/tools):
 * hints a client shows or acts on (e.g. asking before a destructive tool). Plugin tools declare
 * them with defineTool; built-ins derive them from their catalog entry. Listed only when set, and
 * only the hints that differ from MCP's defaults matter (readOnlyHint false, destructiveHint true,
 * idempotentHint false, openWorldHint true).
 */
export interface ToolAnnotations {
  title?: string;
  /** Changes nothing (then the other hints do not apply). */
  readOnlyHint?: boolean;
  /** May delete or overwrite something (when not read-only). */
  destructiveHint?: boolean;
  /** Calling it again with the same arguments changes nothing more. */
  idempotentHint?: boolean;
  /** Reaches beyond a closed set of things (the web). */
  openWorldHint?: boolean;
}

export const ANNOTATION_HINTS = ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'] as const;
