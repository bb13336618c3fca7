/**
 * tools/validate.ts: plugin and page tools' validators live as long as their schema, across catalog
 * snapshots. Schemas that come and go (plugins reloaded, pages sending new tools) must not keep
 * their compiled validators: 900 schemas validated once and dropped leave at most one Ajv
 * instance's worth (COMPILES_PER_AJV) of compiled functions behind.
 */
import { expect, test } from 'bun:test';
import { heapStats } from 'bun:jsc';
import { TOOL_VALIDATORS } from '../../server/tools/validate.ts';

const functions = () => {
  Bun.gc(true);
  return (heapStats().objectTypeCounts as Record<string, number>).Function ?? 0;
};

test('900 schemas that come and go leave no validators behind', () => {
  const schemaFor = (i: number) => ({ type: 'object', properties: { [`f${i}`]: { type: 'string', maxLength: i + 1 } }, required: [`f${i}`] });
  const validateSome = (from: number, to: number) => {
    for (let i = from; i <= to; i++) {
      const schema = schemaFor(i);
      // Each really compiled and checked against its own schema.
      expect(TOOL_VALIDATORS.validate(`t${i}`, schema, {})).toMatchObject({ path: `/f${i}`, message: 'is required' });
      expect(TOOL_VALIDATORS.validate(`t${i}`, schema, { [`f${i}`]: 'ok' })).toBeNull();
    }
  };
  validateSome(1, 300);
  const warm = functions();
  validateSome(301, 900);
  // Kept validators would add one function per schema (600 more after the first 300); bounded
  // retention adds at most one Ajv instance's worth (64). Counted after the first 300, so warm-up
  // does not count, with room for what other tests in the same process allocate.
  expect(functions() - warm).toBeLessThan(250);
});

test('a schema still in use keeps its validator: the same object is never compiled twice', () => {
  const schema = { type: 'object', properties: { n: { type: 'integer' } } };
  expect(TOOL_VALIDATORS.validate('a', schema, { n: 1 })).toBeNull();
  const before = functions();
  for (let i = 0; i < 200; i++) expect(TOOL_VALIDATORS.validate('a', schema, { n: 'x' })).toMatchObject({ path: '/n' });
  // A compile per call would add 200 functions.
  expect(functions() - before).toBeLessThan(50);
});
