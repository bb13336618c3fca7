/**
 * tools/list carries MCP annotations: every built-in (read-only readers, destructive writers) and
 * plugin tools as their manifest declares them; a malformed annotation refuses the plugin naming
 * the field.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { connectMcp } from '../harness/fake-extension.ts';
import { makeTempConfigDir, startTestServer, type TestServer } from '../harness/server.ts';

let srv: TestServer;
let client: Client;

function plugin(parent: string, name: string, annotations: unknown): string {
  const dir = join(parent, name);
  mkdirSync(join(dir, 'dist'), { recursive: true });
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: `opentabs-plugin-${name}`, version: '1.0.0' }));
  writeFileSync(
    join(dir, 'dist', 'tools.json'),
    JSON.stringify({ name, displayName: name, description: 'd', version: '1.0.0', urlPatterns: ['https://x.example/*'], tools: [{ name: 'go', description: 'Go.', inputSchema: { type: 'object' }, annotations }] }),
  );
  writeFileSync(join(dir, 'dist', 'adapter.js'), '(()=>{})();\n');
  return dir;
}

beforeAll(async () => {
  const dir = makeTempConfigDir('opentabs-annotations-');
  const parent = join(dir, 'local');
  const good = plugin(parent, 'good', { readOnlyHint: true, title: 'Go somewhere' });
  const bad = plugin(parent, 'bad', { readOnlyHint: 'yes' });
  writeFileSync(join(dir, 'config.json'), JSON.stringify({ schemaVersion: 1, localPlugins: [good, bad], permissions: {}, pluginSettings: {} }));
  srv = await startTestServer({ configDir: dir });
  client = await connectMcp(srv.url, srv.secret);
});
afterAll(async () => {
  await client?.close();
  await srv?.stop();
});

test('every built-in carries annotations; readers are read-only, closers destructive', async () => {
  const tools = (await client.listTools()).tools;
  const builtins = tools.filter((t) => /^(browser|extension|plugin)_/.test(t.name));
  expect(builtins.every((t) => t.annotations !== undefined)).toBe(true);
  const by = (n: string) => tools.find((t) => t.name === n)!.annotations;
  expect(by('browser_list_tabs')).toEqual({ readOnlyHint: true });
  expect(by('browser_snapshot')).toEqual({ readOnlyHint: true });
  expect(by('browser_close_tab')).toEqual({ destructiveHint: true, idempotentHint: true });
  expect(by('browser_navigate_tab')).toEqual({ destructiveHint: false, idempotentHint: true });
  expect(by('browser_click_element')).toEqual({ destructiveHint: true });
  // Listed exactly as declared (server/protocol/browser-tools/).
  const { BUILTIN_TOOLS } = await import('../../server/protocol/browser-tools/index.ts');
  for (const d of BUILTIN_TOOLS) expect({ name: d.name, annotations: by(d.name) }).toEqual({ name: d.name, annotations: d.annotations });
});

test("a plugin tool's annotations come from its manifest; a malformed one refuses the plugin naming the field", async () => {
  const tools = (await client.listTools()).tools;
  expect(tools.find((t) => t.name === 'good_go')?.annotations).toEqual({ readOnlyHint: true, title: 'Go somewhere' });
  expect(tools.some((t) => t.name === 'bad_go')).toBe(false);
  const failed = srv.ctx.plugins.failed().find((f) => f.name === 'bad');
  expect(failed?.error).toContain('annotations');
});
