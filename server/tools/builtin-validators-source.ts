/**
 * The source of builtin-validators.ts as the start-up bundle carries it (cli/server-bundle.ts):
 * Ajv's standalone code for every built-in tool's input schema, compiled with the options and the
 * schema form validate.ts compiles with at run time, so a precompiled validator accepts, refuses
 * and reports exactly what a run-time one does (test/unit/builtin-validators.test.ts).
 */
import Ajv from 'ajv';
import standaloneCode from 'ajv/dist/standalone';
import type { BrowserToolDef } from './builtin-defs.ts';
import { AJV_OPTIONS, compilableSchema } from './validate.ts';
import { DRAFT_07_META_SCHEMA } from './schema-check.ts';

/**
 * An ES module exporting `PRECOMPILED_BUILTINS` (tool name → validate function) and
 * `PRECOMPILED_META_SCHEMA` (the draft-07 meta-schema, which Ajv carries, for schema-check.ts).
 */
export function standaloneValidatorsSource(tools: readonly Pick<BrowserToolDef, 'name' | 'inputSchema'>[]): string {
  const ajv = new Ajv({ ...AJV_OPTIONS, code: { source: true, esm: true } });
  // Each schema is registered under a generated id and exported under an index, never under a
  // tool name, so a name can never collide with an identifier of the generated code.
  const exportsByName = new Map<string, string>();
  tools.forEach((t, i) => {
    ajv.addSchema(compilableSchema(t.inputSchema), `urn:opentabs:builtin:${i}`);
    exportsByName.set(t.name, `builtin${i}`);
  });
  const code = standaloneCode(ajv, { ...Object.fromEntries(tools.map((t, i) => [`builtin${i}`, `urn:opentabs:builtin:${i}`])), metaSchema: DRAFT_07_META_SCHEMA });
  const table = [...exportsByName].map(([name, id]) => `  ${JSON.stringify(name)}: ${id},`).join('\n');
  return `${code}\nexport const PRECOMPILED_BUILTINS = {\n${table}\n};\nexport const PRECOMPILED_META_SCHEMA = metaSchema;\n`;
}
