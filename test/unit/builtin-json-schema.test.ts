/**
 * The built-ins' JSON Schemas come from a small converter (server/protocol/browser-tools/json-schema.ts)
 * for start-up speed; it must say exactly what the general converter says, for every declaration.
 */
import { expect, test } from 'bun:test';
import * as v from 'valibot';
import { toJsonSchema } from '@valibot/to-json-schema';
import { BUILTIN_TOOLS } from '../../server/protocol/browser-tools/index.ts';
import { toJson } from '../../server/protocol/browser-tools/json-schema.ts';
import { BROWSER_TOOLS } from '../../server/tools/browser-catalog.ts';
import { ajvClass } from '../../server/tools/ajv.ts';

const reference = (s: v.GenericSchema) => {
  const { $schema: _drop, ...json } = toJsonSchema(s) as Record<string, unknown>;
  return json;
};

test('every built-in input and output schema converts exactly as @valibot/to-json-schema converts it', () => {
  for (const d of BUILTIN_TOOLS) {
    expect({ tool: d.name, schema: toJson(d.input) }).toEqual({ tool: d.name, schema: reference(d.input) });
    if ('output' in d && d.output) expect({ tool: d.name, schema: toJson(d.output) }).toEqual({ tool: d.name, schema: reference(d.output) });
  }
});

test('a schema kind outside the supported subset is refused loudly, not converted to something looser', () => {
  expect(() => toJson(v.strictObject({ when: v.date() }))).toThrow('no JSON Schema for valibot "date"');
  expect(() => toJson(v.strictObject({ n: v.pipe(v.number(), v.check((x) => x > 1)) }))).toThrow('action "check"');
});

test('every built-in schema is valid JSON Schema (the call path compiles them without checking again)', () => {
  const ajv = new (ajvClass())({ strict: false, validateSchema: true });
  for (const d of BROWSER_TOOLS) {
    for (const schema of [d.inputSchema, d.outputSchema]) {
      if (!schema) continue;
      expect({ tool: d.name, valid: ajv.validateSchema(schema), errors: ajv.errorsText(ajv.errors) }).toEqual({ tool: d.name, valid: true, errors: 'No errors' });
    }
  }
});
