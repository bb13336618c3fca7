/**
 * plugin_draft_from_capture turns what a page sent into plugin source code. A hostile page
 * chooses its requests: an HTTP method may hold ' ` + and other token characters (fetch sends
 * them as is), so a method written into the source as it came would become code in the drafted
 * plugin (run by its tests and, once added, in the page). Every recorded value must land in the
 * draft as data: the method as a string literal, names as identifiers.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TestServer } from '../harness/server.ts';
import { FakeExtension, startPluginServer } from '../harness/fake-extension.ts';
import { TOOL_NAME_RE } from '../../server/protocol/plugin-manifest.ts';

let srv: TestServer;
let ext: FakeExtension;
const O = 'https://evil.example.com';
// Each is a method fetch() sends unchanged (RFC 9110 token characters).
const METHODS = ["X'+GLOBAL_EVIL+'", 'X`+GLOBAL_EVIL+`', "A'+B+'"];
const capture = {
  requests: METHODS.map((method, i) => ({ method, url: `${O}/api/thing${i}`, status: 200, mimeType: 'application/json', requestHeaders: {}, responseHeaders: {}, responseBody: { text: '{"ok":true}' } })),
};

beforeAll(async () => {
  srv = await startPluginServer({ permissions: { browser: { tools: { plugin_draft_from_capture: 'auto' } } } });
  ext = await FakeExtension.connect(srv.url, srv.secret);
  ext.onDispatch('browser_get_network_requests', () => ({ value: capture }));
});
afterAll(async () => {
  await ext?.close();
  await srv?.stop();
});

test('methods a page chose are string literals in the draft, and tool names stay names', async () => {
  const r = await fetch(`${srv.url}/tools/plugin_draft_from_capture/call`, { method: 'POST', headers: { ...srv.auth, 'content-type': 'application/json' }, body: JSON.stringify({ arguments: { tabId: 7, name: 'evil' } }) });
  const body = (await r.json()) as { result: { tools: { name: string }[] } };
  expect(r.status).toBe(200);
  for (const t of body.result.tools) expect(t.name).toMatch(/^evil_[a-z][a-z0-9_]*$/);
  const dir = join(srv.configDir, 'drafts', 'opentabs-plugin-evil');
  const index = readFileSync(join(dir, 'src', 'index.ts'), 'utf8');
  // The drafted source parses …
  expect(() => new Bun.Transpiler({ loader: 'ts' }).transformSync(index)).not.toThrow();
  // … names its tools validly, each bound to a plain identifier …
  for (const [, name] of index.matchAll(/\n {2}name: "([^"]*)"/g)) expect(name).toMatch(TOOL_NAME_RE);
  for (const [, id] of index.matchAll(/\nconst (\S+) = defineTool\(/g)) expect(id).toMatch(/^[A-Za-z_$][A-Za-z0-9_$]*$/);
  // … and holds each method only as a JSON string literal: no identifier of the page's runs.
  for (const m of METHODS) expect(index).toContain(`method: ${JSON.stringify(m)}`);
  const code = index.replace(/"(?:[^"\\]|\\.)*"/g, '""');
  expect(code).not.toContain('GLOBAL_EVIL');
  expect(code).not.toMatch(/\+B\+/);
  const tests = readFileSync(join(dir, 'test', 'plugin.test.ts'), 'utf8');
  expect(() => new Bun.Transpiler({ loader: 'ts' }).transformSync(tests)).not.toThrow();
});
