/**
 * Page tools (WebMCP) on the server side, reported by a fake extension the way the real one does
 * (pageTools.update): hostile lists (too many tools per tab and per origin, names that would
 * shadow a plugin or built-in tool, schemas that are not JSON Schema, non-http pages), MCP name
 * rules, removal when the extension goes away, and the per-origin permission set with
 * `opentabs config set pageOrigin.<origin>` against the running server.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { join } from 'node:path';
import { FakeExtension, connectMcp, writeTestConfig, writeTestPlugin } from '../harness/fake-extension.ts';
import { startTestServer, type TestServer } from '../harness/server.ts';
import { waitUntil } from '../harness/browser.ts';
import { removeDir, runCli, tempDir } from './cli-support.ts';
import { PAGE_TOOLS_MAX_PER_ORIGIN, PAGE_TOOLS_MAX_PER_TAB } from '../../server/limits.ts';
import { BROWSER_TOOLS } from '../../server/tools/browser-catalog.ts';
import { PAGE_TOOL_LISTED_NAME_MAX_CHARS, pageResultOriginLine } from '../../server/tools/page-tools.ts';

let root = '';
let cfg = '';
let srv: TestServer;
let ext: FakeExtension;

const tool = (name: string, inputSchema: Record<string, unknown> = { type: 'object', properties: {} }) => ({ name, description: `does ${name}`, inputSchema });

async function update(tabId: number, url: string, tools: unknown[]): Promise<{ refused: { name: string; reason: string }[] }> {
  const m = await ext.request('pageTools.update', { tabId, url, tools });
  if (m.error) throw new Error(JSON.stringify(m.error));
  return m.result as { refused: { name: string; reason: string }[] };
}

const names = () => srv.ctx.catalog.current().tools.filter((t) => t.kind === 'page').map((t) => t.name);

beforeAll(async () => {
  root = tempDir('opentabs-page-tools-');
  cfg = join(root, 'state');
  // A plugin called "tab9" would own tab9_echo, a page tool's name in tab 9: such plugin names are
  // reserved, so discovery refuses it and the name stays the page's.
  const plugin = writeTestPlugin(join(root, 'plugins'), 'tab9', [{ name: 'echo' }]);
  srv = await startTestServer({ configDir: cfg, limits: { adminRate: { max: 10_000, windowMs: 60_000 } } });
  writeTestConfig(cfg, { localPlugins: [plugin] });
  await srv.ctx.config.reload();
  await srv.ctx.plugins.discover();
  srv.ctx.catalog.rebuild();
  ext = await FakeExtension.connect(srv.url, srv.secret);
});

afterAll(async () => {
  await ext?.close().catch(() => {});
  await srv?.stop();
  if (root) removeDir(root);
});

describe('page tool lists from hostile pages', () => {
  test('names follow MCP rules: tab<id>_ prefix, [A-Za-z0-9_-], at most 51 characters (for Cursor), clashes numbered', async () => {
    const long = 'x'.repeat(120);
    const r = await update(3, 'https://a.example/app', [tool('todo.create'), tool('todo create'), tool('ünï'), tool(long)]);
    expect(r.refused).toEqual([]);
    const listed = names();
    expect(listed).toEqual(expect.arrayContaining(['tab3_todo_create', 'tab3_todo_create_2', 'tab3__n_']));
    const longName = listed.find((n) => n.startsWith('tab3_xxx'))!;
    expect(longName.length).toBe(PAGE_TOOL_LISTED_NAME_MAX_CHARS);
    for (const n of listed) expect(n).toMatch(/^[A-Za-z0-9_-]{1,64}$/);
    const entry = srv.ctx.catalog.current().get('tab3_todo_create')!;
    expect(entry.description).toBe('[from https://a.example] does todo.create');
    expect(entry.shortName).toBe('todo.create');
    expect(entry.permission).toBe('ask');
  });

  test('a page cannot shadow a plugin or built-in tool', async () => {
    expect(srv.ctx.plugins.failed().map((f) => f.error)).toEqual([expect.stringContaining('"tab9" is reserved')]);
    const r = await update(9, 'https://b.example/', [tool('echo'), tool('other')]);
    expect(r.refused).toEqual([]);
    expect(srv.ctx.catalog.current().get('tab9_echo')?.kind).toBe('page');
    expect(names()).toContain('tab9_other');
    // A page tool called like a built-in is only ever tab<id>_<that name>.
    await update(10, 'https://b.example/', [tool(BROWSER_TOOLS[0]!.name)]);
    expect(srv.ctx.catalog.current().get(BROWSER_TOOLS[0]!.name)?.kind).toBe('browser');
    expect(names()).toContain(`tab10_${BROWSER_TOOLS[0]!.name}`);
  });

  test('schemas that are not JSON Schema (or not an object) are refused with the reason', async () => {
    const r = await update(11, 'https://c.example/', [
      tool('ok'),
      tool('banana', { type: 'object', properties: { n: { type: 'banana' } } }),
      tool('notObject', { type: 'string' }),
      tool('badRequired', { type: 'object', required: 'x' }),
    ]);
    expect(r.refused.map((x) => x.name).sort()).toEqual(['badRequired', 'banana', 'notObject']);
    expect(r.refused.find((x) => x.name === 'banana')!.reason).toContain('not valid JSON Schema');
    expect(names()).toContain('tab11_ok');
    expect(names()).not.toContain('tab11_banana');
  });

  test(`a tab lists at most ${PAGE_TOOLS_MAX_PER_TAB} tools and an origin at most ${PAGE_TOOLS_MAX_PER_ORIGIN}`, async () => {
    const many = (n: number, p: string) => Array.from({ length: n }, (_, i) => tool(`${p}${i}`));
    const r = await update(20, 'https://flood.example/1', many(PAGE_TOOLS_MAX_PER_TAB + 8, 't'));
    expect(r.refused.length).toBe(8);
    expect(names().filter((n) => n.startsWith('tab20_')).length).toBe(PAGE_TOOLS_MAX_PER_TAB);
    await update(21, 'https://flood.example/2', many(PAGE_TOOLS_MAX_PER_TAB, 'u'));
    const third = await update(22, 'https://flood.example/3', many(5, 'v'));
    expect(third.refused.length).toBe(5);
    expect(third.refused[0]!.reason).toContain('limit per origin');
    expect(names().filter((n) => n.startsWith('tab22_')).length).toBe(0);
    // Another origin is not affected by this one's flood.
    expect((await update(23, 'https://calm.example/', [tool('fine')])).refused).toEqual([]);
  });

  test('non-http pages offer no tools; an empty list removes a tab', async () => {
    const r = await update(30, 'chrome://settings/', [tool('x')]);
    expect(r.refused[0]!.reason).toContain('http and https');
    expect(names().some((n) => n.startsWith('tab30_'))).toBe(false);
    await update(23, 'https://calm.example/', []);
    expect(names()).not.toContain('tab23_fine');
  });

  test('a call to a page tool goes to its tab with plugin page:<origin>, and the page result is returned after a line naming its origin', async () => {
    await srv.ctx.config.setOriginPermission('https://a.example', 'auto');
    srv.ctx.catalog.rebuild();
    ext.onDispatch('page:https://a.example_todo.create', (p) => ({ value: { content: [{ type: 'text', text: `ran in ${p.tabId} for ${p.plugin}` }] } }));
    const res = await fetch(`${srv.url}/tools/tab3_todo_create/call`, { method: 'POST', headers: { Authorization: `Bearer ${srv.secret}`, 'content-type': 'application/json' }, body: JSON.stringify({ arguments: {} }) });
    const body = (await res.json()) as { result: unknown };
    expect(res.status).toBe(200);
    const marked = [{ type: 'text', text: pageResultOriginLine('https://a.example') }, { type: 'text', text: 'ran in 3 for page:https://a.example' }];
    expect(body.result).toEqual({ content: marked });
    // The gateway lists and calls it too.
    const gw = await connectMcp(srv.url, srv.secret, '/mcp/gateway');
    try {
      const listed = (await gw.callTool({ name: 'opentabs_list_tools', arguments: {} })) as { content: { text: string }[] };
      expect(listed.content.map((c) => c.text).join('')).toContain('tab3_todo_create');
      const viaGw = (await gw.callTool({ name: 'opentabs_call', arguments: { tool: 'tab3_todo_create', arguments: {} } })) as { content: { text: string }[] };
      expect(viaGw.content).toEqual(marked as never);
    } finally {
      await gw.close();
    }
    // An explicit other tab is refused, not silently redirected.
    const wrong = await fetch(`${srv.url}/tools/tab3_todo_create/call`, { method: 'POST', headers: { Authorization: `Bearer ${srv.secret}`, 'content-type': 'application/json' }, body: JSON.stringify({ arguments: {}, tabId: 4 }) });
    expect(wrong.status).toBe(400);
  });
});

describe('opentabs config set pageOrigin.<origin>', () => {
  test('sets the permission of an origin on the running server; bad keys are refused', async () => {
    const r = await runCli(['config', 'set', 'pageOrigin.https://B.example:443', 'off'], { configDir: cfg });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('Page tools of https://b.example set to off.');
    expect(srv.ctx.config.get().pageOrigins?.['https://b.example']).toBe('off');
    expect(srv.ctx.catalog.current().get('tab9_other')?.permission).toBe('off');
    const list = await runCli(['tool', 'list', '--json'], { configDir: cfg });
    expect(list.code).toBe(0);
    const listed = JSON.parse(list.stdout) as { name: string; permission: string; description: string }[];
    expect(listed.find((t) => t.name === 'tab9_other')).toMatchObject({ permission: 'off', description: '[from https://b.example] does other' });
    const show = await runCli(['config', 'show'], { configDir: cfg });
    expect(show.stdout).toContain('https://b.example: off');
    const withPath = await runCli(['config', 'set', 'pageOrigin.https://b.example/app', 'auto'], { configDir: cfg });
    expect(withPath.code).toBe(2);
    expect(withPath.stderr).toContain('without a path');
    const ftp = await runCli(['config', 'set', 'pageOrigin.ftp://b.example', 'auto'], { configDir: cfg });
    expect(ftp.code).toBe(2);
    const badPerm = await runCli(['config', 'set', 'pageOrigin.https://b.example', 'always'], { configDir: cfg });
    expect(badPerm.code).toBe(2);
    expect(badPerm.stderr).toContain('expected off, ask or auto');
  }, 60_000);

  test('the extension going away removes every page tool', async () => {
    expect(names().length).toBeGreaterThan(0);
    await ext.close();
    await waitUntil(() => names().length === 0, 'page tools removed after the extension disconnected', 5_000);
  });
});
