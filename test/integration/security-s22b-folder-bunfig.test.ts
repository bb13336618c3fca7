/**
 * `opentabs` runs in whatever folder the user, an MCP client or an agent is in: a cloned
 * repository, or a workspace a prompt-injected agent can write to. Bun reads the bunfig.toml of the
 * folder it runs in (its `preload` runs that folder's code before the CLI) and the folder's .env
 * files (OPENTABS_CONFIG_DIR there points the CLI at a config dir, and so a secret, of the
 * folder's choosing). Neither may be read: not by the npm shim (cli/bin.mjs), not by the commands
 * opentabs starts itself (the background server, the stdio bridge's autostart), not by the command
 * a stdio client's config names, which the client starts in its own folder.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { bunRunArgs, selfSpawnCommand } from '../../server/cli-command.ts';
import { stdioConfig } from '../../cli/mcp-config.ts';
import { ROOT, removeDir, tempDir } from './cli-support.ts';

setDefaultTimeout(60_000);

const REAL_SECRET = 'a'.repeat(64);
const PLANTED_SECRET = 'b'.repeat(64);

let root: string;
let home: string;
let folder: string;
let marker: string;

beforeAll(() => {
  root = tempDir('opentabs-s22b-bunfig-');
  home = join(root, 'home');
  mkdirSync(join(home, '.opentabs', 'extension'), { recursive: true });
  writeFileSync(join(home, '.opentabs', 'extension', 'auth.json'), JSON.stringify({ secret: REAL_SECRET }) + '\n', { mode: 0o600 });
  // The folder's own config dir, with a secret of its choosing.
  const planted = join(root, 'planted-config');
  mkdirSync(join(planted, 'extension'), { recursive: true });
  writeFileSync(join(planted, 'extension', 'auth.json'), JSON.stringify({ secret: PLANTED_SECRET }) + '\n', { mode: 0o600 });
  folder = join(root, 'repo');
  mkdirSync(folder);
  marker = join(root, 'preload-ran');
  writeFileSync(join(folder, 'bunfig.toml'), 'preload = ["./preload.ts"]\n');
  writeFileSync(join(folder, 'preload.ts'), `require('node:fs').writeFileSync(${JSON.stringify(marker)}, 'ran');\n`);
  writeFileSync(join(folder, '.env'), `OPENTABS_CONFIG_DIR=${planted}\n`);
});
afterAll(() => removeDir(root));

/** Runs argv in the planted folder with HOME = the test's home and no OPENTABS_CONFIG_DIR set. */
function runIn(argv: string[]) {
  const env: Record<string, string> = { ...(process.env as Record<string, string>), HOME: home, NO_COLOR: '1' };
  delete env.OPENTABS_CONFIG_DIR;
  const r = Bun.spawnSync(argv, { cwd: folder, env, stdout: 'pipe', stderr: 'pipe', timeout: 45_000 });
  return { code: r.exitCode, stdout: r.stdout.toString(), stderr: r.stderr.toString() };
}

describe('a folder\'s bunfig.toml and .env are not read', () => {
  test('by the npm shim (node cli/bin.mjs)', () => {
    const r = runIn(['node', join(ROOT, 'cli', 'bin.mjs'), 'config', 'secret']);
    expect({ preloadRan: existsSync(marker), stderr: r.stderr }).toEqual({ preloadRan: false, stderr: '' });
    expect(r.stdout).toBe(`${REAL_SECRET}\n`);
    expect(r.code).toBe(0);
  });

  test('by the command opentabs starts itself (background server, stdio bridge autostart)', () => {
    const r = runIn([...selfSpawnCommand(), 'config', 'secret']);
    expect(existsSync(marker)).toBe(false);
    expect(r.stdout).toBe(`${REAL_SECRET}\n`);
  });

  test('by the command a stdio client config names, started in the client\'s folder', () => {
    const server = (stdioConfig(join(home, '.opentabs')) as { mcpServers: { opentabs: { command: string; args: string[] } } }).mcpServers.opentabs;
    expect(server.args.at(-1)).toBe('mcp');
    const r = runIn([server.command, ...server.args.slice(0, -1), 'config', 'secret']);
    expect(existsSync(marker)).toBe(false);
    expect(r.stdout).toBe(`${REAL_SECRET}\n`);
  });

  test('the shim and the CLI pass Bun the same flags', async () => {
    const shim = (await import(join(ROOT, 'cli', 'find-bun.mjs'))) as { bunRunArgs(): string[] };
    expect(shim.bunRunArgs()).toEqual(bunRunArgs());
    expect(existsSync(join(ROOT, 'cli', 'bun-run.toml'))).toBe(true);
  });

  test('the single-file binary is built to read neither', async () => {
    const source = await Bun.file(join(ROOT, 'cli', 'compile.ts')).text();
    expect(source).toContain("'--no-compile-autoload-bunfig', '--no-compile-autoload-dotenv'");
  });
});
