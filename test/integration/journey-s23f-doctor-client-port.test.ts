/**
 * A user connects clients with `opentabs setup`, then moves the server to another port
 * (`start --port N`, which later starts keep). The client configs still name the old port, so
 * Claude Code says "Failed to connect": `opentabs doctor` names each file with the `opentabs
 * setup` that points it at the running server, and that command, run as printed, clears it. An
 * entry of another config dir (another token) on the old port is not named.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cliEnv, killPid, removeDir, runCli, tempDir } from './cli-support.ts';

setDefaultTimeout(180_000);

type Check = { check: string; status: string; detail: string; fix?: string };

let root: string;
let cfg: string;
let home: string;
let project: string;

function freePort(): number {
  const probe = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response('') });
  const port = probe.port!;
  probe.stop(true);
  return port;
}

beforeAll(() => {
  root = tempDir('opentabs-journey-s23f-port-');
  cfg = join(root, 'cfg');
  home = join(root, 'home');
  project = join(root, 'project');
  mkdirSync(home, { recursive: true });
  mkdirSync(project, { recursive: true });
});
afterAll(async () => {
  await runCli(['stop', '--force'], { configDir: cfg, env: { HOME: home } });
  try {
    const pid = (JSON.parse(readFileSync(join(cfg, 'server.pid'), 'utf8')) as { pid: number }).pid;
    killPid(pid);
  } catch {
    // Stopped.
  }
  removeDir(root);
});

test('client configs left on the old port are named, with the setup that fixes each, run as printed', async () => {
  const env = { HOME: home };
  const first = freePort();
  expect((await runCli(['start', '--background', '--port', String(first)], { configDir: cfg, env, timeoutMs: 120_000 })).code).toBe(0);
  for (const args of [['setup', 'cursor'], ['setup', 'opencode', '--dir', project]]) {
    const r = await runCli(args, { configDir: cfg, env, cwd: project });
    expect({ args, code: r.code }).toEqual({ args, code: 0 });
  }
  // Another config dir's entry on the old port (another token): not this server's business.
  const other = 'ab'.repeat(32);
  mkdirSync(join(home, '.codeium', 'windsurf'), { recursive: true });
  writeFileSync(join(home, '.codeium', 'windsurf', 'mcp_config.json'), JSON.stringify({ mcpServers: { opentabs: { serverUrl: `http://127.0.0.1:${first}/mcp`, headers: { Authorization: `Bearer ${other}` } } } }), { mode: 0o600 });

  const doctor = async () => {
    const r = await runCli(['doctor', '--json'], { configDir: cfg, env, cwd: project });
    return (JSON.parse(r.stdout) as Check[]).filter((c) => c.check === 'client config port');
  };
  // Same port: nothing to say.
  expect(await doctor()).toEqual([]);

  // The server moves (the user's `npm start -- --port N`).
  expect((await runCli(['stop'], { configDir: cfg, env })).code).toBe(0);
  const second = freePort();
  expect((await runCli(['start', '--background', '--port', String(second)], { configDir: cfg, env, timeoutMs: 120_000 })).code).toBe(0);

  const checks = await doctor();
  expect(checks.map((c) => c.detail.split(' ')[0])).toEqual([join(home, '.cursor', 'mcp.json'), join(project, 'opencode.json')]);
  for (const c of checks) {
    expect(c.status).toBe('warn');
    expect(c.detail).toContain(`points a client at port ${first} with this config dir's token, but the server runs on http://127.0.0.1:${second}`);
  }
  // Each fix, run as printed in a shell, with the real config dir.
  for (const c of checks) {
    const cmd = /`([^`]+)`/.exec(c.fix!)![1]!;
    expect(cmd).toContain(' setup ');
    const r = Bun.spawnSync(['sh', '-c', cmd], { cwd: project, env: cliEnv(cfg, { HOME: home, OPENTABS_CONFIG_DIR: undefined, ...(cmd.startsWith('OPENTABS_CONFIG_DIR=') ? {} : { OPENTABS_CONFIG_DIR: cfg }) }), stdout: 'pipe', stderr: 'pipe' });
    expect({ cmd, code: r.exitCode }).toEqual({ cmd, code: 0 });
    expect(r.stderr.toString()).not.toMatch(/^error:/m);
  }
  expect(await doctor()).toEqual([]);
  expect(readFileSync(join(home, '.cursor', 'mcp.json'), 'utf8')).toContain(`http://127.0.0.1:${second}/mcp`);
  expect(readFileSync(join(project, 'opencode.json'), 'utf8')).toContain(`http://127.0.0.1:${second}/mcp`);
  // The other config dir's entry stays as it was.
  expect(readFileSync(join(home, '.codeium', 'windsurf', 'mcp_config.json'), 'utf8')).toContain(`${first}/mcp`);
});
