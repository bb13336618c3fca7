/**
 * Tools the server answers itself (servedBy: 'server') go through the same permission step as
 * every other tool: plugin_draft_from_capture starts at `ask`, so an agent calling it gets an
 * approval card and nothing is read or written until the user allows it; denied, nothing is.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { TestServer } from '../harness/server.ts';
import { FakeExtension, startPluginServer } from '../harness/fake-extension.ts';

setDefaultTimeout(60_000);
let srv: TestServer;
let ext: FakeExtension;
let captureReads = 0;
const O = 'https://tasks.example.com';
const capture = {
  requests: [{ method: 'GET', url: `${O}/api/tasks`, status: 200, mimeType: 'application/json', requestHeaders: {}, responseHeaders: {}, responseBody: { text: '{"tasks":[]}' } }],
};

beforeAll(async () => {
  // No permission set: the tool's default.
  srv = await startPluginServer();
  ext = await FakeExtension.connect(srv.url, srv.secret);
  ext.onDispatch('browser_get_network_requests', () => {
    captureReads++;
    return { value: capture };
  });
});
afterAll(async () => {
  await ext?.close().catch(() => {});
  await srv?.stop();
});

async function waitingApproval(tool: string): Promise<{ id: string; tool: string }> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const a = srv.ctx.hub.confirmations.list().find((x) => x.tool === tool);
    if (a) return a;
    if (Date.now() > deadline) throw new Error(`Timed out waiting for an approval of ${tool}`);
    await Bun.sleep(20);
  }
}

const draftDir = (name: string) => join(srv.configDir, 'drafts', `opentabs-plugin-${name}`);
const call = (name: string) =>
  fetch(`${srv.url}/tools/plugin_draft_from_capture/call`, { method: 'POST', headers: { ...srv.auth, 'content-type': 'application/json' }, body: JSON.stringify({ arguments: { tabId: 7, name } }) });

test('plugin_draft_from_capture waits for the user; denied, it reads and writes nothing', async () => {
  const pending = call('denied');
  const card = await waitingApproval('plugin_draft_from_capture');
  expect(captureReads).toBe(0);
  expect(existsSync(draftDir('denied'))).toBe(false);
  ext.confirm(card.id, 'deny');
  const r = await pending;
  expect(r.status).toBe(403);
  expect(((await r.json()) as any).error.code).toBe('permission_denied');
  expect(captureReads).toBe(0);
  expect(existsSync(draftDir('denied'))).toBe(false);
});

test('allowed, it drafts', async () => {
  const pending = call('allowed');
  const card = await waitingApproval('plugin_draft_from_capture');
  expect(existsSync(draftDir('allowed'))).toBe(false);
  ext.confirm(card.id, 'allow');
  const r = await pending;
  expect(r.status).toBe(200);
  expect(captureReads).toBe(1);
  expect(existsSync(join(draftDir('allowed'), 'DRAFT.md'))).toBe(true);
});
