/**
 * CLI without a server: help on every command, usage errors with exit code 2, not-running
 * reports, doctor on a wrongly-moded secret file, config show on an empty config dir.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';

// Every test spawns CLI processes on a shared machine: room, not a speed assertion.
setDefaultTimeout(120_000);
import { chmodSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PRINTED, removeDir, runCli, tempDir } from './cli-support.ts';

let dir: string;
let cfg: string;
beforeAll(() => {
  dir = tempDir();
  cfg = join(dir, 'state');
});
afterAll(() => removeDir(dir));

describe('cli help and usage', () => {
  test('top-level --help lists every command; no args is a usage error', async () => {
    const r = await runCli(['--help'], { configDir: cfg });
    expect(r.code).toBe(0);
    for (const name of ['start', 'stop', 'status', 'tool', 'plugin', 'config', 'audit', 'logs', 'doctor', 'mcp', 'setup']) {
      expect(r.stdout).toContain(`  ${name}`);
    }
    const none = await runCli([], { configDir: cfg });
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('Usage: opentabs');
  });

  const helps: string[][] = [
    ['start'], ['stop'], ['status'], ['tool'], ['tool', 'list'], ['tool', 'schema'], ['tool', 'call'],
    ['plugin'], ['plugin', 'list'], ['plugin', 'install'], ['plugin', 'add'], ['plugin', 'remove'], ['plugin', 'configure'],
    ['plugin', 'create'], ['plugin', 'build'], ['config'], ['config', 'show'], ['config', 'set'], ['config', 'rotate-secret'],
    ['audit'], ['logs'], ['doctor'], ['mcp'], ['setup'], ['setup', 'opencode'],
  ];
  test('--help works on every command and subcommand, exit 0, nothing on stderr', async () => {
    for (const cmd of helps) {
      const r = await runCli([...cmd, '--help'], { configDir: cfg });
      expect({ cmd, code: r.code }).toEqual({ cmd, code: 0 });
      expect(r.stdout).toContain('Usage: opentabs');
      expect(r.stderr).toBe('');
    }
    // --help must not have created the config dir.
    expect(existsSync(cfg)).toBe(false);
  });

  test('unknown command / subcommand / flag: exit 2 with the problem named on stderr', async () => {
    const a = await runCli(['frobnicate'], { configDir: cfg });
    expect(a.code).toBe(2);
    expect(a.stderr).toContain('unknown command "frobnicate"');
    const b = await runCli(['tool', 'frob'], { configDir: cfg });
    expect(b.code).toBe(2);
    expect(b.stderr).toContain('Unknown subcommand "tool frob"');
    const c = await runCli(['status', '--bogus'], { configDir: cfg });
    expect(c.code).toBe(2);
    expect(c.stderr).toContain('--bogus');
    expect(c.stdout).toBe('');
  });

  test('bad values are usage errors naming the value', async () => {
    const port = await runCli(['start', '--port', '99999'], { configDir: cfg });
    expect(port.code).toBe(2);
    expect(port.stderr).toContain('Invalid port "99999"');
    const envPort = await runCli(['status'], { configDir: cfg, env: { PORT: 'abc' } });
    expect(envPort.code).toBe(2);
    expect(envPort.stderr).toContain('PORT environment variable');
    const json = await runCli(['tool', 'call', 'browser_list_tabs', '{"a":'], { configDir: cfg });
    expect(json.code).toBe(2);
    expect(json.stderr).toContain('Invalid JSON arguments');
    const arr = await runCli(['tool', 'call', 'browser_list_tabs', '[1,2]'], { configDir: cfg });
    expect(arr.code).toBe(2);
    expect(arr.stderr).toContain('must be a JSON object, got an array');
    const tab = await runCli(['tool', 'call', 'x', '{}', '--tab-id', '-3'], { configDir: cfg });
    expect(tab.code).toBe(2);
    const limit = await runCli(['audit', '--limit', '0'], { configDir: cfg });
    expect(limit.code).toBe(2);
    expect(limit.stderr).toContain('--limit');
    const success = await runCli(['audit', '--success', 'maybe', '--file'], { configDir: cfg });
    expect(success.code).toBe(2);
    const setKey = await runCli(['config', 'set', 'nonsense', 'x'], { configDir: cfg });
    expect(setKey.code).toBe(2);
    expect(setKey.stderr).toContain('Unknown key "nonsense"');
    const perm = await runCli(['config', 'set', 'permission.slack', 'sometimes'], { configDir: cfg });
    expect(perm.code).toBe(2);
    expect(perm.stderr).toContain('expected off, ask or auto');
  });
});

describe('colour', () => {
  test('none when piped, FORCE_COLOR turns it on, NO_COLOR always wins', async () => {
    const args = ['status', '--port', '1'];
    const piped = await runCli(args, { configDir: cfg, env: { NO_COLOR: undefined } });
    expect(piped.stdout).toContain('not running');
    expect(piped.stdout).not.toContain('\x1b[');
    const forced = await runCli(args, { configDir: cfg, env: { NO_COLOR: undefined, FORCE_COLOR: '1' } });
    expect(forced.stdout).toContain('\x1b[31mnot running');
    const both = await runCli(args, { configDir: cfg, env: { NO_COLOR: '1', FORCE_COLOR: '1' } });
    expect(both.stdout).not.toContain('\x1b[');
  });
});

describe('cli without a running server', () => {
  // A port nothing listens on: bind and release one.
  let freePort = 0;
  beforeAll(() => {
    const s = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response('') });
    freePort = s.port!;
    s.stop(true);
  });

  test('status: exit 1, says not running; --json gives running:false', async () => {
    const r = await runCli(['status', '--port', String(freePort)], { configDir: cfg });
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('not running');
    const j = await runCli(['status', '--json', '--port', String(freePort)], { configDir: cfg });
    expect(j.code).toBe(1);
    expect(JSON.parse(j.stdout)).toMatchObject({ running: false, url: `http://127.0.0.1:${freePort}` });
  });

  test('tool list: exit 1 with a clear message on stderr', async () => {
    const r = await runCli(['tool', 'list', '--port', String(freePort)], { configDir: cfg });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('not running');
    // opentabs is not on the test's PATH: the hint names the command that runs from here.
    expect(r.stderr).toContain(`${PRINTED.join(' ')} start`);
    expect(r.stdout).toBe('');
  });

  test('stop with nothing running: says so, exit 0', async () => {
    const r = await runCli(['stop'], { configDir: cfg });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('not running');
  });

  test('stop with a stale pid file removes it', async () => {
    const d = join(dir, 'stale');
    mkdirSync(d, { recursive: true });
    // A pid that cannot exist (beyond pid_max).
    writeFileSync(join(d, 'server.pid'), JSON.stringify({ pid: 2 ** 22 + 17, port: freePort }));
    const r = await runCli(['stop'], { configDir: d });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('stale');
    expect(existsSync(join(d, 'server.pid'))).toBe(false);
  });

  test('config show on a fresh dir: defaults, creates nothing', async () => {
    const d = join(dir, 'fresh');
    const r = await runCli(['config', 'show', '--json', '--show-secret', '--port', String(freePort)], { configDir: d });
    expect(r.code).toBe(0);
    const j = JSON.parse(r.stdout);
    expect(j).toMatchObject({ secret: null, port: freePort, configDir: d, running: false, localPlugins: [], secretSet: false });
    expect(existsSync(d)).toBe(false);
  });

  test('audit --file reads both log generations, filters, newest first, skips torn lines', async () => {
    const d = join(dir, 'audit');
    mkdirSync(d, { recursive: true });
    const e = (i: number, tool: string, success: boolean) =>
      JSON.stringify({ timestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(), tool, plugin: tool.split('_')[0], success, durationMs: i });
    writeFileSync(join(d, 'audit.log.1'), [e(1, 'browser_list_tabs', true), e(2, 'demo_get', false)].join('\n') + '\n');
    writeFileSync(join(d, 'audit.log'), [e(3, 'browser_list_tabs', true), '{"torn":', e(4, 'demo_get', true)].join('\n') + '\n');
    const all = await runCli(['audit', '--file', '--json'], { configDir: d });
    expect(all.code).toBe(0);
    expect((JSON.parse(all.stdout) as Array<{ durationMs: number }>).map((x) => x.durationMs)).toEqual([4, 3, 2, 1]);
    const demoFail = await runCli(['audit', '--file', '--json', '--plugin', 'demo', '--success', 'false'], { configDir: d });
    expect(JSON.parse(demoFail.stdout)).toHaveLength(1);
    const limited = await runCli(['audit', '--file', '--json', '--limit', '2', '--tool', 'browser_list_tabs'], { configDir: d });
    expect((JSON.parse(limited.stdout) as Array<{ durationMs: number }>).map((x) => x.durationMs)).toEqual([3, 1]);
    const text = await runCli(['audit', '--file'], { configDir: d });
    expect(text.stdout).toContain('TOOL');
    expect(text.stdout).toContain('demo_get');
  });

  test('doctor: a secret file with mode 0644 is a problem with a chmod fix; exit 1', async () => {
    const d = join(dir, 'doctor');
    mkdirSync(join(d, 'extension'), { recursive: true, mode: 0o700 });
    chmodSync(d, 0o700);
    writeFileSync(join(d, 'extension', 'auth.json'), JSON.stringify({ secret: 'a'.repeat(64) }));
    chmodSync(join(d, 'extension', 'auth.json'), 0o644);
    const r = await runCli(['doctor', '--port', String(freePort)], { configDir: d });
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('mode 0644');
    expect(r.stdout).toContain(`chmod 600 ${join(d, 'extension', 'auth.json')}`);
    const j = await runCli(['doctor', '--json', '--port', String(freePort)], { configDir: d });
    const checks = JSON.parse(j.stdout) as Array<{ check: string; status: string }>;
    expect(checks.find((c) => c.check === 'secret file mode')?.status).toBe('fail');
    expect(checks.find((c) => c.check === 'server')?.status).toBe('fail');
    // After the fix the secret check passes.
    chmodSync(join(d, 'extension', 'auth.json'), 0o600);
    const fixed = JSON.parse((await runCli(['doctor', '--json', '--port', String(freePort)], { configDir: d })).stdout) as Array<{ check: string; status: string }>;
    expect(fixed.find((c) => c.check === 'secret')?.status).toBe('ok');
  });

  test('doctor names a foreign program holding the port', async () => {
    const foreign = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response('nope', { status: 418, headers: { server: 'teapot' } }) });
    try {
      const j = await runCli(['doctor', '--json', '--port', String(foreign.port)], { configDir: cfg });
      const checks = JSON.parse(j.stdout) as Array<{ check: string; status: string; detail: string }>;
      const owner = checks.find((c) => c.check === 'port owner');
      expect(owner?.status).toBe('fail');
      expect(owner?.detail).toContain('418');
      expect(j.code).toBe(1);
    } finally {
      foreign.stop(true);
    }
  });
});
