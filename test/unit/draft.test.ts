/** The plugin drafter's parts: grouping into operations, path templates, tool names, inferred schemas, redaction. */
import { expect, test } from 'bun:test';
import { parseCapture } from '../../plugins/tooling/draft/capture.ts';
import { groupOperations, singular } from '../../plugins/tooling/draft/operations.ts';
import { looksSecret, redact, REDACTED } from '../../plugins/tooling/draft/redact.ts';
import { infer, inferredCode } from '../../plugins/tooling/draft/schema.ts';

const O = 'https://app.example.com';
const req = (method: string, path: string, response: unknown, body?: unknown, mimeType = 'application/json') => ({
  method,
  url: `${O}${path}`,
  status: 200,
  mimeType,
  requestHeaders: {},
  responseHeaders: {},
  ...(body !== undefined ? { requestBody: { text: JSON.stringify(body) } } : {}),
  responseBody: { text: JSON.stringify(response) },
});

test('ids, UUIDs and hex become named path parameters; names come from method and resource', () => {
  const g = groupOperations(
    parseCapture({
      requests: [
        req('GET', '/api/v1/projects', []),
        req('GET', '/api/v1/projects/42', {}),
        req('GET', '/api/v1/projects/43', {}),
        req('PATCH', '/api/v1/projects/42', {}, { name: 'x' }),
        req('DELETE', '/api/v1/projects/42', {}),
        req('GET', '/api/v1/projects/42/issues/3fa85f64-5717-4562-b3fc-2c963f66afa6', {}),
        req('POST', '/api/v1/issues/abc123def4567890/close', {}),
        req('POST', '/api/v1/projects/42/issues', {}, { title: 't' }),
        req('GET', '/app.js', '', undefined, 'application/javascript'),
      ],
    }),
  );
  const ops = Object.fromEntries(g.operations.map((o) => [o.tool, `${o.method} ${o.template}`]));
  expect(ops).toEqual({
    list_projects: 'GET /api/v1/projects',
    get_project: 'GET /api/v1/projects/:projectId',
    update_project: 'PATCH /api/v1/projects/:projectId',
    delete_project: 'DELETE /api/v1/projects/:projectId',
    get_issue: 'GET /api/v1/projects/:projectId/issues/:issueId',
    close_issue: 'POST /api/v1/issues/:issueId/close',
    create_issue: 'POST /api/v1/projects/:projectId/issues',
  });
  expect(g.operations.find((o) => o.tool === 'get_project')!.samples).toHaveLength(2);
  expect(g.skipped['not JSON or GraphQL']).toBe(1);
});

test('GraphQL calls are split by operation name', () => {
  const g = groupOperations(
    parseCapture({
      requests: [
        req('POST', '/graphql', { data: { a: 1 } }, { operationName: 'GetA', query: 'query GetA { a }' }),
        req('POST', '/graphql', { data: { b: 1 } }, { query: 'mutation SetB($v: Int) { b(v: $v) }', variables: { v: 1 } }),
      ],
    }),
  );
  expect(g.operations.map((o) => [o.kind, o.tool])).toEqual([
    ['graphql', 'get_a'],
    ['graphql', 'set_b'],
  ]);
});

test('schemas: required by presence, integers, nullable, small enums for inputs, loose objects for outputs', () => {
  const samples = [
    { id: 1, state: 'open', note: null, tags: ['a'] },
    { id: 2, state: 'closed', tags: [] },
    { id: 3, state: 'open', note: 'x', tags: ['b'] },
  ];
  const input = inferredCode(infer(samples), 'input', samples.length);
  expect(input).toContain('id: v.pipe(v.number(), v.integer())');
  expect(input).toContain('state: v.picklist(["closed","open"])');
  expect(input).toContain('note: v.optional(v.nullable(v.string()))');
  expect(input).toContain('tags: v.array(v.string())');
  expect(input).toStartWith('v.object(');
  expect(inferredCode(infer(samples), 'output', samples.length)).toStartWith('v.looseObject(');
  expect(inferredCode(infer([null, { a: 1 }]), 'output', 2)).toStartWith('v.nullable(');
});

test('redaction: secret-named keys and secret-looking values, nothing else', () => {
  const r = redact({ title: 'hello world', sessionId: 'abc', nested: { apiKey: 'k', count: 3 }, jwt: 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.abcdefghijklmnop', long: 'a1b2c3d4e5f6a7b8c9d0e1f2a3b4' });
  expect(r).toEqual({ title: 'hello world', sessionId: REDACTED, nested: { apiKey: REDACTED, count: 3 }, jwt: REDACTED, long: REDACTED });
  expect(looksSecret('name', 'Ada Lovelace')).toBe(false);
  expect(singular('categories')).toBe('category');
  expect(singular('boxes')).toBe('box');
});

test('a file that is not a capture is refused clearly', () => {
  expect(() => parseCapture({ hello: 1 })).toThrow('not a capture');
});

test('a query value written as a plain number is a number in the input; codes with leading zeros, long ids and words stay text', () => {
  const g = groupOperations(parseCapture({ requests: [req('GET', '/api/items?limit=5&offset=0&ratio=0.5&zip=007&id=12345678901234567890&q=abc&flag=true&neg=-2', [])] }));
  const op = g.operations.find((o) => o.tool === 'list_items')!;
  expect(op.samples[0]!.query).toEqual({ limit: 5, offset: 0, ratio: 0.5, zip: '007', id: '12345678901234567890', q: 'abc', flag: 'true', neg: -2 });
  const code = inferredCode(infer(op.samples.map((s) => s.query)), 'input', op.samples.length);
  expect(code).toMatch(/limit: v\.pipe\(v\.number\(\), v\.integer\(\)\)|limit: v\.number\(\)/);
  expect(code).toMatch(/zip: v\.(string|picklist)/);
});
