/**
 * `opentabs start` / `stop` as real processes: first-run configuration blocks (parsed as JSON and
 * as a command), --background with server.log, detection of a server already running, a port
 * held by another program, stop leaving no process, and a foreground start ended by SIGTERM.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';

// Every test spawns CLI processes on a shared machine: room, not a speed assertion.
setDefaultTimeout(120_000);
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { MAIN, PRINTED, cliEnv, collect, jsonBlocks, killPid, pidAlive, removeDir, runCli, tempDir, waitFor, ROOT } from './cli-support.ts';
import { bunRunArgs } from '../../server/cli-command.ts';

let root: string;
const started: number[] = [];

beforeAll(() => {
  root = tempDir();
});
afterAll(async () => {
  for (const pid of started) await killPid(pid);
  removeDir(root);
});

function pidOf(cfg: string): { pid: number; port: number } {
  return JSON.parse(readFileSync(join(cfg, 'server.pid'), 'utf8'));
}

describe('start --background on first run, then stop', () => {
  const cfg = () => join(root, 'bg');
  let port = 0;
  let pid = 0;

  test('starts detached, waits for /health, prints every MCP config block', async () => {
    const r = await runCli(['start', '--background', '--port', '0'], { configDir: cfg(), timeoutMs: 90_000 });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    ({ pid, port } = pidOf(cfg()));
    started.push(pid);
    expect(pidAlive(pid)).toBe(true);
    expect(r.stdout).toContain(`started in the background on http://127.0.0.1:${port} (pid ${pid})`);
    const res = await fetch(`http://127.0.0.1:${port}/health`);
    expect(await res.json()).toEqual({ status: 'ok' });

    // What the printed entries carry: the client token, not the secret of auth.json.
    const secret = JSON.parse(readFileSync(join(cfg(), 'client-token.json'), 'utf8')).clientToken as string;
    const url = `http://127.0.0.1:${port}/mcp`;
    const auth = { Authorization: `Bearer ${secret}` };
    // Claude Code command line.
    const cmd = r.stdout.split('\n').find((l) => l.startsWith('claude mcp add'));
    expect(cmd).toBe(`claude mcp add --scope user --transport http opentabs ${url} --header "Authorization: Bearer ${secret}"`);
    // JSON blocks: ~/.claude.json, Cursor, OpenCode, Windsurf, gateway.
    // Gemini CLI command line and Codex CLI's TOML table (short enough for the first-run banner).
    expect(r.stdout).toContain(`\ngemini mcp add --scope user --transport http opentabs ${url} --header "Authorization: Bearer ${secret}"\n`);
    expect(r.stdout).toContain(`\n[mcp_servers.opentabs]\nurl = "${url}"\nhttp_headers = { Authorization = "Bearer ${secret}" }\n`);
    expect(r.stdout).toContain('Gemini\'s settings.json: see');
    const blocks = jsonBlocks(r.stdout);
    expect(blocks).toEqual([
      { mcpServers: { opentabs: { type: 'http', url, headers: auth } } },
      { mcpServers: { opentabs: { url, headers: auth } } },
      { mcp: { opentabs: { type: 'remote', url, headers: auth, enabled: true } } },
      { mcpServers: { opentabs: { serverUrl: url, headers: auth } } },
      { mcpServers: { opentabs: { type: 'http', url: `${url}/gateway`, headers: auth } } },
      // Stdio clients: a command that runs from anywhere (opentabs is not on the test's PATH).
      { mcpServers: { opentabs: { command: process.execPath, args: [...bunRunArgs(), MAIN, 'mcp'], env: { OPENTABS_CONFIG_DIR: cfg() } } } },
    ]);
    // The config dir is not the default: each command carries it, so it runs from a shell without OPENTABS_CONFIG_DIR.
    const cli = `OPENTABS_CONFIG_DIR=${cfg()} ${PRINTED.join(' ')}`;
    expect(r.stdout).toContain(`Use \`${cli} tool list\` and \`${cli} tool call <name> '<json>'\``);
    expect(r.stdout).toContain(`Stop with \`${cli} stop\``);
    expect(r.stdout).toContain(`Load unpacked → ${join(cfg(), 'extension')}`);
    // The printed config really works: the secret authenticates against /health.
    const full = (await (await fetch(`http://127.0.0.1:${port}/health`, { headers: auth })).json()) as { version?: string };
    expect(typeof full.version).toBe('string');
    // Logs went to server.log — and the secret did not.
    const log = readFileSync(join(cfg(), 'server.log'), 'utf8');
    expect(log).toContain('listening');
    expect(log).not.toContain(secret);
    expect(r.stdout).not.toContain(JSON.parse(readFileSync(join(cfg(), 'extension', 'auth.json'), 'utf8')).secret as string);
  });

  test('start again on the same port: says it is already running, exit 0, no second server', async () => {
    const r = await runCli(['start', '--port', String(port)], { configDir: cfg() });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('already running');
    expect(pidOf(cfg()).pid).toBe(pid);
    // Not a first run any more: no config blocks unless asked.
    expect(r.stdout).not.toContain('claude mcp add');
    const shown = await runCli(['start', '--port', String(port), '--show-config'], { configDir: cfg() });
    expect(shown.stdout).toContain('claude mcp add');
    // --show-config adds the VS Code and Gemini settings.json blocks that the first-run banner leaves out.
    // What the printed entries carry: the client token, not the secret of auth.json.
    const secret = JSON.parse(readFileSync(join(cfg(), 'client-token.json'), 'utf8')).clientToken as string;
    const url = `http://127.0.0.1:${port}/mcp`;
    const headers = { Authorization: `Bearer ${secret}` };
    expect(jsonBlocks(shown.stdout)).toContainEqual({ servers: { opentabs: { type: 'http', url, headers } } });
    expect(jsonBlocks(shown.stdout)).toContainEqual({ mcpServers: { opentabs: { httpUrl: url, headers } } });
  });

  test('status finds the background server through server.pid', async () => {
    const r = await runCli(['status', '--json'], { configDir: cfg() });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ running: true, url: `http://127.0.0.1:${port}` });
  });

  test('one server per config dir: start without --port finds it; another port is refused', async () => {
    const plain = await runCli(['start'], { configDir: cfg() });
    expect(plain.code).toBe(0);
    expect(plain.stdout).toContain(`already running on http://127.0.0.1:${port} (pid ${pid})`);
    const other = await runCli(['start', '--port', '0'], { configDir: cfg() });
    expect(other.code).toBe(1);
    expect(other.stderr).toContain(`already running for config dir ${cfg()} on http://127.0.0.1:${port}`);
    // Nothing second was started and the first server's pid file is intact.
    expect(pidOf(cfg())).toMatchObject({ pid, port });
    expect(pidAlive(pid)).toBe(true);
  });

  test('stop: SIGTERM, waits until the process is gone, pid file removed, port free', async () => {
    const r = await runCli(['stop'], { configDir: cfg() });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`Stopped OpenTabs server (pid ${pid})`);
    expect(pidAlive(pid)).toBe(false);
    expect(existsSync(join(cfg(), 'server.pid'))).toBe(false);
    await expect(fetch(`http://127.0.0.1:${port}/health`)).rejects.toThrow();
    const again = await runCli(['stop'], { configDir: cfg() });
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('not running');
  });
});

describe('port conflicts', () => {
  test('a port held by another HTTP program: clear message, exit 1, nothing started', async () => {
    const foreign = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response('<html>other app</html>', { headers: { server: 'other-app' } }) });
    const cfg = join(root, 'conflict');
    try {
      const r = await runCli(['start', '--port', String(foreign.port)], { configDir: cfg });
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(`Port ${foreign.port} is in use by another program`);
      expect(r.stderr).toContain('other-app');
      expect(existsSync(join(cfg, 'server.pid'))).toBe(false);
    } finally {
      foreign.stop(true);
    }
  });

  test('PORT env is used when --port is absent', async () => {
    const foreign = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response('x', { status: 404 }) });
    try {
      const r = await runCli(['start'], { configDir: join(root, 'envport'), env: { PORT: String(foreign.port) } });
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(`Port ${foreign.port} is in use`);
    } finally {
      foreign.stop(true);
    }
  });
});

describe('foreground start', () => {
  test('prints the URL, serves, --dev sets dev mode, SIGTERM stops it cleanly', async () => {
    const cfg = join(root, 'fg');
    const proc = Bun.spawn([process.execPath, MAIN, 'start', '--port', '0', '--dev'], {
      cwd: ROOT,
      env: cliEnv(cfg),
      stdout: 'pipe',
      stderr: 'pipe',
    });
    started.push(proc.pid);
    const out = collect(proc.stdout);
    const m = await out.until(/listening on (http:\/\/127\.0\.0\.1:(\d+))/, 60_000);
    expect(m).not.toBeNull();
    const base = m![1];
    // First run in a fresh dir: config blocks follow the URL.
    expect(await out.until(/Show this again/, 30_000)).not.toBeNull();
    expect(out.text()).toContain('claude mcp add');
    const secret = JSON.parse(readFileSync(join(cfg, 'extension', 'auth.json'), 'utf8')).secret;
    const h = (await (await fetch(`${base}/health`, { headers: { Authorization: `Bearer ${secret}` } })).json()) as { mode: string };
    expect(h.mode).toBe('dev');
    proc.kill('SIGTERM');
    const code = await proc.exited;
    expect(code).toBe(0);
    expect(existsSync(join(cfg, 'server.pid'))).toBe(false);
  });

  test('the banner\'s `stop` command, run as printed from a shell without OPENTABS_CONFIG_DIR, stops a foreground server', async () => {
    const cfg = join(root, 'fg-stop-as-printed');
    const proc = Bun.spawn([process.execPath, MAIN, 'start', '--port', '0'], { cwd: ROOT, env: cliEnv(cfg), stdout: 'pipe', stderr: 'pipe' });
    started.push(proc.pid);
    const out = collect(proc.stdout);
    expect(await out.until(/Stop with Ctrl-C or `[^`]+`/, 60_000)).not.toBeNull();
    const printed = /Stop with Ctrl-C or `([^`]+)`/.exec(out.text())![1];
    // OPENTABS_CONFIG_DIR only as the command line gives it, and a HOME without ~/.opentabs.
    const home = join(root, 'fg-stop-home');
    mkdirSync(home, { recursive: true });
    const env = cliEnv(cfg, { OPENTABS_CONFIG_DIR: undefined, HOME: home });
    const stop = Bun.spawn(['sh', '-c', printed], { cwd: ROOT, env, stdout: 'pipe', stderr: 'pipe' });
    const [stdout, code] = await Promise.all([new Response(stop.stdout).text(), stop.exited]);
    expect({ code, stdout }).toMatchObject({ code: 0, stdout: expect.stringContaining(`Stopped OpenTabs server (pid ${proc.pid})`) });
    expect(await proc.exited).toBe(0);
    expect(existsSync(join(cfg, 'server.pid'))).toBe(false);
  });

  test('a stop that fails part-way still ends the process, with exit code 1', async () => {
    // `start` waits for its server's stop to settle; a step that throws must still settle it, or
    // the process would outlive its server.
    const cfg = join(root, 'fg-stop-fails');
    const proc = Bun.spawn([process.execPath, MAIN, 'start', '--port', '0'], { cwd: ROOT, env: cliEnv(cfg), stdout: 'pipe', stderr: 'pipe' });
    started.push(proc.pid);
    const out = collect(proc.stdout);
    const m = await out.until(/listening on (http:\/\/127\.0\.0\.1:(\d+))/, 60_000);
    expect(m).not.toBeNull();
    // server.pid turned into a folder with a file in it: removing it at the end of stop() throws.
    rmSync(join(cfg, 'server.pid'));
    mkdirSync(join(cfg, 'server.pid'));
    writeFileSync(join(cfg, 'server.pid', 'keep'), '');
    proc.kill('SIGTERM');
    expect(await proc.exited).toBe(1);
    expect(readFileSync(join(cfg, 'server.log'), 'utf8')).toContain('stop_failed');
  });
});
