/**
 * CLI answers a new user meets with no server running: a bad count names the range in words, and
 * `opentabs logs --plugin P` says why the plugin's own log entries are missing.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { removeDir, runCli, tempDir } from './cli-support.ts';

setDefaultTimeout(60_000);

let root: string;
beforeAll(() => {
  root = tempDir('opentabs-ux-s18e-input-');
});
afterAll(() => removeDir(root));

async function freePort(): Promise<number> {
  const probe = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response('') });
  const port = probe.port!;
  probe.stop(true);
  return port;
}

test('logs -n 0 and audit --file --limit 0: a whole number of 1 or more, not 1–9007199254740991', async () => {
  const cfg = join(root, 'counts');
  for (const args of [
    ['logs', '-n', '0'],
    ['audit', '--file', '--limit', '0'],
  ]) {
    const r = await runCli(args, { configDir: cfg });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('expected a whole number of 1 or more');
    expect(r.stderr).not.toContain('9007199254740991');
  }
  // A flag with a real upper bound still names it.
  const limit = await runCli(['audit', '--limit', '0'], { configDir: cfg });
  expect(limit.code).toBe(2);
  expect(limit.stderr).toContain('expected an integer 1–500');
});

test('logs --plugin P with no server running says the plugin log needs the server', async () => {
  const cfg = join(root, 'plugin-logs');
  // A server ran here before: its log is there, the server is not.
  mkdirSync(cfg, { recursive: true });
  writeFileSync(join(cfg, 'server.log'), `${JSON.stringify({ ts: new Date().toISOString(), level: 'info', msg: 'plugin_loaded', plugin: 'slack' })}\n`);
  const port = await freePort();
  const r = await runCli(['logs', '--plugin', 'slack', '--port', String(port)], { configDir: cfg });
  expect(r.code).toBe(0);
  expect(r.stdout).toContain('plugin_loaded');
  expect(r.stderr).toContain(`no OpenTabs server is running on http://127.0.0.1:${port}`);
  expect(r.stderr).toContain('server.log lines about "slack"');
});

test('the stdio bridge on a port another program holds: the reason once, not a command to run to find it', async () => {
  const cfg = join(root, 'bridge-port-taken');
  const other = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response('not here', { status: 404 }) });
  try {
    const r = await runCli(['mcp', '--port', String(other.port)], { configDir: cfg, stdin: '', timeoutMs: 90_000 });
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(`Port ${other.port} is in use by another program`);
    expect(r.stderr).toContain(`Could not start the OpenTabs server on http://127.0.0.1:${other.port} (exit 1): see the error above.`);
    expect(r.stderr).not.toContain('to see why');
  } finally {
    other.stop(true);
  }
});

test('audit with no server running reads the log on disk and says so; with no log either, says how to start the server', async () => {
  const cfg = join(root, 'audit-offline');
  mkdirSync(cfg, { recursive: true });
  const entry = { timestamp: '2026-01-02T03:04:05.000Z', tool: 'browser_list_tabs', plugin: 'browser', success: true, durationMs: 7 };
  writeFileSync(join(cfg, 'audit.log'), `${JSON.stringify(entry)}\n`);
  const port = await freePort();
  const r = await runCli(['audit', '--port', String(port)], { configDir: cfg });
  expect(r.code).toBe(0);
  expect(r.stdout).toContain('2026-01-02T03:04:05.000Z');
  expect(r.stdout).toContain('browser_list_tabs');
  expect(r.stderr).toContain(`no OpenTabs server is running on http://127.0.0.1:${port}: entries from ${join(cfg, 'audit.log')}, as with --file`);

  const none = await runCli(['audit', '--port', String(port)], { configDir: join(root, 'audit-none') });
  expect(none.code).toBe(1);
  expect(none.stderr).toContain(`OpenTabs server is not running on http://127.0.0.1:${port}`);
});
