/**
 * `opentabs plugin create` mistakes: a name in another case or with "_" or spaces gets the name
 * to use, and that name is taken as written; creating into a folder that holds a plugin already
 * says what to do, and the build command it prints runs.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { join } from 'node:path';
import { cliEnv, removeDir, runCli, tempDir } from './cli-support.ts';

setDefaultTimeout(240_000);

let root: string;
let cfg: string;

beforeAll(() => {
  root = tempDir('opentabs-author-s18f-create-');
  cfg = join(root, 'state');
});
afterAll(() => removeDir(root));

test('a name that is not lowercase-hyphenated gets the one to use, which works as written', async () => {
  for (const bad of ['My-App', 'my_app', 'MyApp', 'my app']) {
    const r = await runCli(['plugin', 'create', bad, '--dir', join(root, 'never')], { configDir: cfg });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('Did you mean "my-app"?');
  }
  // Nothing fits: no suggestion.
  expect((await runCli(['plugin', 'create', '___', '--dir', join(root, 'never')], { configDir: cfg })).stderr).not.toContain('Did you mean');
  const r = await runCli(['plugin', 'create', 'my-app', '--url', 'http://127.0.0.1:45021/*'], { configDir: cfg, cwd: root });
  expect(r.code).toBe(0);
});

test('creating again into the same folder says what to do, and the build it prints runs', async () => {
  const again = await runCli(['plugin', 'create', 'my-app'], { configDir: cfg, cwd: root });
  expect(again.code).toBe(1);
  const dir = join(root, 'opentabs-plugin-my-app');
  expect(again.stderr).toContain(`folder ${dir} already exists and is not empty (a plugin created before?)`);
  expect(again.stderr).toContain('or create into another folder with --dir');
  const command = /build that one \(`([^`]+)`\)/.exec(again.stderr)?.[1];
  // With the config dir (not the default here), so the build's reload reaches that server from any shell.
  expect(command).toBe(`cd ${dir} && OPENTABS_CONFIG_DIR=${cfg} npm run build`);
  const proc = Bun.spawn(['sh', '-c', command!], { cwd: root, env: cliEnv(cfg, { OPENTABS_CONFIG_DIR: undefined }), stdout: 'pipe', stderr: 'pipe' });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  expect(`${out}${err}`).toContain('Built plugin "my-app"');
  expect(code).toBe(0);
});

test('plugin remove of a folder that is not added names the folders that are; a scoped package name stays a name', async () => {
  const dir = join(root, 'opentabs-plugin-my-app');
  expect((await runCli(['plugin', 'add', dir], { configDir: cfg })).code).toBe(0);
  const r = await runCli(['plugin', 'remove', join(root, 'elsewhere')], { configDir: cfg });
  expect(r.code).toBe(1);
  expect(r.stderr).toContain(`No local plugin folder ${join(root, 'elsewhere')} is added. Added folders: ${dir}. Plugins by name: my-app.`);
  const scoped = await runCli(['plugin', 'remove', '@acme/opentabs-plugin-gone'], { configDir: cfg });
  expect(scoped.code).toBe(1);
  expect(scoped.stderr).toContain('No plugin named "@acme/opentabs-plugin-gone" is installed or added.');
  const removed = await runCli(['plugin', 'remove', dir], { configDir: cfg });
  expect(removed.code).toBe(0);
  expect(removed.stdout).toContain('Removed plugin "my-app" (local folder');
});

test('with a config dir that is not the default, the Next line run as printed in a shell without it adds the plugin there', async () => {
  const home = join(root, 'home');
  const r = await runCli(['plugin', 'create', 'elsewhere', '--url', 'http://127.0.0.1:45021/*'], { configDir: cfg, cwd: root });
  expect(r.code).toBe(0);
  const next = /^Next: (.*)$/m.exec(r.stdout)?.[1];
  expect(next).toContain(`OPENTABS_CONFIG_DIR=${cfg} npm run build`);
  expect(next).toContain(`OPENTABS_CONFIG_DIR=${cfg} npm run add`);
  // The shell it is pasted into has no OPENTABS_CONFIG_DIR; its default would be this HOME's.
  const proc = Bun.spawn(['sh', '-c', next!], { cwd: root, env: cliEnv(cfg, { OPENTABS_CONFIG_DIR: undefined, HOME: home }), stdout: 'pipe', stderr: 'pipe' });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  expect({ code, out: `${out}${err}`.slice(-2000) }).toMatchObject({ code: 0 });
  const { readFileSync, existsSync } = await import('node:fs');
  expect(JSON.parse(readFileSync(join(cfg, 'config.json'), 'utf8')).localPlugins).toContain(join(root, 'opentabs-plugin-elsewhere'));
  expect(existsSync(join(home, '.opentabs', 'config.json'))).toBe(false);
});
