/**
 * `npm run compile`: the single-file executable, built once here, runs from an empty directory
 * with a fresh config dir — `start --port 0 --background`, `status`, `tool list`, `stop` — and
 * installs the extension it carries inside (byte-identical to extension/dist).
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';

// Every test spawns CLI processes on a shared machine: room, not a speed assertion.
setDefaultTimeout(120_000);
import { copyFileSync, existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { compile } from '../../cli/compile.ts';
import { BUILD_INFO_FILE, EXTENSION_DIST_DIR } from '../../extension/build.ts';
import { killPid, pidAlive, removeDir, runCli, tempDir } from './cli-support.ts';

let root: string;
let exe: string;
let cwd: string;
let cfg: string;

beforeAll(async () => {
  root = tempDir('opentabs-compile-');
  const built = await compile({ outfile: join(root, 'build', 'opentabs') });
  // Run a copy from an otherwise empty folder, far from the repository.
  cwd = join(root, 'empty');
  require('node:fs').mkdirSync(cwd);
  exe = join(cwd, 'opentabs');
  copyFileSync(built, exe);
  require('node:fs').chmodSync(exe, 0o755);
  cfg = join(root, 'state');
}, 300_000);

afterAll(async () => {
  try {
    const pid = JSON.parse(readFileSync(join(cfg, 'server.pid'), 'utf8')).pid;
    await killPid(pid);
  } catch {}
  removeDir(root);
});

const run = (args: string[]) => runCli(args, { configDir: cfg, cwd, exe: [exe], timeoutMs: 90_000, env: { BUN_OPTIONS: undefined } });

describe('compiled binary', () => {
  test('--version and --help work', async () => {
    const v = await run(['--version']);
    expect(v.code).toBe(0);
    expect(v.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
    expect((await run(['tool', '--help'])).stdout).toContain('Usage: opentabs tool');
  });

  test('plugin create/build say they need the package, and leave nothing behind', async () => {
    for (const args of [['plugin', 'create', 'foo'], ['plugin', 'build']]) {
      const r = await run(args);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('the single-file binary does not carry');
      // The package is not on the npm registry: the way that works is the OpenTabs folder's npm link.
      expect(r.stderr).toContain('`npm link` in that folder, which makes it the opentabs command on your PATH');
      expect(r.stderr).toContain(`/cli/bin.mjs ${args.slice(0, 2).join(' ')} …`);
      expect(r.stderr).not.toContain('bunx opentabs');
    }
    expect(existsSync(join(cwd, 'opentabs-plugin-foo'))).toBe(false);
  });

  test('start --background --port 0, status, tool list, stop — from an empty folder', async () => {
    const start = await run(['start', '--background', '--port', '0']);
    expect(start.stderr).toBe('');
    expect(start.code).toBe(0);
    const { pid, port } = JSON.parse(readFileSync(join(cfg, 'server.pid'), 'utf8'));
    expect(pidAlive(pid)).toBe(true);
    expect(start.stdout).toContain(`http://127.0.0.1:${port}`);
    expect(start.stdout).toContain('claude mcp add');

    const status = await run(['status', '--json']);
    expect(status.code).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({ running: true, status: 'ok', url: `http://127.0.0.1:${port}` });

    const list = await run(['tool', 'list', '--json']);
    expect(list.code).toBe(0);
    const tools = JSON.parse(list.stdout) as Array<{ name: string }>;
    expect(tools.some((t) => t.name === 'browser_list_tabs')).toBe(true);

    // The extension came out of the binary: same files as extension/dist, plus server.json.
    const installed = join(cfg, 'extension');
    await (async () => {
      const deadline = Date.now() + 30_000;
      while (Date.now() < deadline && !existsSync(join(installed, 'server.json'))) await Bun.sleep(50);
    })();
    const distFiles = readdirSync(EXTENSION_DIST_DIR, { recursive: true }).map(String).filter((f) => f !== BUILD_INFO_FILE && statSync(join(EXTENSION_DIST_DIR, f)).isFile());
    expect(distFiles).toContain('manifest.json');
    for (const f of distFiles) expect({ f, same: readFileSync(join(installed, f)).equals(readFileSync(join(EXTENSION_DIST_DIR, f))) }).toEqual({ f, same: true });
    expect(JSON.parse(readFileSync(join(installed, 'server.json'), 'utf8'))).toMatchObject({ port });
    expect(existsSync(join(installed, 'auth.json'))).toBe(true);

    const stop = await run(['stop']);
    expect(stop.code).toBe(0);
    expect(pidAlive(pid)).toBe(false);
  });
});
