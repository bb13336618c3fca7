/**
 * Upgrading: a config dir that an earlier version's `opentabs start` used has no
 * mcp-config-shown (that version wrote none; it printed the client configuration on the start
 * that created the secret). The first start after the upgrade must not print it again. A config
 * dir where only the stdio bridge has started a server still gets it, once.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { MAIN, ROOT, cliEnv, killPid, removeDir, runCli, tempDir } from './cli-support.ts';

// Every test spawns CLI processes on a shared machine: room, not a speed assertion.
setDefaultTimeout(180_000);

let root: string;
const started: number[] = [];

beforeAll(() => {
  root = tempDir('opentabs-ux-s18e-upgrade-');
});
afterAll(async () => {
  for (const pid of started) await killPid(pid);
  removeDir(root);
});

function serverPid(cfg: string): number {
  return (JSON.parse(readFileSync(join(cfg, 'server.pid'), 'utf8')) as { pid: number }).pid;
}

async function freePort(): Promise<number> {
  const probe = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response('') });
  const port = probe.port!;
  probe.stop(true);
  return port;
}

test('a config dir from a version without the marker: the configuration is not printed again after the upgrade', async () => {
  const cfg = join(root, 'upgraded');
  const first = await runCli(['start', '--background', '--port', '0'], { configDir: cfg, timeoutMs: 90_000 });
  expect(first.code).toBe(0);
  started.push(serverPid(cfg));
  expect(first.stdout).toContain('claude mcp add');
  expect((await runCli(['stop'], { configDir: cfg })).code).toBe(0);
  // What the earlier version left: the same files, without the marker.
  rmSync(join(cfg, 'mcp-config-shown'));
  expect(existsSync(join(cfg, 'extension', 'server.json'))).toBe(true);

  const upgraded = await runCli(['start', '--background'], { configDir: cfg, timeoutMs: 90_000 });
  expect(upgraded.code).toBe(0);
  started.push(serverPid(cfg));
  expect(upgraded.stdout).toContain('started in the background');
  expect(upgraded.stdout).not.toContain('claude mcp add');
  expect(upgraded.stdout).not.toContain('Connect your AI client');
  expect(existsSync(join(cfg, 'mcp-config-shown'))).toBe(true);
  // --show-config still prints it.
  const shown = await runCli(['start', '--show-config'], { configDir: cfg });
  expect(shown.code).toBe(0);
  expect(shown.stdout).toContain('claude mcp add');
  expect((await runCli(['stop'], { configDir: cfg })).code).toBe(0);
});

test('the stdio bridge as the first thing run with a new config dir: the next start still prints the configuration, once', async () => {
  const cfg = join(root, 'bridge-first');
  const port = await freePort();
  const transport = new StdioClientTransport({ command: process.execPath, args: [MAIN, 'mcp', '--port', String(port)], env: cliEnv(cfg), cwd: ROOT, stderr: 'pipe' });
  const client = new Client({ name: 'ux-s18e-upgrade', version: '1.0.0' });
  try {
    await client.connect(transport);
    started.push(serverPid(cfg));
    expect((await client.listTools()).tools.length).toBeGreaterThan(0);
  } finally {
    await client.close().catch(() => {});
  }
  expect((await runCli(['stop'], { configDir: cfg })).code).toBe(0);
  // A server has run here (server.json), yet nothing was shown: not taken for an earlier version's dir.
  expect(existsSync(join(cfg, 'extension', 'server.json'))).toBe(true);
  expect(existsSync(join(cfg, 'mcp-config-shown'))).toBe(false);

  const first = await runCli(['start', '--background', '--port', String(port)], { configDir: cfg, timeoutMs: 90_000 });
  expect(first.code).toBe(0);
  started.push(serverPid(cfg));
  expect(first.stdout).toContain('claude mcp add');
  expect(existsSync(join(cfg, 'mcp-config-shown'))).toBe(true);
  expect(existsSync(join(cfg, 'mcp-config-pending'))).toBe(false);
  const second = await runCli(['start', '--port', String(port)], { configDir: cfg });
  expect(second.code).toBe(0);
  expect(second.stdout).toContain('already running');
  expect(second.stdout).not.toContain('claude mcp add');
  expect((await runCli(['stop'], { configDir: cfg })).code).toBe(0);
});
