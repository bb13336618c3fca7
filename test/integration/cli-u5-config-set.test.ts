/**
 * `opentabs config set permission.…`: built-in tools are keyed by their full name whatever their
 * prefix (plugin_draft_from_capture is one), a mistyped built-in name is refused with the close
 * names, a plugin nobody added is refused, and a reload the server's
 * admin limit refuses says the change is saved but not yet in effect.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { killPid, removeDir, runCli, tempDir } from './cli-support.ts';

setDefaultTimeout(180_000);

let root: string;
let cfg: string;
let pid = 0;

const permissions = () => (JSON.parse(readFileSync(join(cfg, 'config.json'), 'utf8')) as { permissions: Record<string, { default?: string; tools?: Record<string, string> }> }).permissions;

function freePort(): number {
  const probe = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response('') });
  const p = probe.port!;
  probe.stop(true);
  return p;
}

beforeAll(() => {
  root = tempDir();
  cfg = join(root, 'config');
});

afterAll(async () => {
  if (existsSync(join(cfg, 'server.pid'))) await runCli(['stop'], { configDir: cfg });
  if (pid) await killPid(pid);
  removeDir(root);
});

test('plugin_draft_from_capture is a built-in tool: stored as one, not as tool draft_from_capture of a plugin "plugin"', async () => {
  const r = await runCli(['config', 'set', 'permission.plugin_draft_from_capture', 'auto'], { configDir: cfg });
  expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
  expect(permissions().browser?.tools?.plugin_draft_from_capture).toBe('auto');
  expect(permissions().plugin).toBeUndefined();
});

test('a mistyped built-in tool is refused with the close names; nothing is saved', async () => {
  for (const key of ['permission.browser_lst_tabs', 'permission.browser.browser_lst_tabs']) {
    const r = await runCli(['config', 'set', key, 'auto'], { configDir: cfg });
    expect({ key, code: r.code }).toEqual({ key, code: 2 });
    expect(r.stderr).toContain('there is no built-in tool "browser_lst_tabs"');
    expect(r.stderr).toContain('Did you mean permission.browser_list_tabs?');
  }
  expect(permissions().browser?.tools?.browser_lst_tabs).toBeUndefined();
});

test('a plugin nobody installed or added: refused as a typo, nothing saved', async () => {
  const r = await runCli(['config', 'set', 'permission.my-ap', 'auto'], { configDir: cfg });
  expect(r.code).toBe(2);
  expect(r.stderr).toContain('no plugin named "my-ap" is installed or added.');
  expect(permissions()['my-ap']).toBeUndefined();
});

test('past the admin limit of reloads: the change is saved but said not to be in effect, exit 1', async () => {
  const start = await runCli(['start', '--background', '--port', String(freePort())], { configDir: cfg, timeoutMs: 120_000 });
  expect(start.code).toBe(0);
  pid = (JSON.parse(readFileSync(join(cfg, 'server.pid'), 'utf8')) as { pid: number }).pid;
  let refused: { code: number; stderr: string } | null = null;
  for (let i = 0; i < 15 && !refused; i++) {
    const r = await runCli(['config', 'set', 'mcpSessionsPerMinute', String(10 + i)], { configDir: cfg });
    if (r.code !== 0) refused = { code: r.code, stderr: r.stderr };
  }
  expect(refused).not.toBeNull();
  expect(refused!.code).toBe(1);
  expect(refused!.stderr).toContain(`The change is saved in ${join(cfg, 'config.json')}, but it is not in effect yet`);
  expect(refused!.stderr).toContain('at most 10 reloads a minute');
  expect(refused!.stderr).toContain('Run the same command again in ');
});
