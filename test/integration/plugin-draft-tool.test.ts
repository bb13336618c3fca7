/**
 * plugin_draft_from_capture, the agent's way to ask for a plugin draft: it asks first (default
 * ask), reads the tab's capture through browser_get_network_requests, writes only under
 * <config dir>/drafts/, never adds the plugin, and refuses names that are not plugin names.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TestServer } from '../harness/server.ts';
import { FakeExtension, startPluginServer } from '../harness/fake-extension.ts';

let srv: TestServer;
let ext: FakeExtension;
const O = 'https://tasks.example.com';
const capture = {
  requests: [
    { method: 'GET', url: `${O}/api/tasks`, status: 200, mimeType: 'application/json', requestHeaders: { cookie: 'sid=topsecretcookievalue1234567890' }, responseHeaders: {}, responseBody: { text: '{"tasks":[{"id":1,"done":false}]}' } },
    { method: 'POST', url: `${O}/api/tasks/1/complete`, status: 200, mimeType: 'application/json', requestHeaders: { 'x-xsrf-token': 'xsrfvalue0987654321abcdefabcdef' }, responseHeaders: {}, requestBody: { text: '{}' }, responseBody: { text: '{"id":1,"done":true}' } },
  ],
};

beforeAll(async () => {
  srv = await startPluginServer({ permissions: { browser: { tools: { plugin_draft_from_capture: 'auto' } } } });
  ext = await FakeExtension.connect(srv.url, srv.secret);
  ext.onDispatch('browser_get_network_requests', (p) => {
    expect(p.input).toEqual({ tabId: 7, includeBodies: true });
    return { value: capture };
  });
});
afterAll(async () => {
  await ext?.close();
  await srv?.stop();
});

const call = (args: unknown) =>
  fetch(`${srv.url}/tools/plugin_draft_from_capture/call`, { method: 'POST', headers: { ...srv.auth, 'content-type': 'application/json' }, body: JSON.stringify({ arguments: args }) });

test('drafts into <config dir>/drafts/ from the tab capture, without adding the plugin or writing secrets', async () => {
  const r = await call({ tabId: 7, name: 'tasks' });
  const body = (await r.json()) as any;
  expect(r.status).toBe(200);
  const dir = join(srv.configDir, 'drafts', 'opentabs-plugin-tasks');
  expect(body.result.dir).toBe(dir);
  expect(body.result.tools.map((t: { name: string }) => t.name)).toEqual(['tasks_list_tasks', 'tasks_complete_task']);
  expect(body.result.csrf).toEqual({ header: 'x-xsrf-token' });
  const index = readFileSync(join(dir, 'src', 'index.ts'), 'utf8');
  expect(index).toContain('csrfHeaders("x-xsrf-token")');
  // GET reads; the POST may change data.
  expect(index).toMatch(/name: "list_tasks",[\s\S]*?annotations: \{ readOnlyHint: true \}/);
  expect(index).toMatch(/name: "complete_task",[\s\S]*?annotations: \{ destructiveHint: true \}/);
  for (const f of ['src/index.ts', 'test/plugin.test.ts', 'DRAFT.md']) {
    const text = readFileSync(join(dir, f), 'utf8');
    expect(text).not.toContain('topsecretcookievalue');
    expect(text).not.toContain('xsrfvalue0987654321');
  }
  // Not added: the user reviews it first.
  expect(srv.ctx.plugins.list().map((p) => p.name)).not.toContain('tasks');
});

test('a name that is not a plugin name (a path, say) is refused before anything is written', async () => {
  for (const name of ['../evil', 'Tasks', 'a/b']) {
    const r = await call({ tabId: 7, name });
    expect(r.status).toBe(400);
    expect(((await r.json()) as any).error.code).toBe('invalid_arguments');
  }
  expect(existsSync(join(srv.configDir, 'drafts', 'opentabs-plugin-../evil'))).toBe(false);
});

test('it starts at ask by default', async () => {
  const { BROWSER_TOOLS } = await import('../../server/tools/browser-catalog.ts');
  expect(BROWSER_TOOLS.find((t) => t.name === 'plugin_draft_from_capture')?.defaultPermission).toBe('ask');
});

test('a CSRF token the frontend took from an earlier answer is read the same way, and the draft builds and passes its tests', async () => {
  const { draftPlugin } = await import('../../plugins/tooling/draft/generate.ts');
  const { parseCapture } = await import('../../plugins/tooling/draft/capture.ts');
  const { spawnSync } = await import('node:child_process');
  const A = 'https://notes.example.com';
  const token = 'fromsessionresponse0123456789abcdef';
  const dir = join(srv.configDir, 'notes-draft');
  const r = await draftPlugin(
    'notes',
    parseCapture({
      requests: [
        { method: 'GET', url: `${A}/api/session`, status: 200, mimeType: 'application/json', requestHeaders: {}, responseHeaders: {}, responseBody: { text: JSON.stringify({ user: 'ada', csrf: token }) } },
        { method: 'POST', url: `${A}/api/notes`, status: 200, mimeType: 'application/json', requestHeaders: { 'x-csrf-token': token, 'content-type': 'application/json' }, responseHeaders: {}, requestBody: { text: '{"text":"hi"}' }, responseBody: { text: '{"id":5,"text":"hi"}' } },
      ],
    }),
    { dir },
  );
  expect(r.csrf).toEqual({ header: 'x-csrf-token', fromResponse: { path: '/api/session', key: 'csrf' } });
  const index = readFileSync(join(dir, 'src', 'index.ts'), 'utf8');
  expect(index).toContain('csrfFromApp');
  expect(index).not.toContain(token);
  const env = { ...process.env, PATH: '/usr/local/bin:/usr/bin:/bin' };
  for (const script of ['typecheck', 'test']) {
    const out = spawnSync('npm', ['run', '--silent', script], { cwd: dir, env, encoding: 'utf8', timeout: 120_000 });
    expect({ script, status: out.status, out: `${out.stdout}${out.stderr}` }).toMatchObject({ script, status: 0 });
  }
}, 180_000);
