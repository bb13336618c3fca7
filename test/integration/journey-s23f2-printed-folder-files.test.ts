/**
 * A command opentabs prints for itself (opentabs not on PATH) is run as printed in whatever folder
 * the reader is in: a cloned repository, an agent's workspace. That folder's .env must not point
 * it at another config dir, and its bunfig.toml `preload` must not run first. Both forms are run:
 * Node with the npm shim (Node on PATH) and Bun with its flags (no Node).
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { ROOT, removeDir, runCli, tempDir } from './cli-support.ts';

setDefaultTimeout(120_000);

const REAL_TOKEN = 'c'.repeat(64);
const PLANTED_TOKEN = 'd'.repeat(64);

/** PATH without any folder that holds an `opentabs` executable. */
const PATH_WITHOUT_OPENTABS = (process.env.PATH ?? '')
  .split(delimiter)
  .filter((d) => d && Bun.which('opentabs', { PATH: d }) === null)
  .join(delimiter);

let root: string;
let home: string;
let folder: string;
let marker: string;

beforeAll(() => {
  root = tempDir('opentabs-s23f2-folder-');
  home = join(root, 'home');
  mkdirSync(join(home, '.opentabs'), { recursive: true });
  writeFileSync(join(home, '.opentabs', 'client-token.json'), JSON.stringify({ clientToken: REAL_TOKEN }) + '\n', { mode: 0o600 });
  const planted = join(root, 'planted-config');
  mkdirSync(planted);
  writeFileSync(join(planted, 'client-token.json'), JSON.stringify({ clientToken: PLANTED_TOKEN }) + '\n', { mode: 0o600 });
  folder = join(root, 'cloned-repo');
  mkdirSync(folder);
  marker = join(root, 'preload-ran');
  writeFileSync(join(folder, 'bunfig.toml'), 'preload = ["./preload.ts"]\n');
  writeFileSync(join(folder, 'preload.ts'), `require('node:fs').writeFileSync(${JSON.stringify(marker)}, 'ran');\n`);
  writeFileSync(join(folder, '.env'), `OPENTABS_CONFIG_DIR=${planted}\n`);
});
afterAll(() => removeDir(root));

/** The command `opentabs config show` prints for the client token, with the default config dir (so no OPENTABS_CONFIG_DIR= in it). */
async function printedClientTokenCommand(path: string): Promise<string> {
  const r = await runCli(['config', 'show'], { configDir: '', env: { OPENTABS_CONFIG_DIR: undefined, HOME: home, PATH: path } });
  expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
  const cmd = /what MCP clients get: `([^`]+)`/.exec(r.stdout)?.[1];
  expect(cmd).toBeDefined();
  expect(cmd!.endsWith(' config client-token')).toBe(true);
  expect(cmd).not.toContain('OPENTABS_CONFIG_DIR');
  return cmd!;
}

/** Runs a printed line in a shell in the planted folder, as a user pastes it. */
function runInFolder(line: string, path: string) {
  const r = Bun.spawnSync(['sh', '-c', line], { cwd: folder, env: { PATH: path, HOME: home, NO_COLOR: '1' }, stdout: 'pipe', stderr: 'pipe', timeout: 60_000 });
  return { code: r.exitCode, stdout: r.stdout.toString(), stderr: r.stderr.toString() };
}

test.skipIf(Bun.which('node', { PATH: PATH_WITHOUT_OPENTABS }) === null)('with Node on PATH, the printed command is the npm shim and reads neither the folder\'s .env nor its bunfig.toml', async () => {
  const cmd = await printedClientTokenCommand(PATH_WITHOUT_OPENTABS);
  const r = runInFolder(cmd, PATH_WITHOUT_OPENTABS);
  expect({ preloadRan: existsSync(marker), code: r.code, stdout: r.stdout, stderr: r.stderr }).toEqual({ preloadRan: false, code: 0, stdout: `${REAL_TOKEN}\n`, stderr: '' });
  expect(cmd.split(' ').slice(0, 2)).toEqual([Bun.which('node', { PATH: PATH_WITHOUT_OPENTABS })!, join(ROOT, 'cli', 'bin.mjs')]);
});

test('with no Node, the printed command is Bun told to read neither', async () => {
  // Only a folder with no `node` in it: the CLI prints the Bun form.
  const noNode = join(root, 'empty-bin');
  mkdirSync(noNode, { recursive: true });
  const cmd = await printedClientTokenCommand(noNode);
  const r = runInFolder(cmd, `${noNode}${delimiter}/usr/bin${delimiter}/bin`);
  expect({ preloadRan: existsSync(marker), code: r.code, stdout: r.stdout, stderr: r.stderr }).toEqual({ preloadRan: false, code: 0, stdout: `${REAL_TOKEN}\n`, stderr: '' });
  expect(cmd).toContain('--no-env-file');
});
