/**
 * A call waiting for approval is never silent: MCP callers get a log message (and progress when
 * they asked for it) naming the side panel, never the `opentabs approve <id>` that allows it; REST
 * callers that ask for a stream (SSE or NDJSON) get approval and progress events, then the
 * outcome; `opentabs approve|deny` answer it like the side panel (which drops its card); and
 * `opentabs tool call` shows the wait on stderr and prints the result as before.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import type { TestServer } from '../harness/server.ts';
import { FakeExtension, connectMcp, startPluginServer } from '../harness/fake-extension.ts';
import { runCli } from './cli-support.ts';

setDefaultTimeout(60_000);
let srv: TestServer;
let ext: FakeExtension;

async function until<T>(fn: () => T | undefined | false, what: string): Promise<T> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const v = fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await Bun.sleep(20);
  }
}
const waitingApproval = () => until(() => srv.ctx.hub.confirmations.list()[0], 'a call waiting for approval');

beforeAll(async () => {
  srv = await startPluginServer({
    plugins: [{ name: 'mail', tools: [{ name: 'send', inputSchema: { type: 'object', properties: { to: { type: 'string' } } } }, { name: 'sync', inputSchema: { type: 'object' } }] }],
    permissions: { mail: { default: 'ask', tools: { sync: 'auto' } } },
  });
  ext = await FakeExtension.connect(srv.url, srv.secret);
  ext.notify('tab.syncAll', { plugins: { mail: { state: 'ready', tabs: [{ tabId: 7, url: 'https://mail.example/inbox', title: 'Inbox', ready: true }] } } });
  ext.onDispatch('mail_send', (p) => ({ value: { sent: (p.input as { to?: string }).to ?? null } }));
  ext.onDispatch('mail_sync', async (_p, api) => {
    api.progress(1, 4, 'folders');
    api.progress(4, 4, 'done');
    return { value: 'synced' };
  });
});
afterAll(async () => {
  await ext?.close().catch(() => {});
  await srv?.stop();
});

const post = (path: string, body: unknown, accept?: string) =>
  fetch(`${srv.url}${path}`, { method: 'POST', headers: { ...srv.auth, 'content-type': 'application/json', ...(accept ? { accept } : {}) }, body: JSON.stringify(body) });

async function readEvents(res: Response, format: 'sse' | 'ndjson', onEvent: (e: any) => void | Promise<void>): Promise<any[]> {
  const events: any[] = [];
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let buf = '';
  const sep = format === 'sse' ? '\n\n' : '\n';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    buf += decoder.decode(value, { stream: true });
    let i: number;
    while ((i = buf.indexOf(sep)) >= 0) {
      const chunk = buf.slice(0, i);
      buf = buf.slice(i + sep.length);
      if (!chunk.trim()) continue;
      const json = format === 'sse' ? /^data: (.*)$/m.exec(chunk)![1]! : chunk;
      const e = JSON.parse(json);
      if (format === 'sse') expect(chunk).toStartWith(`event: ${e.type}\n`);
      events.push(e);
      await onEvent(e);
    }
  }
  return events;
}

describe('MCP', () => {
  test('progress and a log message while waiting, naming the side panel — never the command that approves (the caller may be the agent)', async () => {
    const client = await connectMcp(srv.url, srv.secret, '/mcp', 'approval-wait');
    const logs: string[] = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void logs.push(JSON.stringify(n.params.data)));
    const progress: { progress: number; message?: string }[] = [];
    const result = client.callTool({ name: 'mail_send', arguments: { to: 'a@example.com' } }, undefined, { onprogress: (p) => void progress.push(p) });
    const pending = await waitingApproval();
    await until(() => progress.length > 0 && logs.length > 0, 'the wait to be announced');
    for (const text of [progress[0]!.message!, logs[0]!]) {
      expect(text).toContain('Waiting for approval of mail_send in the OpenTabs side panel (up to 120 s); only the user can allow it.');
      expect(text).not.toContain('opentabs approve');
      expect(text).not.toContain(pending.id);
    }
    ext.confirm(pending.id, 'allow');
    const r = (await result) as { isError?: boolean; structuredContent?: unknown };
    expect(r.isError).toBeFalsy();
    await client.close();
  });
});

describe('REST streaming', () => {
  test('SSE: approval waiting, allowed through POST /approvals/:id, then the result', async () => {
    const res = await post('/tools/mail_send/call', { arguments: { to: 'b@example.com' } }, 'text/event-stream');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const events = await readEvents(res, 'sse', async (e) => {
      if (e.type === 'approval' && e.state === 'waiting') {
        expect(e.message).toContain('Waiting for approval of mail_send');
        expect((await post(`/approvals/${e.id}`, { decision: 'allow' })).status).toBe(200);
      }
    });
    expect(events.map((e) => (e.type === 'approval' ? `approval:${e.state}` : e.type))).toEqual(['approval:waiting', 'approval:approved', 'result']);
    expect(events.at(-1).result).toEqual({ sent: 'b@example.com' });
    // The side panel is told the approval is over, so its card goes away.
    expect(ext.sent('confirmation.resolved').some((m) => m.params.id === events[0].id && m.params.outcome === 'allowed')).toBe(true);
  });

  test('NDJSON: denied through POST /approvals/:id ends with the same error the JSON answer has', async () => {
    const res = await post('/tools/mail_send/call', { arguments: { to: 'c@example.com' } }, 'application/x-ndjson');
    expect(res.headers.get('content-type')).toContain('application/x-ndjson');
    const events = await readEvents(res, 'ndjson', async (e) => {
      if (e.type === 'approval' && e.state === 'waiting') expect((await post(`/approvals/${e.id}`, { decision: 'deny' })).status).toBe(200);
    });
    expect(events.map((e) => e.type)).toEqual(['approval', 'approval', 'error']);
    expect(events[1].state).toBe('denied');
    expect(events[2].status).toBe(403);
    expect(events[2].error.code).toBe('permission_denied');
  });

  test('progress events of a long tool, then the result', async () => {
    const events = await readEvents(await post('/tools/mail_sync/call', {}, 'application/x-ndjson'), 'ndjson', () => {});
    expect(events).toEqual([
      { type: 'progress', progress: 1, total: 4, message: 'folders' },
      { type: 'progress', progress: 4, total: 4, message: 'done' },
      { type: 'result', result: 'synced' },
    ]);
  });

  test('without a streaming Accept header the answer is the plain JSON as before', async () => {
    const res = await post('/tools/mail_sync/call', {});
    expect(res.headers.get('content-type')).toContain('application/json');
    expect(await res.json()).toEqual({ result: 'synced' });
  });

  test('/approvals: unknown ids and bad decisions are refused clearly', async () => {
    const unknown = await post('/approvals/no-such-id', { decision: 'allow' });
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as any).error.code).toBe('unknown_approval');
    const bad = await post('/approvals/whatever', { decision: 'maybe' });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as any).error.message).toContain('"decision"');
  });
});

describe('CLI', () => {
  const cli = (args: string[]) => runCli([...args, '--port', String(srv.port)], { configDir: srv.configDir, timeoutMs: 50_000 });

  test('`tool call` shows the wait on stderr; `approvals` lists it; `approve` allows it; the result is printed as before', async () => {
    const call = cli(['tool', 'call', 'mail_send', '{"to":"d@example.com"}']);
    const pending = await waitingApproval();
    const listed = await cli(['approvals']);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain(pending.id);
    expect(listed.stdout).toContain('mail_send');
    const approved = await cli(['approve', pending.id]);
    expect({ code: approved.code, stderr: approved.stderr }).toEqual({ code: 0, stderr: '' });
    expect(approved.stdout).toContain(`Allowed ${pending.id}`);
    const r = await call;
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ sent: 'd@example.com' });
    expect(r.stderr).toContain('Waiting for approval of mail_send in the OpenTabs side panel');
    // No terminal here (as for an agent running the CLI through its shell): no approve command.
    expect(r.stderr).not.toContain('opentabs approve');
    expect(r.stderr).toContain('Approved');
  });

  test('`deny` refuses it and `tool call` exits 1 with the denial', async () => {
    const call = cli(['tool', 'call', 'mail_send', '{"to":"e@example.com"}']);
    const pending = await waitingApproval();
    const denied = await cli(['deny', pending.id]);
    expect(denied.code).toBe(0);
    const r = await call;
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('The user denied the call to "mail_send".');
    // It was denied in a terminal: the message does not say the side panel did it.
    expect(r.stderr).not.toContain('denied the call to "mail_send" in the OpenTabs side panel');
  });

  test('`tool call` of a tool with progress prints the progress lines, then the result', async () => {
    const r = await cli(['tool', 'call', 'mail_sync']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toBe('synced');
    expect(r.stderr).toContain(' 25% folders');
    expect(r.stderr).toContain('100% done');
  });

  test('`approve` with nothing waiting says so', async () => {
    const r = await cli(['approve']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('No call is waiting for approval');
  });
});
