/**
 * plugin_draft_from_capture turns what a page sent into plugin source code. A hostile page
 * chooses its requests: an HTTP method may hold ' ` + and other token characters (fetch sends
 * them as is), so a method written into the source as it came would become code in the drafted
 * plugin (run by its tests and, once added, in the page). Every recorded value must land in the
 * draft as data: the method as a string literal, names as identifiers. Paths, query keys, header
 * names, GraphQL operation names and body and response keys holding backticks, `${`, `*\/`,
 * newlines, U+2028, `__proto__` or a `:name` that looks like a parameter stay text: the only
 * expressions in a drafted URL are the path parameters the drafter found, and no recorded key
 * becomes an object's prototype. A body nested thousands of levels deep makes a draft of ordinary
 * size (levels past DRAFT_MAX_DEPTH are drafted as unknown).
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import ts from 'typescript';
import { join } from 'node:path';
import type { TestServer } from '../harness/server.ts';
import { FakeExtension, startPluginServer } from '../harness/fake-extension.ts';
import { TOOL_NAME_RE } from '../../server/protocol/plugin-manifest.ts';

let srv: TestServer;
let ext: FakeExtension;
const O = 'https://evil.example.com';
// Each is a method fetch() sends unchanged (RFC 9110 token characters).
const METHODS = ["X'+GLOBAL_EVIL+'", 'X`+GLOBAL_EVIL+`', "A'+B+'"];
let current: unknown;
const capture = {
  requests: METHODS.map((method, i) => ({ method, url: `${O}/api/thing${i}`, status: 200, mimeType: 'application/json', requestHeaders: {}, responseHeaders: {}, responseBody: { text: '{"ok":true}' } })),
};

beforeAll(async () => {
  srv = await startPluginServer({ permissions: { browser: { tools: { plugin_draft_from_capture: 'auto' } } } });
  ext = await FakeExtension.connect(srv.url, srv.secret);
  ext.onDispatch('browser_get_network_requests', () => ({ value: current }));
});
afterAll(async () => {
  await ext?.close();
  await srv?.stop();
});

test('methods a page chose are string literals in the draft, and tool names stay names', async () => {
  current = capture;
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

/** Names a page can put in its requests' JSON (and a HAR file anything): each one a code fragment. */
const KEYS = ['a`b', '${GLOBAL_EVIL()}', '*/GLOBAL_EVIL()/*', 'x\nGLOBAL_EVIL()', 'x\u2028GLOBAL_EVIL()', "'+GLOBAL_EVIL+'", '\\`GLOBAL_EVIL', '__proto__', 'constructor'];
const json = (x: unknown) => ({ text: JSON.stringify(x) });
const nested = JSON.stringify(Object.fromEntries(KEYS.map((k) => [k, { [k]: k }])));
const hostile = {
  requests: [
    // No segment here is an id: ":constructor" and "$GLOBAL_EVIL" are text of the path.
    { method: 'GET', url: `${O}/api/x:constructor/$GLOBAL_EVIL/a%60/list?${KEYS.map((k, i) => `${encodeURIComponent(k)}=${i}`).join('&')}`, status: 200, mimeType: 'application/json', requestHeaders: {}, responseHeaders: {}, responseBody: { text: nested } },
    { method: 'POST', url: `${O}/api/things`, status: 200, mimeType: 'application/json', requestHeaders: { 'x-csrf-`${GLOBAL_EVIL()}': 't', 'content-type': 'application/json' }, responseHeaders: {}, requestBody: json(Object.fromEntries(KEYS.map((k, i) => [k, i]))), responseBody: { text: nested } },
    { method: 'POST', url: `${O}/graphql`, status: 200, mimeType: 'application/json', requestHeaders: {}, responseHeaders: {}, requestBody: json({ operationName: 'Op`${GLOBAL_EVIL()}*/\u2028', query: 'query Q { a }', variables: Object.fromEntries(KEYS.map((k, i) => [k, i])) }), responseBody: { text: JSON.stringify({ data: JSON.parse(nested) }) } },
    // A real parameter (an id segment) still becomes one.
    { method: 'GET', url: `${O}/api/items/12345678`, status: 200, mimeType: 'application/json', requestHeaders: {}, responseHeaders: {}, responseBody: json({ id: 12345678 }) },
  ],
};

/** Every place the parsed source holds code built from recorded text, for the checks below. */
function codeOf(source: string) {
  const file = ts.createSourceFile('x.ts', source, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const found = { identifiers: [] as string[], templateExpressions: [] as string[], templateTexts: [] as string[], protoSetters: [] as string[] };
  const visit = (n: ts.Node): void => {
    if (ts.isIdentifier(n)) found.identifiers.push(n.text);
    if (ts.isTemplateSpan(n)) found.templateExpressions.push(n.expression.getText(file));
    if (ts.isNoSubstitutionTemplateLiteral(n) || ts.isTemplateHead(n) || ts.isTemplateMiddle(n) || ts.isTemplateTail(n)) found.templateTexts.push(n.text);
    // `__proto__: x` and `"__proto__": x` in an object literal set its prototype.
    if (ts.isPropertyAssignment(n) && (ts.isIdentifier(n.name) || ts.isStringLiteral(n.name)) && n.name.text === '__proto__') found.protoSetters.push(n.getText(file).slice(0, 60));
    ts.forEachChild(n, visit);
  };
  visit(file);
  return { ...found, parseErrors: (file as unknown as { parseDiagnostics: unknown[] }).parseDiagnostics.length };
}

test('paths, keys, header and operation names a page chose stay text in the draft', async () => {
  current = hostile;
  const r = await fetch(`${srv.url}/tools/plugin_draft_from_capture/call`, { method: 'POST', headers: { ...srv.auth, 'content-type': 'application/json' }, body: JSON.stringify({ arguments: { tabId: 7, name: 'hostile' } }) });
  expect(r.status).toBe(200);
  const dir = join(srv.configDir, 'drafts', 'opentabs-plugin-hostile');
  const index = readFileSync(join(dir, 'src', 'index.ts'), 'utf8');
  const tests = readFileSync(join(dir, 'test', 'plugin.test.ts'), 'utf8');
  for (const source of [index, tests]) {
    const code = codeOf(source);
    expect(code.parseErrors).toBe(0);
    expect(() => new Bun.Transpiler({ loader: 'ts' }).transformSync(source)).not.toThrow();
    expect(code.identifiers.filter((x) => x.includes('GLOBAL_EVIL'))).toEqual([]);
    expect(code.protoSetters).toEqual([]);
    // The only expression in any URL: the one path parameter found.
    expect(code.templateExpressions.filter((x) => x !== 'encodeURIComponent(String(input.itemId))')).toEqual([]);
  }
  const urls = codeOf(index).templateTexts;
  expect(urls).toContain('/api/x:constructor/$GLOBAL_EVIL/a%60/list');
  expect(urls).toContain('/api/items/');
  // Each recorded key is a field of the drafted schema, "__proto__" included (as a computed key).
  expect(index).toContain('["__proto__"]: v.');
  // The test replays the recorded path as it was.
  expect(tests).toContain('"GET /api/x:constructor/$GLOBAL_EVIL/a%60/list"');
});

test('a deeply nested body makes a draft of ordinary size', async () => {
  const depth = 7000;
  const nestedArrays = `${'['.repeat(depth)}${']'.repeat(depth)}`;
  const nestedObjects = `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
  current = {
    requests: [
      { method: 'GET', url: `${O}/api/deep`, status: 200, mimeType: 'application/json', requestHeaders: {}, responseHeaders: {}, responseBody: { text: nestedArrays } },
      { method: 'POST', url: `${O}/api/deeper`, status: 200, mimeType: 'application/json', requestHeaders: { 'content-type': 'application/json' }, responseHeaders: {}, requestBody: { text: nestedObjects }, responseBody: { text: nestedObjects } },
    ],
  };
  const r = await fetch(`${srv.url}/tools/plugin_draft_from_capture/call`, { method: 'POST', headers: { ...srv.auth, 'content-type': 'application/json' }, body: JSON.stringify({ arguments: { tabId: 7, name: 'deep' } }) });
  expect(r.status).toBe(200);
  const dir = join(srv.configDir, 'drafts', 'opentabs-plugin-deep');
  const index = readFileSync(join(dir, 'src', 'index.ts'), 'utf8');
  const tests = readFileSync(join(dir, 'test', 'plugin.test.ts'), 'utf8');
  // One indented line per level made ≈ 200 MB of source for these 28 KB.
  expect(index.length).toBeLessThan(100_000);
  expect(tests.length).toBeLessThan(100_000);
  expect(codeOf(index).parseErrors).toBe(0);
  expect(index).toContain('v.unknown()');
});
