/**
 * `opentabs doctor` warns about an MCP client config file (those the printed configuration names:
 * ~/.claude.json, opencode.json in the current folder, ~/.codex/config.toml, …) that holds the
 * bearer secret and that other users can read, naming the file and `chmod 600 <path>`. Files
 * without the secret, or readable by the owner only, are not mentioned.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { removeDir, runCli, tempDir } from './cli-support.ts';

// Each run is a CLI process on a shared machine: room, not a speed assertion.
setDefaultTimeout(120_000);

const SECRET = 'b'.repeat(64);
let root: string;
let home: string;
let project: string;
let cfg: string;
let freePort = 0;

beforeAll(() => {
  root = tempDir('opentabs-cli-w5-doctor-');
  home = join(root, 'home');
  project = join(root, 'project with space');
  cfg = join(root, 'state');
  mkdirSync(join(cfg, 'extension'), { recursive: true, mode: 0o700 });
  chmodSync(cfg, 0o700);
  writeFileSync(join(cfg, 'extension', 'auth.json'), JSON.stringify({ secret: SECRET }), { mode: 0o600 });
  mkdirSync(join(home, '.codex'), { recursive: true });
  mkdirSync(join(home, '.gemini'), { recursive: true });
  mkdirSync(join(project, '.vscode'), { recursive: true });
  const s = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response('') });
  freePort = s.port!;
  s.stop(true);
});
afterAll(() => removeDir(root));

function write(path: string, text: string, mode: number): void {
  writeFileSync(path, text);
  chmodSync(path, mode);
}

const doctor = (json: boolean) =>
  runCli(['doctor', ...(json ? ['--json'] : []), '--port', String(freePort)], { configDir: cfg, cwd: project, env: { HOME: home } });

test('client config files holding the secret and readable by others are named with their chmod fix', async () => {
  const claude = join(home, '.claude.json');
  const codex = join(home, '.codex', 'config.toml');
  const opencode = join(project, 'opencode.json');
  write(claude, JSON.stringify({ mcpServers: { opentabs: { type: 'http', url: 'http://127.0.0.1:9515/mcp', headers: { Authorization: `Bearer ${SECRET}` } } } }), 0o644);
  write(codex, `[mcp_servers.opentabs]\nurl = "http://127.0.0.1:9515/mcp"\nhttp_headers = { Authorization = "Bearer ${SECRET}" }\n`, 0o640);
  write(opencode, JSON.stringify({ mcp: { opentabs: { type: 'remote', headers: { Authorization: `Bearer ${SECRET}` } } } }), 0o604);
  // Readable by others but without the secret; with the secret but private: neither is a problem.
  write(join(home, '.gemini', 'settings.json'), JSON.stringify({ theme: 'dark' }), 0o644);
  write(join(project, '.vscode', 'mcp.json'), JSON.stringify({ servers: { opentabs: { headers: { Authorization: `Bearer ${SECRET}` } } } }), 0o600);

  const j = JSON.parse((await doctor(true)).stdout) as Array<{ check: string; status: string; detail: string; fix?: string }>;
  const warned = j.filter((c) => c.check === 'client config file');
  expect(warned.map((c) => c.status)).toEqual(['warn', 'warn', 'warn']);
  expect(warned.map((c) => c.fix)).toEqual([`chmod 600 ${claude}`, `chmod 600 '${opencode}'`, `chmod 600 ${codex}`]);
  expect(warned[0]!.detail).toBe(`${claude} holds the OpenTabs secret and is readable by other users (mode 0644)`);
  expect(warned[2]!.detail).toContain('(mode 0640)');
  for (const c of j) expect(c.detail).not.toContain(SECRET);

  const text = await doctor(false);
  expect(text.stdout).toContain(`! client config file: ${claude} holds the OpenTabs secret`);
  expect(text.stdout).toContain(`fix: chmod 600 ${claude}`);
  expect(text.stdout).not.toContain(SECRET);

  // After the fixes nothing is mentioned.
  for (const p of [claude, codex, opencode]) chmodSync(p, 0o600);
  const fixed = JSON.parse((await doctor(true)).stdout) as Array<{ check: string }>;
  expect(fixed.filter((c) => c.check === 'client config file')).toEqual([]);
});
