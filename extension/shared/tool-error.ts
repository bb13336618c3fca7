/**
 * A tool failure as the extension reports it: a JSON-RPC error -32000 whose data is
 * ToolErrorData (server/protocol/methods.ts) and whose message is human text. The class is the
 * one every part uses (server/protocol/tool-error.ts).
 */
import { ToolError } from '../../server/protocol/tool-error.ts';

export { ToolError };

/** Any thrown value as a ToolError (Chrome API errors become internal errors). */
export function toToolError(err: unknown): ToolError {
  if (err instanceof ToolError) return err;
  const message = err instanceof Error ? err.message : String(err);
  if (/No tab with id/i.test(message)) return new ToolError(`${message} (the tab was closed; list tabs again)`, { code: 'tab_closed', category: 'not_found' });
  return new ToolError(message, { code: 'internal', category: 'internal' });
}
