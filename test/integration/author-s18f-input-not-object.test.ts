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
