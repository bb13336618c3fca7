/**
 * `bunx opentabs start` from the packed package: `npm pack` (prepack builds the extension into the
 * tarball), then run the tarball with `bun x` from an empty folder — start in the background,
 * status, tool list, stop. Dependencies come from the npm registry (or Bun's cache).
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';

// Every test spawns CLI processes on a shared machine: room, not a speed assertion.
setDefaultTimeout(120_000);
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { ROOT, killPid, pidAlive, removeDir, runCli, tempDir } from './cli-support.ts';

let root: string;
let tgz: string;
let cfg: string;
let cwd: string;

beforeAll(() => {
  root = tempDir('opentabs-pack-');
  cfg = join(root, 'state');
  cwd = join(root, 'empty');
  mkdirSync(cwd);
  const r = Bun.spawnSync(['npm', 'pack', '--silent', '--pack-destination', root], { cwd: ROOT, stdout: 'pipe', stderr: 'pipe', timeout: 240_000 });
  if (r.exitCode !== 0) throw new Error(`npm pack failed: ${r.stderr.toString()}`);
  tgz = join(root, r.stdout.toString().trim().split('\n').pop()!);
}, 300_000);

afterAll(async () => {
  try {
    await killPid(JSON.parse(readFileSync(join(cfg, 'server.pid'), 'utf8')).pid);
  } catch {}
  removeDir(root);
  // bunx keeps an install (and a lock file) per package spec, here under the tarball's folder; drop ours.
  const uid = typeof process.getuid === 'function' ? process.getuid() : 0;
  rmSync(join(process.env.BUN_INSTALL_CACHE_DIR ?? join(homedir(), '.bun', 'install', 'cache'), `.bunx-${uid}`, `@${root}`), { recursive: true, force: true });
});

const bunx = (args: string[]) =>
  runCli(args, { configDir: cfg, cwd, exe: [process.execPath, 'x', '--package', tgz, 'opentabs'], timeoutMs: 280_000, env: { BUN_OPTIONS: undefined } });

describe('packed package via bunx', () => {
  test('the tarball carries the CLI, the server and the built extension, not the tests', () => {
    const list = Bun.spawnSync(['tar', '-tzf', tgz], { stdout: 'pipe' }).stdout.toString().split('\n');
    expect(list).toContain('package/cli/bin.mjs');
    expect(list).toContain('package/cli/main.ts');
    expect(list).toContain('package/server/serve.ts');
    expect(list).toContain('package/extension/dist/manifest.json');
    expect(list.some((f) => f.startsWith('package/test/'))).toBe(false);
  });

  test('bunx <tarball> start --background, status, tool list, stop — from an empty folder', async () => {
    const start = await bunx(['start', '--background', '--port', '0']);
    expect(start.code).toBe(0);
    const { pid, port } = JSON.parse(readFileSync(join(cfg, 'server.pid'), 'utf8'));
    expect(start.stdout).toContain(`http://127.0.0.1:${port}`);
    const status = await bunx(['status', '--json']);
    expect(status.code).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({ running: true, status: 'ok' });
    const list = await bunx(['tool', 'list', '--json']);
    expect(list.code).toBe(0);
    expect((JSON.parse(list.stdout) as Array<{ name: string }>).some((t) => t.name === 'browser_list_tabs')).toBe(true);
    expect(readFileSync(join(cfg, 'extension', 'manifest.json'), 'utf8')).toContain('"manifest_version": 3');
    const stop = await bunx(['stop']);
    expect(stop.code).toBe(0);
    expect(pidAlive(pid)).toBe(false);
  }, 600_000);
});
