/**
 * Every command the product suggests in its own output must run from where the user is: the
 * start banner (first run), the stdio client config in it, error hints and doctor's fixes. With
 * `opentabs` NOT on PATH (no global install, no `npm link`), each suggested command is collected,
 * must name an executable that exists, and must parse (run with --help appended: an unknown flag
 * or subcommand fails). Messages name the real config dir (OPENTABS_CONFIG_DIR), never ~/.opentabs.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { existsSync, readFileSync } from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';
import { killPid, removeDir, runCli, tempDir } from './cli-support.ts';

setDefaultTimeout(240_000);

/** PATH without any directory that holds an `opentabs` executable. */
const PATH_WITHOUT_OPENTABS = (process.env.PATH ?? '')
  .split(delimiter)
  .filter((d) => d && !existsSync(join(d, 'opentabs')))
  .join(delimiter);
const env = { PATH: PATH_WITHOUT_OPENTABS };

let root: string;
let cfg: string;
let port = 0;
let pid = 0;
const outputs: Array<{ where: string; text: string }> = [];

/** Split a shell line into words (single and double quotes, no expansion). */
function words(line: string): string[] {
  const out: string[] = [];
  const re = /'((?:[^']|'\\'')*)'|"([^"]*)"|(\S+)/g;
  let m: RegExpExecArray | null;
  while ((m = re.exec(line))) out.push(m[1] !== undefined ? m[1].replace(/'\\''/g, "'") : (m[2] ?? m[3]));
  return out;
}

/** The CLI invocations in a text: every backticked command, split at &&, || and |, that runs this CLI. */
function suggested(text: string, cliPrefix: string[]): string[][] {
  const found: string[][] = [];
  for (const m of text.matchAll(/`([^`]+)`/g)) {
    for (const part of m[1].split(/&&|\|\||\||;/)) {
      const w = words(part.trim());
      if (w.length === 0) continue;
      if (w[0] === 'opentabs' || w.slice(0, cliPrefix.length).join('\0') === cliPrefix.join('\0')) found.push(w);
    }
  }
  return found;
}

beforeAll(async () => {
  root = tempDir();
  cfg = join(root, 'custom-config');
  const probe = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response('') });
  port = probe.port!;
  probe.stop(true);
  // Before anything runs: doctor with no config dir and no server.
  const d0 = await runCli(['doctor', '--port', String(port)], { configDir: cfg, env });
  outputs.push({ where: 'doctor (nothing set up)', text: d0.stdout + d0.stderr });
  const start = await runCli(['start', '--background', '--port', String(port)], { configDir: cfg, env, timeoutMs: 120_000 });
  expect(start.code).toBe(0);
  pid = JSON.parse(readFileSync(join(cfg, 'server.pid'), 'utf8')).pid;
  outputs.push({ where: 'start banner', text: start.stdout + start.stderr });
  const d1 = await runCli(['doctor', '--port', String(port)], { configDir: cfg, env });
  outputs.push({ where: 'doctor (running)', text: d1.stdout + d1.stderr });
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
  for (const args of [['nope'], ['start', '--bogus'], ['config', 'set', 'x'], ['mcp', '--no-start', '--port', '1'], ['stop', 'extra']]) {
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
    const prefix = [process.execPath, join(import.meta.dir, '..', '..', 'cli', 'main.ts')];
    const all = new Map<string, { argv: string[]; where: string }>();
    for (const o of outputs) for (const argv of suggested(o.text, prefix)) all.set(`${o.where}\0${argv.join(' ')}`, { argv, where: o.where });
    // Not vacuous: the banner, the hints and doctor each suggest something.
    expect([...new Set([...all.values()].map((v) => v.where))].length).toBeGreaterThanOrEqual(4);
    expect([...all.values()].some((v) => v.where === 'tool call of an off tool' && v.argv.includes('set'))).toBe(true);
    // The server's error bodies suggest commands too, written to run from here.
    for (const where of ['REST 401 without a bearer', 'REST unknown tool', 'REST permission off', 'REST extension not connected']) {
      expect({ where, suggests: [...all.values()].some((v) => v.where === where) }).toEqual({ where, suggests: true });
    }
    const failures: string[] = [];
    for (const { argv, where } of all.values()) {
      if (argv[0] === 'opentabs') {
        failures.push(`${where}: \`${argv.join(' ')}\` needs opentabs on PATH`);
        continue;
      }
      if (!existsSync(argv[0])) failures.push(`${where}: ${argv[0]} does not exist`);
      const cli = argv.slice(prefix.length);
      const r = await runCli([...cli, '--help'], { configDir: cfg, env });
      if (r.code !== 0) failures.push(`${where}: \`${argv.join(' ')}\` does not parse: ${r.stderr.trim()}`);
      // `config set` changes only this test's config dir: run it for real, so its key and value are checked too.
      if (cli[0] === 'config' && cli[1] === 'set' && !cli.some((w) => w.startsWith('<'))) {
        const real = await runCli([...cli, '--port', String(port)], { configDir: cfg, env });
        if (real.code !== 0) failures.push(`${where}: \`${argv.join(' ')}\` fails: ${real.stderr.trim()}`);
      }
    }
    expect(failures).toEqual([]);
  });

  test('no message names ~/.opentabs when OPENTABS_CONFIG_DIR points elsewhere', () => {
    for (const o of outputs) expect(`${o.where}: ${o.text}`).not.toContain('~/.opentabs');
  });
});
