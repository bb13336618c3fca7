/**
 * A real server process is stopped (SIGSTOP, as a laptop's sleep or a debugger stops it) while a
 * call waits for the user's approval, for longer than the approval timeout, and continued
 * (SIGCONT). The extension (a scripted one, over a real WebSocket) and the MCP client (the official
 * SDK) keep running meanwhile.
 *  - The user allowed the call while the server was stopped: the answer waited in the socket. On
 *    SIGCONT the overdue approval timer used to fire before the socket was read, and the agent was
 *    told nobody approved; now the answer is read first and the call runs.
 *  - Nobody answered: the call still ends with the approval timeout once the server runs again
 *    (the grace does not keep it waiting), and the extension is told the card expired.
 * The approval timeout is cut to 5 s here (the shipped one is 120 s) so the stop can outlast it.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { startServerChild, type ServerProc } from '../bench/lib/proc.ts';
import { FakeExtension, connectMcp } from '../harness/fake-extension.ts';
import { LATE_TIMER_MS } from '../../server/protocol/late-timer.ts';

setDefaultTimeout(120_000);

const APPROVAL_TIMEOUT_MS = 5_000;
/** How long the server stays stopped past the approval timeout: its timer then fires well over LATE_TIMER_MS late. */
const STOPPED_PAST_TIMEOUT_MS = LATE_TIMER_MS + 3_000;

const root = mkdtempSync(join(tmpdir(), 'opentabs-approval-sleep-'));
let srv: ServerProc | null = null;
let stopped = false;
let ext: FakeExtension | null = null;
let mcp: Client | null = null;

beforeAll(async () => {
  // No permission set: browser_list_downloads asks by default.
  writeFileSync(join(root, 'config.json'), JSON.stringify({ schemaVersion: 1, localPlugins: [], permissions: {}, pluginSettings: {} }));
  srv = await startServerChild(root, { confirmationTimeoutMs: APPROVAL_TIMEOUT_MS });
  ext = await FakeExtension.connect(srv.url, srv.secret);
  ext.onDispatch('browser_list_downloads', () => ({ value: { downloads: [{ downloadId: 7, url: 'https://files.example/report.pdf', filename: 'report.pdf', state: 'complete' }] } }));
  mcp = await connectMcp(srv.url, srv.secret);
}, 120_000);

afterAll(async () => {
  if (stopped && srv) process.kill(srv.pid, 'SIGCONT');
  await mcp?.close().catch(() => {});
  await ext?.close().catch(() => {});
  await srv?.stop();
  rmSync(root, { recursive: true, force: true });
});

/** Stop the server from the moment the card arrived until it has been stopped past the approval timeout; `whileStopped` runs once it is stopped. */
async function sleepServer(cardAt: number, whileStopped: () => void): Promise<void> {
  process.kill(srv!.pid, 'SIGSTOP');
  stopped = true;
  whileStopped();
  const rest = APPROVAL_TIMEOUT_MS + STOPPED_PAST_TIMEOUT_MS - (performance.now() - cardAt);
  if (rest > 0) await Bun.sleep(rest);
  process.kill(srv!.pid, 'SIGCONT');
  stopped = false;
}

type ToolResult = { isError?: boolean; content: { text: string }[] };

describe('the server is stopped past the approval timeout while a call waits for approval', () => {
  test('allowed while the server was stopped: the answer in the socket is read before the timeout, and the call runs', async () => {
    const card = ext!.waitNext((m) => m.method === 'confirmation.request' && m.params?.tool === 'browser_list_downloads', 15_000, 'the approval card');
    const call = mcp!.callTool({ name: 'browser_list_downloads', arguments: {} }, undefined, { timeout: 60_000 });
    const req = await card;
    const cardAt = performance.now();
    // The user clicks Allow while the server sleeps: the answer waits, unread, in its socket.
    await sleepServer(cardAt, () => ext!.confirm(req.params.id, 'allow'));
    const res = (await call) as ToolResult;
    expect(res.content[0]!.text).not.toMatch(/Approval timed out/);
    expect(res.isError).toBeFalsy();
    expect(res.content[0]!.text).toContain('files.example/report.pdf');
    expect(ext!.sent('confirmation.resolved').filter((m) => m.params?.id === req.params.id && m.params?.outcome === 'timeout')).toEqual([]);
  });

  test('nobody answered: once the server runs again the call ends with the approval timeout, and the card is taken off', async () => {
    const card = ext!.waitNext((m) => m.method === 'confirmation.request' && m.params?.tool === 'browser_list_downloads', 15_000, 'the approval card');
    const dispatched = ext!.sent('tool.dispatch').length;
    const call = mcp!.callTool({ name: 'browser_list_downloads', arguments: {} }, undefined, { timeout: 60_000 });
    const req = await card;
    await sleepServer(performance.now(), () => {});
    const resolved = ext!.waitFor('confirmation.resolved', (p) => p.id === req.params.id, 15_000);
    const res = (await call) as ToolResult;
    expect(res.isError).toBe(true);
    expect(res.content[0]!.text).toMatch(/Approval timed out/);
    expect((await resolved).outcome).toBe('timeout');
    expect(ext!.sent('tool.dispatch').length).toBe(dispatched);
  });
});
