/**
 * `opentabs doctor` after `opentabs config rotate-secret`: a client config file still holding the
 * old secret for this server's URL is refused by the server (Claude Code: "Failed to connect",
 * OpenCode: "needs authentication"); doctor names the file and how to update it. An entry with the
 * current secret, or for another port, is not named.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { removeDir, runCli, tempDir } from './cli-support.ts';

setDefaultTimeout(120_000);

let root: string;
beforeAll(() => {
  root = tempDir('opentabs-ux-s18e-stale-client-');
});
afterAll(() => removeDir(root));

type Check = { check: string; status: string; detail: string; fix?: string };
const entry = (port: number, secret: string) => ({ type: 'remote', url: `http://127.0.0.1:${port}/mcp`, headers: { Authorization: `Bearer ${secret}` } });

test('client config files with the old secret are named, each with its fix; setup opencode clears its warning', async () => {
  const cfg = join(root, 'cfg');
  const home = join(root, 'home');
  const project = join(root, 'project');
  mkdirSync(home, { recursive: true });
  mkdirSync(project, { recursive: true });
  const port = 9799;
  const env = { HOME: home };
  expect((await runCli(['config', 'rotate-secret'], { configDir: cfg, env })).code).toBe(0);
  const old = (JSON.parse(readFileSync(join(cfg, 'extension', 'auth.json'), 'utf8')) as { secret: string }).secret;
  expect((await runCli(['config', 'rotate-secret'], { configDir: cfg, env })).code).toBe(0);
  const secret = (JSON.parse(readFileSync(join(cfg, 'extension', 'auth.json'), 'utf8')) as { secret: string }).secret;
  expect(secret).not.toBe(old);

  writeFileSync(join(project, 'opencode.json'), JSON.stringify({ mcp: { opentabs: entry(port, old) } }), { mode: 0o600 });
  writeFileSync(join(home, '.claude.json'), JSON.stringify({ mcpServers: { opentabs: { ...entry(port, old), type: 'http' } } }), { mode: 0o600 });
  // Current secret, and another port's entry: not named.
  mkdirSync(join(home, '.cursor'), { recursive: true });
  writeFileSync(join(home, '.cursor', 'mcp.json'), JSON.stringify({ mcpServers: { opentabs: entry(port, secret), other: entry(port + 1, old) } }), { mode: 0o600 });

  const doctor = async () => {
    const r = await runCli(['doctor', '--json', '--port', String(port)], { configDir: cfg, env, cwd: project });
    return (JSON.parse(r.stdout) as Check[]).filter((c) => c.check === 'client config file');
  };
  const checks = await doctor();
  expect(checks.map((c) => c.detail.split(' ')[0])).toEqual([join(home, '.claude.json'), join(project, 'opencode.json')]);
  for (const c of checks) expect(c.detail).toContain(`points a client at http://127.0.0.1:${port}/mcp with a token that is neither this config dir's client token nor its secret`);
  expect(checks[0]!.fix).toContain(`setup claude-code --port ${port}\``);
  // doctor was given --port: so is the setup it prints.
  expect(checks[1]!.fix).toContain(`setup opencode --dir ${project} --port ${port}\``);

  // The printed fix, run as printed.
  const setup = await runCli(['setup', 'opencode', '--dir', project, '--port', String(port)], { configDir: cfg, env, cwd: project });
  expect(setup.code).toBe(0);
  const token = (JSON.parse(readFileSync(join(cfg, 'client-token.json'), 'utf8')) as { clientToken: string }).clientToken;
  expect(readFileSync(join(project, 'opencode.json'), 'utf8')).toContain(token);
  expect(readFileSync(join(project, 'opencode.json'), 'utf8')).not.toContain(secret);
  expect((await doctor()).map((c) => c.detail.split(' ')[0])).toEqual([join(home, '.claude.json')]);
});
