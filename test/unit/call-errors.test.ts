/** server/tools/call-errors.ts: every tool-call error has a status, and the extension's errors keep their code and gain a hint. */
import { describe, expect, test } from 'bun:test';
import { OpenTabsError } from '../../server/errors.ts';
import { RpcErrorCode } from '../../server/protocol/jsonrpc.ts';
import { asOpenTabsError, fail, fromRpcError, statusFor, STATUS_BY_CODE } from '../../server/tools/call-errors.ts';

describe('statusFor', () => {
  test('known codes map to their status; unknown ones are a bad gateway', () => {
    expect(statusFor('invalid_arguments')).toBe(400);
    expect(statusFor('too_many_in_flight')).toBe(429);
    expect(statusFor('extension_not_connected')).toBe(503);
    expect(statusFor('something_new')).toBe(502);
  });
  test('every status is an HTTP error status', () => {
    for (const [code, status] of Object.entries(STATUS_BY_CODE)) {
      expect(status >= 400 && status < 600 ? code : `${code}:${status}`).toBe(code);
    }
  });
});

describe('fail', () => {
  test('unknownTool names the tool and where to list tools', () => {
    const e = fail.unknownTool('nope_tool');
    expect(e.code).toBe('unknown_tool');
    expect(e.status).toBe(404);
    expect(e.message).toContain('"nope_tool"');
    expect(e.message).toContain('tools/list');
  });
  test('permissionOff names the config key that exists', () => {
    const e = fail.permissionOff('kanban_delete_card', 'kanban', 'delete_card');
    expect(e.status).toBe(403);
    expect(e.message).toContain('permission.kanban_delete_card ask');
    expect(e.message).toContain('permissions.kanban.tools.delete_card');
  });
  test('invalidArguments names the path, and "/" for the root', () => {
    expect(fail.invalidArguments('t', '/text', 'expected string').message).toContain('at /text: expected string');
    expect(fail.invalidArguments('t', '', 'expected object').message).toContain('at /: expected object');
  });
});

describe('fromRpcError', () => {
  test("keeps the extension's code, category and retry hints", () => {
    const e = fromRpcError({ code: RpcErrorCode.ToolError, message: 'Tab 5 was closed', data: { code: 'tab_closed', category: 'not_found', retryable: false } }, 'browser_click_element');
    expect(e.code).toBe('tab_closed');
    expect(e.status).toBe(409);
    expect(e.message).toContain('open it again and retry');
    expect(e.extra.category).toBe('not_found');
    expect(e.extra.retryable).toBe(false);
  });
  test('a tool error without a code is tool_error; invalid params without one is invalid_arguments', () => {
    expect(fromRpcError({ code: RpcErrorCode.ToolError, message: 'x' }, 't').code).toBe('tool_error');
    expect(fromRpcError({ code: RpcErrorCode.InvalidParams, message: 'x' }, 't').code).toBe('invalid_arguments');
    expect(fromRpcError({ code: -32603, message: '' }, 'my_tool').message).toBe('Tool "my_tool" failed');
  });
  test('an unknown category from the extension is dropped, not trusted', () => {
    const e = fromRpcError({ code: RpcErrorCode.ToolError, message: 'x', data: { code: 'tool_error', category: 'made_up' } }, 't');
    expect(e.extra.category).toBeUndefined();
  });
  test('a hint is not added twice', () => {
    const m = 'No tab matches; open the app and retry';
    expect(fromRpcError({ code: RpcErrorCode.ToolError, message: m, data: { code: 'no_matching_tab' } }, 't').message).toBe(m);
    // The extension's tab_closed already names the next step; a message ending in a period gets no second one.
    const closed = 'Tab 7 was closed while browser_snapshot ran on it. Call browser_list_tabs for current ids.';
    expect(fromRpcError({ code: RpcErrorCode.ToolError, message: closed, data: { code: 'tab_closed' } }, 't').message).toBe(closed);
    // A tab id that names no tab (`opentabs tool call <tool> --tab-id 99999`): one message, not "does not exist" then "was closed".
    const missing = 'Tab 99999 does not exist (closed?); use plugin_list_tabs to find open tabs';
    expect(fromRpcError({ code: RpcErrorCode.ToolError, message: missing, data: { code: 'tab_closed' } }, 'docs_get').message).toBe(missing);
    const bare = fromRpcError({ code: RpcErrorCode.ToolError, message: 'Tab 99999 does not exist', data: { code: 'tab_closed' } }, 'docs_get').message;
    expect(bare).toBe('Tab 99999 does not exist. List the open tabs (plugin_list_tabs) for current ids.');
    const gone = 'Tab 3 is gone: it closed before showing any page. Open a URL that shows a page, or fetch a file with browser_download';
    expect(fromRpcError({ code: RpcErrorCode.ToolError, message: gone, data: { code: 'tab_closed' } }, 'browser_snapshot').message).toBe(gone);
    const ended = fromRpcError({ code: RpcErrorCode.ToolError, message: 'The page went away.', data: { code: 'adapter_not_ready' } }, 't').message;
    expect(ended).toBe('The page went away. The page is still loading or not logged in; wait a moment and retry.');
  });
});

test('asOpenTabsError passes OpenTabsErrors through and wraps anything else as internal', () => {
  const own = new OpenTabsError('timeout', 'slow');
  expect(asOpenTabsError(own)).toBe(own);
  const wrapped = asOpenTabsError(new Error('kaboom'));
  expect(wrapped.code).toBe('internal');
  expect(wrapped.status).toBe(500);
  expect(wrapped.message).toContain('kaboom');
  expect(asOpenTabsError('plain string').message).toContain('plain string');
});

test('an error\'s HTTP status follows from its code (one table), and no server code writes a status number beside a code', async () => {
  const { STATUS_BY_CODE } = await import('../../server/protocol/errors.ts');
  for (const [code, status] of Object.entries(STATUS_BY_CODE)) expect(new OpenTabsError(code, 'x').status).toBe(status);
  expect(new OpenTabsError('my_tool_code', 'x').status).toBe(502);
  const { readdirSync, readFileSync } = await import('node:fs');
  const { join } = await import('node:path');
  const root = join(import.meta.dir, '../../server');
  const files = readdirSync(root, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts'));
  const offenders: string[] = [];
  for (const f of files) {
    const text = readFileSync(join(root, f), 'utf8');
    for (const m of text.matchAll(/(?:new OpenTabsError|errorResponse)\(\s*(\d{3})\s*,|new OpenTabsError\('[a-z_]+',[^;]*?,\s*(\d{3})\s*[,)]/g)) offenders.push(`${f}: ${m[0].slice(0, 60)}`);
  }
  expect(offenders).toEqual([]);
});
