/**
 * A new user's first commands, run as subprocesses: a mistyped command names the one meant (and
 * the suggestion runs), a config dir that cannot be written gives one line that says so instead
 * of a stack trace (and doctor names it), doctor's chmod fixes run as printed for a path with
 * spaces, and `npx opentabs` / `npm start` (which put node_modules/.bin on PATH for one run) do
 * not make hints say a bare `opentabs` the user's shell will not find.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { MAIN, PRINTED, removeDir, runCli, tempDir } from './cli-support.ts';

setDefaultTimeout(60_000);

let root: string;
beforeAll(() => {
  root = tempDir('opentabs-ux-s21g-first-');
});
afterAll(() => removeDir(root));

/** PATH without any folder that holds an `opentabs` executable (the suggested commands are then absolute). */
const PATH_WITHOUT_OPENTABS = (process.env.PATH ?? '')
  .split(delimiter)
  .filter((d) => d && Bun.which('opentabs', { PATH: d }) === null)
  .join(delimiter);

/** The backticked commands of a message. */
const backticked = (text: string) => [...text.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);

/** Run a suggested command line with sh (it may start with OPENTABS_CONFIG_DIR=…). */
async function runShell(line: string, env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  const proc = Bun.spawn(['sh', '-c', line], { env: { ...env, NO_COLOR: '1' }, stdout: 'pipe', stderr: 'pipe', stdin: 'ignore' });
  const timer = setTimeout(() => proc.kill('SIGKILL'), 45_000);
  try {
    const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
    return { code, stdout, stderr };
  } finally {
    clearTimeout(timer);
  }
}

describe('a mistyped command', () => {
  test('names the command meant, and the suggestion runs as printed', async () => {
    const cfg = join(root, 'typos');
    const cases: Array<[string[], string]> = [
      [['strat'], 'start'],
      [['stauts'], 'status'],
      [['docter'], 'doctor'],
      [['sotp'], 'stop'],
      [['list'], 'tool list'],
      [['secret'], 'config secret'],
      [['tool', 'lsit'], 'tool list'],
      [['config', 'shwo'], 'config show'],
    ];
    for (const [args, meant] of cases) {
      const r = await runCli(args, { configDir: cfg, env: { PATH: PATH_WITHOUT_OPENTABS } });
      expect(r.code).toBe(2);
      expect(r.stderr).toContain('Did you mean `');
      const suggested = backticked(r.stderr.slice(r.stderr.indexOf('Did you mean')))[0]!;
      expect(suggested).toEndWith(` ${meant}`);
      // As printed, with --help added: the command exists.
      const help = await runShell(`${suggested} --help`, { PATH: PATH_WITHOUT_OPENTABS, HOME: root });
      expect({ suggested, code: help.code, stderr: help.stderr }).toEqual({ suggested, code: 0, stderr: '' });
      expect(help.stdout).toContain('Usage: opentabs');
    }
    // The rest of the command line comes along, so the suggestion does what was meant.
    const withArgs = await runCli(['tool', 'lsit', '--plugin', 'browser', '--json'], { configDir: cfg, env: { PATH: PATH_WITHOUT_OPENTABS } });
    expect(backticked(withArgs.stderr)[0]).toEndWith(' tool list --plugin browser --json');
    const quoted = await runCli(['tool', 'cal', 'browser_list_tabs', '{"a": "b c"}'], { configDir: cfg, env: { PATH: PATH_WITHOUT_OPENTABS } });
    expect(backticked(quoted.stderr)[0]).toEndWith(` tool call browser_list_tabs '{"a": "b c"}'`);
    // A word for the command under another name.
    for (const [args, meant] of [
      [['config', 'get', 'skipPermissions'], 'config show'],
      [['plugin', 'rm', 'x'], 'plugin remove x'],
      [['plugin', 'ls'], 'plugin list'],
    ] as Array<[string[], string]>) {
      const r = await runCli(args, { configDir: cfg });
      expect(backticked(r.stderr)[0]).toEndWith(` ${meant}`);
    }
    // `opentabs setup zed`, a client setup does not write: where its configuration is.
    const setup = await runCli(['setup', 'zed'], { configDir: cfg, env: { PATH: PATH_WITHOUT_OPENTABS } });
    expect(setup.code).toBe(2);
    expect(backticked(setup.stderr)[0]).toEndWith(' start --show-config');
    // `opentabs list`: both groups that have it.
    const list = await runCli(['list'], { configDir: cfg, env: { PATH: PATH_WITHOUT_OPENTABS } });
    expect(list.stderr).toContain('tool list`');
    expect(list.stderr).toContain('plugin list`');
    // Nothing close: no guess.
    const none = await runCli(['xyzzy'], { configDir: cfg });
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('unknown command "xyzzy".');
    expect(none.stderr).not.toContain('Did you mean');
    // Inherited object keys are not commands.
    const proto = await runCli(['constructor'], { configDir: cfg });
    expect(proto.code).toBe(2);
    expect(proto.stderr).toContain('unknown command "constructor"');
    const protoSub = await runCli(['tool', 'toString'], { configDir: cfg });
    expect(protoSub.code).toBe(2);
    expect(protoSub.stderr).toContain('Unknown subcommand "tool toString"');
  });
});

test('options before the command: the command line with them after it, which runs', async () => {
  const cfg = join(root, 'options-first');
  for (const [args, fixed] of [
    [['--port', '1', 'status', '--json'], ' status --port 1 --json'],
    [['--json', 'tool', 'list', '--plugin', 'browser'], ' tool list --json --plugin browser'],
  ] as Array<[string[], string]>) {
    const r = await runCli(args, { configDir: cfg, env: { PATH: PATH_WITHOUT_OPENTABS } });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`unknown option "${args[0]}" before the command.`);
    const suggested = backticked(r.stderr)[0]!;
    expect(suggested).toEndWith(fixed);
    // It parses: the same line with --help appended is accepted.
    const help = await runShell(`${suggested} --help`, { PATH: PATH_WITHOUT_OPENTABS, HOME: root });
    expect({ suggested, code: help.code }).toEqual({ suggested, code: 0 });
  }
  const version = await runCli(['-V'], { configDir: cfg });
  expect(version.code).toBe(0);
  expect(version.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
});

describe('a config dir that cannot be used', () => {
  const noStack = (stderr: string) => expect(stderr).not.toMatch(/\n\s+at /);

  test('a file where the folder must be: one line that says so, no stack trace; doctor names it', async () => {
    const file = join(root, 'a-file');
    writeFileSync(file, '');
    const cfg = join(file, 'state');
    for (const args of [['config', 'set', 'skipPermissions', 'true'], ['config', 'rotate-secret'], ['start', '--background', '--port', '0']]) {
      const r = await runCli(args, { configDir: cfg });
      expect({ args, code: r.code }).toEqual({ args, code: 1 });
      noStack(r.stderr);
      expect(r.stderr).toStartWith('error: ');
      expect(r.stderr).toContain('OPENTABS_CONFIG_DIR');
    }
    const doctor = await runCli(['doctor'], { configDir: cfg });
    expect(doctor.code).toBe(1);
    expect(doctor.stdout).toContain(`✗ config dir: ${cfg} cannot be created: ${file} is a file, not a folder`);
    expect(doctor.stdout).not.toContain('does not exist yet');
  });

  // Needs root (to become uid 65534) and a checkout uid 65534 can run the CLI from: one under a
  // private folder (mktemp -d makes them 0700) cannot be, and the test is skipped there.
  const asNobodyPrefix = ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups'];
  const nobodyRuns = process.getuid?.() === 0 && spawnSync(asNobodyPrefix[0]!, [...asNobodyPrefix.slice(1), process.execPath, MAIN, '--version'], { cwd: '/' }).status === 0;
  test.if(nobodyRuns)('a folder of another user, for a user who cannot write to it: one line, no stack trace; doctor says so', async () => {
    // Run the CLI as uid 65534 (nobody) against a folder of root's that nobody may write.
    const dir = join(root, 'not-yours');
    mkdirSync(dir, { mode: 0o755 });
    chmodSync(root, 0o755);
    const asNobody = [...asNobodyPrefix, process.execPath, MAIN];
    for (const [cfg, args] of [
      [dir, ['config', 'set', 'skipPermissions', 'true']],
      [dir, ['config', 'rotate-secret']],
      [dir, ['start', '--background', '--port', '0']],
      [join(dir, 'sub'), ['config', 'set', 'allowFileUrls', 'false']],
    ] as Array<[string, string[]]>) {
      const r = await runCli(args, { configDir: cfg, exe: asNobody, env: { HOME: dir }, cwd: dir });
      expect({ args, code: r.code }).toEqual({ args, code: 1 });
      noStack(r.stderr);
      expect(r.stderr).toContain('OPENTABS_CONFIG_DIR');
    }
    const doctor = await runCli(['doctor'], { configDir: dir, exe: asNobody, env: { HOME: dir }, cwd: dir });
    expect(doctor.stdout).toContain(`✗ config dir: ${dir} belongs to another user (uid 0) and you cannot write to it`);
    const below = await runCli(['doctor'], { configDir: join(dir, 'sub'), exe: asNobody, env: { HOME: dir }, cwd: dir });
    expect(below.stdout).toContain(`cannot be created: you cannot write to ${dir}`);
  });
});

test("doctor's chmod fixes run as printed when the path has a space (a HOME such as /Users/Jane Doe)", async () => {
  const home = join(root, 'Jane Doe');
  const cfg = join(home, '.opentabs');
  mkdirSync(join(cfg, 'extension'), { recursive: true });
  writeFileSync(join(cfg, 'extension', 'auth.json'), JSON.stringify({ secret: 'a'.repeat(64) }));
  chmodSync(cfg, 0o755);
  chmodSync(join(cfg, 'extension', 'auth.json'), 0o644);
  const r = await runCli(['doctor'], { configDir: cfg, env: { HOME: home, PORT: '1' } });
  const fixes = r.stdout
    .split('\n')
    .filter((l) => l.trim().startsWith('fix: chmod'))
    .map((l) => l.trim().slice('fix: '.length).split('  (')[0]!);
  expect(fixes.length).toBe(2);
  for (const fix of fixes) {
    const run = await runShell(fix, { PATH: process.env.PATH ?? '' });
    expect({ fix, code: run.code, stderr: run.stderr }).toEqual({ fix, code: 0, stderr: '' });
  }
  expect(statSync(cfg).mode & 0o777).toBe(0o700);
  expect(statSync(join(cfg, 'extension', 'auth.json')).mode & 0o777).toBe(0o600);
});

test('`npx opentabs` and `npm start` put node_modules/.bin on PATH for one run: hints do not say a bare `opentabs`', async () => {
  const cfg = join(root, 'npx');
  const shim = (dir: string) => {
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'opentabs'), `#!/bin/sh\nexec "${process.execPath}" "${MAIN}" "$@"\n`);
    chmodSync(join(dir, 'opentabs'), 0o755);
  };
  // What npx adds: the project's node_modules/.bin and npm's _npx cache.
  const projectBin = join(root, 'project', 'node_modules', '.bin');
  const npxBin = join(root, '.npm', '_npx', '0cc128b1b791b959', 'node_modules', '.bin');
  shim(projectBin);
  shim(npxBin);
  const underNpx = await runCli(['strat'], { configDir: cfg, env: { PATH: [npxBin, projectBin, PATH_WITHOUT_OPENTABS].join(delimiter) } });
  const suggested = backticked(underNpx.stderr)[0]!;
  expect(suggested).toContain(PRINTED.join(' '));
  expect(suggested).not.toMatch(/(^|\s)opentabs start$/);
  const ran = await runShell(`${suggested} --help`, { PATH: PATH_WITHOUT_OPENTABS, HOME: root });
  expect(ran.code).toBe(0);
  // A real install on PATH (npm link, npm install -g): the short form.
  const globalBin = join(root, 'prefix', 'bin');
  shim(globalBin);
  const installed = await runCli(['strat'], { configDir: cfg, env: { PATH: [projectBin, globalBin, PATH_WITHOUT_OPENTABS].join(delimiter) } });
  expect(backticked(installed.stderr)[0]).toEndWith('opentabs start');
  expect(backticked(installed.stderr)[0]).not.toContain(PRINTED.at(-1));
});

test('config set uploadFolders ~/a,~/b: every entry from the home folder (a shell expands only the first ~)', async () => {
  const home = join(root, 'home-upload');
  mkdirSync(join(home, 'a'), { recursive: true });
  mkdirSync(join(home, 'b'), { recursive: true });
  const cfg = join(root, 'upload-cfg');
  // As bash passes `~/a,~/b` unquoted: the first expanded, the second not.
  const r = await runCli(['config', 'set', 'uploadFolders', `${join(home, 'a')},~/b`], { configDir: cfg, env: { HOME: home } });
  expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
  const show = await runCli(['config', 'show', '--json'], { configDir: cfg, env: { HOME: home } });
  expect(JSON.stringify(JSON.parse(show.stdout))).toContain(JSON.stringify([join(home, 'a'), join(home, 'b')]));
});

test('the commands named in --help texts run as printed when opentabs is not on PATH', async () => {
  const cfg = join(root, 'help-commands');
  const helps = [
    [],
    ['start'], ['stop'], ['status'], ['audit'], ['logs'], ['doctor'], ['approvals'], ['approve'], ['deny'],
    ['tool'], ['tool', 'list'], ['tool', 'schema'], ['tool', 'call'],
    ['config'], ['config', 'set'], ['config', 'show'], ['config', 'secret'], ['config', 'rotate-secret'],
    ['setup'], ['setup', 'opencode'],
  ];
  let checked = 0;
  for (const args of helps) {
    const r = await runCli([...args, '--help'], { configDir: cfg, env: { PATH: PATH_WITHOUT_OPENTABS } });
    expect({ args, code: r.code }).toEqual({ args, code: 0 });
    for (const cmd of backticked(r.stdout)) {
      // Commands only (not `key=value` examples), and not the ones for another program.
      if (!/(^|\s)\/\S*(main\.ts|bin\.mjs)(\s|$)/.test(cmd) && !/(^|\s)opentabs(\s|$)/.test(cmd)) continue;
      expect({ args, cmd, bare: /(^|\s)opentabs\s/.test(cmd) }).toEqual({ args, cmd, bare: false });
      // The form that reads no bunfig.toml or .env of the folder it is run in.
      expect({ args, cmd, printed: cmd.includes(PRINTED.join(' ')) }).toEqual({ args, cmd, printed: true });
      // Placeholders (<id>, <command>, …) are cut at the first one; --help checks the rest parses.
      const runnable = cmd.replace(/\s+[^\s<[…|]*[<[…|].*$/, '');
      const ran = await runShell(`${runnable} --help`, { PATH: PATH_WITHOUT_OPENTABS, HOME: root });
      expect({ args, cmd, code: ran.code, stderr: ran.stderr }).toEqual({ args, cmd, code: 0, stderr: '' });
      checked++;
    }
  }
  expect(checked).toBeGreaterThan(5);
});
