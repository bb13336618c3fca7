/**
 * `opentabs doctor` on a hand-edited config.json: a file that was not JSON (the server set it
 * aside and ran on defaults, saying so only in server.log; start now warns too) and settings of the wrong kind (ignored
 * by the server) are named, each with a command that runs as printed.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { killPid, removeDir, runCli, tempDir } from './cli-support.ts';

setDefaultTimeout(120_000);

let root: string;
const started: number[] = [];
beforeAll(() => {
  root = tempDir('opentabs-ux-s18e-doctor-cfg-');
});
afterAll(async () => {
  for (const pid of started) await killPid(pid);
  removeDir(root);
});

type Check = { check: string; status: string; detail: string; fix?: string };
async function configChecks(cfg: string): Promise<Check[]> {
  const r = await runCli(['doctor', '--json'], { configDir: cfg });
  return (JSON.parse(r.stdout) as Check[]).filter((c) => c.check === 'config file');
}

test('a config.json that was not JSON: start warns, and doctor names the file it was moved to, with the rm that clears the warning', async () => {
  const cfg = join(root, 'corrupt');
  mkdirSync(cfg, { recursive: true, mode: 0o700 });
  writeFileSync(join(cfg, 'config.json'), '{"mcpSessionsPerMinute": 30,}');
  const start = await runCli(['start', '--background', '--port', '0'], { configDir: cfg, timeoutMs: 90_000 });
  expect(start.code).toBe(0);
  // start says so itself (the server's own line goes only to server.log).
  expect(start.stderr).toContain(`warning: ${join(cfg, 'config.json')} was not valid JSON: it was moved to ${join(cfg, 'config.json.corrupt-')}`);
  started.push((JSON.parse(readFileSync(join(cfg, 'server.pid'), 'utf8')) as { pid: number }).pid);
  expect((await runCli(['stop'], { configDir: cfg })).code).toBe(0);
  const aside = readdirSync(cfg).find((n) => n.startsWith('config.json.corrupt-'));
  expect(aside).toBeDefined();

  const checks = await configChecks(cfg);
  expect(checks.length).toBe(1);
  expect(checks[0]!.status).toBe('warn');
  expect(checks[0]!.detail).toContain(`moved it to ${join(cfg, aside!)}`);
  const rm = /`(rm [^`]+)`/.exec(checks[0]!.fix ?? '')?.[1];
  expect(rm).toBe(`rm ${join(cfg, aside!)}`);
  const run = Bun.spawnSync(['sh', '-c', rm!]);
  expect(run.exitCode).toBe(0);
  expect(existsSync(join(cfg, aside!))).toBe(false);
  expect(await configChecks(cfg)).toEqual([]);
});

test('settings of the wrong kind are named with a config set that runs', async () => {
  const cfg = join(root, 'wrong-kind');
  mkdirSync(cfg, { recursive: true, mode: 0o700 });
  writeFileSync(join(cfg, 'config.json'), JSON.stringify({ mcpSessionsPerMinute: 'lots', skipPermissions: 'yes', uploadFolders: '~/share', allowFileUrls: false }));
  const checks = await configChecks(cfg);
  expect(checks.map((c) => c.detail.split(' ')[0])).toEqual(['skipPermissions', 'mcpSessionsPerMinute', 'uploadFolders']);
  expect(checks[1]!.detail).toContain('is "lots", not a whole number 1–10000: it is ignored');
  for (const c of checks) {
    // The printed command, without the self-command prefix the CLI adds when opentabs is not on PATH.
    const cmd = /config set (\S+) (\S+)`/.exec(c.fix ?? '');
    expect(cmd).not.toBeNull();
    const value = cmd![2] === '""' ? '' : cmd![2]!;
    const set = await runCli(['config', 'set', cmd![1]!, value], { configDir: cfg });
    expect(set.code).toBe(0);
  }
  expect(await configChecks(cfg)).toEqual([]);
});
