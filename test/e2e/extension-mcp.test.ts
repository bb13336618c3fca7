/**
 * An MCP client against the real server and the real extension: tool listing, a built-in tool's
 * structured result, and a plugin call whose progress and log lines travel page → bridge →
 * service worker → server → the calling MCP session.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { startBrowserHarness, waitUntil, type BrowserHarness } from '../harness/browser.ts';
import { writeFixturePlugin } from '../fixtures/ext-plugin/plugin.ts';
import { connectMcp } from '../harness/fake-extension.ts';
import { BROWSER_TOOLS } from '../../server/tools/browser-catalog.ts';

let h: BrowserHarness;
let pluginParent = '';
let mcp: Client;
const logs: { level: string; logger?: string; data: unknown }[] = [];

beforeAll(async () => {
  pluginParent = mkdtempSync(join(tmpdir(), 'opentabs-mcp-ext-'));
  h = await startBrowserHarness({ localPlugins: [writeFixturePlugin(pluginParent)], permissions: { fixture: { default: 'auto' } } });
  const app = await h.context.newPage();
  await app.goto(h.fixtureUrl('/pages/plugin-app.html'));
  await h.waitForHealth((x) => x.pluginDetails?.find((p: any) => p.name === 'fixture')?.tabState === 'ready', 'fixture tab ready');
  mcp = await connectMcp(h.url, h.srv.secret);
  await mcp.setLoggingLevel('debug');
  mcp.setNotificationHandler(LoggingMessageNotificationSchema, async (n) => {
    logs.push({ level: n.params.level, logger: n.params.logger, data: n.params.data });
  });
}, 60_000);

afterAll(async () => {
  await mcp?.close().catch(() => {});
  await h?.stop();
  if (pluginParent) rmSync(pluginParent, { recursive: true, force: true });
});

type CallResult = { isError?: boolean; structuredContent?: any; content: { type: string; text?: string }[] };

describe('MCP through the real extension', () => {
  test('tools/list has the built-in tools and the plugin tools', async () => {
    const { tools } = await mcp.listTools();
    const names = tools.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining([...BROWSER_TOOLS.map((t) => t.name), 'fixture_echo', 'fixture_wait', 'fixture_fail']));
  });

  test('a built-in tool returns structured content from Chromium', async () => {
    const r = (await mcp.callTool({ name: 'browser_list_tabs', arguments: {} })) as CallResult;
    expect(r.isError).toBeFalsy();
    const tabs = r.structuredContent?.tabs ?? JSON.parse(r.content[0].text!).tabs;
    expect(tabs.some((t: { url: string }) => t.url.endsWith('/pages/plugin-app.html'))).toBe(true);
  });

  test('declared output schemas are listed, and real results and errors pass the SDK client\'s check against them', async () => {
    const { tools } = await mcp.listTools();
    const listTabs = tools.find((t) => t.name === 'browser_list_tabs')!;
    expect(listTabs.outputSchema?.properties).toHaveProperty('tabs');
    expect(tools.find((t) => t.name === 'browser_get_tab_info')?.outputSchema?.properties).toHaveProperty('favIconUrl');
    // The SDK client validates structuredContent against outputSchema and throws on a mismatch.
    const list = (await mcp.callTool({ name: 'browser_list_tabs', arguments: {} })) as CallResult;
    const tabId = list.structuredContent.tabs[0].id;
    const info = (await mcp.callTool({ name: 'browser_get_tab_info', arguments: { tabId } })) as CallResult;
    expect(info.isError).toBeFalsy();
    expect(info.structuredContent.id).toBe(tabId);
    const gone = (await mcp.callTool({ name: 'browser_get_tab_info', arguments: { tabId: 987654 } })) as CallResult;
    expect(gone.isError).toBe(true);
    expect(gone.content[0]!.text).toContain('tab_closed');
  });

  test('plugin progress and logs reach the calling session', async () => {
    const progress: { progress: number; total?: number; message?: string }[] = [];
    const r = (await mcp.callTool({ name: 'fixture_wait', arguments: { ms: 50 } }, undefined, { onprogress: (p) => void progress.push(p) })) as CallResult;
    expect(r.isError).toBeFalsy();
    expect(progress[0]).toMatchObject({ progress: 0, total: 1, message: 'waiting' });
    const echo = (await mcp.callTool({ name: 'fixture_echo', arguments: { text: 'log me' } })) as CallResult;
    expect(echo.isError).toBeFalsy();
    const line = await waitUntil(() => logs.find((l) => JSON.stringify(l.data).includes('echo called')), 'the adapter log line as notifications/message');
    expect(line.level).toBe('info');
  });

  test('a plugin error is an MCP tool error naming the problem', async () => {
    const r = (await mcp.callTool({ name: 'fixture_fail', arguments: {} })) as CallResult;
    expect(r.isError).toBe(true);
    expect(r.content.map((c) => c.text ?? '').join(' ')).toContain('The fixture app said no');
  });
});
