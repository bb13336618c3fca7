/**
 * A plugin folder is the attacker (a git checkout added with `opentabs plugin add`: git keeps
 * symbolic links). Its files were read through links wherever they led: dist/tools.json linked to
 * /dev/zero held discovery for good, reading until memory ran out, and dist/adapter.js linked to
 * a file of the user's (~/.aws/credentials) had that file copied into the extension's adapters and
 * injected into the plugin's pages. A plugin's files are now loaded only from regular files inside
 * its folder; a link that stays inside the folder is still followed.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { mkdirSync, readdirSync, readFileSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeTestConfig, writeTestPlugin } from '../harness/fake-extension.ts';
import { makeTempConfigDir, removeDir, startTestServer, type TestServer } from '../harness/server.ts';

setDefaultTimeout(120_000);
let root: string;
let srv: TestServer;
const SECRET_LINE = 'aws_secret_access_key = s21b-not-for-the-page';

beforeAll(async () => {
  root = makeTempConfigDir('opentabs-s21b-links-');
  const configDir = join(root, 'config');
  const parent = join(root, 'checkouts');
  const secretFile = join(root, 'credentials');
  writeFileSync(secretFile, `[default]\n${SECRET_LINE}\n`);

  const zero = writeTestPlugin(parent, 'zero', [{ name: 'x' }]);
  removeDir(join(zero, 'dist', 'tools.json'));
  symlinkSync('/dev/zero', join(zero, 'dist', 'tools.json'));

  const creds = writeTestPlugin(parent, 'creds', [{ name: 'x' }]);
  removeDir(join(creds, 'dist', 'adapter.js'));
  symlinkSync(secretFile, join(creds, 'dist', 'adapter.js'));

  const pkg = writeTestPlugin(parent, 'pkg', [{ name: 'x' }]);
  renameSync(join(pkg, 'package.json'), join(root, 'elsewhere.json'));
  symlinkSync(join(root, 'elsewhere.json'), join(pkg, 'package.json'));

  // A link that stays inside the folder (the build's output kept under build/) loads.
  const inside = writeTestPlugin(parent, 'inside', [{ name: 'x' }]);
  mkdirSync(join(inside, 'build'));
  renameSync(join(inside, 'dist', 'adapter.js'), join(inside, 'build', 'adapter.js'));
  symlinkSync(join('..', 'build', 'adapter.js'), join(inside, 'dist', 'adapter.js'));

  writeTestConfig(configDir, { localPlugins: [zero, creds, pkg, inside] });
  srv = await startTestServer({ skipPermissions: false, configDir });
});

afterAll(async () => {
  await srv?.stop();
  removeDir(root);
});

test('discovery ends; links out of a plugin folder are refused, naming the file', () => {
  const failed = srv.ctx.plugins.failed();
  const byFolder = (name: string) => failed.find((f) => f.path.endsWith(`plugin-${name}`))?.error ?? '';
  expect(byFolder('zero')).toContain('dist/tools.json leads outside the plugin folder (to /dev/zero)');
  expect(byFolder('creds')).toContain('dist/adapter.js leads outside the plugin folder');
  expect(byFolder('pkg')).toContain('package.json leads outside the plugin folder');
  expect(srv.ctx.plugins.list().map((p) => p.name)).toEqual(['inside']);
});

test("no file of the user's reaches the extension's adapters", () => {
  const dir = join(srv.ctx.configDir, 'extension', 'adapters');
  let names: string[] = [];
  try {
    names = readdirSync(dir);
  } catch {}
  expect(names.some((n) => n.startsWith('creds-'))).toBe(false);
  for (const n of names) expect(readFileSync(join(dir, n), 'utf8')).not.toContain(SECRET_LINE);
});
