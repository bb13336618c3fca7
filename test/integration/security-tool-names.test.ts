/**
 * An agent that only has the tools tries to reach a tool that is `off`, or one that does not exist,
 * under other spellings: through the gateway's opentabs_call, /mcp and REST; upper case, look-alike
 * Unicode, invisible characters, padding, path tricks, Object.prototype names, and the gateway's own
 * tools nested in opentabs_call. None reaches the extension: tool names are looked up exactly.
 * Extra argument keys (including "__proto__") are refused before anything is dispatched.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { TestServer } from '../harness/server.ts';
import { FakeExtension, connectMcp, startPluginServer } from '../harness/fake-extension.ts';

let srv: TestServer;
let ext: FakeExtension;
let direct: Client;
let gateway: Client;

beforeAll(async () => {
  srv = await startPluginServer({
    plugins: [{ name: 'docs', tools: [{ name: 'get', inputSchema: { type: 'object', properties: { id: { type: 'integer' } }, additionalProperties: false } }, { name: 'wipe' }] }],
    permissions: { docs: { default: 'auto', tools: { wipe: 'off' } }, browser: { tools: { browser_get_cookies: 'off' } } },
  });
  ext = await FakeExtension.connect(srv.url, srv.secret);
  direct = await connectMcp(srv.url, srv.secret, '/mcp');
  gateway = await connectMcp(srv.url, srv.secret, '/mcp/gateway');
});

afterAll(async () => {
  await direct?.close().catch(() => {});
  await gateway?.close().catch(() => {});
  await ext?.close();
  await srv?.stop();
});

const dispatched = () => ext.sent('tool.dispatch').map((m) => (m.params as { tool: string }).tool);

const rest = async (name: string, args: unknown) => {
  const r = await fetch(`${srv.url}/tools/${encodeURIComponent(name)}/call`, { method: 'POST', headers: { ...srv.auth, 'content-type': 'application/json' }, body: JSON.stringify({ arguments: args }) });
  return { status: r.status, body: (await r.json()) as { error?: { code: string; message: string } } };
};
const text = (r: Record<string, unknown>) => ((r.content as { text?: string }[] | undefined) ?? []).map((c) => c.text ?? '').join('\n');

/** The call fails with `code` on every transport and nothing is dispatched. */
async function refusedEverywhere(name: string, args: Record<string, unknown>, code: string, status: number): Promise<void> {
  const before = dispatched().length;
  const r = await rest(name, args);
  expect([name, r.status, r.body.error?.code]).toEqual([name, status, code]);
  for (const res of [await direct.callTool({ name, arguments: args }), await gateway.callTool({ name: 'opentabs_call', arguments: { tool: name, arguments: args } })]) {
    expect([name, res.isError]).toEqual([name, true]);
    expect(text(res)).toContain(code);
  }
  expect(dispatched().length).toBe(before);
}

describe('tools that are off stay off under every name', () => {
  test('the exact names are off on every transport', async () => {
    await refusedEverywhere('docs_wipe', {}, 'permission_off', 403);
    await refusedEverywhere('browser_get_cookies', {}, 'permission_off', 403);
    await refusedEverywhere('browser_execute_script', { tabId: 1, code: '1' }, 'permission_off', 403);
  });

  test('other spellings are unknown tools', async () => {
    const variants = [
      'DOCS_WIPE',
      'Docs_Wipe',
      'docs_wipe ',
      ' docs_wipe',
      'docs_wipe\u0000',
      'docs_wipe\u200b',
      'docs\u200d_wipe',
      'docs_wip\u0435', // Cyrillic е
      'ｄｏｃｓ_ｗｉｐｅ', // fullwidth
      'docs_wipe\u0301',
      'docs.wipe',
      'docs/wipe',
      'docs_wipe/../docs_get',
      '../docs_wipe',
      'BROWSER_EXECUTE_SCRIPT',
      'browser_execute_scrip\u0442',
      'browser_get_cookies\n',
      'wipe',
      '__proto__',
      'constructor',
      'hasOwnProperty',
      'toString',
      'opentabs_call',
      'opentabs_list_tools',
    ];
    for (const name of variants) await refusedEverywhere(name, {}, 'unknown_tool', 404);
  });

  test('opentabs_call nested in opentabs_call is not a way in', async () => {
    const before = dispatched().length;
    const r = await gateway.callTool({ name: 'opentabs_call', arguments: { tool: 'opentabs_call', arguments: { tool: 'docs_wipe', arguments: {} } } });
    expect(r.isError).toBe(true);
    expect(text(r)).toContain('unknown_tool');
    expect(dispatched().length).toBe(before);
  });
});

describe('extra argument keys', () => {
  test('are refused before dispatch, "__proto__" and a tabId for a tool without one included', async () => {
    const before = dispatched().length;
    const bad: [string, string][] = [
      ['docs_get', '{"id":1,"permission":"auto"}'],
      ['docs_get', '{"id":1,"__proto__":{"admin":true}}'],
      ['browser_list_tabs', '{"tabId":1}'],
      ['browser_list_tabs', '{"__proto__":{"x":1}}'],
      ['browser_get_tab_content', '{"tabId":1,"allowFileUrls":true}'],
    ];
    for (const [name, json] of bad) {
      const r = await fetch(`${srv.url}/tools/${name}/call`, { method: 'POST', headers: { ...srv.auth, 'content-type': 'application/json' }, body: `{"arguments":${json}}` });
      expect([name, json, r.status]).toEqual([name, json, 400]);
      expect(((await r.json()) as { error: { code: string } }).error.code).toBe('invalid_arguments');
    }
    expect(dispatched().length).toBe(before);
    expect(({} as Record<string, unknown>).admin).toBeUndefined();
    // The exact call still works.
    const ok = await rest('docs_get', { id: 1 });
    expect(ok.status).toBe(200);
    expect(dispatched()).toContain('get');
  });
});
