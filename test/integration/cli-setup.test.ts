/**
 * `opentabs setup opencode`: opencode.json merged atomically without losing keys, a broken file
 * left untouched, and the generated OpenCode plugin file — it type-checks against
 * @opencode-ai/plugin, loads in Bun, and its hooks behave against a real server.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';

// Every test spawns CLI processes on a shared machine: room, not a speed assertion.
setDefaultTimeout(120_000);
import { mkdirSync, readFileSync, readdirSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestServer, type TestServer } from '../harness/server.ts';
import { FakeExtension, writeTestPlugin } from '../harness/fake-extension.ts';
import { ROOT, removeDir, runCli, tempDir } from './cli-support.ts';

let root: string;
let srv: TestServer;
let ext: FakeExtension;

const writePlugin = (parent: string): string =>
  writeTestPlugin(parent, 'demo', [{ name: 'echo', description: 'Echo', inputSchema: { type: 'object', properties: {} } }]);

beforeAll(async () => {
  root = tempDir();
  const cfg = join(root, 'state');
  mkdirSync(cfg, { recursive: true });
  writeFileSync(join(cfg, 'config.json'), JSON.stringify({ localPlugins: [writePlugin(root)] }));
  srv = await startTestServer({ configDir: cfg });
  ext = await FakeExtension.connect(srv.url, srv.secret);
  ext.notify('tab.syncAll', {
    plugins: { demo: { state: 'ready', tabs: [{ tabId: 42, url: 'http://127.0.0.1/app', title: 'Demo App', ready: true }] } },
  });
});
afterAll(async () => {
  await ext?.close().catch(() => {});
  await srv?.stop();
  removeDir(root);
});

describe('setup opencode', () => {
  test('merges the mcp entry into an existing opencode.json, keeping every other key', async () => {
    const proj = join(root, 'proj');
    mkdirSync(proj, { recursive: true });
    const before = { $schema: 'https://opencode.ai/config.json', theme: 'tokyonight', mcp: { other: { type: 'local', command: ['x'] } }, agent: { build: { model: 'm' } } };
    writeFileSync(join(proj, 'opencode.json'), JSON.stringify(before, null, 2));
    const r = await runCli(['setup', 'opencode', '--dir', proj], { configDir: srv.configDir });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('Added mcp.opentabs');
    const after = JSON.parse(readFileSync(join(proj, 'opencode.json'), 'utf8'));
    expect(after).toEqual({
      ...before,
      mcp: {
        other: before.mcp.other,
        opentabs: { type: 'remote', url: `${srv.url}/mcp`, headers: { Authorization: `Bearer ${srv.clientToken}` }, enabled: true },
      },
    });
    // Atomic write: no temp files left beside it.
    expect(readdirSync(proj).sort()).toEqual(['.opencode', 'opencode.json']);
    // OpenCode shows a session refused by the server's limit as an SSE error: the note says so,
    // with the limit in force and a command that raises it, which runs as printed.
    const note = /note: OpenCode starts an MCP session each time it runs, and the server allows (\d+) new sessions a minute; past that OpenCode shows "SSE error: Non-200 status code \(400\)"\. Wait a minute, or allow more: `([^`]+)`/.exec(r.stderr);
    expect(note?.[1]).toBe('5');
    const raise = note![2]!.split(' ');
    expect(raise.slice(-4)).toEqual(['config', 'set', 'mcpSessionsPerMinute', '30']);
    expect((await runCli(raise.slice(-4), { configDir: srv.configDir })).stdout).toContain('mcpSessionsPerMinute set to 30.');
    const raised = await runCli(['setup', 'opencode', '--dir', proj], { configDir: srv.configDir });
    expect(raised.stderr).toContain('the server allows 30 new sessions a minute');
    // Re-running updates in place; --gateway switches the URL.
    const again = await runCli(['setup', 'opencode', '--dir', proj, '--gateway'], { configDir: srv.configDir });
    expect(again.stdout).toContain('Updated mcp.opentabs');
    expect(JSON.parse(readFileSync(join(proj, 'opencode.json'), 'utf8')).mcp.opentabs.url).toBe(`${srv.url}/mcp/gateway`);
  });

  test('a new opencode.json gets $schema and mode 0600 (it holds the client token)', async () => {
    const proj = join(root, 'fresh');
    mkdirSync(proj, { recursive: true });
    expect((await runCli(['setup', 'opencode', '--dir', proj], { configDir: srv.configDir })).code).toBe(0);
    const cfg = JSON.parse(readFileSync(join(proj, 'opencode.json'), 'utf8'));
    expect(cfg.$schema).toBe('https://opencode.ai/config.json');
    expect(statSync(join(proj, 'opencode.json')).mode & 0o777).toBe(0o600);
  });

  test('an unparsable opencode.json is left unchanged with a clear error', async () => {
    const proj = join(root, 'broken');
    mkdirSync(proj, { recursive: true });
    const text = '{ "theme": "x", // a comment\n }';
    writeFileSync(join(proj, 'opencode.json'), text);
    const r = await runCli(['setup', 'opencode', '--dir', proj], { configDir: srv.configDir });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('is not valid JSON');
    expect(readFileSync(join(proj, 'opencode.json'), 'utf8')).toBe(text);
    const missing = await runCli(['setup', 'opencode', '--dir', join(root, 'nope')], { configDir: srv.configDir });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('does not exist');
    writeFileSync(join(root, 'a-file'), 'x');
    const notDir = await runCli(['setup', 'opencode', '--dir', join(root, 'a-file')], { configDir: srv.configDir });
    expect(notDir.code).toBe(1);
    expect(notDir.stderr).toContain('is not a folder');
  });

  test('the generated plugin type-checks against @opencode-ai/plugin', async () => {
    const proj = join(root, 'typed');
    mkdirSync(proj, { recursive: true });
    expect((await runCli(['setup', 'opencode', '--dir', proj], { configDir: srv.configDir })).code).toBe(0);
    const file = join(proj, '.opencode', 'plugin', 'opentabs.ts');
    expect(readFileSync(file, 'utf8')).toContain("import type { Plugin } from '@opencode-ai/plugin'");
    symlinkSync(join(ROOT, 'node_modules'), join(proj, 'node_modules'));
    const tsc = Bun.spawn(
      [
        join(ROOT, 'node_modules', '.bin', 'tsc'), '--noEmit', '--strict', '--skipLibCheck', '--target', 'es2022', '--module', 'esnext',
        '--moduleResolution', 'bundler', '--types', 'bun-types', '--lib', 'es2023,dom', file,
      ],
      { cwd: proj, stdout: 'pipe', stderr: 'pipe' },
    );
    const timer = setTimeout(() => tsc.kill('SIGKILL'), 170_000);
    const [out, code] = await Promise.all([new Response(tsc.stdout).text(), tsc.exited]);
    clearTimeout(timer);
    expect(out).toBe('');
    expect(code).toBe(0);
  }, 180_000);

  test('the generated plugin loads in Bun and its hooks log calls and add browser state on compaction', async () => {
    const proj = join(root, 'hooks');
    mkdirSync(proj, { recursive: true });
    expect((await runCli(['setup', 'opencode', '--dir', proj], { configDir: srv.configDir })).code).toBe(0);
    const mod = (await import(join(proj, '.opencode', 'plugin', 'opentabs.ts'))) as { OpenTabsPlugin: (input: unknown) => Promise<Record<string, Function>>; default: unknown };
    expect(mod.default).toBe(mod.OpenTabsPlugin);
    const logged: Array<{ body: { service: string; level: string; message: string; extra?: Record<string, unknown> } }> = [];
    const hooks = await mod.OpenTabsPlugin({ client: { app: { log: async (x: (typeof logged)[number]) => void logged.push(x) } } });

    await hooks['tool.execute.before']({ tool: 'bash', sessionID: 's1', callID: 'c0' }, { args: {} });
    expect(logged).toHaveLength(0);
    await hooks['tool.execute.before']({ tool: 'opentabs_demo_echo', sessionID: 's1', callID: 'c1' }, { args: { text: 'hi' } });
    await hooks['tool.execute.after']({ tool: 'opentabs_demo_echo', sessionID: 's1', callID: 'c1', args: { text: 'hi' } }, { title: 'demo_echo', output: '{"text":"hi"}', metadata: {} });
    expect(logged.map((l) => l.body.message)).toEqual(['OpenTabs tool call: demo_echo', 'OpenTabs tool done: demo_echo']);
    expect(logged[0].body).toMatchObject({ service: 'opentabs', level: 'info', extra: { tool: 'demo_echo', args: { text: 'hi' } } });
    expect(typeof logged[1].body.extra?.durationMs).toBe('number');

    const output = { context: [] as string[] };
    await hooks['experimental.session.compacting']({ sessionID: 's1' }, output);
    expect(output.context).toHaveLength(1);
    const text = output.context[0];
    expect(text).toContain('Chrome extension: connected');
    expect(text).toContain('Plugin demo (ready): tab 42 "Demo App" http://127.0.0.1/app');
    expect(text).toContain('demo_echo ×1');

    // With the server gone the hook still answers, saying so.
    const port = srv.port;
    await ext.close();
    await srv.stop();
    const out2 = { context: [] as string[] };
    await hooks['experimental.session.compacting']({ sessionID: 's2' }, out2);
    expect(out2.context[0]).toContain(`not reachable at http://127.0.0.1:${port}`);
  });
});
