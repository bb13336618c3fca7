/**
 * CLI commands against a real server (in-process, port 0, temp config dir) with a scripted fake
 * extension: status, tool list/schema/call, config show/set/rotate-secret, audit, logs, plugin
 * add/list/configure/remove with a hand-made plugin folder. The CLI runs as a subprocess and
 * finds the server through <config dir>/server.pid, as a user's shell would.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';

// Every test spawns CLI processes on a shared machine: room, not a speed assertion.
setDefaultTimeout(120_000);
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestServer, type TestServer } from '../harness/server.ts';
import { FakeExtension, writeTestPlugin } from '../harness/fake-extension.ts';
import { MAIN, ROOT, cliEnv, collect, removeDir, runCli, tempDir } from './cli-support.ts';

let root: string;
let cfg: string;
let srv: TestServer;
let ext: FakeExtension | null = null;

/** The demo plugin (one tool, a settings schema of every field type) in <parent>/plugin-demo. */
const writePlugin = (parent: string): string =>
  writeTestPlugin(
    parent,
    'demo',
    [{ name: 'echo', description: 'Echo the text back', inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] } }],
    {
      baseUrl: { type: 'url', label: 'Base URL', default: 'http://127.0.0.1/' },
      pageSize: { type: 'number', default: 20, description: 'Items per page' },
      verbose: { type: 'boolean', default: false },
      mode: { type: 'select', options: ['fast', 'safe'], default: 'safe' },
    },
  );

const cli = (args: string[], extra: Partial<Parameters<typeof runCli>[1]> = {}) => runCli(args, { configDir: cfg, ...extra });

beforeAll(async () => {
  root = tempDir();
  cfg = join(root, 'state');
  srv = await startTestServer({ configDir: cfg, limits: { adminRate: { max: 10_000, windowMs: 60_000 } } });
});
afterAll(async () => {
  await ext?.close().catch(() => {});
  await srv?.stop();
  removeDir(root);
});

describe('status', () => {
  test('human and --json, extension disconnected then connected', async () => {
    const r = await cli(['status']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`running on ${srv.url}`);
    expect(r.stdout).toContain('not connected');
    ext = await FakeExtension.connect(srv.url, srv.secret);
    const j = await cli(['status', '--json']);
    expect(j.code).toBe(0);
    const body = JSON.parse(j.stdout);
    expect(body).toMatchObject({ running: true, url: srv.url, status: 'ok', extensionConnected: true, configDir: cfg });
    expect(body.browserToolCount).toBeGreaterThan(0);
  });
});

describe('tool', () => {
  test('list (text, --json, --plugin browser) and schema', async () => {
    const text = await cli(['tool', 'list']);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain('browser_list_tabs');
    const j = JSON.parse((await cli(['tool', 'list', '--json', '--plugin', 'browser'])).stdout) as Array<{ name: string; plugin: string; inputSchema: unknown }>;
    expect(j.length).toBeGreaterThan(0);
    expect(j.every((t) => t.plugin === 'browser')).toBe(true);
    const listTabs = j.find((t) => t.name === 'browser_list_tabs');
    const schema = await cli(['tool', 'schema', 'browser_list_tabs']);
    expect(schema.code).toBe(0);
    expect(JSON.parse(schema.stdout)).toEqual(listTabs!.inputSchema);
    const unknown = await cli(['tool', 'schema', 'nope_nothing']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('Unknown tool "nope_nothing"');
    const badPlugin = await cli(['tool', 'list', '--plugin', 'nosuchplugin']);
    expect(badPlugin.code).toBe(1);
    expect(badPlugin.stderr).toContain('nosuchplugin');
  });

  test('call: result printed as JSON; arguments (inline and from stdin) reach the extension', async () => {
    const seen: unknown[] = [];
    ext!.onDispatch('browser_list_tabs', (p) => {
      seen.push(p);
      return { value: { tabs: [{ tabId: 7, url: 'http://127.0.0.1/x', title: 'X' }] } };
    });
    const r = await cli(['tool', 'call', 'browser_list_tabs']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ tabs: [{ tabId: 7, url: 'http://127.0.0.1/x', title: 'X' }] });
    expect(seen.length).toBe(1);
    // Arguments from stdin ("-").
    const viaStdin = await cli(['tool', 'call', 'browser_list_tabs', '-'], { stdin: '{}' });
    expect(viaStdin.code).toBe(0);
    expect(seen.length).toBe(2);
  });

  test('call: --tab-id is a built-in tool\'s own tabId argument; a contradicting one is refused', async () => {
    const seen: unknown[] = [];
    ext!.onDispatch('browser_get_tab_info', (p) => {
      seen.push(p.input);
      return { value: { tabId: 9, url: 'http://127.0.0.1/x', title: 'X' } };
    });
    const r = await cli(['tool', 'call', 'browser_get_tab_info', '--tab-id', '9']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(seen).toEqual([{ tabId: 9 }]);
    const clash = await cli(['tool', 'call', 'browser_get_tab_info', '{"tabId":3}', '--tab-id', '9']);
    expect(clash.code).toBe(2);
    expect(clash.stderr).toContain('--tab-id 9 contradicts');
    expect(seen.length).toBe(1);
  });

  test('call: tool errors go to stderr with exit 1', async () => {
    const unknown = await cli(['tool', 'call', 'nope_nothing', '{}']);
    expect(unknown.code).toBe(1);
    expect(unknown.stdout).toBe('');
    expect(unknown.stderr).toContain('nope_nothing');
    const invalid = await cli(['tool', 'call', 'browser_list_tabs', '{"unexpected": 1}']);
    // Either rejected by the schema (additionalProperties) or accepted; never a crash.
    expect([0, 1]).toContain(invalid.code);
    const { FakeToolError } = await import('../harness/fake-extension.ts');
    ext!.onDispatch('browser_list_tabs', () => {
      throw new FakeToolError('tool_error', 'the page said no');
    });
    const failing = await cli(['tool', 'call', 'browser_list_tabs']);
    expect(failing.code).toBe(1);
    expect(failing.stderr).toContain('the page said no');
  });

  test('call with the extension disconnected: exit 1, says so', async () => {
    await ext!.close();
    ext = null;
    const r = await cli(['tool', 'call', 'browser_list_tabs']);
    expect(r.code).toBe(1);
    expect(r.stderr.toLowerCase()).toContain('extension');
    ext = await FakeExtension.connect(srv.url, srv.secret);
  });
});

describe('config', () => {
  test('show --json --show-secret gives the secret, port and config dir', async () => {
    const r = await cli(['config', 'show', '--json', '--show-secret']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ secret: srv.secret, port: srv.port, configDir: cfg, running: true });
    const hidden = JSON.parse((await cli(['config', 'show', '--json'])).stdout);
    expect(hidden.secret).toBeUndefined();
    const text = await cli(['config', 'show']);
    expect(text.stdout).not.toContain(srv.secret);
    expect(text.stdout).toContain(srv.secret.slice(0, 4));
  });

  test('set permission of a browser tool: config.json changes and the running server applies it', async () => {
    const r = await cli(['config', 'set', 'permission.browser_list_tabs', 'off']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('reloaded');
    const file = JSON.parse(readFileSync(join(cfg, 'config.json'), 'utf8'));
    expect(file.permissions.browser.tools.browser_list_tabs).toBe('off');
    const tools = JSON.parse((await cli(['tool', 'list', '--json', '--plugin', 'browser'])).stdout) as Array<{ name: string; permission: string }>;
    expect(tools.find((t) => t.name === 'browser_list_tabs')?.permission).toBe('off');
    const call = await cli(['tool', 'call', 'browser_list_tabs']);
    expect(call.code).toBe(1);
    expect(call.stderr).toContain('config set');
    await cli(['config', 'set', 'permission.browser.browser_list_tabs', 'auto']);
    const again = JSON.parse((await cli(['tool', 'list', '--json', '--plugin', 'browser'])).stdout) as Array<{ name: string; permission: string }>;
    expect(again.find((t) => t.name === 'browser_list_tabs')?.permission).toBe('auto');
  });

  test('set skipPermissions', async () => {
    expect((await cli(['config', 'set', 'skipPermissions', 'true'])).code).toBe(0);
    expect(JSON.parse(readFileSync(join(cfg, 'config.json'), 'utf8')).skipPermissions).toBe(true);
    const health = await (await fetch(`${srv.url}/health`, { headers: srv.auth })).json();
    expect((health as { skipPermissions: boolean }).skipPermissions).toBe(true);
    expect((await cli(['config', 'set', 'skipPermissions', 'false'])).code).toBe(0);
  });
});

describe('plugin', () => {
  let pluginDir: string;
  test('add → list → tool list --plugin', async () => {
    pluginDir = writePlugin(root);
    const add = await cli(['plugin', 'add', pluginDir]);
    expect(add.stderr).toBe('');
    expect(add.code).toBe(0);
    expect(add.stdout).toContain('Added plugin "demo"');
    const list = JSON.parse((await cli(['plugin', 'list', '--json'])).stdout);
    expect(list.plugins.map((p: { name: string }) => p.name)).toEqual(['demo']);
    const tools = JSON.parse((await cli(['tool', 'list', '--json', '--plugin', 'demo'])).stdout) as Array<{ name: string; permission: string }>;
    expect(tools.map((t) => t.name)).toEqual(['demo_echo']);
    expect(tools[0].permission).toBe('ask');
    const text = await cli(['plugin', 'list']);
    expect(text.stdout).toContain('demo');
    expect(text.stdout).toContain('1 tool ');
  });

  test('configure: print settings, set typed values via /plugin-settings, reject bad ones', async () => {
    const show = await cli(['plugin', 'configure', 'demo', '--json']);
    expect(show.code).toBe(0);
    expect(JSON.parse(show.stdout).settings).toEqual({ baseUrl: 'http://127.0.0.1/', pageSize: 20, verbose: false, mode: 'safe' });
    const set = await cli(['plugin', 'configure', 'demo', 'pageSize=50', 'verbose=true', 'mode=fast']);
    expect(set.stderr).toBe('');
    expect(set.code).toBe(0);
    expect(set.stdout).toContain('applied by the running server');
    expect(srv.ctx.plugins.resolvedSettings('demo')).toMatchObject({ pageSize: 50, verbose: true, mode: 'fast' });
    const text = await cli(['plugin', 'configure', 'demo']);
    expect(text.stdout).toContain('pageSize');
    expect(text.stdout).toContain('50');
    const badNumber = await cli(['plugin', 'configure', 'demo', 'pageSize=lots']);
    expect(badNumber.code).toBe(2);
    expect(badNumber.stderr).toContain('must be a number');
    const badKey = await cli(['plugin', 'configure', 'demo', 'colour=red']);
    expect(badKey.code).toBe(2);
    expect(badKey.stderr).toContain('Unknown setting "colour"');
    const badUrl = await cli(['plugin', 'configure', 'demo', 'baseUrl=notaurl']);
    expect(badUrl.code).toBe(1);
    expect(badUrl.stderr).toContain('baseUrl');
    const viaConfigSet = await cli(['config', 'set', 'plugin.demo.pageSize', '7']);
    expect(viaConfigSet.code).toBe(0);
    expect(srv.ctx.plugins.resolvedSettings('demo').pageSize).toBe(7);
  });

  test('config set permission.<plugin>.<tool> with the prefixed name; plugin default', async () => {
    expect((await cli(['config', 'set', 'permission.demo.demo_echo', 'auto'])).code).toBe(0);
    expect(srv.ctx.config.get().permissions.demo?.tools?.echo).toBe('auto');
    expect((await cli(['config', 'set', 'permission.demo', 'off'])).code).toBe(0);
    expect(srv.ctx.config.get().permissions.demo?.default).toBe('off');
    // The full tool name alone sets that tool, not a plugin called "demo_echo".
    expect((await cli(['config', 'set', 'permission.demo_echo', 'ask'])).code).toBe(0);
    expect(srv.ctx.config.get().permissions.demo?.tools?.echo).toBe('ask');
    expect(srv.ctx.config.get().permissions.demo_echo).toBeUndefined();
    const bad = await cli(['config', 'set', 'permission.Demo.echo', 'ask']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('"Demo" is not a plugin name');
  });

  test('remove unlists it and the server unloads it', async () => {
    const r = await cli(['plugin', 'remove', 'demo']);
    expect(r.code).toBe(0);
    expect(srv.ctx.plugins.get('demo')).toBeUndefined();
    const again = await cli(['plugin', 'remove', 'demo']);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('No plugin named "demo"');
  });

  test('add of a folder without package.json is a clear error', async () => {
    const empty = join(root, 'empty');
    mkdirSync(empty, { recursive: true });
    const r = await cli(['plugin', 'add', empty]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('package.json');
  });
});

describe('audit and logs', () => {
  test('audit shows the calls made above, from the server and from the file', async () => {
    const j = JSON.parse((await cli(['audit', '--json', '--tool', 'browser_list_tabs'])).stdout) as Array<{ tool: string; success: boolean }>;
    expect(j.length).toBeGreaterThanOrEqual(3);
    expect(j.some((e) => e.success)).toBe(true);
    expect(j.some((e) => !e.success)).toBe(true);
    const failures = JSON.parse((await cli(['audit', '--json', '--success', 'false', '--limit', '500'])).stdout) as Array<{ success: boolean }>;
    expect(failures.every((e) => !e.success)).toBe(true);
    const file = JSON.parse((await cli(['audit', '--file', '--json', '--tool', 'browser_list_tabs'])).stdout) as unknown[];
    expect(file.length).toBe(j.length);
  });

  test('logs prints server.log lines readably', async () => {
    const r = await cli(['logs', '-n', '200']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('listening');
    expect(r.stdout).not.toContain('{"ts"');
    const raw = await cli(['logs', '--json', '-n', '1']);
    expect(() => JSON.parse(raw.stdout.trim())).not.toThrow();
  });

  test('logs -f follows new lines until stopped', async () => {
    const proc = Bun.spawn([process.execPath, MAIN, 'logs', '-f', '-n', '1'], { cwd: ROOT, env: cliEnv(cfg), stdout: 'pipe', stderr: 'pipe' });
    try {
      const out = collect(proc.stdout);
      // The history line comes first, then a fresh event written after the follower started.
      expect(await out.until(/\S/, 15_000)).not.toBeNull();
      srv.ctx.log.info('cli_follow_probe', { marker: 'follow-me' });
      expect(await out.until(/cli_follow_probe marker=follow-me/, 15_000)).not.toBeNull();
    } finally {
      proc.kill('SIGTERM');
      await proc.exited;
    }
  });
});

describe('logs -f --plugin', () => {
  test('prints the plugin\'s own log entries live (MCP logging from the server)', async () => {
    const before = srv.ctx.mcp.count;
    const proc = Bun.spawn([process.execPath, MAIN, 'logs', '-f', '--plugin', 'demo'], { cwd: ROOT, env: cliEnv(cfg), stdout: 'pipe', stderr: 'pipe' });
    try {
      const out = collect(proc.stdout);
      const deadline = Date.now() + 20_000;
      // The follower opens an MCP session; keep emitting until a line shows (its stream may open a bit later).
      while (!out.text().includes('hello-from-demo') && Date.now() < deadline) {
        if (srv.ctx.mcp.count > before) {
          ext!.notify('plugin.log', { entries: [{ plugin: 'demo', level: 'info', message: 'hello-from-demo', ts: Date.now() }] });
          ext!.notify('plugin.log', { entries: [{ plugin: 'other', level: 'info', message: 'not-for-demo', ts: Date.now() }] });
        }
        await out.until(/hello-from-demo/, 300);
      }
      expect(out.text()).toContain('[demo]');
      expect(out.text()).toContain('hello-from-demo');
      expect(out.text()).not.toContain('not-for-demo');
    } finally {
      proc.kill('SIGTERM');
      await proc.exited;
    }
  });
});

describe('plugin log history', () => {
  test('GET /plugins/:name/logs serves the plugin\'s buffered entries; `logs --plugin` prints them', async () => {
    // The plugin tests above removed "demo": load it again (only loaded plugins keep a log buffer).
    const add = await cli(['plugin', 'add', writePlugin(root)]);
    expect(add.code).toBe(0);
    const loaded = Date.now() + 10_000;
    while (!srv.ctx.plugins.get('demo') && Date.now() < loaded) await Bun.sleep(20);
    ext!.notify('plugin.log', { entries: [{ plugin: 'demo', level: 'warning', message: 'buffered-demo-line', data: { n: 1 }, ts: Date.now() }] });
    const deadline = Date.now() + 10_000;
    while (!srv.ctx.plugins.logs('demo').some((e) => e.message === 'buffered-demo-line') && Date.now() < deadline) await Bun.sleep(20);

    const res = await fetch(`${srv.url}/plugins/demo/logs?limit=5`, { headers: srv.auth });
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body.plugin).toBe('demo');
    expect(body.logs.length).toBeLessThanOrEqual(5);
    expect(body.logs.at(-1)).toMatchObject({ plugin: 'demo', level: 'warning', message: 'buffered-demo-line' });

    expect((await fetch(`${srv.url}/plugins/demo/logs`)).status).toBe(401);
    const unknown = await fetch(`${srv.url}/plugins/nope/logs`, { headers: srv.auth });
    expect(unknown.status).toBe(404);
    expect((await unknown.json()).error.code).toBe('unknown_plugin');
    const bad = await fetch(`${srv.url}/plugins/demo/logs?limit=0`, { headers: srv.auth });
    expect(bad.status).toBe(400);
    expect((await bad.json()).error.message).toContain('limit');

    const r = await cli(['logs', '--plugin', 'demo']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('[demo]');
    expect(r.stdout).toContain('buffered-demo-line');
    const j = await cli(['logs', '--plugin', 'demo', '--json']);
    const line = j.stdout.split('\n').find((l) => l.includes('buffered-demo-line'))!;
    expect(JSON.parse(line)).toMatchObject({ source: 'plugin', plugin: 'demo', level: 'warning', message: 'buffered-demo-line', data: { n: 1 } });
  });
});

describe('rotate-secret (last: changes the secret)', () => {
  test('writes a new secret; the running server reloads it; old one refused', async () => {
    const old = srv.secret;
    const r = await cli(['config', 'rotate-secret']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('now uses it');
    const secret = JSON.parse(readFileSync(join(cfg, 'extension', 'auth.json'), 'utf8')).secret as string;
    expect(secret).not.toBe(old);
    expect(srv.ctx.secret).toBe(secret);
    const oldRes = await fetch(`${srv.url}/tools`, { headers: { Authorization: `Bearer ${old}` } });
    expect(oldRes.status).toBe(401);
    // The CLI reads the new secret from disk and keeps working.
    expect((await cli(['status'])).code).toBe(0);
  });
});
