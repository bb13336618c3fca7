/**
 * The built-in tools' precompiled validators (Ajv standalone code, which the start-up bundle
 * carries: server/tools/builtin-validators-source.ts) accept, refuse and report exactly what the
 * validators compiled at run time do, for every built-in tool and a spread of wrong arguments.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { ValidateFunction } from 'ajv';
import { BROWSER_TOOLS } from '../../server/tools/browser-catalog.ts';
import { standaloneValidatorsSource } from '../../server/tools/builtin-validators-source.ts';
import { SchemaValidators } from '../../server/tools/validate.ts';
import { DRAFT_07_META_SCHEMA, schemaProblem } from '../../server/tools/schema-check.ts';
import { ajvClass } from '../../server/tools/ajv.ts';

const ROOT = resolve(import.meta.dir, '..', '..');
let tmp: string;
let precompiled: Readonly<Record<string, ValidateFunction>>;
let precompiledMeta: ValidateFunction;

beforeAll(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'opentabs-validators-'));
  // The generated code imports Ajv's runtime helpers, as the bundle resolves them.
  symlinkSync(join(ROOT, 'node_modules'), join(tmp, 'node_modules'));
  writeFileSync(join(tmp, 'validators.mjs'), standaloneValidatorsSource(BROWSER_TOOLS));
  const mod = await import(join(tmp, 'validators.mjs'));
  precompiled = mod.PRECOMPILED_BUILTINS;
  precompiledMeta = mod.PRECOMPILED_META_SCHEMA;
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** A value of the wrong kind for a property schema. */
function wrongFor(schema: Record<string, unknown>): unknown {
  if (Array.isArray(schema.enum)) return '\u0000not-one-of-them';
  switch (schema.type) {
    case 'string':
      return 42;
    case 'integer':
      return 1.5;
    case 'number':
      return 'NaN';
    case 'boolean':
      return 'yes';
    case 'array':
      return { not: 'an array' };
    case 'object':
      return [];
    default:
      return undefined;
  }
}

/** Arguments that each break the schema in one way, and one that fills every required property. */
function argumentSets(schema: Record<string, unknown>): unknown[] {
  const props = (schema.properties ?? {}) as Record<string, Record<string, unknown>>;
  const sets: unknown[] = [{}, null, [], 'text', { '\u0000unknown': 1 }];
  for (const [name, prop] of Object.entries(props)) {
    const wrong = wrongFor(prop);
    if (wrong !== undefined) sets.push({ [name]: wrong });
    if (prop.type === 'string') sets.push({ [name]: '' }, { [name]: 'x'.repeat(2_000_000) });
    if (prop.type === 'integer' || prop.type === 'number') sets.push({ [name]: -1e12 }, { [name]: 1e12 });
  }
  const filled: Record<string, unknown> = {};
  for (const name of (schema.required ?? []) as string[]) {
    const prop = props[name] ?? {};
    filled[name] = Array.isArray(prop.enum) ? prop.enum[0] : prop.type === 'string' ? 'a' : prop.type === 'integer' || prop.type === 'number' ? 1 : prop.type === 'boolean' ? true : prop.type === 'array' ? [] : {};
  }
  sets.push(filled);
  return sets;
}

test('every built-in tool has a precompiled validator, and nothing else does', () => {
  expect(Object.keys(precompiled).sort()).toEqual(BROWSER_TOOLS.map((t) => t.name).sort());
  for (const fn of Object.values(precompiled)) expect(typeof fn).toBe('function');
});

test('precompiled and run-time validators give the same verdict and the same message for every built-in', () => {
  const atRunTime = new SchemaValidators();
  const ahead = new SchemaValidators(() => precompiled);
  let compared = 0;
  let refused = 0;
  for (const tool of BROWSER_TOOLS) {
    for (const args of argumentSets(tool.inputSchema)) {
      const expected = atRunTime.validate(tool.name, tool.inputSchema, args);
      expect({ tool: tool.name, args: JSON.stringify(args)?.slice(0, 80), result: ahead.validate(tool.name, tool.inputSchema, args) }).toEqual({
        tool: tool.name,
        args: JSON.stringify(args)?.slice(0, 80),
        result: expected,
      });
      compared++;
      if (expected) refused++;
    }
  }
  // Both kinds of verdict were compared, for many arguments.
  expect(compared).toBeGreaterThan(500);
  expect(refused).toBeGreaterThan(400);
  expect(compared - refused).toBeGreaterThan(10);
});

test('the precompiled draft-07 meta-schema judges schemas as Ajv does, with the same errors', () => {
  const reference = new (ajvClass())({ strict: false, validateFormats: false, logger: false }).getSchema(DRAFT_07_META_SCHEMA) as ValidateFunction;
  const schemas: unknown[] = [
    ...BROWSER_TOOLS.map((t) => t.inputSchema),
    ...BROWSER_TOOLS.flatMap((t) => (t.outputSchema ? [t.outputSchema] : [])),
    { type: 'banana' },
    { type: 'object', properties: 5 },
    { type: 'object', required: 'id' },
    { type: 'object', properties: { a: { type: 'string', minLength: -1 } } },
    { type: 'object', properties: { a: { enum: 'x' } } },
    { type: 'object', properties: { a: { items: [{ type: 'nonsense' }] } } },
    { anyOf: [] },
    { additionalProperties: 'no' },
    { $ref: 7 },
    true,
    {},
  ];
  let refused = 0;
  // What an error says (the precompiled one is compiled `verbose`, which adds the schema and data).
  const said = (errors: typeof reference.errors) => errors?.map(({ instancePath, schemaPath, keyword, params, message }) => ({ instancePath, schemaPath, keyword, params, message })) ?? null;
  for (const schema of schemas) {
    const expected = reference(schema);
    expect({ schema, valid: precompiledMeta(schema), errors: said(precompiledMeta.errors) }).toEqual({ schema, valid: expected, errors: said(reference.errors) });
    if (!expected) refused++;
  }
  expect(refused).toBeGreaterThanOrEqual(9);
});

test('schemaProblem names what is wrong, sets $schema aside, and never throws', () => {
  expect(schemaProblem({ type: 'object', properties: { q: { type: 'string' } } })).toBeNull();
  expect(schemaProblem({ $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object' })).toBeNull();
  expect(schemaProblem({ $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object', properties: { q: { type: 'text' } } })).toMatch(/^data\/properties\/q\/type must be equal to one of the allowed values/);
  expect(schemaProblem({ type: 'object', required: 'id' })).toBe('data/required must be array');
  expect(schemaProblem('text')).toBe('must be a JSON object');
  expect(schemaProblem(null)).toBe('must be a JSON object');
});
