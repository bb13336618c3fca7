/**
 * A config dir the user cannot read (mode 0, or another user's): `opentabs doctor` says so once
 * and does not call the secret, the server and the extension folder missing with an
 * `opentabs start` fix (a start would fail on the same folder); `opentabs status` says why it
 * cannot tell where the server runs instead of suggesting a start.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { MAIN, cliEnv, removeDir, tempDir } from './cli-support.ts';

setDefaultTimeout(120_000);

type Check = { check: string; status: string; detail: string; fix?: string };

// Root reads every folder: run the CLI as uid 65534 then (needs setpriv and a checkout that uid
// can run the CLI from). Another user needs nothing.
const asNobody = ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups'];
const isRoot = process.getuid?.() === 0;
const nobodyRuns = isRoot && spawnSync(asNobody[0]!, [...asNobody.slice(1), process.execPath, MAIN, '--version'], { cwd: '/' }).status === 0;
const canTest = !isRoot || nobodyRuns;

let root: string;
beforeAll(() => {
  root = tempDir('opentabs-journey-s23f-unreadable-');
  chmodSync(root, 0o755);
});
afterAll(() => {
  try {
    chmodSync(join(root, 'cfg'), 0o700);
  } catch {
    // Not made (test skipped).
  }
  removeDir(root);
});

function run(args: string[], cfg: string): { code: number; stdout: string; stderr: string } {
  const cmd = [...(isRoot ? asNobody : []), process.execPath, MAIN, ...args];
  // A port nothing listens on, so no other server on the machine answers.
  const r = spawnSync(cmd[0]!, cmd.slice(1), { cwd: '/', env: cliEnv(cfg, { HOME: root, PORT: '1' }), encoding: 'utf8', timeout: 60_000 });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

test.if(canTest)('doctor and status on a config dir the user cannot read: said once, no start fix', () => {
  const cfg = join(root, 'cfg');
  mkdirSync(cfg);
  if (isRoot) chownSync(cfg, 65534, 65534);
  chmodSync(cfg, 0o000);

  const doctor = run(['doctor', '--json'], cfg);
  expect(doctor.code).toBe(1);
  const checks = JSON.parse(doctor.stdout) as Check[];
  const byName = new Map(checks.map((c) => [c.check, c]));
  expect(byName.get('config dir')).toEqual({ check: 'config dir', status: 'fail', detail: `you cannot read ${cfg} (mode 0000)`, fix: `\`chmod 700 ${cfg}\`, or set OPENTABS_CONFIG_DIR to a folder you can read and write.` });
  for (const name of ['secret', 'server', 'extension folder']) {
    const c = byName.get(name)!;
    expect(c.status).toBe('fail');
    expect(c.detail).toContain(`${cfg}, which you cannot read`);
    expect(c.detail).not.toContain('missing');
    expect(c.detail).not.toContain('not installed');
    expect(c.fix).toBe('Make the config dir readable first (the config dir check above).');
  }
  expect(doctor.stdout).not.toMatch(/ start(`| --)/);

  const status = run(['status'], cfg);
  expect(status.code).toBe(1);
  const said = status.stdout + status.stderr;
  expect(said).toContain(`Where this config dir's server runs cannot be read: you cannot read ${cfg} (mode 0000). \`chmod 700 ${cfg}\``);
  expect(said).not.toContain('Start it');

  // The printed fix, run as printed, clears it.
  chmodSync(cfg, 0o700);
  const after = JSON.parse(run(['doctor', '--json'], cfg).stdout) as Check[];
  expect(after.find((c) => c.check === 'config dir')!.status).toBe('ok');
  expect(after.find((c) => c.check === 'secret')!.detail).toContain('is missing');
});
