/**
 * Running one built-in tool for a tool.dispatch (or for the side panel's Record): the URL policy
 * guard first, then the handler with the call's signal and a progress reporter. The signal is
 * aborted by tool.cancel, the side panel's Stop, or the server's timeout; handlers that wait (in
 * the worker or in the page) stop when it fires.
 */
import type { DispatchResult } from '../../server/protocol/methods.ts';
import { ToolError } from '../shared/tool-error.ts';
import { TOOL_HANDLERS } from './index.ts';
import type { ToolCtx, ToolEnv } from './types.ts';
import { guardBuiltinCall } from './url-policy.ts';
import { getTab } from './tabs.ts';

/** Abort controllers of the built-in calls running now, by dispatch id. */
const running = new Map<string, AbortController>();

export function isBuiltinTool(name: string): boolean {
  return Object.hasOwn(TOOL_HANDLERS, name);
}

export async function runBuiltin(
  call: { dispatchId: string; tool: string; input: Record<string, unknown>; tabId?: number },
  env: ToolEnv,
): Promise<DispatchResult> {
  if (!isBuiltinTool(call.tool)) {
    throw new ToolError(`This extension version does not implement ${call.tool}; update the extension`, { code: 'unknown_tool', category: 'not_found' });
  }
  const handler = TOOL_HANDLERS[call.tool as keyof typeof TOOL_HANDLERS] as (input: Record<string, unknown>, ctx: ToolCtx) => Promise<DispatchResult>;
  // Every built-in call: its url argument and the page of its tab must be allowed (url-policy.ts).
  const checked = await guardBuiltinCall(call.tool, call.input, call.tabId);
  const controller = new AbortController();
  running.set(call.dispatchId, controller);
  const ctx: ToolCtx = {
    ...env,
    signal: controller.signal,
    progress: (p) => {
      if (!controller.signal.aborted) env.conn.notify('tool.progress', { dispatchId: call.dispatchId, ...p });
    },
    tab: (tabId) => {
      const tab = typeof tabId === 'number' ? checked.get(tabId) : undefined;
      return tab ? Promise.resolve(tab) : getTab(tabId);
    },
  };
  try {
    return await handler(call.input, ctx);
  } finally {
    running.delete(call.dispatchId);
  }
}

/** Abort a running built-in call; false when none runs under that id. */
export function cancelBuiltin(dispatchId: string, reason: string): boolean {
  const c = running.get(dispatchId);
  if (!c) return false;
  c.abort(new ToolError(`Cancelled: ${reason}`, { code: 'cancelled' }));
  return true;
}
