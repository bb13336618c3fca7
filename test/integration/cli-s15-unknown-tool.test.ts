/**
 * A misspelled tool name in `opentabs tool call` / `tool schema` names what was probably meant:
 * the close names, else the tools of the plugin the name starts with, else that no loaded plugin
 * has that name. The server's own unknown_tool message is kept.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestServer, type TestServer } from '../harness/server.ts';
import { writeTestPlugin } from '../harness/fake-extension.ts';
import { removeDir, runCli, tempDir } from './cli-support.ts';
import { suggestTools } from '../../cli/commands/tool.ts';

setDefaultTimeout(120_000);

let root: string;
let cfg: string;
let srv: TestServer;
const cli = (args: string[]) => runCli(args, { configDir: cfg });

beforeAll(async () => {
  root = tempDir();
  cfg = join(root, 'state');
  srv = await startTestServer({ configDir: cfg });
  const schema = { type: 'object', properties: {} };
  const dir = writeTestPlugin(root, 'my-app', [
    { name: 'list_items', description: 'List items', inputSchema: schema },
    { name: 'get_item', description: 'One item', inputSchema: schema },
  ]);
  expect((await cli(['plugin', 'add', dir])).code).toBe(0);
});
afterAll(async () => {
  await srv?.stop();
  removeDir(root);
});

test('a name a letter off: "Did you mean" the tool', async () => {
  const r = await cli(['tool', 'call', 'my-app_list_item']);
  expect(r.code).toBe(1);
  expect(r.stderr).toContain('Unknown tool "my-app_list_item"');
  expect(r.stderr).toContain('Did you mean `my-app_list_items`?');
});

test('a wrong plugin prefix is close too', async () => {
  const r = await cli(['tool', 'call', 'my-ap_list_items']);
  expect(r.stderr).toContain('Did you mean `my-app_list_items`?');
});

test("a tool the plugin does not have: the plugin's tools and the rebuild hint", async () => {
  const r = await cli(['tool', 'call', 'my-app_get_page_info']);
  expect(r.code).toBe(1);
  expect(r.stderr).toContain('Plugin my-app has 2 tools: my-app_list_items, my-app_get_item');
  expect(r.stderr).toContain('plugin build');
});

test('a plugin that is not loaded: says so and lists the loaded ones', async () => {
  const r = await cli(['tool', 'call', 'shop_list_orders']);
  expect(r.stderr).toContain('No loaded plugin is named "shop" (loaded: my-app;');
  expect(r.stderr).toContain('plugin add <folder>');
});

test('a plugin that was added but failed to load (never built): says why and how to build it', async () => {
  const dir = join(root, 'unbuilt');
  mkdirSync(dir);
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'opentabs-plugin-unbuilt', version: '1.0.0' }));
  expect((await cli(['plugin', 'add', dir])).code).toBe(0);
  const r = await cli(['tool', 'call', 'unbuilt_get_page_info']);
  expect(r.code).toBe(1);
  expect(r.stderr).toContain(`Plugin unbuilt failed to load from ${dir}: `);
  expect(r.stderr).toContain('tools.json');
  expect(r.stderr).toContain(`plugin build ${dir}\``);
  // plugin list and status name the folder to build (the loader's hint builds the current folder).
  for (const args of [['plugin', 'list'], ['status']]) {
    const shown = await cli(args);
    expect(shown.stdout).toContain(`→ build it: \``);
    expect(shown.stdout).toContain(` plugin build ${dir}\`, or remove it: \``);
  }
  // The printed remove command runs as printed.
  const remove = /or remove it: `([^`]+)`/.exec((await cli(['plugin', 'list'])).stdout)?.[1];
  expect(remove).toContain('plugin remove unbuilt');
  // Not spawnSync: the server runs in this process and must answer the command's reload.
  const removed = Bun.spawn(['sh', '-c', remove!], { stdout: 'pipe', stderr: 'pipe' });
  const [code, stdout, stderr] = await Promise.all([removed.exited, new Response(removed.stdout).text(), new Response(removed.stderr).text()]);
  expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
  expect(stdout).toContain('The running server unloaded it.');
  expect((await cli(['plugin', 'list'])).stdout).not.toContain('unbuilt');
});

test('tool schema gives the same hint', async () => {
  const r = await cli(['tool', 'schema', 'my-app_list_item']);
  expect(r.code).toBe(1);
  expect(r.stderr).toContain('Did you mean `my-app_list_items`?');
});

test("the tool's name without the plugin prefix", async () => {
  const r = await cli(['tool', 'call', 'get_item']);
  expect(r.stderr).toContain('Did you mean `my-app_get_item`? Plugin tools are named <plugin>_<tool>.');
});

test('tool list --plugin with a wrong plugin name lists the loaded plugins', async () => {
  const r = await cli(['tool', 'list', '--plugin', 'my-ap']);
  expect(r.code).toBe(1);
  expect(r.stderr).toContain('Unknown plugin "my-ap" (loaded: my-app; "browser" for the built-in tools)');
});

test('suggestTools: nothing to say for a built-in-looking name far from every tool', () => {
  expect(suggestTools('browser_teleport', [{ name: 'browser_list_tabs', plugin: 'browser' }])).toBe('');
});
