/** What a built-in tool implementation receives and returns. */
import type { DispatchResult } from '../../server/protocol/methods.ts';

export interface ToolContext {
  /** Aborted when the server sends tool.cancel for this call. */
  signal: AbortSignal;
  /** Snapshot of the extension's own state (extension_get_state). */
  extensionState(): Promise<Record<string, unknown>>;
}

export type ToolHandler = (input: Record<string, any>, ctx: ToolContext) => Promise<DispatchResult>;
export type ToolGroup = Record<string, ToolHandler>;
