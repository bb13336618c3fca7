/**
 * The server's own check on plugin log lines, whatever the extension sends: a line that names a
 * dispatch reaches that dispatch's MCP session only when it is of that dispatch's plugin, and a
 * line naming a dispatch the hub does not know reaches no session (it used to reach all of them).
 * Dispatch ids are random, not a counter a page could guess.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import type { TestServer } from '../harness/server.ts';
import { FakeExtension, connectMcp, startPluginServer } from '../harness/fake-extension.ts';

let srv: TestServer;
let ext: FakeExtension;

beforeAll(async () => {
  srv = await startPluginServer({
    plugins: [
      { name: 'notes', tools: [{ name: 'slow' }, { name: 'quick' }] },
      { name: 'other', tools: [{ name: 'quick' }] },
    ],
    permissions: { notes: { default: 'auto' }, other: { default: 'auto' } },
    limits: { mcpSessionRate: { max: 1000, windowMs: 60_000 } },
  });
  ext = await FakeExtension.connect(srv.url, srv.secret);
});

afterAll(async () => {
  await ext?.close();
  await srv?.stop();
});

const line = (plugin: string, message: string, dispatchId?: string) => ({ plugin, level: 'error' as const, message, ts: Date.now(), ...(dispatchId ? { dispatchId } : {}) });

test('lines naming a guessed id, or another plugin\'s dispatch, reach no session; the right ones still do', async () => {
  const a = await connectMcp(srv.url, srv.secret, '/mcp', 'a');
  const b = await connectMcp(srv.url, srv.secret, '/mcp', 'b');
  try {
    const logsA: string[] = [];
    const logsB: string[] = [];
    a.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void logsA.push(String(n.params.data)));
    b.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void logsB.push(String(n.params.data)));
    // Both GET streams are open once a broadcast line reaches both.
    for (let i = 0; i < 100 && (!logsA.includes('ready?') || !logsB.includes('ready?')); i++) {
      ext.notify('plugin.log', { entries: [line('notes', 'ready?')] });
      await Bun.sleep(20);
    }
    expect(logsA.includes('ready?') && logsB.includes('ready?')).toBe(true);

    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const ids: string[] = [];
    ext.onDispatch('notes_slow', async (p) => {
      ids.push(p.dispatchId);
      await held;
      return { value: { done: true } };
    });
    ext.onDispatch('notes_quick', (p) => (ids.push(p.dispatchId), { value: {} }));
    // A: a running call (JSON fast path: its lines go to A's session stream). Finished calls: one more.
    await a.callTool({ name: 'notes_quick', arguments: {} });
    const running = a.callTool({ name: 'notes_slow', arguments: {} });
    await ext.waitFor('tool.dispatch', (p) => p.tool === 'slow');
    const [finishedId, runningId] = ids;

    ext.notify('plugin.log', {
      entries: [
        // Another plugin's lines naming A's dispatches.
        line('other', 'WRONG-PLUGIN-RUNNING', runningId),
        line('other', 'WRONG-PLUGIN-FINISHED', finishedId),
        // Ids the hub never issued.
        ...Array.from({ length: 200 }, (_, i) => line('notes', `GUESSED d${i + 1}`, `d${i + 1}`)),
      ],
    });
    ext.notify('plugin.log', { entries: [line('notes', 'RIGHT-RUNNING', runningId), line('notes', 'RIGHT-FINISHED', finishedId), line('notes', 'BARRIER')] });
    for (let i = 0; i < 200 && !(logsA.includes('BARRIER') && logsB.includes('BARRIER') && logsA.includes('RIGHT-FINISHED')); i++) await Bun.sleep(10);
    expect(logsB).toContain('BARRIER');
    expect(logsA).toEqual(expect.arrayContaining(['RIGHT-RUNNING', 'RIGHT-FINISHED', 'BARRIER']));
    expect(logsB.filter((l) => l.startsWith('RIGHT'))).toEqual([]);
    for (const logs of [logsA, logsB]) expect(logs.filter((l) => l.startsWith('WRONG') || l.startsWith('GUESSED'))).toEqual([]);
    // They are still in the plugin log buffers (opentabs plugin logs), just not sent to any client.
    expect(srv.ctx.plugins.logs('other').map((l) => l.message)).toEqual(expect.arrayContaining(['WRONG-PLUGIN-RUNNING']));

    release();
    expect((await running).structuredContent).toEqual({ done: true });
    for (const id of ids) expect(id).toMatch(/^d[0-9a-f]{32}$/);
    expect(finishedId).not.toBe(runningId);
  } finally {
    await a.close().catch(() => {});
    await b.close().catch(() => {});
  }
});
