/**
 * Page tool names as MCP clients list them: `tab<id>_<name>` is at most 51 characters, so that
 * Cursor (which hides a tool whose server name "opentabs" and tool name together reach 60) shows
 * every one, even in a tab whose id has 10 digits. Names cut to the same text stay distinct, and
 * each listed name calls the page's own tool.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { FakeExtension, connectMcp } from '../harness/fake-extension.ts';
import { makeTempConfigDir, removeDir, startTestServer, type TestServer } from '../harness/server.ts';
import { PAGE_TOOL_LISTED_NAME_MAX_CHARS } from '../../server/tools/page-tools.ts';

let cfg = '';
let srv: TestServer;
let ext: FakeExtension;
let mcp: Client;

const tool = (name: string) => ({ name, description: `does ${name}`, inputSchema: { type: 'object', properties: {} } });

async function update(tabId: number, url: string, names: string[]): Promise<{ refused: { name: string; reason: string }[] }> {
  const m = await ext.request('pageTools.update', { tabId, url, tools: names.map(tool) });
  if (m.error) throw new Error(JSON.stringify(m.error));
  return m.result as { refused: { name: string; reason: string }[] };
}

beforeAll(async () => {
  cfg = makeTempConfigDir();
  srv = await startTestServer({ configDir: cfg });
  await srv.ctx.config.setOriginPermission('https://app.example', 'auto');
  ext = await FakeExtension.connect(srv.url, srv.secret);
  // The page's answer names the tool and tab it ran for.
  ext.defaultHandler = (p) => ({ value: { content: [{ type: 'text', text: `${p.tabId} ${p.plugin} ${p.tool}` }] } });
  mcp = await connectMcp(srv.url, srv.secret);
});

afterAll(async () => {
  await mcp?.close().catch(() => {});
  await ext?.close().catch(() => {});
  await srv?.stop();
  if (cfg) removeDir(cfg);
});

test('tab<id>_<name> stays within 51 characters in a 10-digit tab, cut names stay distinct, and each calls its page tool', async () => {
  expect(PAGE_TOOL_LISTED_NAME_MAX_CHARS).toBe(60 - 1 - 'opentabs'.length);
  const tab = 2_147_483_647; // the largest Chrome tab id: 10 digits
  const prefix = `tab${tab}_`;
  const fits = 'a'.repeat(PAGE_TOOL_LISTED_NAME_MAX_CHARS - prefix.length);
  const pageNames = [
    'search_customer_support_tickets_by_status_and_owner',
    'search_customer_support_tickets_by_status_and_team',
    'search.customer.support.tickets.by.status.and.date',
    'x'.repeat(128),
    'x'.repeat(127) + 'y',
    fits,
    `${fits}b`,
    'ping',
  ];
  expect((await update(tab, 'https://app.example/inbox', pageNames)).refused).toEqual([]);
  // A short tab id leaves room: a 45-character name is listed whole.
  const whole = 'list_open_invoices_for_the_current_customer_x';
  expect(whole.length).toBe(45);
  expect((await update(7, 'https://app.example/billing', [whole])).refused).toEqual([]);

  const listed = (await mcp.listTools()).tools.map((t) => t.name);
  const page = listed.filter((n) => n.startsWith(prefix));
  expect(page.length).toBe(pageNames.length);
  expect(new Set(page).size).toBe(page.length);
  for (const n of page) {
    expect(n).toMatch(/^[A-Za-z0-9_-]+$/);
    expect({ n, length: n.length }).toEqual({ n, length: Math.min(n.length, PAGE_TOOL_LISTED_NAME_MAX_CHARS) });
    // Cursor shows it: server name and tool name together under 60 characters.
    expect('opentabs'.length + n.length).toBeLessThan(60);
  }
  expect(page).toContain(`${prefix}ping`);
  expect(page).toContain(prefix + fits);
  expect(listed).toContain(`tab7_${whole}`);
  // Three names share their first 37 characters once sanitised: the 2nd and 3rd are numbered.
  const cut = (prefix + 'search_customer_support_tickets_by_status_and_owner').slice(0, PAGE_TOOL_LISTED_NAME_MAX_CHARS);
  expect(page).toEqual(expect.arrayContaining([cut, cut.slice(0, -2) + '_2', cut.slice(0, -2) + '_3']));

  // Each listed name runs the page's own tool in its tab, through MCP.
  const ran: string[] = [];
  for (const n of page) {
    const r = (await mcp.callTool({ name: n, arguments: {} })) as { content: { type: string; text: string }[]; isError?: boolean };
    expect({ n, isError: r.isError ?? false }).toEqual({ n, isError: false });
    ran.push(r.content[1]!.text);
  }
  expect(ran.sort()).toEqual(pageNames.map((p) => `${tab} page:https://app.example ${p}`).sort());
  const short = (await mcp.callTool({ name: `tab7_${whole}`, arguments: {} })) as { content: { text: string }[] };
  expect(short.content[1]!.text).toBe(`7 page:https://app.example ${whole}`);
});
