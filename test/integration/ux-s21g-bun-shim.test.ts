/**
 * `npm install -g opentabs` runs this package's install step before the `bun` dependency's, and
 * `--ignore-scripts` runs neither: until bun's own step has run, its bin/bun.exe is a stand-in
 * script that only says so and exits 1. The npm shim (cli/bin.mjs) and the install step that
 * builds the start-up bundle (cli/postinstall.mjs) then use the Bun binary of the platform package
 * (@oven/bun-<os>-<arch>), which npm has already unpacked. Run with Node in a package layout made
 * here: the stand-in script, the platform package (a link to the Bun running this test), and
 * stand-ins for cli/main.ts and cli/server-bundle.ts that report which Bun ran them.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, removeDir, tempDir } from './cli-support.ts';

setDefaultTimeout(60_000);

/** What the `bun` package's bin/bun.exe is until its install step has run (its own words, shortened). */
const STAND_IN = `echo "Error: Bun's postinstall script was not run." >&2\nexit 1\n`;

let root: string;
let pkg: string;
let platformBin: string;

beforeAll(() => {
  root = tempDir('opentabs-ux-s21g-bun-');
  pkg = join(root, 'lib', 'node_modules', 'opentabs');
  const cli = join(pkg, 'cli');
  mkdirSync(cli, { recursive: true });
  for (const f of ['bin.mjs', 'find-bun.mjs', 'postinstall.mjs', 'bun-run.toml']) copyFileSync(join(ROOT, 'cli', f), join(cli, f));
  writeFileSync(join(cli, 'main.ts'), `console.log(JSON.stringify({ ranBy: process.execPath, args: process.argv.slice(2) }));\n`);
  writeFileSync(join(cli, 'server-bundle.ts'), `require('node:fs').writeFileSync(${JSON.stringify(join(root, 'bundle-built'))}, process.execPath);\n`);
  writeFileSync(join(pkg, 'package.json'), JSON.stringify({ name: 'opentabs', type: 'module', bin: { opentabs: 'cli/bin.mjs' } }));
  const bun = join(pkg, 'node_modules', 'bun');
  mkdirSync(join(bun, 'bin'), { recursive: true });
  writeFileSync(join(bun, 'package.json'), JSON.stringify({ name: 'bun', version: '0.0.0', bin: { bun: 'bin/bun.exe' } }));
  writeFileSync(join(bun, 'bin', 'bun.exe'), STAND_IN);
  chmodSync(join(bun, 'bin', 'bun.exe'), 0o755);
  const os = process.platform === 'win32' ? 'windows' : process.platform;
  const arch = process.arch === 'arm64' ? 'aarch64' : process.arch;
  const platform = join(pkg, 'node_modules', '@oven', `bun-${os}-${arch}`);
  mkdirSync(join(platform, 'bin'), { recursive: true });
  writeFileSync(join(platform, 'package.json'), JSON.stringify({ name: `@oven/bun-${os}-${arch}`, version: '0.0.0' }));
  platformBin = join(platform, 'bin', 'bun');
  symlinkSync(process.execPath, platformBin);
});
afterAll(() => removeDir(root));

function node(args: string[]) {
  const r = Bun.spawnSync(['node', ...args], { cwd: root, stdout: 'pipe', stderr: 'pipe', timeout: 45_000, env: { ...process.env, PATH: '/usr/bin:/bin' } });
  return { code: r.exitCode, stdout: r.stdout.toString(), stderr: r.stderr.toString() };
}

test('the opentabs shim runs the CLI with the platform package\'s Bun while bun.exe is the stand-in', () => {
  const r = node([join(pkg, 'cli', 'bin.mjs'), 'status', '--json']);
  expect(r.stderr).not.toContain("postinstall script was not run");
  expect(r.code).toBe(0);
  expect(JSON.parse(r.stdout)).toMatchObject({ args: ['status', '--json'] });
});

test('the install step builds the start-up bundle with that Bun, and never fails the install', () => {
  rmSync(join(root, 'bundle-built'), { force: true });
  const r = node([join(pkg, 'cli', 'postinstall.mjs')]);
  expect(r.code).toBe(0);
  expect(existsSync(join(root, 'bundle-built'))).toBe(true);
  // No Bun at all (the platform package missing too): the install still succeeds.
  rmSync(platformBin);
  rmSync(join(root, 'bundle-built'), { force: true });
  const none = node([join(pkg, 'cli', 'postinstall.mjs')]);
  expect(none.code).toBe(0);
  expect(existsSync(join(root, 'bundle-built'))).toBe(false);
  symlinkSync(process.execPath, platformBin);
});

test('once bun\'s own install step has put Bun in place, that one is used', () => {
  const exe = join(pkg, 'node_modules', 'bun', 'bin', 'bun.exe');
  rmSync(exe);
  symlinkSync(process.execPath, exe);
  rmSync(platformBin);
  try {
    const r = node([join(pkg, 'cli', 'bin.mjs'), 'doctor']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ args: ['doctor'] });
  } finally {
    symlinkSync(process.execPath, platformBin);
    readFileSync(exe);
  }
});
