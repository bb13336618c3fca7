/**
 * The bearer secret is in every MCP client's config (~/.claude.json, a project's .mcp.json or
 * .cursor/mcp.json, opencode.json, Codex's OPENTABS_SECRET variable): an agent that reads it there
 * and can send an HTTP request (a shell's curl, an HTTP tool) answered its own waiting call with
 * `POST /approvals/<id> {"decision":"allow"}`, or changed a plugin's settings, as the CLI does.
 * Both now take a second secret too, in the X-OpenTabs-Admin header: <config dir>/admin.json,
 * which no client config holds and which the `opentabs` commands read. auth.json keeps its format,
 * and everything else (MCP, tool calls, listing approvals) still takes the bearer secret alone.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { FakeExtension, startPluginServer } from '../harness/fake-extension.ts';
import type { TestServer } from '../harness/server.ts';
import { MAIN } from './cli-support.ts';

setDefaultTimeout(60_000);

let srv: TestServer;
let ext: FakeExtension;

beforeAll(async () => {
  srv = await startPluginServer({
    plugins: [{ name: 'notes', tools: [{ name: 'save' }], configSchema: { baseUrl: { type: 'url', label: 'Base URL' } } }],
    permissions: { notes: { default: 'ask' } },
  });
  ext = await FakeExtension.connect(srv.url, srv.secret);
  ext.onDispatch('notes_save', async () => ({ value: { saved: true } }));
});
afterAll(async () => {
  await ext?.close();
  await srv?.stop();
});

const json = { 'content-type': 'application/json' };

async function waitingId(): Promise<string> {
  for (let i = 0; i < 500; i++) {
    const list = (await (await fetch(`${srv.url}/approvals`, { headers: srv.bearer })).json()) as { approvals: { id: string }[] };
    if (list.approvals.length > 0) return list.approvals[0].id;
    await Bun.sleep(10);
  }
  throw new Error('no call waited for approval');
}

test('the bearer secret alone cannot answer an approval; the admin secret can', async () => {
  // The agent's call waits for the user.
  const call = fetch(`${srv.url}/tools/notes_save/call`, { method: 'POST', headers: { ...srv.bearer, ...json }, body: JSON.stringify({ arguments: {} }) });
  const id = await waitingId();

  // The agent, with the secret of its MCP config, tries to allow it.
  const forged = await fetch(`${srv.url}/approvals/${id}`, { method: 'POST', headers: { ...srv.bearer, ...json }, body: JSON.stringify({ decision: 'allow' }) });
  expect(forged.status).toBe(403);
  const body = (await forged.json()) as { error: { code: string; message: string } };
  expect(body.error.code).toBe('admin_required');
  expect(body.error.message).toContain(join(srv.configDir, 'admin.json'));
  expect(body.error.message).not.toContain(srv.adminSecret);
  // A wrong admin secret is no better.
  const wrong = await fetch(`${srv.url}/approvals/${id}`, { method: 'POST', headers: { ...srv.bearer, 'X-OpenTabs-Admin': srv.secret, ...json }, body: JSON.stringify({ decision: 'allow' }) });
  expect(wrong.status).toBe(403);
  // Still waiting.
  expect((await fetch(`${srv.url}/approvals/${id}`, { headers: srv.bearer })).status).toBe(200);

  // The user (what the CLI sends) denies it.
  const denied = await fetch(`${srv.url}/approvals/${id}`, { method: 'POST', headers: { ...srv.auth, ...json }, body: JSON.stringify({ decision: 'deny' }) });
  expect(denied.status).toBe(200);
  expect((await call).status).not.toBe(200);
});

test('the bearer secret alone cannot change a plugin\'s settings', async () => {
  const forged = await fetch(`${srv.url}/plugin-settings`, { method: 'POST', headers: { ...srv.bearer, ...json }, body: JSON.stringify({ plugin: 'notes', settings: { baseUrl: 'https://attacker.example/' } }) });
  expect(forged.status).toBe(403);
  expect(((await forged.json()) as { error: { code: string } }).error.code).toBe('admin_required');
  const config = JSON.parse(readFileSync(join(srv.configDir, 'config.json'), 'utf8')) as { plugins?: Record<string, { settings?: unknown }> };
  expect(JSON.stringify(config)).not.toContain('attacker.example');
});

test('the admin secret is its own file, mode 0600, outside the extension folder; auth.json keeps its format', () => {
  const admin = JSON.parse(readFileSync(join(srv.configDir, 'admin.json'), 'utf8')) as { adminSecret: string };
  expect(admin.adminSecret).toMatch(/^[0-9a-f]{64}$/);
  expect(admin.adminSecret).not.toBe(srv.secret);
  if (process.platform !== 'win32') expect(statSync(join(srv.configDir, 'admin.json')).mode & 0o777).toBe(0o600);
  expect(JSON.parse(readFileSync(join(srv.configDir, 'extension', 'auth.json'), 'utf8'))).toEqual({ secret: srv.secret });
});

test('opentabs deny, run by the user, still answers', async () => {
  const call = fetch(`${srv.url}/tools/notes_save/call`, { method: 'POST', headers: { ...srv.bearer, ...json }, body: JSON.stringify({ arguments: {} }) });
  const id = await waitingId();
  // The server runs in this process: the CLI runs beside it, not blocking it.
  const p = Bun.spawn([process.execPath, MAIN, 'deny', id, '--port', String(srv.port)], {
    env: { ...process.env, OPENTABS_CONFIG_DIR: srv.configDir, NO_COLOR: '1' },
    stdout: 'pipe',
    stderr: 'pipe',
  });
  const [code, stderr] = await Promise.all([p.exited, new Response(p.stderr).text()]);
  expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
  expect((await call).status).not.toBe(200);
});

test('rotate-secret makes a new admin secret: the old one no longer answers', async () => {
  const { rotateSecret } = await import('../../server/state/secret.ts');
  const oldAdmin = srv.adminSecret;
  const newSecret = await rotateSecret(srv.configDir);
  expect((await fetch(`${srv.url}/reload`, { method: 'POST', headers: srv.bearer })).status).toBe(200);
  const newAdmin = (JSON.parse(readFileSync(join(srv.configDir, 'admin.json'), 'utf8')) as { adminSecret: string }).adminSecret;
  expect(newAdmin).not.toBe(oldAdmin);
  const bearer = { Authorization: `Bearer ${newSecret}` };
  const stale = await fetch(`${srv.url}/plugin-settings`, { method: 'POST', headers: { ...bearer, 'X-OpenTabs-Admin': oldAdmin, ...json }, body: JSON.stringify({ plugin: 'notes', settings: {} }) });
  expect(stale.status).toBe(403);
  const fresh = await fetch(`${srv.url}/plugin-settings`, { method: 'POST', headers: { ...bearer, 'X-OpenTabs-Admin': newAdmin, ...json }, body: JSON.stringify({ plugin: 'notes', settings: {} }) });
  expect(fresh.status).toBe(200);
});
