/**
 * The errors a tool call can end with, each with the HTTP status REST answers and a message that
 * says what happened and what to do. MCP shows the same message in an `isError` result.
 */
import { join } from 'node:path';
import { ERROR_CATEGORIES, OpenTabsError, type ErrorCategory } from '../errors.ts';
import { resolveConfigDir } from '../state/paths.ts';
import { IN_FLIGHT_RETRY_AFTER_MS } from '../limits.ts';
import { RpcErrorCode, type RpcError } from '../protocol/jsonrpc.ts';
import { truncateText } from '../protocol/page-channel.ts';

/**
 * Longest path (JSON pointer) and message an argument error repeats back. Both may quote the
 * caller's own property names, of any length: a 5 MB name must not come back twice in the error,
 * nor be written into the audit log.
 */
export const ARGUMENT_ERROR_PATH_MAX_CHARS = 500;
export const ARGUMENT_ERROR_MESSAGE_MAX_CHARS = 1_000;

/** The HTTP status per code is decided in one place (server/protocol/errors.ts). */
export { STATUS_BY_CODE, statusFor } from '../errors.ts';

export const fail = {
  /** `hint`: what the name probably meant (suggest.ts), "" when nothing fits. */
  unknownTool: (name: string, hint = '') =>
    new OpenTabsError('unknown_tool', `Unknown tool "${name}".${hint} List the available tools (MCP tools/list, or opentabs_list_tools through the gateway; GET /tools; or \`opentabs tool list\`).`, {
      category: 'not_found',
    }),
  permissionOff: (name: string, plugin: string, shortName: string) =>
    new OpenTabsError(
      'permission_off',
      `Tool "${name}" is disabled (permission "off"). Enable it in the OpenTabs side panel, or run ` +
        `\`opentabs config set permission.${name} ask\` (or "auto"), or set ` +
        `permissions.${plugin}.tools.${shortName} in ${join(resolveConfigDir(), 'config.json')} and reload.`,
      { category: 'auth' },
    ),
  invalidArguments: (name: string, path: string, message: string) => {
    const at = truncateText(path || '/', ARGUMENT_ERROR_PATH_MAX_CHARS);
    return new OpenTabsError('invalid_arguments', `Invalid arguments for ${name} at ${at}: ${truncateText(message, ARGUMENT_ERROR_MESSAGE_MAX_CHARS)}. Fix the input and call again.`, {
      category: 'validation',
      path: at,
    });
  },
  brokenSchema: (name: string, message: string) =>
    new OpenTabsError('internal', `Tool "${name}" cannot be called: ${message}. Rebuild or fix the plugin.`, { category: 'internal' }),
  notConnected: () =>
    new OpenTabsError(
      'extension_not_connected',
      'The OpenTabs Chrome extension is not connected. Open Chrome with the extension loaded (see `opentabs status`), then retry.',
      { category: 'internal', retryable: true },
    ),
  disconnected: () =>
    new OpenTabsError('extension_not_connected', 'The OpenTabs extension disconnected while the call was running: it may have taken effect. Retry once it reconnects; for a call that changes something, check its effect first (browser_snapshot, or the plugin\'s read tool) so it does not run twice.', {
      category: 'internal',
      retryable: true,
    }),
  replaced: () =>
    new OpenTabsError(
      'extension_replaced',
      'The extension connection was replaced by a newer one while the call was running: it may have taken effect. Retry the call; for one that changes something, check its effect first so it does not run twice.',
      { category: 'internal', retryable: true },
    ),
  tooManyInFlight: (plugin: string, limit: number) =>
    new OpenTabsError(
      'too_many_in_flight',
      `Plugin "${plugin}" already has ${limit} calls in flight, its limit. Retry in about ${IN_FLIGHT_RETRY_AFTER_MS / 1000} s: ` +
        `a slot frees as soon as one of them finishes (run calls to one plugin one after another rather than all at once).`,
      { category: 'rate_limited', retryable: true, retryAfterMs: IN_FLIGHT_RETRY_AFTER_MS },
    ),
  /** One MCP client holds all but two of a plugin's slots: the others are left to other callers. */
  tooManyInFlightForCaller: (plugin: string, share: number, limit: number) =>
    new OpenTabsError(
      'too_many_in_flight',
      `Plugin "${plugin}" already has ${share} calls in flight from this client, as many as one MCP client may hold of its ${limit} slots: the others are left to other clients and to the user's own calls. ` +
        `Retry in about ${IN_FLIGHT_RETRY_AFTER_MS / 1000} s: a slot frees as soon as one of them finishes (run calls to one plugin one after another rather than all at once).`,
      { category: 'rate_limited', retryable: true, retryAfterMs: IN_FLIGHT_RETRY_AFTER_MS },
    ),
  /** MCP clients together hold all but one of a plugin's slots: the last is left to the user's own calls (REST). */
  tooManyInFlightForMcp: (plugin: string, share: number, limit: number) =>
    new OpenTabsError(
      'too_many_in_flight',
      `Plugin "${plugin}" already has ${share} calls in flight from MCP clients, all but one of its ${limit} slots: the last is left to the user's own calls. ` +
        `Retry in about ${IN_FLIGHT_RETRY_AFTER_MS / 1000} s: a slot frees as soon as one of them finishes (run calls to one plugin one after another rather than all at once).`,
      { category: 'rate_limited', retryable: true, retryAfterMs: IN_FLIGHT_RETRY_AFTER_MS },
    ),
  tooManyBuiltinInFlight: (name: string, limit: number) =>
    new OpenTabsError(
      'too_many_in_flight',
      `${name} was not run: this client already has ${limit} built-in tool calls in flight, its limit. Retry in about ${IN_FLIGHT_RETRY_AFTER_MS / 1000} s: ` +
        'a slot frees as soon as one of them finishes.',
      { category: 'rate_limited', retryable: true, retryAfterMs: IN_FLIGHT_RETRY_AFTER_MS },
    ),
  timeout: (name: string, ms: number) =>
    new OpenTabsError('timeout', `Tool "${name}" timed out after ${Math.round(ms / 1000)} s without progress. The page may be slow or stuck (its main thread busy, or showing a dialog it opened on its own that only the user can close: ask them to), or (a plugin tool) its handler awaits something that never settles; retry or check the tab.`, {
      category: 'timeout',
      retryable: true,
    }),
  cancelled: (name: string, reason: string) =>
    new OpenTabsError('cancelled', `Tool "${name}" was cancelled: ${reason}.`, { category: 'internal' }),
  denied: (name: string) =>
    new OpenTabsError('permission_denied', `The user denied the call to "${name}". Do not retry unless the user asks.`, {
      category: 'auth',
    }),
  approvalTimeout: (name: string, ms: number) =>
    new OpenTabsError(
      'approval_timeout',
      `Approval timed out: nobody approved "${name}" in the OpenTabs side panel within ${Math.round(ms / 1000)} s. Ask the user to approve it, or set the tool to "auto".`,
      { category: 'timeout', retryable: true },
    ),
  shuttingDown: (name: string) =>
    new OpenTabsError(
      'server_shutting_down',
      `The OpenTabs server is shutting down, so "${name}" did not finish (or did not start). Retry once it runs again (\`opentabs start\`).`,
      { category: 'internal', retryable: true },
    ),
  noPluginTab: (name: string) =>
    new OpenTabsError('no_matching_tab', `No tab of the web app "${name}" works in is open; nothing was asked. Open the app in a Chrome tab (and log in), then call it again.`, {
      category: 'not_found',
      retryable: true,
    }),
  internal: (message: string) => new OpenTabsError('internal', message, { category: 'internal' }),
};

const CATEGORIES = new Set<string>(ERROR_CATEGORIES);

/** A JSON-RPC error from the extension (tool.dispatch) as an OpenTabsError. */
export function fromRpcError(err: RpcError, toolName: string): OpenTabsError {
  const data = (typeof err.data === 'object' && err.data !== null ? err.data : {}) as Record<string, unknown>;
  let code = typeof data.code === 'string' ? data.code : err.code === RpcErrorCode.ToolError ? 'tool_error' : 'internal';
  if (err.code === RpcErrorCode.InvalidParams && typeof data.code !== 'string') code = 'invalid_arguments';
  const extra: { category?: ErrorCategory; retryable?: boolean; retryAfterMs?: number } = {};
  if (typeof data.category === 'string' && CATEGORIES.has(data.category)) extra.category = data.category as ErrorCategory;
  if (typeof data.retryable === 'boolean') extra.retryable = data.retryable;
  if (typeof data.retryAfterMs === 'number') extra.retryAfterMs = data.retryAfterMs;
  const message = err.message || `Tool "${toolName}" failed`;
  // The message is the extension's, which passes on a page's or an adapter's words: verbatim.
  return OpenTabsError.verbatim(code, hintFor(code, message, toolName), extra);
}

/** Add the "what to do" part to the extension's errors that lack it. */
function hintFor(code: string, message: string, tool: string): string {
  switch (code) {
    case 'no_matching_tab':
      return /open/i.test(message) ? message : withHint(message, `Open the web app for "${tool}" in a Chrome tab (and log in), then retry.`);
    case 'tab_closed':
      // Most of the extension's tab_closed messages already name the next step: one more would repeat
      // it, or contradict it ("was closed" after "does not exist").
      if (/retry|_list_tabs|list the tools|\bopen a url\b/i.test(message)) return message;
      if (/does not exist|no tab/i.test(message)) return withHint(message, `List the open tabs (${/^(browser|extension)_/.test(tool) ? 'browser_list_tabs' : 'plugin_list_tabs'}) for current ids.`);
      return withHint(message, 'The tab was closed; open it again and retry.');
    case 'adapter_not_ready':
      // The SDK's and the extension's own not-ready messages already say to have the user log in and
      // call again: "wait a moment and retry" after them would have the agent retry instead of ask.
      return /retry|call again/i.test(message) ? message : withHint(message, 'The page is still loading or not logged in; wait a moment and retry.');
    default:
      return message;
  }
}

/** One sentence after another: the message's own final period is not doubled. */
const withHint = (message: string, hint: string): string => `${message.replace(/\.+$/, '')}. ${hint}`;

export function asOpenTabsError(err: unknown): OpenTabsError {
  if (err instanceof OpenTabsError) return err;
  return fail.internal(`Internal error: ${String((err as Error)?.message ?? err)}`);
}
