/**
 * SIGTERM with calls in flight: every caller gets a proper error naming the shutdown — a REST
 * JSON error, an MCP tool error result, an approval wait ended — instead of a reset connection,
 * and the process still exits (bounded) with its audit entries on disk.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { FakeExtension } from '../harness/fake-extension.ts';
import { makeTempConfigDir, removeDir } from '../harness/server.ts';

setDefaultTimeout(60_000);
const SERVE = resolve(import.meta.dir, '../../server/serve.ts');
const script = `
const { runForeground } = await import(${JSON.stringify(SERVE)});
const s = await runForeground({ port: 0, configDir: process.env.DIR, installExtension: false, quiet: true });
await s.ready;
process.stdout.write('READY ' + s.url + '\\n');
`;

let dir: string;
let child: ChildProcess;
let url = '';
let secret = '';
beforeAll(async () => {
  dir = makeTempConfigDir('opentabs-shutdown-');
  // One built-in tool asks first, so a call can be waiting for approval when the signal comes.
  writeFileSync(join(dir, 'config.json'), JSON.stringify({ schemaVersion: 1, localPlugins: [], permissions: { browser: { tools: { browser_list_windows: 'ask' } } }, pluginSettings: {} }));
  child = spawn(process.execPath, ['-e', script], { env: { ...process.env, DIR: dir }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  await new Promise<void>((res, rej) => {
    const timer = setTimeout(() => rej(new Error(`server did not start: ${out}`)), 30_000);
    child.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
      const m = /READY (\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        url = m[1]!;
        res();
      }
    });
  });
  secret = JSON.parse(readFileSync(join(dir, 'extension', 'auth.json'), 'utf8')).secret;
});
afterAll(() => {
  if (child.exitCode === null) child.kill('SIGKILL');
  removeDir(dir);
});

test('SIGTERM answers every pending call with server_shutting_down, then exits', async () => {
  const ext = await FakeExtension.connect(url, secret);
  const dispatched: string[] = [];
  // The extension takes the calls and never answers them.
  ext.onDispatch('browser_list_tabs', (p) => {
    dispatched.push(p.dispatchId);
    return new Promise(() => {});
  });
  const auth = { authorization: `Bearer ${secret}`, 'content-type': 'application/json' };
  const rest = fetch(`${url}/tools/browser_list_tabs/call`, { method: 'POST', headers: auth, body: '{}' });
  const approval = fetch(`${url}/tools/browser_list_windows/call`, { method: 'POST', headers: auth, body: '{}' });

  const mcp = new Client({ name: 'shutdown-test', version: '1' });
  await mcp.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${secret}` } } }));
  const viaMcp = mcp.callTool({ name: 'browser_list_tabs', arguments: {} }).then(
    (r) => ({ ok: true as const, r }),
    (e: unknown) => ({ ok: false as const, e }),
  );

  // Both dispatches reached the extension and the approval is waiting.
  for (let i = 0; i < 200 && (dispatched.length < 2 || ext.sent('confirmation.request').length === 0); i++) await Bun.sleep(25);
  expect(dispatched.length).toBe(2);
  expect(ext.sent('confirmation.request').length > 0).toBe(true);

  const exited = new Promise<number | null>((res) => child.on('exit', (code) => res(code)));
  child.kill('SIGTERM');

  for (const [what, res] of [['REST call', await rest], ['call waiting for approval', await approval]] as const) {
    expect({ what, status: res.status }).toEqual({ what, status: 503 });
    const body = (await res.json()) as { error: { code: string; message: string; retryable?: boolean } };
    expect(body.error.code).toBe('server_shutting_down');
    expect(body.error.message).toContain('shutting down');
    expect(body.error.retryable).toBe(true);
  }
  const m = await viaMcp;
  expect(m.ok).toBe(true);
  if (m.ok) {
    expect(m.r.isError).toBe(true);
    expect(JSON.stringify(m.r.content)).toContain('shutting down');
  }
  expect(await exited).toBe(0);
  // The ended calls are in the audit log.
  const audit = readFileSync(join(dir, 'audit.log'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  expect(audit.filter((e) => e.error?.code === 'server_shutting_down').length).toBe(3);
  await mcp.close().catch(() => {});
  await ext.close().catch(() => {});
});
