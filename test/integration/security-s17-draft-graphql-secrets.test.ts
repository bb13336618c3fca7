/**
 * A drafted plugin holds no secret the recorded traffic carried. Header values are never read and
 * sample values are redacted, but a GraphQL operation's query text went into the drafted tool's
 * source as it was recorded, and frontends write credentials into it: a login mutation with the
 * password inline, an API key as a variable's default value, tokens in a list argument, a block
 * string, a comment. Each is replaced by "<redacted>" (comments dropped) in every file of the draft,
 * and a literal that is no secret stays, so the drafted query still reads as the app's.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import type { TestServer } from '../harness/server.ts';
import { FakeExtension, startPluginServer } from '../harness/fake-extension.ts';

let srv: TestServer;
let ext: FakeExtension;
const O = 'https://gql.example.com';
const JWT = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U';
const SECRETS = ['hunter2-correct-horse', 'AKIAIOSFODNN7EXAMPLE', JWT, 's3cr3t-block-value', 'commentedtokenvalue', 'ass-with-quote'];
const QUERIES = [
  'mutation Login { login(email: "ann@example.com", password: "hunter2-correct-horse") { ok } }',
  'query Me($apiKey: String = "AKIAIOSFODNN7EXAMPLE") { me(apiKey: $apiKey) { name } }',
  `query Keys { keys(values: ["${JWT}"]) { id } }`,
  'mutation Note { setSecret(secret: """s3cr3t-block-value""") { ok } }',
  'query Viewer {\n  # token: commentedtokenvalue\n  viewer { id search(text: "hello world") { id } }\n}',
  'mutation Quote { signIn(input: {user: "ann", password: "p\\"ass-with-quote"}) { ok } }',
];
const capture = {
  requests: QUERIES.map((query) => ({
    method: 'POST',
    url: `${O}/graphql`,
    status: 200,
    mimeType: 'application/json',
    requestHeaders: { 'content-type': 'application/json' },
    responseHeaders: {},
    requestBody: { text: JSON.stringify({ query, variables: {} }) },
    responseBody: { text: '{"data":{"ok":true}}' },
  })),
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

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    return statSync(p).isDirectory() ? filesUnder(p) : [p];
  });
}

test('secrets written into GraphQL query texts do not reach the draft', async () => {
  const r = await fetch(`${srv.url}/tools/plugin_draft_from_capture/call`, {
    method: 'POST',
    headers: { ...srv.auth, 'content-type': 'application/json' },
    body: JSON.stringify({ arguments: { tabId: 3, name: 'gql' } }),
  });
  expect(r.status).toBe(200);
  const dir = join(srv.configDir, 'drafts', 'opentabs-plugin-gql');
  const index = readFileSync(join(dir, 'src', 'index.ts'), 'utf8');
  // One tool per operation, each query in the source.
  for (const op of ['Login', 'Me', 'Keys', 'Note', 'Viewer', 'Quote']) expect(index).toContain(`operationName: "${op}"`);
  for (const file of filesUnder(dir)) {
    const text = readFileSync(file, 'utf8');
    for (const s of SECRETS) expect({ file, has: text.includes(s) || text.includes(JSON.stringify(s).slice(1, -1)) }).toEqual({ file, has: false });
  }
  // What stays: the queries' shape and the literals that are no secret.
  expect(index).toContain('password: \\"<redacted>\\"');
  expect(index).toContain('String = \\"<redacted>\\"');
  expect(index).toContain('keys(values: [\\"<redacted>\\"])');
  expect(index).toContain('email: \\"ann@example.com\\"');
  expect(index).toContain('search(text: \\"hello world\\")');
  expect(index).toContain('user: \\"ann\\"');
  const file = ts.createSourceFile('index.ts', index, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  expect((file as unknown as { parseDiagnostics: unknown[] }).parseDiagnostics.length).toBe(0);
  expect(readFileSync(join(dir, 'DRAFT.md'), 'utf8')).toContain('GraphQL query');
});
