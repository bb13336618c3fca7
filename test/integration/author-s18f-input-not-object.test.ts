/**
 * A tool input that is not an object schema (v.string(), v.array(...), a union, v.nullable(...)):
 * the build names the tool and says what to write, instead of "plugin tools.0.inputSchema:
 * inputSchema must be a JSON Schema with "type": "object"" (no tool name, no valibot to write).
 * What it says to write builds.
 */
import { expect, test } from 'bun:test';
import * as v from 'valibot';
import { definePlugin, defineTool } from '../../plugins/sdk/index.ts';
import { manifestFromDefinition } from '../../plugins/tooling/manifest.ts';
import { runTool } from '../../plugins/sdk/testing.ts';

const pkg = { name: 'opentabs-plugin-shapes', version: '1.0.0', pluginName: 'shapes', warnings: [] };

function build(input: v.GenericSchema): string {
  const plugin = definePlugin({
    name: 'shapes',
    displayName: 'Shapes',
    description: 'Input shapes',
    urlPatterns: ['http://127.0.0.1:45021/*'],
    isReady: () => true,
    tools: [defineTool({ name: 'take', description: 'Take an input.', input, output: v.object({}), handle: () => ({}) })],
  });
  try {
    manifestFromDefinition(plugin, pkg);
    return 'built';
  } catch (e) {
    return (e as Error).message;
  }
}

test('each non-object input names the tool, what it is, and the v.object to write; that one builds', () => {
  const cases: [v.GenericSchema, string, v.GenericSchema][] = [
    [v.string(), 'a schema of type "string", but a tool\'s arguments are one JSON object; write v.object({ value: v.string() })', v.object({ value: v.string() })],
    [v.array(v.number()), 'a schema of type "array", but a tool\'s arguments are one JSON object; write v.object({ items: v.array(...) })', v.object({ items: v.array(v.number()) })],
    [v.pipe(v.number(), v.integer()), 'write v.object({ value: v.pipe(v.number(), v.integer()) })', v.object({ value: v.pipe(v.number(), v.integer()) })],
    [
      v.union([v.object({ a: v.string() }), v.object({ b: v.number() })]),
      "a schema with alternatives (a union or variant), but a tool's arguments are one JSON object; write one v.object({...}) with the alternatives' fields as v.optional(...)",
      v.object({ a: v.optional(v.string()), b: v.optional(v.number()) }),
    ],
    [v.nullable(v.object({ a: v.string() })), 'a nullable object, but a tool\'s arguments are always one JSON object (no arguments come as {}); drop v.nullable(...) and write v.object({...})', v.object({ a: v.string() })],
  ];
  for (const [bad, says, fixed] of cases) {
    const message = build(bad);
    expect(message.startsWith('tools.0 (take).input: ')).toBe(true);
    expect(message).toContain(says);
    expect(build(fixed)).toBe('built');
  }
});

test('a tool without a description, or an empty one, is named with what to write', () => {
  for (const description of [undefined, '', '   ']) {
    const plugin = definePlugin({
      name: 'shapes',
      displayName: 'Shapes',
      description: 'Input shapes',
      urlPatterns: ['http://127.0.0.1:45021/*'],
      isReady: () => true,
      tools: [defineTool({ name: 'take', description: description as string, input: v.object({}), output: v.object({}), handle: () => ({}) })],
    });
    expect(() => manifestFromDefinition(plugin, pkg)).toThrow(
      "tools.0 (take).description: missing; say what the tool does and what it returns, for the agent choosing it, e.g. description: 'List items, newest first.'",
    );
  }
});

function buildOutput(output: v.GenericSchema): string {
  const plugin = definePlugin({
    name: 'shapes',
    displayName: 'Shapes',
    description: 'Output shapes',
    urlPatterns: ['http://127.0.0.1:45021/*'],
    isReady: () => true,
    tools: [defineTool({ name: 'give', description: 'Give a result.', input: v.object({}), output, handle: () => ({}) as never })],
  });
  try {
    manifestFromDefinition(plugin, pkg);
    return 'built';
  } catch (e) {
    return (e as Error).message;
  }
}

test('an output JSON cannot carry (BigInt, Map, Set) fails the build naming the field; a Date is fine', async () => {
  expect(buildOutput(v.object({ total: v.bigint() }))).toBe(
    'tools.0 (give).output.total: v.bigint() cannot be sent as JSON (every call returning one would fail); use v.number(), or v.string() with String(value) in the handler',
  );
  expect(buildOutput(v.object({ byId: v.map(v.string(), v.number()) }))).toBe(
    'tools.0 (give).output.byId: v.map() cannot be sent as JSON (the agent would get {} or nothing); use v.record(v.string(), …), with Object.fromEntries(map) in the handler',
  );
  expect(buildOutput(v.object({ rows: v.array(v.object({ tags: v.set(v.string()) })) }))).toContain('tools.0 (give).output.rows[].tags: v.set() cannot be sent as JSON');
  expect(buildOutput(v.object({ at: v.date(), total: v.number() }))).toBe('built');
  expect(buildOutput(v.object({ total: v.union([v.bigint(), v.number()]) }))).toBe('built');
  // What the build spares the author: such a result fails once called (BigInt, and a Map, which JSON would send as {}).
  const plugin = definePlugin({
    name: 'shapes', displayName: 'Shapes', description: 'Output shapes', urlPatterns: ['http://127.0.0.1:45021/*'], isReady: () => true,
    tools: [
      defineTool({ name: 'big', description: 'A BigInt.', input: v.object({}), output: v.object({ total: v.bigint() }), handle: () => ({ total: 1n }) }),
      defineTool({ name: 'map', description: 'A Map.', input: v.object({}), output: v.object({ byId: v.map(v.string(), v.number()) }), handle: () => ({ byId: new Map([['a', 1]]) }) }),
    ],
  });
  const big = await runTool(plugin, 'big', {});
  expect(big.outcome.ok || big.outcome.error.code).toBe('unserializable_result');
  const map = await runTool(plugin, 'map', {});
  expect(map.outcome.ok || map.outcome.error.message).toContain('shapes_map returned a value that cannot be sent as JSON: a Map at byId');
});
