/**
 * What writes MCP client configs writes the client token, never the secret of auth.json:
 * `opentabs setup <client>`, `opentabs start --show-config`, the OpenCode plugin. `config
 * client-token` prints the token and `config secret` the secret. doctor warns about a client
 * config that holds the secret, with the setup command that puts the token in its place, and
 * that command works as printed.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestServer, type TestServer } from '../harness/server.ts';
import { removeDir, runCli, tempDir } from './cli-support.ts';

setDefaultTimeout(120_000);

let srv: TestServer;
let root: string;
let home: string;

beforeAll(async () => {
  srv = await startTestServer();
  root = tempDir('opentabs-s22i-configs-');
  home = join(root, 'home');
  mkdirSync(home, { recursive: true });
});
afterAll(async () => {
  await srv?.stop();
  removeDir(root);
});

const cli = (args: string[], cwd = root) => runCli(args, { configDir: srv.configDir, cwd, env: { HOME: home } });

test('config client-token prints the token, config secret the secret; the help tells them apart', async () => {
  expect((await cli(['config', 'client-token'])).stdout).toBe(`${srv.clientToken}\n`);
  expect((await cli(['config', 'secret'])).stdout).toBe(`${srv.secret}\n`);
  const help = await cli(['config', 'secret', '--help']);
  expect(help.stdout).toContain('MCP clients get the client token instead');
});

test('setup writes the client token, not the secret; the client it configures reaches MCP with it', async () => {
  const project = join(root, 'setup-project');
  mkdirSync(project, { recursive: true });
  const r = await cli(['setup', 'cursor', '--project', '--dir', project, '--port', String(srv.port)], project);
  expect({ code: r.code, stderr: r.stderr }).toMatchObject({ code: 0 });
  const text = readFileSync(join(project, '.cursor', 'mcp.json'), 'utf8');
  expect(text).toContain(`Bearer ${srv.clientToken}`);
  expect(text).not.toContain(srv.secret);
  const entry = (JSON.parse(text) as { mcpServers: { opentabs: { url: string; headers: Record<string, string> } } }).mcpServers.opentabs;
  const init = await fetch(entry.url, {
    method: 'POST',
    headers: { ...entry.headers, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } }),
  });
  expect(init.status).toBe(200);
  await init.body?.cancel();

  const oc = join(root, 'opencode-project');
  mkdirSync(oc, { recursive: true });
  expect((await cli(['setup', 'opencode', '--dir', oc, '--port', String(srv.port)], oc)).code).toBe(0);
  expect(readFileSync(join(oc, 'opencode.json'), 'utf8')).toContain(`Bearer ${srv.clientToken}`);
  const plugin = readFileSync(join(oc, '.opencode', 'plugin', 'opentabs.ts'), 'utf8');
  expect(plugin).toContain("'client-token.json'");
  expect(plugin).not.toContain('auth.json');
});

test('start --show-config prints the client token in every entry, never the secret', async () => {
  const r = await cli(['start', '--show-config', '--port', String(srv.port)]);
  expect(r.code).toBe(0);
  expect(r.stdout).toContain(`Bearer ${srv.clientToken}`);
  expect(r.stdout + r.stderr).not.toContain(srv.secret);
});

test('doctor warns about a client config holding the secret; its fix, run as printed, puts the token in its place', async () => {
  const project = join(root, 'old-project');
  mkdirSync(join(project, '.vscode'), { recursive: true });
  const file = join(project, '.vscode', 'mcp.json');
  writeFileSync(file, JSON.stringify({ servers: { opentabs: { type: 'http', url: `${srv.url}/mcp`, headers: { Authorization: `Bearer ${srv.secret}` } } } }), { mode: 0o600 });

  type Check = { check: string; status: string; detail: string; fix?: string };
  const doctor = async () => (JSON.parse((await cli(['doctor', '--json', '--port', String(srv.port)], project)).stdout) as Check[]).filter((c) => c.check === 'client config secret');
  const warned = await doctor();
  expect(warned.map((c) => c.detail.split(' ')[0])).toEqual([file]);
  expect(warned[0]!.status).toBe('warn');
  expect(warned[0]!.detail).toContain(join(srv.configDir, 'extension', 'auth.json'));
  expect(warned[0]!.detail).not.toContain(srv.secret);
  const command = /`([^`]+)`/.exec(warned[0]!.fix ?? '')?.[1];
  expect(command).toContain(' setup vscode --project --dir ');

  // As printed, in a shell without OPENTABS_CONFIG_DIR: the real config dir comes with it.
  const env: Record<string, string> = { PATH: process.env.PATH ?? '', HOME: home, NO_COLOR: '1' };
  const run = Bun.spawn(['sh', '-c', command!], { cwd: project, env, stdout: 'pipe', stderr: 'pipe' });
  const [code, stderr] = await Promise.all([run.exited, new Response(run.stderr).text()]);
  expect({ code, stderr: code === 0 ? '' : stderr }).toEqual({ code: 0, stderr: '' });
  const text = readFileSync(file, 'utf8');
  expect(text).toContain(`Bearer ${srv.clientToken}`);
  expect(text).not.toContain(srv.secret);
  expect(await doctor()).toEqual([]);
});
