/**
 * The MCP client configuration `opentabs start` prints unasked: shown until it has been shown once
 * for the config dir (<config dir>/mcp-config-shown), not only when auth.json does not exist yet —
 * `config rotate-secret` and a server the stdio bridge started both create the secret without
 * showing anything.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { existsSync, mkdirSync, readFileSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { MAIN, ROOT, cliEnv, killPid, removeDir, runCli, tempDir } from './cli-support.ts';

// Every test spawns CLI processes on a shared machine: room, not a speed assertion.
setDefaultTimeout(120_000);

let root: string;
const started: number[] = [];

beforeAll(() => {
  root = tempDir('opentabs-cli-w5-first-run-');
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

test('after `config rotate-secret` on a new config dir, the first start still shows the configuration, once', async () => {
  const cfg = join(root, 'rotated');
  const rotate = await runCli(['config', 'rotate-secret'], { configDir: cfg });
  expect(rotate.code).toBe(0);
  expect(existsSync(join(cfg, 'extension', 'auth.json'))).toBe(true);

  const first = await runCli(['start', '--background', '--port', '0'], { configDir: cfg, timeoutMs: 90_000 });
  expect(first.code).toBe(0);
  started.push(serverPid(cfg));
  expect(first.stdout).toContain('claude mcp add');
  expect(existsSync(join(cfg, 'mcp-config-shown'))).toBe(true);
  expect((await runCli(['stop'], { configDir: cfg })).code).toBe(0);

  const second = await runCli(['start', '--background', '--port', '0'], { configDir: cfg, timeoutMs: 90_000 });
  expect(second.code).toBe(0);
  started.push(serverPid(cfg));
  expect(second.stdout).toContain('started in the background');
  expect(second.stdout).not.toContain('claude mcp add');
  expect((await runCli(['stop'], { configDir: cfg })).code).toBe(0);
});

test('a server the stdio bridge started: the next `opentabs start` shows the configuration, once', async () => {
  const cfg = join(root, 'bridged');
  const port = await freePort();
  const transport = new StdioClientTransport({ command: process.execPath, args: [MAIN, 'mcp', '--port', String(port)], env: cliEnv(cfg), cwd: ROOT, stderr: 'pipe' });
  const client = new Client({ name: 'w5-first-run', version: '1.0.0' });
  try {
    await client.connect(transport);
    started.push(serverPid(cfg));
    expect((await client.listTools()).tools.length).toBeGreaterThan(0);
  } finally {
    await client.close().catch(() => {});
  }
  // The bridge's start printed nothing anyone saw, so nothing is marked as shown.
  expect(existsSync(join(cfg, 'extension', 'auth.json'))).toBe(true);
  expect(existsSync(join(cfg, 'mcp-config-shown'))).toBe(false);

  const first = await runCli(['start', '--port', String(port)], { configDir: cfg });
  expect(first.code).toBe(0);
  expect(first.stdout).toContain('already running');
  const token = (JSON.parse(readFileSync(join(cfg, 'client-token.json'), 'utf8')) as { clientToken: string }).clientToken;
  expect(first.stdout).toContain(`claude mcp add --scope user --transport http opentabs http://127.0.0.1:${port}/mcp --header "Authorization: Bearer ${token}"`);
  expect(existsSync(join(cfg, 'mcp-config-shown'))).toBe(true);

  const second = await runCli(['start', '--port', String(port)], { configDir: cfg });
  expect(second.code).toBe(0);
  expect(second.stdout).toContain('already running');
  expect(second.stdout).not.toContain('claude mcp add');
  expect((await runCli(['stop'], { configDir: cfg })).code).toBe(0);
});

test('a link planted as the marker is not followed: nothing is written where it points', async () => {
  const cfg = join(root, 'planted');
  mkdirSync(cfg, { recursive: true, mode: 0o700 });
  // A dangling link (an existing target already counts as shown and is never written).
  const target = join(root, 'bashrc');
  symlinkSync(target, join(cfg, 'mcp-config-shown'));
  const first = await runCli(['start', '--background', '--port', '0'], { configDir: cfg, timeoutMs: 90_000 });
  expect(first.code).toBe(0);
  started.push(serverPid(cfg));
  expect(first.stdout).toContain('claude mcp add');
  expect(existsSync(target)).toBe(false);
  expect((await runCli(['stop'], { configDir: cfg })).code).toBe(0);
});
