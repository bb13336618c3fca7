/**
 * `opentabs mcp` whose stdin ends right after the requests (`printf … | opentabs mcp`, or a client
 * that writes its last request and closes): every request still gets its answer on stdout before
 * the bridge exits (it exited at once and wrote nothing).
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { MAIN, cliEnv, killPid, removeDir, runCli, tempDir } from './cli-support.ts';

setDefaultTimeout(180_000);

let root: string;
let cfg: string;
let port = 0;
let pid = 0;

beforeAll(async () => {
  root = tempDir();
  cfg = join(root, 'config');
  const start = await runCli(['start', '--background', '--port', '0'], { configDir: cfg, timeoutMs: 120_000 });
  expect(start.code).toBe(0);
  ({ pid, port } = JSON.parse(readFileSync(join(cfg, 'server.pid'), 'utf8')));
});

afterAll(async () => {
  if (pid) await killPid(pid);
  removeDir(root);
});

test('requests written before stdin ends are all answered, then the bridge exits 0', async () => {
  const line = (m: object) => `${JSON.stringify(m)}\n`;
  const input =
    line({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } }) +
    line({ jsonrpc: '2.0', method: 'notifications/initialized' }) +
    line({ jsonrpc: '2.0', id: 2, method: 'tools/list' }) +
    line({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'browser_list_tabs', arguments: {} } });
  const bridge = Bun.spawn([process.execPath, MAIN, 'mcp', '--no-start', '--port', String(port)], {
    env: cliEnv(cfg),
    stdin: new Blob([input]),
    stdout: 'pipe',
    stderr: 'pipe',
  });
  const timer = setTimeout(() => bridge.kill('SIGKILL'), 90_000);
  const [stdout, stderr, code] = await Promise.all([new Response(bridge.stdout).text(), new Response(bridge.stderr).text(), bridge.exited]);
  clearTimeout(timer);
  const answers = stdout
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { id?: number; result?: { tools?: unknown[]; isError?: boolean; content?: Array<{ text: string }> } });
  expect({ code, ids: answers.map((a) => a.id).filter((id) => id !== undefined), stderr: code === 0 ? '' : stderr }).toEqual({ code: 0, ids: [1, 2, 3], stderr: '' });
  expect(answers.find((a) => a.id === 2)?.result?.tools?.length).toBeGreaterThan(0);
  // No extension in this test: the call is answered with that tool error, not dropped.
  expect(answers.find((a) => a.id === 3)?.result?.content?.[0]?.text).toContain('extension_not_connected');
});
