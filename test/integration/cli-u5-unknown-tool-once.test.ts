/**
 * `opentabs tool call` with an unknown name against a server run as its own process with a config
 * dir of its own: the server's message already carries the hint (its commands written with
 * OPENTABS_CONFIG_DIR), and the CLI does not print that hint a second time.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { killPid, removeDir, runCli, tempDir } from './cli-support.ts';

setDefaultTimeout(180_000);

let root: string;
let cfg: string;
let pid = 0;

function freePort(): number {
  const probe = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response('') });
  const p = probe.port!;
  probe.stop(true);
  return p;
}

const count = (text: string, part: string) => text.split(part).length - 1;

beforeAll(async () => {
  root = tempDir();
  cfg = join(root, 'config');
  const start = await runCli(['start', '--background', '--port', String(freePort())], { configDir: cfg, timeoutMs: 120_000 });
  expect(start.code).toBe(0);
  pid = (JSON.parse(readFileSync(join(cfg, 'server.pid'), 'utf8')) as { pid: number }).pid;
});

afterAll(async () => {
  if (existsSync(join(cfg, 'server.pid'))) await runCli(['stop'], { configDir: cfg });
  if (pid) await killPid(pid);
  removeDir(root);
});

test('a plugin that is not loaded: the hint once, with runnable commands', async () => {
  const r = await runCli(['tool', 'call', 'shop_list_orders'], { configDir: cfg });
  expect(r.code).toBe(1);
  expect(r.stderr).toContain('Unknown tool "shop_list_orders"');
  expect(count(r.stderr, 'No loaded plugin is named "shop"')).toBe(1);
  expect(count(r.stderr, 'A plugin you wrote loads once built and added')).toBe(1);
  expect(r.stderr).toContain(`OPENTABS_CONFIG_DIR=${cfg} `);
});

test('a name a letter off: "Did you mean" once', async () => {
  const r = await runCli(['tool', 'call', 'browser_list_tab'], { configDir: cfg });
  expect(r.code).toBe(1);
  expect(count(r.stderr, 'Did you mean `browser_list_tabs`?')).toBe(1);
});
