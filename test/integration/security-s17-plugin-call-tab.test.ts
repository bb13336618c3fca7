/**
 * A plugin call that names its tab (a plugin tool taking a `tabId`, or REST's tabId) is approved
 * for that tab. Built-in calls ask the extension what the tab shows (tab.page): the card names that
 * page, the call is bound to its site, and a tab id no tab has is refused without asking — tab ids
 * are handed out in order, so a card for a tab that does not exist yet is an approval for whatever
 * page the agent opens next under that id. Plugin calls skipped all three: the card named the tab
 * with the URL the plugin's tab list had (none for a tab the agent had not opened yet), the call
 * was not bound to a site, and a future tab id was asked about. The agent could name the next tab
 * id, wait for the user to allow a card that showed no page, and open that tab on the plugin's
 * site in another account (or another workspace of the app) first. Plugin calls with a tab now
 * ask the extension as built-in calls do.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { FakeExtension, startPluginServer } from '../harness/fake-extension.ts';
import type { TestServer } from '../harness/server.ts';

setDefaultTimeout(120_000);

let srv: TestServer;
let ext: FakeExtension;
const BOARD = 'https://notes.example/board/1';

beforeAll(async () => {
  srv = await startPluginServer({
    plugins: [{ name: 'notes', tools: [{ name: 'archive', inputSchema: { type: 'object', properties: { tabId: { type: 'integer' }, note: { type: 'string' } }, additionalProperties: false } }] }],
    permissions: { notes: { default: 'ask' } },
  });
  ext = await FakeExtension.connect(srv.url, srv.secret);
  ext.tabPages.set(5, BOARD);
  ext.tabPages.set(99, null);
});
afterAll(async () => {
  await ext?.close();
  await srv?.stop();
});

const call = (args: Record<string, unknown>, tabId?: number) =>
  fetch(`${srv.url}/tools/notes_archive/call`, {
    method: 'POST',
    headers: { ...srv.auth, 'content-type': 'application/json' },
    body: JSON.stringify({ arguments: args, ...(tabId !== undefined ? { tabId } : {}) }),
  });

async function until(cond: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 1000; i++) {
    if (cond()) return;
    await Bun.sleep(10);
  }
  throw new Error(`never happened: ${what}`);
}

test('a tab id no tab has is refused without asking', async () => {
  for (const [args, tabId] of [[{ tabId: 99 }, undefined], [{}, 99]] as const) {
    let answer: { status: number; body: { error?: { code: string; message: string } } } | undefined;
    void call(args, tabId).then(async (r) => (answer = { status: r.status, body: (await r.json()) as never }));
    await until(() => answer !== undefined || srv.ctx.hub.confirmations.list().length > 0, 'an answer or a card');
    const cards = srv.ctx.hub.confirmations.list();
    // Leave nothing waiting for the next check.
    for (const c of cards) srv.ctx.hub.confirmations.decide(c.id, 'deny');
    expect(cards).toEqual([]);
    await until(() => answer !== undefined, 'the answer');
    expect(answer!.body.error?.code).toBe('tab_closed');
    expect(answer!.body.error?.message).toContain('99');
  }
  expect(ext.sent('tool.dispatch').length).toBe(0);
});

test('the card names the page the tab shows, and the call is bound to it', async () => {
  for (const [args, tabId] of [[{ tabId: 5, note: 'n' }, undefined], [{ note: 'n' }, 5]] as const) {
    const before = ext.sent('tool.dispatch').length;
    const answer = call(args, tabId);
    await until(() => srv.ctx.hub.confirmations.list().length === 1, 'the card');
    const [card] = srv.ctx.hub.confirmations.list();
    expect(card!.target).toMatchObject({ tabId: 5, url: BOARD, domain: 'notes.example' });
    srv.ctx.hub.confirmations.decide(card!.id, 'allow');
    expect((await answer).status).toBe(200);
    const sent = ext.sent('tool.dispatch').slice(before);
    expect(sent.length).toBe(1);
    expect(sent[0]!.params).toMatchObject({ tabId: 5, approvedUrl: BOARD });
  }
});

test('on auto, a tabId argument names the tab just as it does when asked', async () => {
  await srv.ctx.config.setToolPermission('notes', 'archive', 'auto');
  srv.ctx.catalog.rebuild();
  try {
    const before = ext.sent('tool.dispatch').length;
    const r = await call({ tabId: 5, note: 'n' });
    expect(r.status).toBe(200);
    const sent = ext.sent('tool.dispatch').slice(before);
    expect(sent.length).toBe(1);
    expect(sent[0]!.params).toMatchObject({ tabId: 5 });
  } finally {
    await srv.ctx.config.setToolPermission('notes', 'archive', 'ask');
    srv.ctx.catalog.rebuild();
  }
});
