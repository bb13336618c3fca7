/**
 * `opentabs config rotate-secret` after `opentabs setup` for some clients: it names each client
 * config file that holds the old token with the `opentabs setup` that rewrites it, and those
 * commands, run as printed in a shell, give each file the new token.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { cliEnv, removeDir, runCli, tempDir } from './cli-support.ts';

setDefaultTimeout(120_000);

let root: string;
beforeAll(() => {
  root = tempDir('opentabs-journey-s23f-rotate-');
});
afterAll(() => removeDir(root));

const token = (cfg: string) => (JSON.parse(readFileSync(join(cfg, 'client-token.json'), 'utf8')) as { clientToken: string }).clientToken;

test('rotate-secret names the files holding the old token, with the setup for each, runnable as printed', async () => {
  const cfg = join(root, 'cfg');
  const home = join(root, 'home');
  const project = join(root, 'project');
  mkdirSync(home, { recursive: true });
  mkdirSync(project, { recursive: true });
  // A port nothing listens on: no server of any other test answers.
  const env = { HOME: home, PORT: '1' };
  expect((await runCli(['config', 'rotate-secret'], { configDir: cfg, env })).code).toBe(0);
  for (const args of [['setup', 'cursor'], ['setup', 'opencode', '--dir', project]]) {
    expect((await runCli(args, { configDir: cfg, env, cwd: project })).code).toBe(0);
  }
  const old = token(cfg);
  const files = [join(home, '.cursor', 'mcp.json'), join(project, 'opencode.json')];
  for (const f of files) expect(readFileSync(f, 'utf8')).toContain(old);

  const rotated = await runCli(['config', 'rotate-secret'], { configDir: cfg, env, cwd: project });
  expect(rotated.code).toBe(0);
  const said = rotated.stdout + rotated.stderr;
  const fresh = token(cfg);
  expect(fresh).not.toBe(old);
  const commands: string[] = [];
  for (const f of files) {
    const m = new RegExp(`${f.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} \\(\`([^\`]+)\`\\)`).exec(said);
    expect(m).not.toBeNull();
    commands.push(m![1]!);
  }
  expect(commands[0]).toContain(' setup cursor --port 1');
  expect(commands[1]).toContain(` setup opencode --dir ${project} --port 1`);
  for (const cmd of commands) {
    const r = Bun.spawnSync(['sh', '-c', cmd], { cwd: project, env: cliEnv(cfg, { HOME: home }), stdout: 'pipe', stderr: 'pipe' });
    expect({ cmd, code: r.exitCode }).toEqual({ cmd, code: 0 });
  }
  for (const f of files) {
    const text = readFileSync(f, 'utf8');
    expect(text).toContain(fresh);
    expect(text).not.toContain(old);
  }
});
