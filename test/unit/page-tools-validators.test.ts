/**
 * tools/page-tools.ts + validate.ts: a page tool's schema is checked where it comes in but compiled
 * only on the tool's first call (any web page sends schemas, as often as its update rate allows),
 * once; a page that sends the same tools again (it does on every registration change and
 * navigation) is not checked again and keeps its compiled validator.
 */
import { afterEach, expect, spyOn, test } from 'bun:test';
import { ajvClass } from '../../server/tools/ajv.ts';
import { PageToolRegistry } from '../../server/tools/page-tools.ts';
import { PAGE_TOOL_VALIDATORS } from '../../server/tools/validate.ts';
import type { ConfigStore } from '../../server/state/config.ts';

const compile = spyOn(ajvClass().prototype, 'compile');
afterEach(() => compile.mockClear());

function registry() {
  let rebuilds = 0;
  const config = { originPermission: () => 'ask' } as unknown as ConfigStore;
  const r = new PageToolRegistry({ current: () => ({ get: () => undefined }), rebuild: () => void rebuilds++ }, config);
  return { r, rebuilds: () => rebuilds };
}

const tools = (maxLength: number) => [
  { name: 'add_todo', description: 'Add a todo', inputSchema: { type: 'object', properties: { title: { type: 'string', maxLength } }, required: ['title'] } },
  { name: 'list_todos', description: 'List todos', inputSchema: { type: 'object', properties: {} } },
];

test("registration compiles nothing; a page tool's first call compiles its validator, once", () => {
  const { r } = registry();
  expect(r.update(3, 'https://todo.example/', tools(80)).refused).toEqual([]);
  expect(compile.mock.calls.length).toBe(0);
  const [add] = r.catalogTools(new Set());
  expect(PAGE_TOOL_VALIDATORS.validate(add!.name, add!.inputSchema, { title: 'milk' })).toBeNull();
  expect(PAGE_TOOL_VALIDATORS.validate(add!.name, add!.inputSchema, { title: 'x'.repeat(81) })).toMatchObject({ path: '/title' });
  expect(compile.mock.calls.length).toBe(1);
});

test('the same tools sent again keep their checked schema objects: no check, no compile, no rebuild', () => {
  const { r, rebuilds } = registry();
  r.update(4, 'https://todo.example/', tools(80));
  const first = r.catalogTools(new Set()).map((t) => t.inputSchema);
  for (const t of r.catalogTools(new Set())) PAGE_TOOL_VALIDATORS.validate(t.name, t.inputSchema, {});
  compile.mockClear();
  for (let i = 0; i < 20; i++) expect(r.update(4, 'https://todo.example/', tools(80)).refused).toEqual([]);
  expect(compile.mock.calls.length).toBe(0);
  expect(rebuilds()).toBe(1);
  const again = r.catalogTools(new Set()).map((t) => t.inputSchema);
  again.forEach((schema, i) => expect(schema).toBe(first[i]!));

  // A changed schema is checked again and replaces the old one; its first call compiles it.
  expect(r.update(4, 'https://todo.example/', tools(10)).refused).toEqual([]);
  expect(compile.mock.calls.length).toBe(0);
  expect(rebuilds()).toBe(2);
  const [add] = r.catalogTools(new Set());
  expect(PAGE_TOOL_VALIDATORS.validate(add!.name, add!.inputSchema, { title: 'x'.repeat(11) })).toMatchObject({ path: '/title' });
  expect(compile.mock.calls.length).toBe(1);
});

test('a schema with a pattern that is not a regular expression is still refused, named, and never registered', () => {
  const { r } = registry();
  const bad = [{ name: 'broken', description: 'x', inputSchema: { type: 'object', properties: { a: { type: 'string', pattern: '(' } } } }];
  const { refused } = r.update(5, 'https://todo.example/', bad);
  expect(refused).toHaveLength(1);
  expect(refused[0]!.reason).toContain('inputSchema is not valid JSON Schema');
  expect(r.catalogTools(new Set())).toEqual([]);
});
