/**
 * Every command the product suggests in its own output must run from where the user is: the
 * start banner (first run), the stdio client config in it, error hints and doctor's fixes. With
 * `opentabs` NOT on PATH (no global install, no `npm link`), each suggested command is collected,
 * must name an executable that exists, and must parse (run with --help appended: an unknown flag
 * or subcommand fails). Messages name the real config dir (OPENTABS_CONFIG_DIR), never ~/.opentabs.
 * The server runs with a config dir that is not the default, and each suggested command is run
 * in a shell where OPENTABS_CONFIG_DIR is NOT set (it may have been given for one command line
 * only): a command reaches that server only through the `OPENTABS_CONFIG_DIR=… ` it carries.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';
import { PRINTED, killPid, removeDir, runCli, tempDir } from './cli-support.ts';

setDefaultTimeout(240_000);

/** PATH without any directory that holds an `opentabs` executable. */
const PATH_WITHOUT_OPENTABS = (process.env.PATH ?? '')
  .split(delimiter)
  .filter((d) => d && !existsSync(join(d, 'opentabs')))
  .join(delimiter);
const env = { PATH: PATH_WITHOUT_OPENTABS };
/** A suggested command run as written: no OPENTABS_CONFIG_DIR but its own, and a HOME with no ~/.opentabs. */
let bareEnv: Record<string, string | undefined>;

let root: string;
let cfg: string;
let port = 0;
let pid = 0;
/** What the product printed; `dir` is the config dir the command ran with when it is not cfg. */
const outputs: Array<{ where: string; text: string; dir?: string }> = [];

/** Split a shell line into words (single and double quotes, no expansion). */
function words(line: string): string[] {
  const out: string[] = [];
  const re = /'((?:[^']|'\\'')*)'|"([^"]*)"|(\S+)/g;
  let m: RegExpExecArray | null;
  while ((m = re.exec(line))) out.push(m[1] !== undefined ? m[1].replace(/'\\''/g, "'") : (m[2] ?? m[3]));
  return out;
}

interface Suggestion {
  /** Leading NAME=value words of the command. */
  assign: Record<string, string>;
  argv: string[];
}

/** The CLI invocations in a text: every backticked command, split at &&, || and |, that runs this CLI. */
function suggested(text: string, cliPrefix: string[]): Suggestion[] {
  const found: Suggestion[] = [];
  for (const m of text.matchAll(/`([^`]+)`/g)) {
    for (const part of m[1].split(/&&|\|\||\s\|\s|;/)) {
      const w = words(part.trim());
      const assign: Record<string, string> = {};
      while (w.length > 0 && /^[A-Z_][A-Z0-9_]*=/.test(w[0])) {
        const [k, ...v] = w.shift()!.split('=');
        assign[k] = v.join('=');
      }
      if (w.length === 0) continue;
      if (w[0] === 'opentabs' || w.slice(0, cliPrefix.length).join('\0') === cliPrefix.join('\0')) found.push({ assign, argv: w });
    }
  }
  return found;
}

beforeAll(async () => {
  root = tempDir();
  cfg = join(root, 'custom-config');
  mkdirSync(join(root, 'home'));
  bareEnv = { ...env, OPENTABS_CONFIG_DIR: undefined, HOME: join(root, 'home') };
  const probe = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response('') });
  port = probe.port!;
  probe.stop(true);
  // Before anything runs: doctor with no config dir and no server.
  const d0 = await runCli(['doctor', '--port', String(port)], { configDir: cfg, env });
  outputs.push({ where: 'doctor (nothing set up)', text: d0.stdout + d0.stderr });
  const s0 = await runCli(['status', '--port', String(port)], { configDir: cfg, env });
  outputs.push({ where: 'status (not running)', text: s0.stdout + s0.stderr });
  const l0 = await runCli(['tool', 'list', '--port', String(port)], { configDir: cfg, env });
  outputs.push({ where: 'tool list (not running)', text: l0.stdout + l0.stderr });
  const c0 = await runCli(['config', 'show', '--port', String(port)], { configDir: cfg, env });
  outputs.push({ where: 'config show (no secret yet)', text: c0.stdout + c0.stderr });
  const start = await runCli(['start', '--background', '--port', String(port)], { configDir: cfg, env, timeoutMs: 120_000 });
  expect(start.code).toBe(0);
  pid = JSON.parse(readFileSync(join(cfg, 'server.pid'), 'utf8')).pid;
  outputs.push({ where: 'start banner', text: start.stdout + start.stderr });
  const rot = await runCli(['config', 'rotate-secret'], { configDir: cfg, env });
  expect(rot.code).toBe(0);
  outputs.push({ where: 'config rotate-secret', text: rot.stdout + rot.stderr });
  const d1 = await runCli(['doctor', '--port', String(port)], { configDir: cfg, env });
  outputs.push({ where: 'doctor (running)', text: d1.stdout + d1.stderr });
  const s1 = await runCli(['status', '--port', String(port)], { configDir: cfg, env });
  outputs.push({ where: 'status (running)', text: s1.stdout + s1.stderr });
  const p1 = await runCli(['plugin', 'list', '--port', String(port)], { configDir: cfg, env });
  outputs.push({ where: 'plugin list (none)', text: p1.stdout + p1.stderr });
  // Another config dir's start on this server's port: refused, with a port that is free.
  const foreign = await runCli(['start', '--port', String(port)], { configDir: join(root, 'other-config'), env });
  expect(foreign.code).toBe(1);
  expect(existsSync(join(root, 'other-config', 'server.pid'))).toBe(false);
  outputs.push({ where: 'start on a port another config dir holds', text: foreign.stdout + foreign.stderr, dir: join(root, 'other-config') });
  // A tool switched off: the refusal names the command that switches it back on.
  expect((await runCli(['config', 'set', 'permission.browser_list_tabs', 'off', '--port', String(port)], { configDir: cfg, env })).code).toBe(0);
  const off = await runCli(['tool', 'call', 'browser_list_tabs', '{}', '--port', String(port)], { configDir: cfg, env });
  outputs.push({ where: 'tool call of an off tool', text: off.stdout + off.stderr });
  // The server's own error bodies, read raw (not through the CLI, which rewrites what it prints).
  const secret = JSON.parse(readFileSync(join(cfg, 'extension', 'auth.json'), 'utf8')).secret as string;
  const base = `http://127.0.0.1:${port}`;
  const auth = { authorization: `Bearer ${secret}`, 'content-type': 'application/json' };
  const raw = async (where: string, path: string, init: RequestInit) => outputs.push({ where, text: await (await fetch(base + path, init)).text() });
  await raw('REST 401 without a bearer', '/tools', {});
  await raw('REST unknown tool', '/tools/nope_tool/call', { method: 'POST', headers: auth, body: '{}' });
  await raw('REST permission off', '/tools/browser_list_tabs/call', { method: 'POST', headers: auth, body: '{}' });
  await raw('REST extension not connected', '/tools/browser_list_windows/call', { method: 'POST', headers: auth, body: '{}' });
  for (const args of [['nope'], ['start', '--bogus'], ['config', 'set', 'x'], ['mcp', '--no-start', '--port', '1'], ['stop', 'extra'], ['plugin', 'remove', 'nope']]) {
    const r = await runCli(args, { configDir: cfg, env });
    outputs.push({ where: `opentabs ${args.join(' ')}`, text: r.stdout + r.stderr });
  }
});

afterAll(async () => {
  if (pid) await killPid(pid);
  removeDir(root);
});

describe('suggested commands run without opentabs on PATH', () => {
  test('the stdio client config in the banner runs the bridge from anywhere and names the config dir', () => {
    const banner = outputs.find((o) => o.where === 'start banner')!.text;
    const block = /Stdio-only clients[^\n]*\n(\{[\s\S]*?\n\})/.exec(banner)?.[1];
    expect(block).toBeDefined();
    const server = (JSON.parse(block!) as { mcpServers: { opentabs: { command: string; args: string[]; env?: Record<string, string> } } }).mcpServers.opentabs;
    expect(isAbsolute(server.command)).toBe(true);
    expect(existsSync(server.command)).toBe(true);
    expect(server.args.at(-1)).toBe('mcp');
    expect(server.env?.OPENTABS_CONFIG_DIR).toBe(cfg);
  });

  test('every command in the banner, the error hints and doctor names an existing executable and parses', async () => {
    const prefix = PRINTED;
    const all = new Map<string, Suggestion & { where: string; dir: string }>();
    for (const o of outputs) for (const s of suggested(o.text, prefix)) all.set(`${o.where}\0${s.argv.join(' ')}`, { ...s, where: o.where, dir: o.dir ?? cfg });
    // Not vacuous: the banner, the hints and doctor each suggest something.
    expect([...new Set([...all.values()].map((v) => v.where))].length).toBeGreaterThanOrEqual(4);
    expect([...all.values()].some((v) => v.where === 'tool call of an off tool' && v.argv.includes('set'))).toBe(true);
    // The server's error bodies suggest commands too, written to run from here.
    for (const where of ['REST 401 without a bearer', 'REST unknown tool', 'REST permission off', 'REST extension not connected']) {
      expect({ where, suggests: [...all.values()].some((v) => v.where === where) }).toEqual({ where, suggests: true });
    }
    const failures: string[] = [];
    for (const { assign, argv, where, dir } of all.values()) {
      if (argv[0] === 'opentabs') {
        failures.push(`${where}: \`${argv.join(' ')}\` needs opentabs on PATH`);
        continue;
      }
      if (isAbsolute(argv[0]) ? !existsSync(argv[0]) : Bun.which(argv[0], { PATH: PATH_WITHOUT_OPENTABS }) === null) failures.push(`${where}: ${argv[0]} is not found`);
      const cli = argv.slice(prefix.length);
      // Run as printed: the printed executable and its arguments, not this test's own command.
      const exe = argv.slice(0, prefix.length);
      const asHelp = cli.at(-1) === '--help' || cli.at(-1) === '-h';
      // Anything but --help talks to the server or the config dir: it must carry the config dir.
      // The stop named for the server of another config dir that holds the port stops that one.
      const want = where === 'start on a port another config dir holds' && cli[0] === 'stop' ? cfg : dir;
      if (!asHelp && assign.OPENTABS_CONFIG_DIR !== want) failures.push(`${where}: \`${argv.join(' ')}\` does not name the config dir (OPENTABS_CONFIG_DIR=${want})`);
      const r = await runCli([...cli, ...(asHelp ? [] : ['--help'])], { configDir: cfg, env: { ...bareEnv, ...assign }, exe });
      if (r.code !== 0) failures.push(`${where}: \`${argv.join(' ')}\` does not parse: ${r.stderr.trim()}`);
      // `config set` changes only this test's config dir: run it for real, so its key and value are checked too.
      if (cli[0] === 'config' && cli[1] === 'set' && !cli.some((w) => w.startsWith('<'))) {
        const real = await runCli(cli, { configDir: cfg, env: { ...bareEnv, ...assign }, exe });
        if (real.code !== 0) failures.push(`${where}: \`${argv.join(' ')}\` fails: ${real.stderr.trim()}`);
      }
    }
    expect(failures).toEqual([]);
  });

  test('commands run as printed reach this server and config dir, with no OPENTABS_CONFIG_DIR in the shell', async () => {
    const prefix = PRINTED;
    const find = (where: string, sub: string[]) => {
      const s = suggested(outputs.find((o) => o.where === where)!.text, prefix).find((x) => sub.every((w, i) => x.argv[prefix.length + i] === w));
      expect({ where, sub, found: s !== undefined }).toEqual({ where, sub, found: true });
      return s!;
    };
    const run = (s: Suggestion) => runCli(s.argv.slice(prefix.length), { configDir: cfg, env: { ...bareEnv, ...s.assign }, exe: s.argv.slice(0, prefix.length) });
    // The banner's way to print the secret: this config dir's secret, alone.
    const show = await run(find('start banner', ['config', 'secret']));
    expect(show.code).toBe(0);
    const secret = JSON.parse(readFileSync(join(cfg, 'extension', 'auth.json'), 'utf8')).secret as string;
    expect(show.stdout).toBe(`${secret}\n`);
    // "extension not connected" says to see `opentabs status`: it finds the running server.
    const status = await run(find('REST extension not connected', ['status']));
    expect({ code: status.code, out: status.stdout }).toMatchObject({ code: 0, out: expect.stringContaining(`running on http://127.0.0.1:${port}`) });
    // A server that is not running is started on the port that was asked for, inside the backticks.
    const startHint = find('status (not running)', ['start']);
    expect(startHint.argv.slice(prefix.length)).toEqual(['start', '--port', String(port)]);
    expect(find('tool list (not running)', ['start']).argv.slice(prefix.length)).toEqual(['start', '--port', String(port)]);
    // --port 1 while this config dir's server runs on `port`: a start on 1 would be refused, so
    // the message names where the server runs instead.
    const wrongPort = outputs.find((o) => o.where === 'opentabs mcp --no-start --port 1')!.text;
    expect(wrongPort).toContain(`server runs on http://127.0.0.1:${port}`);
    expect(suggested(wrongPort, prefix).filter((s) => s.argv[prefix.length] === 'start')).toEqual([]);
    // Where the secret comes from, and how clients get the new one after a rotation.
    expect(find('config show (no secret yet)', ['start']).assign.OPENTABS_CONFIG_DIR).toBe(cfg);
    expect(find('config rotate-secret', ['start', '--show-config']).assign.OPENTABS_CONFIG_DIR).toBe(cfg);
    // Removing a plugin that is not there: the command that lists the ones that are.
    expect(find('opentabs plugin remove nope', ['plugin', 'list']).assign.OPENTABS_CONFIG_DIR).toBe(cfg);
    // doctor --port N: every fix that starts the server starts it on N.
    const doctorStarts = suggested(outputs.find((o) => o.where === 'doctor (nothing set up)')!.text, prefix).filter((s) => s.argv[prefix.length] === 'start');
    expect(doctorStarts.length).toBeGreaterThanOrEqual(3);
    for (const s of doctorStarts) expect(s.argv.slice(prefix.length + 1).filter((w) => w !== '--background')).toEqual(['--port', String(port)]);
    // Another config dir's start on this port is refused (exit 1), naming a different port that was free.
    const foreign = outputs.find((o) => o.where === 'start on a port another config dir holds')!.text;
    expect(foreign).toContain(`the OpenTabs server of config dir ${cfg}`);
    expect(find('start on a port another config dir holds', ['stop']).assign.OPENTABS_CONFIG_DIR).toBe(cfg);
    const other = find('start on a port another config dir holds', ['start']).argv.slice(prefix.length);
    expect(other.slice(0, 2)).toEqual(['start', '--port']);
    expect(Number(other[2])).toBeGreaterThan(port);
    expect(foreign).toContain(`start OpenTabs on port ${other[2]} (free just now)`);
  });

  test('no message names ~/.opentabs when OPENTABS_CONFIG_DIR points elsewhere', () => {
    for (const o of outputs) expect(`${o.where}: ${o.text}`).not.toContain('~/.opentabs');
  });
});
