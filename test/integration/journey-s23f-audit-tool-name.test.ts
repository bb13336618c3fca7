/**
 * `opentabs audit --plugin my-app --tool list_items`: the tool's own name (as a plugin author
 * writes it in defineTool and in `permission.my-app.list_items`) finds the calls of
 * `my-app_list_items`, from the server and from the log on disk, instead of an empty list. A short
 * name without --plugin still matches nothing, and the CLI says --tool takes the full name.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fullToolName } from '../../cli/commands/audit.ts';
import { startPluginServer } from '../harness/fake-extension.ts';
import type { TestServer } from '../harness/server.ts';
import { removeDir, runCli, tempDir } from './cli-support.ts';

setDefaultTimeout(120_000);

const entry = (tool: string, plugin: string, i: number) => JSON.stringify({ timestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(), tool, plugin, success: true, durationMs: 5 });

let root: string;
beforeAll(() => {
  root = tempDir('opentabs-journey-s23f-audit-');
});
afterAll(() => removeDir(root));

test('fullToolName: the plugin prefix is added once, never to built-in or page tools', () => {
  expect(fullToolName('my-app', 'list_items')).toBe('my-app_list_items');
  expect(fullToolName('my-app', 'my-app_list_items')).toBe('my-app_list_items');
  expect(fullToolName(undefined, 'list_items')).toBe('list_items');
  expect(fullToolName('browser', 'extension_get_state')).toBe('extension_get_state');
  expect(fullToolName('page:https://app.example.com', 'tab12_add')).toBe('tab12_add');
  expect(fullToolName('my-app', undefined)).toBeUndefined();
});

test('--plugin P --tool <its own name> reads the log on disk like the full name', async () => {
  const cfg = join(root, 'cfg');
  mkdirSync(cfg, { recursive: true });
  writeFileSync(join(cfg, 'audit.log'), [entry('my-app_list_items', 'my-app', 1), entry('my-app_get_item', 'my-app', 2), entry('browser_list_tabs', 'browser', 3)].join('\n') + '\n', { mode: 0o600 });
  const short = await runCli(['audit', '--file', '--json', '--plugin', 'my-app', '--tool', 'list_items'], { configDir: cfg });
  const full = await runCli(['audit', '--file', '--json', '--plugin', 'my-app', '--tool', 'my-app_list_items'], { configDir: cfg });
  expect(short.code).toBe(0);
  expect((JSON.parse(short.stdout) as { tool: string }[]).map((e) => e.tool)).toEqual(['my-app_list_items']);
  expect(short.stdout).toBe(full.stdout);

  const alone = await runCli(['audit', '--file', '--tool', 'list_items'], { configDir: cfg });
  expect(alone.code).toBe(0);
  expect(alone.stdout).toContain('No tool invocations recorded that match the filters.');
  expect(alone.stderr).toContain('--tool takes the full name');
  expect(alone.stderr).toContain(' tool list` shows it');
});

test('the same from the running server', async () => {
  let srv: TestServer | null = null;
  try {
    srv = await startPluginServer({ plugins: [{ name: 'my-app', tools: [{ name: 'list_items' }, { name: 'get_item' }] }], permissions: { 'my-app': { default: 'auto' } } });
    const port = String(new URL(srv.url).port);
    // No extension is connected: each call fails (503) and is recorded all the same.
    for (const tool of ['my-app_list_items', 'my-app_get_item']) {
      const r = await fetch(`${srv.url}/tools/${tool}/call`, { method: 'POST', headers: { ...srv.auth, 'content-type': 'application/json' }, body: '{"arguments":{}}' });
      await r.body?.cancel();
    }
    const short = await runCli(['audit', '--json', '--plugin', 'my-app', '--tool', 'list_items', '--port', port], { configDir: srv.configDir });
    expect(short.code).toBe(0);
    expect((JSON.parse(short.stdout) as { tool: string }[]).map((e) => e.tool)).toEqual(['my-app_list_items']);
  } finally {
    await srv?.stop();
  }
});
