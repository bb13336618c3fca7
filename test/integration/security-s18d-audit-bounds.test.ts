/**
 * The audit log records every call, failed ones with their error message. A call refused for an
 * argument the tool does not take named that argument in its message twice (in the path and in
 * the text), whatever its length: an MCP client sending one 1 MB property name had a 2 MB line
 * appended to audit.log and kept in the in-memory ring (500 such entries: gigabytes). Past the
 * rotation size, two such calls rotated twice, and audit.log.1 — the record of everything the
 * client had done before — was replaced by its own junk. Audit entries and the argument errors
 * callers are told are now bounded, so the history stays.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { FakeExtension, FakeToolError, startPluginServer } from '../harness/fake-extension.ts';
import type { TestServer } from '../harness/server.ts';

setDefaultTimeout(120_000);

const ROTATE_BYTES = 2 * 1024 * 1024;
let srv: TestServer;
let ext: FakeExtension;

beforeAll(async () => {
  srv = await startPluginServer({
    plugins: [
      {
        name: 'notes',
        tools: [
          { name: 'count' },
          { name: 'fail' },
          // A map of maps of numbers: a wrong value deep inside is reported at its path of keys.
          { name: 'tag', inputSchema: { type: 'object', properties: { tags: { type: 'object', additionalProperties: { type: 'object', additionalProperties: { type: 'number' } } } } } },
        ],
      },
    ],
    permissions: { notes: { default: 'auto' } },
    limits: { auditRotateBytes: ROTATE_BYTES, mcpSessionRate: { max: 1000, windowMs: 60_000 } },
  });
  ext = await FakeExtension.connect(srv.url, srv.secret);
  ext.onDispatch('notes_count', () => ({ value: 1 }));
  // An error whose text and code come from elsewhere (a page, a web app's answer), unbounded here.
  ext.onDispatch('notes_fail', () => {
    throw new FakeToolError('c'.repeat(1_000_000), 'e'.repeat(1_000_000));
  });
});
afterAll(async () => {
  await ext?.close();
  await srv?.stop();
});

const headers = (sid?: string) => ({ ...srv.auth, 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...(sid ? { 'mcp-session-id': sid } : {}) });

async function openSession(): Promise<string> {
  const r = await fetch(`${srv.url}/mcp`, {
    method: 'POST',
    headers: headers(),
    body: JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'flood', version: '1' } } }),
  });
  expect(r.status).toBe(200);
  return r.headers.get('mcp-session-id')!;
}

async function callTool(sid: string, id: number, name: string, args: Record<string, unknown>): Promise<{ isError?: boolean; content: { text: string }[] }> {
  const r = await fetch(`${srv.url}/mcp`, { method: 'POST', headers: headers(sid), body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } }) });
  expect(r.status).toBe(200);
  return ((await r.json()) as { result: { isError?: boolean; content: { text: string }[] } }).result;
}

const auditLines = (): string[] =>
  ['audit.log.1', 'audit.log'].flatMap((f) => {
    const p = join(srv.configDir, f);
    return existsSync(p) ? readFileSync(p, 'utf8').split('\n').filter((l) => l !== '') : [];
  });

test('argument errors with megabyte property names neither fill the audit log nor push the earlier calls out of it', async () => {
  const sid = await openSession();
  // What the client did first: the record that must stay.
  for (let i = 1; i <= 3; i++) expect((await callTool(sid, i, 'notes_count', {})).isError).toBeFalsy();
  expect(auditLines().filter((l) => l.includes('"notes_count"')).length).toBe(3);

  // Two calls, each with one property name of 1.2 MB (over half the rotation size).
  const key = 'k'.repeat(1_200_000);
  for (const id of [10, 11]) {
    const r = await callTool(sid, id, 'browser_list_tabs', { [key]: 1 });
    expect(r.isError).toBe(true);
    // The caller is told what is wrong, without its megabyte echoed back twice.
    expect(r.content[0]!.text).toContain('not an allowed property');
    expect(r.content[0]!.text.length).toBeLessThan(4_000);
  }

  // Both refusals are recorded, each in a line of bounded size, and the first calls are still there.
  const lines = auditLines();
  expect(lines.filter((l) => l.includes('"browser_list_tabs"')).length).toBe(2);
  for (const l of lines) expect(l.length).toBeLessThan(8_192);
  expect(lines.filter((l) => l.includes('"notes_count"')).length).toBe(3);
  // So does the ring /audit answers from.
  const ring = srv.ctx.audit.query({ limit: 100 });
  expect(ring.length).toBe(5);
  for (const e of ring) expect(JSON.stringify(e).length).toBeLessThan(8_192);
});

test('a nested property name is cut in the path the caller is told, too', async () => {
  const sid = await openSession();
  // The failing value (a string where a number goes) sits under two long keys.
  const r = await callTool(sid, 20, 'notes_tag', { tags: { ['x'.repeat(300_000)]: { ['y'.repeat(300_000)]: 'one' } } });
  expect(r.isError).toBe(true);
  expect(r.content[0]!.text.length).toBeLessThan(4_000);
  expect(auditLines().at(-1)!.length).toBeLessThan(8_192);
});

test('a tool error of a megabyte, code and message, is recorded cut', async () => {
  const sid = await openSession();
  expect((await callTool(sid, 30, 'notes_fail', {})).isError).toBe(true);
  const last = auditLines().at(-1)!;
  expect(last).toContain('"notes_fail"');
  expect(last.length).toBeLessThan(8_192);
  const [entry] = srv.ctx.audit.query({ limit: 1 });
  expect(entry!.error!.message).toContain('[truncated by OpenTabs');
});
